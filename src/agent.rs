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

/// L1: sandbox boundaries, paths, memory model, publish workflow.
pub const DOCTRINE: &str = include_str!("../templates/CLAUDE.md");

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
        ("mode", spec.mode.as_str()),
        ("network", spec.net.as_str()),
        ("working folder", &spec.cwd.display().to_string()),
    ] {
        out.push_str(&format!("- {k}: {v}\n"));
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

/// Writes the layers for loop `rec` into its `.claude/`; returns warnings about team
/// files that were left out.
pub fn write_layers(ws: &Workspace, rec: &LoopRecord, spec: &SandboxSpec) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    let dir = ws.loop_claude_dir(&rec.id);
    fs::create_dir_all(&dir)
        .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))?;
    let team = team_file(ws, "CLAUDE.md", &mut warnings);
    fsutil::write_atomic(
        &dir.join("CLAUDE.md"),
        compose(rec, spec, team.as_deref()).as_bytes(),
    )?;

    // settings.json belongs to the agent too: set our keys, keep the rest.
    let settings_path = dir.join("settings.json");
    let mut settings = read_json(&settings_path);
    settings["autoMemoryEnabled"] = json!(true);
    settings["autoMemoryDirectory"] = json!("/loopat/context/personal/memory");
    write_json(&settings_path, &settings)?;

    if let Some(team_mcp) = team_file(ws, "claude.json", &mut warnings)
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    {
        if let Some(servers) = team_mcp.get("mcpServers") {
            let path = dir.join(".claude.json");
            let mut state = read_json(&path);
            state["mcpServers"] = servers.clone();
            write_json(&path, &state)?;
        }
    }
    Ok(warnings)
}

/// The agent writes `.claude/` too: read only a regular file there, never through a
/// link it planted (which could pull a host file into the sandbox on the next write).
fn read_json(path: &Path) -> Value {
    fsutil::read_regular(path)
        .ok()
        .flatten()
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
pub fn locate(program: &str) -> Result<(PathBuf, Option<PathBuf>)> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = if program.contains('/') {
        Some(PathBuf::from(program)).filter(|p| p.is_file())
    } else {
        crate::sandbox::probe::which(program, &path)
    };
    let Some(found) = found else {
        return Err(Error::failure(format!(
            "the agent command '{program}' is not installed (not on PATH)"
        ))
        .hint("install it (Claude Code: npm install -g @anthropic-ai/claude-code)")
        .hint("or choose another agent: git loop config set agent.command '[\"codex\"]'"));
    };
    let real = fs::canonicalize(&found).unwrap_or(found);
    let folder = real.parent().map(Path::to_path_buf);
    let system = [
        "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/opt/", "/etc/",
    ];
    let folder = folder.filter(|f| !system.iter().any(|s| f.starts_with(s)));
    Ok((real, folder))
}
