//! A repository nested in a loop's trees (ATTACKS 6, 28, 32): a person's own git reads a
//! nested repository's config and runs what it names (`core.fsmonitor`) — after a `cd`
//! into it, and at the loop's root through a gitlink to it (`git add -A` enters a
//! populated submodule whatever the root's config says). So no `.git` can be made in the
//! working tree, notes or the personal tree during a run (pid 1's supervisor refuses it,
//! each refusal an event) unless the profile's `allow_write` names `**/.git`. Each attack
//! is made from inside a real sandbox started by `git loop run`; the person's git is then
//! run on the host, and a planted program would leave a marker outside the tree.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::fspolicy::{attempts, verdicts};

/// A path as a single-quoted shell word.
fn q(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// Every path named `.git` below `root`, its own `.git` aside (not following links).
fn nested_gits(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_name() == ".git" {
                if dir != root {
                    found.push(path);
                }
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                todo.push(path);
            }
        }
    }
    found
}

#[test]
fn a_repository_made_in_a_loops_trees_is_refused_and_the_persons_git_runs_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "nested");
    let marker = env.root.join("PWNED-nested");
    let script = format!(
        r#"C={cmd}
git init -q /tmp/evil && git -C /tmp/evil commit -q --allow-empty -m s && git -C /tmp/evil config core.fsmonitor "$C"
printf '#!/bin/sh\n%s\n' "$C" > /tmp/evil/.git/hooks/post-index-change && chmod +x /tmp/evil/.git/hooks/post-index-change
sha=$(git -C /tmp/evil rev-parse HEAD)
try gitlink git update-index --add --cacheinfo "160000,$sha,sub"
try init-sub git init -q sub
try copy-in cp -a /tmp/evil sub
try move-in mv /tmp/evil moved
try git-file sh -c 'mkdir -p gf && printf "gitdir: /tmp/evil/.git\n" > gf/.git'
try rename-to-git sh -c 'mkdir -p rn/x && mv rn/x rn/.git'
try link-named-git sh -c 'mkdir -p ln && ln -s /tmp/evil/.git ln/.git'
try clone git clone -q /tmp/evil vendor/evil
try worktree git worktree add -q --detach wt
try notes-init git init -q /loopat/context/notes/evil
try personal-init git init -q /loopat/context/personal/evil
try tmp-repo git init -q /tmp/twin
try home-repo git init -q "$HOME/cache/repo"
try git-work sh -c 'git commit -q --allow-empty -m w && git branch side && git commit -q --amend --allow-empty -m w2 && git rebase -q HEAD~1 && mkdir -p .git/info && echo "*.tmp" >> .git/info/exclude'
try git-names sh -c 'mkdir -p d && echo x > d/.gitignore && mkdir d/.github && echo x > d/.git-blame-ignore-revs'
"#,
        cmd = q(Path::new(&format!("touch {}", marker.display())))
    );
    let run = attempts(&env, &id, &script);
    verdicts(
        &run,
        &[
            ("gitlink", true),
            ("init-sub", false),
            ("copy-in", false),
            ("move-in", false),
            ("git-file", false),
            ("rename-to-git", false),
            ("link-named-git", false),
            ("clone", false),
            ("worktree", false),
            ("notes-init", false),
            ("personal-init", false),
            ("tmp-repo", true),
            ("home-repo", true),
            ("git-work", true),
            ("git-names", true),
        ],
    );
    assert!(
        run.stdout.contains("Operation not permitted"),
        "{}",
        run.stdout
    );
    assert!(!marker.exists(), "a planted command ran during the run");
    // Nothing was left on the host: no repository below any tree's root.
    let work = env.workdir(&id);
    let personal = env.ws.join("personal/tester");
    for tree in [&work, &env.loop_notes(&id), &personal] {
        assert_eq!(
            nested_gits(tree),
            Vec::<PathBuf>::new(),
            "{}",
            tree.display()
        );
    }
    // Each refusal is an event naming the rule and the path as the sandbox names it.
    let log = env.run(["log", &id]).ok().stdout;
    for at in [
        format!("/loopat/loop/{id}/workdir/sub/.git"),
        format!("/loopat/loop/{id}/workdir/rn/.git"),
        format!("/loopat/loop/{id}/workdir/gf/.git"),
        "/loopat/context/notes/evil/.git".to_string(),
        "/loopat/context/personal/evil/.git".to_string(),
    ] {
        assert!(
            log.lines().any(|l| l.contains("violation")
                && l.contains(&at)
                && l.contains("nested repository")),
            "no event for {at}:\n{log}"
        );
    }
    // The gitlink is there, its submodule empty: the person's git at the loop's root runs
    // nothing of it, nor does git-loop.
    let index = env.git(&work, ["ls-files", "-s", "sub"]);
    assert!(index.starts_with("160000 "), "{index}");
    for args in [
        &["status"][..],
        &["diff"],
        &["diff", "HEAD"],
        &["log", "-p", "-2"],
        &["add", "-A"],
        &["commit", "-q", "-m", "person"],
        &["checkout", "-q", "-b", "person-branch"],
        &["submodule", "status"],
    ] {
        let out = env.git_out(&work, args);
        assert!(
            !marker.exists(),
            "`git {}` ran a planted command:\n{}{}",
            args.join(" "),
            out.stdout,
            out.stderr
        );
    }
    env.run(["review", &id]);
    assert!(!marker.exists(), "review ran a planted command");
    // The twins' work is there.
    assert_eq!(
        fs::read_to_string(work.join("d/.gitignore")).unwrap(),
        "x\n"
    );
    assert!(env
        .loop_dir(&id)
        .join("home/upper/cache/repo/.git/HEAD")
        .is_file());
}

