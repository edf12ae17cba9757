//! The review comments' branch: `refs/heads/git-loop/comments` of the workspace's notes
//! repository, one folder per comment (see [`super::comments`]).
//!
//! Why there: the notes repository is the team's, and `git loop sync` carries it to every
//! workspace of the team, so comments travel with it and outlive the loop they are about.
//! Why a branch of its own rather than the loop's notes branch: the loop's branches are
//! the agent's to write (its own clone, imported after every run), and a comment, its
//! replies and whether it is resolved must be the reviewer's alone. Nothing imports into
//! this branch; only git loop on the host moves it, by compare-and-swap.
//!
//! Reads are bounded (files, comments per loop, events per comment), and what cannot be
//! read as a comment is skipped and named, never fatal: teammates push to this branch.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::comments::{Comment, Event, Invalid, Thread, MAX_FILE};
use crate::git::objects::{self, BoundedBlob, GitReadError};
use crate::workspace::Workspace;

/// The branch, in the notes repository.
pub const BRANCH: &str = "git-loop/comments";

/// The most comments of one loop that are read.
pub const MAX_COMMENTS: usize = 2000;
/// The most events of one comment that are read.
pub const MAX_EVENTS: usize = 1000;

const TREE: u32 = 0o040000;
const BLOB: u32 = 0o100644;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read the review comments in {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: GitReadError,
    },
    #[error("cannot write the review comments in {}: {message}", path.display())]
    Write { path: PathBuf, message: String },
    #[error("the review comments' branch kept moving while it was written ({0} tries)")]
    Busy(usize),
}

/// The comments of one loop as read, with what was skipped and why.
#[derive(Debug, Default)]
pub struct Loaded {
    pub threads: Vec<Thread>,
    pub skipped: Vec<String>,
}

/// The notes repository, opened for its comments.
pub struct Store {
    repo: gix::Repository,
    path: PathBuf,
}

/// Who commits to the comments' branch: the user as their git names them for the notes
/// repository, or the workspace's user when it does not.
#[derive(Debug, Clone)]
pub struct Committer {
    pub name: String,
    pub email: String,
}

impl Committer {
    pub fn of(ws: &Workspace) -> Committer {
        match crate::agent::user_identity(&ws.notes()) {
            Some((name, email)) => Committer { name, email },
            None => Committer {
                name: ws.user().to_string(),
                email: format!("{}@git-loop.invalid", ws.user()),
            },
        }
    }

    fn signature(&self) -> gix::actor::Signature {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        gix::actor::Signature {
            name: self.name.as_str().into(),
            email: self.email.as_str().into(),
            time: gix::date::Time::new(now, 0),
        }
    }
}

impl Store {
    pub fn open(ws: &Workspace) -> Result<Store, StoreError> {
        Store::open_at(&ws.notes())
    }

    pub fn open_at(path: &Path) -> Result<Store, StoreError> {
        let repo = objects::open_trusted(path).map_err(|source| StoreError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Store {
            repo,
            path: path.to_path_buf(),
        })
    }

    pub fn repo(&self) -> &gix::Repository {
        &self.repo
    }

