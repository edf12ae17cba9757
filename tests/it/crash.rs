//! The crash harness: `kill -9` of git-loop's whole process group (as a closed terminal or
//! the OOM killer does) at every step boundary of `new`, `publish`, `merge`, `autocommit`,
//! `rm`, `run`, `sync` (of a teammate's notes from a remote) and `vault set` (failpoints,
//! compiled into test builds only: see src/failpoint.rs); at random moments of each
//! command, started as a user starts it (`git loop ...`), a kill of its process group, of
//! its front end (`git`) alone, or of one of its processes at random and then the front
//! end; at random moments of the commits inside a run's sandbox; and at random moments
//! while git writes a 2000-file checkout.
//!
//! Each trial is judged from outside, by git and the file system, never by what git-loop
//! says: every repository passes `git fsck`; what the command was doing is not lost once
//! it is run again, and every commit a branch held after the kill is still reachable from
//! it; the user's checkout is its HEAD's tree plus exactly the changes it had before; every
//! leftover (journal, lock file, staging or removal folder, half-written checkout, branch
//! without a loop, a run's start without its exit) is gone after the next command, or else
//! after `doctor --fix`; and no process the command started is alive 10 s after the kill
//! (this process is their child subreaper, so orphans are seen). Trials whose kill landed
//! mid-operation (it left something to repair) are counted apart from those whose kill came
//! too early or too late; too few of the former fails the test. `GIT_LOOP_CRASH_ROUNDS`
//! runs more rounds (benches/crash.sh); the figures are printed at the end.

use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::TestEnv;

/// What the user's checkout holds besides its HEAD's tree, all along.
const USER_README: &str = "# mine, not committed\n";

/// A deterministic sequence of delays and choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[derive(Default)]
struct Tally {
    trials: usize,
    /// Killed, and it left something to repair.
    landed: usize,
    landed_at_failpoints: usize,
    landed_at_random: usize,
    landed_in_checkout: usize,
    /// The command finished before the kill, or the kill left nothing to repair.
    not_landed: usize,
    repaired_by_next: usize,
    repaired_by_doctor: usize,
    /// The next command said "up to date" while something was left to repair.
    false_up_to_date: usize,
    /// Processes of a killed command still alive 10 s after the kill, by command line.
    survivors: Vec<String>,
    /// Kills of the front end alone, and of a child then the front end, that landed.
    landed_front: usize,
    landed_child_then_front: usize,
    leftovers_seen: Vec<String>,
    /// Per command: trials, and those that landed mid-operation.
    by_command: std::collections::BTreeMap<String, (usize, usize)>,
}

struct Harness {
    env: TestEnv,
    repo: PathBuf,
    tally: Tally,
    rng: Rng,
    serial: usize,
    /// How long each command takes here, uninterrupted: random kills fall within it.
    took: Took,
    /// Refs of the trial's own repositories (a loop's workdir) whose commits, as the kill
    /// left them, must stay reachable, besides every repository's non-loop branches.
    keep: Vec<(PathBuf, String)>,
}

#[derive(Default)]
struct Took {
    new: Duration,
    publish: Duration,
    merge: Duration,
    autocommit: Duration,
    autocommit_commit: Duration,
    rm: Duration,
    /// A sync that takes a teammate's 300 notes.
    sync: Duration,
    vault_set: Duration,
    /// A run whose command commits five times in the loop.
    run: Duration,
}