/// Twin: with the profile's `allow_write` naming `**/.git`, the loop makes, commits in
/// and clones repositories in its working tree, and nothing is refused.
#[test]
fn a_profile_naming_it_lets_the_loop_make_a_repository() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "allowed");
    env.write_profile("[filesystem]\nallow_write = [\"**/.git\"]\n");
    env.run([
        "config",
        "set",
        "--operator",
        "sandbox.allow_nested_git",
        "true",
    ])
    .ok();
    let run = attempts(
        &env,
        &id,
        "try init-sub sh -c 'git init -q sub && git -C sub commit -q --allow-empty -m s'
try clone git clone -q sub vendor/sub
try notes-init git init -q /loopat/context/notes/kept",
    );
    verdicts(
        &run,
        &[("init-sub", true), ("clone", true), ("notes-init", true)],
    );
    let work = env.workdir(&id);
    assert_eq!(env.git(&work.join("sub"), ["log", "--format=%s"]), "s\n");
    assert!(work.join("vendor/sub/.git").is_dir());
    let log = env.run(["log", &id]).ok().stdout;
    assert!(!log.contains("nested repository"), "{log}");
}

/// A nested repository already behind a gitlink when a run starts (made while the profile
/// allowed it) keeps what the person's git at the root reads there: its config, hooks and
/// commondir cannot be written, replaced or made, nor can its `.git` be made again; its
/// objects and refs are the loop's to write (a commit in it works).
#[test]
fn a_nested_repository_behind_a_gitlink_keeps_its_config() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "kept");
    let profile = env.write_profile("[filesystem]\nallow_write = [\"**/.git\"]\n");
    env.run([
        "config",
        "set",
        "--operator",
        "sandbox.allow_nested_git",
        "true",
    ])
    .ok();
    let made = attempts(
        &env,
        &id,
        "try made sh -c 'git init -q sub && git -C sub commit -q --allow-empty -m s && git add sub && git commit -q -m gitlink'",
    );
    verdicts(&made, &[("made", true)]);
    fs::remove_file(profile).unwrap();
    let work = env.workdir(&id);
    let config = fs::read(work.join("sub/.git/config")).unwrap();
    let marker = env.root.join("PWNED-kept");
    let script = format!(
        r##"C={cmd}
try config git -C sub config core.fsmonitor "$C"
try append sh -c 'printf "[core]\n\tfsmonitor = %s\n" "$C" >> sub/.git/config'
try hook sh -c 'printf "#!/bin/sh\n%s\n" "$C" > sub/.git/hooks/post-index-change'
try commondir sh -c 'echo ../../x > sub/.git/commondir'
try replace sh -c 'cp sub/.git/config /tmp/c && echo "[core]" >> /tmp/c && cp /tmp/c sub/c2 && mv sub/c2 sub/.git/config'
try commit-in-it git -C sub commit -q --allow-empty -m more
try made-again sh -c 'mv sub/.git sub/moved && mkdir sub/.git'
"##,
        cmd = q(Path::new(&format!("touch {}", marker.display())))
    );
    let run = attempts(&env, &id, &script);
    verdicts(
        &run,
        &[
            ("config", false),
            ("append", false),
            ("hook", false),
            ("commondir", false),
            ("replace", false),
            ("commit-in-it", true),
            ("made-again", false),
        ],
    );
    let sub_git = if work.join("sub/.git").exists() {
        work.join("sub/.git")
    } else {
        work.join("sub/moved")
    };
    assert_eq!(fs::read(sub_git.join("config")).unwrap(), config);
    assert!(!sub_git.join("commondir").exists());
    assert!(!sub_git.join("hooks/post-index-change").exists());
    for args in [&["status"][..], &["add", "-A"], &["diff", "HEAD"]] {
        env.git_out(&work, args);
        assert!(
            !marker.exists(),
            "`git {}` ran a planted command",
            args.join(" ")
        );
    }
}

