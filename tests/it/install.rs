//! Installing as a newcomer does (`scripts/install`), and what the install gives: man pages
//! that man finds for that prefix (`git loop --help`, `git loop help new`), and shell
//! completions that work together with git's own.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{TestEnv, BIN};

const GIT_COMPLETION: &str = "/usr/share/bash-completion/completions/git";

fn source_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// PATH with the folder of the binary under test first, so `git-loop` is this build.
fn path_with(dir: &Path) -> String {
    format!("{}:{}", dir.display(), std::env::var("PATH").unwrap())
}

/// bash with git's completion and ours sourced; completes each line (the cursor at its
/// end) with the function bash would call for its first word, and prints COMPREPLY, one
/// candidate a line, after a `== line` header.
fn complete_in_bash(env: &TestEnv, lines: &[&str]) -> String {
    assert!(
        Path::new(GIT_COMPLETION).is_file(),
        "{GIT_COMPLETION} is missing: install git's Debian package (apt-get install git; .ci/run does)"
    );
    let ours = source_dir().join("completions/git-loop.bash");
    let mut script = format!(
        "source {GIT_COMPLETION}\nsource {}\n\
         complete_line() {{\n\
           local line=$1 fn\n\
           COMP_LINE=$line; COMP_POINT=${{#line}}\n\
           read -ra COMP_WORDS <<<\"$line\"\n\
           [[ $line == *' ' ]] && COMP_WORDS+=('')\n\
           COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n\
           fn=$(complete -p \"${{COMP_WORDS[0]}}\" | sed 's/.*-F \\([^ ]*\\).*/\\1/')\n\
           COMPREPLY=()\n\
           \"$fn\" \"${{COMP_WORDS[0]}}\" \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
           echo \"== $line\"\n\
           printf '%s|\\n' \"${{COMPREPLY[@]}}\"\n\
         }}\n",
        ours.display()
    );
    for line in lines {
        script.push_str(&format!("complete_line '{line}'\n"));
    }
    let out = Command::new("bash")
        .arg("--norc")
        .arg("-c")
        .arg(&script)
        .env_clear()
        .envs(env.envs())
        .env("PATH", path_with(Path::new(BIN).parent().unwrap()))
        .current_dir(&env.root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The candidates printed for `line` by [`complete_in_bash`].
fn reply<'a>(out: &'a str, line: &str) -> Vec<&'a str> {
    let header = format!("== {line}\n");
    let start = out
        .find(&header)
        .unwrap_or_else(|| panic!("{line}:\n{out}"))
        + header.len();
    out[start..]
        .lines()
        .take_while(|l| !l.starts_with("== "))
        .filter_map(|l| l.strip_suffix('|'))
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_git_loop_with_gits_own_completion() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = env.new_loop(&repo, "first thing");
    let b = env.new_loop(&repo, "second thing");
    env.run(["vault", "init"]).ok();
    let lines = [
        "git loop vault set ",
        "git loop new --vault d",
        "git loop rev",
        "git loop rm ",
        "git loop run f",
        "git loop agent f",
        "git loop run x --net ",
        "git loop new --sandbox ",
        "git-loop ",
        "git-loop rm ",
        "git-loop show s",
        "git-loop run x --net=p",
        "git-loop grant x --ro ",
    ];
    let out = complete_in_bash(&env, &lines);
    // git's completion is registered with nospace: each candidate carries its space.
    assert_eq!(reply(&out, "git loop rev"), ["review "], "{out}");
    let mut ids = vec![format!("{a} "), format!("{b} ")];
    ids.sort();
    assert_eq!(reply(&out, "git loop rm "), ids, "{out}");
    assert_eq!(reply(&out, "git loop run f"), [format!("{a} ")], "{out}");
    assert_eq!(reply(&out, "git loop agent f"), [format!("{a} ")], "{out}");
    assert_eq!(
        reply(&out, "git loop run x --net "),
        ["host ", "none ", "proxy "],
        "{out}"
    );
    assert_eq!(
        reply(&out, "git loop new --sandbox "),
        ["default "],
        "{out}"
    );
    assert_eq!(reply(&out, "git loop vault set "), ["default "], "{out}");
    assert_eq!(reply(&out, "git loop new --vault d"), ["default "], "{out}");
    let commands = reply(&out, "git-loop ");
    for c in ["new", "review", "rm", "vault", "demo", "completions"] {
        assert!(commands.contains(&c), "{c}: {commands:?}");
    }
    for hidden in ["__connect", "__complete", "hook", "man"] {
        assert!(!commands.contains(&hidden), "{hidden}: {commands:?}");
    }
    let plain: Vec<&str> = ids.iter().map(|i| i.trim_end()).collect();
    assert_eq!(reply(&out, "git-loop rm "), plain, "{out}");
    assert_eq!(reply(&out, "git-loop show s"), [b.as_str()], "{out}");
    // `=` breaks words in bash: only the value is completed.
    assert_eq!(reply(&out, "git-loop run x --net=p"), ["proxy"], "{out}");
    // A path: bash completes file names (the test's root holds `app` and `home`).
    let files = reply(&out, "git-loop grant x --ro ");
    assert!(files.contains(&"app") && files.contains(&"home"), "{out}");
    assert!(!env.ws.join("loops").join("__complete").exists());
}

