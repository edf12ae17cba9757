//! The pieces of `git loop demo` (the command, in `commands/demo.rs`, says each step):
//! a throwaway folder removed at the end, a sample repository, the host secret the agent
//! must be refused, a server on loopback under an allowed name, the configuration that
//! pins that name, and the scripted agent's command line.

use std::fs;
use std::io::{Read, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

use crate::error::{Context, Result};
use crate::git::cmd::Git;
use crate::sandbox::Request;

const AGENT_SCRIPT: &str = include_str!("../templates/demo-agent.sh");

/// The allowed name of the demo's server, pinned to loopback.
pub const SERVER_NAME: &str = "greetings.demo.test";

/// Removes the demo's folder when dropped, whatever happened, unless it is to be kept.
pub struct Cleanup {
    pub root: PathBuf,
    pub keep: bool,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

/// The demo's folder: `dir` when it is new or empty (the demo removes it at the end), or a
/// new folder under the temporary folder; made, and returned canonical.
/// Why the demo cannot run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("cannot read {}", .0.display())]
    Unreadable(PathBuf, #[source] std::io::Error),
    #[error("{} is not empty, and the demo removes its folder at the end", .0.display())]
    NotEmpty(PathBuf),
    #[error("cannot create {}", .0.display())]
    Uncreatable(PathBuf, #[source] std::io::Error),
    /// A step of the demo (`git loop ARGS`) failed; its message is above.
    #[error("git loop {args} failed in the demo ({status})")]
    Step { args: String, status: String },
}

pub fn folder(dir: Option<&Path>) -> Result<PathBuf> {
    let root = match dir {
        Some(d) => {
            let empty = match fs::read_dir(d) {
                Ok(mut entries) => entries.next().is_none(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                Err(e) => return Err(DemoError::Unreadable(d.to_path_buf(), e).into()),
            };
            if !empty {
                return Err(DemoError::NotEmpty(d.to_path_buf()).into());
            }
            d.to_path_buf()
        }
        None => std::env::temp_dir().join(format!(
            "git-loop-demo-{:06x}",
            rand::random::<u32>() & 0xffffff
        )),
    };
    fs::create_dir_all(&root).map_err(|e| DemoError::Uncreatable(root.clone(), e))?;
    fs::canonicalize(&root).context(|| format!("cannot resolve {}", root.display()))
}

/// What the agent will try to read: a secret on the host, outside every loop. Its path.
pub fn plant_secret(root: &Path) -> Result<PathBuf> {
    let secret = root.join("host-home/.ssh/id_ed25519");
    fs::create_dir_all(secret.parent().expect("a folder"))
        .context(|| format!("cannot create {}", secret.display()))?;
    fs::write(&secret, "a host secret the demo planted\n")
        .context(|| format!("cannot write {}", secret.display()))?;
    Ok(secret)
}

/// The server's repository made and served on loopback: its URL under [`SERVER_NAME`].
pub fn start_server(root: &Path) -> Result<(String, u16)> {
    let served = root.join("served");
    make_upstream(&root.join("upstream"), &served.join("greetings.git"))?;
    let port = serve(served)?;
    Ok((format!("http://{SERVER_NAME}:{port}/greetings.git"), port))
}

/// The scripted agent's run: the script written under `root/agent`, bound read-only at
/// the same path (so `git loop log` shows a short command line), given the server's URL,
/// the planted secret and the origin's path to try.
pub fn agent_request(root: &Path, url: String, secret: &Path, repo: String) -> Result<Request> {
    let agent_dir = root.join("agent");
    let script = agent_dir.join("demo-agent.sh");
    fs::create_dir_all(&agent_dir).context(|| format!("cannot create {}", agent_dir.display()))?;
    fs::write(&script, AGENT_SCRIPT).context(|| format!("cannot write {}", script.display()))?;
    Ok(Request {
        mode: None,
        net: None,
        backend: None,
        print_argv: false,
        command: vec![
            "sh".into(),
            script.display().to_string(),
            url,
            secret.display().to_string(),
            repo,
        ],
        interactive: false,
        ro_same_path: vec![agent_dir],
        allow_domains: Vec::new(),
        agent_env: Vec::new(),
        session: None,
        timeout: None,
    })
}

/// The configuration of the demo's run: the built-in defaults and an operator layer,
/// made here, that allows the server's name and pins it to loopback.
pub fn config(root: &Path) -> Result<crate::config::Config> {
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
pub fn git_loop(root: &Path, ws_root: &Path, args: &[&str]) -> Result<()> {
    let exe = std::env::current_exe().context(|| "cannot find the git-loop binary")?;
    let status = std::process::Command::new(&exe)
        .args(args)
        .env("GIT_LOOP_HOME", ws_root)
        .env("GIT_LOOP_CONFIG", root.join("no-operator-config.toml"))
        .env("GIT_PAGER", "cat")
        .current_dir(root)
        .status()
        .context(|| format!("cannot run {}", exe.display()))?;
    if !status.success() {
        return Err(DemoError::Step {
            args: args.join(" "),
            status: status.to_string(),
        }
        .into());
    }
    Ok(())
}

pub fn make_sample(dir: &Path) -> Result<()> {
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
