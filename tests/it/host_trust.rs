//! Host-side trust (ATTACKS 28-34, DESIGN 4.0): what a sandbox wrote is data to the host,
//! never instructions and never a path to follow. Each attack is made from inside a real
//! sandbox started by `git loop run`, then the host-side commands a user runs are run,
//! and the test checks that nothing ran, nothing was followed and nothing on the host
//! changed; each has its positive twin.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::common::{Run, TestEnv};

/// `git loop run ID -- sh -c SCRIPT`, which must succeed.
#[track_caller]
fn inside(env: &TestEnv, id: &str, script: &str) -> Run {
    let run = env.run(["run", id, "--", "sh", "-c", script]);
    assert_eq!(
        run.code, 0,
        "the script failed inside\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run
}

/// A path as a single-quoted shell word.
fn q(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// ATTACKS 28: a nested repository planted in the personal tree, whose config runs a
/// command, is never committed as a gitlink and never entered by git on the host, however
/// many autocommits run; a gitlink already in the personal history is taken out. Twin:
/// personal memory written inside is committed.
#[test]
fn a_nested_repository_in_the_personal_tree_runs_nothing_on_the_host() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "nested");
    // By default no repository can be made in the personal tree (tests/it/nested.rs);
    // allowed here, so that what autocommit does with one is tried.
    env.write_profile("[filesystem]\nallow_write = [\"**/.git\"]\n");
    env.run([
        "config",
        "set",
        "--operator",
        "sandbox.allow_nested_git",
        "true",
    ])
    .ok();
    let marker = env.root.join("PWNED-nested");
    let personal = env.ws.join("personal/tester");
    let script = format!(
        r#"set -e
C={cmd}
cd /loopat/context/personal
mkdir evil && cd evil && git init -q
git commit -q --allow-empty -m x
git config core.fsmonitor "$C"
git config core.pager "$C"
printf '#!/bin/sh\n%s\n' "$C" > .git/hooks/post-index-change && chmod +x .git/hooks/post-index-change
echo payload > inside.txt
cd ..
mkdir -p memory && echo "a fact worth keeping" > memory/fact.md
echo PLANTED
"#,
        cmd = q(Path::new(&format!("touch {}", marker.display())))
    );
    inside(&env, &id, &script).stdout_has("PLANTED");
    for round in 0..2 {
        let run = env.run(["autocommit", "--all"]);
        assert!(
            !marker.exists(),
            "round {round}: autocommit ran the nested repository's config\n{}",
            run.stderr
        );
        run.stderr_has("not committing evil: a nested git repository");
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    // Never a gitlink: the personal history holds no `evil`.
    let tree = env.git(&personal, ["ls-tree", "-r", "HEAD"]);
    assert!(!tree.contains("evil"), "{tree}");
    assert!(!tree.contains("160000"), "{tree}");
    // The user's own git in the personal repository enters nothing either.
    for args in [&["status"][..], &["diff"], &["log", "-1", "-p"]] {
        env.git_out(&personal, args);
        assert!(
            !marker.exists(),
            "`git {}` in personal ran it",
            args.join(" ")
        );
    }
    // Twin: the memory written inside is committed.
    assert!(tree.contains("memory/fact.md"), "{tree}");
    assert_eq!(
        env.git(&personal, ["show", "HEAD:memory/fact.md"]),
        "a fact worth keeping\n"
    );

    // A gitlink an earlier version committed is taken out of the index (its files stay).
    let nested_head = env.git(&personal.join("evil"), ["rev-parse", "HEAD"]);
    env.git(
        &personal,
        [
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{},evil", nested_head.trim()),
        ],
    );
    env.git(
        &personal,
        ["commit", "-q", "--no-verify", "-m", "old gitlink"],
    );
    let run = env.run(["autocommit", "--all"]).ok();
    run.stderr_has("removing the gitlink evil");
    assert!(!marker.exists(), "the old gitlink was entered");
    let tree = env.git(&personal, ["ls-tree", "-r", "HEAD"]);
    assert!(!tree.contains("160000"), "{tree}");
    assert!(personal.join("evil/inside.txt").is_file());
}

/// ATTACKS 29, vault init: a `.gitattributes` in the personal tree replaced by a link to
/// the age identity is never read through (the vaults' repository has attributes of its
/// own, and the personal tree's are not git-loop's to read). Twin: vault init works.
#[test]
fn a_link_planted_for_vault_init_is_never_followed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "links");
    env.run(["vault", "init"]).ok();
    let identity = env.home.join(".config/git-loop/identity.txt");
    let secret = fs::read_to_string(&identity).unwrap();
    // The identity's path is what an agent could learn from /proc/self/mountinfo at worst.
    inside(
        &env,
        &id,
        &format!(
            "ln -sf {} /loopat/context/personal/.gitattributes",
            q(&identity)
        ),
    );
    env.run(["vault", "init", "work"]).ok();
    env.run(["autocommit", "--all"]);
    let personal = env.ws.join("personal/tester");
    // Still a link (nothing was written through it or in its place with the key).
    assert!(fs::symlink_metadata(personal.join(".gitattributes"))
        .unwrap()
        .file_type()
        .is_symlink());
    let key_line = secret
        .lines()
        .find(|l| l.starts_with("AGE-SECRET-KEY"))
        .unwrap();
    for file in walk(&personal) {
        if let Ok(text) = fs::read_to_string(&file) {
            assert!(
                !text.contains(key_line),
                "the identity was copied to {}",
                file.display()
            );
        }
    }
    let objects = env.git(&personal, ["log", "--all", "-p", "--no-textconv"]);
    assert!(
        !objects.contains(key_line),
        "the identity entered the history"
    );
    // Inside, nothing of it is readable either.
    let run = inside(
        &env,
        &id,
        &format!(
            "if grep -rqsF -e '{key_line}' /loopat /home /tmp; then echo FOUND; else echo CLEAN; fi"
        ),
    );
    run.stdout_has("CLEAN");
}

