//! `git loop doctor`'s checks: each looks at one part of the workspace or the host and
//! says what it found, as [`Finding`]s; with `fix`, it applies the fixes that lose nothing.
//! The checks run in the order of [`CHECKS`]; the command prints what they found.

mod host;
mod leftovers;
mod locks;
mod network;
mod repos;
mod vaults;

use serde::Serialize;

use crate::config::Config;
use crate::error::Result;
use crate::workspace::Workspace;

#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Info,
    Problem,
    Fixed,
}

#[derive(Debug, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub level: Level,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

pub(crate) fn finding(
    check: &'static str,
    level: Level,
    message: String,
    fix: Option<String>,
) -> Finding {
    Finding {
        check,
        level,
        message,
        fix,
    }
}

/// What a check is given.
struct Context<'a> {
    ws: &'a Workspace,
    /// Apply the fixes (asked for, and the workspace's file system takes writes).
    fix: bool,
    /// The configuration as the user's commands read it (none without a workspace).
    config: Option<&'a Config>,
}

/// When a check runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Always, workspace or not.
    Nothing,
    /// In an initialised workspace.
    Workspace,
    /// In an initialised workspace whose file system takes writes: what it repairs must
    /// be writable, and a read-only workspace is said once, by the storage check.
    Writable,
}

struct Check {
    needs: Needs,
    run: fn(&Context, &mut Vec<Finding>) -> Result<()>,
}

/// The checks, in the order they run and print.
const CHECKS: &[Check] = &[
    Check {
        needs: Needs::Workspace,
        run: |c, out| {
            repos::check_repos(c.ws, c.fix, out);
            Ok(())
        },
    },
    Check {
        needs: Needs::Workspace,
        run: |c, out| repos::check_loops(c.ws, out),
    },
    Check {
        needs: Needs::Writable,
        run: |c, out| leftovers::check_leftovers(c.ws, c.fix, out),
    },
    // Interrupted checkout updates before the lock files: their markers are theirs.
    Check {
        needs: Needs::Writable,
        run: |c, out| {
            leftovers::check_interrupted(c.ws, c.fix, out);
            Ok(())
        },
    },
    Check {
        needs: Needs::Writable,
        run: |c, out| {
            locks::check_locks(c.ws, c.fix, out);
            Ok(())
        },
    },
    Check {
        needs: Needs::Writable,
        run: |c, out| {
            locks::check_loop_locks(c.ws, c.fix, out);
            locks::check_orphan_lock_files(c.ws, c.fix, out);
            Ok(())
        },
    },
    Check {
        needs: Needs::Writable,
        run: |c, out| {
            vaults::check_vaults(c.ws, c.fix, out);
            Ok(())
        },
    },
    Check {
        needs: Needs::Nothing,
        run: |_, out| {
            host::check_sandbox(out);
            Ok(())
        },
    },
    Check {
        needs: Needs::Workspace,
        run: |c, out| match c.config {
            Some(config) => host::check_agent(c.ws, config, out),
            None => Ok(()),
        },
    },
    Check {
        needs: Needs::Workspace,
        run: |c, out| match c.config {
            Some(config) => host::check_toolchains(c.ws, config, out),
            None => Ok(()),
        },
    },
    Check {
        needs: Needs::Workspace,
        run: |c, out| match c.config {
            Some(config) => network::check_network(c.ws, config, out),
            None => Ok(()),
        },
    },
    // Advice about the person's own git, after what the workspace needs.
    Check {
        needs: Needs::Nothing,
        run: |_, out| {
            host::check_git(out);
            Ok(())
        },
    },
];

/// Runs every check that applies to `ws`; `config` is the configuration as the user's
/// commands read it (required when the workspace is initialised).
pub fn examine(ws: &Workspace, fix: bool, config: Option<&Config>) -> Result<Vec<Finding>> {
    let mut findings = Vec::new();
    let initialized = ws.is_initialized();
    let writable = if initialized {
        findings.push(finding(
            "workspace",
            Level::Ok,
            format!("workspace at {}", ws.root().display()),
            None,
        ));
        repos::check_storage(ws, &mut findings)
    } else {
        findings.push(finding(
            "workspace",
            Level::Problem,
            format!("no workspace at {}", ws.root().display()),
            Some("git loop init".into()),
        ));
        false
    };
    let context = Context {
        ws,
        fix: fix && writable,
        config,
    };
    for check in CHECKS {
        let applies = match check.needs {
            Needs::Nothing => true,
            Needs::Workspace => initialized,
            Needs::Writable => initialized && writable,
        };
        if applies {
            (check.run)(&context, &mut findings)?;
        }
    }
    Ok(findings)
}
