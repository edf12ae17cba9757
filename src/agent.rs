//! The agent's prompt layers (DESIGN 4.6), written into `loops/<id>/.claude/` before each
//! agent run: `CLAUDE.md` = L1 doctrine (built in) + L2 team doctrine + the kind's
//! doctrine + L4 runtime facts; `settings.json` with the memory settings; the team's MCP
//! servers. L3 (the project's own CLAUDE.md in the workdir) the agent loads itself.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::fsutil;
use crate::loops::{Kind, LoopRecord};
use crate::sandbox::spec::SandboxSpec;
use crate::workspace::Workspace;

pub mod ready;

/// L1: sandbox boundaries, paths, memory model, publish workflow.
pub const DOCTRINE: &str = include_str!("../templates/CLAUDE.md");

/// Why the agent's program cannot be given to the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the agent command '{0}' is not installed (not on PATH)")]
    NotInstalled(String),
    /// The user has no git identity: what fails for it.
    #[error("you have no git identity: {consequence}")]
    NoIdentity { consequence: &'static str },
    /// Its install folder is (or holds) `what`, which binding it would show the sandbox.
    #[error("the agent {} is installed in {}, which is (or holds) {what}: binding it would show the sandbox more than the agent", binary.display(), folder.display())]
    SharedFolder {
        binary: PathBuf,
        folder: PathBuf,
        what: String,
    },
    /// The loop's vault holds none of the variables the agent logs in with, and the agent
    /// keeps no login of its own in the loop.
    #[error("{agent} is not logged in: vault '{vault}' holds no {variables}")]
    NotLoggedIn {
        agent: &'static str,
        vault: String,
        variables: String,
        /// The loop the agent was to start in, for the hint that starts it anyway.
        id: Option<String>,
    },
}

/// The doctrine of a special loop kind.
pub fn kind_doctrine(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Distill => Some(include_str!("../templates/loop-kinds/distill/CLAUDE.md")),
        _ => None,
    }
}

/// The whole `CLAUDE.md` for a run (pure: the team layer is passed in).
pub fn compose(rec: &LoopRecord, spec: &SandboxSpec, team: Option<&str>) -> String {
    let mut out = DOCTRINE.replace("<id>", &rec.id);
    if let Some(team) = team {
        out.push_str("\n\n# Team doctrine\n\n");
        out.push_str(team.trim());
        out.push('\n');
    }
    if let Some(kind) = kind_doctrine(rec.kind) {
        out.push_str("\n\n");
        out.push_str(kind.trim());
        out.push('\n');
    }
    out.push_str("\n\n# This loop\n\n");
    let repo = rec.repo.as_deref().unwrap_or("(none: scratch loop)");
    for (k, v) in [
        ("loop id", rec.id.as_str()),
        ("title", rec.title.as_str()),
        ("kind", &rec.kind.to_string()),
        ("branch", rec.branch.as_str()),
        ("repository", repo),
        ("base", rec.base.as_deref().unwrap_or("-")),
        ("vault", rec.vault.as_str()),
        ("sandbox profile", rec.sandbox.as_str()),
        ("mode", spec.mode.name()),
        ("network", spec.net.name()),
        ("working folder", &spec.cwd.display().to_string()),
    ] {
        out.push_str(&format!("- {k}: {v}\n"));
    }
    if !spec.toolchains.is_empty() {
        out.push_str(&format!(
            "- toolchains of the user's home: {} (read-only: install packages into the loop, never into them)\n",
            spec.toolchains.join(", ")
        ));
    }
    out
}

/// The most a team layer file (doctrine, MCP servers) may hold.
const TEAM_FILE_LIMIT: u64 = 1 << 20;

/// A file of the team's layer in the knowledge repository, read as data (DESIGN 4.0):
/// never through a link, only a regular file, bounded. What cannot be read so is left out,
/// with a warning saying why.
fn team_file(ws: &Workspace, rel: &str, warnings: &mut Vec<String>) -> Option<String> {
    let tree = match crate::confined::Tree::open(&ws.knowledge()) {
        Ok(Some(t)) => t,
        _ => return None,
    };
    match tree.read_text(
        Path::new(crate::sandbox::spec::TEAM_CLAUDE).join(rel),
        TEAM_FILE_LIMIT,
    ) {
        Ok(text) => text,
        Err(e) => {
            warnings.push(format!("the team's {rel} is left out: {e}"));
            None
        }
    }
}

