//! Each bad input: a clear one-line error, a hint, the documented exit code, and nothing
//! left behind (no loop folder, no staging folder, no branch).

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::TestEnv;

/// No loop, no staging folder, no loop branch anywhere.
#[track_caller]
fn nothing_left(env: &TestEnv, repo: Option<&Path>) {
    assert_eq!(
        env.loop_entries(),
        Vec::<String>::new(),
        "loops/ is not empty"
    );
    if env.notes().exists() {
        assert!(
            !env.refs(&env.notes()).contains("refs/heads/loop/"),
            "a notes branch was left"
        );
    }
    if let Some(repo) = repo {
        assert!(
            !env.refs(repo).contains("refs/heads/loop/"),
            "a code branch was left"
        );
    }
}

#[test]
fn not_a_repository() {
    let env = TestEnv::new();
    // Outside any repository, `new` is refused with both ways on, and nothing is made
    // (not even the workspace).
    env.run(["new", "x"])
        .fails(2)
        .stderr_has(&format!(
            "error: {} is not in a git repository",
            env.root.display()
        ))
        .stderr_has("hint: run it inside a repository, or name one: git loop new --repo PATH")
        .stderr_has("hint: for a loop without code (notes, research): git loop new --scratch");
    assert!(!env.ws.exists(), "the workspace was made");
    // --scratch makes a loop without code.
    let rec = env.run(["new", "x", "--scratch", "--json"]).ok().json();
    assert_eq!(rec["kind"], "scratch");
    assert_eq!(
        std::fs::read_dir(
            env.ws
                .join("loops")
                .join(rec["id"].as_str().unwrap())
                .join("workdir")
        )
        .unwrap()
        .count(),
        0
    );
    // --base needs a repository: refused, nothing made.
    let before = env.loop_entries();
    env.run(["new", "y", "--base", "main"])
        .fails(2)
        .stderr_has("is not in a git repository");
    assert_eq!(env.loop_entries(), before);
    env.run(["new", "x", "--repo", "/nonexistent/path"])
        .fails(2)
        .stderr_has("does not exist");
    assert_eq!(env.loop_entries(), before);
}

#[test]
fn a_bare_repository() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let bare = env.root.join("app.git");
    env.git(
        &env.root,
        [
            "clone",
            "-q",
            "--bare",
            repo.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    env.run_in(&bare, ["new", "x"])
        .fails(2)
        .stderr_has("bare repository");
    nothing_left(&env, Some(&bare));
}

#[test]
fn a_repository_with_no_commits() {
    let env = TestEnv::new();
    let empty = env.root.join("empty");
    fs::create_dir(&empty).unwrap();
    env.git(&empty, ["init", "-q"]);
    env.run_in(&empty, ["new", "x"])
        .fails(2)
        .stderr_has("has no commits yet");
    nothing_left(&env, None);
    assert!(
        !env.ws.join("context/repos/empty").exists(),
        "not registered"
    );
}

#[test]
fn an_unknown_base() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.run_in(&repo, ["new", "x", "--base", "no-such-rev"])
        .fails(2)
        .stderr_has("--base no-such-rev names no commit");
    nothing_left(&env, Some(&repo));
}

#[test]
fn bad_titles_are_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.run_in(&repo, ["new", ""])
        .fails(2)
        .stderr_has("title is empty");
    env.run_in(&repo, ["new", "   "])
        .fails(2)
        .stderr_has("title is empty");
    env.run_in(&repo, ["new", &"x".repeat(10_000)])
        .fails(2)
        .stderr_has("at most 200");
    env.run_in(&repo, ["new", "two\nlines"])
        .fails(2)
        .stderr_has("control characters");
    nothing_left(&env, Some(&repo));
}

#[test]
fn odd_titles_make_safe_ids_and_keep_the_title() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (title, slug) in [
        ("日本語のタイトル", "loop"),
        ("../../etc/passwd", "etc-passwd"),
        ("a/b/c", "a-b-c"),
        ("\"quoted\" 'single' `back`", "quoted-single-back"),
        ("..", "loop"),
        ("$(touch /tmp/pwned)", "touch-tmp-pwned"),
    ] {
        let rec = env.run_in(&repo, ["new", title, "--json"]).ok().json();
        let id = rec["id"].as_str().unwrap();
        assert!(id.starts_with(&format!("{slug}-")), "{title:?} -> {id}");
        assert_eq!(rec["title"], title);
        assert!(env.loop_dir(id).is_dir());
        assert_eq!(env.run(["show", id, "--json"]).ok().json()["title"], title);
    }
    assert!(!Path::new("/tmp/pwned").exists());
}

