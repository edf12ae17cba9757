use std::fs;

use crate::common::TestEnv;

#[test]
fn init_creates_the_layout_and_is_idempotent() {
    let env = TestEnv::new();
    env.run(["init"])
        .ok()
        .stdout_has(&env.ws.display().to_string());
    for dir in [
        "context/knowledge/.git",
        "context/notes/.git",
        "context/repos",
        "personal/tester/.git",
        "loops",
        "sandbox-home-skel",
        "locks",
    ] {
        assert!(env.ws.join(dir).is_dir(), "{dir} missing");
    }
    assert!(env.ws.join("context/notes/memory/MEMORY.md").is_file());
    assert!(env.ws.join("context/notes/inbox.md").is_file());
    for repo in ["context/knowledge", "context/notes", "personal/tester"] {
        let dir = env.ws.join(repo);
        assert_eq!(
            env.git(&dir, ["symbolic-ref", "--short", "HEAD"]).trim(),
            "main",
            "{repo}"
        );
        assert_eq!(
            env.git(&dir, ["rev-list", "--count", "HEAD"]).trim(),
            "1",
            "{repo}"
        );
        assert_eq!(
            env.git(&dir, ["status", "--porcelain"]),
            "",
            "{repo} is dirty"
        );
    }
    let before = env.refs(&env.notes());
    fs::write(env.ws.join("context/notes/inbox.md"), "# Inbox\nmine\n").unwrap();
    env.run(["init"]).ok();
    assert_eq!(env.refs(&env.notes()), before);
    assert_eq!(
        fs::read_to_string(env.ws.join("context/notes/inbox.md")).unwrap(),
        "# Inbox\nmine\n"
    );
}

#[test]
fn init_clones_team_remotes() {
    let env = TestEnv::new();
    let knowledge = env.repo("team-knowledge");
    let notes = env.repo("team-notes");
    env.git(&notes, ["branch", "-m", "main", "trunk"]);
    env.run([
        "init",
        "--knowledge",
        knowledge.to_str().unwrap(),
        "--notes",
        notes.to_str().unwrap(),
    ])
    .ok();
    let k = env.ws.join("context/knowledge");
    assert!(k.join("main.c").is_file());
    assert_eq!(
        env.git(&k, ["remote", "get-url", "origin"]).trim(),
        knowledge.to_str().unwrap()
    );
    // A remote whose default branch is not `main` keeps its own trunk.
    assert_eq!(
        env.git(&env.notes(), ["symbolic-ref", "--short", "HEAD"])
            .trim(),
        "trunk"
    );
    let repo = env.repo("code");
    let id = env.new_loop(&repo, "on trunk");
    assert_eq!(
        env.git(&env.loop_notes(&id), ["rev-parse", "HEAD"]),
        env.git(&notes, ["rev-parse", "trunk"])
    );
}

#[test]
fn init_with_an_unreachable_remote_leaves_nothing() {
    let env = TestEnv::new();
    env.run([
        "init",
        "--knowledge",
        env.root.join("nowhere").to_str().unwrap(),
    ])
    .fails(1)
    .stderr_has("cannot clone");
    assert!(!env.ws.join("context/knowledge").exists());
    let leftovers: Vec<_> = fs::read_dir(env.ws.join("context"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn any_command_creates_the_workspace_on_first_use() {
    let env = TestEnv::new();
    env.run(["list"]).ok().stderr_has("no loops yet");
    assert!(env.ws.join("context/notes/.git").is_dir());
}

#[test]
fn a_workspace_path_with_spaces_works() {
    let env = TestEnv::with_workspace_name("my work space");
    let repo = env.repo("my repo");
    let id = env.new_loop(&repo, "spaces everywhere");
    env.run(["list"]).ok().stdout_has(&id);
    env.run(["show", &id]).ok().stdout_has("my-repo");
    assert_eq!(env.git(&env.workdir(&id), ["status", "--porcelain"]), "");
    assert!(env.ws.join("context/repos/my-repo/.git").is_dir());
}

#[test]
fn default_workspace_is_under_xdg_data_home() {
    let env = TestEnv::new();
    let out = env
        .command()
        .env_remove("GIT_LOOP_HOME")
        .current_dir(&env.root)
        .arg("init")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(env
        .home
        .join(".local/share/git-loop/context/notes/.git")
        .is_dir());
}