/// Writes the layers for loop `rec` into its `.claude/` (and, for Codex, its config and
/// `AGENTS.md` in the loop's `$HOME`); returns warnings about team files that were left
/// out.
pub fn write_layers(
    ws: &Workspace,
    rec: &LoopRecord,
    spec: &SandboxSpec,
    profile: Profile,
    settings: &crate::config::Settings,
) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    let dir = ws.loop_claude_dir(&rec.id);
    fs::create_dir_all(&dir)
        .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))?;
    let team = team_file(ws, "CLAUDE.md", &mut warnings);
    let doctrine = compose(rec, spec, team.as_deref());
    fsutil::write_atomic(&dir.join("CLAUDE.md"), doctrine.as_bytes())?;

    // settings.json belongs to the agent too: set our keys, keep the rest.
    let settings_path = dir.join("settings.json");
    let mut claude = read_json(&settings_path);
    claude["autoMemoryEnabled"] = json!(true);
    claude["autoMemoryDirectory"] = json!("/loopat/context/personal/memory");
    let sandboxed = settings.agent.permissions == AgentPermissions::Sandbox;
    if profile == Profile::Claude {
        // The sandbox is the boundary: no prompt before a tool runs inside it, unless
        // `agent.permissions = "ask"`. Its own updater cannot write its install folder.
        if !claude["permissions"].is_object() {
            claude["permissions"] = json!({});
        }
        claude["permissions"]["defaultMode"] = json!(if sandboxed {
            "bypassPermissions"
        } else {
            "default"
        });
        claude["autoUpdates"] = json!(false);
        set_state_hooks(&mut claude, &rec.id);
    }
    write_json(&settings_path, &claude)?;
    let trusted = trusted_folders(spec);
    let mcp_servers = team_file(ws, "claude.json", &mut warnings)
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|team| team.get("mcpServers").cloned());
    if profile == Profile::Claude || mcp_servers.is_some() {
        // Claude Code's own state: first-run screens done, the sandboxed mode's one-time
        // confirmation given (the sandbox is what makes it safe), the loop's folder trusted
        // (a live session's detached agent has nobody to answer), and the team's MCP
        // servers; the run's key is approved once its vault is open ([`ready_for_run`]).
        ready::write_claude(
            &dir,
            sandboxed,
            &trusted,
            None,
            mcp_servers.as_ref(),
            &mut warnings,
        )?;
    }
    if profile == Profile::Codex {
        write_codex(ws, rec, &doctrine, sandboxed, &trusted, &mut warnings)?;
    }
    Ok(warnings)
}

/// What the loop's agent needs once a run's vault is open, for whatever runs in the loop
/// (the agent, a live session it joins, a command that starts it): Claude Code, the key this
/// run hands it approved (the vault's, or its placeholder, which changes every run), where
/// its state is there already (`write_layers` made it); Codex, its login as a file of
/// `$HOME` from the vault's key, in memory like a vault file (see [`ready`]).
pub fn ready_for_run(
    ws: &Workspace,
    rec: &LoopRecord,
    config: &crate::config::Config,
    delivery: &mut crate::vault::Delivery,
) -> Result<()> {
    use secrecy::ExposeSecret;
    let find = |name: &str| {
        delivery
            .env
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| zeroize::Zeroizing::new(v.expose_secret().to_string()))
    };
    if let Some(key) = find("ANTHROPIC_API_KEY") {
        let dir = ws.loop_claude_dir(&rec.id);
        // Only whether something stands there, never read here: the agent may have made
        // it any size, or a link, or a FIFO. `approve_claude_key` reads it bounded and sets
        // aside what is not the agent's state.
        let has_state = crate::confined::Tree::open(&dir)
            .ok()
            .flatten()
            .is_some_and(|tree| matches!(tree.kind(ready::CLAUDE_STATE), Ok(Some(_))));
        if has_state {
            ready::approve_claude_key(&dir, &key)?;
        }
    }
    if Profile::of(&config.settings().agent.command) == Profile::Codex {
        let rel = ready::codex_auth_path();
        match find("OPENAI_API_KEY") {
            // A file of the vault's own at the same path wins: the person stored it.
            Some(key) if !delivery.files.iter().any(|(r, _)| *r == rel) => {
                delivery.files.push((rel, ready::codex_auth(&key)));
            }
            Some(_) => {}
            // The empty file the mount of an earlier run's login left is no login.
            None => ready::remove_empty_codex_auth(&ws.loop_home_upper(&rec.id)),
        }
    }
    Ok(())
}