/// Completing never makes a workspace, and with none it offers no loop.
#[test]
fn completing_makes_no_workspace() {
    let env = TestEnv::new();
    let run = env.run(["__complete", "--", "rm", ""]).ok();
    assert_eq!(run.stdout, "");
    assert!(!env.ws.exists());
}

fn install(env: &TestEnv, prefix: &Path, extra: &[&str]) -> crate::common::Run {
    let out = Command::new(source_dir().join("scripts/install"))
        .arg("--prefix")
        .arg(prefix)
        .args(extra)
        .env_clear()
        .envs(env.envs())
        .current_dir(&env.root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    crate::common::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The quick start ends, after the demo's output, with the one line that puts git loop on
/// the PATH; that line, run as it is, makes `git loop` work in a new shell.
#[test]
fn quickstart_ends_with_the_line_that_puts_git_loop_on_the_path() {
    let env = TestEnv::new();
    let prefix = env.root.join("prefix");
    let out = Command::new(source_dir().join("scripts/quickstart"))
        .args(["--prefix", prefix.to_str().unwrap(), "--binary", BIN])
        .env_clear()
        .envs(env.envs())
        .env("SHELL", "/bin/bash")
        .current_dir(&env.root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = prefix.join("bin");
    let lines: Vec<&str> = stdout.lines().collect();
    let advice = format!(
        "  echo 'export PATH=\"{}:$PATH\"' >> ~/.bashrc",
        bin.display()
    );
    assert_eq!(lines.last(), Some(&advice.as_str()), "{stdout}");
    assert_eq!(
        lines[lines.len() - 2],
        format!(
            "quickstart: {} is not on your PATH, so `git loop` is not found yet; add it, then open a new shell:",
            bin.display()
        )
    );
    // Before the line, git finds no `loop`; after it, a new shell does.
    let shell = |script: &str| {
        Command::new("bash")
            .args(["-c", script])
            .env_clear()
            .envs(env.envs())
            .current_dir(&env.root)
            .output()
            .unwrap()
    };
    let before = shell("git loop --version");
    assert!(!before.status.success());
    assert!(shell(advice.trim()).status.success());
    let after = shell(". ~/.bashrc && git loop --version");
    assert!(
        after.status.success(),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
    assert!(String::from_utf8_lossy(&after.stdout).starts_with("git-loop "));
}

/// man finds the installed pages for a prefix whose bin is on PATH (man-db derives its
/// search path from PATH), `git loop --help` shows the page, `git loop help new` shows
/// git-loop-new(1) on a terminal and clap's text elsewhere, and the completions are where
/// the script said.
#[test]
fn install_puts_man_pages_where_man_finds_them() {
    let env = TestEnv::new();
    let prefix = env.root.join("prefix");
    // The build under test stands in for `cargo install` (a release build takes minutes).
    let run = install(&env, &prefix, &["--binary", BIN]).ok();
    let bin = prefix.join("bin/git-loop");
    assert!(bin.is_file(), "{}", run.stdout);
    let man1 = prefix.join("share/man/man1");
    for page in ["git-loop.1", "git-loop-new.1", "git-loop-vault-set.1"] {
        assert_eq!(
            fs::read(man1.join(page)).unwrap(),
            fs::read(source_dir().join("man").join(page)).unwrap(),
            "{page}"
        );
    }
    let bash = env
        .home
        .join(".local/share/bash-completion/completions/git-loop");
    run.stdout_has(&format!("bash completion in {}", bash.display()))
        .stdout_has(&format!(
            "{} is not on your PATH",
            prefix.join("bin").display()
        ));
    assert!(!run.stdout.contains("man does not find"), "{}", run.stdout);
    for (file, shipped) in [
        (bash, "completions/git-loop.bash"),
        (
            prefix.join("share/zsh/site-functions/_git-loop"),
            "completions/_git-loop",
        ),
        (
            prefix.join("share/fish/vendor_completions.d/git-loop.fish"),
            "completions/git-loop.fish",
        ),
    ] {
        assert_eq!(
            fs::read(&file).unwrap(),
            fs::read(source_dir().join(shipped)).unwrap(),
            "{}",
            file.display()
        );
    }

    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        prefix.join("bin").display()
    );
    let man = |args: &[&str], program: &str| {
        let out = Command::new(program)
            .args(args)
            .env_clear()
            .envs(env.envs())
            .env("PATH", &path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .current_dir(&env.root)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = man(&["-w", "git-loop-new"], "man");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out.trim(),
        man1.join("git-loop-new.1").display().to_string()
    );
    // Without the prefix on PATH, man does not find it: the test shows the install did it.
    let plain = Command::new("man")
        .args(["-w", "git-loop-new"])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &env.home)
        .output()
        .unwrap();
    assert!(!plain.status.success());
    // git turns `git loop --help` into `man git-loop`.
    let (code, out, err) = man(&["loop", "--help"], "git");
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("git-loop-new(1)"), "{out}");
    // Not on a terminal: clap's text, as before.
    let (code, out, _) = man(&["loop", "help", "new"], "git");
    assert_eq!(code, Some(0));
    assert!(out.starts_with("Create a loop"), "{out}");

    // On a terminal: the page.
    let driver = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp("git", ["git", "loop", "help", "new"])
out = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let (code, out, err) = man(&["-c", driver], "python3");
    assert_eq!(code, Some(0), "{out}{err}");
    // man's page header (its bold is overstrike here: MANPAGER=cat on a terminal).
    assert!(out.contains("git-loop-new(1)"), "{out}");
    assert!(out.contains("General Commands Manual"), "{out}");
    assert!(!out.contains("Usage: git loop new"), "{out}");
}

#[test]
fn install_refuses_bad_input_with_a_hint() {
    let env = TestEnv::new();
    let prefix = env.root.join("prefix");
    install(&env, &prefix, &["--bogus"])
        .fails(2)
        .stderr_has("unknown option '--bogus'");
    install(&env, &prefix, &["--binary", "/nonexistent/git-loop"])
        .fails(1)
        .stderr_has("/nonexistent/git-loop is not an executable file");
    assert!(!prefix.join("bin").exists());
}

/// A shell the test needs, or a failure saying how to install it (never a silent pass).
fn shell(name: &str) -> PathBuf {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is missing: apt-get install {name} (.ci/run does)"))
}

/// zsh: `git loop rm <TAB>` through zsh's own git completion (which calls _git-loop) in a
/// real interactive zsh, and `git-loop <TAB>`; fish: `git-loop rm <TAB>` and options.
#[test]
fn zsh_and_fish_complete_loop_ids() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = env.new_loop(&repo, "first thing");
    let b = env.new_loop(&repo, "second thing");
    let fpath = env.root.join("zsh");
    fs::create_dir_all(&fpath).unwrap();
    fs::copy(
        source_dir().join("completions/_git-loop"),
        fpath.join("_git-loop"),
    )
    .unwrap();
    let path = path_with(Path::new(BIN).parent().unwrap());
    let driver = format!(
        "zmodload zsh/zpty\n\
         zpty z 'env PS1=\"> \" zsh -f -i'\n\
         zpty -w z 'fpath=({} $fpath); autoload -U compinit; compinit -u -D; LISTMAX=1000'\n\
         zpty -n -w z $'git loop rm \\t\\t'\n\
         zpty -r z out '*{b}*'\n\
         print -r -- \"$out\"\n\
         zpty -d z\n",
        fpath.display()
    );
    let out = Command::new("timeout")
        .arg("30")
        .arg(shell("zsh"))
        .args(["-f", "-c", &driver])
        .env_clear()
        .envs(env.envs())
        .env("PATH", &path)
        .current_dir(&env.root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&a) && text.contains(&b), "{text}");
    // The script alone, as zsh calls it for `git-loop re<TAB>`, with compadd recorded.
    let script = format!(
        "compadd() {{ print -l -- \"$@\"; }}\n\
         words=(git-loop rev); CURRENT=2; source {}\n",
        fpath.join("_git-loop").display()
    );
    let out = Command::new(shell("zsh"))
        .args(["-f", "-c", &script])
        .env_clear()
        .envs(env.envs())
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "--\nreview\n");

    let script = format!(
        "source {}\ncomplete -C 'git-loop rm '; echo ==; complete -C 'git-loop run x --net '; echo ==; complete -C 'git-loop '",
        source_dir().join("completions/git-loop.fish").display()
    );
    let out = Command::new(shell("fish"))
        .args(["--no-config", "-c", &script])
        .env_clear()
        .envs(env.envs())
        .env("PATH", &path)
        .current_dir(&env.root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let parts: Vec<&str> = text.split("==\n").collect();
    assert_eq!(parts.len(), 3, "{text}");
    let mut ids = [a.clone(), b.clone()];
    ids.sort();
    assert_eq!(parts[0], format!("{}\n{}\n", ids[0], ids[1]), "{text}");
    assert_eq!(parts[1], "host\nnone\nproxy\n", "{text}");
    assert!(parts[2].lines().any(|l| l == "review"), "{text}");
    assert!(
        !parts[2].contains("__connect") && !parts[2].lines().any(|l| l == "man"),
        "{text}"
    );
}

/// The README's install line and the quick start install the same packages: every one a
/// feature needs (the sandbox, the man pages, bash's completion, the schedule, the live
/// loop's terminal).
#[test]
fn the_readme_install_line_names_what_the_quick_start_installs() {
    let readme = std::fs::read_to_string(source_dir().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("sudo apt-get install -y "))
        .expect("README.md has an install line");
    let mut named: Vec<&str> = line["sudo apt-get install -y ".len()..]
        .split_whitespace()
        .collect();
    named.sort();
    let quickstart = std::fs::read_to_string(source_dir().join("scripts/quickstart")).unwrap();
    let mut installed: Vec<&str> = quickstart
        .split("need+=(")
        .skip(1)
        .map(|rest| &rest[..rest.find(')').unwrap()])
        .collect();
    installed.sort();
    assert_eq!(named, installed);
    for package in ["bubblewrap", "bash-completion", "tmux", "cron", "man-db"] {
        assert!(named.contains(&package), "{package} is not in {line:?}");
    }
}
