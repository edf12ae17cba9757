//! The command line itself: help and usage errors (trycmd cases in tests/cmd/), and the
//! generated completions and man page, which must match what is shipped.

use std::fs;
use std::path::Path;

use crate::common::TestEnv;

#[test]
fn trycmd_cases() {
    trycmd::TestCases::new()
        .register_bin("git-loop", trycmd::cargo::cargo_bin!("git-loop"))
        .case("tests/cmd/*.toml");
}

/// Set GIT_LOOP_BLESS=1 to rewrite the shipped files from the current definitions.
fn shipped(rel: &str, generated: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    if std::env::var_os("GIT_LOOP_BLESS").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, generated).unwrap();
    }
    let on_disk = fs::read(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{rel} is out of date: run `GIT_LOOP_BLESS=1 cargo nextest run cli::`"
    );
}

#[test]
fn completions_and_man_pages_are_generated_and_shipped() {
    let env = TestEnv::new();
    for (shell, file) in [
        ("bash", "completions/git-loop.bash"),
        ("zsh", "completions/_git-loop"),
        ("fish", "completions/git-loop.fish"),
    ] {
        let run = env.run(["completions", shell]).ok();
        assert!(run.stdout.contains("git-loop __complete"), "{shell}");
        shipped(file, run.stdout.as_bytes());
    }
    let man = env.run(["man"]).ok();
    assert!(man.stdout.contains(".TH git-loop 1"), "not roff");
    // Every page, in a folder of its own, as `git loop man --dir` writes them.
    let dir = env.root.join("man");
    env.run(["man", "--dir", dir.to_str().unwrap()]).ok();
    let names = |d: &Path| {
        let mut v: Vec<String> = fs::read_dir(d)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let pages = names(&dir);
    for page in &pages {
        shipped(&format!("man/{page}"), &fs::read(dir.join(page)).unwrap());
    }
    assert_eq!(
        fs::read(dir.join("git-loop.1")).unwrap(),
        man.stdout.as_bytes()
    );
    // A page for every command that is not hidden, nested ones too, and no other.
    for page in [
        "git-loop.1",
        "git-loop-new.1",
        "git-loop-vault.1",
        "git-loop-vault-set.1",
    ] {
        assert!(pages.contains(&page.to_string()), "{page}: {pages:?}");
    }
    for hidden in ["man", "hook", "__connect", "__complete", "help"] {
        assert!(
            !pages.contains(&format!("git-loop-{hidden}.1")),
            "{hidden}: {pages:?}"
        );
    }
    let shipped_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    if std::env::var_os("GIT_LOOP_BLESS").is_some() {
        for stale in names(&shipped_dir).iter().filter(|p| !pages.contains(p)) {
            fs::remove_file(shipped_dir.join(stale)).unwrap();
        }
    }
    assert_eq!(
        names(&shipped_dir),
        pages,
        "man/ is out of date: run `GIT_LOOP_BLESS=1 cargo nextest run cli::`"
    );
    // Each page the root page names exists.
    let root = String::from_utf8(fs::read(dir.join("git-loop.1")).unwrap()).unwrap();
    for line in root.lines().filter(|l| l.starts_with("git\\-loop\\-")) {
        let name = line.split('(').next().unwrap().replace("\\-", "-");
        assert!(pages.contains(&format!("{name}.1")), "{line}");
    }
}

#[test]
fn help_for_every_command() {
    let env = TestEnv::new();
    for cmd in [
        "init",
        "new",
        "list",
        "show",
        "rm",
        "gc",
        "config",
        "doctor",
        "completions",
    ] {
        let run = env.run(["help", cmd]).ok();
        assert!(
            run.stdout.contains("Usage: git loop"),
            "{cmd}:\n{}",
            run.stdout
        );
    }
    assert!(!env.ws.exists(), "help touches no workspace");
}

/// Every start of `git-loop` is paid by every sandbox start: it loads no C library it does
/// not need (main.rs defines the one libm function a dependency uses).
#[test]
fn the_binary_loads_no_libm() {
    let out = std::process::Command::new(crate::common::BIN)
        .arg("--version")
        .env("LD_DEBUG", "libs")
        .output()
        .unwrap();
    assert!(out.status.success());
    let loaded = String::from_utf8_lossy(&out.stderr);
    assert!(
        loaded.contains("libc.so.6"),
        "LD_DEBUG said nothing:\n{loaded}"
    );
    assert!(!loaded.contains("libm.so"), "{loaded}");
}

/// Every command, hidden and nested ones too, has a trycmd case for its `--help` in
/// tests/cmd/ (`help-vault-set.toml`); GIT_LOOP_BLESS=1 writes them from the binary.
#[test]
fn every_command_has_a_help_case() {
    fn paths(cmd: &clap::Command, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands() {
            let mut path = prefix.clone();
            path.push(sub.get_name().to_string());
            out.push(path.clone());
            paths(sub, path, out);
        }
    }
    let mut all = Vec::new();
    paths(&git_loop::cli::command(), Vec::new(), &mut all);
    assert!(all.len() > 40, "{all:?}");
    let env = TestEnv::new();
    let mut missing = Vec::new();
    for path in &all {
        let rel = format!("tests/cmd/help-{}.toml", path.join("-"));
        let mut args: Vec<String> = path.clone();
        args.push("--help".into());
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(&rel);
        if std::env::var_os("GIT_LOOP_BLESS").is_some() {
            let run = env.run(&args).ok();
            assert!(!run.stdout.contains("'''"), "{rel}");
            let quoted: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
            let text = format!(
                "bin.name = \"git-loop\"\nargs = [{}]\nstatus.code = 0\nstdout = '''\n{}'''\n",
                quoted.join(", "),
                // trycmd compares with backslashes made slashes (its path normalization).
                run.stdout.replace('\\', "/")
            );
            fs::write(&file, text).unwrap();
        }
        if !file.is_file() {
            missing.push(rel);
        }
    }
    assert!(
        missing.is_empty(),
        "no help case for {missing:?}: run `GIT_LOOP_BLESS=1 cargo nextest run cli::`"
    );
}
