//! The peers' per-path scenarios replayed against git loop (issue 34): sandbox-runtime's
//! mandatory deny list (`test/sandbox/mandatory-deny-paths.test.ts`), its deny paths
//! through links (`test/sandbox/symlinked-deny-paths.test.ts`) and its user-written deny
//! globs (`test/sandbox/deny-glob-cwd-scope.test.ts`), and codex's protected `.git` and
//! `.codex` (`codex-rs/linux-sandbox/tests/suite/landlock.rs`). Each scenario is our own
//! test of the same situation, attempted from inside a sandbox started by `git loop run`,
//! next to the neighbour that must still work, and the host checked afterwards. Where
//! git loop answers differently on purpose, the comment says how.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use crate::common::TestEnv;
use crate::fspolicy::{attempts, setup, verdicts};

/// Commits links (name, target) in `repo`, as a project can carry them.
fn commit_links(env: &TestEnv, repo: &Path, links: &[(&str, &str)]) {
    for (name, target) in links {
        symlink(target, repo.join(name)).unwrap();
    }
    env.git(repo, ["add", "-A"]);
    env.git(repo, ["commit", "-q", "-m", "links"]);
}

const ORIGINAL: &str = "ORIGINAL\n";

/// sandbox-runtime `mandatory-deny-paths.test.ts`: "Dangerous files should be blocked",
/// "Git hooks and config should be blocked", "Dangerous directories should be blocked",
/// "Safe files should still be writable" (a plain file, `.claude/` outside
/// `commands`/`agents`, git's objects, refs and index: here a commit), "still blocks
/// writes to .git/hooks even when allowGitConfig is true" (our `allow_write` cannot open
/// `.git/config` or `.git/hooks/`: git-loop's own files in every loop, so srt's
/// "allows writes to .git/config when allowGitConfig is true" has no equivalent), "non-
/// existent .git/hooks deny does not turn .git into a file, breaking git" (a repository
/// made inside works), and "does not leave ghost dotfiles after command" (the working
/// tree's status is clean but for the work).
#[test]
fn srt_mandatory_deny_paths() {
    let dangerous = [
        ".bashrc",
        ".bash_profile",
        ".gitconfig",
        ".gitmodules",
        ".zshrc",
        ".zprofile",
        ".profile",
        ".ripgreprc",
        ".mcp.json",
        ".vscode/settings.json",
        ".idea/workspace.xml",
        ".claude/commands/test.md",
        ".claude/agents/test-agent.md",
    ];
    let mut files: Vec<(&str, &str)> = dangerous.iter().map(|f| (*f, ORIGINAL)).collect();
    files.extend([
        ("safe-file.txt", ORIGINAL),
        (".claude/some-other-file.txt", ORIGINAL),
    ]);
    let (env, _repo, id) = setup(&files);
    // The profile's word for every entry it may name does not reach git's own files.
    env.write_profile("[filesystem]\nallow_write = [\".git/hooks/\", \".git/config\"]\n");
    let mut script = String::new();
    for f in dangerous
        .iter()
        .chain([".git/config", ".git/hooks/pre-commit"].iter())
    {
        script.push_str(&format!("try {f} sh -c \"echo MODIFIED > '{f}'\"\n"));
    }
    script.push_str(
        r#"
try safe-file sh -c "echo MODIFIED > safe-file.txt"
try claude-other sh -c "echo MODIFIED > .claude/some-other-file.txt"
try git-commit sh -c "git add safe-file.txt .claude/some-other-file.txt && git commit -q -m safe"
try git-init-inside sh -c "git init -q /tmp/fresh && git -C /tmp/fresh status --porcelain"
"#,
    );
    let run = attempts(&env, &id, &script);
    let mut expected: Vec<(&str, bool)> = dangerous.iter().map(|f| (*f, false)).collect();
    expected.extend([
        (".git/config", false),
        (".git/hooks/pre-commit", false),
        ("safe-file", true),
        ("claude-other", true),
        ("git-commit", true),
        ("git-init-inside", true),
    ]);
    verdicts(&run, &expected);
    let work = env.workdir(&id);
    for f in dangerous {
        assert_eq!(fs::read_to_string(work.join(f)).unwrap(), ORIGINAL, "{f}");
    }
    assert!(!work.join(".git/hooks/pre-commit").exists());
    let config = fs::read_to_string(work.join(".git/config")).unwrap_or_default();
    assert!(!config.contains("MODIFIED"), "{config}");
    assert_eq!(
        fs::read_to_string(work.join("safe-file.txt")).unwrap(),
        "MODIFIED\n"
    );
    // No ghost: the folders made for absent entries are empty, which git does not see.
    assert_eq!(env.git(&work, ["status", "--porcelain"]), "");
    assert_eq!(
        env.git(&work, ["log", "-1", "--format=%s"]).trim(),
        "safe",
        "the commit made inside is on the loop's branch"
    );
}

