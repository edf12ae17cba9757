//! sync: a team shares a workspace across machines through git remotes. Each machine is a
//! workspace of its own (its own HOME, its own folder); the remotes are bare repositories
//! in a folder both reach, as a forge would be.

use std::fs;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::Stdio;

use crate::common::{Run, TestEnv};

/// The team's remotes: bare and empty, as a forge makes them.
pub(crate) struct Remotes {
    _tmp: tempfile::TempDir,
    pub(crate) dir: PathBuf,
}

impl Remotes {
    pub(crate) fn new() -> Remotes {
        let tmp = tempfile::Builder::new()
            .prefix("git-loop-remotes")
            .tempdir()
            .unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        for name in ["notes", "knowledge", "personal", "vaults"] {
            let status = std::process::Command::new("git")
                .args(["init", "-q", "--bare", "-b", "main"])
                .arg(dir.join(format!("{name}.git")))
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .unwrap();
            assert!(status.success());
        }
        Remotes { _tmp: tmp, dir }
    }

    pub(crate) fn url(&self, name: &str) -> String {
        self.dir.join(format!("{name}.git")).display().to_string()
    }

    /// `git loop init` with every remote.
    pub(crate) fn init_args(&self) -> Vec<String> {
        let mut args = vec!["init".to_string()];
        for name in ["notes", "knowledge", "personal", "vaults"] {
            args.push(format!("--{name}"));
            args.push(self.url(name));
        }
        args
    }

    /// The remote's trunk.
    pub(crate) fn tip(&self, env: &TestEnv, name: &str) -> Option<String> {
        env.rev(&self.dir.join(format!("{name}.git")), "refs/heads/main")
    }

    /// The files of the remote's trunk.
    fn files(&self, env: &TestEnv, name: &str) -> Vec<String> {
        env.git(
            &self.dir.join(format!("{name}.git")),
            ["ls-tree", "-r", "--name-only", "main"],
        )
        .lines()
        .map(str::to_string)
        .collect()
    }

    /// Every ref of every remote, for "nothing moved" checks.
    fn refs(&self, env: &TestEnv) -> String {
        ["notes", "knowledge", "personal", "vaults"]
            .iter()
            .map(|n| env.refs(&self.dir.join(format!("{n}.git"))))
            .collect()
    }
}

/// A machine of the team: its own HOME and workspace, set up with the remotes.
pub(crate) fn machine(remotes: &Remotes) -> TestEnv {
    let env = TestEnv::new();
    env.run(remotes.init_args()).ok();
    env
}

/// Every ref of a machine's shared repositories.
fn local_refs(env: &TestEnv) -> String {
    [env.notes(), env.ws.join("context/knowledge"), personal(env)]
        .iter()
        .map(|d| env.refs(d))
        .collect()
}

fn personal(env: &TestEnv) -> PathBuf {
    env.ws.join("personal/tester")
}

/// A loop without code whose notes branch carries `file` (committed as the agent would).
fn loop_with_note(env: &TestEnv, title: &str, file: &str, text: &str) -> String {
    let id = env
        .run(["new", "--scratch", title])
        .ok()
        .stdout
        .trim()
        .to_string();
    env.commit_file(&env.loop_notes(&id), file, text, &format!("note {file}"));
    id
}

pub(crate) fn sync(env: &TestEnv) -> Run {
    env.run(["sync"])
}

#[test]
fn a_new_machine_gets_the_team_s_history_and_the_first_pushes_it() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    // The remotes were empty: the first machine's scaffold is what the next sync pushes.
    assert_eq!(remotes.tip(&a, "notes"), None);
    let first = sync(&a).ok();
    first
        .stdout_has("notes: pushed to origin/main")
        .stdout_has("knowledge: pushed to origin/main")
        .stdout_has("personal: pushed to origin/main");
    assert_eq!(remotes.tip(&a, "notes"), a.rev(&a.notes(), "main"));
    sync(&a)
        .ok()
        .stdout_has("notes: up to date with origin/main");

    let b = machine(&remotes);
    for (dir_a, dir_b) in [
        (a.notes(), b.notes()),
        (
            a.ws.join("context/knowledge"),
            b.ws.join("context/knowledge"),
        ),
        (personal(&a), personal(&b)),
    ] {
        assert_eq!(
            a.rev(&dir_a, "main"),
            b.rev(&dir_b, "main"),
            "{}",
            dir_b.display()
        );
        assert_eq!(b.git(&dir_b, ["status", "--porcelain"]), "");
    }
    sync(&b).ok().stdout_has("notes: up to date");
}

