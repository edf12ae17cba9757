//! Enumerated settings and options (a mode, a backend, a policy): their values and the
//! names they are written as, in one place per type. The configuration's did-you-mean
//! lists them, and the command layer builds its parsers of options from them
//! (`cli/values.rs`), so the domain types know nothing of the command line.

/// A type whose values are a fixed list of names.
pub trait Choice: Sized + Copy + PartialEq + 'static {
    /// Every value, in the order they are listed to the user.
    const ALL: &'static [Self];

    /// The name the value is written as, in configuration files and on the command line.
    fn name(self) -> &'static str;

    /// The value written as `name`, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// Every value's name.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|c| c.name()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::{Error, StrDeserializer};
    use serde::Deserialize;

    /// The names are the ones serde reads in configuration files, and nothing else reads
    /// as a value.
    fn agrees<'de, T: Choice + Deserialize<'de> + std::fmt::Debug>() {
        for v in T::ALL {
            let read = T::deserialize(StrDeserializer::<Error>::new(v.name()));
            assert_eq!(read.ok(), Some(*v), "{}", v.name());
            assert_eq!(T::from_name(v.name()), Some(*v));
        }
        assert!(T::deserialize(StrDeserializer::<Error>::new("nonee")).is_err());
        assert_eq!(T::from_name("nonee"), None);
        assert_eq!(T::names().len(), T::ALL.len());
    }

    #[test]
    fn every_choice_is_named_as_serde_reads_it() {
        agrees::<crate::sandbox::spec::RunMode>();
        agrees::<crate::sandbox::spec::NetMode>();
        agrees::<crate::sandbox::Backend>();
        agrees::<crate::config::schema::Enforce>();
        agrees::<crate::toolchains::Caches>();
    }
}
