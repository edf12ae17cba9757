//! review, publish, merge, distill, autocommit, cron, pr: proposals become merges.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

use crate::common::TestEnv;

/// A note committed on the loop's notes branch (as the agent would, inside).
fn note(env: &TestEnv, id: &str, file: &str, text: &str) {
    env.commit_file(&env.loop_notes(id), file, text, &format!("note {file}"));
}

fn setup() -> (TestEnv, std::path::PathBuf) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    (env, repo)
}

#[test]
fn publish_fast_forwards_trunk_and_updates_the_checkout() {
    let (env, repo) = setup();
    let id = env.new_loop(&repo, "notes");
    note(&env, &id, "memory/topic.md", "a fact\n");
    let tip = env.rev(&env.loop_notes(&id), "HEAD").unwrap();
    let before = env.rev(&env.notes(), "main").unwrap();

    let dry = env.run(["publish", &id, "--dry-run"]).ok();
    dry.stdout_has("would be fast-forwarded");
    assert_eq!(env.rev(&env.notes(), "main").unwrap(), before);

    env.run(["publish", &id])
        .ok()
        .stdout_has("notes: main fast-forwarded");
    assert_eq!(env.rev(&env.notes(), "main").unwrap(), tip);
    assert_eq!(
        fs::read_to_string(env.notes().join("memory/topic.md")).unwrap(),
        "a fact\n"
    );
    assert_eq!(env.git(&env.notes(), ["status", "--porcelain"]), "");
    env.run(["publish", &id]).ok().stdout_has("nothing to do");
    env.git(&env.notes(), ["fsck", "--strict", "--no-dangling"]);
    let show = env.run(["show", &id, "--json"]).ok().json();
    assert_eq!(show["state"], "published");
}

#[test]
fn publish_makes_a_merge_commit_when_trunk_moved() {
    let (env, repo) = setup();
    let a = env.new_loop(&repo, "a");
    let b = env.new_loop(&repo, "b");
    note(&env, &a, "a.md", "a\n");
    note(&env, &b, "b.md", "b\n");
    env.run(["publish", &a]).ok();
    env.run(["publish", &b])
        .ok()
        .stdout_has("notes: main merged");
    let parents = env.git(&env.notes(), ["rev-list", "--parents", "-1", "main"]);
    assert_eq!(
        parents.split_whitespace().count(),
        3,
        "a merge commit: {parents}"
    );
    assert!(env.notes().join("a.md").is_file() && env.notes().join("b.md").is_file());
    assert_eq!(env.git(&env.notes(), ["status", "--porcelain"]), "");
}

#[test]
fn a_conflict_changes_nothing_and_says_how_to_resolve() {
    let (env, repo) = setup();
    let a = env.new_loop(&repo, "a");
    let b = env.new_loop(&repo, "b");
    note(&env, &a, "focus/plan.md", "# Plan\n- from a\n");
    note(&env, &b, "focus/plan.md", "# Plan\n- from b\n");
    env.run(["publish", &a]).ok();
    let trunk = env.rev(&env.notes(), "main").unwrap();
    env.run(["publish", &b])
        .fails(1)
        .stderr_has("conflicts in focus/plan.md")
        .stderr_has(&format!("git loop shell {b}"))
        .stderr_has("rebase origin/main");
    assert_eq!(env.rev(&env.notes(), "main").unwrap(), trunk);
    assert_eq!(env.git(&env.notes(), ["status", "--porcelain"]), "");

    // Resolved the way the hint says, inside the loop's sandbox.
    let script = "git fetch -q origin && git rebase -q origin/main; \
                  printf '# Plan\\n- from a\\n- from b\\n' > focus/plan.md && git add focus/plan.md && \
                  GIT_EDITOR=true git rebase --continue >/dev/null";
    env.run([
        "run",
        "-q",
        &b,
        "--net",
        "none",
        "--",
        "sh",
        "-c",
        &format!("cd /loopat/context/notes && {script}"),
    ])
    .ok();
    env.run(["publish", &b]).ok().stdout_has("fast-forwarded");
    assert_eq!(
        fs::read_to_string(env.notes().join("focus/plan.md")).unwrap(),
        "# Plan\n- from a\n- from b\n"
    );
}