#[test]
fn eight_publishes_at_once_from_two_machines_all_land() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    let mut jobs = Vec::new();
    for i in 0..8 {
        let env = if i % 2 == 0 { &a } else { &b };
        let id = loop_with_note(
            env,
            &format!("topic {i}"),
            &format!("memory/topic-{i}.md"),
            &format!("fact {i}\n"),
        );
        jobs.push((env, id));
    }
    let children: Vec<_> = jobs
        .iter()
        .map(|(env, id)| {
            env.command()
                .current_dir(&env.root)
                .args(["publish", id])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let on_remote = remotes.files(&a, "notes");
    for i in 0..8 {
        assert!(
            on_remote.contains(&format!("memory/topic-{i}.md")),
            "topic {i} is not on the remote: {on_remote:?}"
        );
    }
    sync(&a).ok();
    sync(&b).ok();
    for env in [&a, &b] {
        for i in 0..8 {
            assert_eq!(
                fs::read_to_string(env.notes().join(format!("memory/topic-{i}.md"))).unwrap(),
                format!("fact {i}\n")
            );
        }
        assert_eq!(env.rev(&env.notes(), "main"), remotes.tip(env, "notes"));
        assert_eq!(env.git(&env.notes(), ["status", "--porcelain"]), "");
        env.git(&env.notes(), ["fsck", "--strict", "--no-dangling"]);
    }
}

#[test]
fn the_same_note_changed_differently_is_refused_and_the_fix_works() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    let la = loop_with_note(&a, "plan a", "focus/plan.md", "the plan: ship on Monday\n");
    let lb = loop_with_note(&b, "plan b", "focus/plan.md", "the plan: ship on Friday\n");
    a.run(["publish", &la]).ok();
    // B's publish lands on B's trunk, but the remote's trunk has A's plan: refused there.
    let published = b.run(["publish", &lb]).fails(1);
    published
        .stderr_has("focus/plan.md")
        .stderr_has("git loop sync");
    let remote_before = remotes.refs(&b);
    let local_before = local_refs(&b);
    let refused = sync(&b).fails(1);
    refused
        .stdout_has(
            "notes: main and origin/main changed the same lines of focus/plan.md; nothing moved",
        )
        .stderr_has("hint: nothing was changed; merge by hand")
        .stderr_has(&format!(
            "cd {} && git merge origin/main",
            b.notes().display()
        ));
    assert_eq!(remotes.refs(&b), remote_before, "the remote moved");
    assert_eq!(local_refs(&b), local_before, "a local trunk moved");
    assert_eq!(b.git(&b.notes(), ["status", "--porcelain"]), "");

    // The way the hint says: merge by hand, then sync.
    let merge = b.git_out(&b.notes(), ["merge", "origin/main"]);
    assert_ne!(merge.code, 0, "git merge should stop at the conflict");
    fs::write(
        b.notes().join("focus/plan.md"),
        "the plan: ship on Wednesday\n",
    )
    .unwrap();
    b.git(&b.notes(), ["commit", "-q", "-am", "plan: agreed"]);
    sync(&b).ok().stdout_has("notes: pushed to origin/main");
    sync(&a).ok().stdout_has("notes: main fast-forwarded");
    assert_eq!(
        fs::read_to_string(a.notes().join("focus/plan.md")).unwrap(),
        "the plan: ship on Wednesday\n"
    );
}

