//! A known agent starts ready: before each run git loop writes the state the agent keeps
//! about keys, folder trust and first-run onboarding, so that nothing is asked inside the
//! sandbox but what the agent asks about its own tools (`agent.permissions = "ask"`).
//!
//! What the agents read (Claude Code 2.1, Codex 0.171):
//!
//! - Claude Code keeps its state in `$CLAUDE_CONFIG_DIR/.claude.json` (the loop's
//!   `.claude/`): `hasCompletedOnboarding` (the first-run screens: theme, login);
//!   `projects[FOLDER].hasTrustDialogAccepted`, looked up for its working folder's git root
//!   and every folder above it (the folder-trust dialog); and
//!   `customApiKeyResponses.approved`, the last 20 characters of every API key it was told
//!   to use. Without the last, an `ANTHROPIC_API_KEY` opens on "Do you want to use this API
//!   key?" with "No" selected. A bound key's placeholder is new at every run, so the
//!   approval is written at every run, for this run's key, once the vault is open
//!   ([`approve_claude_key`]).
//! - Codex keeps `$CODEX_HOME/config.toml` (the loop's `$HOME/.codex/`), where
//!   `[projects."FOLDER"] trust_level = "trusted"` answers its folder-trust screen, and its
//!   login in `auth.json`: without one it opens on its sign-in screen, `OPENAI_API_KEY` in
//!   the environment notwithstanding. That file would hold the key itself when the key is
//!   unbound, so it reaches the sandbox as a vault file does, in memory ([`codex_auth`],
//!   added to the run's delivery by `crate::agent::ready_for_run`), never on the host's
//!   disk.
//!
//! The state is merged into what the agent keeps there, never replacing its own keys; the
//! folders are sandbox-writable (DESIGN 4.0), so they are read confined and bounded, and a
//! file that cannot be read as the agent's state is set aside (renamed, kept) with a
//! warning rather than overwritten.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use zeroize::Zeroizing;

use crate::confined::Tree;
use crate::error::{Error, Result};

/// The most of an agent's state file that is read: Claude Code's `.claude.json` grows with
/// every folder it worked in, far below this.
const STATE_LIMIT: u64 = 16 << 20;

/// Approved keys kept in Claude Code's state: this run's and the latest before it (each run
/// of a bound key adds one).
const MAX_APPROVED: usize = 20;

/// How many characters of a key Claude Code keeps to recognise it.
const KEY_TAIL: usize = 20;

/// Claude Code's state file in its config folder.
pub const CLAUDE_STATE: &str = ".claude.json";

/// Claude Code's state made ready (pure): onboarding done, the sandboxed mode's one-time
/// confirmation given when `sandboxed` (the sandbox is what makes it safe), `trusted`
/// folders (paths inside the sandbox) trusted, and `key`, when given, approved; everything
/// else kept.
pub fn claude_state(
    state: &mut Map<String, Value>,
    sandboxed: bool,
    trusted: &[String],
    key: Option<&str>,
) {
    claude_ready(state, sandboxed, trusted);
    if let Some(key) = key {
        approve(state, key);
    }
}

/// [`claude_state`] without a key: what is written before every run of the agent.
fn claude_ready(state: &mut Map<String, Value>, sandboxed: bool, trusted: &[String]) {
    state.insert("hasCompletedOnboarding".into(), json!(true));
    state.insert("bypassPermissionsModeAccepted".into(), json!(sandboxed));
    if !state.get("projects").is_some_and(Value::is_object) {
        state.insert("projects".into(), json!({}));
    }
    let projects = state["projects"]
        .as_object_mut()
        .expect("made an object above");
    for folder in trusted {
        let project = projects.entry(folder.clone()).or_insert_with(|| json!({}));
        if !project.is_object() {
            *project = json!({});
        }
        project["hasTrustDialogAccepted"] = json!(true);
    }
}