    fn read_err(&self) -> impl Fn(GitReadError) -> StoreError + '_ {
        move |source| StoreError::Read {
            path: self.path.clone(),
            source,
        }
    }

    fn write_err(&self, message: impl std::fmt::Display) -> StoreError {
        StoreError::Write {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }

    /// The branch's commit; None before the first comment.
    pub fn tip(&self) -> Result<Option<ObjectId>, StoreError> {
        objects::resolve_branch(&self.repo, BRANCH).map_err(self.read_err())
    }

    /// The entries of the folder `names` below the tip's tree, or of the tree itself.
    fn folder(&self, names: &[&str]) -> Result<Vec<objects::TreeItem>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(Vec::new());
        };
        let mut tree = objects::commit_tree(&self.repo, tip).map_err(self.read_err())?;
        for name in names {
            let items = objects::tree_items(&self.repo, tree).map_err(self.read_err())?;
            match items
                .into_iter()
                .find(|i| i.name == name.as_bytes() && i.mode == TREE)
            {
                Some(item) => tree = item.id,
                None => return Ok(Vec::new()),
            }
        }
        objects::tree_items(&self.repo, tree).map_err(self.read_err())
    }

    /// The ids of the loops that have comments.
    pub fn loops(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .folder(&[])?
            .into_iter()
            .filter(|i| i.mode == TREE)
            .filter_map(|i| String::from_utf8(i.name.to_vec()).ok())
            .filter(|n| crate::loops::is_id_like(n))
            .collect())
    }

    fn text(&self, id: ObjectId) -> Result<Result<String, String>, StoreError> {
        match objects::read_blob_bounded(&self.repo, id, MAX_FILE).map_err(self.read_err())? {
            BoundedBlob::TooLarge(size) => Ok(Err(format!("{size} bytes, more than {MAX_FILE}"))),
            BoundedBlob::Content(bytes) => {
                Ok(String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string()))
            }
        }
    }

    /// The comments of loop `loop_id`, oldest first, each with its events.
    pub fn threads(&self, loop_id: &str) -> Result<Loaded, StoreError> {
        let mut loaded = Loaded::default();
        let shown = |rel: &str| crate::terminal::visible(rel).into_owned();
        let folders = self.folder(&[loop_id])?;
        if folders.len() > MAX_COMMENTS {
            loaded.skipped.push(format!(
                "{loop_id}: {} comments, of which the first {MAX_COMMENTS} are read",
                folders.len()
            ));
        }
        for folder in folders.into_iter().take(MAX_COMMENTS) {
            let name = String::from_utf8_lossy(&folder.name).into_owned();
            let rel = format!("{loop_id}/{name}");
            if folder.mode != TREE || !super::comments::is_comment_id(&name) {
                loaded
                    .skipped
                    .push(format!("{}: not a comment", shown(&rel)));
                continue;
            }
            let files = objects::tree_items(&self.repo, folder.id).map_err(self.read_err())?;
            let Some(head) = files.iter().find(|f| f.name == "comment.toml") else {
                loaded
                    .skipped
                    .push(format!("{}: no comment.toml", shown(&rel)));
                continue;
            };
            let comment = match self.text(head.id)? {
                Ok(text) => Comment::parse(&text, loop_id, &name),
                Err(why) => Err(Invalid::Field(why)),
            };
            let comment = match comment {
                Ok(c) => c,
                Err(why) => {
                    loaded
                        .skipped
                        .push(format!("{}/comment.toml: {why}", shown(&rel)));
                    continue;
                }
            };
            let mut events = Vec::new();
            let event_files: Vec<_> = files
                .iter()
                .filter(|f| f.name != "comment.toml" && f.name.ends_with(b".toml"))
                .collect();
            if event_files.len() > MAX_EVENTS {
                loaded.skipped.push(format!(
                    "{}: {} events, of which the first {MAX_EVENTS} are read",
                    shown(&rel),
                    event_files.len()
                ));
            }
            for file in event_files.into_iter().take(MAX_EVENTS) {
                let event = match self.text(file.id)? {
                    Ok(text) => Event::parse(&text),
                    Err(why) => Err(Invalid::Field(why)),
                };
                match event {
                    Ok(e) if file.mode == BLOB || file.mode == 0o100755 => events.push(e),
                    Ok(_) => loaded.skipped.push(format!(
                        "{}: not a file",
                        shown(&format!("{rel}/{}", file.name))
                    )),
                    Err(why) => loaded
                        .skipped
                        .push(format!("{}: {why}", shown(&format!("{rel}/{}", file.name)))),
                }
            }
            // File names start with the time in nanoseconds: a tree lists them in that
            // order, which is the events' order.
            loaded.threads.push(Thread { comment, events });
        }
        loaded.threads.sort_by(|a, b| {
            (a.comment.created_at.as_str(), a.comment.id.as_str())
                .cmp(&(b.comment.created_at.as_str(), b.comment.id.as_str()))
        });
        Ok(loaded)
    }

    /// Adds `files` (a path below the branch's root and its content) in one commit, the
    /// branch moved by compare-and-swap (a lost race is tried again). The caller holds
    /// the workspace's comments lock.
    pub fn add(
        &self,
        files: &[(String, String)],
        message: &str,
        who: &Committer,
    ) -> Result<ObjectId, StoreError> {
        const TRIES: usize = 8;
        for _ in 0..TRIES {
            let tip = self.tip()?;
            let base = match tip {
                Some(t) => objects::commit_tree(&self.repo, t).map_err(self.read_err())?,
                None => ObjectId::empty_tree(self.repo.object_hash()),
            };
            let mut editor = self.repo.edit_tree(base).map_err(|e| self.write_err(e))?;
            for (path, content) in files {
                let blob = self
                    .repo
                    .write_blob(content.as_bytes())
                    .map_err(|e| self.write_err(e))?;
                editor
                    .upsert(
                        path.as_str(),
                        gix::object::tree::EntryKind::Blob,
                        blob.detach(),
                    )
                    .map_err(|e| self.write_err(e))?;
            }
            let tree = editor.write().map_err(|e| self.write_err(e))?.detach();
            let new = self.commit(tree, tip.into_iter().collect(), message, who)?;
            match objects::update_branch(&self.repo, BRANCH, tip, new, message) {
                Ok(()) => return Ok(new),
                Err(e) => {
                    if self.tip()? == tip {
                        return Err(self.write_err(e));
                    }
                }
            }
        }
        Err(StoreError::Busy(TRIES))
    }

    /// Writes a commit of `tree` with `parents`.
    pub fn commit(
        &self,
        tree: ObjectId,
        parents: Vec<ObjectId>,
        message: &str,
        who: &Committer,
    ) -> Result<ObjectId, StoreError> {
        let sig = who.signature();
        let commit = gix::objs::Commit {
            tree,
            parents: parents.into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: format!("{message}\n").into(),
            extra_headers: Vec::new(),
        };
        Ok(self
            .repo
            .write_object(&commit)
            .map_err(|e| self.write_err(e))?
            .detach())
    }

    /// The union of two trees of the branch: `ours` with every file of `theirs` it
    /// lacks. Files are written once and never changed, so the same path holds the same
    /// content on both sides; where it does not (a file changed by hand on one side),
    /// ours is kept and the path is returned. At most `max_files` files are taken from
    /// theirs.
    pub fn union_tree(
        &self,
        ours: ObjectId,
        theirs: ObjectId,
        max_files: usize,
    ) -> Result<(ObjectId, Vec<String>), StoreError> {
        let mine = self.files(ours, max_files)?;
        let other = self.files(theirs, max_files)?;
        let mut editor = self.repo.edit_tree(ours).map_err(|e| self.write_err(e))?;
        let mut kept = Vec::new();
        let mut mine_iter = mine.iter().peekable();
        for (path, id) in &other {
            while mine_iter.peek().is_some_and(|(p, _)| p < path) {
                mine_iter.next();
            }
            match mine_iter.peek() {
                Some((p, mid)) if p == path => {
                    if mid != id {
                        kept.push(path.clone());
                    }
                }
                _ => {
                    editor
                        .upsert(path.as_str(), gix::object::tree::EntryKind::Blob, *id)
                        .map_err(|e| self.write_err(e))?;
                }
            }
        }
        let tree = editor.write().map_err(|e| self.write_err(e))?.detach();
        Ok((tree, kept))
    }

    /// Every file of the branch's layout (`<loop>/<comment>/<file>`) in `tree`, sorted
    /// by path; anything else is left out. More than `max` files is refused.
    fn files(&self, tree: ObjectId, max: usize) -> Result<Vec<(String, ObjectId)>, StoreError> {
        let mut out = Vec::new();
        let tree_of = |id| objects::tree_items(&self.repo, id).map_err(self.read_err());
        for l in tree_of(tree)? {
            if l.mode != TREE {
                continue;
            }
            for c in tree_of(l.id)? {
                if c.mode != TREE {
                    continue;
                }
                for f in tree_of(c.id)? {
                    if f.mode != BLOB {
                        continue;
                    }
                    if out.len() >= max {
                        return Err(self.write_err(format!(
                            "more than {max} files: not merged (a remote holding that many comments is not one git loop wrote)"
                        )));
                    }
                    out.push((format!("{}/{}/{}", l.name, c.name, f.name), f.id));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::comments::{EventKind, Role};
    use super::*;

    fn repo() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q", "-b", "main"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(ok.success());
        let store = Store::open_at(dir.path()).unwrap();
        (dir, store)
    }

    fn who() -> Committer {
        Committer {
            name: "Alice".into(),
            email: "alice@example.com".into(),
        }
    }

    fn comment(id: &str) -> Comment {
        Comment {
            id: id.into(),
            loop_id: "fix-abc123".into(),
            author: "alice".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            text: format!("comment {id}"),
            anchor: None,
        }
    }

    fn add_comment(store: &Store, c: &Comment) {
        store
            .add(
                &[(format!("{}/{}/comment.toml", c.loop_id, c.id), c.to_toml())],
                "comment",
                &who(),
            )
            .unwrap();
    }

    #[test]
    fn comments_and_their_events_are_read_back_in_order() {
        let (_dir, store) = repo();
        assert_eq!(store.tip().unwrap(), None);
        assert!(store.threads("fix-abc123").unwrap().threads.is_empty());
        add_comment(&store, &comment("aaaaaa"));
        let mut second = comment("bbbbbb");
        second.created_at = "2026-01-02T00:00:00Z".into();
        add_comment(&store, &second);
        let reply = Event {
            kind: EventKind::Reply,
            author: "bob".into(),
            created_at: "2026-01-03T00:00:00Z".into(),
            text: "done".into(),
            agent: true,
        };
        let resolve = Event {
            kind: EventKind::Resolve,
            author: "alice".into(),
            created_at: "2026-01-04T00:00:00Z".into(),
            text: String::new(),
            agent: false,
        };
        store
            .add(
                &[
                    ("fix-abc123/aaaaaa/b.toml".into(), resolve.to_toml()),
                    ("fix-abc123/aaaaaa/a.toml".into(), reply.to_toml()),
                ],
                "events",
                &who(),
            )
            .unwrap();
        let loaded = store.threads("fix-abc123").unwrap();
        assert!(loaded.skipped.is_empty(), "{:?}", loaded.skipped);
        let ids: Vec<&str> = loaded
            .threads
            .iter()
            .map(|t| t.comment.id.as_str())
            .collect();
        assert_eq!(ids, ["aaaaaa", "bbbbbb"]);
        assert_eq!(loaded.threads[0].events, vec![reply, resolve]);
        assert!(loaded.threads[0].resolved());
        assert_eq!(store.loops().unwrap(), ["fix-abc123"]);
        // Every write is a commit on top of the last.
        let tip = store.tip().unwrap().unwrap();
        let n = objects::count_ahead(store.repo(), tip, &[], false).unwrap();
        assert_eq!(n, 3);
    }

    #[test]
    fn what_is_not_a_comment_is_skipped_and_named() {
        let (_dir, store) = repo();
        let mut anchored = comment("cccccc");
        anchored.anchor = Some(super::super::comments::Anchor {
            role: Role::Code,
            repo: None,
            commit: "0".repeat(40),
            path: Some("../../etc/passwd".into()),
            start: 1,
            end: 1,
            lines: vec!["x".into()],
            hunk: String::new(),
        });
        store
            .add(
                &[
                    ("fix-abc123/cccccc/comment.toml".into(), anchored.to_toml()),
                    ("fix-abc123/dddddd/comment.toml".into(), "id = [".into()),
                    (
                        "fix-abc123/nothex/comment.toml".into(),
                        comment("eeeeee").to_toml(),
                    ),
                    ("fix-abc123/ffffff/x.toml".into(), "kind = \"reply\"".into()),
                    (
                        "fix-abc123/eeeeee/comment.toml".into(),
                        comment("eeeeee").to_toml(),
                    ),
                    (
                        "fix-abc123/eeeeee/e.toml".into(),
                        "kind = \"delete\"\x1b[2J".into(),
                    ),
                ],
                "mixed",
                &who(),
            )
            .unwrap();
        let loaded = store.threads("fix-abc123").unwrap();
        let ids: Vec<&str> = loaded
            .threads
            .iter()
            .map(|t| t.comment.id.as_str())
            .collect();
        assert_eq!(ids, ["eeeeee"]);
        assert_eq!(loaded.skipped.len(), 5, "{:?}", loaded.skipped);
        assert!(loaded.skipped.iter().all(|s| !s.contains('\x1b')));
    }

    #[test]
    fn the_union_of_two_branches_keeps_every_file_once() {
        let (_dir, store) = repo();
        add_comment(&store, &comment("aaaaaa"));
        let base = store.tip().unwrap().unwrap();
        add_comment(&store, &comment("bbbbbb"));
        let ours = store.tip().unwrap().unwrap();
        // Theirs: from the base, another comment, and a file changed by hand.
        objects::update_branch(store.repo(), BRANCH, Some(ours), base, "rewind").unwrap();
        add_comment(&store, &comment("cccccc"));
        let mut changed = comment("aaaaaa");
        changed.text = "rewritten".into();
        add_comment(&store, &changed);
        let theirs = store.tip().unwrap().unwrap();
        let ours_tree = objects::commit_tree(store.repo(), ours).unwrap();
        let theirs_tree = objects::commit_tree(store.repo(), theirs).unwrap();
        let (tree, kept) = store.union_tree(ours_tree, theirs_tree, 100).unwrap();
        assert_eq!(kept, ["fix-abc123/aaaaaa/comment.toml"]);
        let merged = store
            .commit(tree, vec![ours, theirs], "merge", &who())
            .unwrap();
        objects::update_branch(store.repo(), BRANCH, Some(theirs), merged, "merge").unwrap();
        let loaded = store.threads("fix-abc123").unwrap();
        let texts: Vec<&str> = loaded
            .threads
            .iter()
            .map(|t| t.comment.text.as_str())
            .collect();
        assert_eq!(
            texts,
            ["comment aaaaaa", "comment bbbbbb", "comment cccccc"]
        );
        assert!(store.union_tree(ours_tree, theirs_tree, 1).is_err());
    }
}