/// The folders the agent is told to trust: where it starts (Claude Code and Codex ask
/// about the git root of their working folder, which in a loop is that folder).
fn trusted_folders(spec: &SandboxSpec) -> Vec<String> {
    vec![spec.cwd.display().to_string()]
}

/// Claude Code's hooks that tell the loop's agent state (`crate::session::state`): a prompt
/// submitted is `working`; a notification (a question, a permission, idle) is
/// `needs-input`; the end of a turn is `needs-input` for a person at the terminal, `done`
/// for a run with `-p` (`GIT_LOOP_STOP_STATE`). The agent's other hooks are kept.
fn set_state_hooks(claude: &mut Value, id: &str) {
    use crate::session::state::{hook_command, INSIDE_FILE};
    let stop = format!(
        "printf '%s\\n' \"${{GIT_LOOP_STOP_STATE:-needs-input}}\" > {}",
        crate::session::state::inside_path_in_sandbox(id)
    );
    let ours = [
        ("UserPromptSubmit", hook_command(id, "working")),
        ("Notification", hook_command(id, "needs-input")),
        ("Stop", stop),
    ];
    if !claude["hooks"].is_object() {
        claude["hooks"] = json!({});
    }
    for (event, command) in ours {
        let mut entries: Vec<Value> = claude["hooks"][event]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|e| !e.to_string().contains(INSIDE_FILE))
            .collect();
        entries.push(json!({"matcher": "", "hooks": [{"type": "command", "command": command}]}));
        claude["hooks"][event] = Value::Array(entries);
    }
}

/// Codex's `notify` program, run at the end of each turn: the loop's agent state, as the
/// Stop hook of Claude Code writes it (Codex appends its event's JSON, which is not read).
fn codex_notify(id: &str) -> Vec<String> {
    let script = format!(
        "printf '%s\\n' \"${{GIT_LOOP_STOP_STATE:-needs-input}}\" > {}",
        crate::session::state::inside_path_in_sandbox(id)
    );
    vec!["sh".into(), "-c".into(), script, "sh".into()]
}

/// What a run's `-p`/`--print` (a prompt run to its end, no person at the terminal) makes
/// of the end of a turn: `done` (see [`set_state_hooks`]).
pub fn stop_state_env(args: &[String]) -> Option<(String, String)> {
    args.iter()
        .any(|a| a == "-p" || a == "--print" || a == "exec")
        .then(|| ("GIT_LOOP_STOP_STATE".to_string(), "done".to_string()))
}

