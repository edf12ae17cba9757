//! FIFOs planted in a loop's repository (ATTACKS 29, issue 11 item 4): a FIFO where git
//! keeps a regular file blocks whoever opens it, and the host commands that read a loop
//! (`review`, `autocommit`, `rm`, `list`, `show`) used to wait on one forever, holding the
//! workspace lock. Each attack is made from inside a real sandbox started by `git loop
//! run`; every host command then has to finish within a bound, name the path when it
//! refuses, and change nothing on the host. The twin shows the same commands on a normal
//! loop working as before. A sparse file of 10 GB in the worktree is the other half of the
//! same attack (ATTACKS 29): what reads it reads a bounded part, or refuses.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::common::TestEnv;

/// A host command that takes longer than this is taken to be blocked (it is killed and the
/// test fails).
const BOUND: Duration = Duration::from_secs(60);

const AGENT: &str = "export GIT_AUTHOR_NAME=Agent GIT_AUTHOR_EMAIL=agent@example.com \
                     GIT_COMMITTER_NAME=Agent GIT_COMMITTER_EMAIL=agent@example.com\n";

/// One place a FIFO is planted: how the agent prepares the repository (after a commit of
/// its own, so that an import has work to do), where the FIFO goes (relative to the loop's
/// folder; `$ID` is the loop's id, `$OBJ` the path of the commit's blob), and which host
/// commands read it (and so must refuse, naming it). The others must work.
struct Case {
    name: &'static str,
    prepare: &'static str,
    fifo: &'static str,
    refused_by: &'static [&'static str],
}

const ALL: &[&str] = &["review", "autocommit", "rm", "list", "show"];
/// The worktree's files are read by what compares the worktree (not by the import).
const WORKTREE_READERS: &[&str] = &["review", "autocommit", "rm"];

const CASES: &[Case] = &[
    Case {
        name: "index",
        prepare: "",
        fifo: "workdir/.git/index",
        refused_by: WORKTREE_READERS,
    },
    Case {
        name: "HEAD",
        prepare: "",
        fifo: "workdir/.git/HEAD",
        refused_by: WORKTREE_READERS,
    },
    Case {
        name: "packed-refs",
        // Read only for a ref that has no loose file.
        prepare: "git pack-refs --all",
        fifo: "workdir/.git/packed-refs",
        refused_by: ALL,
    },
    Case {
        name: "loop branch",
        prepare: "",
        fifo: "workdir/.git/refs/heads/loop/$ID",
        refused_by: ALL,
    },
    Case {
        name: "alternates",
        prepare: "",
        fifo: "workdir/.git/objects/info/alternates",
        refused_by: ALL,
    },
    Case {
        name: "loose object",
        prepare: "",
        fifo: "$OBJ",
        refused_by: ALL,
    },
    Case {
        name: "pack",
        prepare: "git repack -a -d -l -q",
        fifo: "workdir/.git/objects/pack/$PACK",
        refused_by: ALL,
    },
    Case {
        name: "notes index",
        prepare: "",
        fifo: "context/notes/.git/index",
        refused_by: WORKTREE_READERS,
    },
];

/// Every ref and object file of the origins: what the host commands must leave alone.
fn host_state(env: &TestEnv, repo: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for origin in [repo.to_path_buf(), env.notes()] {
        out.push(env.refs(&origin));
        let mut pending = vec![origin.join(".git/objects")];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(&dir).unwrap().flatten() {
                if entry.file_type().unwrap().is_dir() {
                    pending.push(entry.path());
                } else {
                    out.push(entry.path().display().to_string());
                }
            }
        }
    }
    out.sort();
    out
}