/// Every file below `root` (no links followed).
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

/// ATTACKS 29 and issue 11 item 5: links in the knowledge repository (a teammate's push,
/// or a published distill branch) are never followed on the host: team skills that point
/// at the host's `~/.ssh` are not bound, a doctrine that points at a host file is not
/// copied into the loop's CLAUDE.md, a team config that is a link is not read. Twin: real
/// skills and a real doctrine reach the agent.
#[test]
fn links_in_the_knowledge_repository_are_never_followed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let secret = "HOST-SSH-KEY-c0ffee-never-inside";
    let ssh = env.home.join(".ssh");
    fs::create_dir_all(&ssh).unwrap();
    fs::write(ssh.join("id_ed25519"), secret).unwrap();
    let host_file = env.root.join("host-notes.txt");
    fs::write(&host_file, format!("doctrine from the host: {secret}\n")).unwrap();
    env.run(["init"]).ok();
    let knowledge = env.ws.join("context/knowledge");
    let claude = knowledge.join(".loopat/claude");
    fs::create_dir_all(&claude).unwrap();
    symlink(&ssh, claude.join("skills")).unwrap();
    symlink(&host_file, claude.join("CLAUDE.md")).unwrap();
    symlink(&host_file, claude.join("claude.json")).unwrap();
    symlink(&host_file, knowledge.join(".loopat/config.toml")).unwrap();
    env.git(&knowledge, ["add", "-A"]);
    env.git(&knowledge, ["commit", "-q", "-m", "a teammate's links"]);
    let id = env.new_loop(&repo, "team links");
    // The agent command: a shell that reads what it was given.
    // In a folder of its own: the agent's install folder is bound into the sandbox.
    let agent = env.root.join("agent-bin/agent.sh");
    fs::create_dir_all(agent.parent().unwrap()).unwrap();
    fs::write(
        &agent,
        "#!/bin/sh\ncat \"$CLAUDE_CONFIG_DIR/CLAUDE.md\"; ls -A \"$CLAUDE_CONFIG_DIR/skills\" 2>&1; grep -rqsF -e HOST-SSH\"\"-KEY /loopat /home /tmp && echo FOUND-INSIDE; true\n",
    )
    .unwrap();
    fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // A linked folder on the way to a layer file is not followed either.
    let personal_loopat = env.ws.join("personal/tester/.loopat");
    fs::remove_dir_all(&personal_loopat).unwrap();
    let elsewhere = env.root.join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("config.toml"), "[sandbox]\nbogus = 1\n").unwrap();
    symlink(&elsewhere, &personal_loopat).unwrap();
    let config = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(
        &config,
        format!("[agent]\ncommand = [{:?}]\n", agent.display().to_string()),
    )
    .unwrap();
    let run = env.run(["agent", &id]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains(secret), "{}", run.stdout);
    assert!(!run.stdout.contains("FOUND-INSIDE"), "{}", run.stdout);
    run.stderr_has("is a symlink");
    let written = fs::read_to_string(env.loop_dir(&id).join(".claude/CLAUDE.md")).unwrap();
    assert!(!written.contains(secret));
    assert!(
        !env.loop_dir(&id).join(".claude/.claude.json").exists()
            || !fs::read_to_string(env.loop_dir(&id).join(".claude/.claude.json"))
                .unwrap()
                .contains(secret)
    );

    // Twin: real skills and a real doctrine do reach the agent.
    for link in ["skills", "CLAUDE.md", "claude.json"] {
        fs::remove_file(claude.join(link)).unwrap();
    }
    fs::remove_file(knowledge.join(".loopat/config.toml")).unwrap();
    fs::create_dir_all(claude.join("skills/review")).unwrap();
    fs::write(claude.join("skills/review/SKILL.md"), "# Review skill\n").unwrap();
    fs::write(claude.join("CLAUDE.md"), "Team rule: write tests first.\n").unwrap();
    env.git(&knowledge, ["add", "-A"]);
    env.git(&knowledge, ["commit", "-q", "-m", "real ones"]);
    let run = env.run(["agent", &id]).ok();
    run.stdout_has("Team rule: write tests first.")
        .stdout_has("review");
}

