//! The workspace layout of DESIGN.md section 2. Every path the tool uses is a method here
//! and nowhere else, so the layout can be read in one place and the sandbox's virtual view
//! (which mirrors it) can be derived from the same methods.
//!
//! The layout is relative by design: a loop's repositories find their origins through
//! relative paths (`objects/info/alternates`, `remote.origin.url`), so copying the
//! workspace to another machine keeps working and the same paths resolve inside the
//! sandbox, where the workspace appears under `/loopat/`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};

/// The name of the team's main branch of a context repository.
pub const TRUNK: &str = "main";

#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    user: String,
}

/// Host-side paths that live outside the workspace.
#[derive(Debug, Clone)]
pub struct HostPaths {
    pub operator_config: PathBuf,
    pub identity: PathBuf,
}

impl HostPaths {
    /// `$XDG_CONFIG_HOME/systemd/user`: where `cron install` puts its timer when systemd
    /// runs the user's session.
    pub fn systemd_user_dir() -> Result<PathBuf> {
        Ok(config_home()?.join("systemd/user"))
    }

    pub fn from_env() -> Result<Self> {
        let config_home = config_home()?;
        let operator_config = match std::env::var_os("GIT_LOOP_CONFIG") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => config_home.join("git-loop").join("config.toml"),
        };
        let identity = match std::env::var_os("GIT_LOOP_IDENTITY") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => config_home.join("git-loop").join("identity.txt"),
        };
        Ok(HostPaths {
            operator_config,
            identity,
        })
    }
}

/// Why the workspace's place or its user cannot be told.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("HOME is not set")]
    NoHome,
    #[error("cannot tell who the user is")]
    NoUser,
    #[error("user name '{0}' cannot name a folder")]
    BadUser(String),
    #[error("GIT_LOOP_HOME={} is a relative path", given.display())]
    RelativeHome {
        given: PathBuf,
        /// What it names from the current folder.
        here: Option<PathBuf>,
    },
    #[error("GIT_LOOP_HOME={} is not a folder", .0.display())]
    HomeNotAFolder(PathBuf),
}

fn home_dir() -> Result<PathBuf> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Ok(PathBuf::from(h)),
        _ => Err(WorkspaceError::NoHome.into()),
    }
}

fn config_home() -> Result<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME") {
        Some(p) if Path::new(&p).is_absolute() => Ok(PathBuf::from(p)),
        _ => Ok(home_dir()?.join(".config")),
    }
}

/// `$GIT_LOOP_HOME`, else `$XDG_DATA_HOME/git-loop`, else `~/.local/share/git-loop`.
pub fn default_root() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("GIT_LOOP_HOME") {
        if !p.is_empty() {
            let p = PathBuf::from(p);
            // A relative path would name another workspace in every folder a command is
            // run from (the user's repository among them): refused, with the absolute
            // path it names from here.
            if !p.is_absolute() {
                let here = std::env::current_dir().map(|d| d.join(&p)).ok();
                return Err(WorkspaceError::RelativeHome { given: p, here }.into());
            }
            if std::fs::metadata(&p).is_ok_and(|m| !m.is_dir()) {
                return Err(WorkspaceError::HomeNotAFolder(p).into());
            }
            return Ok(p);
        }
    }
    match std::env::var_os("XDG_DATA_HOME") {
        Some(p) if Path::new(&p).is_absolute() => Ok(PathBuf::from(p).join("git-loop")),
        _ => Ok(home_dir()?.join(".local/share/git-loop")),
    }
}

/// `GIT_LOOP_USER`, else `$USER`, else the login name of the current uid.
pub fn current_user() -> Result<String> {
    let from_env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let user = from_env("GIT_LOOP_USER")
        .or_else(|| from_env("USER"))
        .or_else(login_name)
        .ok_or(WorkspaceError::NoUser)?;
    if !valid_user_name(&user) {
        return Err(WorkspaceError::BadUser(user).into());
    }
    Ok(user)
}