/// How a trial's command was killed.
#[derive(Clone, Copy, Debug)]
enum Kill<'a> {
    /// At this failpoint.
    At(&'a str),
    /// This long after it started, its whole process group.
    After(Duration),
    /// This long after it started, its front end only (`git` of `git loop ...`): what it
    /// started must end with it.
    Front(Duration),
    /// This long after it started, one of its processes at random (`git-loop`, a git it
    /// runs, bwrap, the sandbox's pid 1, the command inside), then its front end.
    ChildThenFront(Duration),
    /// By a timer armed at this failpoint, this long after it is reached.
    Timer(&'a str, Duration),
}

impl Harness {
    fn new() -> Harness {
        // Whatever a killed command leaves running is orphaned to this process, where
        // `wait_for_survivors` sees it (and reaps what ended).
        // SAFETY: a plain system call on this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
        let env = TestEnv::new();
        let repo = env.repo("app");
        // The user's own changes, which every merge must keep: one edited file, one
        // deleted, one untracked.
        fs::write(repo.join("README.md"), USER_README).unwrap();
        fs::remove_file(repo.join("main.c")).unwrap();
        fs::write(repo.join("scratch.txt"), "untracked\n").unwrap();
        // The thousands of loose objects of the big merges make the harness's own commits
        // start `git gc --auto`, by default in the background, where it would race the
        // harness's fsck; in the foreground it is done before anything is judged.
        env.git(&repo, ["config", "gc.autoDetach", "false"]);
        env.run(["init"]).ok();
        env.run(["vault", "init"]).ok();
        let mut h = Harness {
            env,
            repo,
            tally: Tally::default(),
            rng: Rng(0x2545_f491_4f6c_dd1d),
            serial: 0,
            took: Took::default(),
            keep: Vec::new(),
        };
        h.took = h.measure();
        h.took.sync = h.measure_sync();
        h.without_notes_remote();
        h
    }

    /// A sync of a teammate's 300 notes, uninterrupted.
    fn measure_sync(&mut self) -> Duration {
        let (_, teammate) = self.notes_remote();
        let env = &self.env;
        fs::create_dir_all(teammate.join("measure")).unwrap();
        for i in 0..300 {
            fs::write(teammate.join(format!("measure/f{i:03}.md")), "m\n").unwrap();
        }
        env.git(&teammate, ["add", "-A"]);
        env.git(&teammate, ["commit", "-q", "-m", "measure"]);
        env.git(&teammate, ["push", "-q", "origin", "HEAD:main"]);
        let start = Instant::now();
        env.run(["sync"]).ok();
        start.elapsed()
    }

    /// Each command run once uninterrupted, timed.
    fn measure(&self) -> Took {
        let env = &self.env;
        let timed = |args: &[&str]| {
            let start = Instant::now();
            let run = env.run_in(&self.repo, args).ok();
            (start.elapsed(), run)
        };
        let (new, run) = timed(&["new", "measure"]);
        let id = run.stdout.trim().to_string();
        env.commit_file(&env.loop_notes(&id), "measure.md", "m\n", "note");
        env.commit_file(&env.workdir(&id), "measure.c", "int m;\n", "code");
        fs::write(env.workdir(&id).join("measure-auto.c"), "int a;\n").unwrap();
        let (autocommit, _) = timed(&["autocommit", &id]);
        let (publish, _) = timed(&["publish", &id]);
        let (merge, _) = timed(&["merge", &id]);
        let script = run_script("measure");
        let (run, _) = timed(&["run", "-q", &id, "--", "sh", "-c", &script]);
        let (rm, _) = timed(&["rm", "--force", "--delete-branches", &id]);
        let value = self.env.root.join("measure-value");
        fs::write(&value, "measured\n").unwrap();
        let (vault_set, _) = timed(&[
            "vault",
            "set",
            "default",
            "file",
            ".config/crash/measure",
            value.to_str().unwrap(),
        ]);
        Took {
            sync: Duration::ZERO,
            new,
            publish,
            merge,
            // The commit inside the loop's sandbox is most of an autocommit.
            autocommit_commit: autocommit.mul_f32(0.8),
            autocommit,
            rm,
            vault_set,
            run,
        }
    }

    /// A random moment within `d` (and a little past it).
    fn within(&mut self, d: Duration) -> Duration {
        Duration::from_micros(self.rng.below(d.as_micros() as u64 * 11 / 10))
    }

    fn serial(&mut self) -> usize {
        self.serial += 1;
        self.serial
    }

    fn new_loop(&self, title: &str) -> String {
        self.env.new_loop(&self.repo, title)
    }

    /// Runs `git loop ARGS` in the user's repository, in a process group of its own, and
    /// kills it as `kill` says. True if its front end died of the kill. Whatever it started
    /// must be gone 10 s later (a process still there is counted as a survivor, then
    /// killed).
    fn killed(&mut self, args: &[&str], kill: Kill) -> bool {
        // At a failpoint git-loop kills its own process group, which it leads; at a random
        // moment the command runs as a user starts it, `git loop ...`, and its front end
        // is that `git`.
        let mut cmd = match kill {
            Kill::At(_) | Kill::Timer(..) => self.env.command(),
            _ => {
                let bin_dir = Path::new(crate::common::BIN).parent().unwrap();
                let path = format!(
                    "{}:{}",
                    bin_dir.display(),
                    std::env::var("PATH").unwrap_or_default()
                );
                let mut cmd = std::process::Command::new("git");
                cmd.env_clear()
                    .envs(self.env.envs())
                    .env("PATH", path)
                    .stdin(std::process::Stdio::null())
                    .arg("loop");
                cmd
            }
        };
        // What it said, for the message of a failpoint it never reached.
        let said = self.env.root.join("killed-command.stderr");
        let out = self.env.root.join("killed-command.stdout");
        cmd.current_dir(&self.repo)
            .args(args)
            .stdout(fs::File::create(&out).unwrap())
            .stderr(fs::File::create(&said).unwrap())
            .process_group(0);
        let delay = match kill {
            Kill::At(point) => {
                cmd.env("GIT_LOOP_FAILPOINT", point);
                None
            }
            Kill::Timer(point, delay) => {
                cmd.env(
                    "GIT_LOOP_FAILPOINT",
                    format!("{point}@{}", delay.as_micros()),
                );
                None
            }
            Kill::After(d) | Kill::Front(d) | Kill::ChildThenFront(d) => Some(d),
        };
        let pick = self.rng.next();
        // This test's own children (the holder of its network namespace), not the command's.
        let mine = descendants(std::process::id() as i32);
        let mut child = cmd.spawn().unwrap();
        let front = child.id() as i32;
        if let Some(delay) = delay {
            let start = Instant::now();
            while start.elapsed() < delay {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            // SAFETY: signals to the child's own process group (made above), to the child
            // (not reaped yet: a zombie at worst) and to one of its descendants, found
            // just now.
            unsafe {
                match kill {
                    Kill::Front(_) => {
                        libc::kill(front, libc::SIGKILL);
                    }
                    Kill::ChildThenFront(_) => {
                        let below = descendants(front);
                        if !below.is_empty() {
                            libc::kill(below[pick as usize % below.len()], libc::SIGKILL);
                        }
                        libc::kill(front, libc::SIGKILL);
                    }
                    _ => {
                        libc::kill(-front, libc::SIGKILL);
                    }
                }
            }
        }
        let status = child.wait().unwrap();
        // Nothing it started may outlive it for long: git children die with it, bwrap and
        // the sandbox with their parent, and an `update-ref` let finish ends by itself.
        let left = wait_for_survivors(front, &mine);
        for (pid, cmdline) in &left {
            self.tally
                .survivors
                .push(format!("{args:?} {kill:?}: pid {pid} {cmdline}"));
            // SAFETY: a process this test's command started (in its group, or orphaned
            // to this process), still alive.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        if !left.is_empty() {
            wait_for_survivors(front, &mine);
        }
        wait_for_runs_to_end(&self.env);
        wait_for_detached_git(&self.env);
        wait_for_workspace_lock(&self.env);
        if status.signal() != Some(libc::SIGKILL) {
            use std::io::Write as _;
            if let Ok(mut f) = fs::OpenOptions::new().append(true).open(&said) {
                let _ = writeln!(
                    f,
                    "(it ended: {status}; it printed: {:?})",
                    fs::read_to_string(&out).unwrap_or_default()
                );
            }
        }
        status.signal() == Some(libc::SIGKILL)
    }

    /// Every branch but the loops' in each repository of the workspace and the user's, and
    /// the trial's own refs (`keep`), with the commit each is at.
    fn tips(&self) -> Vec<(PathBuf, String, String)> {
        let env = &self.env;
        let mut out = Vec::new();
        for dir in [
            self.repo.clone(),
            env.notes(),
            env.ws.join("context/knowledge"),
            env.ws.join("personal/tester"),
            env.ws.join("vaults/tester"),
        ] {
            if !dir.join(".git").is_dir() {
                continue;
            }
            let refs = env.git(
                &dir,
                [
                    "for-each-ref",
                    "--format=%(refname) %(objectname)",
                    "refs/heads/",
                ],
            );
            for line in refs.lines() {
                let (name, oid) = line.split_once(' ').unwrap();
                if !name.starts_with("refs/heads/loop/") {
                    out.push((dir.clone(), name.to_string(), oid.to_string()));
                }
            }
        }
        for (dir, name) in &self.keep {
            if let Some(oid) = env.rev(dir, name) {
                out.push((dir.clone(), name.clone(), oid));
            }
        }
        out
    }

    /// Everything a killed command can leave that needs repairing, seen from outside.
    fn leftovers(&self) -> Vec<String> {
        let env = &self.env;
        let mut found = scan(env, &self.repo);
        if let Some(why) = self.user_checkout_wrong() {
            found.push(why);
        }
        let notes = env.git(&env.notes(), ["status", "--porcelain"]);
        if !notes.is_empty() {
            found.push(format!(
                "the notes checkout differs from trunk: {}",
                short(&notes)
            ));
        }
        found
    }

    /// The user's checkout must be its HEAD's tree plus exactly the changes it had.
    fn user_checkout_wrong(&self) -> Option<String> {
        let env = &self.env;
        let staged = env.git(&self.repo, ["diff", "--cached", "--name-status"]);
        let unstaged = env.git(&self.repo, ["diff", "--name-status"]);
        let readme = fs::read_to_string(self.repo.join("README.md")).unwrap_or_default();
        let expected = "M\tREADME.md\nD\tmain.c\n";
        if staged.is_empty()
            && unstaged == expected
            && readme == USER_README
            && !self.repo.join("main.c").exists()
            && self.repo.join("scratch.txt").is_file()
        {
            None
        } else {
            Some(format!(
                "the user's checkout is not HEAD plus its changes: staged {}, unstaged {}",
                short(&staged),
                short(&unstaged)
            ))
        }
    }

    fn fsck(&self, extra: &[PathBuf]) {
        let env = &self.env;
        let mut dirs = vec![
            self.repo.clone(),
            env.notes(),
            env.ws.join("context/knowledge"),
            env.ws.join("personal/tester"),
            env.ws.join("vaults/tester"),
        ];
        dirs.extend(extra.iter().filter(|d| d.join(".git").is_dir()).cloned());
        for dir in dirs {
            let out = env.git_out(&dir, ["fsck", "--no-dangling", "--no-progress"]);
            assert_eq!(out.code, 0, "fsck of {}: {}", dir.display(), out.stderr);
        }
    }

    /// One trial: `args` is killed as `kill` says; then what is left is judged, repaired by
    /// the next command (`next`) or by `doctor --fix` (after which `next` runs when
    /// `rerun` says it has something left to do), and `done` checks from outside that
    /// nothing was lost.
    #[allow(clippy::too_many_arguments)]
    fn trial(
        &mut self,
        label: &str,
        args: &[&str],
        kill: Kill,
        next: &[&str],
        doctor_first: bool,
        rerun: &dyn Fn(&Harness) -> bool,
        done: &dyn Fn(&Harness),
    ) {
        self.tally.trials += 1;
        let died = self.killed(args, kill);
        let kept = self.tips();
        let left = self.leftovers();
        let in_checkout = left.iter().any(|l| l.contains("user's checkout"));
        let landed = died && !left.is_empty();
        let command = if label.starts_with("big merge") {
            "merge of 2000 files".to_string()
        } else {
            label.split(' ').next().unwrap_or_default().to_string()
        };
        let counts = self.tally.by_command.entry(command).or_default();
        counts.0 += 1;
        counts.1 += usize::from(landed);
        if landed {
            self.tally.landed += 1;
            match kill {
                Kill::At(_) => self.tally.landed_at_failpoints += 1,
                _ => self.tally.landed_at_random += 1,
            }
            match kill {
                Kill::Front(_) => self.tally.landed_front += 1,
                Kill::ChildThenFront(_) => self.tally.landed_child_then_front += 1,
                _ => {}
            }
            if in_checkout {
                self.tally.landed_in_checkout += 1;
            }
            for l in &left {
                self.tally.leftovers_seen.push(format!("{label}: {l}"));
            }
        } else {
            self.tally.not_landed += 1;
        }
        if let Kill::At(point) = kill {
            assert!(
                died,
                "{label}: the failpoint {point} was never reached; the command said:\n{}",
                fs::read_to_string(self.env.root.join("killed-command.stderr")).unwrap_or_default()
            );
        }
        let repair = |h: &Harness, args: &[&str]| {
            let run = h.env.run_in(&h.repo, args);
            assert!(
                run.code == 0 || args[0] == "doctor",
                "{label}: `git loop {}` after the kill failed:\n{}\n{}",
                args.join(" "),
                run.stdout,
                run.stderr
            );
            run
        };
        if doctor_first {
            let fixed = repair(self, &["doctor", "--fix"]);
            let still = self.leftovers();
            assert!(
                still.is_empty(),
                "{label}: left after `doctor --fix`: {still:?}\n{}{}",
                fixed.stdout,
                fixed.stderr
            );
            if landed {
                self.tally.repaired_by_doctor += 1;
            }
            if rerun(self) {
                repair(self, next);
            }
        } else {
            // `list`, like `rm` and `new`, finishes what a killed `rm` or `new` left.
            let said = repair(self, if rerun(self) { next } else { &["list"] });
            let still = self.leftovers();
            if !still.is_empty() && said.stdout.contains("up to date") {
                self.tally.false_up_to_date += 1;
            }
            if still.is_empty() {
                if landed {
                    self.tally.repaired_by_next += 1;
                }
            } else {
                let fixed = repair(self, &["doctor", "--fix"]);
                let after = self.leftovers();
                assert!(
                    after.is_empty(),
                    "{label}: left after the next command ({still:?}) and after `doctor --fix`: {after:?}\n{}{}",
                    fixed.stdout,
                    fixed.stderr
                );
                self.tally.repaired_by_doctor += 1;
            }
        }
        // Nothing lost: the command, run again, has done its work, and every commit
        // reachable after the kill still is.
        done(self);
        for (dir, name, oid) in kept {
            let still = self
                .env
                .git_out(&dir, ["merge-base", "--is-ancestor", &oid, &name]);
            assert_eq!(
                still.code,
                0,
                "{label}: {oid}, at {name} in {} after the kill, is no longer reachable from it",
                dir.display()
            );
        }
        self.keep.clear();
        assert_eq!(self.user_checkout_wrong(), None, "{label}");
        self.fsck(&[]);
    }

    fn new_trial(&mut self, kill: Kill, doctor_first: bool) {
        let n = self.serial();
        let title = format!("new {n}");
        let before = self.env.loop_entries().len();
        self.trial(
            &format!("new {kill:?}"),
            &["new", &title],
            kill,
            &["list"],
            doctor_first,
            &|_| true,
            &|h| {
                // Either the loop is whole (folder, record, branches) or nothing of it is
                // left: `leftovers` found no branch without a loop. A new one works.
                let now = h.env.loop_entries().len();
                assert!(now == before || now == before + 1);
            },
        );
    }

    fn publish_trial(&mut self, kill: Kill, doctor_first: bool) {
        let n = self.serial();
        // Two loops from the same trunk, so the second publish is a merge commit: one
        // appends to the inbox (merged as a union), one adds a file.
        let first = self.new_loop(&format!("pub a {n}"));
        let id = self.new_loop(&format!("pub b {n}"));
        let inbox = fs::read_to_string(self.env.loop_notes(&first).join("inbox.md")).unwrap();
        self.env.commit_file(
            &self.env.loop_notes(&first),
            "inbox.md",
            &format!("{inbox}- from {n}\n"),
            "inbox",
        );
        self.env.run(["publish", &first]).ok();
        let file = format!("memory/topic-{n}.md");
        self.env
            .commit_file(&self.env.loop_notes(&id), &file, "a fact\n", "note");
        let tip = self.env.rev(&self.env.loop_notes(&id), "HEAD").unwrap();
        let notes_loop = self.env.loop_notes(&id);
        self.trial(
            &format!("publish {kill:?}"),
            &["publish", &id],
            kill,
            &["publish", &id],
            doctor_first,
            &|_| true,
            &|h| {
                let notes = h.env.notes();
                let merged = h
                    .env
                    .git_out(&notes, ["merge-base", "--is-ancestor", &tip, "main"]);
                assert_eq!(merged.code, 0, "publish: the note never reached trunk");
                assert_eq!(
                    fs::read_to_string(notes.join(&file)).unwrap(),
                    "a fact\n",
                    "publish: the note is not in the checkout"
                );
                assert!(fs::read_to_string(notes.join("inbox.md"))
                    .unwrap()
                    .contains(&format!("- from {n}\n")));
            },
        );
        self.fsck(&[notes_loop]);
        self.remove(&[&first, &id]);
    }

    fn merge_trial(&mut self, kill: Kill, doctor_first: bool) {
        let n = self.serial();
        let id = self.new_loop(&format!("merge {n}"));
        if n.is_multiple_of(2) {
            // Main moves first, so this merge makes a merge commit.
            let other = self.new_loop(&format!("merge first {n}"));
            self.env.commit_file(
                &self.env.workdir(&other),
                &format!("first-{n}.c"),
                "int a;\n",
                "first",
            );
            self.env.run(["merge", &other]).ok();
            self.remove(&[&other]);
        }
        let file = format!("code-{n}.c");
        self.env
            .commit_file(&self.env.workdir(&id), &file, "int b;\n", "code");
        let tip = self.env.rev(&self.env.workdir(&id), "HEAD").unwrap();
        self.merge_and_judge(
            &format!("merge {kill:?}"),
            &id,
            &tip,
            &file,
            kill,
            doctor_first,
        );
        self.remove(&[&id]);
    }

    fn merge_and_judge(
        &mut self,
        label: &str,
        id: &str,
        tip: &str,
        file: &str,
        kill: Kill,
        doctor_first: bool,
    ) {
        let workdir = self.env.workdir(id);
        let file = file.to_string();
        let tip = tip.to_string();
        self.trial(
            label,
            &["merge", id],
            kill,
            &["merge", id],
            doctor_first,
            &|_| true,
            &|h| {
                let merged = h
                    .env
                    .git_out(&h.repo, ["merge-base", "--is-ancestor", &tip, "main"]);
                assert_eq!(
                    merged.code, 0,
                    "merge: the loop's commit never reached main"
                );
                let want = h.env.git(&h.repo, ["show", &format!("{tip}:{file}")]);
                assert_eq!(fs::read_to_string(h.repo.join(&file)).unwrap(), want);
            },
        );
        self.fsck(&[workdir]);
    }

    /// A merge of a loop that changed 2000 files, killed while git writes the checkout.
    fn big_merge_trial(&mut self, doctor_first: bool) {
        let n = self.serial();
        let id = self.new_loop(&format!("big {n}"));
        let wd = self.env.workdir(&id);
        fs::create_dir_all(wd.join("big")).unwrap();
        for i in 0..2000 {
            fs::write(
                wd.join(format!("big/f{i:04}.txt")),
                format!("file {i}, version {n}\n{}\n", "x".repeat(200)),
            )
            .unwrap();
        }
        self.env.git(&wd, ["add", "-A"]);
        self.env.git(&wd, ["commit", "-q", "-m", "2000 files"]);
        let tip = self.env.rev(&wd, "HEAD").unwrap();
        // git spends most of a second writing the 2000 files here: a kill at a random moment
        // of it lands inside.
        let delay = Duration::from_micros(self.rng.below(700_000));
        let label = format!("big merge {n} (killed {delay:?} into the checkout)");
        self.merge_and_judge(
            &label,
            &id,
            &tip,
            "big/f1999.txt",
            Kill::Timer("checkout:before-read-tree", delay),
            doctor_first,
        );
        self.remove(&[&id]);
    }

    fn autocommit_trial(&mut self, kill: Kill, doctor_first: bool) {
        let n = self.serial();
        let id = self.new_loop(&format!("auto {n}"));
        let wd = self.env.workdir(&id);
        let file = format!("auto-{n}.c");
        fs::write(wd.join(&file), "int c;\n").unwrap();
        let repo = self.repo.clone();
        self.trial(
            &format!("autocommit {kill:?}"),
            &["autocommit", &id],
            kill,
            &["autocommit", &id],
            doctor_first,
            &|_| true,
            &|h| {
                assert_eq!(
                    h.env.git(&wd, ["status", "--porcelain"]),
                    "",
                    "autocommit: the loop's change is not committed"
                );
                assert_eq!(
                    h.env.git(&repo, ["show", &format!("loop/{id}:{file}")]),
                    "int c;\n",
                    "autocommit: the commit was not imported"
                );
            },
        );
        self.fsck(&[self.env.workdir(&id)]);
        self.env
            .run(["rm", "--force", "--delete-branches", &id])
            .ok();
    }

    fn rm_trial(&mut self, kill: Kill, doctor_first: bool) {
        let n = self.serial();
        let id = self.new_loop(&format!("rm {n}"));
        let repo = self.repo.clone();
        self.trial(
            &format!("rm {kill:?}"),
            &["rm", "--delete-branches", &id],
            kill,
            &["rm", "--delete-branches", &id],
            doctor_first,
            &|h| h.env.loop_dir(&id).exists(),
            &|h| {
                assert!(!h.env.loop_dir(&id).exists(), "rm: the loop is still there");
                for dir in [&repo, &h.env.notes()] {
                    assert_eq!(
                        h.env.rev(dir, &format!("loop/{id}")),
                        None,
                        "rm: its branch stayed"
                    );
                }
            },
        );
    }

    /// The notes remote a teammate pushes to, made for the sync trials (and taken away
    /// after them, so the other trials publish locally as before); the teammate's clone.
    fn notes_remote(&self) -> (PathBuf, PathBuf) {
        let env = &self.env;
        let remote = env.root.join("notes-remote.git");
        let teammate = env.root.join("teammate-notes");
        if !remote.exists() {
            env.git(
                &env.root,
                ["init", "-q", "--bare", "-b", "main", "notes-remote.git"],
            );
        }
        if env.git(&env.notes(), ["remote"]).trim().is_empty() {
            env.git(
                &env.notes(),
                ["remote", "add", "origin", remote.to_str().unwrap()],
            );
            env.run(["sync"]).ok();
        }
        if !teammate.exists() {
            env.git(
                &env.root,
                ["clone", "-q", "notes-remote.git", "teammate-notes"],
            );
        }
        (remote, teammate)
    }

    fn without_notes_remote(&self) {
        self.env
            .git(&self.env.notes(), ["remote", "remove", "origin"]);
    }

    /// A teammate pushes 300 new notes; the sync that takes them is killed.
    fn sync_trial(&mut self, kill: Kill, doctor_first: bool) {
        let n = self.serial();
        let (_, teammate) = self.notes_remote();
        let env = &self.env;
        env.git(&teammate, ["fetch", "-q", "origin"]);
        env.git(&teammate, ["reset", "-q", "--hard", "origin/main"]);
        let dir = teammate.join(format!("team-{n}"));
        fs::create_dir_all(&dir).unwrap();
        for i in 0..300 {
            fs::write(
                dir.join(format!("f{i:03}.md")),
                format!(
                    "note {i} of {n}
"
                ),
            )
            .unwrap();
        }
        env.git(&teammate, ["add", "-A"]);
        env.git(&teammate, ["commit", "-q", "-m", "a teammate's notes"]);
        env.git(&teammate, ["push", "-q", "origin", "HEAD:main"]);
        let tip = env.rev(&teammate, "HEAD").unwrap();
        let file = format!("team-{n}/f299.md");
        self.trial(
            &format!("sync {kill:?}"),
            &["sync"],
            kill,
            &["sync"],
            doctor_first,
            &|_| true,
            &|h| {
                let notes = h.env.notes();
                let merged = h
                    .env
                    .git_out(&notes, ["merge-base", "--is-ancestor", &tip, "main"]);
                assert_eq!(
                    merged.code, 0,
                    "sync: the teammate's notes never reached trunk"
                );
                assert_eq!(
                    fs::read_to_string(notes.join(&file)).unwrap(),
                    format!("note 299 of {n}\n"),
                    "sync: the notes are not in the checkout"
                );
            },
        );
    }

    /// A `vault set` of a file entry, killed: the entry is stored (and committed) once the
    /// next command has run, or as it was before; nothing of the kill is left.
    fn vault_set_trial(&mut self, kill: Kill, doctor_first: bool) {
        let n = self.serial();
        let rel = format!(".config/crash/key-{n}");
        let value = format!("crash value {n}\n");
        let source = self.env.root.join(format!("vault-value-{n}"));
        fs::write(&source, &value).unwrap();
        let source = source.to_str().unwrap().to_string();
        let args = ["vault", "set", "default", "file", &rel, &source];
        self.trial(
            &format!("vault-set {kill:?}"),
            &args,
            kill,
            &args,
            doctor_first,
            &|_| true,
            &|h| {
                let got = h.env.run(["vault", "get", "default", "file", &rel]);
                assert_eq!(got.stdout, value, "vault set: the value is not stored");
                let vaults = h.env.ws.join("vaults/tester");
                let tracked = h.env.git(&vaults, ["ls-files"]);
                assert!(
                    tracked.contains(&format!("default/mounts/home/{rel}.age")),
                    "vault set: the entry is not committed"
                );
            },
        );
    }

    /// A run whose command commits five times in the loop, killed: every commit it made
    /// is kept and reaches the user's repository with the next run's, the next run's
    /// `git commit` works (no lock of the killed one stops it), and every start has its
    /// exit recorded.
    fn run_trial(&mut self, kill: Kill, doctor_first: bool) {
        let n = self.serial();
        let id = self.new_loop(&format!("run {n}"));
        let wd = self.env.workdir(&id);
        self.keep.push((wd.clone(), "HEAD".into()));
        let script = run_script(&n.to_string());
        let after = format!("after-{n}.c");
        let next_script =
            format!("echo 'int after;' > {after} && git add -A && git commit -q -m after");
        let repo = self.repo.clone();
        let workdir = wd.clone();
        let loop_id = id.clone();
        self.trial(
            &format!("run {kill:?}"),
            &["run", "-q", &id, "--", "sh", "-c", &script],
            kill,
            &["run", "-q", &id, "--", "sh", "-c", &next_script],
            doctor_first,
            &|_| true,
            &|h| {
                let tip = h.env.rev(&workdir, "HEAD");
                assert_eq!(
                    h.env.rev(&repo, &format!("loop/{loop_id}")),
                    tip,
                    "run: the loop's commits did not reach the user's repository"
                );
                assert_eq!(
                    h.env
                        .git(&repo, ["show", &format!("loop/{loop_id}:{after}")]),
                    "int after;\n"
                );
                let events = h.env.run(["log", &loop_id, "--json"]).ok().json();
                let kinds: Vec<&str> = events
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|e| e["kind"].as_str())
                    .filter(|k| *k == "start" || *k == "exit")
                    .collect();
                let starts = kinds.iter().filter(|k| **k == "start").count();
                assert_eq!(
                    starts,
                    kinds.len() - starts,
                    "run: a start without its exit: {kinds:?}"
                );
            },
        );
        self.fsck(&[wd]);
        self.remove(&[&id]);
    }

    fn remove(&self, ids: &[&str]) {
        for id in ids {
            self.env
                .run(["rm", "--force", "--delete-branches", id])
                .ok();
        }
    }
}

/// What a killed command can leave in a workspace and the user's repository `repo` that
/// needs repairing, seen from outside: journals and unfinished writes under `locks/`,
/// staging and removal folders, git lock files and git-loop's scratch files in every
/// repository, and branches of loops that are not there.
pub fn scan(env: &TestEnv, repo: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(env.ws.join("locks")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".pending") || (name.starts_with('.') && name.contains(".tmp-")) {
            found.push(format!("locks/{name}"));
        }
    }
    for name in env.loop_entries() {
        if name.starts_with('.') {
            found.push(format!("loops/{name}"));
            continue;
        }
        // A run's start whose exit nobody recorded (no run is alive here).
        for e in fs::read_dir(env.loop_dir(&name).join("running"))
            .into_iter()
            .flatten()
            .flatten()
        {
            found.push(format!(
                "loops/{name}/running/{} (a start without an exit)",
                e.file_name().to_string_lossy()
            ));
        }
    }
    let mut git_dirs = vec![
        repo.join(".git"),
        env.notes().join(".git"),
        env.ws.join("context/knowledge/.git"),
        env.ws.join("personal/tester/.git"),
    ];
    for name in env.loop_entries() {
        if !name.starts_with('.') {
            git_dirs.push(env.workdir(&name).join(".git"));
            git_dirs.push(env.loop_notes(&name).join(".git"));
        }
    }
    for dir in git_dirs {
        for file in git_lock_files(&dir) {
            found.push(file.display().to_string());
        }
    }
    // The vaults' repository: git's lock files, a writer's temp files anywhere in it, and
    // changes left uncommitted (which would never sync).
    let vaults = env.ws.join("vaults/tester");
    if vaults.join(".git").is_dir() {
        for file in git_lock_files(&vaults.join(".git")) {
            found.push(file.display().to_string());
        }
        let mut pending = vec![vaults.clone()];
        while let Some(dir) = pending.pop() {
            for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.file_type().is_ok_and(|t| t.is_dir()) && name != ".git" {
                    pending.push(e.path());
                }
                if name.starts_with('.') && name.contains(".tmp-") {
                    found.push(e.path().display().to_string());
                }
            }
        }
        let status = env.git(&vaults, ["status", "--porcelain"]);
        if !status.is_empty() {
            found.push(format!(
                "the vaults' repository has uncommitted changes: {}",
                short(&status)
            ));
        }
    }
    // A branch of a loop that is not there (no `rm` here keeps its branches).
    for dir in [repo.to_path_buf(), env.notes()] {
        let refs = env.git(
            &dir,
            [
                "for-each-ref",
                "--format=%(refname:short)",
                "refs/heads/loop/",
            ],
        );
        for branch in refs.lines() {
            let id = branch.trim_start_matches("loop/");
            if !env.loop_dir(id).join("loop.toml").is_file() {
                found.push(format!("{branch} in {} has no loop", dir.display()));
            }
        }
    }
    found
}