/// Append-only notes files (`inbox.md`, `memory/MEMORY.md`) merge as the union of both
/// sides' lines; other files still conflict; the list is configurable, and a repository's
/// own .gitattributes for a file wins.
#[test]
fn appends_to_the_inbox_from_two_loops_both_land() {
    let (env, repo) = setup();
    env.run(["init"]).ok();
    // As `init` makes them.
    assert_eq!(
        fs::read_to_string(env.notes().join("inbox.md")).unwrap(),
        "# Inbox\n"
    );
    env.commit_file(&env.notes(), "memory/MEMORY.md", "# Memory\n", "memory");
    let a = env.new_loop(&repo, "a");
    let b = env.new_loop(&repo, "b");
    let c = env.new_loop(&repo, "c");
    note(&env, &a, "inbox.md", "# Inbox\n- from a\n");
    note(&env, &a, "memory/MEMORY.md", "# Memory\n- [a](a.md)\n");
    note(&env, &b, "inbox.md", "# Inbox\n- from b\n");
    note(&env, &b, "memory/MEMORY.md", "# Memory\n- [b](b.md)\n");
    note(&env, &c, "inbox.md", "# Inbox\n- from c\n");
    env.run(["publish", &a]).ok();
    env.run(["publish", &b])
        .ok()
        .stdout_has("notes: main merged");
    assert_eq!(
        fs::read_to_string(env.notes().join("inbox.md")).unwrap(),
        "# Inbox\n- from a\n- from b\n"
    );
    assert_eq!(
        fs::read_to_string(env.notes().join("memory/MEMORY.md")).unwrap(),
        "# Memory\n- [a](a.md)\n- [b](b.md)\n"
    );
    assert_eq!(env.git(&env.notes(), ["status", "--porcelain"]), "");

    // The team's own attributes say otherwise for the inbox: a conflict, nothing changed.
    env.commit_file(&env.notes(), ".gitattributes", "inbox.md -merge\n", "attrs");
    let trunk = env.rev(&env.notes(), "main").unwrap();
    env.run(["publish", &c])
        .fails(1)
        .stderr_has("conflicts in inbox.md");
    assert_eq!(env.rev(&env.notes(), "main").unwrap(), trunk);

    // Configured away in the team's config: a conflict too.
    env.git(&env.notes(), ["rm", "-q", ".gitattributes"]);
    env.git(&env.notes(), ["commit", "-q", "-m", "no attrs"]);
    let knowledge = env.ws.join("context/knowledge");
    env.commit_file(
        &knowledge,
        ".loopat/config.toml",
        "[publish]\nunion = [\"memory/MEMORY.md\"]\n",
        "team config",
    );
    env.run(["publish", &c])
        .fails(1)
        .stderr_has("conflicts in inbox.md");
}