fn valid_user_name(user: &str) -> bool {
    !user.is_empty()
        && user.len() <= 64
        && !user.starts_with('.')
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn login_name() -> Option<String> {
    // Reading /etc/passwd keeps this free of unsafe libc calls; NSS users without USER
    // set are rare enough to be told to set GIT_LOOP_USER.
    let uid = fs::metadata("/proc/self").ok().map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    })?;
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let _ = fields.next()?;
        let id: u32 = fields.next()?.parse().ok()?;
        (id == uid).then(|| name.to_string())
    })
}

impl Workspace {
    /// The workspace at `root` for `user`; nothing is created.
    pub fn at(root: PathBuf, user: String) -> Self {
        Workspace { root, user }
    }

    /// The workspace named by the environment (DESIGN section 2).
    pub fn from_env() -> Result<Self> {
        Ok(Workspace::at(default_root()?, current_user()?))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn context_dir(&self) -> PathBuf {
        self.root.join("context")
    }

    pub fn knowledge(&self) -> PathBuf {
        self.context_dir().join("knowledge")
    }

    pub fn notes(&self) -> PathBuf {
        self.context_dir().join("notes")
    }

    pub fn repos_dir(&self) -> PathBuf {
        self.context_dir().join("repos")
    }

    /// `context/repos/<name>`: a symlink to a registered repository's top-level folder.
    pub fn repo_link(&self, name: &str) -> PathBuf {
        self.repos_dir().join(name)
    }

    pub fn personal_dir(&self) -> PathBuf {
        self.root.join("personal")
    }

    pub fn personal(&self) -> PathBuf {
        self.personal_dir().join(&self.user)
    }

    /// `vaults/<user>/`: the user's vaults, a git repository of their own outside every
    /// sandbox's view, names, ciphertexts and history included (DESIGN 4.0, 6).
    pub fn vaults_dir(&self) -> PathBuf {
        self.root.join("vaults").join(&self.user)
    }

    /// `vaults/.pinned/<user>/`: what the person accepted of their vaults (recipients, older
    /// entries), on this machine only: never synced, in no sandbox's view (`vault::pins`).
    pub fn vault_pins_dir(&self) -> PathBuf {
        self.root.join("vaults/.pinned").join(&self.user)
    }

    /// `personal/<user>/.loopat/vaults/`, where vaults lived before they had a repository
    /// of their own; moved from there on first use (`vault::migrate`).
    pub fn legacy_vaults_dir(&self) -> PathBuf {
        self.personal().join(".loopat/vaults")
    }

    /// `vaults/<user>/<vault>/` (DESIGN.md section 6).
    pub fn vault_dir(&self, vault: &str) -> PathBuf {
        self.vaults_dir().join(vault)
    }

    /// The vault's age recipients, one per line.
    pub fn vault_recipients(&self, vault: &str) -> PathBuf {
        self.vault_dir(vault).join("recipients.txt")
    }

    /// `envs/`: one `<NAME>.age` per environment variable.
    pub fn vault_envs_dir(&self, vault: &str) -> PathBuf {
        self.vault_dir(vault).join("envs")
    }

    /// `envs/<NAME>.age`: the variable NAME inside the sandbox.
    pub fn vault_env(&self, vault: &str, name: &str) -> PathBuf {
        self.vault_envs_dir(vault).join(format!("{name}.age"))
    }

    /// `mounts/home/`: mirrors the sandbox's `$HOME`.
    pub fn vault_home_dir(&self, vault: &str) -> PathBuf {
        self.vault_dir(vault).join("mounts/home")
    }

    /// `mounts/home/<rel>.age`: the file `$HOME/<rel>` inside the sandbox. `rel` must have
    /// been validated (`vault::names::home_rel`).
    pub fn vault_home_file(&self, vault: &str, rel: &Path) -> PathBuf {
        let mut name = rel.as_os_str().to_owned();
        name.push(".age");
        self.vault_home_dir(vault).join(name)
    }

    /// Serialises the moves and commits of the vaults' repository.
    pub fn vaults_lock(&self) -> PathBuf {
        self.locks_dir().join("vaults.lock")
    }

    /// Serialises the writes to one vault (a `rekey` and a `set` must not interleave).
    pub fn vault_lock(&self, vault: &str) -> PathBuf {
        self.locks_dir().join(format!("vault-{vault}.lock"))
    }

    pub fn personal_config(&self) -> PathBuf {
        self.personal().join(".loopat/config.toml")
    }

    pub fn team_config(&self) -> PathBuf {
        self.knowledge().join(".loopat/config.toml")
    }

    /// `knowledge/.loopat/sandboxes/`: a folder per sandbox profile.
    pub fn sandbox_profiles(&self) -> PathBuf {
        self.knowledge().join(".loopat/sandboxes")
    }

    /// `knowledge/.loopat/sandboxes/<name>/sandbox.toml` (the `default` profile needs none).
    pub fn sandbox_profile(&self, name: &str) -> PathBuf {
        self.sandbox_profiles().join(name).join("sandbox.toml")
    }

    /// `knowledge/.loopat/claude/`: the team's doctrine, skills and MCP servers (L2).
    pub fn team_claude_dir(&self) -> PathBuf {
        self.knowledge().join(".loopat/claude")
    }

    pub fn loops_dir(&self) -> PathBuf {
        self.root.join("loops")
    }

    pub fn loop_dir(&self, id: &str) -> PathBuf {
        self.loops_dir().join(id)
    }

    /// Where `new` assembles a loop before renaming it into place, so that an interrupted
    /// `new` never leaves a half-made `loops/<id>/`. Same depth as `loop_dir`, so the
    /// relative paths written inside stay right after the rename.
    pub fn loop_staging_dir(&self, id: &str) -> PathBuf {
        self.loops_dir().join(format!("{STAGING_PREFIX}{id}"))
    }

    /// What `rm` renames a loop folder to before deleting it (one atomic step: the loop is
    /// gone from every listing at once, and a killed `rm` leaves only this, which the next
    /// `rm`, `new`, `list` or `doctor --fix` deletes).
    pub fn loop_removal_dir(&self, id: &str) -> PathBuf {
        self.loops_dir().join(format!("{REMOVAL_PREFIX}{id}"))
    }

    pub fn loop_record(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("loop.toml")
    }

    pub fn loop_workdir(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("workdir")
    }

    pub fn loop_notes(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("context/notes")
    }

    pub fn loop_knowledge(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("context/knowledge")
    }

    pub fn loop_claude_dir(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join(".claude")
    }

    pub fn loop_home_upper(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("home/upper")
    }

    pub fn loop_home_work(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("home/work")
    }

    /// The folder the kernel makes in `home/work` when an overlay is first mounted on the
    /// loop's `$HOME`; it stays, which is how a `$HOME` once an overlay is told.
    pub fn loop_home_overlay_work(&self, id: &str) -> PathBuf {
        self.loop_home_work(id).join("work")
    }

    /// The mount point of the loop's `$HOME` overlay; only ever mounted in `git-loop`'s own
    /// private mount namespace, so on the host it stays an empty folder.
    pub fn loop_home_merged(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("home/merged")
    }

    /// `loops/<id>/chat/`: the transcript a loop was seeded with (`new --seed-chat`),
    /// read-only at `/loopat/context/chat/<id>/` inside.
    pub fn loop_chat_dir(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("chat")
    }

    /// The host ports a loop's forwarded ports are remembered at (`crate::ports`).
    pub fn loop_ports(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("ports.toml")
    }

    pub fn loop_events(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("events.jsonl")
    }

    /// `loops/<id>/running/`: an empty file named by its id for each run of the loop that
    /// started and whose exit is not recorded yet (see `sandbox::record`).
    pub fn loop_running(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("running")
    }

    /// `plans/`: each loop's kept plan inputs and the key of their HMAC
    /// (`sandbox::cache`); host-side state like `vaults/`, in no sandbox's view, 0700.
    pub fn plans_dir(&self) -> PathBuf {
        self.root.join("plans")
    }

    /// `plans/<id>.json`: what loop `id`'s runs need that does not change between them.
    pub fn loop_plan(&self, id: &str) -> PathBuf {
        self.plans_dir().join(format!("{id}.json"))
    }

    /// `plans/<id>.locks.json`: what the last walk of loop `id`'s git folders for lock files
    /// saw (`sandbox::cache::lock_walks`).
    pub fn loop_lock_walk(&self, id: &str) -> PathBuf {
        self.plans_dir().join(format!("{id}.locks.json"))
    }

    /// `plans/<id>.gitlinks.json`: the gitlinks the last scan of loop `id`'s large indexes
    /// found, with each index's stamp (`sandbox::cache::gitlinks`).
    pub fn loop_gitlinks(&self, id: &str) -> PathBuf {
        self.plans_dir().join(format!("{id}.gitlinks.json"))
    }

    /// `plans/key`: the HMAC key of the kept plans.
    pub fn plans_key(&self) -> PathBuf {
        self.plans_dir().join("key")
    }

    pub fn home_skel(&self) -> PathBuf {
        self.root.join("sandbox-home-skel")
    }

    pub fn locks_dir(&self) -> PathBuf {
        self.root.join("locks")
    }

    /// A checkout update in progress for `target` (`notes`, `knowledge`, `code-<repo>`).
    pub fn checkout_journal(&self, target: &str) -> PathBuf {
        self.locks_dir().join(format!("checkout-{target}.pending"))
    }

    /// The branches a `new` in progress created in the origins, to delete again if it dies
    /// before its loop is in place.
    pub fn new_journal(&self, id: &str) -> PathBuf {
        self.locks_dir().join(format!("new-{id}.pending"))
    }

    /// Held by a `new` of loop `id` for its whole run: whoever takes it knows that `new` is
    /// dead and its leftovers (staging folder, branches) are to be removed.
    pub fn new_lock(&self, id: &str) -> PathBuf {
        self.locks_dir().join(format!("new-{id}.lock"))
    }

    /// The branches an `rm --delete-branches` in progress still has to delete.
    pub fn removal_journal(&self, id: &str) -> PathBuf {
        self.locks_dir().join(format!("rm-{id}.pending"))
    }

    /// An autocommit in progress in one of a loop's repositories.
    pub fn autocommit_journal(&self, id: &str, role: &str) -> PathBuf {
        self.locks_dir()
            .join(format!("autocommit-{id}-{role}.pending"))
    }

    /// Held shared by every live run of loop `id` (`run`, `shell`, `agent`, and the
    /// sandboxed commits of `autocommit`): whoever takes it exclusively knows that no
    /// process of that loop's sandbox is alive, so git's lock files in the loop's
    /// repositories have no owner left.
    pub fn loop_run_lock(&self, id: &str) -> PathBuf {
        self.locks_dir().join(format!("run-{id}.lock"))
    }

    /// Held by `autocommit` for its whole run: two never interleave, and a git lock file in
    /// the personal repository, which only autocommit commits, is a dead one's.
    pub fn autocommit_lock(&self) -> PathBuf {
        self.locks_dir().join("autocommit.lock")
    }

    /// Held while a loop's branches are imported into their origins.
    pub fn loop_import_lock(&self, id: &str) -> PathBuf {
        self.locks_dir().join(format!("import-{id}.lock"))
    }

    pub fn workspace_lock(&self) -> PathBuf {
        self.locks_dir().join("workspace.lock")
    }

    /// Held while the review comments' branch of the notes repository moves (a comment,
    /// a reply, a resolution, a sync): each move is a compare-and-swap, and this keeps
    /// two writers of one workspace from spending their tries on each other.
    pub fn comments_lock(&self) -> PathBuf {
        self.locks_dir().join("comments.lock")
    }

    /// `loops/<id>/.claude/review-task.md`: the task `agent --address-review` and
    /// `rebase --agent` give the agent, also readable inside at the same place.
    pub fn loop_task_file(&self, id: &str) -> PathBuf {
        self.loop_claude_dir(id).join("review-task.md")
    }

    /// `loops/<id>/.claude/review-replies/`: where the agent answers a review comment in
    /// words (`<comment id>.md`); read back bounded after its run, then removed.
    pub fn loop_review_replies(&self, id: &str) -> PathBuf {
        self.loop_claude_dir(id).join("review-replies")
    }

    /// The relative path from a loop's workdir to its code origin; as `remote.origin.url`
    /// it resolves on the host (through the `context/repos` symlink) and in the sandbox.
    pub fn rel_repo_from_workdir(name: &str) -> String {
        format!("../../../context/repos/{name}")
    }

    /// `loops/<id>/context/.origins/<role>`: a symlink to a context origin (`notes`,
    /// `knowledge`). A loop's context clones sit at `loops/<id>/context/<role>` on the host
    /// but at `/loopat/context/<role>` in the sandbox, so no relative path from the clone to
    /// `context/<role>` resolves in both. Instead the clone points at
    /// `../.origins/<role>`: on the host this link, in the sandbox a read-only bind of the
    /// origin at `/loopat/context/.origins/<role>`.
    pub fn loop_origin_link(&self, id: &str, role: &str) -> PathBuf {
        self.loop_dir(id).join("context/.origins").join(role)
    }

    /// The link's target, relative to the link's folder.
    pub fn origin_link_target(role: &str) -> String {
        format!("../../../../context/{role}")
    }

    /// `remote.origin.url` of a loop's context clone (relative to its worktree).
    pub fn rel_origin_from_context_clone(role: &str) -> String {
        format!("../.origins/{role}")
    }

    /// `objects/info/alternates` of a loop's context clone (relative to its objects folder).
    pub fn rel_objects_from_context_clone(role: &str) -> String {
        format!("../../../.origins/{role}/.git/objects")
    }

    /// `objects/info/alternates` of a loop's code clone (relative to its objects folder).
    pub fn rel_objects_from_workdir(name: &str) -> String {
        format!("../../../../../context/repos/{name}/.git/objects")
    }

    /// Every folder of the layout that `init` creates.
    pub fn layout_dirs(&self) -> Vec<PathBuf> {
        vec![
            self.root.clone(),
            self.context_dir(),
            self.repos_dir(),
            self.personal_dir(),
            self.loops_dir(),
            self.home_skel(),
            self.locks_dir(),
        ]
    }

    /// Has `init` run here (the marker is the notes repository, made last)?
    pub fn is_initialized(&self) -> bool {
        self.notes().join(".git").is_dir()
            && self.knowledge().join(".git").is_dir()
            && self.personal().join(".git").is_dir()
            && self.loops_dir().is_dir()
            && self.locks_dir().is_dir()
    }

    /// Whether loop `id` is there: its folder, not followed through a link, as
    /// [`Self::loop_ids`] lists them.
    pub fn has_loop(&self, id: &str) -> bool {
        fs::symlink_metadata(self.loop_dir(id)).is_ok_and(|m| m.is_dir())
    }

    /// Names of the loop folders (not the staging ones), sorted.
    pub fn loop_ids(&self) -> Result<Vec<String>> {
        let dir = self.loops_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(Error::failure(format!("cannot read {}", dir.display())).with_source(e))
            }
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.context(|| format!("cannot read {}", dir.display()))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.starts_with('.') {
                continue;
            }
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                ids.push(name.to_string());
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Staging folders left behind by an interrupted `new`.
    pub fn staging_leftovers(&self) -> Result<Vec<PathBuf>> {
        let dir = self.loops_dir();
        let Ok(entries) = fs::read_dir(&dir) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(STAGING_PREFIX))
            {
                out.push(entry.path());
            }
        }
        out.sort();
        Ok(out)
    }

    /// Loop folders an interrupted `rm` left under their removal name, by loop id.
    pub fn removal_leftovers(&self) -> Vec<(String, PathBuf)> {
        let Ok(entries) = fs::read_dir(self.loops_dir()) else {
            return Vec::new();
        };
        let mut out: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let id = name.to_str()?.strip_prefix(REMOVAL_PREFIX)?.to_string();
                Some((id, e.path()))
            })
            .collect();
        out.sort();
        out
    }

    /// Registered repository names, sorted.
    pub fn repo_names(&self) -> Result<Vec<String>> {
        let dir = self.repos_dir();
        let Ok(entries) = fs::read_dir(&dir) else {
            return Ok(Vec::new());
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        Ok(names)
    }
}

