//! What belongs where in the vaults (DESIGN section 6), decided one name at a time:
//!
//! ```text
//! vaults/<user>/                 (or personal/<user>/.loopat/vaults/, where vaults were)
//!   .git/  .gitattributes        the repository's own (not in the old place)
//!   <vault>/                     a real folder, named as `names::vault_name` says
//!     recipients.txt             a regular file
//!     envs/<NAME>.age            regular files, NAME a variable name
//!     mounts/home/<rel>.age      real folders and regular files, <rel> a $HOME path
//! ```
//!
//! Everything there arrives through a synced remote as much as from git-loop itself (the
//! vaults' remote, or the personal one for the old place), so it is judged as data: a link,
//! a FIFO or a device where a folder or file of git-loop's is expected is refused, never
//! followed; a name that cannot be an entry is refused with its reason. The walks that read
//! the vaults (`store.rs`) and the one that moves them from the old place (`migrate.rs`)
//! both decide here, one node at a time, from what it is seen to be without following it.
//!
//! Pure, with no dependency beyond `std`, [`super::names`] and [`crate::tempname`]: the
//! vault fuzz target compiles it by path.

use std::ffi::OsStr;

use super::names;

/// What a name below the vaults is, seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    Dir,
    File,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// The name of a vault's recipients file.
pub const RECIPIENTS: &str = "recipients.txt";
/// The folder of a vault's variables.
pub const ENVS: &str = "envs";
/// The folder holding `home/`.
pub const MOUNTS: &str = "mounts";
/// `mounts/home/`, the mirror of `$HOME`.
pub const HOME: &str = "home";
/// Every entry's file ends so.
pub const SUFFIX: &str = ".age";

/// A name directly in the vaults' folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Top<'a> {
    /// A vault's folder.
    Vault(&'a str),
    /// The repository's own: `.git/`, `.gitattributes`.
    Repository,
    /// A writer's temporary file, or the staging folder of a migration (judged by its
    /// writer: `tempname`).
    Temp,
    /// Not git-loop's, or not as git-loop makes it: why.
    Bad(String),
}

/// What `name`, directly in the vaults' repository (`legacy`: in the old vaults' folder of
/// the personal tree, where the repository's own files have no place), is.
pub fn classify_top(name: &OsStr, node: Node, legacy: bool) -> Top<'_> {
    let Some(text) = name.to_str() else {
        return Top::Bad("its name is not UTF-8".into());
    };
    if matches!(node, Node::File | Node::Dir) && crate::tempname::writer_of(text).is_some() {
        return Top::Temp;
    }
    if !legacy {
        match (text, node) {
            (".git", Node::Dir) | (".gitattributes", Node::File) => return Top::Repository,
            (".git", _) | (".gitattributes", _) => {
                return Top::Bad(format!(
                    "{}, where the repository's own {} is expected",
                    what(node),
                    if text == ".git" { "folder" } else { "file" }
                ))
            }
            _ => {}
        }
    }
    if let Err(e) = names::vault_name(text) {
        return Top::Bad(format!("it is not a vault: {}", e.reason));
    }
    if text == "none" {
        return Top::Bad("it is not a vault: 'none' means no vault".into());
    }
    match node {
        Node::Dir => Top::Vault(text),
        _ => Top::Bad(format!(
            "{}, where a vault's folder is expected (links are not followed in the vaults)",
            what(node)
        )),
    }
}

/// A name below a vault's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// `recipients.txt`.
    Recipients,
    /// `envs/`, `mounts/`, `mounts/home/` or a folder below it: to be walked.
    Folder,
    /// `envs/<NAME>.age`: the variable NAME.
    Env(String),
    /// `mounts/home/<rel>.age`: the file `$HOME/<rel>`.
    File(String),
    /// A writer's temporary file.
    Temp,
    /// A name at the vault's top that git-loop has no use for: never read, left alone.
    Foreign,
    /// Not git-loop's, or not as git-loop makes it: why.
    Bad(String),
}