#[test]
fn personal_memory_written_in_a_loop_reaches_the_other_machine() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    let id = a
        .run(["new", "--scratch", "remember"])
        .ok()
        .stdout
        .trim()
        .to_string();
    a.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        "echo 'prefers small commits' > /loopat/context/personal/memory/style.md",
    ])
    .ok();
    // The sync commits what loops left in the personal repository, then shares it.
    sync(&a)
        .ok()
        .stderr_has("personal: committed 1 path")
        .stdout_has("personal: pushed to origin/main");
    sync(&b).ok().stdout_has("personal: main fast-forwarded");
    assert_eq!(
        fs::read_to_string(personal(&b).join("memory/style.md")).unwrap(),
        "prefers small commits\n"
    );
    // And a loop on B reads it.
    let on_b = b
        .run(["new", "--scratch", "recall"])
        .ok()
        .stdout
        .trim()
        .to_string();
    b.run([
        "run",
        &on_b,
        "--",
        "cat",
        "/loopat/context/personal/memory/style.md",
    ])
    .ok()
    .stdout_has("prefers small commits");
}

#[test]
fn both_machines_changed_personal_memory_and_it_merges() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    fs::write(personal(&a).join("memory/a.md"), "from a\n").unwrap();
    fs::write(personal(&b).join("memory/b.md"), "from b\n").unwrap();
    sync(&a).ok();
    sync(&b)
        .ok()
        .stdout_has("personal: main merged with origin/main")
        .stdout_has("pushed");
    sync(&a).ok();
    for env in [&a, &b] {
        assert!(personal(env).join("memory/a.md").is_file());
        assert!(personal(env).join("memory/b.md").is_file());
        assert_eq!(
            env.rev(&personal(env), "main"),
            remotes.tip(env, "personal")
        );
        assert_eq!(env.git(&personal(env), ["status", "--porcelain"]), "");
    }
}

#[test]
fn an_offline_publish_lands_locally_and_the_next_sync_pushes_it() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let id = loop_with_note(&a, "offline", "memory/offline.md", "written on a train\n");
    let away = remotes.dir.join("notes.git.away");
    fs::rename(remotes.dir.join("notes.git"), &away).unwrap();
    let published = a.run(["publish", &id]).ok();
    published
        .stdout_has("notes: main fast-forwarded")
        .stderr_has("the next `git loop sync` pushes it");
    assert!(a.notes().join("memory/offline.md").is_file());
    // Still offline: the sync says so, fails, and loses nothing.
    let offline = sync(&a).fails(1);
    offline.stdout_has("notes: origin cannot be reached");
    assert!(a.notes().join("memory/offline.md").is_file());

    fs::rename(&away, remotes.dir.join("notes.git")).unwrap();
    sync(&a).ok().stdout_has("notes: pushed to origin/main");
    assert!(remotes
        .files(&a, "notes")
        .contains(&"memory/offline.md".to_string()));
}

#[test]
fn publish_local_keeps_it_off_the_remote() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let before = remotes.tip(&a, "notes");
    let id = loop_with_note(&a, "private", "memory/draft.md", "not yet\n");
    a.run(["publish", &id, "--local"]).ok();
    assert!(a.notes().join("memory/draft.md").is_file());
    assert_eq!(remotes.tip(&a, "notes"), before);
}

#[test]
fn a_dry_run_moves_nothing_anywhere() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    let id = loop_with_note(&a, "news", "memory/news.md", "news\n");
    a.run(["publish", &id]).ok();
    fs::write(personal(&b).join("memory/mine.md"), "mine\n").unwrap();
    let remote_before = remotes.refs(&b);
    let heads_before: Vec<Option<String>> = [b.notes(), personal(&b)]
        .iter()
        .map(|d| b.rev(d, "main"))
        .collect();
    // Every ref of every repository, the remote-tracking ones included.
    let refs_before = local_refs(&b);
    let dry = b.run(["sync", "--dry-run"]).ok();
    dry.stdout_has("notes: main would be fast-forwarded");
    assert_eq!(remotes.refs(&b), remote_before);
    assert_eq!(local_refs(&b), refs_before, "a dry run moved a ref");
    let heads_after: Vec<Option<String>> = [b.notes(), personal(&b)]
        .iter()
        .map(|d| b.rev(d, "main"))
        .collect();
    assert_eq!(heads_after, heads_before);
    assert!(!b.notes().join("memory/news.md").exists());
    // Nothing committed in the personal repository either.
    assert!(b
        .git(&personal(&b), ["status", "--porcelain"])
        .contains("memory/mine.md"));
}

