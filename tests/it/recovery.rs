//! What interrupted commands leave, met by the next one: lock files named by their owner,
//! checkout updates finished only when proven, and doctor's reports of what it cannot fix.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;

use crate::common::TestEnv;

/// `git loop ARGS` in `dir`, killed at the failpoint `point` (it must get there).
fn killed_at(env: &TestEnv, dir: &Path, args: &[&str], point: &str) {
    assert!(run_to(env, dir, args, point), "{point} was not reached");
}

/// `git loop ARGS` in `dir` with the failpoint `point` armed; whether the kill came (a
/// timed point, `name@micros`, may come after the command has finished).
fn run_to(env: &TestEnv, dir: &Path, args: &[&str], point: &str) -> bool {
    use std::os::unix::process::ExitStatusExt;
    let status = env
        .command()
        .current_dir(dir)
        .args(args)
        .env("GIT_LOOP_FAILPOINT", point)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .status()
        .unwrap();
    match status.signal() {
        Some(libc::SIGKILL) => true,
        None if point.contains('@') && status.code() == Some(0) => false,
        other => panic!("{point}: the command ended with {status:?} ({other:?})"),
    }
}

#[test]
fn a_lock_file_in_the_users_repository_is_named_never_removed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "feature");
    env.commit_file(&env.workdir(&id), "feature.c", "int f;\n", "feature");
    let main = env.rev(&repo, "main").unwrap();

    // The user's git is at work (or was killed): the merge refuses and names the file.
    let index_lock = repo.join(".git/index.lock");
    fs::write(&index_lock, "").unwrap();
    let run = env.run(["merge", &id]);
    run.stderr_has(&index_lock.display().to_string())
        .stderr_has(&format!("`rm {}`", index_lock.display()));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!run.stderr.contains("local changes"), "{}", run.stderr);
    assert!(index_lock.exists(), "never removed");
    assert_eq!(env.rev(&repo, "main").unwrap(), main);
    fs::remove_file(&index_lock).unwrap();

    // A lock on the branch itself: named, not "kept moving".
    let ref_lock = repo.join(".git/refs/heads/main.lock");
    fs::write(&ref_lock, "").unwrap();
    let run = env.run(["merge", &id]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    run.stderr_has(&ref_lock.display().to_string());
    assert!(!run.stderr.contains("kept moving"), "{}", run.stderr);
    assert!(ref_lock.exists());
    assert_eq!(env.rev(&repo, "main").unwrap(), main);
    fs::remove_file(&ref_lock).unwrap();

    env.run(["merge", &id]).ok().stdout_has("fast-forwarded");
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
}

#[test]
fn stale_locks_in_the_notes_repository_are_removed_and_said() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "notes");
    env.commit_file(&env.loop_notes(&id), "memory/a.md", "a\n", "note");
    // What a publish killed inside `git update-ref` leaves.
    for lock in ["HEAD.lock", "refs/heads/main.lock", "index.lock"] {
        fs::write(env.notes().join(".git").join(lock), "").unwrap();
    }
    let run = env.run(["publish", &id]).ok();
    run.stdout_has("notes: main fast-forwarded");
    for lock in ["HEAD.lock", "refs/heads/main.lock", "index.lock"] {
        run.stderr_has(&format!(
            "removed the stale {}",
            env.notes().join(".git").join(lock).display()
        ));
        assert!(!env.notes().join(".git").join(lock).exists());
    }
    assert_eq!(env.git(&env.notes(), ["status", "--porcelain"]), "");
}