/// `key` approved in Claude Code's state: its last 20 characters last in
/// `customApiKeyResponses.approved` (bounded), and no longer rejected.
fn approve(state: &mut Map<String, Value>, key: &str) {
    let tail = key_tail(key);
    let responses = state
        .entry("customApiKeyResponses")
        .or_insert_with(|| json!({}));
    if !responses.is_object() {
        *responses = json!({});
    }
    let keep = |list: Option<&Value>| -> Vec<Value> {
        list.and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter(|v| v.is_string() && v.as_str() != Some(tail))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut approved = keep(responses.get("approved"));
    approved.push(json!(tail));
    let excess = approved.len().saturating_sub(MAX_APPROVED);
    approved.drain(..excess);
    let rejected = keep(responses.get("rejected"));
    responses["approved"] = Value::Array(approved);
    responses["rejected"] = Value::Array(rejected);
}

/// The part of a key Claude Code records: its last 20 characters.
fn key_tail(key: &str) -> &str {
    let start = key
        .char_indices()
        .rev()
        .nth(KEY_TAIL - 1)
        .map_or(0, |(i, _)| i);
    &key[start..]
}

/// Codex's config made ready (pure): its own sandbox off, ours being the boundary; no
/// approvals unless `sandboxed` is false; no update check, analytics, feedback uploads or
/// plugin marketplace; `notify` (the program Codex runs at the end of each turn);
/// `trusted` folders trusted. Its other settings are kept.
pub fn codex_config(
    doc: &mut toml_edit::DocumentMut,
    trusted: &[String],
    sandboxed: bool,
    notify: &[String],
) {
    use toml_edit::{value, Array, Item, Table};
    if doc.as_table().is_empty() {
        doc.decor_mut().set_prefix(if sandboxed {
            "# Written by git loop before every run (its keys; Codex's own are kept): the loop's sandbox is the boundary.\n"
        } else {
            "# Written by git loop before every run (its keys; Codex's own are kept).\n"
        });
    }
    doc["sandbox_mode"] = value("danger-full-access");
    doc["approval_policy"] = value(if sandboxed { "never" } else { "on-request" });
    doc["check_for_update_on_startup"] = value(false);
    doc["notify"] = value(notify.iter().collect::<Array>());
    for (table, key, on) in [
        ("analytics", "enabled", false),
        ("feedback", "enabled", false),
        ("features", "plugins", false),
    ] {
        if !doc.get(table).is_some_and(Item::is_table_like) {
            doc[table] = Item::Table(Table::new());
        }
        doc[table][key] = value(on);
    }
    if !doc.get("projects").is_some_and(Item::is_table_like) {
        let mut projects = Table::new();
        projects.set_implicit(true);
        doc["projects"] = Item::Table(projects);
    }
    for folder in trusted {
        let projects = &mut doc["projects"];
        if !projects
            .get(folder)
            .is_some_and(toml_edit::Item::is_table_like)
        {
            projects[folder] = Item::Table(Table::new());
        }
        projects[folder]["trust_level"] = value("trusted");
    }
}

/// Codex's login for `key`, as `codex login --with-api-key` writes it.
pub fn codex_auth(key: &str) -> Zeroizing<Vec<u8>> {
    let text = Zeroizing::new(json!({"auth_mode": "apikey", "OPENAI_API_KEY": key}).to_string());
    Zeroizing::new(text.as_bytes().to_vec())
}

/// Where Codex's login is, below `$HOME`.
pub fn codex_auth_path() -> PathBuf {
    Path::new(super::CODEX_HOME).join("auth.json")
}

/// Removes the empty `auth.json` that the mount of an earlier run's login left in the loop's
/// `$HOME` (`home`), which Codex would take for a broken login. Anything else there is
/// Codex's own and stays.
pub fn remove_empty_codex_auth(home: &Path) {
    let Ok(Some(tree)) = Tree::open(home) else {
        return;
    };
    let rel = codex_auth_path();
    if matches!(tree.read(&rel, 1), Ok(Some(bytes)) if bytes.is_empty()) {
        let _ = tree.remove_file(&rel);
    }
}

/// The agent's state file `rel` of `tree`, as text, or `None` when there is none. One that
/// cannot be read as the agent's (a link, not a regular file, larger than the bound, not
/// UTF-8, or not what `parse` accepts) is set aside as `NAME.unreadable`, with a warning,
/// and the agent starts from fresh state.
fn read_state<T>(
    tree: &Tree,
    rel: &Path,
    parse: impl Fn(&str) -> Option<T>,
    warnings: &mut Vec<String>,
) -> Option<T> {
    let why = match tree.read_text(rel, STATE_LIMIT) {
        Ok(None) => return None,
        Ok(Some(text)) => match parse(&text) {
            Some(parsed) => return Some(parsed),
            None => "it does not parse".to_string(),
        },
        Err(e) => e.to_string(),
    };
    let name = rel.file_name().unwrap_or_default();
    let mut aside = OsString::from(name);
    aside.push(".unreadable");
    match tree.rename_file(rel, &aside) {
        Ok(()) => warnings.push(format!(
            "{} was set aside as {} ({why}); the agent starts from fresh state",
            tree.path().join(rel).display(),
            aside.to_string_lossy()
        )),
        Err(e) => warnings.push(format!(
            "{} cannot be read ({why}) nor set aside ({e})",
            tree.path().join(rel).display()
        )),
    }
    None
}

fn confined_failure(dir: &Path) -> impl Fn(crate::confined::ConfinedError) -> Error + '_ {
    move |e| {
        Error::failure(format!(
            "cannot write the agent's state in {}",
            dir.display()
        ))
        .with_source(e)
    }
}