#[test]
fn json_reports_each_repository() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    let json = a.run(["sync", "--json"]).ok().json();
    let repos: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["repo"].as_str().unwrap())
        .collect();
    assert_eq!(repos, ["knowledge", "notes", "personal", "vaults"]);
    let notes = &json[1];
    assert_eq!(notes["state"]["kind"], "synced");
    assert_eq!(notes["state"]["pushed"], true);
    assert_eq!(notes["remote"], remotes.url("notes"));
    assert_eq!(
        notes["remote_trunk"]["new"].as_str(),
        a.rev(&a.notes(), "main").as_deref()
    );
}

#[test]
fn loops_branches_are_pushed_only_when_asked() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    let id = loop_with_note(&a, "shared draft", "memory/draft.md", "draft\n");
    // The branch reaches the notes origin when the host imports it (review does).
    a.run(["review", &id]).ok();
    sync(&a).ok();
    let branches = |env: &TestEnv| {
        env.git(
            &remotes.dir.join("notes.git"),
            ["branch", "--list", "loop/*"],
        )
    };
    assert_eq!(branches(&a), "", "unpublished work left the machine");
    a.run(["sync", "--loops"])
        .ok()
        .stderr_has("1 loop branch pushed");
    assert!(branches(&a).contains(&format!("loop/{id}")));
}

#[test]
fn vaults_travel_encrypted_and_open_with_the_carried_identity() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    a.run(["vault", "init"]).ok();
    let mut child = a
        .command()
        .current_dir(&a.root)
        .args(["vault", "set", "default", "env", "API_TOKEN"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"tok_secret_value")
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    sync(&a).ok().stdout_has("vaults: pushed to origin/main");
    // What the remote holds is age files, never the value.
    let on_remote = remotes.files(&a, "vaults");
    assert!(
        on_remote.contains(&"default/envs/API_TOKEN.age".to_string()),
        "{on_remote:?}"
    );
    let dump = a.git(
        &remotes.dir.join("vaults.git"),
        ["log", "-p", "--all", "--text"],
    );
    assert!(!dump.contains("tok_secret_value"));

    // The person carries the identity to the second machine; the remote never has it.
    let b = TestEnv::new();
    let identity = |env: &TestEnv| env.home.join(".config/git-loop/identity.txt");
    fs::create_dir_all(identity(&b).parent().unwrap()).unwrap();
    fs::copy(identity(&a), identity(&b)).unwrap();
    b.run(remotes.init_args()).ok();
    b.run(["vault", "list"]).ok().stdout_has("API_TOKEN");
    b.run(["vault", "get", "default", "env", "API_TOKEN"])
        .ok()
        .stdout_has("tok_secret_value");
}

#[test]
fn init_refuses_another_remote_and_changes_nothing() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    let before = local_refs(&a);
    let other = remotes.dir.join("other.git");
    let refused = a.run(["init", "--notes", other.to_str().unwrap()]).fails(1);
    refused
        .stderr_has(&format!("has the remote {} already", remotes.url("notes")))
        .stderr_has("remote set-url origin");
    assert_eq!(local_refs(&a), before);
    assert_eq!(
        a.git(&a.notes(), ["remote", "get-url", "origin"]).trim(),
        remotes.url("notes")
    );
}