#[test]
fn a_workspace_that_is_not_writable() {
    let env = TestEnv::new();
    let ro = env.root.join("readonly");
    fs::create_dir(&ro).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    let ws = ro.join("ws");
    // root ignores permission bits; in a user namespace without a mapping for the folder's
    // owner it does not, which is how this test sees what an ordinary user sees.
    let is_root = std::fs::metadata("/proc/self")
        .map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() == 0
        })
        .unwrap_or(false);
    let mut cmd = if is_root {
        let mut c = Command::new("unshare");
        c.arg("--user").arg(crate::common::BIN);
        c
    } else {
        Command::new(crate::common::BIN)
    };
    let out = cmd
        .env_clear()
        .envs(env.envs())
        .env("GIT_LOOP_HOME", &ws)
        .current_dir(&env.root)
        .args(["new", "--scratch", "x"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("permission denied") || stderr.contains("not writable"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: set GIT_LOOP_HOME"), "{stderr}");
    assert!(!ws.exists());

    // An existing workspace folder made read-only.
    let env = TestEnv::new();
    env.run(["init"]).ok();
    fs::set_permissions(env.ws.join("loops"), fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = if is_root {
        let mut c = Command::new("unshare");
        c.arg("--user").arg(crate::common::BIN);
        c
    } else {
        Command::new(crate::common::BIN)
    };
    let out = cmd
        .env_clear()
        .envs(env.envs())
        .current_dir(&env.root)
        .args(["new", "--scratch", "x"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
    fs::set_permissions(env.ws.join("loops"), fs::Permissions::from_mode(0o755)).unwrap();
    nothing_left(&env, None);
}

#[test]
fn a_loop_record_edited_into_invalid_toml() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "broken");
    let other = env.new_loop(&repo, "fine");
    fs::write(
        env.loop_dir(&id).join("loop.toml"),
        "id = \"unterminated\ntitle = [\n",
    )
    .unwrap();
    env.run(["show", &id])
        .fails(1)
        .stderr_has("broken record")
        .stderr_has("loop.toml");
    let list = env.run(["list"]).ok();
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("broken")),
        "{}",
        list.stdout
    );
    assert!(list
        .stdout
        .lines()
        .any(|l| l.starts_with(&other) && l.contains("active")));
    list.stderr_has("warning:");
    env.run(["rm", &id]).fails(1).stderr_has("broken record");
    env.run(["rm", &id, "--force"]).ok();
    assert!(!env.loop_dir(&id).exists());
}

#[test]
fn a_loop_folder_deleted_by_hand() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "gone");
    fs::remove_dir_all(env.loop_dir(&id)).unwrap();
    env.run(["show", &id])
        .fails(2)
        .stderr_has(&format!("no loop '{id}'"))
        .stderr_has("still exists");
    env.run(["list", "--all"]).ok().stdout_has("removed");
    let doctor = env.run(["doctor"]);
    assert!(
        doctor
            .stdout
            .contains(&format!("branch loop/{id} has no loop folder")),
        "{}",
        doctor.stdout
    );
}

#[test]
fn a_registered_repository_moved_away() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "orphan");
    fs::rename(&repo, env.root.join("app-moved")).unwrap();
    env.run(["show", &id])
        .fails(1)
        .stderr_has("repository 'app' is missing")
        .stderr_has("ln -sfn");
    let list = env.run(["list"]).ok();
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("error")),
        "{}",
        list.stdout
    );
    list.stderr_has("is missing");
    env.run(["rm", &id]).fails(1).stderr_has("--force");
    let doctor = env.run(["doctor"]);
    assert_eq!(doctor.code, 1);
    assert!(
        doctor.stdout.contains("problem") && doctor.stdout.contains("ln -sfn"),
        "{}",
        doctor.stdout
    );
    // Relinking repairs it.
    let link = env.ws.join("context/repos/app");
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(env.root.join("app-moved"), &link).unwrap();
    env.run(["show", &id]).ok();
}

#[test]
fn a_dirty_working_tree_at_new() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("main.c"), "changed\n").unwrap();
    let run = env.run_in(&repo, ["new", "dirty"]).ok();
    run.stderr_has("uncommitted changes")
        .stderr_has("not carried");
    let id = run.stdout.trim();
    assert_eq!(
        fs::read_to_string(env.workdir(id).join("main.c")).unwrap(),
        "int main(void) { return 0; }\n"
    );
    assert_eq!(
        fs::read_to_string(repo.join("main.c")).unwrap(),
        "changed\n",
        "the user's tree is untouched"
    );
}

