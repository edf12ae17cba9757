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
fn completions_and_man_page_are_generated_and_shipped() {
    let env = TestEnv::new();
    for (shell, file) in [
        ("bash", "completions/git-loop.bash"),
        ("zsh", "completions/_git-loop"),
        ("fish", "completions/git-loop.fish"),
    ] {
        let run = env.run(["completions", shell]).ok();
        assert!(
            run.stdout.contains("gc") && run.stdout.contains("new"),
            "{shell}"
        );
        shipped(file, run.stdout.as_bytes());
    }
    let man = env.run(["man"]).ok();
    assert!(
        man.stdout.starts_with(".ie") || man.stdout.contains(".TH"),
        "not roff"
    );
    shipped("man/git-loop.1", man.stdout.as_bytes());
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
