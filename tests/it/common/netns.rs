//! A network namespace of a test's own, with only a loopback: where the proxy may dial
//! addresses that are not 127.0.0.1 (documentation ranges a test adds to that loopback)
//! and where a name that resolves off this machine cannot be reached, nor looked up.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{Run, TestEnv, BIN};

/// The path of `tool`, which the test needs: its absence fails the test with the package
/// to install (never a silent skip).
#[track_caller]
pub fn require(tool: &str, package: &str) -> PathBuf {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{tool} is needed for this test: sudo apt-get install {package} (or run .ci/run)"
            )
        })
}

/// A child killed when dropped.
pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A network namespace with only a loopback, held open by a process sleeping until it is
/// dropped (a test may run longer than any fixed time: the full crash harness); `prefix`
/// runs a command inside it.
pub struct Netns {
    _holder: Kill,
    pub prefix: Vec<String>,
}

impl Netns {
    pub fn new() -> Netns {
        require("unshare", "util-linux");
        let nsenter = require("nsenter", "util-linux");
        require("ip", "iproute2");
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let mut holder = Command::new("unshare");
        if !root {
            holder.arg("--map-root-user");
        }
        let holder = holder
            .args(["--net", "sleep", "infinity"])
            .stdin(Stdio::null())
            .spawn()
            .expect("unshare starts");
        let pid = holder.id().to_string();
        let own = fs::read_link("/proc/self/ns/net").unwrap();
        let start = Instant::now();
        while fs::read_link(format!("/proc/{pid}/ns/net")).is_ok_and(|n| n == own) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "unshare did not make a namespace"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut prefix: Vec<String> =
            vec![nsenter.display().to_string(), "-t".into(), pid, "-n".into()];
        if !root {
            prefix.extend(["-U".into(), "--preserve-credentials".into()]);
        }
        let ns = Netns {
            _holder: Kill(holder),
            prefix,
        };
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// `ip ARGS` inside; panics on failure.
    #[track_caller]
    pub fn ip(&self, args: &[&str]) {
        let ok = self.command("ip").args(args).status().unwrap();
        assert!(ok.success(), "ip {args:?} failed in the namespace");
    }

    /// `address` (`192.0.2.10/32`) on the namespace's loopback: reachable there, and
    /// only there.
    pub fn add_address(&self, address: &str) {
        self.ip(&["addr", "add", address, "dev", "lo"]);
    }

    /// A TCP listener on `127.0.0.1` of this namespace (an ephemeral port), served by this
    /// process: a server of the test's own that only what runs inside can reach. A socket
    /// belongs to the namespace it was made in, so a process inside makes it and passes it
    /// back over a unix socket (whose path is no network's); the test process, whose
    /// threads cannot all enter a namespace owned by another user namespace, never joins.
    pub fn listen(&self) -> std::net::TcpListener {
        use std::os::fd::{FromRawFd, OwnedFd};
        require("python3", "python3");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("listener.sock");
        let server = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let mut maker = self
            .command("python3")
            .args([
                "-c",
                "import socket, sys\n\
                 l = socket.socket()\n\
                 l.bind(('127.0.0.1', 0))\n\
                 l.listen(128)\n\
                 u = socket.socket(socket.AF_UNIX)\n\
                 u.connect(sys.argv[1])\n\
                 socket.send_fds(u, [b'l'], [l.fileno()])\n",
            ])
            .arg(&path)
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 starts in the namespace");
        let (conn, _) = server.accept().unwrap();
        let mut byte = [0u8; 1];
        let mut iov = [std::io::IoSliceMut::new(&mut byte)];
        let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
        let got = nix::sys::socket::recvmsg::<()>(
            std::os::fd::AsRawFd::as_raw_fd(&conn),
            &mut iov,
            Some(&mut space),
            nix::sys::socket::MsgFlags::MSG_CMSG_CLOEXEC,
        )
        .unwrap();
        let fd = got
            .cmsgs()
            .unwrap()
            .find_map(|c| match c {
                nix::sys::socket::ControlMessageOwned::ScmRights(fds) => fds.first().copied(),
                _ => None,
            })
            .expect("the namespace's listener came back");
        assert!(maker.wait().unwrap().success());
        // SAFETY: recvmsg just made this descriptor, and nothing else owns it.
        std::net::TcpListener::from(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// `program` to be run inside.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(&self.prefix[0]);
        cmd.args(&self.prefix[1..]).arg(program);
        cmd
    }

    /// `git loop ARGS` inside the namespace.
    pub fn run(&self, env: &TestEnv, args: &[&str]) -> Run {
        let out = self
            .command(BIN)
            .args(args)
            .env_clear()
            .envs(env.envs())
            .current_dir(&env.root)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}