#[test]
fn new_inside_a_loop_repository_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "outer");
    env.run_in(&env.workdir(&id), ["new", "inner"])
        .fails(2)
        .stderr_has("a loop's own repository");
    assert_eq!(env.loop_entries(), vec![id]);
}

#[test]
fn usage_errors_exit_2() {
    let env = TestEnv::new();
    let run = env.run(["frobnicate"]);
    assert_eq!(run.code, 2);
    let run = env.run(["gc", "--older-than", "3y"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not an age"), "{}", run.stderr);
    env.run(["new", "--scratch", "x", "--repo", "."]).fails(2);
    env.run(["new", "--scratch", "x", "--vault", "../other"])
        .fails(2);
}

#[test]
fn a_loop_record_that_is_not_utf8() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "undecodable");
    let record = env.loop_dir(&id).join("loop.toml");
    let mut bytes = fs::read(&record).unwrap();
    bytes.extend_from_slice(b"# \xff\xfe latin-1 leftovers\n");
    fs::write(&record, bytes).unwrap();
    env.run(["show", &id])
        .fails(1)
        .stderr_has(&record.display().to_string())
        .stderr_has("not UTF-8")
        .stderr_has("hint: fix the TOML");
    env.run(["doctor"]).stdout_has("not UTF-8");
    env.run(["rm", &id, "--force"]).ok();
    assert!(!env.loop_dir(&id).exists());
}

/// A full and a read-only file system under the workspace (a small tmpfs in a mount
/// namespace of the test's own): each command that writes says which file and what to
/// do, and doctor reports the condition as it is, proposing no fix.
#[test]
fn a_full_disk_and_a_read_only_one() {
    let env = TestEnv::new();
    let mnt = env.root.join("mnt");
    fs::create_dir(&mnt).unwrap();
    let ws = mnt.join("ws");
    let script = r#"
set -u
mount -t tmpfs -o size=16m tmpfs "$MNT" || exit 90
"$BIN" init >/dev/null 2>&1 || exit 91
"$BIN" new --scratch fine >/dev/null 2>&1 || exit 92
head -c 64m /dev/zero > "$MNT/fill" 2>/dev/null
echo "== new full"; "$BIN" new --scratch full 2>&1; echo "exit $?"
echo "== doctor full"; "$BIN" doctor 2>&1; echo "exit $?"
rm -f "$MNT/fill"
mount -o remount,ro "$MNT" || exit 93
echo "== new ro"; "$BIN" new --scratch ro 2>&1; echo "exit $?"
echo "== doctor ro"; "$BIN" doctor 2>&1; echo "exit $?"
"#;
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script])
        .env_clear()
        .envs(env.envs())
        .env("GIT_LOOP_HOME", &ws)
        .env("MNT", &mnt)
        .env("BIN", crate::common::BIN)
        .current_dir(&env.root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let part = |name: &str| -> String {
        let start = text
            .find(&format!("== {name}\n"))
            .unwrap_or_else(|| panic!("{text}"));
        let rest = &text[start + name.len() + 4..];
        rest[..rest.find("== ").unwrap_or(rest.len())].to_string()
    };
    let full = part("new full");
    assert!(full.contains("exit 1"), "{full}");
    assert!(
        full.contains(&mnt.display().to_string()),
        "the file is named:\n{full}"
    );
    assert!(
        full.contains("hint: the file system is full")
            || full.contains(&format!(
                "hint: the file system holding the workspace {} is full",
                ws.display()
            )),
        "{full}"
    );
    let doctor = part("doctor full");
    assert!(
        doctor.contains("exit 1") && doctor.contains("is full"),
        "{doctor}"
    );
    assert!(
        !doctor.contains("checkouts:") && !doctor.contains("discard"),
        "{doctor}"
    );
    let ro = part("new ro");
    assert!(ro.contains("exit 1"), "{ro}");
    assert!(
        ro.contains(&mnt.display().to_string()),
        "the file is named:\n{ro}"
    );
    assert!(
        ro.contains("hint: the file system is mounted read-only")
            || ro.contains("is on a read-only file system: remount it"),
        "{ro}"
    );
    let doctor = part("doctor ro");
    assert!(
        doctor.contains("exit 1") && doctor.contains("read-only file system"),
        "{doctor}"
    );
    assert!(!doctor.contains("no problems found"), "{doctor}");
}
