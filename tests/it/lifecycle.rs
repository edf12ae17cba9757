use std::fs;

use crate::common::TestEnv;

fn is_id(s: &str, slug: &str) -> bool {
    s.len() == slug.len() + 7
        && s.starts_with(&format!("{slug}-"))
        && s[slug.len() + 1..].chars().all(|c| c.is_ascii_hexdigit())
}

#[test]
fn new_makes_a_loop_with_its_own_repositories() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let base = env.rev(&repo, "HEAD").unwrap();
    let run = env
        .run_in(&repo, ["new", "Fix the login bug", "--json"])
        .ok();
    let rec = run.json();
    let id = rec["id"].as_str().unwrap().to_string();
    assert!(is_id(&id, "fix-the-login-bug"), "{id}");
    assert_eq!(rec["branch"], format!("loop/{id}"));
    assert_eq!(rec["kind"], "code");
    assert_eq!(rec["state"], "active");
    assert_eq!(rec["repo"], "app");
    assert_eq!(rec["base"], base);
    assert_eq!(rec["base_branch"], "main");
    assert_eq!(rec["vault"], "default");
    assert_eq!(rec["title"], "Fix the login bug");
    assert_eq!(rec["path"], env.loop_dir(&id).to_str().unwrap());
    assert!(rec["created_at"].as_str().unwrap().ends_with('Z'));

    // The workdir: its own repository on loop/<id> at the base, sharing the origin's objects.
    let wd = env.workdir(&id);
    assert!(wd.join(".git").is_dir(), "workdir has its own .git folder");
    assert_eq!(
        env.git(&wd, ["symbolic-ref", "--short", "HEAD"]).trim(),
        format!("loop/{id}")
    );
    assert_eq!(env.rev(&wd, "HEAD").unwrap(), base);
    assert_eq!(
        fs::read_to_string(wd.join("main.c")).unwrap(),
        "int main(void) { return 0; }\n"
    );
    assert_eq!(env.git(&wd, ["status", "--porcelain"]), "");
    let alternates = fs::read_to_string(wd.join(".git/objects/info/alternates")).unwrap();
    assert_eq!(
        alternates.trim(),
        "../../../../../context/repos/app/.git/objects"
    );
    assert_eq!(
        env.git(&wd, ["remote", "get-url", "origin"]).trim(),
        "../../../context/repos/app"
    );
    assert_eq!(env.rev(&wd, "origin/main").unwrap(), base);
    env.git(&wd, ["fsck", "--no-dangling"]);
    // The origin shows the loop at once.
    assert_eq!(env.rev(&repo, &format!("loop/{id}")).unwrap(), base);
    assert!(env.git(&repo, ["branch"]).contains(&format!("loop/{id}")));
    assert_eq!(
        fs::read_link(env.ws.join("context/repos/app")).unwrap(),
        repo
    );

    // Notes: the loop's own clone on loop/<id> at trunk, and the origin has the branch.
    let notes = env.loop_notes(&id);
    let trunk = env.rev(&env.notes(), "main").unwrap();
    assert_eq!(
        env.git(&notes, ["symbolic-ref", "--short", "HEAD"]).trim(),
        format!("loop/{id}")
    );
    assert_eq!(env.rev(&notes, "HEAD").unwrap(), trunk);
    assert!(notes.join("memory/MEMORY.md").is_file());
    assert_eq!(env.rev(&env.notes(), &format!("loop/{id}")).unwrap(), trunk);
    // The clone reaches its origin through ../.origins/notes: a link on the host, a
    // read-only bind in the sandbox (where the clone sits at /loopat/context/notes).
    assert_eq!(
        fs::read_to_string(notes.join(".git/objects/info/alternates"))
            .unwrap()
            .trim(),
        "../../../.origins/notes/.git/objects"
    );
    assert_eq!(
        fs::canonicalize(env.loop_dir(&id).join("context/.origins/notes")).unwrap(),
        env.notes()
    );
    assert_eq!(
        env.git(&notes, ["remote", "get-url", "origin"]).trim(),
        "../.origins/notes"
    );
    env.git(&notes, ["fetch", "-q", "origin"]);
    env.git(&notes, ["fsck", "--no-dangling"]);

    for dir in [".claude", "home/upper", "home/work"] {
        assert!(env.loop_dir(&id).join(dir).is_dir(), "{dir}");
    }
    let toml = fs::read_to_string(env.loop_dir(&id).join("loop.toml")).unwrap();
    for field in [
        "id",
        "title",
        "kind",
        "repo",
        "base",
        "branch",
        "vault",
        "sandbox",
        "mode",
        "network",
        "created_by",
        "created_at",
        "state",
        "grants",
    ] {
        assert!(
            toml.lines().any(|l| l.starts_with(&format!("{field} = "))),
            "loop.toml lacks {field}:\n{toml}"
        );
    }
    // The workspace's relative paths resolve from the workdir too (the sandbox relies on it).
    env.git(&wd, ["fetch", "-q", "origin"]);
}