/// What the node at `path` (its names below the vault's folder, at least one) is.
pub fn classify(path: &[&OsStr], node: Node) -> Class {
    let mut texts = Vec::with_capacity(path.len());
    for part in path {
        match part.to_str() {
            Some(t) => texts.push(t),
            None => return Class::Bad("its name is not UTF-8".into()),
        }
    }
    let Some(&last) = texts.last() else {
        return Class::Bad("it is the vault itself".into());
    };
    if node == Node::File && crate::tempname::writer_of(last).is_some() {
        return Class::Temp;
    }
    let folder = |name: &str| {
        match node {
        Node::Dir => Class::Folder,
        _ => Class::Bad(format!(
            "{}, where git-loop's folder {name}/ is expected (links are not followed in the vaults)",
            what(node)
        )),
    }
    };
    match texts.as_slice() {
        [RECIPIENTS] => match node {
            Node::File => Class::Recipients,
            _ => Class::Bad(format!(
                "{}, where the vault's recipients file is expected",
                what(node)
            )),
        },
        [ENVS] => folder(ENVS),
        [MOUNTS] => folder(MOUNTS),
        [_] => Class::Foreign,
        [ENVS, ..] | [MOUNTS, HOME, _, ..] if matches!(node, Node::Symlink | Node::Other) => {
            Class::Bad(format!(
                "{}, where an entry's file or folder is expected (links are not followed in the vaults)",
                what(node)
            ))
        }
        [ENVS, name] => {
            let Some(stem) = name.strip_suffix(SUFFIX) else {
                return Class::Bad(format!(
                    "envs/ holds one NAME{SUFFIX} file per variable, and this is not one"
                ));
            };
            if let Err(e) = names::env_name(stem) {
                return Class::Bad(e.to_string());
            }
            entry_file(node, Class::Env(stem.to_string()))
        }
        [ENVS, ..] => Class::Bad("envs/ holds one file per variable, no folders".into()),
        [MOUNTS, HOME] => folder("mounts/home"),
        [MOUNTS, ..] if texts.len() == 2 => {
            Class::Bad("mounts/ holds home/ only (the mirror of $HOME)".into())
        }
        [MOUNTS, HOME, rest @ ..] => {
            let (parents, name) = rest.split_at(rest.len() - 1);
            match node {
                Node::Dir => match names::home_rel(&rest.join("/")) {
                    Ok(_) => Class::Folder,
                    Err(e) => Class::Bad(e.to_string()),
                },
                _ => {
                    let Some(stem) = name[0].strip_suffix(SUFFIX) else {
                        return Class::Bad(format!(
                            "mounts/home/ holds one REL{SUFFIX} file per $HOME file, and this is not one"
                        ));
                    };
                    let mut rel = parents.join("/");
                    if !rel.is_empty() {
                        rel.push('/');
                    }
                    rel.push_str(stem);
                    match names::home_rel(&rel) {
                        Ok(_) => entry_file(node, Class::File(rel)),
                        Err(e) => Class::Bad(e.to_string()),
                    }
                }
            }
        }
        _ => Class::Bad("mounts/ holds home/ only (the mirror of $HOME)".into()),
    }
}

/// An entry's file must be a regular file.
fn entry_file(node: Node, entry: Class) -> Class {
    match node {
        Node::File => entry,
        _ => Class::Bad(format!(
            "{}, where an entry's file is expected (links are not followed in the vaults)",
            what(node)
        )),
    }
}