/// Waits (up to 10 s) until no `git update-ref` runs under the test's folder: git-loop lets
/// it finish in a process group of its own when it is killed (its half-done lock files
/// could not be told from the user's own git's), so it may outlive the kill a moment.
pub fn wait_for_detached_git(env: &TestEnv) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let root = env.root.clone();
    let running = || {
        fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let dir = e.path();
                let cmdline = fs::read(dir.join("cmdline")).unwrap_or_default();
                let is_update_ref = cmdline.split(|b| *b == 0).any(|a| a == b"update-ref");
                is_update_ref
                    && fs::read_link(dir.join("cwd")).is_ok_and(|cwd| cwd.starts_with(&root))
            })
    };
    while running() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits (up to 10 s) until no run of any loop is alive: a killed command's sandboxed
/// children end asynchronously (bwrap's --die-with-parent), and what they hold until then
/// is theirs, not a leftover.
pub fn wait_for_runs_to_end(env: &TestEnv) {
    let deadline = Instant::now() + Duration::from_secs(10);
    for entry in fs::read_dir(env.ws.join("locks")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("run-") && name.ends_with(".lock")) {
            continue;
        }
        let Ok(file) = fs::File::open(entry.path()) else {
            continue;
        };
        while file.try_lock().is_err() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Waits (up to 10 s) until nothing holds the workspace lock: a killed command's git
/// children die with it, but asynchronously, and a process between its fork and its exec
/// still shares the lock's open file. Held longer, something outlived the kill: that fails.
pub fn wait_for_workspace_lock(env: &TestEnv) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let Ok(file) = fs::File::open(env.ws.join("locks/workspace.lock")) else {
        return;
    };
    while file.try_lock().is_err() {
        assert!(
            Instant::now() < deadline,
            "a killed command left a process holding the workspace lock"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A process's parent, process group and state, from `/proc/PID/stat`.
fn proc_stat(pid: i32) -> Option<(i32, i32, char)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields follow its last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((ppid, pgrp, state))
}

fn all_pids() -> Vec<i32> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// The live descendants of `pid`.
fn descendants(pid: i32) -> Vec<i32> {
    let procs: Vec<(i32, i32)> = all_pids()
        .into_iter()
        .filter_map(|p| proc_stat(p).filter(|s| s.2 != 'Z').map(|s| (p, s.0)))
        .collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            procs
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// What is left of a killed command whose front end was `front`: live processes of its
/// process group, or orphaned to this process (a child subreaper) and not among `mine`
/// (this test's own, from before the command started), after up to 10 s. Orphans that
/// ended are reaped.
fn wait_for_survivors(front: i32, mine: &[i32]) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // SAFETY: reaps ended orphans only; this test waits for no other child now.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        let left: Vec<(i32, String)> = all_pids()
            .into_iter()
            .filter(|p| {
                proc_stat(*p).is_some_and(|(ppid, pgrp, state)| {
                    state != 'Z' && (pgrp == front || (ppid == me && !mine.contains(p)))
                })
            })
            .map(|p| {
                let cmdline = fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                (p, String::from_utf8_lossy(&cmdline).replace('\0', " "))
            })
            .collect();
        if left.is_empty() || Instant::now() > deadline {
            // What ended since the reap above is not left a zombie either.
            // SAFETY: as above.
            while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// At most a few lines of `text`, for messages.
fn short(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut s = lines
        .iter()
        .take(4)
        .copied()
        .collect::<Vec<_>>()
        .join(" | ");
    if lines.len() > 4 {
        s.push_str(&format!(" | ... {} lines", lines.len()));
    }
    format!("{s:?}")
}

/// git's lock files (outside objects/) and git-loop's scratch files in a git folder.
fn git_lock_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if p != dir.join("objects") {
                    pending.push(p);
                }
            } else if name.ends_with(".lock") || name.starts_with("git-loop-") {
                out.push(p);
            }
        }
    }
    out
}