#[test]
fn a_killed_imports_lock_on_the_loops_branch_does_not_stop_the_next_import() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "notes");
    env.commit_file(&env.loop_notes(&id), "memory/a.md", "a\n", "note");
    // What an import killed inside its ref transaction leaves in the notes origin (seen in
    // the random-kill crash test: every later publish failed on it).
    let lock = env
        .notes()
        .join(".git/refs/heads/loop")
        .join(format!("{id}.lock"));
    fs::create_dir_all(lock.parent().unwrap()).unwrap();
    fs::write(&lock, "").unwrap();
    let run = env.run(["publish", &id]).ok();
    run.stdout_has("notes: main fast-forwarded");
    assert!(!lock.exists());
    assert_eq!(
        env.git(&env.notes(), ["log", "-1", "--format=%s", "main"])
            .trim(),
        "note"
    );
}

#[test]
fn merge_into_a_repository_whose_path_holds_a_newline() {
    let env = TestEnv::new();
    let repo = env.repo("ap\np");
    let id = env.new_loop(&repo, "newline");
    env.commit_file(&env.workdir(&id), "n.c", "int n;\n", "n");
    fs::write(repo.join("README.md"), "# mine\n").unwrap();
    env.run(["merge", &id]).ok().stdout_has("fast-forwarded");
    assert_eq!(fs::read_to_string(repo.join("n.c")).unwrap(), "int n;\n");
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), " M README.md\n");
}

/// A merge killed after git wrote the new files but before the index was replaced; the
/// user then edits one of the files the merge was writing. Recovery cannot prove that
/// file is the merge's: it stops, names it, keeps its journal, and doctor says so; once
/// the file is put back, recovery finishes and proves the checkout.
#[test]
fn a_recovery_that_cannot_prove_its_result_says_so_and_keeps_its_journal() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "half");
    for i in 0..20 {
        fs::write(
            env.workdir(&id).join(format!("f{i}.c")),
            format!("int f{i};\n"),
        )
        .unwrap();
    }
    env.commit_file(&env.workdir(&id), "f0.c", "int f0;\n", "twenty files");
    let tip = env.rev(&env.workdir(&id), "HEAD").unwrap();
    fs::write(repo.join("README.md"), "# mine\n").unwrap();

    killed_at(&env, &repo, &["merge", &id], "checkout:after-read-tree");
    let journal = env.ws.join("locks/checkout-code-app.pending");
    assert!(journal.is_file());
    assert_eq!(env.rev(&repo, "main").unwrap(), tip, "the branch moved");
    // The index is still the old one: git shows the merge's files as staged deletions.
    assert!(!env
        .git(&repo, ["diff", "--cached", "--name-only"])
        .is_empty());

    fs::write(repo.join("f7.c"), "my own f7\n").unwrap();
    let run = env.run(["merge", &id]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    run.stderr_has("f7.c")
        .stderr_has("cannot be proven")
        .stderr_has(&format!("`rm {}`", journal.display()));
    assert!(journal.is_file(), "the journal is kept");
    let doctor = env.run(["doctor", "--fix"]);
    assert_eq!(doctor.code, 1, "{}", doctor.stdout);
    assert!(
        doctor
            .stdout
            .lines()
            .any(|l| l.starts_with("problem") && l.contains("f7.c")),
        "{}",
        doctor.stdout
    );
    assert_eq!(
        fs::read_to_string(repo.join("f7.c")).unwrap(),
        "my own f7\n"
    );

    // Put back as the merge wrote it: recovery finishes and proves the result.
    fs::write(repo.join("f7.c"), "int f7;\n").unwrap();
    let run = env.run(["merge", &id]).ok();
    run.stderr_has("finished the interrupted checkout update")
        .stdout_has("nothing to do");
    assert!(!journal.exists());
    assert_eq!(env.git(&repo, ["diff", "--cached", "--name-only"]), "");
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), " M README.md\n");
    assert!(!repo.join(".git/index.lock").exists());
}

