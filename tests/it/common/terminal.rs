//! A real terminal for interactive programs: a tmux server of the test's own (its socket in
//! the test's temp folder, no user config), one session whose pane runs the program, and
//! reads of the screen as a person sees it. Waits poll the screen until a deadline, never
//! sleep a fixed time.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Terminal {
    socket: PathBuf,
    env: Vec<(String, OsString)>,
    /// Where the program's exit status is written when it ends (tmux 3.3 does not always
    /// mark a pane dead when its program ends, so its own flag is not waited on).
    status: PathBuf,
}

impl Terminal {
    /// Starts `argv` in a new terminal of `width` x `height` in `cwd`, with exactly `env` as
    /// its environment (the server's, which the pane inherits). The pane stays after the
    /// program ends, so its exit status can be read.
    pub fn start(
        dir: &Path,
        env: Vec<(String, OsString)>,
        cwd: &Path,
        argv: &[String],
        (width, height): (u16, u16),
    ) -> Terminal {
        which_tmux();
        let conf = dir.join("tmux.conf");
        std::fs::write(
            &conf,
            "set -g remain-on-exit on\nset -g history-limit 5000\nset -g status off\n",
        )
        .unwrap();
        let term = Terminal {
            socket: dir.join("tmux.sock"),
            env,
            status: dir.join("exit-status"),
        };
        let mut args: Vec<OsString> = vec!["-f".into(), conf.into_os_string()];
        for a in [
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-c",
        ] {
            args.push(a.into());
        }
        args.push(cwd.as_os_str().to_owned());
        // More than one argument: tmux runs them as they are. The shell in front only writes
        // the program's exit status where `exited` reads it; the program and its arguments
        // are its positional parameters, never part of its script.
        args.extend(["sh", "-c", "\"$@\"; echo $? > \"$0\""].map(OsString::from));
        args.push(term.status.clone().into_os_string());
        args.extend(argv.iter().map(OsString::from));
        let out = term.tmux(&args);
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        term
    }

    fn tmux(&self, args: &[OsString]) -> std::process::Output {
        Command::new("tmux")
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run tmux")
    }

    fn tmux_str(&self, args: &[&str]) -> String {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let out = self.tmux(&args);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen as it is now, one line per row.
    pub fn screen(&self) -> String {
        self.tmux_str(&["capture-pane", "-p", "-t", "main"])
    }

    /// Waits until the screen satisfies `ready`, for at most `within`; returns that screen.
    /// Every screen seen on the way is given to `never`, which panics on what must not
    /// appear. Past the deadline the test fails with the last screen.
    #[track_caller]
    pub fn wait_for(
        &self,
        what: &str,
        within: Duration,
        ready: impl Fn(&str) -> bool,
        never: impl Fn(&str),
    ) -> String {
        let start = Instant::now();
        let mut pause = Duration::from_millis(20);
        loop {
            let screen = self.screen();
            never(&screen);
            if ready(&screen) {
                return screen;
            }
            if self.exited().is_some() {
                let screen = self.screen();
                never(&screen);
                if ready(&screen) {
                    return screen;
                }
                panic!("the program ended before {what}; its screen:\n{screen}");
            }
            if start.elapsed() > within {
                panic!("no {what} within {within:?}; the screen:\n{screen}");
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// Types `text` as it is (no key names).
    pub fn type_text(&self, text: &str) {
        self.tmux_str(&["send-keys", "-t", "main", "-l", text]);
    }

    /// Pastes `text`, as a terminal does: in bracketed-paste markers when the program asked
    /// for them (a program that tells typing from pasting by timing needs them).
    pub fn paste(&self, text: &str) {
        self.tmux_str(&["set-buffer", "-b", "input", "--", text]);
        self.tmux_str(&["paste-buffer", "-p", "-d", "-b", "input", "-t", "main"]);
    }

    /// Whether the terminal rang its bell (a BEL reached it) since it started.
    pub fn rang(&self) -> bool {
        self.tmux_str(&["display-message", "-p", "-t", "main", "#{window_bell_flag}"])
            .trim()
            == "1"
    }

    /// Presses `key` (a tmux key name: `Enter`, `C-c`, `Escape`).
    pub fn press(&self, key: &str) {
        self.tmux_str(&["send-keys", "-t", "main", key]);
    }

    /// The program's exit status once it has ended (as a shell gives it: 128 + the signal
    /// that ended it).
    pub fn exited(&self) -> Option<i32> {
        let text = std::fs::read_to_string(&self.status).ok()?;
        if !text.ends_with('\n') {
            return None;
        }
        text.trim().parse().ok()
    }

    /// Whether the program ends within `within`.
    pub fn ended_within(&self, within: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < within {
            if self.exited().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.exited().is_some()
    }

    /// Waits for the program to end, for at most `within`; its exit status.
    #[track_caller]
    pub fn wait_exit(&self, within: Duration) -> i32 {
        let start = Instant::now();
        loop {
            if let Some(code) = self.exited() {
                return code;
            }
            if start.elapsed() > within {
                panic!(
                    "the program did not end within {within:?}; the screen:\n{}\nits processes:\n{}",
                    self.screen(),
                    self.processes()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Terminal {
    /// The pane's process and its descendants, one `pid state command` line each, for a
    /// failure's message.
    fn processes(&self) -> String {
        let pane: i32 = self
            .tmux_str(&["display-message", "-p", "-t", "main", "#{pane_pid}"])
            .trim()
            .parse()
            .unwrap_or(0);
        let mut all = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let Some(close) = stat.rfind(')') else {
                continue;
            };
            let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
            let ppid: i32 = fields.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
            let cmd = std::fs::read(entry.path().join("cmdline"))
                .unwrap_or_default()
                .split(|b| *b == 0)
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect::<Vec<_>>()
                .join(" ");
            all.push((
                pid,
                ppid,
                fields.first().copied().unwrap_or("?").to_string(),
                cmd,
            ));
        }
        let mut ours = vec![pane];
        let mut i = 0;
        while i < ours.len() {
            let parent = ours[i];
            ours.extend(all.iter().filter(|p| p.1 == parent).map(|p| p.0));
            i += 1;
        }
        let tty = self
            .tmux_str(&["display-message", "-p", "-t", "main", "#{pane_tty}"])
            .trim()
            .to_string();
        let holds_tty = |pid: i32| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t.to_string_lossy() == tty))
        };
        all.iter()
            .filter(|p| ours.contains(&p.0) || holds_tty(p.0))
            .map(|p| {
                format!(
                    "{} (parent {}) {} {}",
                    p.0,
                    p.1,
                    p.2,
                    p.3.chars().take(160).collect::<String>()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.tmux_str(&["kill-server"]);
    }
}

/// tmux is needed; under CI its absence fails with how to install it.
fn which_tmux() {
    let found = Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "tmux is not installed: apt-get install -y tmux (.ci/run does)"
    );
}