/// Plants the FIFO of `case` from inside the loop's sandbox, after a commit of the agent's
/// own; returns its host path.
fn plant(env: &TestEnv, id: &str, case: &Case) -> std::path::PathBuf {
    let inside = format!("/loopat/loop/{id}");
    let fifo_inside = case
        .fifo
        .replace("workdir/", &format!("{inside}/workdir/"))
        .replace("context/notes/", "/loopat/context/notes/")
        .replace("$ID", id);
    let script = format!(
        r#"{AGENT}set -e
echo 'int work;' > work.c && git add work.c && git commit -qm work
(cd /loopat/context/notes && echo fact >> inbox.md && git commit -qam fact)
blob=$(git rev-parse HEAD:work.c)
OBJ={inside}/workdir/.git/objects/$(echo $blob | cut -c1-2)/$(echo $blob | cut -c3-)
{prepare}
PACK=$(cd .git/objects/pack 2>/dev/null && ls *.pack 2>/dev/null | head -n1)
F="{fifo_inside}"
rm -f "$F"
mkdir -p "$(dirname "$F")"
mkfifo "$F"
[ -p "$F" ] && echo "PLANTED $F"
"#,
        prepare = case.prepare,
    );
    let planted = env.run_within(BOUND, ["run", id, "--", "sh", "-c", &script]);
    let run = planted.run;
    assert_eq!(
        run.code, 0,
        "{}: planting failed\nstdout:\n{}\nstderr:\n{}",
        case.name, run.stdout, run.stderr
    );
    let inside_path = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("PLANTED "))
        .unwrap_or_else(|| panic!("{}: not planted:\n{}", case.name, run.stdout))
        .to_string();
    // The sandbox's view mirrors the workspace: the same path below loops/<id> on the host.
    let host = match inside_path.strip_prefix("/loopat/context/notes/") {
        Some(rest) => env.loop_notes(id).join(rest),
        None => env.loop_dir(id).join(
            inside_path
                .strip_prefix(&format!("{inside}/"))
                .expect("planted in the loop's folder"),
        ),
    };
    let meta = fs::symlink_metadata(&host).unwrap();
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()),
        "{}: {} is no FIFO on the host",
        case.name,
        host.display()
    );
    host
}

#[test]
fn fifos_planted_inside_never_hang_a_host_command() {
    for case in CASES {
        let env = TestEnv::battery(module_path!());
        let repo = env.repo("app");
        let id = env.new_loop(&repo, &format!("fifo {}", case.name));
        let fifo = plant(&env, &id, case);
        let shown = fifo.display().to_string();
        let before = host_state(&env, &repo);

        for cmd in ["review", "autocommit", "rm", "list", "show"] {
            let args: Vec<&str> = if cmd == "list" {
                vec![cmd]
            } else {
                vec![cmd, id.as_str()]
            };
            let run = env.run_within(BOUND, &args).run;
            if case.refused_by.contains(&cmd) {
                // list reports a loop it cannot read and goes on; the others refuse.
                let want = if cmd == "list" { 0 } else { 1 };
                assert_eq!(
                    run.code, want,
                    "{}: git loop {cmd}\nstdout:\n{}\nstderr:\n{}",
                    case.name, run.stdout, run.stderr
                );
                assert!(
                    run.stderr.contains(&shown) && run.stderr.contains("FIFO"),
                    "{}: git loop {cmd} does not name {shown}:\n{}",
                    case.name,
                    run.stderr
                );
                assert!(
                    run.stderr.contains("tampered"),
                    "{}: git loop {cmd} does not say the loop may have been tampered with:\n{}",
                    case.name,
                    run.stderr
                );
            } else {
                assert_eq!(
                    run.code, 0,
                    "{}: git loop {cmd} should not read the FIFO\nstdout:\n{}\nstderr:\n{}",
                    case.name, run.stdout, run.stderr
                );
            }
            assert_eq!(
                host_state(&env, &repo),
                before,
                "{}: git loop {cmd} changed an origin",
                case.name
            );
            assert!(
                fs::symlink_metadata(&fifo).is_ok(),
                "{}: git loop {cmd} removed what it refused to read",
                case.name
            );
        }
        // The loop can still be removed on purpose.
        env.run_within(BOUND, ["rm", "--force", id.as_str()])
            .run
            .ok();
        assert!(!env.loop_dir(&id).exists(), "{}", case.name);
    }
}

#[test]
fn git_loops_own_config_cannot_be_replaced_by_a_fifo() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "fifo config");
    let script = format!(
        "{AGENT}for f in .git/config /loopat/context/notes/.git/config; do \
         if rm -f \"$f\" 2>/dev/null && mkfifo \"$f\" 2>/dev/null; then echo \"BREACH $f\"; \
         else echo \"refused $f\"; fi; done"
    );
    let run = env
        .run_within(BOUND, ["run", &id, "--", "sh", "-c", &script])
        .run;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("BREACH"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("refused").count(), 2, "{}", run.stdout);
    for cmd in ["review", "autocommit", "list", "show"] {
        let args: Vec<&str> = if cmd == "list" {
            vec![cmd]
        } else {
            vec![cmd, id.as_str()]
        };
        env.run_within(BOUND, &args).run.ok();
    }
    env.run_within(BOUND, ["rm", id.as_str()]).run.ok();
}

