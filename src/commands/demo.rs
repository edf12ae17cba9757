use std::fs;
use std::path::{Path, PathBuf};

use crate::create::{self, NewLoop};
use crate::error::{Context, Error, Result};
use crate::git::cmd::Git;
use crate::sandbox::{self, Request};
use crate::ui::{Ui, BOLD, RESET};
use crate::workspace::Workspace;

const AGENT_SCRIPT: &str = include_str!("../../templates/demo-agent.sh");

/// Show git loop end to end in a throwaway workspace: a sample repository, a loop, and a
/// scripted agent in the real sandbox that works, commits, takes notes, and tries three
/// forbidden things.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Where to build the throwaway workspace (default: a new folder under /tmp).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn run(ui: &mut Ui, args: DemoArgs) -> Result<u8> {
    let root = match args.dir {
        Some(d) => d,
        None => std::env::temp_dir().join(format!(
            "git-loop-demo-{:06x}",
            rand::random::<u32>() & 0xffffff
        )),
    };
    fs::create_dir_all(&root).context(|| format!("cannot create {}", root.display()))?;
    let root = fs::canonicalize(&root).context(|| format!("cannot resolve {}", root.display()))?;
    let ws = Workspace::at(root.join("workspace"), crate::workspace::current_user()?);
    let sample = root.join("sample");
    step(ui, &format!("a throwaway workspace in {}", root.display()))?;
    crate::init::init(&ws, &Default::default())?;
    make_sample(&sample)?;

    step(
        ui,
        "git loop new \"add a greeting\"   (in the sample repository)",
    )?;
    let created = create::create(
        &ws,
        &NewLoop {
            title: Some("add a greeting".into()),
            repo: Some(sample.clone()),
            network: crate::sandbox::spec::NetMode::None,
            ..Default::default()
        },
    )?;
    let rec = created.record;
    writeln!(ui.out(), "loop {} on branch {}", rec.id, rec.branch)?;

    step(ui, &format!("git loop run {} -- <scripted agent>", rec.id))?;
    let host_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let repo = rec.repo.clone().unwrap_or_default();
    // The demo's own workspace, with the built-in configuration alone.
    let mut config = crate::config::Config::defaults();
    config.load_profile(&ws, &rec.sandbox)?;
    ui.out().flush()?;
    let code = sandbox::run(
        ui,
        &ws,
        &rec,
        &config,
        &Request {
            mode: None,
            net: None,
            backend: None,
            print_argv: false,
            command: vec![
                "sh".into(),
                "-c".into(),
                AGENT_SCRIPT.into(),
                "demo-agent".into(),
                host_home,
                repo,
            ],
            interactive: false,
            ro_same_path: Vec::new(),
            allow_domains: Vec::new(),
            agent_env: Vec::new(),
        },
    )?;

    step(ui, "what came back: branches in the origins, for review")?;
    let range = format!("main..{}", rec.branch);
    let log = Git::in_dir(&sample)
        .args(["log", "--oneline", &range])
        .read()?;
    let stat = Git::in_dir(&sample)
        .args(["diff", "--stat", &format!("main...{}", rec.branch)])
        .read()?;
    writeln!(ui.out(), "code ({}):\n{log}{stat}", sample.display())?;
    let notes = ws.notes();
    let log = Git::in_dir(&notes)
        .args(["log", "--oneline", &range])
        .read()?;
    let stat = Git::in_dir(&notes)
        .args(["diff", "--stat", &format!("main...{}", rec.branch)])
        .read()?;
    writeln!(ui.out(), "notes ({}):\n{log}{stat}", notes.display())?;
    let trunk = Git::in_dir(&sample)
        .args(["log", "--oneline", "-1", "main"])
        .read()?;
    writeln!(ui.out(), "main is untouched: {}", trunk.trim())?;
    writeln!(
        ui.out(),
        "\nexplore it: GIT_LOOP_HOME={} git loop show {} --mounts",
        ws.root().display(),
        rec.id
    )?;
    if code != 0 {
        return Err(Error::failure(format!("the scripted agent exited with {code}"))
            .hint("a forbidden action was not refused, or the sandbox could not run the script; see above"));
    }
    Ok(0)
}

fn step(ui: &mut Ui, what: &str) -> Result<()> {
    writeln!(ui.out(), "\n{BOLD}== {what}{RESET}")?;
    Ok(())
}

fn make_sample(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).context(|| format!("cannot create {}", dir.display()))?;
    Git::bare()
        .args(["init", "--quiet", "--initial-branch", "main"])
        .arg(dir)
        .run()?;
    fs::write(
        dir.join("README.md"),
        "# sample\n\nA repository for the git loop demo.\n",
    )
    .context(|| "cannot write the sample repository")?;
    Git::in_dir(dir).args(["add", "README.md"]).run()?;
    crate::init::scaffold_identity(Git::in_dir(dir))
        .args(["commit", "--quiet", "-m", "Start the sample"])
        .run()?;
    Ok(())
}
