//! The domain's enumerated types as clap reads them on the command line: each value's
//! name and the help clap lists for it (`--help`) from its [`Choice`]. Only the command
//! layer knows clap; the types themselves live in [`crate::values`].

use clap::builder::PossibleValue;

use crate::choice::Choice;
use crate::values::{Backend, NetMode, RunMode};

/// `impl clap::ValueEnum` for a [`Choice`]: its values, names and help.
macro_rules! value_enum {
    ($($ty:ty),+) => {$(
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                <$ty as Choice>::ALL
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new(Choice::name(*self)).help(Choice::help(*self)))
            }
        }
    )+};
}

value_enum!(RunMode, NetMode, Backend);

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Every value clap offers is one of the type's, under the name its configuration
    /// uses, and clap reads each name back as that value.
    fn agrees<T: Choice + ValueEnum + std::fmt::Debug>() {
        assert_eq!(T::value_variants(), T::ALL);
        for v in T::ALL {
            let p = v.to_possible_value().unwrap();
            assert_eq!(p.get_name(), v.name());
            assert!(p.get_help().is_some_and(|h| !h.to_string().is_empty()));
            assert_eq!(T::from_str(v.name(), false), Ok(*v));
        }
    }

    #[test]
    fn clap_reads_the_names_the_configuration_uses() {
        agrees::<RunMode>();
        agrees::<NetMode>();
        agrees::<Backend>();
    }
}