#[test]
fn new_from_a_subfolder_with_a_base_and_with_repo() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let first = env.rev(&repo, "HEAD").unwrap();
    env.git(&repo, ["tag", "v1"]);
    env.commit_file(&repo, "src/lib.c", "int x;\n", "second");
    let sub = repo.join("src");
    let id = env
        .run_in(&sub, ["new", "from sub", "--base", "v1"])
        .ok()
        .stdout
        .trim()
        .to_string();
    assert_eq!(env.rev(&env.workdir(&id), "HEAD").unwrap(), first);
    assert!(!env.workdir(&id).join("src/lib.c").exists());

    let id2 = env
        .run([
            "new",
            "elsewhere",
            "--repo",
            repo.to_str().unwrap(),
            "--base",
            "HEAD~1",
        ])
        .ok()
        .stdout
        .trim()
        .to_string();
    assert_eq!(env.rev(&env.workdir(&id2), "HEAD").unwrap(), first);
    // The same repository is registered once.
    assert_eq!(
        fs::read_dir(env.ws.join("context/repos")).unwrap().count(),
        1
    );
}

#[test]
fn repositories_with_the_same_folder_name_get_distinct_names() {
    let env = TestEnv::new();
    let a = env.repo("one/app");
    let b = env.repo("two/app");
    let ia = env.new_loop(&a, "a");
    let ib = env.new_loop(&b, "b");
    let ra = env.run(["show", &ia, "--json"]).ok().json();
    let rb = env.run(["show", &ib, "--json"]).ok().json();
    assert_eq!(ra["repo"], "app");
    assert_eq!(rb["repo"], "app-2");
    assert_eq!(
        fs::read_link(env.ws.join("context/repos/app-2")).unwrap(),
        b
    );
}

#[test]
fn scratch_loops_have_an_empty_workdir() {
    let env = TestEnv::new();
    let rec = env.run(["new", "--scratch", "think", "--json"]).ok().json();
    let id = rec["id"].as_str().unwrap();
    assert_eq!(rec["kind"], "scratch");
    assert!(rec["repo"].is_null());
    assert_eq!(fs::read_dir(env.workdir(id)).unwrap().count(), 0);
    assert!(env.loop_notes(id).join(".git").is_dir());
    // A scratch loop outside any repository without --scratch is refused (bad_input.rs);
    // with no title at all the slug is `loop`.
    let run = env.run(["new", "--scratch"]).ok();
    assert!(is_id(run.stdout.trim(), "loop"), "{}", run.stdout);
}

