//! How domain code tells the person running a command what it did, without knowing the
//! terminal: it is handed a [`Report`] and writes lines of a kind (a status, a warning, a
//! hint, the result) through it. The command layer hands it the terminal ([`crate::ui::Ui`],
//! which colors, silences under `--quiet` and makes every line visible); tests hand it a
//! [`Recorded`] and read back what was said.

use std::io;

use crate::error::Error;

/// Says a warning from any thread (see [`Report::live_warnings`]).
pub type LiveWarnings = Box<dyn Fn(&str) + Send + Sync>;

/// Where domain code writes what it has to say while it works. Every method takes one
/// line; the implementation decides how it looks and whether it is shown.
pub trait Report {
    /// Progress and what was done ("created ...", "committed ..."): silenced by `--quiet`.
    fn status(&mut self, line: &str) -> io::Result<()>;
    /// Something the user must know although the work went on: never silenced.
    fn warn(&mut self, line: &str) -> io::Result<()>;
    /// What to do about the warning before it: never silenced.
    fn hint(&mut self, line: &str) -> io::Result<()>;
    /// A line on stderr that is neither a warning nor silenced: the banner of a run that
    /// nothing isolates.
    fn notice(&mut self, line: &str) -> io::Result<()>;
    /// The command's result on stdout (an id, a path, a command line).
    fn result(&mut self, line: &str) -> io::Result<()>;

    /// Warnings another thread may say while this report is busy elsewhere (the network
    /// proxy's, during a run), in the form [`Report::warn`] gives them; `None` where they
    /// cannot be shown at once.
    fn live_warnings(&self) -> Option<LiveWarnings> {
        None
    }

    /// A failure that did not stop the work: its line as a warning (after `prefix`, if
    /// any), then its hints.
    fn problem(&mut self, prefix: &str, e: &Error) -> io::Result<()> {
        self.warn(&format!("{prefix}{}", e.one_line()))?;
        for h in &e.hints {
            self.hint(h)?;
        }
        Ok(())
    }
}

/// What kind of line a [`Recorded`] report holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Status,
    Warn,
    Hint,
    Notice,
    Result,
}

/// A report that keeps every line with its kind, for tests and for callers that decide
/// later what to show.
#[derive(Debug, Default)]
pub struct Recorded {
    pub lines: Vec<(Kind, String)>,
}

impl Recorded {
    /// The lines of one kind, in order.
    pub fn of(&self, kind: Kind) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, l)| l.as_str())
            .collect()
    }

    fn push(&mut self, kind: Kind, line: &str) -> io::Result<()> {
        self.lines.push((kind, line.to_string()));
        Ok(())
    }
}

impl Report for Recorded {
    fn status(&mut self, line: &str) -> io::Result<()> {
        self.push(Kind::Status, line)
    }
    fn warn(&mut self, line: &str) -> io::Result<()> {
        self.push(Kind::Warn, line)
    }
    fn hint(&mut self, line: &str) -> io::Result<()> {
        self.push(Kind::Hint, line)
    }
    fn notice(&mut self, line: &str) -> io::Result<()> {
        self.push(Kind::Notice, line)
    }
    fn result(&mut self, line: &str) -> io::Result<()> {
        self.push(Kind::Result, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_is_its_line_as_a_warning_then_its_hints() {
        let e = Error::failure("cannot import")
            .with_source(io::Error::other("disk on fire"))
            .hint("free some space")
            .hint("then run it again");
        let mut r = Recorded::default();
        r.problem("loop abc: ", &e).unwrap();
        assert_eq!(
            r.lines,
            vec![
                (
                    Kind::Warn,
                    "loop abc: cannot import: disk on fire".to_string()
                ),
                (Kind::Hint, "free some space".to_string()),
                (Kind::Hint, "then run it again".to_string()),
            ]
        );
        assert_eq!(r.of(Kind::Hint), ["free some space", "then run it again"]);
    }

    #[test]
    fn every_kind_of_line_is_kept_with_its_kind() {
        let mut r = Recorded::default();
        r.status("s").unwrap();
        r.warn("w").unwrap();
        r.hint("h").unwrap();
        r.notice("n").unwrap();
        r.result("r").unwrap();
        let kinds: Vec<Kind> = r.lines.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            kinds,
            [
                Kind::Status,
                Kind::Warn,
                Kind::Hint,
                Kind::Notice,
                Kind::Result
            ]
        );
        assert_eq!(r.of(Kind::Result), ["r"]);
        assert_eq!(r.of(Kind::Status), ["s"]);
    }
}
