//! What a sandbox's file system is made of: each mount, and the home folder.

use super::*;

/// One entry of the sandbox's view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Mount {
    /// A host path bound inside.
    Bind {
        host: PathBuf,
        inside: PathBuf,
        rw: bool,
        /// Skipped when the host path does not exist (`--ro-bind-try`).
        optional: bool,
    },
    /// A symlink (the host's `/bin -> usr/bin` and friends).
    Symlink {
        target: PathBuf,
        inside: PathBuf,
    },
    /// Makes an earlier mount read-only: last of all, the sandbox's root, so the folders
    /// bwrap made there for mount points (`/loopat/...`) take no writes.
    RemountRo {
        inside: PathBuf,
    },
    /// A fresh, empty tmpfs; read-only when it only hides what is below it.
    Tmpfs {
        inside: PathBuf,
        size: Option<u64>,
        ro: bool,
    },
    /// An empty, read-only tmpfs of mode 000 over a folder `deny_read` covers: listing it
    /// or looking up a name in it is refused (EACCES), where an empty folder would be
    /// taken for content (`git add -A` would record its files as deleted). Its mode
    /// cannot be changed (the mount is read-only) and nothing inside has the
    /// capability that passes it; an empty folder is all there is in any case.
    Unreadable {
        inside: PathBuf,
    },
    Proc {
        inside: PathBuf,
    },
    Dev {
        inside: PathBuf,
    },
    /// A folder or file below a tree a sandbox can write (DESIGN 4.0: `root` is the tree's
    /// root, a path of the workspace's layout; `rel` the path below it): the spawner opens
    /// it through [`crate::confined::Tree`], following no link on the way, and binds the
    /// descriptor it opened (`--bind-fd`), so what was checked is what is bound. Skipped
    /// when absent if `optional`, else the run refuses.
    Confined {
        root: PathBuf,
        rel: PathBuf,
        inside: PathBuf,
        rw: bool,
        optional: bool,
        /// What must stand there (a grant's kind and inode); the run refuses anything else.
        #[serde(skip_serializing_if = "Option::is_none")]
        expect: Option<crate::loops::GrantSource>,
    },
    /// A file of git-loop's own in a tree a sandbox can write (a loop repository's
    /// `.git/config`): the spawner writes `content` there, replacing whatever stands there
    /// (a planted link is replaced, never written through), and binds it read-only by
    /// descriptor. The host's copy and the sandbox's view are the same file.
    OwnFile {
        root: PathBuf,
        rel: PathBuf,
        inside: PathBuf,
        content: String,
    },
    /// A read-only file with content of git-loop's own, handed to bwrap by descriptor
    /// (`--ro-bind-data`). Laid only over a regular file of the host's view: bwrap would
    /// follow a symlink there and try to create its target.
    Data {
        inside: PathBuf,
        content: String,
    },
    /// A vault file, decrypted in memory and handed to bwrap by descriptor
    /// (`--perms 0600 --ro-bind-data`): its plaintext lives in the sandbox's own tmpfs,
    /// never on the host's disk, and only for the run.
    Secret {
        inside: PathBuf,
    },
}

impl Mount {
    pub fn inside(&self) -> &Path {
        match self {
            Mount::Bind { inside, .. }
            | Mount::Symlink { inside, .. }
            | Mount::Tmpfs { inside, .. }
            | Mount::Unreadable { inside }
            | Mount::RemountRo { inside }
            | Mount::Proc { inside }
            | Mount::Dev { inside }
            | Mount::Confined { inside, .. }
            | Mount::OwnFile { inside, .. }
            | Mount::Data { inside, .. }
            | Mount::Secret { inside } => inside,
        }
    }

    pub(crate) fn ro(host: impl Into<PathBuf>, inside: impl Into<PathBuf>) -> Mount {
        Mount::Bind {
            host: host.into(),
            inside: inside.into(),
            rw: false,
            optional: false,
        }
    }

    pub(super) fn confined(
        root: impl Into<PathBuf>,
        rel: impl Into<PathBuf>,
        inside: impl Into<PathBuf>,
        rw: bool,
        optional: bool,
    ) -> Mount {
        Mount::Confined {
            root: root.into(),
            rel: rel.into(),
            inside: inside.into(),
            rw,
            optional,
            expect: None,
        }
    }

    pub(crate) fn bind(host: impl Into<PathBuf>, inside: impl Into<PathBuf>, rw: bool) -> Mount {
        Mount::Bind {
            host: host.into(),
            inside: inside.into(),
            rw,
            optional: false,
        }
    }
}

/// The loop's `$HOME`: `upper` seen through an overlay over `lower`
/// (`sandbox-home-skel/`), which `git-loop` mounts on `merged` in a private mount
/// namespace before starting bwrap.
///
/// Where `lower` is empty and `upper` has never been under an overlay, the overlay would
/// show exactly `upper`, and `upper` itself is bound instead: the same view, without a
/// mount namespace of our own and the overlay's work-folder churn on every run. Once an
/// overlay has been mounted on a loop's `$HOME` (`work/work` exists), that `$HOME` stays
/// an overlay: its upper layer may hold whiteouts and opaque folders that only an overlay
/// reads right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Home {
    pub lower: PathBuf,
    pub upper: PathBuf,
    pub work: PathBuf,
    /// The overlay's mount point in `git-loop`'s private mount namespace.
    pub merged: PathBuf,
    pub overlay: bool,
}

impl Home {
    /// What is bound at `$HOME` inside.
    pub fn bound(&self) -> &Path {
        if self.overlay {
            &self.merged
        } else {
            &self.upper
        }
    }
}
