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
use std::io::{Read, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

use crate::create::{self, NewLoop};
use crate::error::{Context, Error, Result};
use crate::git::cmd::Git;
use crate::sandbox::{self, Request};
use crate::ui::{Ui, BOLD, RESET};
use crate::workspace::Workspace;

const AGENT_SCRIPT: &str = include_str!("../../templates/demo-agent.sh");

/// The allowed name of the demo's server, pinned to loopback.
const SERVER_NAME: &str = "greetings.demo.test";

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

/// Removes the demo's folder when dropped, whatever happened, unless it is to be kept.
struct Cleanup {
    root: PathBuf,
    keep: bool,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

pub fn run(ui: &mut Ui, args: DemoArgs) -> Result<u8> {
    // The demo is the sandbox: without one, say so before anything is made.
    let findings = sandbox::probe::quick(&sandbox::probe::Inputs::read());
    sandbox::select_backend(sandbox::Backend::Auto, &findings).map_err(|mut e| {
        e.hints.retain(|h| !h.contains("--backend none"));
        e.hint("`git loop doctor` checks everything and says how to fix it; then run git loop demo again")
    })?;
    let root = match &args.dir {
        Some(d) => {
            let empty = match fs::read_dir(d) {
                Ok(mut entries) => entries.next().is_none(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                Err(e) => {
                    return Err(Error::failure(format!("cannot read {}", d.display()))
                        .with_source(e)
                        .hint("give a new folder: git loop demo --dir DIR"))
                }
            };
            if !empty {
                return Err(Error::usage(format!(
                    "{} is not empty, and the demo removes its folder at the end",
                    d.display()
                ))
                .hint("give a new or empty folder: git loop demo --dir DIR"));
            }
            d.clone()
        }
        None => std::env::temp_dir().join(format!(
            "git-loop-demo-{:06x}",
            rand::random::<u32>() & 0xffffff
        )),
    };
    fs::create_dir_all(&root).map_err(|e| {
        Error::failure(format!("cannot create {}", root.display()))
            .with_source(e)
            .hint("give a folder you can write to: git loop demo --dir DIR")
    })?;
    let root = fs::canonicalize(&root).context(|| format!("cannot resolve {}", root.display()))?;
    let mut cleanup = Cleanup {
        root: root.clone(),
        keep: args.keep,
    };
    let ws = Workspace::at(root.join("workspace"), crate::workspace::current_user()?);
    let sample = root.join("sample");
    step(ui, &format!("a throwaway folder: {}", root.display()))?;
    crate::init::init(&ws, &Default::default())?;
    make_sample(&sample)?;
    // What the agent will try to read: a secret on the host, outside every loop.
    let secret = root.join("host-home/.ssh/id_ed25519");
    fs::create_dir_all(secret.parent().expect("a folder"))
        .context(|| format!("cannot create {}", secret.display()))?;
    fs::write(&secret, "a host secret the demo planted\n")
        .context(|| format!("cannot write {}", secret.display()))?;
    writeln!(
        ui.out(),
        "a sample repository in sample/, a workspace in workspace/, and a host secret in host-home/.ssh/"
    )?;

    step(ui, "git loop new \"add a greeting\"   (in sample/)")?;
    let config = demo_config(&root)?;
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

    let served = root.join("served");
    make_upstream(&root.join("upstream"), &served.join("greetings.git"))?;
    let port = serve(served)?;
    let url = format!("http://{SERVER_NAME}:{port}/greetings.git");
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
    // The script, bound read-only at the same path: `git loop log` then shows a short
    // command line.
    let agent_dir = root.join("agent");
    let script = agent_dir.join("demo-agent.sh");
    fs::create_dir_all(&agent_dir).context(|| format!("cannot create {}", agent_dir.display()))?;
    fs::write(&script, AGENT_SCRIPT).context(|| format!("cannot write {}", script.display()))?;
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
                script.display().to_string(),
                url,
                secret.display().to_string(),
                rec.repo.clone().unwrap_or_default(),
            ],
            interactive: false,
            ro_same_path: vec![agent_dir],
            allow_domains: Vec::new(),
            agent_env: Vec::new(),
        },
    )?;
    if code != 0 {
        return Err(
            Error::failure(format!("the scripted agent exited with {code}")).hint(
                "a step above failed or a forbidden action was not refused; `git loop doctor` checks the sandbox, and `git loop demo --keep` keeps what the demo made",
            ),
        );
    }

    let cli = |ui: &mut Ui, args: &[&str]| -> Result<()> {
        step(ui, &format!("git loop {}", args.join(" ")))?;
        git_loop(ui, &root, &ws, args)
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

/// The configuration of the demo's run: the built-in defaults and an operator layer,
/// made here, that allows the server's name and pins it to loopback.
fn demo_config(root: &Path) -> Result<crate::config::Config> {
    let text = format!(
        "[network]\nallow_domains = [\"{SERVER_NAME}\"]\nallow_cidrs = [\"127.0.0.1/32\"]\n\n\
         [network.hosts]\n\"{SERVER_NAME}\" = \"127.0.0.1\"\n"
    );
    Ok(crate::config::Config::with_operator_text(
        &root.join("(the demo's operator config)"),
        &text,
    )?)
}

/// `git loop ARGS` on the demo's workspace, as the user would type it, its output
/// inline. No pager, and the configuration is the built-in one (the operator config is a
/// file that does not exist), like the run's.
fn git_loop(ui: &mut Ui, root: &Path, ws: &Workspace, args: &[&str]) -> Result<()> {
    ui.out().flush()?;
    let exe = std::env::current_exe().context(|| "cannot find the git-loop binary")?;
    let status = std::process::Command::new(&exe)
        .args(args)
        .env("GIT_LOOP_HOME", ws.root())
        .env("GIT_LOOP_CONFIG", root.join("no-operator-config.toml"))
        .env("GIT_PAGER", "cat")
        .current_dir(root)
        .status()
        .context(|| format!("cannot run {}", exe.display()))?;
    if !status.success() {
        return Err(Error::failure(format!(
            "git loop {} failed in the demo ({status})",
            args.join(" ")
        ))
        .hint("its message is above; `git loop doctor` checks the machine"));
    }
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

/// The repository the server offers: one file, the greeting, in a bare clone prepared for
/// git's plain ("dumb") HTTP protocol.
fn make_upstream(work: &Path, bare: &Path) -> Result<()> {
    fs::create_dir_all(work).context(|| format!("cannot create {}", work.display()))?;
    Git::bare()
        .args(["init", "--quiet", "--initial-branch", "main"])
        .arg(work)
        .run()?;
    fs::write(work.join("greeting.txt"), "hello from a loop\n")
        .context(|| format!("cannot write {}", work.display()))?;
    Git::in_dir(work).args(["add", "greeting.txt"]).run()?;
    crate::init::scaffold_identity(Git::in_dir(work))
        .args(["commit", "--quiet", "-m", "The greeting"])
        .run()?;
    Git::bare()
        .args(["clone", "--quiet", "--bare"])
        .arg(work)
        .arg(bare)
        .run()?;
    Git::in_dir(bare).args(["update-server-info"]).run()?;
    Ok(())
}

/// Serves the files under `root` over HTTP on 127.0.0.1 (a free port, returned) for the
/// rest of the process. git's dumb protocol is GETs of files, which a few lines of std
/// answer; a web server crate would be a dependency for the demo alone.
fn serve(root: PathBuf) -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .context(|| "cannot start the demo's server on loopback")?;
    let port = listener
        .local_addr()
        .context(|| "cannot start the demo's server on loopback")?
        .port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = answer(&root, stream);
        }
    });
    Ok(port)
}

fn answer(root: &Path, mut stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    // The origin form (`/a/b?q`), or the absolute form a proxy may pass on.
    let path = target.split('?').next().unwrap_or("");
    let path = match path.strip_prefix("http://") {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => path,
    };
    let rel = path.trim_start_matches('/');
    let safe = !rel.is_empty()
        && rel
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..");
    let body = (method == "GET" && safe)
        .then(|| fs::read(root.join(rel)).ok())
        .flatten();
    match body {
        Some(body) => {
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            stream.write_all(&body)?;
        }
        None => stream.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?,
    }
    stream.flush()
}