/// A large index's gitlinks are kept for the next start (`plans/<id>.gitlinks.json`) once
/// it has settled, and taken only while the index is the one they were kept for: a run
/// that adds a nested repository changes it, and the next start finds the new gitlink and
/// keeps what that repository's git reads read-only, at once and once the new answer is
/// kept. Twin: both repositories take commits of their own.
#[test]
fn a_large_indexs_kept_gitlinks_hold_only_while_it_is_unchanged() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // About 14,000 entries: an index over the size from which answers are kept (1 MiB).
    for d in 0..70 {
        let dir = repo.join(format!("d{d:02}"));
        fs::create_dir(&dir).unwrap();
        for f in 0..200 {
            fs::write(dir.join(format!("file-{f:04}.txt")), format!("{d} {f}\n")).unwrap();
        }
    }
    env.git(&repo, ["add", "-A"]);
    env.git(&repo, ["commit", "-q", "-m", "many files"]);
    let id = env.new_loop(&repo, "large");
    let index = env.workdir(&id).join(".git/index");
    assert!(fs::metadata(&index).unwrap().len() > 1 << 20);
    let kept = env.ws.join(format!("plans/{id}.gitlinks.json"));
    let add_nested = |name: &str| {
        let profile = env.write_profile("[filesystem]\nallow_write = [\"**/.git\"]\n");
        env.run([
            "config",
            "set",
            "--operator",
            "sandbox.allow_nested_git",
            "true",
        ])
        .ok();
        let made = attempts(
            &env,
            &id,
            &format!("try made sh -c 'git init -q {name} && git -C {name} commit -q --allow-empty -m s && git add {name} && git commit -q -m gitlink-{name}'"),
        );
        verdicts(&made, &[("made", true)]);
        fs::remove_file(profile).unwrap();
    };
    let guarded = |names: &[&str]| {
        let script: String = names
            .iter()
            .map(|n| {
                format!(
                    "try config-{n} git -C {n} config core.fsmonitor 'touch /tmp/x'\ntry commit-{n} git -C {n} commit -q --allow-empty -m more\n"
                )
            })
            .collect();
        let run = attempts(&env, &id, &script);
        for n in names {
            verdicts(
                &run,
                &[
                    (&format!("config-{n}"), false),
                    (&format!("commit-{n}"), true),
                ],
            );
        }
    };
    add_nested("sub");
    // Just written: scanned (and not kept until it has settled).
    guarded(&["sub"]);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    guarded(&["sub"]);
    assert!(kept.exists(), "a settled large index's answer is kept");
    let first = fs::read(&kept).unwrap();
    // Taken: the index is unchanged, the answer the same (the file is not written again).
    guarded(&["sub"]);
    assert_eq!(fs::read(&kept).unwrap(), first);
    // A new gitlink changes the index: found at the next start, before and after the new
    // answer is kept.
    add_nested("sub2");
    guarded(&["sub", "sub2"]);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    guarded(&["sub", "sub2"]);
    assert_ne!(fs::read(&kept).unwrap(), first);
    guarded(&["sub", "sub2"]);
}

/// DESIGN 4.0: a profile comes from the team's remote, so its `allow_write = ["**/.git"]`
/// (a nested repository's config is a program a person's git on the host runs) is refused
/// until the operator config allows it, and no layer but the operator's may: the run
/// fails with the fix named, makes nothing, and the same config from the personal layer is
/// refused. Twin: the operator's word lets the loop make one.
#[test]
fn a_teams_profile_has_nested_repositories_only_with_the_operators_word() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "team");
    env.write_profile("[filesystem]\nallow_write = [\"**/.git\"]\n");
    let run = env.run(["run", "-q", &id, "--", "git", "init", "-q", "sub"]);
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("only the operator config may"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("hint: remove \"**/.git\" from allow_write in")
            && run
                .stderr
                .contains("git loop config set --operator sandbox.allow_nested_git true"),
        "{}",
        run.stderr
    );
    assert!(!env.workdir(&id).join("sub").exists());
    let personal = env.run(["config", "set", "sandbox.allow_nested_git", "true"]);
    assert_ne!(personal.code, 0, "{}", personal.stdout);
    assert!(personal.stderr.contains("operator"), "{}", personal.stderr);
    let run = env.run(["run", "-q", &id, "--", "git", "init", "-q", "sub"]);
    assert_ne!(run.code, 0, "{}", run.stderr);
    // The operator's word.
    env.run([
        "config",
        "set",
        "--operator",
        "sandbox.allow_nested_git",
        "true",
    ])
    .ok();
    env.run(["run", "-q", &id, "--", "git", "init", "-q", "sub"])
        .ok();
    assert!(env.workdir(&id).join("sub/.git").is_dir());
}
