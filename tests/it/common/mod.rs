//! `TestEnv`: every test gets its own HOME, workspace and git configuration, with fixed
//! dates and identities, so runs are repeatable and never touch the machine's own setup.

#![allow(dead_code)]

pub mod bounded;
pub mod netns;
pub mod terminal;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-loop");

pub struct TestEnv {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub ws: PathBuf,
    /// Where `doctor` runs (see [`TestEnv::run_in`]), made on first use.
    offline: std::sync::OnceLock<netns::Netns>,
    /// The attack battery's second pass (`tests/it/joined.rs`): every `git loop run` of
    /// this test goes through a live session of its loop (see [`TestEnv::battery`]).
    joined: Option<PathBuf>,
}

/// `git loop run` through a live session: `up` with the run's sandbox options, the run
/// joined into it, `down` after it (so each run has a session of its own, as each fresh
/// run has a sandbox of its own). Signals to the script reach the joined run; its death
/// (SIGKILL included) ends the joiner, as a fresh run ends with its caller. `--print-argv`
/// runs nothing and passes through.
const JOINED_RUN: &str = r#"#!/bin/bash
bin=@BIN@
[ "$1" = run ] || exec "$bin" "$@"
shift
up=() run=() id=
while [ $# -gt 0 ]; do
  case $1 in
    --) break ;;
    --print-argv) exec "$bin" run "${up[@]}" "${run[@]}" ${id:+"$id"} "$@" ;;
    --mode|--net|--allow-domain|--backend) up+=("$1" "$2"); shift 2 ;;
    --mode=*|--net=*|--allow-domain=*|--backend=*) up+=("$1"); shift ;;
    --color|--timeout) run+=("$1" "$2"); shift 2 ;;
    -*) run+=("$1"); shift ;;
    *) [ -n "$id" ] && break; id=$1; shift ;;
  esac
done
[ -n "$id" ] || exec "$bin" run "${up[@]}" "${run[@]}" "$@"
# What `up` says (the layers' warnings, the sandbox's status line) is what a fresh run says;
# a session another run of this loop made is joined and left to it.
keep=.
for a in "${run[@]}"; do [ "$a" = -q ] || [ "$a" = --quiet ] && keep=^warning:; done
said=$("$bin" up "${up[@]}" "$id" 2>&1 >/dev/null)
code=$?
mine=1
case $said in *"already up"*) mine= ;; esac
printf '%s\n' "$said" | grep -v -e "session is up" -e "already up" | grep -e "$keep" >&2
[ $code -eq 0 ] || exit $code
setpriv --pdeathsig KILL -- "$bin" run "${run[@]}" "$id" "$@" <&0 &
child=$!
trap 'kill -INT $child' INT
trap 'kill -TERM $child' TERM
trap 'kill -HUP $child' HUP
while :; do
  wait $child
  code=$?
  kill -0 $child 2>/dev/null || break
done
[ -n "$mine" ] && "$bin" down -q "$id" >/dev/null 2>&1
exit $code
"#;

impl Drop for TestEnv {
    /// The live sessions a test left up (one that failed before its `down`, a joined run
    /// killed before its own) end with the test: no supervisor outlives its workspace.
    fn drop(&mut self) {
        let Ok(dir) = fs::read_dir(self.ws.join("locks/live")) else {
            return;
        };
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(id) = name.strip_suffix(".lock") {
                let _ = Command::new(BIN)
                    .env_clear()
                    .envs(self.envs())
                    .args(["down", "-q", id])
                    .stdin(Stdio::null())
                    .output();
            }
        }
    }
}