/// Claude Code's state in its config folder `dir` made ready ([`claude_state`]), with the
/// team's MCP servers when given.
pub fn write_claude(
    dir: &Path,
    sandboxed: bool,
    trusted: &[String],
    key: Option<&str>,
    mcp_servers: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let fail = confined_failure(dir);
    let tree = Tree::open(dir)
        .map_err(&fail)?
        .ok_or_else(|| Error::failure(format!("{} is missing", dir.display())))?;
    let rel = Path::new(CLAUDE_STATE);
    let mut state = read_state(
        &tree,
        rel,
        |t| serde_json::from_str::<Map<String, Value>>(t).ok(),
        warnings,
    )
    .unwrap_or_default();
    claude_state(&mut state, sandboxed, trusted, key);
    if let Some(servers) = mcp_servers {
        state.insert("mcpServers".into(), servers.clone());
    }
    let text = serde_json::to_string_pretty(&Value::Object(state)).unwrap_or_default();
    tree.write_atomic(rel, format!("{text}\n").as_bytes(), 0o600)
        .map_err(&fail)
}

/// This run's key approved in Claude Code's state in `dir` (the vault is open now, and a
/// bound key's placeholder is this run's); nothing else of it changed. What cannot be read
/// as its state was set aside when the layers were written, so there is nothing to warn
/// about here.
pub fn approve_claude_key(dir: &Path, key: &str) -> Result<()> {
    let fail = confined_failure(dir);
    let Some(tree) = Tree::open(dir).map_err(&fail)? else {
        return Ok(());
    };
    let rel = Path::new(CLAUDE_STATE);
    let mut state = read_state(
        &tree,
        rel,
        |t| serde_json::from_str::<Map<String, Value>>(t).ok(),
        &mut Vec::new(),
    )
    .unwrap_or_default();
    approve(&mut state, key);
    let text = serde_json::to_string_pretty(&Value::Object(state)).unwrap_or_default();
    tree.write_atomic(rel, format!("{text}\n").as_bytes(), 0o600)
        .map_err(&fail)
}

