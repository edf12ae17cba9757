//! Ignored files by rule (DESIGN 10): `git loop new` copies the ignored files that
//! `.worktreeinclude` names from the user's working tree into the loop's; a file the secret
//! guard flags is refused with the way to a vault, a link is never followed, a file past the
//! bound is refused, and a refusal leaves nothing made.

use std::fs;
use std::path::Path;

use crate::common::TestEnv;

/// A GitHub-token-shaped value (the guard's pattern; no real token).
const TOKEN: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyZ";

/// A repository whose .gitignore ignores the files the tests bring, and whose
/// .worktreeinclude names some of them.
fn project(env: &TestEnv, include: &str) -> std::path::PathBuf {
    let repo = env.repo("app");
    fs::write(
        repo.join(".gitignore"),
        ".env\nconfig.local.json\nlinked.json\nbig.bin\nbuild/\n",
    )
    .unwrap();
    fs::write(repo.join(".worktreeinclude"), include).unwrap();
    env.git(&repo, ["add", ".gitignore", ".worktreeinclude"]);
    env.git(&repo, ["commit", "-q", "-m", "ignore local files"]);
    fs::write(repo.join("config.local.json"), "{\"port\": 5173}\n").unwrap();
    repo
}

/// Nothing of a refused `new`: no loop folder, no loop branch in the repository.
fn nothing_made(env: &TestEnv, repo: &Path) {
    assert!(env.loop_entries().is_empty(), "{:?}", env.loop_entries());
    let refs = env.refs(repo);
    assert!(!refs.contains("refs/heads/loop/"), "{refs}");
}

#[test]
fn plain_ignored_files_are_copied_and_a_token_is_refused_with_the_vault_hint() {
    let env = TestEnv::new();
    let repo = project(
        &env,
        "# local files a loop needs\n.env\nconfig.local.json\nuntracked.txt\nbuild/gen/\n",
    );
    fs::write(repo.join(".env"), format!("GITHUB_TOKEN={TOKEN}\n")).unwrap();
    // Named but not ignored: git would show it as untracked; not the rule's business.
    fs::write(repo.join("untracked.txt"), "scratch\n").unwrap();
    fs::create_dir_all(repo.join("build/gen/deep")).unwrap();
    fs::write(repo.join("build/gen/deep/api.ts"), "export {}\n").unwrap();
    fs::write(repo.join("build/out.o"), "obj\n").unwrap();

    let run = env.run_in(&repo, ["new", "with local files"]).fails(1);
    run.stderr_has("not copying .env into the loop: the secret guard flags .env:1");
    run.stderr_has("git loop vault set VAULT env NAME --for HOST");
    run.stderr_has("include_secrets = true");
    assert!(!run.stderr.contains(TOKEN), "{}", run.stderr);
    nothing_made(&env, &repo);

    // The value goes to a vault; the file's line leaves the rules.
    fs::write(
        repo.join(".worktreeinclude"),
        "config.local.json\nuntracked.txt\nbuild/gen/\n",
    )
    .unwrap();
    let id = env.new_loop(&repo, "with local files");
    let wd = env.workdir(&id);
    assert_eq!(
        fs::read_to_string(wd.join("config.local.json")).unwrap(),
        "{\"port\": 5173}\n"
    );
    assert!(wd.join("build/gen/deep/api.ts").is_file());
    assert!(!wd.join("build/out.o").exists());
    assert!(!wd.join("untracked.txt").exists());
    assert!(!wd.join(".env").exists());
    let show = env.run(["show", &id, "--json"]).ok().json();
    assert_eq!(
        show["included"],
        serde_json::json!(["build/gen/deep/api.ts", "config.local.json"])
    );
    env.run(["show", &id])
        .ok()
        .stdout_has("included:   config.local.json");
    // The copy is the loop's: the agent sees it, git in the loop still ignores it.
    let run = env
        .run([
            "run",
            "-q",
            &id,
            "--",
            "sh",
            "-c",
            "cat config.local.json; git status --porcelain",
        ])
        .ok();
    assert_eq!(run.stdout, "{\"port\": 5173}\n");
}

#[test]
fn a_profile_asks_for_secrets_and_only_the_operator_can_let_it() {
    let env = TestEnv::new();
    let repo = project(&env, ".env\n");
    fs::write(repo.join(".env"), format!("GITHUB_TOKEN={TOKEN}\n")).unwrap();
    env.run_in(&repo, ["new", "first"]).fails(1);
    let profile = env.write_profile("include_secrets = true\n");
    // A teammate's profile alone cannot send the person's secrets into a sandbox.
    env.run_in(&repo, ["new", "asks"])
        .fails(1)
        .stderr_has("include.allow_secrets");
    nothing_made(&env, &repo);
    // Nor can a synced layer allow it.
    env.run(["config", "set", "include.allow_secrets", "true"])
        .fails(2)
        .stderr_has("only the operator config");
    env.run([
        "config",
        "set",
        "--operator",
        "include.allow_secrets",
        "true",
    ])
    .ok();
    let id = env.new_loop(&repo, "allowed");
    assert_eq!(
        fs::read_to_string(env.workdir(&id).join(".env")).unwrap(),
        format!("GITHUB_TOKEN={TOKEN}\n")
    );
    // And the operator's word alone copies nothing the profile did not ask for.
    fs::write(&profile, "").unwrap();
    env.run_in(&repo, ["new", "not asked"]).fails(1);
}

#[test]
fn a_link_is_not_followed_and_a_file_past_the_bound_is_refused() {
    let env = TestEnv::new();
    let repo = project(&env, "config.local.json\nlinked.json\nbig.bin\n");
    let secret = env.root.join("host-secret.json");
    fs::write(&secret, "host only\n").unwrap();
    std::os::unix::fs::symlink(&secret, repo.join("linked.json")).unwrap();
    fs::write(repo.join("big.bin"), vec![b'x'; 4096]).unwrap();
    env.run(["config", "set", "--operator", "include.max_file_size", "1K"])
        .ok();
    let run = env.run_in(&repo, ["new", "too big"]).fails(1);
    run.stderr_has("not copying big.bin into the loop: 4.0 KiB is more than include.max_file_size");
    nothing_made(&env, &repo);
    env.run([
        "config",
        "set",
        "--operator",
        "include.max_file_size",
        "10K",
    ])
    .ok();
    let run = env.run_in(&repo, ["new", "linked"]).ok();
    run.stderr_has("linked.json: not a regular file (a link is never followed): not copied");
    let id = run.stdout.trim().to_string();
    let wd = env.workdir(&id);
    assert!(fs::symlink_metadata(wd.join("linked.json")).is_err());
    assert!(wd.join("config.local.json").is_file());
    assert_eq!(fs::read(wd.join("big.bin")).unwrap().len(), 4096);
    // The total is bounded too.
    env.run([
        "config",
        "set",
        "--operator",
        "include.max_total_size",
        "2K",
    ])
    .ok();
    env.run_in(&repo, ["new", "too much"])
        .fails(1)
        .stderr_has("include.max_total_size");
    assert_eq!(env.loop_entries(), vec![id]);
}