/// A merge killed while git writes its checkout leaves files half-written; the next merge
/// finishes them, keeps the user's own changes (an edit and a deletion), and doctor finds
/// nothing left. Checked with git, not by what git-loop says.
///
/// Deterministic: the merge is killed at the failpoint right after git's `read-tree`, and
/// the working tree is then put in the state a kill inside `read-tree` leaves, by hand
/// (git writes the files in index order: the first ones whole, one cut short, the rest not
/// yet there). A timer inside the checkout landed or not by the machine's speed.
#[test]
fn a_merge_killed_in_its_checkout_is_finished_by_the_next_merge() {
    let env = TestEnv::new();
    env.agent_login();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "many");
    let wd = env.workdir(&id);
    fs::create_dir_all(wd.join("many")).unwrap();
    let content = |i: usize| format!("{i}\n{}\n", "y".repeat(300));
    for i in 0..1000 {
        fs::write(wd.join(format!("many/f{i:03}.txt")), content(i)).unwrap();
    }
    env.git(&wd, ["add", "-A"]);
    env.git(&wd, ["commit", "-q", "-m", "many"]);
    fs::write(repo.join("README.md"), "# mine\n").unwrap();
    fs::remove_file(repo.join("main.c")).unwrap();

    assert!(run_to(
        &env,
        &repo,
        &["merge", &id],
        "checkout:after-read-tree"
    ));
    let journal = env.ws.join("locks/checkout-code-app.pending");
    assert!(journal.is_file(), "the journal the merge writes first");
    // The index is still the old one: the merge's files show as staged deletions.
    assert!(!env
        .git(&repo, ["diff", "--cached", "--name-only"])
        .is_empty());
    // As a kill in the middle of git's writing leaves it.
    for i in 500..1000 {
        fs::remove_file(repo.join(format!("many/f{i:03}.txt"))).unwrap();
    }
    fs::write(repo.join("many/f499.txt"), &content(499)[..7]).unwrap();

    let run = env.run(["merge", &id]).ok();
    run.stderr_has("finished the interrupted checkout update");
    assert!(!journal.exists());
    assert_eq!(env.git(&repo, ["diff", "--cached", "--name-only"]), "");
    assert_eq!(
        env.git(&repo, ["diff", "--name-status"]),
        "M\tREADME.md\nD\tmain.c\n"
    );
    assert_eq!(
        fs::read_to_string(repo.join("README.md")).unwrap(),
        "# mine\n"
    );
    for i in [0, 499, 500, 999] {
        assert_eq!(
            fs::read_to_string(repo.join(format!("many/f{i:03}.txt"))).unwrap(),
            content(i)
        );
    }
    assert!(crate::crash::scan(&env, &repo).is_empty());
    env.git(&repo, ["fsck", "--no-dangling"]);
    env.run(["doctor"]).ok().stdout_has("no problems found");
}

#[test]
fn doctor_rebuilds_a_stale_index_and_never_discards_edits() {
    let env = TestEnv::new();
    env.agent_login();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "n");
    env.commit_file(&env.loop_notes(&id), "memory/n.md", "n\n", "note");
    env.run(["publish", &id]).ok();
    let notes = env.notes();
    // The index an earlier version left: trunk's files, the index of the commit before.
    env.git(&notes, ["read-tree", "HEAD~1"]);
    let run = env.run(["doctor"]);
    assert_eq!(run.code, 1);
    run.stdout_has("index of the notes checkout")
        .stdout_has("is stale");
    env.run(["doctor", "--fix"])
        .ok()
        .stdout_has("rebuilt the stale index");
    assert_eq!(env.git(&notes, ["status", "--porcelain"]), "");

    // An edit made by hand: reported, and left as it is.
    fs::write(notes.join("memory/n.md"), "edited by hand\n").unwrap();
    let run = env.run(["doctor", "--fix"]);
    assert_eq!(run.code, 1);
    run.stdout_has("edits made there by hand")
        .stdout_has("memory/n.md");
    assert_eq!(
        fs::read_to_string(notes.join("memory/n.md")).unwrap(),
        "edited by hand\n"
    );
}