pub const STAGING_PREFIX: &str = ".new-";
pub const REMOVAL_PREFIX: &str = ".rm-";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_is_its_folder_not_a_link_to_one() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path().to_path_buf(), "me".into());
        std::fs::create_dir_all(ws.loop_dir("here")).unwrap();
        std::os::unix::fs::symlink(ws.loop_dir("here"), ws.loop_dir("linked")).unwrap();
        std::fs::write(ws.loop_dir("file"), "").unwrap();
        assert!(ws.has_loop("here"));
        assert!(!ws.has_loop("linked"));
        assert!(!ws.has_loop("file"));
        assert!(!ws.has_loop("absent"));
        // As the listing has it.
        assert_eq!(ws.loop_ids().unwrap(), vec!["here".to_string()]);
    }

    /// `base` joined with the relative `rel`, `..` taken lexically (as the kernel does for
    /// a path without symlinks).
    fn resolve(base: &Path, rel: &str) -> PathBuf {
        let mut out = base.to_path_buf();
        for part in Path::new(rel).components() {
            match part {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::Normal(p) => out.push(p),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn a_loops_relative_paths_reach_its_origins_on_the_host() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let id = "fix-abc123";
        let objects = ws.loop_workdir(id).join(".git/objects");
        assert_eq!(
            resolve(&objects, &Workspace::rel_objects_from_workdir("app")),
            ws.repo_link("app").join(".git/objects")
        );
        assert_eq!(
            resolve(
                &ws.loop_workdir(id),
                &Workspace::rel_repo_from_workdir("app")
            ),
            ws.repo_link("app")
        );
        for role in ["notes", "knowledge"] {
            let clone = ws.loop_dir(id).join("context").join(role);
            assert_eq!(
                resolve(&clone, &Workspace::rel_origin_from_context_clone(role)),
                ws.loop_origin_link(id, role)
            );
            assert_eq!(
                resolve(
                    &clone.join(".git/objects"),
                    &Workspace::rel_objects_from_context_clone(role)
                ),
                ws.loop_origin_link(id, role).join(".git/objects")
            );
            let link = ws.loop_origin_link(id, role);
            assert_eq!(
                resolve(link.parent().unwrap(), &Workspace::origin_link_target(role)),
                ws.context_dir().join(role)
            );
        }
    }

    /// The same relative paths from where the sandbox mounts the loop's repositories land
    /// where it mounts their origins (DESIGN 4.1: the view mirrors the workspace).
    #[test]
    fn the_same_relative_paths_reach_the_origins_inside() {
        let id = "fix-abc123";
        let workdir = crate::sandbox::spec::repo_inside(id, "code");
        assert_eq!(
            resolve(
                &workdir.join(".git/objects"),
                &Workspace::rel_objects_from_workdir("app")
            ),
            Path::new("/loopat/context/repos/app/.git/objects")
        );
        let notes = crate::sandbox::spec::repo_inside(id, "notes");
        assert_eq!(
            resolve(&notes, &Workspace::rel_origin_from_context_clone("notes")),
            Path::new("/loopat/context/.origins/notes")
        );
    }

    #[test]
    fn the_vaults_are_outside_every_tree_a_sandbox_sees() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let vaults = ws.vaults_dir();
        for seen in [ws.personal(), ws.knowledge(), ws.notes(), ws.loops_dir()] {
            assert!(
                !vaults.starts_with(&seen),
                "{} is below {}",
                vaults.display(),
                seen.display()
            );
        }
        assert!(ws.legacy_vaults_dir().starts_with(ws.personal()));
        assert_eq!(ws.vault_dir("work"), Path::new("/ws/vaults/alice/work"));
    }

    #[test]
    fn user_names_that_cannot_name_a_folder_are_refused() {
        for good in ["alice", "a.b-c_d", "x1"] {
            assert!(valid_user_name(good), "{good}");
        }
        for bad in ["", ".hidden", "a/b", "../x", "a b", &"x".repeat(65)] {
            assert!(!valid_user_name(bad), "{bad}");
        }
    }

    #[test]
    fn staging_folders_are_beside_loops_and_not_listed_as_loops() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().to_path_buf(), "alice".into());
        fs::create_dir_all(ws.loop_dir("a-000001")).unwrap();
        fs::create_dir_all(ws.loop_staging_dir("b-000002")).unwrap();
        assert_eq!(ws.loop_ids().unwrap(), vec!["a-000001".to_string()]);
        assert_eq!(
            ws.staging_leftovers().unwrap(),
            vec![ws.loop_staging_dir("b-000002")]
        );
        assert_eq!(
            ws.loop_staging_dir("b-000002").parent(),
            ws.loop_dir("b-000002").parent()
        );
    }
}