const NEW_POINTS: &[&str] = &[
    "new:reserved",
    "new:workdir-cloned",
    "new:notes-cloned",
    "new:record-written",
    "new:code-branch",
    "new:notes-branch",
    "new:renamed",
];
/// The merge engine's points, reached by `publish` and `merge` alike.
const ENGINE_POINTS: &[&str] = &[
    "merge:before-update-ref",
    "checkout:locked",
    "checkout:journal-written",
    "merge:after-update-ref",
    "checkout:before-read-tree",
    "checkout:after-read-tree",
    "checkout:index-replaced",
    "checkout:unlocked",
    "merge:done",
];
const AUTOCOMMIT_POINTS: &[&str] = &[
    "autocommit:before-commit",
    "autocommit:committed",
    "autocommit:imported",
];
/// `vault set`: noted in its journal, its temp file written (not renamed), stored, staged.
const VAULT_SET_POINTS: &[&str] = &[
    "vault:noted",
    "confined:written",
    "vault:stored",
    "vault:staged",
];
const RM_POINTS: &[&str] = &[
    "rm:journal-written",
    "rm:renamed",
    "rm:deleted",
    "rm:branch-deleted",
];

/// `run`: its start recorded (the sandbox not started yet), and its exit recorded (what
/// it committed not imported yet).
const RUN_POINTS: &[&str] = &["run:started", "run:exit-recorded"];