/// sandbox-runtime `symlinked-deny-paths.test.ts` "e2e: sandbox starts with a symlinked
/// .claude and still denies writes through it" (and "the rest of the allowed area stays
/// writable"), and codex `landlock.rs` `sandbox_blocks_codex_symlink_replacement_attack`
/// (`.codex` a link to a decoy folder, a write to `.codex/config.toml` refused), with the
/// place the link leads to refused under its own name too. srt's "e2e: a cyclic .claude
/// stops the sandbox instead of leaving the path writable" plays differently here: a
/// cyclic link leads nowhere a write can land, so the run starts; the link can be removed
/// (its parent is the writable working tree) but not replaced by a real folder, which
/// pid 1 refuses to make there; removing it is flagged by `review` and refused by `merge`
/// without the person's word.
#[test]
fn srt_and_codex_links_into_protected_folders() {
    let (env, repo, _) = setup(&[
        ("dotfiles/claude/commands/go.md", ORIGINAL),
        ("dotfiles/other.txt", ORIGINAL),
        ("decoy/config.toml", ORIGINAL),
        ("src/ok.txt", ORIGINAL),
    ]);
    commit_links(
        &env,
        &repo,
        &[
            (".claude", "dotfiles/claude"),
            (".codex", "decoy"),
            (".husky", ".husky-x"),
            (".husky-x", ".husky"),
        ],
    );
    let id = env.new_loop(&repo, "links");
    let run = attempts(
        &env,
        &id,
        r#"
try claude-through-link sh -c "echo evil > .claude/commands/evil.md"
try claude-target sh -c "echo evil > dotfiles/claude/commands/evil.md"
try claude-agents-through-link sh -c "mkdir -p .claude/agents && echo evil > .claude/agents/a.md"
try claude-neighbour sh -c "echo ok > dotfiles/claude/settings.local.json"
try dotfiles-neighbour sh -c "echo more >> dotfiles/other.txt"
try claude-target-rename mv dotfiles d2
try codex-through-link sh -c "echo denied > .codex/config.toml"
try codex-target sh -c "echo denied >> decoy/config.toml"
try area-neighbour sh -c "echo more >> src/ok.txt"
try husky-cycle sh -c "echo x > .husky/pre-commit"
try husky-replaced sh -c "rm -f .husky && mkdir -p .husky && echo planted > .husky/pre-commit"
try commit sh -c "git add -A && git commit -q -m work"
"#,
    );
    verdicts(
        &run,
        &[
            ("claude-through-link", false),
            ("claude-target", false),
            ("claude-agents-through-link", false),
            ("claude-neighbour", true),
            ("dotfiles-neighbour", true),
            ("claude-target-rename", false),
            ("codex-through-link", false),
            ("codex-target", false),
            ("area-neighbour", true),
            ("husky-cycle", false),
            ("husky-replaced", false),
            ("commit", true),
        ],
    );
    let work = env.workdir(&id);
    assert!(!work.join("dotfiles/claude/commands/evil.md").exists());
    assert!(!work.join("dotfiles/claude/agents/a.md").exists());
    assert_eq!(
        fs::read_to_string(work.join("decoy/config.toml")).unwrap(),
        ORIGINAL
    );
    assert!(work.join(".claude").is_symlink() && work.join(".codex").is_symlink());
    let mounts = env.run(["show", &id, "--mounts"]).ok();
    mounts.stdout_has("(mandatory: .codex/ through a link)");
    mounts.stdout_has("(mandatory: .claude/commands/ through a link)");

    assert!(fs::symlink_metadata(work.join(".husky")).is_err());
    let review = env.run(["review", &id]).ok();
    review.stdout_has("policy   .husky  runs when the project is opened or built");
    assert!(!review.stdout.contains("pre-commit"), "{}", review.stdout);
    let main_before = env.rev(&repo, "main");
    env.run(["merge", &id])
        .fails(1)
        .stderr_has("--accept-policy .husky");
    assert_eq!(env.rev(&repo, "main"), main_before);
}