#[test]
fn list_and_show_report_state_and_counts_after_import() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "work");
    let repo_refs_before = env.refs(&repo);

    // The agent commits in its workdir and in its notes (here: as it would inside).
    env.commit_file(&env.workdir(&id), "feature.c", "int f;\n", "feature");
    env.commit_file(&env.workdir(&id), "feature2.c", "int g;\n", "feature 2");
    env.commit_file(&env.loop_notes(&id), "memory/topic.md", "fact\n", "note");
    let tip = env.rev(&env.workdir(&id), "HEAD").unwrap();

    let list = env.run(["list"]).ok();
    let line = list.stdout.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(
        line.contains("active") && line.contains("+2 -0") && line.contains("+1"),
        "{line}"
    );
    assert!(list.stdout.lines().next().unwrap().starts_with("ID"));

    // The import moved only loop/<id> in the origin, to the agent's commit.
    assert_eq!(env.rev(&repo, &format!("loop/{id}")).unwrap(), tip);
    let after = env.refs(&repo);
    let changed: Vec<&str> = after
        .lines()
        .filter(|l| !repo_refs_before.contains(*l))
        .collect();
    assert_eq!(
        changed,
        vec![format!("refs/heads/loop/{id} {tip}").as_str()]
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    assert_eq!(
        env.git(&repo, ["show", &format!("loop/{id}:feature2.c")]),
        "int g;\n"
    );

    let json = env.run(["list", "--json"]).ok().json();
    let item = &json.as_array().unwrap()[0];
    assert_eq!(item["id"], id.as_str());
    assert_eq!(item["state"], "active");
    assert!(item["disk_bytes"].as_u64().unwrap() > 0);
    let code = item["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["role"] == "code")
        .unwrap();
    assert_eq!(code["ahead"], 2);

    let show = env.run(["show", &id]).ok();
    show.stdout_has("code:       2 ahead, 0 behind main")
        .stdout_has("notes:      1 ahead");
    let show = env.run(["show", &id, "--json"]).ok().json();
    for key in [
        "id",
        "title",
        "kind",
        "state",
        "branch",
        "repo",
        "base",
        "vault",
        "path",
        "created_at",
    ] {
        assert!(show.get(key).is_some(), "{key}");
    }
}

#[test]
fn ids_resolve_by_unique_prefix_of_id_or_slug() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = env.new_loop(&repo, "alpha one");
    let b = env.new_loop(&repo, "alpha two");
    let c = env.new_loop(&repo, "beta");
    assert_eq!(
        env.run(["show", "beta", "--json"]).ok().json()["id"],
        c.as_str()
    );
    assert_eq!(
        env.run(["show", "alpha-t", "--json"]).ok().json()["id"],
        b.as_str()
    );
    assert_eq!(
        env.run(["show", &a, "--json"]).ok().json()["id"],
        a.as_str()
    );
    env.run(["show", "alpha"])
        .fails(2)
        .stderr_has("more than one loop")
        .stderr_has(&a)
        .stderr_has(&b);
    env.run(["show", "gamma"])
        .fails(2)
        .stderr_has("no loop 'gamma'");
    env.run(["show", "../etc"]).fails(2);
}

/// `rm` refuses only what removal would lose: a loop whose commits are on its branch is
/// removed and the branch stays (said, never "discarding"); with `--delete-branches` the
/// same commits would be lost, so that is refused, and `--force` says what it discards.
#[test]
fn rm_keeps_branches_and_refuses_only_what_it_would_lose() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "work");
    env.commit_file(&env.workdir(&id), "f.c", "int f;\n", "unmerged work");
    let tip = env.rev(&env.workdir(&id), "HEAD").unwrap();
    let rm = env.run(["rm", &id]).ok();
    rm.stderr_has(&format!("removed loop {id}"))
        .stderr_has(&format!(
            "kept loop/{id} in {}, with 1 commit not in main",
            repo.display()
        ));
    assert!(!rm.stderr.contains("discard"), "{}", rm.stderr);
    assert!(!env.loop_dir(&id).exists());
    assert_eq!(
        env.rev(&repo, &format!("loop/{id}")).unwrap(),
        tip,
        "branches are kept"
    );
    let all = env.run(["list", "--all"]).ok();
    assert!(
        all.stdout
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("removed")),
        "{}",
        all.stdout
    );

    // Deleting the branches would lose the commits: refused, and nothing changes.
    let other = env.new_loop(&repo, "more work");
    env.commit_file(&env.workdir(&other), "g.c", "int g;\n", "more");
    let other_tip = env.rev(&env.workdir(&other), "HEAD").unwrap();
    env.run(["rm", &other, "--delete-branches"])
        .fails(1)
        .stderr_has(&format!("removing loop {other} would lose work"))
        .stderr_has(&format!(
            "code: 1 commit on loop/{other} that is in neither main nor a remote, which --delete-branches deletes"
        ));
    assert!(env.loop_dir(&other).is_dir());
    assert_eq!(env.rev(&repo, &format!("loop/{other}")).unwrap(), other_tip);
    env.run(["rm", &other, "--delete-branches", "--force"])
        .ok()
        .stderr_has(&format!("discarding code: 1 commit on loop/{other}"));
    assert!(env.rev(&repo, &format!("loop/{other}")).is_none());
}

