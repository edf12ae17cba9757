//! Toolchains under the user's home folder (rustup and cargo, pyenv, nvm, mise, a home npm
//! prefix), made visible inside a loop's sandbox: read-only at their own paths, with PATH
//! and the tools' variables set, never their credential files; their package caches the
//! loop's own, or the host's where the operator lets them be shared.
//!
//! How the pieces fit:
//!
//! - [`detect`] looks at a [`Host`] (the home folder, the variables the tools read, and a
//!   [`Files`] view of the disk that tests build by hand) and says what is installed where
//!   ([`Found`]). It is pure over that description.
//! - Which toolchains a loop sees is the operator's and the profile's choice
//!   ([`resolve`]): the operator config's `[toolchains] enable` names what sandboxes may
//!   see at all (`"detected"`: whatever is found), and the sandbox profile's
//!   `[toolchains] enable` picks among those (absent: all of them). Binding a folder of
//!   the user's home is a widening of what a sandbox sees, so it is the machine owner's
//!   call alone (DESIGN 4.0, `config::policy`): a team profile, pushed by a teammate or
//!   written by a distill loop, may narrow the operator's list and never extend it. The
//!   same holds for `caches = "shared"`, which binds host folders read-write, and through
//!   which a loop's downloads reach other loops' builds and the user's own builds on the
//!   host.
//! - [`plan`] turns what is found and chosen into mounts, PATH entries and variables for
//!   the sandbox's spec (`sandbox::spec`), so `show --mounts` lists them and argv tests
//!   compare them. Pure as well; [`for_run`] is the thin layer that reads the real host.
//!
//! What is bound: rustup's `RUSTUP_HOME` and only the `bin/` of `CARGO_HOME` (the rest of
//! it holds `credentials.toml`, a `config.toml` that may hold registry tokens, and the
//! download cache); pyenv's, nvm's and mise's folders; the npm prefix folder, never the
//! `.npmrc` that names it (it holds registry tokens). Any credential file that a bound
//! folder still holds ([`credential_files`]) is covered with an empty read-only file.
//! No folder that is (or holds) the home folder, or that holds the workspace, the age
//! identity or the operator config, is ever bound ([`Host::guard`]).
//!
//! Here: the names, the choice and its refusals. `detect.rs` holds [`detect`] and the
//! host's description, `plan.rs` holds [`plan`], the run's layer and the report.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use toml::Value;

use crate::sandbox::spec::Mount;

pub mod credentials;
mod detect;
mod plan;

pub use credentials::Scan;
pub use detect::*;
pub use plan::*;

/// A kind of toolchain git loop knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Toolchain {
    /// rustup and cargo (`RUSTUP_HOME`, `CARGO_HOME`).
    #[serde(rename = "rustup")]
    Rustup,
    /// pyenv (`PYENV_ROOT`).
    #[serde(rename = "pyenv")]
    Pyenv,
    /// nvm (`NVM_DIR`), with the default node version on PATH.
    #[serde(rename = "nvm")]
    Nvm,
    /// mise (`MISE_DATA_DIR`), through its shims.
    #[serde(rename = "mise")]
    Mise,
    /// npm's global prefix in the home folder (`prefix=` of `~/.npmrc`).
    #[serde(rename = "npm-prefix")]
    NpmPrefix,
}

impl Toolchain {
    pub const ALL: [Toolchain; 5] = [
        Toolchain::Rustup,
        Toolchain::Pyenv,
        Toolchain::Nvm,
        Toolchain::Mise,
        Toolchain::NpmPrefix,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Toolchain::Rustup => "rustup",
            Toolchain::Pyenv => "pyenv",
            Toolchain::Nvm => "nvm",
            Toolchain::Mise => "mise",
            Toolchain::NpmPrefix => "npm-prefix",
        }
    }

    pub fn parse(s: &str) -> Option<Toolchain> {
        Toolchain::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The package caches the toolchain's tools fill.
    fn caches(self) -> &'static [Cache] {
        match self {
            Toolchain::Rustup => &[Cache::Cargo],
            Toolchain::Pyenv => &[Cache::Pip],
            Toolchain::Nvm | Toolchain::NpmPrefix => &[Cache::Npm],
            Toolchain::Mise => &[Cache::Pip, Cache::Npm],
        }
    }
}