#[test]
fn an_existing_workspace_gets_remotes_and_a_pristine_one_takes_the_team_s() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    // A workspace made before the remotes existed: its work is kept, the remote set.
    let b = TestEnv::new();
    let id = loop_with_note(&b, "local work", "memory/local.md", "kept\n");
    b.run(["publish", &id]).ok();
    let own = b.rev(&b.notes(), "main");
    // Its knowledge is untouched since `init` made it: replaced by the team's.
    let init = b.run(remotes.init_args()).ok();
    init.stderr_has(&format!("its remote is now {}", remotes.url("notes")))
        .stderr_has(&format!("cloned {}", remotes.url("knowledge")));
    assert_eq!(b.rev(&b.notes(), "main"), own);
    assert_eq!(
        b.rev(&b.ws.join("context/knowledge"), "main"),
        a.rev(&a.ws.join("context/knowledge"), "main")
    );
}

#[test]
fn a_copied_workspace_works_after_doctor_fix() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    let repo = a.repo("app");
    let id = a.new_loop(&repo, "work");
    a.commit_file(&a.workdir(&id), "feature.c", "int f(void);\n", "feature");

    // Another machine: the workspace copied as it is, the code cloned under ~/src.
    let b = TestEnv::new();
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(&a.ws)
        .arg(&b.ws)
        .status()
        .unwrap();
    assert!(status.success());
    let src = b.home.join("src");
    fs::create_dir_all(&src).unwrap();
    fs::rename(&repo, src.join("app")).unwrap();

    let doctor = b.run(["doctor"]);
    assert_eq!(doctor.code, 1, "{}", doctor.stdout);
    doctor.stdout_has("repository 'app' is missing");
    let fixed = b.run(["doctor", "--fix"]);
    fixed.stdout_has(&format!(
        "repository 'app' relinked to {}",
        src.join("app").display()
    ));
    let after = b.run(["doctor"]);
    assert!(
        !after.stdout.contains("is missing") && !after.stdout.contains("problem repos"),
        "{}",
        after.stdout
    );
    b.run(["run", &id, "--", "git", "log", "--oneline", "-1"])
        .ok()
        .stdout_has("feature");
    b.run(["merge", &id]).ok();
    assert!(src.join("app/feature.c").is_file());
}

#[test]
fn doctor_fix_says_which_repository_it_could_not_find() {
    let a = TestEnv::new();
    let repo = a.repo("lost");
    a.new_loop(&repo, "work");
    fs::remove_dir_all(&repo).unwrap();
    let out = a.run(["doctor", "--fix"]);
    assert_eq!(out.code, 1);
    out.stdout_has("repository 'lost' is missing")
        .stdout_has("looked for a repository named lost under")
        .stdout_has("none found");
}

#[test]
fn cron_install_sync_adds_the_sync() {
    let env = TestEnv::new();
    let tab = env.root.join("crontab.txt");
    let fake = env.root.join("crontab");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -l ]; then cat {0} 2>/dev/null || {{ echo 'no crontab for tester' >&2; exit 1; }}; else cat > {0}; fi\n",
            tab.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = env.command();
    cmd.current_dir(&env.root)
        .env("GIT_LOOP_CRONTAB", &fake)
        .args(["cron", "install", "--sync", "--every", "10m"]);
    assert!(cmd.status().unwrap().success());
    let line = fs::read_to_string(&tab).unwrap();
    assert!(line.starts_with("*/10 * * * * "), "{line}");
    assert!(
        line.contains("autocommit --all --quiet; GIT_LOOP_HOME="),
        "{line}"
    );
    assert!(
        line.contains(" sync --quiet # git-loop autocommit"),
        "{line}"
    );
}

#[test]
fn a_sync_killed_between_the_checkout_and_the_branch_is_finished_and_nothing_reverts() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    fs::write(personal(&a).join("memory/a.md"), "from a\n").unwrap();
    sync(&a).ok();
    let before = b.rev(&personal(&b), "main");
    let killed = b
        .command()
        .current_dir(&b.root)
        .env("GIT_LOOP_FAILPOINT", "sync:personal-checkout")
        .args(["sync"])
        .output()
        .unwrap();
    assert!(!killed.status.success());
    assert!(
        personal(&b).join("memory/a.md").is_file(),
        "the checkout was done"
    );
    assert_eq!(
        b.rev(&personal(&b), "main"),
        before,
        "the branch had not moved"
    );
    // An autocommit now must not commit the merged files as a change that undoes it.
    b.run(["autocommit", "--all"])
        .ok()
        .stderr_has("personal: finished an interrupted sync");
    assert_eq!(b.rev(&personal(&b), "main"), remotes.tip(&b, "personal"));
    assert_eq!(b.git(&personal(&b), ["status", "--porcelain"]), "");
    sync(&b).ok().stdout_has("personal: up to date");
}