/// ATTACKS 33: a read-only grant nested in a read-write one stays read-only: the folders
/// between them cannot be renamed inside (the attack would move the real file out from
/// under the grant and leave a decoy at its path), the grants are bound parents first
/// whatever order they were given in, and a source that was moved or replaced between
/// runs refuses the next run instead of binding something else. Twin: both grants work.
#[test]
fn a_nested_read_only_grant_stays_read_only() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for order in ["outer first", "inner first"] {
        let id = env.new_loop(&repo, order);
        let granted = env
            .root
            .join(format!("granted-{}", order.replace(' ', "-")));
        let proj = granted.join("proj");
        let settings = proj.join("cfg/settings.json");
        fs::create_dir_all(settings.parent().unwrap()).unwrap();
        fs::write(&settings, "real settings\n").unwrap();
        let (rw, ro) = (proj.display().to_string(), settings.display().to_string());
        let grants: [&[&str]; 2] = if order == "outer first" {
            [&["--rw", &rw], &["--ro", &ro]]
        } else {
            [&["--ro", &ro], &["--rw", &rw]]
        };
        for g in grants {
            let mut args = vec!["grant", id.as_str()];
            args.extend_from_slice(g);
            env.run(args).ok();
        }
        let view = env.run(["show", &id, "--mounts"]).ok();
        let line = view
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{ro} ")))
            .unwrap_or_else(|| panic!("{order}: no row for the grant:\n{}", view.stdout));
        assert!(line.contains(" ro"), "{order}: {line}");
        let run = inside(
            &env,
            &id,
            &format!(
                r#"P={proj}
try() {{ if out=$( (eval "$2") 2>&1 ); then echo "DONE $1"; else echo "REFUSED $1: $out"; fi; }}
try write-ro 'echo pwned > "$P/cfg/settings.json"'
try mv-parent 'mv "$P/cfg" "$P/cfg-real"'
try rm-parent 'rm -rf "$P/cfg"'
try swap-parent-link 'mv "$P/cfg" /tmp/c && ln -s /tmp "$P/cfg"'
try write-rw 'echo ok > "$P/other.txt"'
try read-ro 'cat "$P/cfg/settings.json"'
"#,
                proj = q(&proj)
            ),
        );
        for (label, errno) in [
            ("write-ro", "Read-only file system"),
            ("mv-parent", "Device or resource busy"),
            ("rm-parent", ""),
            ("swap-parent-link", "Device or resource busy"),
        ] {
            let verdict = run
                .stdout
                .lines()
                .find(|l| l.contains(&format!(" {label}")))
                .unwrap_or_else(|| panic!("{order}: no verdict for {label}:\n{}", run.stdout));
            assert!(
                verdict.starts_with(&format!("REFUSED {label}")) && verdict.contains(errno),
                "{order}: {verdict}\n{}",
                run.stdout
            );
        }
        run.stdout_has("DONE write-rw").stdout_has("DONE read-ro");
        assert_eq!(fs::read_to_string(&settings).unwrap(), "real settings\n");
        assert_eq!(fs::read_to_string(proj.join("other.txt")).unwrap(), "ok\n");

        // Swapped between runs (on the host, as a process outside any sandbox could):
        // the next run refuses rather than bind the decoy read-only and the real file
        // read-write.
        fs::rename(proj.join("cfg"), proj.join("cfg-real")).unwrap();
        fs::create_dir(proj.join("cfg")).unwrap();
        fs::write(proj.join("cfg/settings.json"), "decoy\n").unwrap();
        env.run(["run", &id, "--", "true"])
            .fails(1)
            .stderr_has("is not what was granted any more");
        // A link where the source was is refused the same way.
        fs::remove_dir_all(proj.join("cfg")).unwrap();
        symlink(proj.join("cfg-real"), proj.join("cfg")).unwrap();
        env.run(["run", &id, "--", "true"])
            .fails(1)
            .stderr_has("symlink");
        assert_eq!(
            fs::read_to_string(proj.join("cfg-real/settings.json")).unwrap(),
            "real settings\n"
        );
    }
}

