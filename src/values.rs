//! The value types several domains share: how a run may change the loop ([`RunMode`]),
//! which network it has ([`NetMode`]), what isolates it ([`Backend`]), and the time a
//! loop record keeps ([`Timestamp`]). The loop record, the configuration, the command line
//! and the sandbox all read and write them, so they live here, in a leaf that imports
//! nothing of the crate but [`crate::choice`]: neither config nor sandbox has to import
//! the other for them.
//!
//! Each enumerated type is spelled once ([`choices!`]): its variants, the names they are
//! written as in files, on the command line and in events, and their help.

use std::fmt;

use crate::choice::choices;

choices! {
    /// How a run may change what it sees (DESIGN 4.4).
    pub enum RunMode {
        Work = "work": "The rw paths of the loop are writable",
        Review = "review": "Everything read-only but $HOME and /tmp",
        Plan = "plan": "The same as review: read and reason, change nothing",
    }
}

impl RunMode {
    pub fn writable(self) -> bool {
        self == RunMode::Work
    }
}

choices! {
    /// The network a sandbox has (DESIGN 4.5).
    pub enum NetMode {
        Host = "host": "Share the host's network",
        None = "none": "A new network namespace with loopback only",
        Proxy = "proxy": "A new network namespace whose only way out is git-loop's proxy, for the allowlisted domains (`git loop show ID --net`)",
    }
}

choices! {
    /// What isolates a run (DESIGN 4.3).
    pub enum Backend {
        Auto = "auto": "bwrap when the probe passes; otherwise refuse",
        Bwrap = "bwrap": "bwrap, or refuse with exit 3",
        None = "none": "No sandbox: run on the host (with a warning every time)",
    }
}

/// A moment, written as RFC 3339 (`2026-01-01T00:00:00Z`): the loop record's
/// `created_at`, read once when the record is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(pub time::OffsetDateTime);

impl Timestamp {
    /// Now, in UTC, to the second.
    pub fn now() -> Timestamp {
        let now = time::OffsetDateTime::now_utc();
        Timestamp(now.replace_nanosecond(0).unwrap_or(now))
    }

    /// `text` as RFC 3339, or why it is not.
    pub fn parse(text: &str) -> Result<Timestamp, String> {
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
            .map(Timestamp)
            .map_err(|e| format!("`{text}` is not an RFC 3339 time ({e})"))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self
            .0
            .format(&time::format_description::well_known::Rfc3339)
            .map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_reads_and_writes_the_same_text() {
        for text in [
            "2026-01-01T00:00:00Z",
            "2026-03-04T05:06:07+02:00",
            "2026-03-04T05:06:07.5Z",
        ] {
            assert_eq!(Timestamp::parse(text).unwrap().to_string(), text);
        }
        let err = Timestamp::parse("yesterday").unwrap_err();
        assert!(
            err.starts_with("`yesterday` is not an RFC 3339 time"),
            "{err}"
        );
        let now = Timestamp::now();
        assert_eq!(Timestamp::parse(&now.to_string()), Ok(now));
    }

    #[test]
    fn run_and_network_modes_read_back_what_they_write() {
        for mode in [RunMode::Work, RunMode::Review, RunMode::Plan] {
            assert_eq!(RunMode::from_name(mode.name()), Some(mode));
            assert_eq!(mode.writable(), mode == RunMode::Work);
        }
        assert_eq!(
            [RunMode::Work, RunMode::Review, RunMode::Plan].map(RunMode::name),
            ["work", "review", "plan"]
        );
        assert_eq!(
            [NetMode::Host, NetMode::None, NetMode::Proxy].map(NetMode::name),
            ["host", "none", "proxy"]
        );
        for bad in ["", "Work", "rw", "proxy ", "all"] {
            assert_eq!(RunMode::from_name(bad), None, "{bad:?}");
            assert_eq!(NetMode::from_name(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_names_are_those_of_the_files() {
        assert_eq!(RunMode::Review.name(), "review");
        assert_eq!(NetMode::from_name("proxy"), Some(NetMode::Proxy));
        assert_eq!(Backend::from_name("bwrap"), Some(Backend::Bwrap));
        assert_eq!(NetMode::None.to_string(), "none");
        assert_eq!(
            crate::choice::Choice::help(RunMode::Work),
            "The rw paths of the loop are writable"
        );
    }
}