#[test]
fn a_link_planted_in_the_personal_tree_does_not_lead_the_sync_s_checkout_out() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    let victim = b.home.join("victim");
    fs::create_dir_all(&victim).unwrap();
    fs::write(victim.join("keep.txt"), "keep\n").unwrap();
    // A sandbox on B swaps the personal repository's folder for a link to the host's.
    let id = b
        .run(["new", "--scratch", "plant"])
        .ok()
        .stdout
        .trim()
        .to_string();
    let planted = b.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        &format!(
            "cd /loopat/context/personal && mv memory memory.orig && ln -s {} memory && echo planted",
            victim.display()
        ),
    ]);
    planted.ok().stdout_has("planted");
    // A writes new memory; B syncs it.
    fs::write(personal(&a).join("memory/new.md"), "new fact\n").unwrap();
    sync(&a).ok();
    let _ = sync(&b);
    let mut names: Vec<String> = fs::read_dir(&victim)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["keep.txt"], "the sync wrote through the link");
    assert_eq!(
        fs::read_to_string(victim.join("keep.txt")).unwrap(),
        "keep\n"
    );
}

/// The positive twin of the link test: the same sync into an untouched personal tree
/// writes the file where it belongs.
#[test]
fn new_personal_memory_arrives_in_the_personal_tree() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    fs::write(personal(&a).join("memory/new.md"), "new fact\n").unwrap();
    sync(&a).ok();
    sync(&b).ok();
    assert_eq!(
        fs::read_to_string(personal(&b).join("memory/new.md")).unwrap(),
        "new fact\n"
    );
}

/// ATTACKS 28: a nested repository planted in the personal tree, its config naming a
/// command for the fsmonitor; `sync` commits and shares the personal repository and runs
/// nothing of it on the host. The twin: the memory written next to it is shared.
#[test]
fn a_nested_repository_in_the_personal_tree_runs_nothing_when_synced() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let marker = a.root.join("pwned");
    let id = a
        .run(["new", "--scratch", "nested"])
        .ok()
        .stdout
        .trim()
        .to_string();
    // By default no repository can be made in the personal tree (tests/it/nested.rs);
    // allowed here, so that what sync does with one is tried.
    a.write_profile("[filesystem]\nallow_write = [\"**/.git\"]\n");
    a.run([
        "config",
        "set",
        "--operator",
        "sandbox.allow_nested_git",
        "true",
    ])
    .ok();
    a.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        &format!(
            "cd /loopat/context/personal && mkdir evil && cd evil && git init -q && \
             git config core.fsmonitor 'touch {0}' && git config core.hooksPath /nowhere && \
             echo x > f && git add f && git commit -q -m x && \
             echo 'legit memory' > ../memory/legit.md && echo planted",
            marker.display()
        ),
    ])
    .ok()
    .stdout_has("planted");
    let synced = sync(&a);
    synced.stderr_has("evil");
    assert!(
        !marker.exists(),
        "the nested repository's fsmonitor ran on the host"
    );
    let on_remote = remotes.files(&a, "personal");
    assert!(
        on_remote.contains(&"memory/legit.md".to_string()),
        "{on_remote:?}"
    );
    assert!(
        !on_remote.iter().any(|p| p.starts_with("evil")),
        "the nested repository was shared: {on_remote:?}"
    );
}