#[test]
fn the_same_commands_on_a_normal_loop_work_as_before() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "normal");
    let script = format!(
        "{AGENT}set -e\necho 'int work;' > work.c && git add work.c && git commit -qm work\n\
         echo 'draft' > draft.c\nmkdir -p build && echo x > build/out.o && echo 'build/' > .gitignore\n"
    );
    env.run_within(BOUND, ["run", &id, "--", "sh", "-c", &script])
        .run
        .ok();
    let tip = env.rev(&env.workdir(&id), "HEAD").unwrap();
    assert_eq!(env.rev(&repo, &format!("loop/{id}")).unwrap(), tip);

    let review = env
        .run_within(BOUND, ["review", "--json", id.as_str()])
        .run
        .ok();
    let json = review.json();
    assert_eq!(json["code"]["ahead"], 1, "{json}");
    let uncommitted: Vec<String> = json["uncommitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(uncommitted, vec!["code:.gitignore", "code:draft.c"]);
    env.run_within(BOUND, ["list"]).run.ok().stdout_has(&id);
    env.run_within(BOUND, ["show", id.as_str()]).run.ok();
    env.run_within(BOUND, ["rm", id.as_str()])
        .run
        .fails(1)
        .stderr_has("uncommitted changes (.gitignore, draft.c)");
    env.run_within(BOUND, ["autocommit", id.as_str()])
        .run
        .ok()
        .stderr_has("committed 2 paths");
    let review = env
        .run_within(BOUND, ["review", "--json", id.as_str()])
        .run
        .ok();
    assert_eq!(review.json()["uncommitted"], serde_json::json!([]));
    assert_eq!(review.json()["code"]["ahead"], 2);
    env.run_within(BOUND, ["rm", "--delete-branches", id.as_str()])
        .run
        .fails(1)
        .stderr_has("would lose work");
    env.run_within(BOUND, ["rm", id.as_str()])
        .run
        .ok()
        .stderr_has(&format!("kept loop/{id}"));
}

#[test]
fn a_sparse_file_of_ten_gigabytes_is_not_read_whole_by_autocommit() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "sparse");
    let script = format!(
        "{AGENT}set -e\necho small > tracked.bin && git add tracked.bin && git commit -qm small\n\
         truncate -s 10G tracked.bin\ntruncate -s 10G untracked.bin\necho fine > fine.c\n"
    );
    env.run_within(BOUND, ["run", &id, "--", "sh", "-c", &script])
        .run
        .ok();
    let before = env.rev(&env.workdir(&id), "HEAD").unwrap();
    let done = env.run_within(BOUND, ["autocommit", id.as_str()]);
    let run = done.run.ok();
    run.stderr_has("not committing tracked.bin: ")
        .stderr_has("tracked.bin holds 10737418240 bytes, more than the")
        .stderr_has("left out untracked.bin (10 GiB, larger than autocommit.max_file_size");
    run.stderr_has("committed 1 path");
    assert!(
        done.max_rss_kib < 256 << 10,
        "autocommit reached {} KiB",
        done.max_rss_kib
    );
    let files = env.git(
        &env.workdir(&id),
        ["diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD"],
    );
    assert_eq!(files.trim(), "fine.c");
    assert_ne!(env.rev(&env.workdir(&id), "HEAD").unwrap(), before);
}

#[test]
fn gc_keeps_a_loop_it_cannot_read_and_removes_the_others() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let commit = format!(
        "{AGENT}set -e\necho 'int work;' > work.c && git add work.c && git commit -qm work\n"
    );
    let tampered = env.new_loop(&repo, "tampered");
    let normal = env.new_loop(&repo, "normal");
    for id in [&tampered, &normal] {
        env.run_within(BOUND, ["run", id.as_str(), "--", "sh", "-c", &commit])
            .run
            .ok();
        env.run_within(BOUND, ["merge", id.as_str()]).run.ok();
    }
    env.run_within(
        BOUND,
        [
            "run",
            tampered.as_str(),
            "--",
            "sh",
            "-c",
            "rm -f .git/index && mkfifo .git/index",
        ],
    )
    .run
    .ok();
    let fifo = env.workdir(&tampered).join(".git/index");
    let gc = env.run_within(BOUND, ["gc"]).run.ok();
    gc.stderr_has(&format!("{tampered}: kept"))
        .stderr_has(&fifo.display().to_string())
        .stdout_has(&format!("removed {normal}"));
    assert!(env.loop_dir(&tampered).exists());
    assert!(!env.loop_dir(&normal).exists());
}