/// Codex's config in the loop's `$HOME` (its `CODEX_HOME`), merged into what Codex keeps
/// there ([`ready::write_codex`]): its own sandbox off, ours being the boundary, no
/// approvals asked unless `agent.permissions = "ask"`, the loop's folder trusted, and the
/// loop's agent state told at the end of each turn; its `AGENTS.md` from the same prompt
/// layers as `CLAUDE.md`. The folder is the agent's, so the files are written through the
/// confined tree, never through a link.
fn write_codex(
    ws: &Workspace,
    rec: &LoopRecord,
    doctrine: &str,
    sandboxed: bool,
    trusted: &[String],
    warnings: &mut Vec<String>,
) -> Result<()> {
    let home = ws.loop_home_upper(&rec.id);
    let fail = |e: crate::confined::ConfinedError| {
        Error::failure(format!("cannot write Codex's config in {}", home.display())).with_source(e)
    };
    let tree = crate::confined::Tree::open(&home)
        .map_err(fail)?
        .ok_or_else(|| Error::failure(format!("{} is missing", home.display())))?;
    tree.ensure_dir(CODEX_HOME).map_err(fail)?;
    let codex_home = tree
        .subtree(CODEX_HOME)
        .map_err(fail)?
        .ok_or_else(|| Error::failure(format!("{} is missing", home.display())))?;
    let notify = codex_notify(&rec.id);
    ready::write_codex(&codex_home, trusted, sandboxed, &notify, doctrine, warnings)
}

/// The agent writes `.claude/` too: read only a regular file there, never through a
/// link it planted (which could pull a host file into the sandbox on the next write).
/// Bounded: the agent may have made it any size.
fn read_json(path: &Path) -> Value {
    fsutil::open_regular(path)
        .ok()
        .flatten()
        .and_then(|f| crate::confined::read_bounded(f, path, 1 << 20).ok())
        .and_then(|t| serde_json::from_slice::<Value>(&t).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}))
}

fn write_json(path: &Path, v: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    fsutil::write_atomic(path, format!("{text}\n").as_bytes())
}

/// The agent's binary on the host PATH and the folder it is installed in (bound read-only
/// at the same path inside, unless the system folders already hold it).
///
/// The install folder is the whole installation, not only the binary's folder: for a
/// package from npm it is the `node_modules` folder the package sits in, which also holds
/// the platform package npm puts beside it (`@openai/codex-linux-x64`); otherwise the
/// binary's folder. A folder that would show the sandbox more than an installation (the
/// home folder itself, one holding the workspace or the age identity) is refused.
pub fn locate(program: &str) -> Result<(PathBuf, Option<PathBuf>)> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = if program.contains('/') {
        Some(PathBuf::from(program)).filter(|p| p.is_file())
    } else {
        crate::sandbox::probe::which(program, &path)
    };
    let Some(found) = found else {
        return Err(AgentError::NotInstalled(program.to_string()).into());
    };
    let real = fs::canonicalize(&found).unwrap_or(found);
    let folder = install_folder(&real);
    let system = [
        "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/opt/", "/etc/",
    ];
    let folder = folder.filter(|f| !system.iter().any(|s| f.starts_with(s)));
    if let Some(f) = &folder {
        refuse_broad_folder(f, &real)?;
    }
    Ok((real, folder))
}

/// The folder an agent binary is installed in (see [`locate`]).
pub fn install_folder(binary: &Path) -> Option<PathBuf> {
    let top_modules = binary
        .ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last();
    match top_modules {
        Some(modules) => Some(modules.to_path_buf()),
        None => binary.parent().map(Path::to_path_buf),
    }
}

/// Binding `folder` must not show the sandbox what it must never see.
fn refuse_broad_folder(folder: &Path, binary: &Path) -> Result<()> {
    let mut guarded: Vec<(PathBuf, &str)> = Vec::new();
    if let Some(home) = std::env::var_os("HOME") {
        guarded.push((PathBuf::from(home), "your home folder"));
    }
    if let Ok(root) = crate::workspace::default_root() {
        guarded.push((root, "the workspace"));
    }
    if let Ok(host) = crate::workspace::HostPaths::from_env() {
        guarded.push((host.identity, "the age identity"));
    }
    for (path, what) in guarded {
        let path = fs::canonicalize(&path).unwrap_or(path);
        let holds = if what == "your home folder" {
            folder == path || path.starts_with(folder)
        } else {
            path.starts_with(folder)
        };
        if holds {
            return Err(AgentError::SharedFolder {
                binary: binary.to_path_buf(),
                folder: folder.to_path_buf(),
                what: what.to_string(),
            }
            .into());
        }
    }
    Ok(())
}

/// The agents git-loop knows, by their command's name; any other runs plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Claude Code (`claude`).
    Claude,
    /// Codex (`codex`).
    Codex,
    Plain,
}