#[test]
fn rm_refuses_unimported_and_uncommitted_work() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "dirty");
    fs::write(env.workdir(&id).join("wip.c"), "int wip;\n").unwrap();
    env.run(["rm", &id])
        .fails(1)
        .stderr_has("uncommitted changes (wip.c)");
    fs::remove_file(env.workdir(&id).join("wip.c")).unwrap();

    // Work on another branch of the loop's repository is not imported; rm must see it.
    env.git(&env.workdir(&id), ["checkout", "-q", "-b", "side"]);
    env.commit_file(&env.workdir(&id), "side.c", "int s;\n", "side work");
    env.git(&env.workdir(&id), ["checkout", "-q", &format!("loop/{id}")]);
    env.run(["rm", &id])
        .fails(1)
        .stderr_has("commits on branch side not in the origin");
}

#[test]
fn rm_of_a_clean_loop_and_delete_branches() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "nothing done");
    env.run(["rm", &id, "--delete-branches"]).ok();
    assert!(!env.loop_dir(&id).exists());
    assert!(env.rev(&repo, &format!("loop/{id}")).is_none());
    assert!(env.rev(&env.notes(), &format!("loop/{id}")).is_none());
    assert!(env.rev(&repo, "main").is_some(), "other branches stay");
}

#[test]
fn gc_removes_merged_loops_only() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let merged = env.new_loop(&repo, "merged");
    let active = env.new_loop(&repo, "active");
    let empty = env.new_loop(&repo, "empty");
    env.commit_file(&env.workdir(&merged), "m.c", "int m;\n", "merged work");
    env.commit_file(&env.workdir(&active), "a.c", "int a;\n", "active work");
    env.run(["list"]).ok(); // imports
    env.git(
        &repo,
        ["merge", "-q", "--ff-only", &format!("loop/{merged}")],
    );

    let dry = env.run(["gc", "--dry-run"]).ok();
    assert_eq!(dry.stdout.trim(), format!("would remove {merged} (merged)"));
    assert!(env.loop_dir(&merged).exists());

    env.run(["gc", "--older-than", "1d"])
        .ok()
        .stderr_has("nothing to remove");
    assert!(env.loop_dir(&merged).exists());

    env.run(["gc", "--merged"])
        .ok()
        .stdout_has(&format!("removed {merged} (merged)"));
    assert!(!env.loop_dir(&merged).exists());
    assert!(
        env.rev(&repo, &format!("loop/{merged}")).is_none(),
        "a merged branch is deleted"
    );
    assert!(env.loop_dir(&active).exists());
    assert!(
        env.loop_dir(&empty).exists(),
        "a loop with nothing done is not finished"
    );
    assert!(env.rev(&repo, "main").is_some());
}

#[test]
fn gc_older_than_uses_the_creation_time() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "old");
    env.commit_file(&env.workdir(&id), "m.c", "int m;\n", "work");
    env.run(["list"]).ok();
    env.git(&repo, ["merge", "-q", "--ff-only", &format!("loop/{id}")]);
    let record = env.loop_dir(&id).join("loop.toml");
    let text = fs::read_to_string(&record).unwrap();
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("created_at") {
                "created_at = \"2020-01-01T00:00:00Z\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(&record, text).unwrap();
    env.run(["gc", "--older-than", "14d"])
        .ok()
        .stdout_has(&format!("removed {id}"));
}

#[test]
fn published_notes_finish_a_scratch_loop() {
    let env = TestEnv::new();
    let id = env
        .run(["new", "--scratch", "notes only"])
        .ok()
        .stdout
        .trim()
        .to_string();
    env.commit_file(
        &env.loop_notes(&id),
        "inbox.md",
        "# Inbox\n- idea\n",
        "idea",
    );
    env.run(["list"]).ok().stdout_has("active");
    // Publishing (its own command later) is a merge of loop/<id> into notes trunk.
    env.git(
        &env.notes(),
        ["merge", "-q", "--ff-only", &format!("loop/{id}")],
    );
    let json = env.run(["show", &id, "--json"]).ok().json();
    assert_eq!(json["state"], "published");
    env.run(["gc"])
        .ok()
        .stdout_has(&format!("removed {id} (published)"));
}