/// How a node is named in a reason.
fn what(node: Node) -> &'static str {
    match node {
        Node::Dir => "it is a folder",
        Node::File => "it is a file",
        Node::Symlink => "it is a symlink",
        Node::Other => "it is a FIFO, socket or device",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(path: &str, node: Node) -> Class {
        let parts: Vec<&OsStr> = path.split('/').map(OsStr::new).collect();
        classify(&parts, node)
    }

    fn bad(c: Class) -> String {
        match c {
            Class::Bad(why) => why,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn the_layout_git_loop_writes_is_read_as_it() {
        use Node::*;
        assert_eq!(class("recipients.txt", File), Class::Recipients);
        assert_eq!(class("envs", Dir), Class::Folder);
        assert_eq!(class("mounts", Dir), Class::Folder);
        assert_eq!(class("mounts/home", Dir), Class::Folder);
        assert_eq!(class("mounts/home/.config", Dir), Class::Folder);
        assert_eq!(
            class("envs/GITHUB_TOKEN.age", File),
            Class::Env("GITHUB_TOKEN".into())
        );
        assert_eq!(
            class("mounts/home/.config/gh/hosts.yml.age", File),
            Class::File(".config/gh/hosts.yml".into())
        );
        assert_eq!(
            class("mounts/home/.netrc.age", File),
            Class::File(".netrc".into())
        );
        assert_eq!(class("envs/.T.age.tmp-12-0badc0de", File), Class::Temp);
        assert_eq!(class(".recipients.txt.tmp-12-0badc0de", File), Class::Temp);
        assert_eq!(class("README", File), Class::Foreign);
        assert_eq!(class(".git", Dir), Class::Foreign);
    }

    #[test]
    fn links_and_odd_files_where_git_loop_keeps_its_own_are_refused() {
        use Node::*;
        for (path, node) in [
            ("recipients.txt", Symlink),
            ("recipients.txt", Other),
            ("recipients.txt", Dir),
            ("envs", Symlink),
            ("envs", File),
            ("mounts", Symlink),
            ("mounts/home", Symlink),
            ("envs/T.age", Symlink),
            ("envs/T.age", Other),
            ("envs/T.age", Dir),
            ("mounts/home/.ssh", Symlink),
            ("mounts/home/.netrc.age", Symlink),
            ("mounts/home/.netrc.age", Other),
            ("envs/.T.age.tmp-12-0badc0de", Symlink),
        ] {
            let why = bad(class(path, node));
            assert!(why.starts_with("it is a"), "{path}: {why}");
        }
    }

    #[test]
    fn names_that_cannot_be_entries_are_refused_with_their_reason() {
        use Node::*;
        assert!(bad(class("envs/1BAD.age", File)).contains("starts with a digit"));
        assert!(bad(class("envs/A\x1bB.age", File)).contains("variable name"));
        assert!(bad(class("envs/T.txt", File)).contains("NAME.age"));
        assert!(bad(class("envs/sub/T.age", File)).contains("no folders"));
        assert!(bad(class("mounts/other", Dir)).contains("home/ only"));
        assert!(bad(class("mounts/home/a\nb.age", File)).contains("control"));
        assert!(bad(class("mounts/home/.git", Dir)).contains(".git"));
        assert!(bad(class("mounts/home/.git/config.age", File)).contains(".git"));
        assert!(bad(class("mounts/home/plain", File)).contains("REL.age"));
        let not_utf8 = <OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"\xffT.age");
        assert!(bad(classify(&[OsStr::new("envs"), not_utf8], File)).contains("UTF-8"));
        assert!(bad(classify(&[], Dir)).contains("vault itself"));
    }

    #[test]
    fn the_vaults_folder_holds_vaults_and_the_repository_s_own() {
        use Node::*;
        fn top(name: &str, node: Node, legacy: bool) -> Top<'_> {
            classify_top(OsStr::new(name), node, legacy)
        }
        assert_eq!(top("work", Dir, false), Top::Vault("work"));
        assert_eq!(top("work", Dir, true), Top::Vault("work"));
        assert_eq!(top(".git", Dir, false), Top::Repository);
        assert_eq!(top(".gitattributes", File, false), Top::Repository);
        assert_eq!(top(".gitattributes.tmp-9-0badc0de", File, false), Top::Temp);
        assert_eq!(top(".work.tmp-9-0badc0de", Dir, false), Top::Temp);
        assert!(matches!(
            top(".work.tmp-9-0badc0de", Symlink, false),
            Top::Bad(_)
        ));
        for (name, node, legacy) in [
            ("work", Symlink, false),
            ("work", File, true),
            ("work", Other, false),
            (".git", Dir, true),
            (".git", File, false),
            (".gitattributes", Symlink, false),
            ("identity.txt", File, false),
            ("id_ed25519", File, true),
            ("a\x1bb", Dir, false),
            ("none", Dir, false),
        ] {
            assert!(
                matches!(top(name, node, legacy), Top::Bad(_)),
                "{name:?} {node:?} {legacy}"
            );
        }
    }
}