/// `rm` killed once its folder is renamed away: the loop is gone from `list` at once; the
/// next `rm` finishes it, branches included, and says so.
#[test]
fn an_interrupted_rm_is_finished_by_the_next_one() {
    let env = TestEnv::new();
    env.agent_login();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "gone");
    killed_at(&env, &repo, &["rm", "--delete-branches", &id], "rm:renamed");
    assert!(!env.loop_dir(&id).exists());
    let doctor = env.run(["doctor"]);
    assert!(
        doctor
            .stdout
            .contains(&format!("the removal of loop {id} was interrupted")),
        "{}",
        doctor.stdout
    );
    let run = env.run(["rm", "--delete-branches", &id]).ok();
    run.stderr_has(&format!("finished removing loop {id}"));
    assert_eq!(env.loop_entries(), Vec::<String>::new());
    assert_eq!(env.rev(&repo, &format!("loop/{id}")), None);
    assert_eq!(env.rev(&env.notes(), &format!("loop/{id}")), None);
    env.run(["doctor"]).ok();
}

/// `new` killed after it made its branches but before its loop was in place: the next
/// `new` removes exactly those branches and the staging folder, and says so.
#[test]
fn an_interrupted_new_is_rolled_back_by_the_next_one() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let keep = env.new_loop(&repo, "kept");
    killed_at(&env, &repo, &["new", "half"], "new:notes-branch");
    let half: Vec<String> = env
        .git(
            &repo,
            [
                "for-each-ref",
                "--format=%(refname:short)",
                "refs/heads/loop/",
            ],
        )
        .lines()
        .filter(|b| b.starts_with("loop/half-"))
        .map(str::to_string)
        .collect();
    assert_eq!(half.len(), 1, "the killed new made its branch");
    let run = env.run_in(&repo, ["new", "next"]).ok();
    run.stderr_has("rolled back an interrupted `git loop new`");
    assert_eq!(env.rev(&repo, &half[0]), None);
    assert_eq!(env.rev(&env.notes(), &half[0]), None);
    assert!(env.loop_dir(&keep).is_dir());
    assert!(env.rev(&repo, &format!("loop/{keep}")).is_some());
    assert!(crate::crash::scan(&env, &repo).is_empty());
}

/// A `git loop` command started in a process group of its own, killed with it when the
/// test ends early.
struct Started {
    child: std::process::Child,
}

impl Started {
    fn spawn(mut cmd: std::process::Command) -> Started {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        Started {
            child: cmd.spawn().unwrap(),
        }
    }

    /// Kills the whole process group, as a supervisor or `kill -9 -PGID` does.
    fn kill_group(&mut self) {
        // SAFETY: a plain kill of the group this test started.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        self.child.wait().unwrap();
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill_group();
        }
    }
}

/// Polls `f` every 20 ms for at most 60 s; whether it became true.
fn wait_for(mut f: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !f() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

/// A sandboxed command that says it is up (`.ready` in the workdir), then sleeps as
/// `marker` (so the test can tell whether any of it is left).
fn ready_then_sleep(marker: &str) -> String {
    format!(": > .ready; exec bash -c 'exec -a {marker} sleep 60'")
}

/// Host processes whose command line starts with `marker`.
fn procs_named(marker: &str) -> usize {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            fs::read(e.path().join("cmdline")).is_ok_and(|c| c.starts_with(marker.as_bytes()))
        })
        .count()
}