/// What a remote sends is checked on the way in: a malformed commit someone pushed to the
/// notes remote (an author line git would never write) is refused by the sync, which moves
/// no ref; the twin is the first sync of this test, which takes well-formed history.
#[test]
fn a_malformed_object_from_the_remote_is_refused() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    sync(&b).ok().stdout_has("notes: up to date");
    // Someone with push rights writes a commit git's fsck rejects straight into the remote.
    let bare = remotes.dir.join("notes.git");
    let tip = a.rev(&bare, "main").unwrap();
    let tree = a.git(&bare, ["rev-parse", &format!("{tip}^{{tree}}")]);
    let body = format!(
        "tree {}\nparent {tip}\nauthor broken <no-closing-bracket 1700000000 +0000\ncommitter x <x@y> 1700000000 +0000\n\nbad\n",
        tree.trim()
    );
    let path = remotes.dir.join("bad-commit");
    fs::write(&path, body).unwrap();
    let bad = a.git(
        &bare,
        [
            "hash-object",
            "-t",
            "commit",
            "--literally",
            "-w",
            path.to_str().unwrap(),
        ],
    );
    a.git(&bare, ["update-ref", "refs/heads/main", bad.trim()]);
    let before = local_refs(&b);
    let refused = sync(&b).fails(1);
    refused
        .stderr_has("notes: the remote holds an object git refuses")
        .stderr_has(&bad.trim()[..12]);
    assert!(
        !refused.stdout.contains("cannot be reached"),
        "{}",
        refused.stdout
    );
    assert_eq!(local_refs(&b), before, "a ref moved");
    assert_ne!(b.rev(&b.notes(), "main").unwrap(), bad.trim());
}

/// A sync killed while it brings the notes checkout along (issue 29): the branch has moved,
/// the checkout has not (or only partly). The next sync finishes it before it says
/// anything, and never says "up to date" over a checkout that differs from trunk.
#[test]
fn a_sync_killed_in_the_notes_checkout_is_finished_by_the_next_sync() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let b = machine(&remotes);
    sync(&b).ok();
    for point in ["checkout:before-read-tree", "checkout:after-read-tree"] {
        let file = format!("memory/{}.md", point.replace(':', "-"));
        let id = loop_with_note(&a, point, &file, "a fact\n");
        a.run(["publish", &id]).ok();
        let killed = b
            .command()
            .current_dir(&b.root)
            .env("GIT_LOOP_FAILPOINT", point)
            .args(["sync"])
            .output()
            .unwrap();
        assert!(
            !killed.status.success(),
            "{point}: the failpoint was reached"
        );
        assert_eq!(b.rev(&b.notes(), "main"), remotes.tip(&b, "notes"));
        assert!(
            b.ws.join("locks/checkout-notes.pending").is_file(),
            "{point}: the journal the writer leaves"
        );
        assert_ne!(
            b.git(&b.notes(), ["status", "--porcelain"]),
            "",
            "{point}: the checkout differs from trunk"
        );
        let next = sync(&b).ok();
        next.stderr_has("finished the interrupted checkout update");
        assert_eq!(b.git(&b.notes(), ["status", "--porcelain"]), "", "{point}");
        assert_eq!(
            fs::read_to_string(b.notes().join(&file)).unwrap(),
            "a fact\n"
        );
        assert!(!b.ws.join("locks/checkout-notes.pending").exists());
    }
}

/// A link where the workspace keeps one of its repositories is not followed by sync: git
/// would run wherever it led. The others are synced all the same.
#[test]
fn a_link_where_a_workspace_repository_should_be_is_refused_by_name() {
    let remotes = Remotes::new();
    let a = machine(&remotes);
    sync(&a).ok();
    let notes = a.ws.join("context/notes");
    let moved = a.root.join("elsewhere");
    fs::rename(&notes, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &notes).unwrap();
    let before = a.refs(&moved);
    let run = sync(&a).fails(1);
    run.stderr_has(&format!(
        "notes: {} is a link, where git-loop keeps a folder of its own; nothing was synced",
        notes.display()
    ));
    run.stdout_has("knowledge: up to date");
    assert_eq!(a.refs(&moved), before);
}