impl fmt::Display for Toolchain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn names() -> String {
    Toolchain::ALL.map(Toolchain::name).join(", ")
}

impl<'de> Deserialize<'de> for Toolchain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Toolchain, D::Error> {
        let s = String::deserialize(d)?;
        Toolchain::parse(&s).ok_or_else(|| {
            let close = crate::config::schema::did_you_mean(&s, Toolchain::ALL.map(|t| t.name()));
            D::Error::custom(format!(
                "'{}' is not a toolchain git loop knows{} (the toolchains: {})",
                s.escape_debug(),
                close
                    .map(|c| format!("; did you mean '{c}'?"))
                    .unwrap_or_default(),
                names()
            ))
        })
    }
}

/// `toolchains.enable`: which toolchains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every one found on the host.
    Detected,
    /// These (when found).
    Only(Vec<Toolchain>),
}

impl Selection {
    pub fn admits(&self, t: Toolchain) -> bool {
        match self {
            Selection::Detected => true,
            Selection::Only(list) => list.contains(&t),
        }
    }
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selection::Detected => f.write_str("\"detected\""),
            Selection::Only(list) => write!(
                f,
                "[{}]",
                list.iter()
                    .map(|t| format!("\"{t}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

impl<'de> Deserialize<'de> for Selection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Selection, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "detected" => Ok(Selection::Detected),
            Value::Array(items) => {
                let mut list = Vec::new();
                for item in items {
                    let t =
                        Toolchain::deserialize(item).map_err(|e| D::Error::custom(e.message()))?;
                    if !list.contains(&t) {
                        list.push(t);
                    }
                }
                Ok(Selection::Only(list))
            }
            _ => Err(D::Error::custom(format!(
                "toolchains.enable takes \"detected\" or a list of toolchains ({})",
                names()
            ))),
        }
    }
}

/// `toolchains.caches`: whose package caches a loop's tools fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Caches {
    /// The loop's own, in its `$HOME`: nothing one loop downloads reaches another.
    Loop,
    /// The host's cache folders, read-write (operator only): downloads are shared, and so
    /// is whatever a loop puts there.
    Shared,
}

impl crate::choice::Choice for Caches {
    const ALL: &'static [Self] = &[Caches::Loop, Caches::Shared];
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Caches {
    pub fn as_str(self) -> &'static str {
        match self {
            Caches::Loop => "loop",
            Caches::Shared => "shared",
        }
    }
}

/// A package cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cache {
    /// cargo's registry and git checkouts.
    Cargo,
    Pip,
    Npm,
}

/// What a run uses: the toolchains it may see and whose caches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub enable: Selection,
    pub caches: Caches,
}

/// What the profile asked for and may not have, with why (the profile reports it with its
/// file and line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Entry `index` of the profile's `enable` list.
    Entry { index: usize, toolchain: Toolchain },
    /// `enable = "detected"` where the operator named a list: narrowed to that list.
    Detected,
    /// `caches = "shared"`.
    Shared,
}

/// Only the operator config may widen what a sandbox sees.
pub const OPERATOR_ONLY: &str = "only the operator config may show sandboxes the host's toolchains; a sandbox profile picks among those its toolchains.enable names";
pub const SHARED_ONLY: &str = "only the operator config may share the host's package caches with sandboxes (what one loop puts there reaches other loops' builds and the host's)";