fn exits(env: &TestEnv, id: &str) -> Vec<serde_json::Value> {
    env.run(["log", id, "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "exit")
        .cloned()
        .collect()
}

/// Issue 29 item 5: a run killed with its whole process group (its supervisor too) has no
/// exit recorded by anyone; the next command that looks at the loop records it as ended,
/// cause unknown, with when it found it, once, and never while the run lives.
#[test]
fn a_run_killed_with_its_process_group_is_recorded_as_ended_cause_unknown() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "killed");
    let marker = format!("glk-group-{}", std::process::id());
    let mut cmd = env.command();
    cmd.current_dir(&env.root)
        .args(["run", &id, "--", "sh", "-c", &ready_then_sleep(&marker)]);
    let mut live = Started::spawn(cmd);
    let ready = env.workdir(&id).join(".ready");
    assert!(wait_for(|| ready.exists() && procs_named(&marker) == 1));

    // While it lives, `log`, `list` and `show` record nothing for it.
    assert_eq!(exits(&env, &id), Vec::<serde_json::Value>::new());
    env.run(["list"]).ok();
    env.run(["show", &id]).ok();
    assert_eq!(exits(&env, &id), Vec::<serde_json::Value>::new());

    live.kill_group();
    assert!(
        wait_for(|| procs_named(&marker) == 0),
        "the sandbox outlived its group"
    );
    let log = env.run(["log", &id]).ok();
    log.stdout_has("ended, cause unknown (no exit was recorded; found at ");
    let events = env.run(["log", &id, "--json"]).ok().json();
    let events = events.as_array().unwrap();
    let start = events.iter().find(|e| e["kind"] == "start").unwrap();
    let exit = events.last().unwrap();
    assert_eq!(exit["kind"], "exit", "{events:?}");
    assert_eq!(exit["cause"], "unknown", "{exit}");
    assert_eq!(exit["run"], start["run"], "{exit}");
    assert_eq!(exit["backend"], "bwrap", "{exit}");
    assert_eq!(exit["found_at"], exit["ts"], "{exit}");
    assert!(exit.get("code").is_none(), "{exit}");

    // Recorded once; the next run works and records its own end as it saw it.
    env.run(["list"]).ok();
    env.run(["run", "-q", &id, "--", "true"]).ok();
    let exits = exits(&env, &id);
    assert_eq!(exits.len(), 2, "{exits:?}");
    assert_eq!(exits[1]["cause"], "exit");
    assert_eq!(exits[1]["code"], 0);
}

/// Issue 29 item 5: when only the front end (`git` of `git loop run`) is killed, the run
/// ends and records that its front end ended, with its pid, not a hang-up.
#[test]
fn a_run_whose_front_end_is_killed_records_that_cause() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "front");
    let marker = format!("glk-front-{}", std::process::id());
    let bin_dir = Path::new(crate::common::BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = std::process::Command::new("git");
    cmd.env_clear()
        .envs(env.envs())
        .env("PATH", &path)
        .current_dir(&env.root)
        .args([
            "loop",
            "run",
            &id,
            "--",
            "sh",
            "-c",
            &ready_then_sleep(&marker),
        ]);
    let mut front = Started::spawn(cmd);
    let ready = env.workdir(&id).join(".ready");
    assert!(wait_for(|| ready.exists() && procs_named(&marker) == 1));
    let git = front.child.id();
    // Only the front end.
    front.child.kill().unwrap();
    front.child.wait().unwrap();
    assert!(
        wait_for(|| !exits(&env, &id).is_empty()),
        "no exit recorded"
    );
    assert!(
        wait_for(|| procs_named(&marker) == 0),
        "the sandbox outlived the run"
    );
    let exits = exits(&env, &id);
    assert_eq!(exits.len(), 1, "{exits:?}");
    let exit = &exits[0];
    assert_eq!(exit["cause"], "parent-ended", "{exit}");
    assert_eq!(exit["parent"], git, "{exit}");
    assert_eq!(exit["signal"], "HUP", "{exit}");
    assert_eq!(exit["code"], 129, "{exit}");
    env.run(["log", &id]).ok().stdout_has(&format!(
        "(its front end, pid {git}, ended: SIGHUP to git-loop)"
    ));
}