/// The `.git/config` git-loop holds in a loop's repository is bound read-only as it is
/// when it is exactly git-loop's, and written anew otherwise: one with a second name
/// (through which it could have been changed) or another content is replaced before the
/// sandbox starts, so what git reads inside is always git-loop's. The twin: an untouched
/// one is bound as it is (the same file, not rewritten).
#[test]
fn a_loops_git_config_is_git_loops_at_every_start() {
    use std::os::unix::fs::MetadataExt;
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "cfg");
    inside(&env, &id, "true");
    let config = env.workdir(&id).join(".git/config");
    let before = fs::metadata(&config).unwrap();
    // Untouched: bound as it is.
    inside(&env, &id, "true");
    let same = fs::metadata(&config).unwrap();
    assert_eq!(
        (same.ino(), same.mtime_nsec()),
        (before.ino(), before.mtime_nsec())
    );
    // A second name, even with the same content: replaced (the other name could be
    // written through while the sandbox runs).
    let spare = env.loop_dir(&id).join("spare-name");
    fs::hard_link(&config, &spare).unwrap();
    inside(&env, &id, "true");
    assert_eq!(fs::metadata(&config).unwrap().nlink(), 1);
    assert_eq!(fs::metadata(&spare).unwrap().nlink(), 1);
    // A second name, written through: replaced, and the planted setting never read.
    let other = env.loop_dir(&id).join("other-name");
    fs::hard_link(&config, &other).unwrap();
    let mut text = fs::read_to_string(&other).unwrap();
    text.push_str("[core]\n\tpager = touch /tmp/planted-pager\n[alias]\n\tplanted = status\n");
    fs::write(&other, text).unwrap();
    let run = inside(&env, &id, "git config --get alias.planted || echo NOT-SET");
    run.stdout_has("NOT-SET");
    let after = fs::metadata(&config).unwrap();
    assert_eq!(after.nlink(), 1);
    assert_ne!(after.ino(), before.ino());
    assert!(!fs::read_to_string(&config).unwrap().contains("planted"));
}

/// A deleted grant does not block the loop: the run goes on without it and says how to
/// remove it, and `doctor` names it with the same command. A folder deleted and made again
/// at once (its inode number may come back) is not the grant: the run refuses it, saying
/// why and how to grant it again or remove it. The twin: the original grant binds.
#[test]
fn a_deleted_grant_is_skipped_and_one_made_again_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "grants");
    let data = env.root.join("data");
    fs::create_dir(&data).unwrap();
    fs::write(data.join("a.txt"), "granted\n").unwrap();
    let path = data.display().to_string();
    env.run(["grant", &id, "--ro", &path]).ok();
    let seen = env
        .run(["run", "-q", &id, "--", "cat", &format!("{path}/a.txt")])
        .ok();
    assert_eq!(seen.stdout, "granted\n");

    // Deleted: skipped, with a warning naming the command that removes it.
    fs::remove_dir_all(&data).unwrap();
    let revoke = format!("git loop grant {id} --revoke {path}");
    let run = env
        .run([
            "run",
            &id,
            "--",
            "sh",
            "-c",
            &format!("test -e {path} && echo there || echo absent"),
        ])
        .ok();
    assert_eq!(run.stdout, "absent\n");
    run.stderr_has("is missing").stderr_has(&revoke);
    env.run(["doctor"])
        .stdout_has(&format!("the grant {path} is missing"))
        .stdout_has(&revoke);

    // Made again at once: refused, with both ways out.
    fs::create_dir(&data).unwrap();
    fs::write(data.join("a.txt"), "decoy\n").unwrap();
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has("is not what was granted any more")
        .stderr_has("--revoke")
        .stderr_has("deleted and made again");
    env.run(["doctor"])
        .stdout_has("is not what was granted any more")
        .stdout_has(&revoke);
    // Granted again by the person: it binds.
    env.run(["grant", &id, "--ro", &path]).ok();
    let seen = env
        .run(["run", "-q", &id, "--", "cat", &format!("{path}/a.txt")])
        .ok();
    assert_eq!(seen.stdout, "decoy\n");
    assert!(!env
        .run(["doctor"])
        .stdout
        .contains(&format!("grant {path}")));
}