/// sandbox-runtime `deny-glob-cwd-scope.test.ts`, each of its cases: a user-written
/// `denyWrite` glob `**/.env` blocks an overwrite below the project and elsewhere in the
/// writable tree (srt's `it.failing` "outside cwd" cases hold here: a rule covers the
/// whole working tree), an absolute entry is enforced, a write matching no rule succeeds;
/// `denyRead` `**/secret.txt` likewise, with a read matching no rule succeeding.
#[test]
fn srt_user_written_deny_globs() {
    let (env, _repo, id) = setup(&[
        ("proj/.env", ORIGINAL),
        ("proj/sub/.env", ORIGINAL),
        ("proj/secret.txt", ORIGINAL),
        ("outside/.env", ORIGINAL),
        ("outside/secret.txt", ORIGINAL),
        ("outside/public.txt", ORIGINAL),
        ("outside/safe.txt", ORIGINAL),
        ("outside/abs.txt", ORIGINAL),
        ("outside/abs-read.txt", ORIGINAL),
    ]);
    let inside = format!("/loopat/loop/{id}/workdir");
    env.write_profile(&format!(
            "[filesystem]\ndeny_write = [\"**/.env\", \"{inside}/outside/abs.txt\"]\ndeny_read = [\"**/secret.txt\", \"{inside}/outside/abs-read.txt\"]\n"
        ),
    );
    let run = attempts(
        &env,
        &id,
        r#"
try env-under-project sh -c "echo MODIFIED > proj/sub/.env"
try env-at-project sh -c "echo MODIFIED > proj/.env"
try env-elsewhere sh -c "echo MODIFIED > outside/.env"
try absolute-entry sh -c "echo MODIFIED > outside/abs.txt"
try unmatched-write sh -c "echo MODIFIED > outside/safe.txt"
try secret-under-project cat proj/secret.txt
try secret-elsewhere cat outside/secret.txt
try absolute-read-entry cat outside/abs-read.txt
try unmatched-read cat outside/public.txt
"#,
    );
    verdicts(
        &run,
        &[
            ("env-under-project", false),
            ("env-at-project", false),
            ("env-elsewhere", false),
            ("absolute-entry", false),
            ("unmatched-write", true),
            ("secret-under-project", false),
            ("secret-elsewhere", false),
            ("absolute-read-entry", false),
            ("unmatched-read", true),
        ],
    );
    let work = env.workdir(&id);
    for f in [
        "proj/.env",
        "proj/sub/.env",
        "outside/.env",
        "outside/abs.txt",
    ] {
        assert_eq!(fs::read_to_string(work.join(f)).unwrap(), ORIGINAL, "{f}");
    }
    assert_eq!(
        fs::read_to_string(work.join("outside/safe.txt")).unwrap(),
        "MODIFIED\n"
    );
}
