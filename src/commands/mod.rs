//! One file per command: its clap `Args` and one `run`. Only glue lives here; the work is
//! done by the domain modules.

pub mod agent;
pub mod autocommit;
pub mod completions;
pub mod config;
pub mod cron;
pub mod demo;
pub mod distill;
pub mod doctor;
pub mod gc;
pub mod grant;
pub mod hook;
pub mod hooks;
pub mod init;
pub mod list;
pub mod log;
pub mod merge;
pub mod new;
pub mod pr;
pub mod publish;
pub mod relay;
pub mod review;
pub mod rm;
pub mod run;
pub mod shell;
pub mod show;
pub mod vault;

use crate::config::{Config, Layer};
use crate::error::Result;
use crate::loops::LoopRecord;
use crate::ui::Ui;
use crate::workspace::{HostPaths, Workspace};

/// The workspace named by the environment, created on first use.
pub fn workspace() -> Result<Workspace> {
    let ws = Workspace::from_env()?;
    crate::init::ensure(&ws)?;
    Ok(ws)
}

/// Finishes what killed commands left and whose owner is provably gone: removals of a
/// killed `rm`, the staging folder and branches of a killed `new`, temp files of a killed
/// journal write. Says what it did; returns the ids of the loops whose removal it finished.
pub fn finish_interrupted(ui: &mut Ui, ws: &Workspace) -> Result<Vec<String>> {
    let mut finished = Vec::new();
    for removed in crate::removal::finish(ws)? {
        ui.status(format!(
            "finished removing loop {} (an interrupted `git loop rm`)",
            removed.id
        ))?;
        for line in removed.branches {
            ui.status(line)?;
        }
        finished.push(removed.id);
    }
    for rolled in crate::create::roll_back_interrupted(ws)? {
        if !rolled.removed.is_empty() {
            ui.status(format!(
                "rolled back an interrupted `git loop new` of {}: {}",
                rolled.id,
                rolled.removed.join(", ")
            ))?;
        }
    }
    crate::fsutil::sweep_dead_temp_files(&ws.locks_dir());
    Ok(finished)
}

/// The config stack for this workspace (and loop, when one is named). Keys a layer may
/// not set are reported once as warnings.
pub fn load_config(ui: &mut Ui, ws: &Workspace, rec: Option<&LoopRecord>) -> Result<Config> {
    let host = HostPaths::from_env()?;
    let files = vec![
        (Layer::Operator, host.operator_config),
        (Layer::Team, ws.team_config()),
        (Layer::Personal, ws.personal_config()),
    ];
    let loop_layer = rec.map(|r| (ws.loop_record(&r.id), r.config.clone()));
    let config = Config::load(&files, loop_layer)?;
    for (layer, path, key) in &config.ignored {
        ui.warn(format!(
            "{key} in the {layer} config ({}) is ignored: only the operator config may set it",
            path.display()
        ))?;
    }
    Ok(config)
}

/// The secret guard's allowlist of false positives: the built-in placeholders and the
/// operator config's `guard.allow` (only the operator layer may set it).
pub fn guard_allowlist(config: &Config) -> crate::guard::Allowlist {
    let extra = config
        .get("guard.allow")
        .filter(|e| matches!(e.layer, Layer::Operator))
        .and_then(|e| e.value.as_array())
        .map(|values| {
            values
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    crate::guard::Allowlist::with(extra)
}

/// [`guard_allowlist`] where there is no workspace to read (a hook in any repository):
/// from the operator config alone.
pub fn operator_guard_allowlist() -> Result<crate::guard::Allowlist> {
    let host = HostPaths::from_env()?;
    let config = Config::load(&[(Layer::Operator, host.operator_config)], None)?;
    Ok(guard_allowlist(&config))
}

/// Warns about each `--accept-policy PATH` that names nothing the branches carry (a typo,
/// or a change that is no longer there).
pub fn warn_unused_acceptance(
    ui: &mut Ui,
    reports: &[(&str, &crate::gate::Report)],
    accepted: &[String],
) -> Result<()> {
    for a in accepted {
        let used = reports.iter().any(|(_, r)| {
            r.items.iter().any(|i| {
                i.concern.gate() == crate::gate::Gate::NeedsAcceptance
                    && crate::gate::covers(a, &i.path)
            })
        });
        if !used {
            ui.warn(format!(
                "--accept-policy {a}: the branch carries no change to policy there"
            ))?;
        }
    }
    Ok(())
}

/// Prints JSON on stdout, pretty and newline-terminated.
pub fn print_json(ui: &mut Ui, value: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| crate::Error::failure("cannot write JSON").with_source(e))?;
    writeln!(ui.out(), "{text}")?;
    Ok(())
}

/// The sandbox options `run`, `shell` and `agent` share.
#[derive(Debug, Default, clap::Args)]
pub struct SandboxFlags {
    /// work: the loop's folders are writable; review: everything read-only but $HOME and /tmp.
    #[arg(long, value_enum)]
    pub mode: Option<crate::sandbox::spec::RunMode>,
    /// proxy: only the allowed domains, through git-loop's proxy (the default); host: the
    /// host's network; none: loopback only.
    #[arg(long, value_enum)]
    pub net: Option<crate::sandbox::spec::NetMode>,
    /// Let the proxy also reach this domain for this run (repeatable): a host name,
    /// *.example.com (its subdomains) or name.*.example.com (one label).
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    pub allow_domain: Vec<String>,
    /// auto: bwrap if the probe passes, else refuse; none: no sandbox at all.
    #[arg(long, value_enum)]
    pub backend: Option<crate::sandbox::Backend>,
}

impl SandboxFlags {
    /// The sandbox request for `command` with these options.
    pub fn request(
        self,
        command: Vec<String>,
        interactive: bool,
        print_argv: bool,
    ) -> crate::sandbox::Request {
        crate::sandbox::Request {
            mode: self.mode,
            net: self.net,
            backend: self.backend,
            print_argv,
            command,
            interactive,
            ro_same_path: Vec::new(),
            allow_domains: self.allow_domain,
        }
    }
}
