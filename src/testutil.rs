//! What the unit tests share: git in a fixture repository, with a fixed, isolated
//! environment (no system or global configuration; the identity a test needs is given on
//! its command line or in the fixture's own config).

use std::path::Path;
use std::process::{Command, Output};

/// `git ARGS` in `dir`.
pub fn git_output(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// `git ARGS` in `dir`, which must succeed; its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_output(dir, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A new repository in `dir` (made if missing) on branch `main`, with the identity commits
/// need in its own config.
pub fn init_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "A"]);
    git(dir, &["config", "user.email", "a@example.com"]);
}