/// Codex's config in `codex_home` (below the loop's `$HOME`) made ready
/// ([`codex_config`]), and its `AGENTS.md`.
pub fn write_codex(
    codex_home: &Tree,
    trusted: &[String],
    sandboxed: bool,
    notify: &[String],
    doctrine: &str,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let fail = confined_failure(codex_home.path());
    let rel = Path::new("config.toml");
    let mut doc = read_state(
        codex_home,
        rel,
        |t| t.parse::<toml_edit::DocumentMut>().ok(),
        warnings,
    )
    .unwrap_or_default();
    codex_config(&mut doc, trusted, sandboxed, notify);
    codex_home
        .write_atomic(rel, doc.to_string().as_bytes(), 0o600)
        .map_err(&fail)?;
    codex_home
        .write_atomic("AGENTS.md", doctrine.as_bytes(), 0o644)
        .map_err(&fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusted() -> Vec<String> {
        vec!["/loopat/loop/x-1/workdir".to_string()]
    }

    fn notify() -> Vec<String> {
        ["sh", "-c", "echo done > /state", "sh"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn claude_state_keeps_the_agents_own_keys_and_adds_trust_onboarding_and_the_key() {
        let mut state: Map<String, Value> = serde_json::from_value(json!({
            "numStartups": 3,
            "theme": "light",
            "projects": {"/loopat/loop/x-1/workdir": {"allowedTools": ["Bash"], "hasTrustDialogAccepted": false},
                         "/elsewhere": {"hasTrustDialogAccepted": false}},
            "customApiKeyResponses": {"approved": ["aaaaaaaaaaaaaaaaaaaa"], "rejected": ["56789012345678901234"]}
        }))
        .unwrap();
        claude_state(
            &mut state,
            true,
            &trusted(),
            Some("sk-ant-api03-abcdefghij-0123456789012345678901234"),
        );
        assert_eq!(
            Value::Object(state),
            json!({
                "numStartups": 3,
                "theme": "light",
                "hasCompletedOnboarding": true,
                "bypassPermissionsModeAccepted": true,
                "projects": {"/loopat/loop/x-1/workdir": {"allowedTools": ["Bash"], "hasTrustDialogAccepted": true},
                             "/elsewhere": {"hasTrustDialogAccepted": false}},
                "customApiKeyResponses": {"approved": ["aaaaaaaaaaaaaaaaaaaa", "56789012345678901234"], "rejected": []}
            })
        );
    }

    #[test]
    fn claude_state_from_nothing_and_from_odd_shapes() {
        let mut state = Map::new();
        claude_state(&mut state, false, &trusted(), None);
        assert_eq!(
            Value::Object(state),
            json!({"hasCompletedOnboarding": true, "bypassPermissionsModeAccepted": false,
                   "projects": {"/loopat/loop/x-1/workdir": {"hasTrustDialogAccepted": true}}})
        );
        let mut state: Map<String, Value> = serde_json::from_value(json!({
            "projects": [1], "customApiKeyResponses": {"approved": "x", "rejected": [1, "k"]}
        }))
        .unwrap();
        claude_state(&mut state, true, &trusted(), Some("short"));
        assert_eq!(
            state["projects"],
            json!({"/loopat/loop/x-1/workdir": {"hasTrustDialogAccepted": true}})
        );
        assert_eq!(
            state["customApiKeyResponses"],
            json!({"approved": ["short"], "rejected": ["k"]})
        );
    }

    #[test]
    fn approved_keys_stay_bounded_with_this_runs_last() {
        let mut state = Map::new();
        for run in 0..50 {
            claude_state(
                &mut state,
                true,
                &[],
                Some(&format!("sk-ant-api03-{run:030}")),
            );
        }
        let approved = state["customApiKeyResponses"]["approved"]
            .as_array()
            .unwrap();
        assert_eq!(approved.len(), MAX_APPROVED);
        assert_eq!(approved.last().unwrap(), &json!(format!("{:020}", 49)));
        // The same key again is not listed twice.
        claude_state(
            &mut state,
            true,
            &[],
            Some(&format!("sk-ant-api03-{:030}", 49)),
        );
        let again = state["customApiKeyResponses"]["approved"]
            .as_array()
            .unwrap();
        assert_eq!(again.len(), MAX_APPROVED);
        assert_eq!(
            again
                .iter()
                .filter(|k| **k == json!(format!("{:020}", 49)))
                .count(),
            1
        );
    }

    #[test]
    fn key_tail_is_the_last_twenty_characters() {
        assert_eq!(
            key_tail("sk-ant-0123456789abcdefghijKLMN"),
            "456789abcdefghijKLMN"
        );
        assert_eq!(key_tail("abc"), "abc");
        assert_eq!(key_tail("ééééééééééééééééééééé"), "éééééééééééééééééééé");
    }

    #[test]
    fn codex_config_merges_into_what_codex_keeps() {
        let mut doc: toml_edit::DocumentMut = "# mine\nmodel = \"o3\"\napproval_policy = \"untrusted\"\n\n[tui]\nscreen_reader_detection_done = true\n\n[projects.\"/other\"]\ntrust_level = \"untrusted\"\n"
            .parse()
            .unwrap();
        codex_config(&mut doc, &trusted(), true, &notify());
        let text = doc.to_string();
        let parsed: toml::Table = text.parse().unwrap();
        assert_eq!(parsed["model"].as_str(), Some("o3"));
        assert_eq!(parsed["approval_policy"].as_str(), Some("never"));
        assert_eq!(parsed["sandbox_mode"].as_str(), Some("danger-full-access"));
        assert_eq!(parsed["check_for_update_on_startup"].as_bool(), Some(false));
        assert_eq!(
            parsed["tui"]["screen_reader_detection_done"].as_bool(),
            Some(true)
        );
        assert_eq!(parsed["analytics"]["enabled"].as_bool(), Some(false));
        assert_eq!(parsed["feedback"]["enabled"].as_bool(), Some(false));
        assert_eq!(parsed["features"]["plugins"].as_bool(), Some(false));
        assert_eq!(
            parsed["projects"]["/other"]["trust_level"].as_str(),
            Some("untrusted")
        );
        assert_eq!(
            parsed["projects"]["/loopat/loop/x-1/workdir"]["trust_level"].as_str(),
            Some("trusted")
        );
        assert!(text.starts_with("# mine\n"), "{text}");
        // Written again, nothing changes.
        let mut again: toml_edit::DocumentMut = text.parse().unwrap();
        codex_config(&mut again, &trusted(), true, &notify());
        assert_eq!(again.to_string(), text);
    }

    #[test]
    fn codex_config_from_nothing_asks_with_permissions_ask() {
        let mut doc = toml_edit::DocumentMut::new();
        codex_config(&mut doc, &trusted(), false, &notify());
        let parsed: toml::Table = doc.to_string().parse().unwrap();
        assert_eq!(parsed["approval_policy"].as_str(), Some("on-request"));
        assert!(doc.to_string().starts_with("# Written by git loop"));
    }

    #[test]
    fn codex_auth_is_what_codex_login_writes() {
        let auth: Value = serde_json::from_slice(&codex_auth("sk-proj-x")).unwrap();
        assert_eq!(
            auth,
            json!({"auth_mode": "apikey", "OPENAI_API_KEY": "sk-proj-x"})
        );
    }

    #[test]
    fn unreadable_state_is_set_aside_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(".claude");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(".claude.json"), "{ not json").unwrap();
        let mut warnings = Vec::new();
        write_claude(&dir, true, &trusted(), Some("k"), None, &mut warnings).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(".claude.json.unreadable")).unwrap(),
            "{ not json"
        );
        assert!(warnings[0].contains("set aside"), "{warnings:?}");
        let state: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(".claude.json")).unwrap())
                .unwrap();
        assert_eq!(state["hasCompletedOnboarding"], true);

        // This run's key approved, and nothing else changed.
        let before = state;
        approve_claude_key(&dir, "sk-ant-api03-0123456789abcdefghijKLMN").unwrap();
        let after: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(".claude.json")).unwrap())
                .unwrap();
        assert_eq!(
            after["customApiKeyResponses"]["approved"],
            json!(["k", "456789abcdefghijKLMN"])
        );
        assert_eq!(after["projects"], before["projects"]);

        // A link planted where the state is: replaced by a file, its target untouched.
        let outside = tmp.path().join("outside.json");
        std::fs::write(&outside, "{\"host\": true}").unwrap();
        std::fs::remove_file(dir.join(".claude.json")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join(".claude.json")).unwrap();
        let mut warnings = Vec::new();
        write_claude(&dir, true, &trusted(), None, None, &mut warnings).unwrap();
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "{\"host\": true}"
        );
        assert!(!dir.join(".claude.json").is_symlink());
        assert!(dir.join(".claude.json.unreadable").is_symlink());
    }
}