/// The operator's (merged settings') choice narrowed by the profile's; what the profile
/// asked beyond it.
pub fn resolve(
    settings: &Choice,
    profile_enable: Option<&Selection>,
    profile_caches: Option<Caches>,
) -> (Choice, Vec<Refused>) {
    let mut refused = Vec::new();
    let enable = match (profile_enable, &settings.enable) {
        (None, ceiling) => ceiling.clone(),
        (Some(Selection::Detected), ceiling) => {
            if *ceiling != Selection::Detected {
                refused.push(Refused::Detected);
            }
            ceiling.clone()
        }
        (Some(Selection::Only(list)), ceiling) => {
            let mut kept = Vec::new();
            for (index, t) in list.iter().enumerate() {
                if ceiling.admits(*t) {
                    kept.push(*t);
                } else {
                    refused.push(Refused::Entry {
                        index,
                        toolchain: *t,
                    });
                }
            }
            Selection::Only(kept)
        }
    };
    let caches = match profile_caches {
        Some(Caches::Shared) if settings.caches != Caches::Shared => {
            refused.push(Refused::Shared);
            settings.caches
        }
        Some(c) => c,
        None => settings.caches,
    };
    (Choice { enable, caches }, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk described by hand: folders, files with their text, links.
    #[derive(Default)]
    struct Fake {
        entries: BTreeMap<PathBuf, Entry>,
    }

    enum Entry {
        Dir,
        File(String),
        Link(PathBuf),
    }

    impl Fake {
        fn dir(mut self, p: &str) -> Fake {
            for a in Path::new(p).ancestors() {
                self.entries.entry(a.to_path_buf()).or_insert(Entry::Dir);
            }
            self
        }
        fn file(mut self, p: &str, text: &str) -> Fake {
            let path = PathBuf::from(p);
            self = self.dir(path.parent().unwrap().to_str().unwrap());
            self.entries.insert(path, Entry::File(text.into()));
            self
        }
        fn link(mut self, p: &str, target: &str) -> Fake {
            let path = PathBuf::from(p);
            self = self.dir(path.parent().unwrap().to_str().unwrap());
            self.entries.insert(path, Entry::Link(target.into()));
            self
        }
        fn resolve(&self, p: &Path) -> Option<&Entry> {
            match self.entries.get(p)? {
                Entry::Link(t) => self.resolve(&p.parent()?.join(t)),
                e => Some(e),
            }
        }
    }

    impl Files for Fake {
        fn kind(&self, p: &Path) -> Option<Kind> {
            match self.resolve(p)? {
                Entry::Dir => Some(Kind::Dir),
                Entry::File(_) => Some(Kind::File),
                Entry::Link(_) => None,
            }
        }
        fn read(&self, p: &Path) -> Option<String> {
            match self.resolve(p)? {
                Entry::File(t) => Some(t.clone()),
                _ => None,
            }
        }
        fn list(&self, p: &Path) -> Vec<String> {
            self.entries
                .keys()
                .filter(|k| k.parent() == Some(p))
                .filter_map(|k| k.file_name()?.to_str().map(String::from))
                .collect()
        }
        fn link(&self, p: &Path) -> Option<PathBuf> {
            match self.entries.get(p)? {
                Entry::Link(t) => Some(t.clone()),
                _ => None,
            }
        }
        fn real(&self, p: &Path) -> PathBuf {
            p.to_path_buf()
        }
    }

    fn host<'a>(files: &'a Fake, env: &[(&str, &str)]) -> Host<'a> {
        Host {
            home: "/home/alice".into(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            files,
            guarded: vec![Guarded {
                path: "/home/alice/.local/share/git-loop".into(),
                what: "the workspace",
                inside_too: true,
            }],
            reals: Default::default(),
        }
    }

    fn everything() -> Fake {
        Fake::default()
            .dir("/home/alice/.rustup/toolchains/stable-x86_64-unknown-linux-gnu")
            .file("/home/alice/.cargo/bin/cargo", "")
            .file("/home/alice/.cargo/credentials.toml", "token = \"s3cret\"")
            .file("/home/alice/.pyenv/bin/pyenv", "")
            .dir("/home/alice/.pyenv/shims")
            .file("/home/alice/.nvm/nvm.sh", "")
            .dir("/home/alice/.nvm/versions/node/v18.19.0/bin")
            .dir("/home/alice/.nvm/versions/node/v20.9.0/bin")
            .dir("/home/alice/.nvm/versions/node/v20.11.1/bin")
            .file("/home/alice/.nvm/alias/default", "lts/iron\n")
            .file("/home/alice/.nvm/alias/lts/iron", "v20.11.1\n")
            .file("/home/alice/.local/bin/mise", "")
            .link(
                "/home/alice/.local/share/mise/shims/node",
                "/home/alice/.local/bin/mise",
            )
            .file(
                "/home/alice/.config/mise/config.toml",
                "[tools]\nnode = \"20\"\n[env]\nGITHUB_TOKEN = \"ghp_s3cret\"\n",
            )
            .file(
                "/home/alice/.npmrc",
                "; mine\nprefix = ~/.npm-global\n//registry.npmjs.org/:_authToken=npm_s3cret\n",
            )
            .dir("/home/alice/.npm-global/bin")
    }

    #[test]
    fn the_usual_folders_are_found() {
        let files = everything();
        let found = detect(&host(&files, &[]));
        let kinds: Vec<_> = found.iter().map(|f| f.toolchain).collect();
        assert_eq!(kinds, Toolchain::ALL.to_vec());
        let by = |t| found.iter().find(|f| f.toolchain == t).unwrap();
        let rustup = by(Toolchain::Rustup);
        assert_eq!(
            rustup.bind,
            vec![
                PathBuf::from("/home/alice/.rustup"),
                PathBuf::from("/home/alice/.cargo/bin")
            ]
        );
        assert_eq!(
            rustup.env,
            vec![("RUSTUP_HOME".into(), "/home/alice/.rustup".into())]
        );
        let pyenv = by(Toolchain::Pyenv);
        assert_eq!(
            pyenv.path,
            vec![
                PathBuf::from("/home/alice/.pyenv/shims"),
                PathBuf::from("/home/alice/.pyenv/bin")
            ]
        );
        let nvm = by(Toolchain::Nvm);
        assert_eq!(
            nvm.path,
            vec![PathBuf::from("/home/alice/.nvm/versions/node/v20.11.1/bin")]
        );
        let mise = by(Toolchain::Mise);
        assert_eq!(
            mise.bind,
            vec![
                PathBuf::from("/home/alice/.local/share/mise"),
                PathBuf::from("/home/alice/.local/bin/mise")
            ]
        );
        // Of mise's config only its [tools]: its [env] may hold secrets.
        let (_, config) = &mise.data[0];
        assert!(config.contains("node = \"20\""), "{config}");
        assert!(!config.contains("s3cret"), "{config}");
        let npm = by(Toolchain::NpmPrefix);
        assert_eq!(npm.bind, vec![PathBuf::from("/home/alice/.npm-global")]);
        assert_eq!(
            npm.env,
            vec![("npm_config_prefix".into(), "/home/alice/.npm-global".into())]
        );
        assert!(found.iter().all(|f| f.refused.is_none()));
    }

    #[test]
    fn variables_point_detection_elsewhere() {
        let files = Fake::default()
            .dir("/opt/rust/rustup/toolchains")
            .file("/opt/rust/cargo/bin/cargo", "")
            .file("/srv/py/libexec/pyenv", "")
            .dir("/home/alice/.rustup");
        let h = host(
            &files,
            &[
                ("RUSTUP_HOME", "/opt/rust/rustup"),
                ("CARGO_HOME", "/opt/rust/cargo"),
                ("PYENV_ROOT", "/srv/py"),
                // Relative values are not paths a tool would use.
                ("NVM_DIR", "nvm"),
            ],
        );
        let found = detect(&h);
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].bind,
            vec![
                PathBuf::from("/opt/rust/rustup"),
                PathBuf::from("/opt/rust/cargo/bin")
            ]
        );
        assert_eq!(found[1].folders, vec![PathBuf::from("/srv/py")]);
        assert!(detect(&host(&Fake::default(), &[])).is_empty());
    }

    #[test]
    fn nvm_follows_its_aliases() {
        let base = || {
            Fake::default()
                .dir("/n/versions/node/v18.19.0")
                .dir("/n/versions/node/v20.9.0")
                .dir("/n/versions/node/v20.11.1")
        };
        let default_of = |files: Fake| nvm_default(&host(&files, &[]), Path::new("/n"));
        assert_eq!(
            default_of(base().file("/n/alias/default", "18\n")).as_deref(),
            Some("v18.19.0")
        );
        assert_eq!(
            default_of(base().file("/n/alias/default", "v20.9.0")).as_deref(),
            Some("v20.9.0")
        );
        assert_eq!(
            default_of(base().file("/n/alias/default", "20")).as_deref(),
            Some("v20.11.1")
        );
        assert_eq!(
            default_of(base().file("/n/alias/default", "node")).as_deref(),
            Some("v20.11.1")
        );
        assert_eq!(
            default_of(
                base()
                    .file("/n/alias/default", "lts/*")
                    .file("/n/alias/lts/*", "lts/hydrogen")
                    .file("/n/alias/lts/hydrogen", "v18.19.0")
            )
            .as_deref(),
            Some("v18.19.0")
        );
        assert_eq!(default_of(base().file("/n/alias/default", "21")), None);
        assert_eq!(default_of(base().file("/n/alias/default", "system")), None);
        assert_eq!(
            default_of(base().file("/n/alias/default", "../../etc/x")),
            None
        );
        assert_eq!(default_of(base()), None);
        // Aliases that loop end.
        assert_eq!(
            default_of(
                base()
                    .file("/n/alias/default", "a")
                    .file("/n/alias/a", "default")
            ),
            None
        );
    }

    #[test]
    fn folders_that_hold_more_than_a_toolchain_are_refused() {
        let files = Fake::default()
            .file("/home/alice/.npmrc", "prefix=${HOME}\n")
            .dir("/home/alice/.local/share/git-loop/loops")
            .file("/home/alice/.local/share/git-loop/.pyenv/bin/pyenv", "");
        let found = detect(&host(
            &files,
            &[("PYENV_ROOT", "/home/alice/.local/share/git-loop/.pyenv")],
        ));
        assert_eq!(found.len(), 2);
        assert!(found[0].refused.as_ref().unwrap().contains("the workspace"));
        assert!(found[1].refused.as_ref().unwrap().contains("home folder"));
        let choice = Choice {
            enable: Selection::Detected,
            caches: Caches::Loop,
        };
        let p = plan(
            &host(&files, &[]),
            &found,
            &choice,
            Path::new("/home/alice"),
        );
        assert!(p.mounts.is_empty() && p.enabled.is_empty());
        assert_eq!(p.warnings.len(), 2);
        // The npm prefix `/` holds the home folder too.
        let files = Fake::default().file("/home/alice/.npmrc", "prefix=/\n");
        assert!(detect(&host(&files, &[]))[0].refused.is_some());
    }

    fn binds(p: &Plan) -> Vec<(String, String, bool)> {
        p.mounts
            .iter()
            .filter_map(|m| match m {
                Mount::Bind {
                    host, inside, rw, ..
                } => Some((
                    host.display().to_string(),
                    inside.display().to_string(),
                    *rw,
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_plan_binds_read_only_and_keeps_caches_in_the_loop() {
        let files = everything();
        let h = host(&files, &[]);
        let choice = Choice {
            enable: Selection::Only(vec![Toolchain::Rustup, Toolchain::NpmPrefix]),
            caches: Caches::Loop,
        };
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/alice"));
        assert_eq!(p.enabled, vec![Toolchain::Rustup, Toolchain::NpmPrefix]);
        let ro = |p: &str| (p.to_string(), p.to_string(), false);
        assert_eq!(
            binds(&p),
            vec![
                ro("/home/alice/.rustup"),
                ro("/home/alice/.cargo/bin"),
                ro("/home/alice/.npm-global"),
            ]
        );
        assert_eq!(
            p.path,
            vec![
                PathBuf::from("/home/alice/.cargo/bin"),
                PathBuf::from("/home/alice/.npm-global/bin"),
                PathBuf::from("/home/alice/.cache/cargo/bin"),
            ]
        );
        let env: BTreeMap<_, _> = p.env.iter().cloned().collect();
        assert_eq!(env["CARGO_HOME"], "/home/alice/.cache/cargo");
        assert_eq!(env["RUSTUP_HOME"], "/home/alice/.rustup");
        assert_eq!(env["npm_config_cache"], "/home/alice/.npm");
        assert_eq!(env["npm_config_prefix"], "/home/alice/.npm-global");
        assert!(!env.contains_key("PIP_CACHE_DIR") && !env.contains_key("PYENV_ROOT"));
        // Neither the cargo home's credentials nor the .npmrc is in view: nothing to cover.
        assert!(!binds(&p).iter().any(|(h, _, _)| h == "/dev/null"));
    }

    #[test]
    fn credential_files_a_bound_folder_holds_are_covered() {
        // One folder for both rustup and cargo: its credentials are in view, covered.
        let files = Fake::default()
            .dir("/home/alice/.rust/toolchains")
            .file("/home/alice/.rust/bin/cargo", "")
            .file("/home/alice/.rust/credentials.toml", "token")
            .file("/home/alice/.rust/credentials", "token")
            .file(
                "/home/alice/.npm-global/npmrc",
                "prefix=/home/alice/.npm-global\n_authToken=x\n",
            )
            .dir("/home/alice/.npm-global/bin");
        let h = host(
            &files,
            &[
                ("RUSTUP_HOME", "/home/alice/.rust"),
                ("CARGO_HOME", "/home/alice/.rust"),
                ("NPM_CONFIG_USERCONFIG", "/home/alice/.npm-global/npmrc"),
            ],
        );
        let choice = Choice {
            enable: Selection::Detected,
            caches: Caches::Loop,
        };
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/alice"));
        let covers: Vec<String> = p
            .mounts
            .iter()
            .filter_map(|m| match m {
                Mount::Data { inside, content } if content.is_empty() => {
                    Some(inside.display().to_string())
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            covers,
            vec![
                "/home/alice/.rust/credentials.toml",
                "/home/alice/.rust/credentials",
                "/home/alice/.npm-global/npmrc"
            ]
        );
        // Covers come last, over what they cover.
        let last_bind = p
            .mounts
            .iter()
            .rposition(|m| matches!(m, Mount::Bind { .. }))
            .unwrap();
        let first_cover = p
            .mounts
            .iter()
            .position(|m| matches!(m, Mount::Data { .. }))
            .unwrap();
        assert!(last_bind < first_cover);
        // A credential file that is a link is covered where it leads.
        let files = Fake::default()
            .dir("/home/alice/.rust/toolchains")
            .file("/home/alice/.rust/creds/real.toml", "token")
            .link("/home/alice/.rust/credentials.toml", "creds/real.toml");
        let h = host(
            &files,
            &[
                ("RUSTUP_HOME", "/home/alice/.rust"),
                ("CARGO_HOME", "/home/alice/.rust"),
            ],
        );
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/alice"));
        assert_eq!(
            binds(&p).last().unwrap(),
            &(
                "/dev/null".to_string(),
                "/home/alice/.rust/credentials.toml".to_string(),
                false
            )
        );
    }

    #[test]
    fn shared_caches_bind_the_hosts_folders_read_write() {
        let files = everything()
            .dir("/home/alice/.cargo/registry")
            .file("/home/alice/.cargo/.package-cache", "")
            .dir("/home/alice/.cache/pip")
            .dir("/home/alice/.npm");
        let h = host(&files, &[]);
        let choice = Choice {
            enable: Selection::Only(vec![Toolchain::Rustup, Toolchain::Pyenv, Toolchain::Nvm]),
            caches: Caches::Shared,
        };
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/tester"));
        let rw: Vec<_> = binds(&p).into_iter().filter(|b| b.2).collect();
        assert_eq!(
            rw,
            vec![
                (
                    "/home/alice/.cargo/registry".into(),
                    "/home/tester/.cache/cargo/registry".into(),
                    true
                ),
                (
                    "/home/alice/.cargo/.package-cache".into(),
                    "/home/tester/.cache/cargo/.package-cache".into(),
                    true
                ),
                (
                    "/home/alice/.cache/pip".into(),
                    "/home/alice/.cache/pip".into(),
                    true
                ),
                ("/home/alice/.npm".into(), "/home/alice/.npm".into(), true),
            ]
        );
        let env: BTreeMap<_, _> = p.env.iter().cloned().collect();
        assert_eq!(env["CARGO_HOME"], "/home/tester/.cache/cargo");
        assert_eq!(env["PIP_CACHE_DIR"], "/home/alice/.cache/pip");
        assert_eq!(env["npm_config_cache"], "/home/alice/.npm");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        // A cache folder the host lacks stays the loop's own, and says so.
        let files = everything();
        let h = host(&files, &[]);
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/tester"));
        assert!(binds(&p).iter().all(|b| !b.2));
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        let env: BTreeMap<_, _> = p.env.iter().cloned().collect();
        assert_eq!(env["PIP_CACHE_DIR"], "/home/tester/.cache/pip");
    }

    #[test]
    fn the_profile_picks_among_what_the_operator_enables() {
        use Toolchain::*;
        let op = |enable: Selection, caches: Caches| Choice { enable, caches };
        let only = |l: &[Toolchain]| Selection::Only(l.to_vec());
        // Nothing from the operator: the profile's list is refused entry by entry.
        let (c, refused) = resolve(
            &op(only(&[]), Caches::Loop),
            Some(&only(&[Rustup, Pyenv])),
            Some(Caches::Shared),
        );
        assert_eq!(c, op(only(&[]), Caches::Loop));
        assert_eq!(
            refused,
            vec![
                Refused::Entry {
                    index: 0,
                    toolchain: Rustup
                },
                Refused::Entry {
                    index: 1,
                    toolchain: Pyenv
                },
                Refused::Shared
            ]
        );
        // The operator's "detected" admits any list; no profile choice takes the operator's.
        let (c, refused) = resolve(
            &op(Selection::Detected, Caches::Shared),
            Some(&only(&[Nvm])),
            None,
        );
        assert_eq!(c, op(only(&[Nvm]), Caches::Shared));
        assert!(refused.is_empty());
        let (c, _) = resolve(
            &op(Selection::Detected, Caches::Shared),
            None,
            Some(Caches::Loop),
        );
        assert_eq!(c, op(Selection::Detected, Caches::Loop));
        // "detected" in a profile is narrowed to the operator's list.
        let (c, refused) = resolve(
            &op(only(&[Mise]), Caches::Loop),
            Some(&Selection::Detected),
            None,
        );
        assert_eq!(c.enable, only(&[Mise]));
        assert_eq!(refused, vec![Refused::Detected]);
    }

    #[test]
    fn doctor_says_what_is_found_and_what_sandboxes_see() {
        let files = everything();
        let h = host(&files, &[]);
        let found = detect(&h);
        let settings = Choice {
            enable: Selection::Only(vec![Toolchain::Rustup, Toolchain::Pyenv, Toolchain::Nvm]),
            caches: Caches::Loop,
        };
        let (choice, _) = resolve(
            &settings,
            Some(&Selection::Only(vec![Toolchain::Rustup, Toolchain::Nvm])),
            None,
        );
        let r = report(
            &found,
            &settings,
            &choice,
            "rust",
            Path::new("/k/sandbox.toml"),
        );
        let seen: Vec<_> = r.iter().map(|r| r.seen).collect();
        assert_eq!(
            seen,
            vec![
                Seen::Enabled,
                Seen::NotEnabled,
                Seen::Enabled,
                Seen::NotEnabled,
                Seen::NotEnabled
            ]
        );
        assert_eq!(
            r[0].message,
            "rustup at /home/alice/.rustup, /home/alice/.cargo: in view, read-only, in sandboxes of profile 'rust' (package caches the loop's own)"
        );
        assert_eq!(
            r[1].fix.as_deref(),
            Some("add \"pyenv\" to [toolchains] enable in /k/sandbox.toml")
        );
        assert_eq!(
            r[3].fix.as_deref(),
            Some("git loop config set --operator toolchains.enable '[\"rustup\", \"pyenv\", \"nvm\", \"mise\"]' (or detected: every one found)")
        );
        let nothing = report(&[], &settings, &choice, "rust", Path::new("/k"));
        assert_eq!(
            nothing.iter().map(|r| r.seen).collect::<Vec<_>>(),
            vec![Seen::Missing, Seen::Missing]
        );
        let none = Choice {
            enable: Selection::Only(Vec::new()),
            caches: Caches::Loop,
        };
        assert_eq!(
            report(&[], &none, &none, "default", Path::new("/k"))[0].seen,
            Seen::Nothing
        );
    }

    #[test]
    fn a_selection_reads_detected_or_a_list() {
        let read = |v: Value| Selection::deserialize(v).map_err(|e| e.to_string());
        assert_eq!(
            read(Value::String("detected".into())),
            Ok(Selection::Detected)
        );
        assert_eq!(
            read(Value::Array(vec![
                Value::String("npm-prefix".into()),
                Value::String("rustup".into())
            ])),
            Ok(Selection::Only(vec![
                Toolchain::NpmPrefix,
                Toolchain::Rustup
            ]))
        );
        let err = read(Value::Array(vec![Value::String("rustp".into())])).unwrap_err();
        assert!(err.contains("did you mean 'rustup'"), "{err}");
        assert!(read(Value::String("all".into())).is_err());
    }
}