/// What the command of a run trial does in the loop: five files, each committed.
fn run_script(tag: &str) -> String {
    format!(
        "for i in 1 2 3 4 5; do echo \"int r{tag}_$i;\" > run-{tag}-$i.c && git add run-{tag}-$i.c && git commit -q -m \"run {tag} $i\" || exit 1; done"
    )
}

/// The `k`th of the three ways a command is killed at a random moment `d`.
fn random_kill(k: usize, d: Duration) -> Kill<'static> {
    match k % 3 {
        0 => Kill::After(d),
        1 => Kill::Front(d),
        _ => Kill::ChildThenFront(d),
    }
}

fn rounds() -> usize {
    std::env::var("GIT_LOOP_CRASH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

#[test]
fn killed_at_every_step_and_at_random_nothing_is_lost_and_all_is_repaired() {
    let mut h = Harness::new();
    let rounds = rounds();
    for round in 0..rounds {
        // Every step boundary, half repaired by the next command, half by doctor.
        let mut flip = round % 2 == 1;
        let mut next_flip = || {
            flip = !flip;
            flip
        };
        for point in NEW_POINTS {
            h.new_trial(Kill::At(point), next_flip());
        }
        h.publish_trial(Kill::At("publish:imported"), next_flip());
        h.merge_trial(Kill::At("merge:imported"), next_flip());
        for point in ENGINE_POINTS {
            h.publish_trial(Kill::At(point), next_flip());
            h.merge_trial(Kill::At(point), next_flip());
        }
        for point in AUTOCOMMIT_POINTS {
            h.autocommit_trial(Kill::At(point), next_flip());
        }
        for point in RM_POINTS {
            h.rm_trial(Kill::At(point), next_flip());
        }
        for point in VAULT_SET_POINTS {
            h.vault_set_trial(Kill::At(point), next_flip());
        }
        for point in RUN_POINTS {
            h.run_trial(Kill::At(point), next_flip());
        }
        // Random moments of each whole command, each killed in each of three ways: its
        // process group (git children included), its front end alone, one of its
        // processes at random and then its front end.
        for k in 0..3 {
            let d = h.within(h.took.new);
            h.new_trial(random_kill(k, d), next_flip());
            let d = h.within(h.took.publish);
            h.publish_trial(random_kill(k, d), next_flip());
            let d = h.within(h.took.merge);
            h.merge_trial(random_kill(k, d), next_flip());
            let d = h.within(h.took.autocommit);
            h.autocommit_trial(random_kill(k, d), next_flip());
            let d = h.within(h.took.run);
            h.run_trial(random_kill(k, d), next_flip());
            // While the sandbox's command commits.
            let d = h.within(h.took.run.mul_f32(0.8));
            h.run_trial(Kill::Timer("run:started", d), next_flip());
            // While git commits inside the loop's sandbox.
            let d = h.within(h.took.autocommit_commit);
            h.autocommit_trial(Kill::Timer("autocommit:before-commit", d), next_flip());
            let d = h.within(h.took.rm);
            h.rm_trial(random_kill(k, d), next_flip());
            let d = h.within(h.took.vault_set);
            h.vault_set_trial(random_kill(k, d), next_flip());
            // While git stages and commits in the vaults' repository.
            let d = h.within(h.took.vault_set / 3);
            h.vault_set_trial(Kill::Timer("vault:staged", d), next_flip());
        }
        for _ in 0..3 {
            h.big_merge_trial(next_flip());
        }
        // A teammate's notes taken by sync: every step boundary of its merge and checkout,
        // then random moments of it and of the checkout.
        h.sync_trial(Kill::At("sync:fetched"), next_flip());
        for point in ENGINE_POINTS {
            h.sync_trial(Kill::At(point), next_flip());
        }
        for k in 0..3 {
            let d = h.within(h.took.sync);
            h.sync_trial(random_kill(k, d), next_flip());
            let d = Duration::from_micros(h.rng.below(h.took.sync.as_micros() as u64 / 2));
            h.sync_trial(Kill::Timer("checkout:before-read-tree", d), next_flip());
        }
        h.without_notes_remote();
        // The 2000 files go again (as a commit of the user's), so that the next round's
        // loops do not each check them out.
        h.env.git(&h.repo, ["rm", "-r", "-q", "big"]);
        h.env
            .git(&h.repo, ["commit", "-q", "-m", "without the big files"]);
    }
    let t = &h.tally;
    println!(
        "crash harness: uninterrupted, new took {:?}, publish {:?}, merge {:?}, autocommit {:?}, rm {:?}, sync {:?}, vault set {:?}, run {:?}",
        h.took.new, h.took.publish, h.took.merge, h.took.autocommit, h.took.rm, h.took.sync, h.took.vault_set, h.took.run
    );
    println!(
        "crash harness: {} trials; {} landed mid-operation ({} at failpoints, {} at random moments, {} of them in the user's checkout); {} did not; repaired by the next command: {}, by doctor --fix: {}, unrepaired: 0, false \"up to date\": {}",
        t.trials,
        t.landed,
        t.landed_at_failpoints,
        t.landed_at_random,
        t.landed_in_checkout,
        t.not_landed,
        t.repaired_by_next,
        t.repaired_by_doctor,
        t.false_up_to_date
    );
    println!(
        "crash harness: of those at random moments, {} killed the front end alone, {} a process at random then the front end; surviving processes: {}",
        t.landed_front,
        t.landed_child_then_front,
        t.survivors.len()
    );
    for (command, (trials, landed)) in &t.by_command {
        println!("crash harness: {command}: {trials} trials, {landed} landed mid-operation");
    }
    if std::env::var_os("GIT_LOOP_CRASH_VERBOSE").is_some() {
        for l in &t.leftovers_seen {
            println!("  {l}");
        }
    }
    assert_eq!(
        t.false_up_to_date, 0,
        "a command said \"up to date\" while a kill's leftovers were there"
    );
    assert!(
        t.survivors.is_empty(),
        "processes outlived their killed command by 10 s: {:?}",
        t.survivors
    );
    // Most step boundaries leave something to repair, and most kills in the big checkout
    // land inside it: fewer means the harness is not testing what it claims.
    assert!(
        t.landed * 2 >= t.trials,
        "only {} of {} trials landed mid-operation",
        t.landed,
        t.trials
    );
    assert!(
        t.landed_in_checkout * 2 >= 3 * rounds,
        "only {} kills landed in the user's checkout",
        t.landed_in_checkout
    );
}
