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

    /// What the value means, in one line (`--help` lists it); empty where none is given.
    fn help(self) -> &'static str {
        ""
    }

    /// The value written as `name`, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// Every value's name.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|c| c.name()).collect()
    }
}

/// Defines an enumerated type whose values are a fixed list of names, each spelled once:
/// its variant, the name it is written as (configuration files, the loop record, the
/// command line, events) and its help, which is also the variant's documentation. The
/// type gets [`Choice`], serde's reading and writing by that name, `Display`, and the
/// inherent `name` and `from_name`.
///
/// ```ignore
/// choices! {
///     /// How a run may change the loop.
///     pub enum RunMode {
///         Work = "work": "The rw paths of the loop are writable",
///     }
/// }
/// ```
macro_rules! choices {
    ($(#[$meta:meta])* $vis:vis enum $ty:ident {
        $($variant:ident = $name:literal : $help:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        $vis enum $ty {
            $(#[doc = $help] #[serde(rename = $name)] $variant),+
        }

        impl $ty {
            /// The name the value is written as.
            pub const fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }

            /// The value written as `name`, if any.
            pub fn from_name(name: &str) -> Option<Self> {
                <Self as $crate::choice::Choice>::from_name(name)
            }
        }

        impl $crate::choice::Choice for $ty {
            const ALL: &'static [Self] = &[$($ty::$variant),+];
            fn name(self) -> &'static str {
                $ty::name(self)
            }
            fn help(self) -> &'static str {
                match self {
                    $($ty::$variant => $help),+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use choices;

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
        agrees::<crate::values::RunMode>();
        agrees::<crate::values::NetMode>();
        agrees::<crate::values::Backend>();
        agrees::<crate::config::schema::Enforce>();
        agrees::<crate::toolchains::Caches>();
    }
}
