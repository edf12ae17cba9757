//! The domain's enumerated types as clap reads them on the command line: each value's
//! name from its [`Choice`], and the help clap lists for it (`--help`). Only the command
//! layer knows clap; the types themselves live where their meaning does.

use clap::builder::PossibleValue;

use crate::choice::Choice;
use crate::sandbox::spec::{NetMode, RunMode};
use crate::sandbox::Backend;

/// `impl clap::ValueEnum` for a [`Choice`], with each value's help.
macro_rules! value_enum {
    ($ty:ty { $($value:ident => $help:literal),+ $(,)? }) => {
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                <$ty as Choice>::ALL
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                let help = match self {
                    $(<$ty>::$value => $help,)+
                };
                Some(PossibleValue::new(self.name()).help(help))
            }
        }
    };
}

value_enum!(RunMode {
    Work => "The rw paths of the loop are writable",
    Review => "Everything read-only but $HOME and /tmp",
    Plan => "The same as review: read and reason, change nothing",
});

value_enum!(NetMode {
    Host => "Share the host's network",
    None => "A new network namespace with loopback only",
    Proxy => "A new network namespace whose only way out is git-loop's proxy, for the allowlisted domains (`git loop show ID --net`)",
});

value_enum!(Backend {
    Auto => "bwrap when the probe passes; otherwise refuse",
    Bwrap => "bwrap, or refuse with exit 3",
    None => "No sandbox: run on the host (with a warning every time)",
});

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