#[test]
fn sixteen_loops_publishing_at_once_all_land() {
    let (env, repo) = setup();
    let ids: Vec<String> = (0..16)
        .map(|i| {
            let id = env.new_loop(&repo, &format!("parallel {i}"));
            note(&env, &id, &format!("n{i}.md"), &format!("{i}\n"));
            id
        })
        .collect();
    let children: Vec<_> = ids
        .iter()
        .map(|id| {
            env.command()
                .current_dir(&env.root)
                .args(["publish", id])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let log = env.git(&env.notes(), ["log", "--format=%s", "main"]);
    for i in 0..16 {
        assert!(
            log.contains(&format!("note n{i}.md")),
            "note {i} lost:\n{log}"
        );
        assert!(env.notes().join(format!("n{i}.md")).is_file());
    }
    assert_eq!(env.git(&env.notes(), ["status", "--porcelain"]), "");
    env.git(&env.notes(), ["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn merge_into_the_checked_out_base_branch() {
    let (env, repo) = setup();
    let id = env.new_loop(&repo, "feature");
    env.commit_file(&env.workdir(&id), "feature.c", "int f;\n", "feature");
    let tip = env.rev(&env.workdir(&id), "HEAD").unwrap();
    let main = env.rev(&repo, "main").unwrap();
    env.run(["merge", &id, "--dry-run"])
        .ok()
        .stdout_has("would be fast-forwarded");
    assert_eq!(env.rev(&repo, "main").unwrap(), main);

    // A local change that the merge would overwrite: refused, nothing moves.
    fs::write(repo.join("feature.c"), "mine\n").unwrap();
    env.run(["merge", &id])
        .fails(1)
        .stderr_has("local changes the merge would overwrite");
    assert_eq!(env.rev(&repo, "main").unwrap(), main);
    fs::remove_file(repo.join("feature.c")).unwrap();

    // A local change elsewhere survives.
    fs::write(repo.join("README.md"), "# mine\n").unwrap();
    env.run(["merge", &id])
        .ok()
        .stdout_has("code: main fast-forwarded");
    assert_eq!(env.rev(&repo, "main").unwrap(), tip);
    assert_eq!(
        fs::read_to_string(repo.join("feature.c")).unwrap(),
        "int f;\n"
    );
    assert_eq!(
        fs::read_to_string(repo.join("README.md")).unwrap(),
        "# mine\n"
    );
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), " M README.md\n");
    assert_eq!(
        env.run(["show", &id, "--json"]).ok().json()["state"],
        "merged"
    );
}

#[test]
fn merge_squash_into_another_branch_keeps_the_commits() {
    let (env, repo) = setup();
    env.git(&repo, ["branch", "release"]);
    let id = env.new_loop(&repo, "squashed");
    env.commit_file(&env.workdir(&id), "one.c", "1\n", "one");
    env.commit_file(&env.workdir(&id), "two.c", "2\n", "two");
    env.git(
        &repo,
        ["commit", "-q", "--allow-empty", "-m", "release moved"],
    );
    let tip = env.rev(&env.workdir(&id), "HEAD").unwrap();
    env.run(["merge", &id, "--into", "release", "--squash"])
        .ok()
        .stdout_has("code: release merged");
    let parents = env.git(&repo, ["rev-list", "--parents", "-1", "release"]);
    assert_eq!(
        parents.split_whitespace().count(),
        2,
        "one parent: {parents}"
    );
    assert_eq!(env.git(&repo, ["show", "release:two.c"]), "2\n");
    assert_eq!(
        env.rev(&repo, &format!("refs/git-loop/backup/{id}"))
            .unwrap(),
        tip
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn review_lists_and_shows_proposals_without_running_the_loops_config() {
    let (env, repo) = setup();
    let id = env.new_loop(&repo, "proposal");
    let quiet = env.new_loop(&repo, "nothing");
    env.commit_file(&env.workdir(&id), "src/new.c", "int n;\n", "code change");
    note(&env, &id, "memory/x.md", "x\n");
    fs::write(env.workdir(&id).join("wip.c"), "wip\n").unwrap();
    // Planted: a review must never run this on the host.
    let marker = env.root.join("PWNED");
    let mut config = fs::OpenOptions::new()
        .append(true)
        .open(env.workdir(&id).join(".git/config"))
        .unwrap();
    use std::io::Write;
    writeln!(
        config,
        "[core]\n\tpager = touch {0}\n\tfsmonitor = touch {0}\n[diff]\n\texternal = touch {0}",
        marker.display()
    )
    .unwrap();

    let list = env.run(["review"]).ok();
    assert!(
        list.stdout.contains(&id)
            && list.stdout.contains("code +1 (1 files)")
            && list.stdout.contains("notes +1"),
        "{}",
        list.stdout
    );
    assert!(!list.stdout.contains(&quiet));
    let json = env.run(["review", "--json"]).ok().json();
    let item = &json.as_array().unwrap()[0];
    assert_eq!(item["id"], id.as_str());
    assert_eq!(item["code"]["ahead"], 1);
    assert_eq!(item["code"]["files"][0], "src/new.c");
    assert_eq!(item["notes"]["files"][0], "memory/x.md");
    assert_eq!(item["uncommitted"][0], "code:wip.c");

    let one = env.run(["review", &id]).ok();
    one.stdout_has("== code: loop/")
        .stdout_has("+int n;")
        .stdout_has("== notes:")
        .stdout_has("== code: 1 uncommitted")
        .stdout_has("wip.c");
    env.run(["review", &id, "--name-only"])
        .ok()
        .stdout_has("src/new.c");
    env.run(["review", &id, "--stat"])
        .ok()
        .stdout_has("src/new.c | 1 +");
    env.run(["publish", &id]).ok();
    env.run(["merge", &id]).ok();
    assert!(!marker.exists(), "a planted command ran on the host");
}

#[test]
fn autocommit_commits_inside_skips_busy_repos_and_refuses_secrets() {
    let (env, repo) = setup();
    let id = env.new_loop(&repo, "auto");
    let busy = env.new_loop(&repo, "busy");
    fs::write(env.workdir(&id).join("work.c"), "int w;\n").unwrap();
    fs::write(env.workdir(&id).join("key.pem"), "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n").unwrap();
    fs::write(env.loop_notes(&id).join("inbox.md"), "# Inbox\n- auto\n").unwrap();
    fs::write(env.workdir(&busy).join("x.c"), "x\n").unwrap();
    fs::write(
        env.workdir(&busy).join(".git/MERGE_HEAD"),
        env.rev(&repo, "HEAD").unwrap(),
    )
    .unwrap();
    fs::write(env.ws.join("personal/tester/memory/mine.md"), "personal\n").unwrap();

    // The busy loop is a warning, and the run as a whole says it did not commit it.
    let run = env.run(["autocommit", "--all"]).fails(1);
    run.stderr_has("not committing key.pem")
        .stderr_has(&format!(
            "{busy} code: not committed, a merge is in progress"
        ))
        .stderr_has("personal: committed 1 path")
        .stderr_has("error: 1 loop could not be committed");
    let wd = env.workdir(&id);
    assert_eq!(
        env.git(&wd, ["log", "-1", "--format=%an|%s"]).trim(),
        "git loop|autocommit: 1 changed path"
    );
    assert_eq!(env.git(&wd, ["status", "--porcelain"]), "?? key.pem\n");
    assert_eq!(env.git(&env.loop_notes(&id), ["status", "--porcelain"]), "");
    // Imported: the origin has the autocommit.
    assert_eq!(env.rev(&repo, &format!("loop/{id}")), env.rev(&wd, "HEAD"));
    assert_eq!(
        env.git(&env.workdir(&busy), ["status", "--porcelain"]),
        "?? x.c\n"
    );
    assert_eq!(
        env.git(&env.ws.join("personal/tester"), ["status", "--porcelain"]),
        ""
    );

    // --publish-notes publishes what merges cleanly.
    note(&env, &busy, "busy.md", "b\n");
    env.run(["autocommit", &id, &busy, "--publish-notes"])
        .fails(1);
    assert!(env.notes().join("busy.md").is_file());
    assert_eq!(
        fs::read_to_string(env.notes().join("inbox.md")).unwrap(),
        "# Inbox\n- auto\n"
    );
}

/// A real tree: an unignored `node_modules/` of 20,000 new files and a 200 MB new file
/// (sparse) beside one source change. `--dry-run` says what would be committed and commits
/// nothing; autocommit then commits the source change alone, names what it left out with
/// the settings that decided it, and says only what it did. The same through cron's command
/// line, quiet: the notices stay. (That no path reaches a command line, where 20,000 of
/// them overflowed bwrap's, is `autocommit::tests::paths_never_reach_a_command_line`.)
#[test]
fn autocommit_leaves_out_an_unignored_node_modules_and_a_large_new_file() {
    let (env, repo) = setup();
    let id = env.new_loop(&repo, "real tree");
    let wd = env.workdir(&id);
    for package in 0..200 {
        let dir = wd.join(format!("node_modules/pkg{package}/lib"));
        fs::create_dir_all(&dir).unwrap();
        for file in 0..100 {
            fs::write(dir.join(format!("f{file}.js")), "module.exports = 1;\n").unwrap();
        }
    }
    let big = fs::File::create(wd.join("big.bin")).unwrap();
    big.set_len(200 << 20).unwrap();
    drop(big);
    fs::write(wd.join("work.c"), "int work;\n").unwrap();
    let head = env.rev(&wd, "HEAD").unwrap();
    const BOUND: Duration = Duration::from_secs(120);

    let dry = env
        .run_within(BOUND, ["autocommit", "--dry-run", &id])
        .run
        .ok();
    assert_eq!(
        dry.stdout,
        format!("{id} code: would commit 1 path:\n  work.c\n")
    );
    dry.stderr_has(&format!(
        "warning: {id} code: left out node_modules/ (20000 new files, more than autocommit.max_new_files_per_folder = 1000)"
    ))
    .stderr_has(&format!(
        "warning: {id} code: left out big.bin (200 MiB, larger than autocommit.max_file_size = 10 MiB)"
    ));
    assert_eq!(env.rev(&wd, "HEAD").unwrap(), head, "a dry run committed");

    let run = env.run_within(BOUND, ["autocommit", &id]).run.ok();
    run.stderr_has(&format!("{id} code: left out node_modules/"))
        .stderr_has(&format!("{id} code: left out big.bin"))
        .stderr_has(&format!("{id} code: committed 1 path"));
    assert!(!run.stderr.contains("Exceeded"), "{}", run.stderr);
    assert_eq!(
        env.git(
            &wd,
            ["diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD"]
        )
        .trim(),
        "work.c"
    );
    assert_eq!(env.rev(&repo, &format!("loop/{id}")), env.rev(&wd, "HEAD"));
    let status = env.git(&wd, ["status", "--porcelain"]);
    assert_eq!(status, "?? big.bin\n?? node_modules/\n");

    // cron's command line (`cron install` schedules it): quiet, every loop, unattended.
    // What was left out is said again; what changed is committed.
    fs::write(wd.join("work.c"), "int work = 2;\n").unwrap();
    let cron = env
        .run_within(BOUND, ["autocommit", "--all", "--quiet"])
        .run
        .ok();
    cron.stderr_has(&format!("{id} code: left out node_modules/"))
        .stderr_has(&format!("{id} code: left out big.bin"));
    assert!(!cron.stderr.contains("committed"), "{}", cron.stderr);
    assert_eq!(
        env.git(
            &wd,
            ["diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD"]
        )
        .trim(),
        "work.c"
    );
    assert_eq!(
        env.git(&wd, ["status", "--porcelain"]),
        "?? big.bin\n?? node_modules/\n"
    );
    // Bounds raised in the configuration take what they admit: a 12 MB file left out at
    // the default is committed under `max_file_size = "20M"`.
    let medium = fs::File::create(wd.join("medium.bin")).unwrap();
    medium.set_len(12 << 20).unwrap();
    drop(medium);
    env.run_within(BOUND, ["autocommit", &id])
        .run
        .ok()
        .stderr_has(&format!("{id} code: left out medium.bin (12 MiB"));
    let config = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "[autocommit]\nmax_file_size = \"20M\"\n").unwrap();
    env.run_within(BOUND, ["autocommit", &id])
        .run
        .ok()
        .stderr_has(&format!("{id} code: committed 1 path"));
    assert_eq!(
        env.git(&wd, ["status", "--porcelain"]),
        "?? big.bin\n?? node_modules/\n"
    );
    // review names a few of them and how many more, on one short line; --json all.
    let review = env.run_within(BOUND, ["review", &id]).run.ok();
    let line = review
        .stdout
        .lines()
        .find(|l| l.starts_with("changed or untracked: "))
        .unwrap_or_else(|| panic!("{}", review.stdout));
    assert_eq!(
        line,
        "changed or untracked: big.bin, node_modules/pkg0/lib/f0.js, node_modules/pkg0/lib/f1.js, node_modules/pkg0/lib/f10.js, node_modules/pkg0/lib/f11.js and 19996 more"
    );
    review.stderr_has(&format!("every path: git loop review {id} --json"));
    let json = env
        .run_within(BOUND, ["review", &id, "--json"])
        .run
        .ok()
        .json();
    assert_eq!(json["uncommitted"].as_array().unwrap().len(), 20001);
}

/// git's lock files in a loop's repositories belong to the loop's live runs: left by a
/// killed git, they are removed (and said to be) once no run is alive, by autocommit and
/// by `doctor --fix`, whatever their age; while a run lives, they are left alone.
#[test]
fn stale_git_locks_in_loops_are_judged_by_their_owner() {
    let (env, repo) = setup();
    env.agent_login();
    let id = env.new_loop(&repo, "locks");
    let wd = env.workdir(&id);
    fs::write(wd.join("work.c"), "int w;\n").unwrap();
    // While a run of the loop is alive, the locks may be its own: left alone. (Made once
    // it is up: a run that starts with none of the loop alive removes such leftovers.)
    let mut live = env
        .command()
        .current_dir(&env.root)
        .args([
            "run",
            &id,
            "--",
            "sh",
            "-c",
            ": > .ready; i=0; while [ ! -e .go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut waited = 0;
    while !wd.join(".ready").exists() && waited < 600 {
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    assert!(wd.join(".ready").exists(), "the run never started");
    for lock in [
        "index.lock",
        "HEAD.lock",
        "refs/heads/loop/next-index-4.lock",
    ] {
        fs::write(wd.join(".git").join(lock), "").unwrap();
    }
    let fixed = env.run(["doctor", "--fix"]);
    assert!(!fixed.stdout.contains("index.lock"), "{}", fixed.stdout);
    env.run(["autocommit", &id])
        .fails(1)
        .stderr_has(&format!("{id} code: not committed, index.lock exists"));
    assert!(wd.join(".git/index.lock").exists());
    fs::write(wd.join(".go"), "").unwrap();
    assert!(live.wait().unwrap().success());
    fs::remove_file(wd.join(".ready")).unwrap();
    fs::remove_file(wd.join(".go")).unwrap();

    // No run is alive: doctor names every lock at once (no waiting for them to age)...
    let doctor = env.run(["doctor"]);
    assert_eq!(doctor.code, 1, "{}", doctor.stdout);
    for lock in ["index.lock", "HEAD.lock", "next-index-4.lock"] {
        assert!(
            doctor
                .stdout
                .lines()
                .any(|l| l.starts_with("problem") && l.contains(lock)),
            "{lock} not reported:\n{}",
            doctor.stdout
        );
    }
    // ...and autocommit removes them, says so, and commits.
    let run = env.run(["autocommit", &id]).ok();
    run.stderr_has("removed the stale")
        .stderr_has(&format!("{id} code: committed 1 path"));
    for lock in [
        "index.lock",
        "HEAD.lock",
        "refs/heads/loop/next-index-4.lock",
    ] {
        assert!(!wd.join(".git").join(lock).exists(), "{lock} stayed");
    }
    assert_eq!(env.git(&wd, ["status", "--porcelain"]), "");
    env.run(["doctor"]).ok().stdout_has("no problems found");
}

#[test]
fn distill_loops_write_knowledge_and_publish_it() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let rec = env.run(["distill", "--no-agent", "--json"]).ok().json();
    let id = rec["id"].as_str().unwrap().to_string();
    assert_eq!(rec["kind"], "distill");
    let k = env.loop_dir(&id).join("context/knowledge");
    assert_eq!(
        env.git(&k, ["symbolic-ref", "--short", "HEAD"]).trim(),
        format!("loop/{id}")
    );
    let script = "pwd; echo '# Facts' > facts.md && git add facts.md && git commit -qm distilled; \
                  touch /loopat/context/notes/x 2>/dev/null || echo notes-ro";
    let run = env
        .run(["run", "-q", &id, "--net", "none", "--", "sh", "-c", script])
        .ok();
    assert_eq!(run.stdout, "/loopat/context/knowledge\nnotes-ro\n");
    env.run(["publish", &id, "--knowledge"])
        .ok()
        .stdout_has("knowledge: main fast-forwarded");
    assert!(env.ws.join("context/knowledge/facts.md").is_file());
    env.run([
        "publish",
        &env.new_loop(&env.repo("app"), "code"),
        "--knowledge",
    ])
    .fails(2)
    .stderr_has("not a distill loop");
}

#[test]
fn cron_installs_one_entry_and_leaves_the_rest() {
    let env = TestEnv::new();
    let tab = env.root.join("crontab.txt");
    fs::write(&tab, "MAILTO=me\n0 3 * * * backup.sh\n").unwrap();
    let fake = env.root.join("fake-crontab");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -l ]; then cat {0}; else cat > {0}; fi\n",
            tab.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let run = |args: &[&str]| {
        let out = env
            .command()
            .current_dir(&env.root)
            .env("GIT_LOOP_CRONTAB", &fake)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(run(&["cron", "status"]).0, 1);
    assert_eq!(run(&["cron", "install"]).0, 0);
    assert_eq!(run(&["cron", "install", "--every", "10m"]).0, 0);
    let text = fs::read_to_string(&tab).unwrap();
    assert_eq!(text.matches("git-loop autocommit").count(), 1, "{text}");
    assert!(
        text.starts_with("MAILTO=me\n0 3 * * * backup.sh\n*/10 * * * * GIT_LOOP_HOME="),
        "{text}"
    );
    assert!(text.contains("autocommit --all --quiet"));
    let (code, out) = run(&["cron", "status"]);
    assert_eq!(code, 0);
    assert!(out.contains("*/10"));
    assert_eq!(run(&["cron", "uninstall"]).0, 0);
    assert_eq!(
        fs::read_to_string(&tab).unwrap(),
        "MAILTO=me\n0 3 * * * backup.sh\n"
    );
}

#[test]
fn pr_pushes_and_opens_with_gh_or_prints_the_url() {
    let (env, repo) = setup();
    let forge = env.root.join("forge.git");
    env.git(&env.root, ["init", "-q", "--bare", forge.to_str().unwrap()]);
    env.git(
        &repo,
        ["remote", "add", "origin", "https://github.com/team/app.git"],
    );
    env.git(
        &repo,
        [
            "remote",
            "set-url",
            "--push",
            "origin",
            forge.to_str().unwrap(),
        ],
    );
    let id = env.new_loop(&repo, "pull request");
    env.commit_file(&env.workdir(&id), "pr.c", "int p;\n", "for review");

    // No gh: the branch is pushed and the compare URL printed.
    let run = env.run(["pr", &id]).ok();
    assert_eq!(
        run.stdout.trim(),
        format!("https://github.com/team/app/compare/main...loop/{id}?expand=1")
    );
    assert_eq!(
        env.rev(&forge, &format!("loop/{id}")),
        env.rev(&env.workdir(&id), "HEAD")
    );

    // A stand-in gh that is logged in records how it was called.
    let bin = env.root.join("bin");
    fs::create_dir(&bin).unwrap();
    let log = env.root.join("gh.log");
    fs::write(
        bin.join("gh"),
        format!("#!/bin/sh\necho \"$@\" >> {}\n", log.display()),
    )
    .unwrap();
    fs::set_permissions(bin.join("gh"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = env
        .command()
        .current_dir(&env.root)
        .env("PATH", path)
        .args(["pr", &id, "--draft"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = fs::read_to_string(&log).unwrap();
    assert!(calls.contains("auth status"), "{calls}");
    assert!(
        calls.contains(&format!(
            "pr create --head loop/{id} --base main --title pull request"
        )),
        "{calls}"
    );
    assert!(calls.trim_end().ends_with("--draft"), "{calls}");
    // Pushed, the commit outlives the local branch: rm may delete it without --force.
    env.run(["rm", &id, "--delete-branches"])
        .ok()
        .stderr_has(&format!("removed loop {id}"));
    assert!(env.rev(&repo, &format!("loop/{id}")).is_none());
    assert_eq!(
        env.rev(&forge, &format!("loop/{id}")),
        env.rev(&repo, &format!("refs/remotes/origin/loop/{id}"))
    );
}

/// kill -9 of git-loop's own process (not its group, as `kill -9 PID` does) during publish,
/// merge and autocommit, at random moments within how long each takes here: its git
/// children die with it, the origins stay sound, no commit is lost, doctor repairs what is
/// left (checked from outside), and a rerun completes. Kills that left nothing to repair
/// are counted apart; too few that did fails the test (crash.rs is the full harness).
#[test]
fn killed_at_random_points_nothing_is_lost() {
    let (env, repo) = setup();
    env.agent_login();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut random = |below: Duration| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        Duration::from_micros(seed % (below.as_micros() as u64).max(1))
    };
    // How long each command takes uninterrupted.
    let id = env.new_loop(&repo, "measure");
    note(&env, &id, "m.md", "m\n");
    fs::write(env.workdir(&id).join("m.c"), "m\n").unwrap();
    let mut took = Vec::new();
    for cmd in ["autocommit", "publish", "merge"] {
        let start = std::time::Instant::now();
        env.run([cmd, id.as_str()]).ok();
        took.push(start.elapsed());
    }
    let (mut landed, mut trials) = (0, 0);
    for trial in 0..12 {
        let id = env.new_loop(&repo, &format!("kill {trial}"));
        note(&env, &id, &format!("k{trial}.md"), "k\n");
        env.commit_file(&env.workdir(&id), &format!("k{trial}.c"), "k\n", "code");
        fs::write(env.workdir(&id).join(format!("auto{trial}.c")), "a\n").unwrap();
        for (i, cmd) in ["autocommit", "publish", "merge"].iter().enumerate() {
            trials += 1;
            let mut child = env
                .command()
                .current_dir(&env.root)
                .args([cmd, id.as_str()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(random(took[i]));
            let killed = child.kill().is_ok();
            let status = child.wait().unwrap();
            crate::crash::wait_for_runs_to_end(&env);
            crate::crash::wait_for_detached_git(&env);
            crate::crash::wait_for_workspace_lock(&env);
            use std::os::unix::process::ExitStatusExt;
            let left = crate::crash::scan(&env, &repo);
            if killed && status.signal() == Some(9) && !left.is_empty() {
                landed += 1;
            }
            // What was killed is repaired, then the same command completes.
            let doctor = env.run(["doctor", "--fix"]);
            assert!(
                !doctor.stdout.lines().any(|l| l.starts_with("problem")),
                "trial {trial} {cmd}:\n{}",
                doctor.stdout
            );
            let still = crate::crash::scan(&env, &repo);
            assert!(
                still.is_empty(),
                "trial {trial} {cmd}: doctor --fix left {still:?}\n{}",
                doctor.stdout
            );
            env.run([cmd, id.as_str()]).ok();
        }
        env.git(&repo, ["fsck", "--no-dangling"]);
        env.git(&env.notes(), ["fsck", "--no-dangling"]);
        assert_eq!(
            env.git(&env.notes(), ["status", "--porcelain"]),
            "",
            "trial {trial}"
        );
        assert!(
            env.notes().join(format!("k{trial}.md")).is_file(),
            "trial {trial}: note lost"
        );
        assert_eq!(
            fs::read_to_string(repo.join(format!("k{trial}.c"))).unwrap(),
            "k\n",
            "trial {trial}: code lost"
        );
        assert_eq!(
            fs::read_to_string(repo.join(format!("auto{trial}.c"))).unwrap(),
            "a\n",
            "trial {trial}: autocommit lost"
        );
        assert_eq!(
            env.git(&repo, ["status", "--porcelain"]),
            "",
            "trial {trial}"
        );
    }
    println!("{landed} of {trials} kills landed mid-operation");
    // How many land depends on the machine's load (a loaded machine spends more of each
    // command starting up, where a kill leaves nothing); here 6 to 15 of 36. Fewer than 3
    // means the delays miss the commands altogether.
    assert!(
        landed >= 3,
        "only {landed} of {trials} kills landed mid-operation: the test is not testing kills"
    );
}

#[test]
fn hooks_install_keeps_the_users_hooks_and_uninstall_removes_only_ours() {
    let (env, repo) = setup();
    env.run(["init"]).ok();
    let own = repo.join(".git/hooks/pre-commit");
    fs::create_dir_all(own.parent().unwrap()).unwrap();
    fs::write(&own, "#!/bin/sh\necho mine\n").unwrap();
    fs::set_permissions(&own, fs::Permissions::from_mode(0o755)).unwrap();
    // The personal repository uses core.hooksPath: respected.
    let personal = env.ws.join("personal/tester");
    env.git(&personal, ["config", "core.hooksPath", ".githooks"]);

    env.run(["hooks", "install", "--repo", repo.to_str().unwrap()])
        .ok();
    env.run(["hooks", "install", "--repo", repo.to_str().unwrap()])
        .ok()
        .stderr_has("up to date");
    let text = fs::read_to_string(&own).unwrap();
    assert!(
        text.contains("echo mine") && text.matches("# >>> git-loop >>>").count() == 1,
        "{text}"
    );
    assert!(personal.join(".githooks/pre-commit").is_file());
    assert!(env.notes().join(".git/hooks/pre-commit").is_file());
    // The guard works through the installed hook (git-loop is the binary under test).
    fs::write(repo.join("leak.txt"), "AKIAABCDEFGHIJKLMNOP\n").unwrap();
    env.git(&repo, ["add", "leak.txt"]);
    let bin_dir = std::path::Path::new(crate::common::BIN)
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let out = std::process::Command::new("git")
        .env_clear()
        .envs(env.envs())
        .env("PATH", &path)
        .current_dir(&repo)
        .args(["commit", "-q", "-m", "leak"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "the guard let a key through");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("mine")
            || String::from_utf8_lossy(&out.stderr).contains("AWS")
    );

    env.run(["hooks", "uninstall", "--repo", repo.to_str().unwrap()])
        .ok();
    assert_eq!(fs::read_to_string(&own).unwrap(), "#!/bin/sh\necho mine\n");
    assert!(!env.notes().join(".git/hooks/pre-commit").exists());
    assert!(!personal.join(".githooks/pre-commit").exists());
}

#[test]
fn cron_uses_a_systemd_user_timer_where_systemd_runs() {
    let env = TestEnv::new();
    let log = env.root.join("systemctl.log");
    let fake = env.root.join("fake-systemctl");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$@\" >> {}\n[ \"$2\" = is-active ] && echo active\nexit 0\n",
            log.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let run = |args: &[&str]| {
        let out = env
            .command()
            .current_dir(&env.root)
            .env("GIT_LOOP_SYSTEMCTL", &fake)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(run(&["cron", "install", "--every", "10m"]).0, 0);
    let units = env.home.join(".config/systemd/user");
    let timer = fs::read_to_string(units.join("git-loop-autocommit.timer")).unwrap();
    assert!(timer.contains("OnUnitActiveSec=10min"), "{timer}");
    let service = fs::read_to_string(units.join("git-loop-autocommit.service")).unwrap();
    assert!(
        service.contains("autocommit --all --quiet")
            && service.contains(&env.ws.display().to_string()),
        "{service}"
    );
    let (code, out) = run(&["cron", "status"]);
    assert_eq!((code, out.trim()), (0, "git-loop-autocommit.timer: active"));
    assert_eq!(run(&["cron", "uninstall"]).0, 0);
    assert!(!units.join("git-loop-autocommit.timer").exists());
    let calls = fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("--user enable --now git-loop-autocommit.timer"),
        "{calls}"
    );
    assert!(
        calls.contains("--user disable --now git-loop-autocommit.timer"),
        "{calls}"
    );
}
