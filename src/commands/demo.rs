//! `git loop demo`: what people come for, in a few seconds, in a throwaway folder. A loop
//! in the default network mode (proxy) whose scripted agent fetches from a server the demo
//! starts on loopback under an allowed name, is refused a domain (and the refusal is in
//! `git loop log`), is refused a host secret the demo planted, commits; then `review` and
//! `merge`, and everything the demo made is removed unless `--keep`.
//!
//! The name is pinned to 127.0.0.1 the way the operator config's `[network.hosts]` does,
//! but in a configuration the demo builds in memory: the user's own operator config is
//! neither read for the run nor written. `log`, `review` and `merge` are run as the user
//! would type them (this same binary, on the demo's workspace), so what the demo shows is
//! exactly what those commands print.

use std::fs;
use std::path::PathBuf;

use crate::create::{self, NewLoop};
use crate::demo::{self, Cleanup, SERVER_NAME};
use crate::error::{Error, Result};
use crate::git::cmd::Git;
use crate::sandbox;
use crate::ui::{Ui, BOLD, RESET};
use crate::workspace::Workspace;

/// Show git loop end to end in a throwaway folder, in a few seconds.
///
/// A sample repository, a loop in the default network mode (proxy), and a scripted agent
/// in the real sandbox: it fetches from a server the demo starts on loopback under an
/// allowed name, commits, takes a note, and is refused a domain that is not allowed, a
/// host secret the demo planted, and the origin's trunk. Then `git loop log`, `review` and
/// `merge`. Everything the demo made is removed at the end unless --keep. Your own
/// workspace and configuration are not touched.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Build everything in this folder, which must be new or empty (default: a new folder
    /// under $TMPDIR, else /tmp).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Keep the folder at the end, to explore the workspace and the loop.
    #[arg(long)]
    pub keep: bool,
}

pub fn run(ui: &mut Ui, args: DemoArgs) -> Result<u8> {
    // The demo is the sandbox: without one, say so before anything is made.
    let findings = sandbox::probe::quick(&sandbox::probe::Inputs::read());
    sandbox::select_backend(crate::values::Backend::Auto, &findings).map_err(|mut e| {
        e.hints.retain(|h| !h.contains("--backend none"));
        e.hint("`git loop doctor` checks everything and says how to fix it; then run git loop demo again")
    })?;
    let root = demo::folder(args.dir.as_deref())?;
    let mut cleanup = Cleanup {
        root: root.clone(),
        keep: args.keep,
    };
    let ws = Workspace::at(root.join("workspace"), crate::workspace::current_user()?);
    let sample = root.join("sample");
    step(ui, &format!("a throwaway folder: {}", root.display()))?;
    crate::init::init(&ws, &Default::default())?;
    demo::make_sample(&sample)?;
    let secret = demo::plant_secret(&root)?;
    writeln!(
        ui.out(),
        "a sample repository in sample/, a workspace in workspace/, and a host secret in host-home/.ssh/"
    )?;

    step(ui, "git loop new \"add a greeting\"   (in sample/)")?;
    let config = demo::config(&root)?;
    let created = create::create(
        &ws,
        &NewLoop {
            title: Some("add a greeting".into()),
            repo: Some(sample.clone()),
            ..NewLoop::with_settings(config.settings())
        },
    )?;
    let rec = created.record;
    writeln!(
        ui.out(),
        "{}: branch {} in sample/, network {}",
        rec.id,
        rec.branch,
        rec.network
    )?;

    let (url, port) = demo::start_server(&root)?;
    step(
        ui,
        &format!("a server on loopback: {SERVER_NAME}:{port}, an allowed name"),
    )?;
    writeln!(
        ui.out(),
        "pinned to 127.0.0.1 as [network.hosts] in the operator config would, in a config the demo keeps in memory"
    )?;

    step(ui, &format!("git loop run {} -- <scripted agent>", rec.id))?;
    let mut config = config;
    config.load_profile(&ws, &rec.sandbox)?;
    let request = demo::agent_request(&root, url, &secret, rec.repo.clone().unwrap_or_default())?;
    ui.out().flush()?;
    let code = sandbox::run(ui, &ws, &rec, &config, &request)?;
    if code != 0 {
        return Err(
            Error::failure(format!("the scripted agent exited with {code}")).hint(
                "a step above failed or a forbidden action was not refused; `git loop doctor` checks the sandbox, and `git loop demo --keep` keeps what the demo made",
            ),
        );
    }

    let cli = |ui: &mut Ui, args: &[&str]| -> Result<()> {
        step(ui, &format!("git loop {}", args.join(" ")))?;
        ui.out().flush()?;
        demo::git_loop(&root, ws.root(), args)
    };
    cli(ui, &["log", &rec.id])?;
    cli(ui, &["review", &rec.id])?;
    cli(ui, &["merge", &rec.id])?;
    let trunk = Git::in_dir(&sample)
        .args(["log", "--oneline", "-2", "main"])
        .read()?;
    writeln!(ui.out(), "main of sample/ now:\n{}", trunk.trim_end())?;

    if args.keep {
        step(ui, &format!("kept {}", root.display()))?;
        writeln!(
            ui.out(),
            "explore it: GIT_LOOP_HOME={} git loop show {} --mounts",
            ws.root().display(),
            rec.id
        )?;
    } else {
        step(ui, &format!("removing {}", root.display()))?;
        // Removed here rather than by `cleanup`, so a failure is said.
        cleanup.keep = true;
        fs::remove_dir_all(&root).map_err(|e| {
            Error::failure(format!(
                "cannot remove the demo's folder {}",
                root.display()
            ))
            .with_source(e)
            .hint(format!("remove it by hand: rm -rf {}", root.display()))
        })?;
        writeln!(
            ui.out(),
            "(git loop demo --keep keeps it to explore; git loop new in a repository of yours starts for real)"
        )?;
    }
    Ok(0)
}

fn step(ui: &mut Ui, what: &str) -> Result<()> {
    writeln!(ui.out(), "\n{BOLD}== {what}{RESET}")?;
    Ok(())
}