/// Issue 29 item 3: the `index.lock` a run killed while its agent committed leaves in the
/// loop's repository is removed by the next run, which says so once, and the agent's
/// commit inside works; while another run of the loop lives, such a file is that run's
/// and stays.
#[test]
fn a_killed_runs_index_lock_is_removed_by_the_next_run() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "locked");
    let index_lock = env.workdir(&id).join(".git/index.lock");
    let commit = "echo x > inside.c && git add inside.c && git commit -qm inside";

    // A live run owns the loop's git locks: a second run leaves them alone.
    let marker = format!("glk-lock-{}", std::process::id());
    let mut cmd = env.command();
    cmd.current_dir(&env.root)
        .args(["run", &id, "--", "sh", "-c", &ready_then_sleep(&marker)]);
    let mut live = Started::spawn(cmd);
    let ready = env.workdir(&id).join(".ready");
    assert!(wait_for(|| ready.exists() && procs_named(&marker) == 1));
    fs::write(&index_lock, "").unwrap();
    let beside = env.run(["run", &id, "--", "true"]).ok();
    assert!(!beside.stderr.contains("removed"), "{}", beside.stderr);
    assert!(index_lock.exists());

    // Killed (as a run killed inside `git commit` is): the lock is nobody's now.
    live.kill_group();
    fs::remove_file(&ready).unwrap();
    let run = env.run(["run", &id, "--", "sh", "-c", commit]).ok();
    let said = format!(
        "git-loop: removed what a killed run of loop {id} left in its repositories (no run of the loop is alive to own it): workdir/.git/index.lock"
    );
    run.stderr_has(&said);
    assert_eq!(run.stderr.matches("removed").count(), 1, "{}", run.stderr);
    assert!(!index_lock.exists());
    assert_eq!(
        env.git(&repo, ["log", "-1", "--format=%s", &format!("loop/{id}")])
            .trim(),
        "inside"
    );
    // Nothing left to remove: nothing said.
    let again = env.run(["run", &id, "--", "true"]).ok();
    assert!(!again.stderr.contains("removed"), "{}", again.stderr);
}

/// A run whose command cannot be started records that, and why, as its end.
#[test]
fn a_run_that_never_starts_records_why() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "missing");
    env.run([
        "run",
        "-q",
        &id,
        "--backend",
        "none",
        "--",
        "/nonexistent/tool",
    ])
    .fails(1)
    .stderr_has("cannot run /nonexistent/tool");
    let exits = exits(&env, &id);
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert_eq!(exits[0]["cause"], "not-started", "{:?}", exits[0]);
    assert_eq!(exits[0]["backend"], "none");
    assert!(
        exits[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("cannot run /nonexistent/tool"),
        "{:?}",
        exits[0]
    );
    env.run(["log", &id])
        .ok()
        .stdout_has("did not start: cannot run /nonexistent/tool");
    // Nothing is left to be found later.
    assert!(fs::read_dir(env.loop_dir(&id).join("running"))
        .unwrap()
        .next()
        .is_none());
}

/// A start whose exit nobody recorded (`loops/<id>/running/<run>`, as a run killed with
/// its supervisor leaves it) is named by `doctor` and recorded by `doctor --fix` as ended,
/// cause unknown, once.
#[test]
fn doctor_fix_records_a_killed_runs_exit() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "unrecorded");
    let running = env.loop_dir(&id).join("running");
    fs::create_dir_all(&running).unwrap();
    fs::write(running.join("0123456789abcdef"), "").unwrap();
    env.run(["doctor"]).stdout_has(&format!(
        "1 run of loop {id} started and no exit is recorded (no run of the loop is alive)"
    ));
    env.run(["doctor", "--fix"]).stdout_has(&format!(
        "recorded 1 run of loop {id} as ended, cause unknown"
    ));
    assert!(!running.join("0123456789abcdef").exists());
    let exits = exits(&env, &id);
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert_eq!(exits[0]["run"], "0123456789abcdef");
    assert_eq!(exits[0]["cause"], "unknown");
    assert!(!env
        .run(["doctor", "--fix"])
        .stdout
        .contains("as ended, cause unknown"));
}