/// What a command did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// A failure with the given exit code, one `error:` line and at least one `hint:`.
    #[track_caller]
    pub fn fails(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "expected exit {code}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        let errors: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect();
        assert_eq!(errors.len(), 1, "expected one error line:\n{}", self.stderr);
        assert!(
            self.stderr.lines().any(|l| l.starts_with("hint:")),
            "expected a hint:\n{}",
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(&self, needle: &str) -> &Run {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}:\n{}",
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stdout_has(&self, needle: &str) -> &Run {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}:\n{}",
            self.stdout
        );
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv::with_workspace_name("ws")
    }

    /// A workspace folder with the given name (e.g. one with spaces).
    pub fn with_workspace_name(name: &str) -> TestEnv {
        let tmp = tempfile::Builder::new()
            .prefix("git-loop-test")
            .tempdir()
            .unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        fs::create_dir_all(home.join(".config")).unwrap();
        TestEnv {
            ws: root.join(name),
            _tmp: tmp,
            root,
            home,
            offline: std::sync::OnceLock::new(),
            joined: None,
        }
    }

    /// The environment of an attack test in `module` (its `module_path!()`): under
    /// `joined::` (the battery's second pass) every `git loop run` joins a live session.
    pub fn battery(module: &str) -> TestEnv {
        let mut env = TestEnv::new();
        if module.contains("::joined::") {
            use std::os::unix::fs::PermissionsExt;
            let script = env.root.join(".joined-git-loop");
            fs::write(&script, JOINED_RUN.replace("@BIN@", BIN)).unwrap();
            fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
            env.joined = Some(script);
        }
        env
    }

    /// Whether this test's runs join live sessions (see [`TestEnv::battery`]).
    pub fn joined(&self) -> bool {
        self.joined.is_some()
    }

    /// The program a test runs as `git loop`.
    pub fn bin(&self) -> &OsStr {
        self.joined
            .as_deref()
            .map(Path::as_os_str)
            .unwrap_or(OsStr::new(BIN))
    }

    /// The fixed environment every command of a test runs with.
    pub fn envs(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        vec![
            ("PATH", path),
            ("HOME", self.home.clone().into()),
            ("USER", "tester".into()),
            ("GIT_LOOP_HOME", self.ws.clone().into()),
            ("XDG_CONFIG_HOME", self.home.join(".config").into()),
            ("XDG_DATA_HOME", self.home.join(".local/share").into()),
            ("GIT_CONFIG_GLOBAL", "/dev/null".into()),
            ("GIT_CONFIG_NOSYSTEM", "1".into()),
            ("GIT_AUTHOR_NAME", "Tester".into()),
            ("GIT_AUTHOR_EMAIL", "tester@example.com".into()),
            ("GIT_COMMITTER_NAME", "Tester".into()),
            ("GIT_COMMITTER_EMAIL", "tester@example.com".into()),
            ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z".into()),
            ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z".into()),
            ("TZ", "UTC".into()),
            ("LC_ALL", "C".into()),
            ("NO_COLOR", "1".into()),
        ]
    }

    /// `git loop ARGS` in `cwd`. `doctor` runs in a network namespace of the test's own
    /// with only a loopback: its network check resolves the registries' names with the
    /// machine's DNS, whose answers (a mirror in a documentation range, no DNS at all) are
    /// the machine's, not the workspace's; names a test pins are judged the same there.
    pub fn run_in<I, S>(&self, cwd: &Path, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<std::ffi::OsString> = args
            .into_iter()
            .map(|a| a.as_ref().to_os_string())
            .collect();
        let mut cmd = if args.first().is_some_and(|a| a == "doctor") {
            self.offline.get_or_init(netns::Netns::new).command(BIN)
        } else {
            Command::new(self.bin())
        };
        cmd.env_clear()
            .envs(self.envs())
            .current_dir(cwd)
            .args(args)
            .stdin(Stdio::null());
        to_run(cmd.output().expect("start git-loop"))
    }

    /// `git loop ARGS` in the test's root folder (not a repository).
    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_in(&self.root.clone(), args)
    }

    /// A command of ours with the test environment, for custom setups.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(self.bin());
        cmd.env_clear().envs(self.envs()).stdin(Stdio::null());
        cmd
    }

    /// `git ARGS` in `dir`; panics on failure.
    #[track_caller]
    pub fn git<I, S>(&self, dir: &Path, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.git_out(dir, args);
        assert_eq!(
            out.code,
            0,
            "git failed in {}:\n{}",
            dir.display(),
            out.stderr
        );
        out.stdout
    }

    pub fn git_out<I, S>(&self, dir: &Path, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        cmd.env_clear()
            .envs(self.envs())
            .current_dir(dir)
            .args(args)
            .stdin(Stdio::null());
        to_run(cmd.output().expect("start git"))
    }

    /// A repository `name` under the test root with one commit on main.
    pub fn repo(&self, name: &str) -> PathBuf {
        let dir = self.root.join(name);
        fs::create_dir_all(&dir).unwrap();
        self.git(&dir, ["init", "-q", "-b", "main"]);
        fs::write(dir.join("README.md"), "# demo\n").unwrap();
        fs::write(dir.join("main.c"), "int main(void) { return 0; }\n").unwrap();
        self.git(&dir, ["add", "-A"]);
        self.git(&dir, ["commit", "-q", "-m", "first"]);
        dir
    }

    /// Logs the default agent in, as a user does once (`git loop agent login`, the key on
    /// stdin), so that `doctor` finds a workspace where the agent can work.
    pub fn agent_login(&self) {
        use std::io::Write;
        let mut child = self
            .command()
            .current_dir(&self.root)
            .args(["agent", "login"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start git-loop");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"sk-ant-api03-test-key-of-the-suite")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "agent login failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `git loop new TITLE` in `repo`; returns the id.
    #[track_caller]
    pub fn new_loop(&self, repo: &Path, title: &str) -> String {
        let run = self.run_in(repo, ["new", title]).ok();
        run.stdout.trim().to_string()
    }

    pub fn loop_dir(&self, id: &str) -> PathBuf {
        self.ws.join("loops").join(id)
    }

    /// The workspace's sandbox profile `name`: `knowledge/.loopat/sandboxes/NAME/sandbox.toml`.
    pub fn profile_path(&self, name: &str) -> PathBuf {
        self.ws
            .join("context/knowledge/.loopat/sandboxes")
            .join(name)
            .join("sandbox.toml")
    }

    /// Writes the sandbox profile `name` (its folder made); returns its path.
    pub fn write_sandbox_profile(&self, name: &str, body: &str) -> PathBuf {
        let path = self.profile_path(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, body).unwrap();
        path
    }

    /// Writes the `default` sandbox profile (every loop's, unless one names another).
    pub fn write_profile(&self, body: &str) -> PathBuf {
        self.write_sandbox_profile("default", body)
    }

    pub fn workdir(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("workdir")
    }

    pub fn loop_notes(&self, id: &str) -> PathBuf {
        self.loop_dir(id).join("context/notes")
    }

    pub fn notes(&self) -> PathBuf {
        self.ws.join("context/notes")
    }

    /// Commit a file in a loop's repository, as the agent would (inside its sandbox).
    pub fn commit_file(&self, repo: &Path, rel: &str, text: &str, message: &str) {
        let file = repo.join(rel);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, text).unwrap();
        self.git(repo, ["add", "-A"]);
        self.git(repo, ["commit", "-q", "-m", message]);
    }

    /// `git rev-parse REV` in `dir`, or None.
    pub fn rev(&self, dir: &Path, rev: &str) -> Option<String> {
        let out = self.git_out(dir, ["rev-parse", "--verify", "-q", rev]);
        (out.code == 0).then(|| out.stdout.trim().to_string())
    }

    /// Every ref of a repository with its value, for "nothing else changed" checks.
    pub fn refs(&self, dir: &Path) -> String {
        self.git(dir, ["for-each-ref", "--format=%(refname) %(objectname)"])
    }

    /// Names of the entries of `loops/`, hidden ones included.
    pub fn loop_entries(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(self.ws.join("loops"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

fn to_run(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The `fix: ...` line of a refusal's body (or of `doctor`'s output), run as the person
/// would run it.
#[track_caller]
pub fn apply_fix(env: &TestEnv, body: &str) -> Run {
    let line = body
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("fix: "))
        .unwrap_or_else(|| panic!("no fix in the refusal:\n{body}"));
    let command = line
        .strip_prefix("git loop ")
        .unwrap_or_else(|| panic!("the fix is not a git loop command: {line}"));
    env.run(shell_words(command)).ok()
}

/// A command line split as a shell splits one: at spaces, single quotes kept whole.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// The line of `out` that gives `label`'s verdict (`OK label` or `REFUSED label: why`, as
/// the attack scripts inside print them), checked to be `allowed` (`OK ...`) or not.
#[track_caller]
pub fn verdict<'a>(out: &'a str, label: &str, allowed: bool) -> &'a str {
    let line = out
        .lines()
        .find(|l| {
            l.split(':')
                .next()
                .unwrap_or("")
                .ends_with(&format!(" {label}"))
        })
        .unwrap_or_else(|| panic!("no verdict for {label}:\n{out}"));
    assert_eq!(line.starts_with("OK "), allowed, "{label}: {line}\n{out}");
    line
}