impl Profile {
    /// The profile of `agent.command`.
    pub fn of(command: &[String]) -> Profile {
        let program = command
            .first()
            .and_then(|p| Path::new(p).file_name())
            .and_then(|n| n.to_str())
            .unwrap_or("");
        match program {
            "claude" | "claude.exe" => Profile::Claude,
            "codex" | "codex.js" => Profile::Codex,
            _ => Profile::Plain,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Claude => "Claude Code",
            Profile::Codex => "Codex",
            Profile::Plain => "the agent",
        }
    }

    /// The variables the agent reads its login from, in the order a stored key is looked
    /// for (README: "Agents and logins").
    pub fn login_variables(self) -> &'static [&'static str] {
        match self {
            Profile::Claude => &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
            Profile::Codex => &["OPENAI_API_KEY"],
            Profile::Plain => &[],
        }
    }

    /// The hosts a key stored by `agent login` is bound to unless told otherwise: the
    /// agent's API.
    pub fn api_hosts(self) -> &'static str {
        match self {
            Profile::Claude => "api.anthropic.com",
            Profile::Codex => "api.openai.com",
            Profile::Plain => "",
        }
    }

    /// The variable a key given to `agent login` is stored as.
    pub fn login_variable_for(self, key: &str) -> Option<&'static str> {
        match self {
            Profile::Claude if key.starts_with("sk-ant-oat") => Some("CLAUDE_CODE_OAUTH_TOKEN"),
            Profile::Claude => Some("ANTHROPIC_API_KEY"),
            Profile::Codex => Some("OPENAI_API_KEY"),
            Profile::Plain => None,
        }
    }

    /// The author of commits made with `agent.identity = "agent"` and no `agent.author`.
    pub fn default_author(self) -> (String, String) {
        match self {
            Profile::Claude => ("Claude".into(), "noreply@anthropic.com".into()),
            Profile::Codex => ("Codex".into(), "noreply@openai.com".into()),
            Profile::Plain => ("agent".into(), "agent@git-loop.invalid".into()),
        }
    }

    /// What the agent's process gets in its environment inside: that it is sandboxed
    /// (Claude Code then lets its tools run without asking, as root too), no
    /// self-update (its install folder is read-only inside), no telemetry or error
    /// reports, no plugin marketplace. With `ask`, the agent is not told it may skip
    /// asking.
    pub fn env(self, permissions: AgentPermissions, home_inside: &Path) -> Vec<(String, String)> {
        let codex_home = home_inside.join(CODEX_HOME);
        let codex_home = codex_home.to_string_lossy();
        let mut env: Vec<(&str, &str)> = match self {
            Profile::Claude => vec![
                ("DISABLE_AUTOUPDATER", "1"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                ("DISABLE_TELEMETRY", "1"),
                ("DISABLE_ERROR_REPORTING", "1"),
                // As for Codex's plugins: no marketplace fetched into the loop at every
                // start (from downloads.claude.ai and GitHub), code no one chose for it.
                ("CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL", "1"),
            ],
            Profile::Codex => vec![("CODEX_HOME", &codex_home)],
            Profile::Plain => Vec::new(),
        };
        if self == Profile::Claude && permissions == AgentPermissions::Sandbox {
            env.push(("IS_SANDBOX", "1"));
        }
        env.into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

/// Where Codex keeps its config, below the loop's `$HOME` (so it persists per loop).
pub const CODEX_HOME: &str = ".codex";

/// The identities of commits made inside a loop's sandbox.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GitIdentity {
    pub author: (String, String),
    pub committer: (String, String),
}

/// The user's identity as their git gives it for `repo` (its config, the global and
/// system config, and `GIT_AUTHOR_*`/`EMAIL` in the environment), read through gix on
/// the host: `repo` is the user's own repository or the workspace's notes, never a
/// loop's. `None` when git would have to guess one.
///
/// The keys are read as gix's `Repository::author` reads them (`author.*`, then `user.*`,
/// then the environment's fallbacks), but not through it: `author()` also stamps the
/// signature with the current time in the local zone, and finding that zone walks the
/// whole tz database (0.6 ms of every sandbox start here, for a time never used).
pub fn user_identity(repo: &Path) -> Option<(String, String)> {
    use gix::config::tree::{gitoxide, Author, User};
    let repo = crate::git::objects::open_trusted(repo).ok()?;
    let config = repo.config_snapshot();
    let first = |keys: &[&dyn gix::config::tree::Key]| {
        keys.iter()
            .find_map(|key| config.string(*key))
            .map(|v| v.to_string())
    };
    let name = first(&[&Author::NAME, &User::NAME, &gitoxide::Author::NAME_FALLBACK])?;
    let email = first(&[
        &Author::EMAIL,
        &User::EMAIL,
        &gitoxide::User::EMAIL_FALLBACK,
        &gitoxide::Author::EMAIL_FALLBACK,
    ])?;
    (!name.trim().is_empty() && !email.trim().is_empty()).then_some((name, email))
}

/// The repository whose git config names the user for loop `rec`: its code repository,
/// else the notes (the user's global config applies to both).
pub fn identity_repo(ws: &Workspace, rec: &LoopRecord) -> PathBuf {
    match (&rec.kind, &rec.repo) {
        (Kind::Code, Some(name)) => ws.repo_link(name),
        _ => ws.notes(),
    }
}

/// The identities commits made inside loop `rec` carry, as `agent.identity` says; `None`
/// when the user has none (then `new` and `doctor` say how to set one).
pub fn git_identity(
    ws: &Workspace,
    rec: &LoopRecord,
    settings: &crate::config::Settings,
) -> Option<GitIdentity> {
    let user = user_identity(&identity_repo(ws, rec))?;
    let author = match settings.agent.identity {
        CommitIdentity::User => user.clone(),
        CommitIdentity::Agent => crate::config::schema::parse_person(&settings.agent.author)
            .unwrap_or_else(|| Profile::of(&settings.agent.command).default_author()),
    };
    Some(GitIdentity {
        author,
        committer: user,
    })
}

/// Runs the configured agent (`agent.command`) in loop `rec`'s sandbox, as `req` asks
/// (the command's sandbox options; its command is the agent's, with `args` after it):
/// the agent's install folder bound read-only at the same path, its profile's
/// environment, the prompt layers written first. Warnings go to `report`.
pub fn run(
    report: &mut dyn crate::report::Report,
    ws: &Workspace,
    rec: &LoopRecord,
    config: &crate::config::Config,
    mut req: crate::sandbox::Request,
    args: Vec<String>,
) -> Result<u8> {
    let stop = stop_state_env(&args);
    let (profile, argv, folder, mut env) = command_for(ws, config, args)?;
    env.extend(stop);
    req.command = argv;
    req.ro_same_path = folder.into_iter().collect();
    req.agent_env = env;
    req.timeout = req.timeout.or(config.profile().time);
    prepare(report, ws, rec, config, &req, profile)?;
    crate::sandbox::run(report, ws, rec, config, &req)
}

/// The agent's command line, its install folder (bound read-only at the same path) and
/// what its profile adds to the environment, for `agent.command` with `args`.
#[allow(clippy::type_complexity)]
pub fn command_for(
    ws: &Workspace,
    config: &crate::config::Config,
    args: Vec<String>,
) -> Result<(Profile, Vec<String>, Option<PathBuf>, Vec<(String, String)>)> {
    // The schema refuses an empty command wherever it is set.
    let (program, rest) = config
        .settings()
        .agent
        .command
        .split_first()
        .expect("agent.command is never empty");
    let (binary, folder) = locate(program)?;
    let profile = Profile::of(&config.settings().agent.command);
    let mut argv = vec![binary.display().to_string()];
    argv.extend(rest.iter().cloned());
    argv.extend(args);
    let home_inside = std::path::Path::new("/home").join(ws.user());
    let env = profile.env(config.settings().agent.permissions, &home_inside);
    Ok((profile, argv, folder, env))
}

/// Writes the prompt layers for a run of the agent with `req`, and warns about what will
/// fail.
pub fn prepare(
    report: &mut dyn crate::report::Report,
    ws: &Workspace,
    rec: &LoopRecord,
    config: &crate::config::Config,
    req: &crate::sandbox::Request,
    profile: Profile,
) -> Result<()> {
    let spec = crate::sandbox::spec_for(ws, rec, config, req, Vec::new())?;
    for warning in write_layers(ws, rec, &spec, profile, config.settings())? {
        report.warn(&warning)?;
    }
    if !spec.env.contains_key("GIT_AUTHOR_EMAIL") {
        report.problem(
            "",
            &AgentError::NoIdentity {
                consequence: "the agent's commits will fail",
            }
            .into(),
        )?;
    }
    Ok(())
}

use crate::config::schema::{AgentPermissions, CommitIdentity};

/// A known agent must be logged in before it starts with `vault` in loop `id` (`None`:
/// the loop is not made yet): the vault holds a variable it logs in with, or the agent
/// keeps a login of its own in the loop (Claude Code's `.credentials.json` in its config
/// folder, Codex's `auth.json` in its `CODEX_HOME`). Otherwise the agent would open on its
/// own login screen, which is not how a loop logs in.
pub fn check_login(ws: &Workspace, vault: &str, id: Option<&str>, profile: Profile) -> Result<()> {
    let wanted = profile.login_variables();
    if wanted.is_empty() {
        return Ok(());
    }
    let (vars, _) = crate::vault::entry_names(ws, vault);
    if wanted.iter().any(|w| vars.iter().any(|v| v == w)) {
        return Ok(());
    }
    let own = id.and_then(|id| match profile {
        Profile::Claude => Some((ws.loop_claude_dir(id), PathBuf::from(".credentials.json"))),
        Profile::Codex => Some((ws.loop_home_upper(id), ready::codex_auth_path())),
        Profile::Plain => None,
    });
    // Read as data, bounded: the folders are the agent's.
    let has_own = own.is_some_and(|(dir, rel)| {
        crate::confined::Tree::open(&dir)
            .ok()
            .flatten()
            .and_then(|tree| tree.read(&rel, 1 << 20).ok().flatten())
            .is_some_and(|login| !login.iter().all(u8::is_ascii_whitespace))
    });
    if has_own {
        return Ok(());
    }
    Err(AgentError::NotLoggedIn {
        agent: profile.name(),
        vault: vault.to_string(),
        variables: wanted.join(" or "),
        id: id.map(str::to_string),
    }
    .into())
}

/// The vault entry `key` is stored as for `profile` (the variable its shape calls for),
/// checked as a value of that entry: before anything is written.
pub fn login_entry(profile: Profile, key: &str) -> Result<crate::vault::EntryRef> {
    let variable = profile
        .login_variable_for(key)
        .expect("a known agent has a login variable");
    let entry = crate::vault::EntryRef::env(variable)?;
    crate::vault::Vault::check_value(&entry, key.as_bytes())?;
    Ok(entry)
}

/// Stores `key` as `entry` ([`login_entry`]) in the vault `v`, bound to `hosts`, and removes
/// the agent's other login variables (one login per vault; two would compete). Returns the
/// labels of the entries it removed.
pub fn store_login(
    ws: &Workspace,
    v: &crate::vault::Vault,
    profile: Profile,
    entry: &crate::vault::EntryRef,
    key: &str,
    hosts: &crate::vault::binding::Hosts,
) -> Result<Vec<String>> {
    let _lock = fsutil::Lock::acquire(&ws.vault_lock(v.name()))?;
    v.write_bound(entry, key.as_bytes(), hosts)?;
    let mut replaced = Vec::new();
    for other in profile.login_variables() {
        if *other == entry.name {
            continue;
        }
        if let Ok(other) = crate::vault::EntryRef::env(other) {
            if v.find(&other)?.is_some() {
                v.remove(&other)?;
                replaced.push(other.label());
            }
        }
    }
    Ok(replaced)
}
