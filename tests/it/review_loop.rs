//! The review loop (issue 33): comments anchored to a loop's commit and lines, shown
//! beside their hunk as open, outdated or resolved; given back to the agent, whose
//! commits and replies answer them; kept in git so that they outlive the loop and travel
//! with `sync`. The agent here is a script the operator names in `agent.command`; the real
//! Claude Code CLI does the same in `agent_e2e.rs`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::{Run, TestEnv};

/// The operator's config, naming `agent` as the agent.
fn operator(env: &TestEnv, text: &str) {
    let path = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// An executable script under the test's root (its folder is bound read-only inside, as
/// an agent's install folder is).
pub fn script(env: &TestEnv, name: &str, body: &str) -> PathBuf {
    let path = env.root.join("agents").join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, format!("#!/bin/sh\nset -e\n{body}")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A repository and a loop whose agent already proposed something: `int b;` became
/// `int B;` and `int e;` was added at the end.
pub fn proposing(env: &TestEnv) -> (PathBuf, String) {
    let repo = env.root.join("app");
    fs::create_dir_all(&repo).unwrap();
    env.git(&repo, ["init", "-q", "-b", "main"]);
    fs::write(repo.join("main.c"), "int a;\nint b;\nint c;\nint d;\n").unwrap();
    env.git(&repo, ["add", "-A"]);
    env.git(&repo, ["commit", "-q", "-m", "first"]);
    let id = env.new_loop(&repo, "rename things");
    inside(
        env,
        &id,
        "sed -i 's/int b;/int B;/' main.c && echo 'int e;' >> main.c && git commit -qam 'rename b, add e'",
    );
    (repo, id)
}

/// Runs `sh -c script` in the loop's sandbox, as its agent would.
pub fn inside(env: &TestEnv, id: &str, script: &str) -> Run {
    env.run(["run", "-q", id, "--", "sh", "-c", script]).ok()
}

fn comment(env: &TestEnv, id: &str, at: &str, text: &str) -> String {
    env.run(["comment", id, at, "-m", text])
        .ok()
        .stdout
        .trim()
        .to_string()
}

fn list(env: &TestEnv, id: &str) -> serde_json::Value {
    env.run(["comment", id, "--list", "--json"]).ok().json()
}

fn state<'a>(comments: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    comments
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no comment {id} in {comments}"))
}

/// The agent of the review test: saves its task where the test can read it, answers the
/// comment on main.c:2 with a commit naming it, and the one on main.c:5 in words.
const ANSWERING_AGENT: &str = r#"task="$1"
dir=/loopat/loop/$GIT_LOOP_ID/.claude
printf '%s' "$task" > "$dir/seen-task.md"
first=$(printf '%s\n' "$task" | sed -n 's/^## Comment \([0-9a-f]*\) on main.c:2 .*/\1/p')
second=$(printf '%s\n' "$task" | sed -n 's/^## Comment \([0-9a-f]*\) on main.c:5 .*/\1/p')
sed -i 's/int B;/int b2;/' main.c
git commit -qam "rename B to b2" -m "Addresses-Comment: $first"
printf 'e is read by the parser\n' > "$dir/review-replies/$second.md"
"#;

#[test]
fn a_comment_reaches_the_agent_with_its_hunk_and_its_commit_makes_it_outdated() {
    let env = TestEnv::new();
    let agent = script(&env, "answer.sh", ANSWERING_AGENT);
    operator(
        &env,
        &format!("[agent]\ncommand = [{:?}]\n", agent.display().to_string()),
    );
    let (_repo, id) = proposing(&env);
    let first = comment(&env, &id, "main.c:2", "call it b2, as the spec does");
    let second = comment(&env, &id, "main.c:5", "why is e needed?");
    // Both open, each beside its line of the diff.
    let review = env.run(["review", &id]).ok();
    let lines: Vec<&str> = review.stdout.lines().collect();
    let after = |needle: &str| lines[lines.iter().position(|l| *l == needle).unwrap() + 1];
    assert!(
        after("+int B;").contains(&format!("#{first} open")),
        "{}",
        review.stdout
    );
    assert!(
        after("+int e;").contains(&format!("#{second} open")),
        "{}",
        review.stdout
    );

    let run = env.run(["agent", &id, "--address-review"]).ok();
    run.stderr_has("giving the agent 2 open comments: #");
    run.stderr_has(&format!("#{first}"));
    run.stderr_has(&format!("#{second}"));
    run.stderr_has(&format!("#{first}: addressed by"));
    run.stderr_has(&format!("#{second}: the agent replied"));
    // The task the agent got: each comment, where it is, its text and its hunk.
    let task = fs::read_to_string(env.loop_dir(&id).join(".claude/seen-task.md")).unwrap();
    assert!(
        task.contains(&format!("## Comment {first} on main.c:2 (by tester)")),
        "{task}"
    );
    assert!(task.contains("> call it b2, as the spec does"), "{task}");
    assert!(
        task.contains("```diff\n@@ -1,4 +1,5 @@\n int a;\n-int b;\n+int B;"),
        "{task}"
    );
    assert!(
        task.contains(&format!("## Comment {second} on main.c:5")),
        "{task}"
    );
    assert!(task.contains("Addresses-Comment"), "{task}");
    // The reply file was taken and removed.
    assert!(
        fs::read_dir(env.loop_dir(&id).join(".claude/review-replies"))
            .unwrap()
            .next()
            .is_none()
    );

    let comments = list(&env, &id);
    let c1 = state(&comments, &first);
    assert_eq!(c1["state"], "outdated", "{c1}");
    assert_eq!(c1["addressed_by"][0]["subject"], "rename B to b2");
    let c2 = state(&comments, &second);
    assert_eq!(c2["state"], "open", "{c2}");
    assert_eq!(c2["events"][0]["text"], "e is read by the parser");
    assert_eq!(c2["events"][0]["agent"], true);
    // review shows what changed since the comments, the outdated one with the hunk it
    // was made on, and the reply.
    let review = env.run(["review", &id]).ok();
    review.stdout_has("== since the comments");
    review.stdout_has("rename B to b2");
    review.stdout_has(&format!("#{first} outdated"));
    review.stdout_has("main.c:2 as it was at");
    review.stdout_has("the agent: e is read by the parser");
    // Resolved by the person.
    env.run(["comment", &id, "--resolve", &first]).ok();
    assert_eq!(state(&list(&env, &id), &first)["state"], "resolved");
    env.run(["comment", &id, "--resolve", &first]).fails(2);
    env.run(["comment", &id, "--reopen", &first[..4]]).ok();
    assert_eq!(state(&list(&env, &id), &first)["state"], "outdated");
    // Nothing open but one: the agent gets only that one.
    env.run(["comment", &id, "--resolve", &second, "-m", "fine"])
        .ok();
    env.run(["comment", &id, "--resolve", &first]).ok();
    env.run(["agent", &id, "--address-review"])
        .fails(1)
        .stderr_has("no open review comments (0 outdated, 2 resolved)");
}

/// What the agent leaves in its replies folder is a sandbox's output: a link is not
/// followed, a name that is no comment it was given is not recorded, control characters
/// in a reply are shown escaped; a good reply beside them is recorded.
#[test]
fn the_agents_replies_are_read_as_data() {
    let env = TestEnv::new();
    let agent = script(
        &env,
        "odd.sh",
        r#"dir=/loopat/loop/$GIT_LOOP_ID/.claude/review-replies
id=$(printf '%s\n' "$1" | sed -n 's/^## Comment \([0-9a-f]*\) on .*/\1/p' | head -1)
other=$(printf '%s\n' "$1" | sed -n 's/^## Comment \([0-9a-f]*\) on .*/\1/p' | tail -1)
ln -s /etc/passwd "$dir/$other.md"
printf 'ok \033[2J\033]0;title\007 done\n' > "$dir/$id.md"
echo forged > "$dir/ffffff.md"
mkfifo "$dir/fifo.md"
"#,
    );
    operator(
        &env,
        &format!("[agent]\ncommand = [{:?}]\n", agent.display().to_string()),
    );
    let (_repo, id) = proposing(&env);
    let first = comment(&env, &id, "main.c:2", "one");
    let second = comment(&env, &id, "main.c:5", "two");
    let run = env.run(["agent", &id, "--address-review"]).ok();
    run.stderr_has("not a regular file: left out");
    run.stderr_has("names no comment the agent was given");
    let comments = list(&env, &id);
    let replies = |c: &str| state(&comments, c)["events"].as_array().unwrap().len();
    let (with, without) = if replies(&first) == 1 {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(replies(&with), 1);
    assert_eq!(replies(&without), 0, "the link was followed");
    assert!(!comments.to_string().contains("root:"), "{comments}");
    let review = env.run(["review", &id]).ok();
    assert!(!review.stdout.contains('\x1b'), "{:?}", review.stdout);
    review.stdout_has("ok \\x1b[2J\\x1b]0;title\\x07 done");
    assert!(!env
        .loop_dir(&id)
        .join(".claude/review-replies/ffffff.md")
        .exists());
}

/// An agent that fills its replies folder with more names than a reply folder holds: the
/// host stops listing it at the bound, records no reply from it, and leaves it as it is
/// (its twin above: a folder of a few odd files is read, its good reply recorded).
#[test]
fn a_replies_folder_flooded_with_names_is_not_read() {
    let env = TestEnv::new();
    let agent = script(
        &env,
        "flood.sh",
        r#"dir=/loopat/loop/$GIT_LOOP_ID/.claude/review-replies
id=$(printf '%s\n' "$1" | sed -n 's/^## Comment \([0-9a-f]*\) on .*/\1/p' | head -1)
printf 'a real reply\n' > "$dir/$id.md"
cd "$dir" && seq 1 1000 | sed 's/$/.junk/' | xargs touch
"#,
    );
    operator(
        &env,
        &format!("[agent]\ncommand = [{:?}]\n", agent.display().to_string()),
    );
    let (_repo, id) = proposing(&env);
    let first = comment(&env, &id, "main.c:2", "one");
    let run = env.run(["agent", &id, "--address-review"]).ok();
    run.stderr_has("the agent's replies cannot be read: ");
    run.stderr_has("review-replies holds more than 1000 entries");
    let comments = list(&env, &id);
    assert_eq!(
        state(&comments, &first)["events"].as_array().unwrap().len(),
        0,
        "{comments}"
    );
    let left = fs::read_dir(env.loop_dir(&id).join(".claude/review-replies"))
        .unwrap()
        .count();
    assert_eq!(left, 1001);
}

/// Comments stay anchored when the code moves: lines added above move the comment with
/// its lines, a block cut and put elsewhere is followed, a renamed file too; a changed
/// line makes the comment outdated, and a comment on the whole loop never is.
#[test]
fn a_comment_follows_its_lines_and_is_outdated_when_they_change() {
    let env = TestEnv::new();
    let (_repo, id) = proposing(&env);
    inside(
        &env,
        &id,
        "seq 1 10 | sed 's/.*/int l&;/' > list.c && git add list.c && git commit -qm list",
    );
    let on_list = comment(&env, &id, "list.c:2-3", "l2 and l3");
    let on_e = comment(&env, &id, "main.c:5", "e");
    let whole = env
        .run(["comment", &id, "-m", "the loop as a whole"])
        .ok()
        .stdout
        .trim()
        .to_string();
    inside(
        &env,
        &id,
        "sed -i '1i // header' list.c && git commit -qam header",
    );
    let c = list(&env, &id);
    assert_eq!(state(&c, &on_list)["at"]["start"], 3, "{c}");
    assert_eq!(state(&c, &on_list)["at"]["end"], 4);
    assert_eq!(state(&c, &on_list)["at"]["moved"], false);
    assert_eq!(state(&c, &on_list)["state"], "open");
    // l2 and l3 cut and put at the end, below the seven lines that stay.
    inside(
        &env,
        &id,
        "{ echo '// header'; echo 'int l1;'; seq 4 10 | sed 's/.*/int l&;/'; echo 'int l2;'; echo 'int l3;'; } > x && mv x list.c && git commit -qam move",
    );
    let c = list(&env, &id);
    assert_eq!(state(&c, &on_list)["state"], "open", "{c}");
    assert_eq!(state(&c, &on_list)["at"]["start"], 10);
    assert_eq!(state(&c, &on_list)["at"]["moved"], true);
    // Renamed.
    inside(&env, &id, "git mv list.c items.c && git commit -qm rename");
    let c = list(&env, &id);
    assert_eq!(state(&c, &on_list)["at"]["path"], "items.c", "{c}");
    assert_eq!(state(&c, &on_list)["at"]["start"], 10);
    // Changed.
    inside(
        &env,
        &id,
        "sed -i 's/int e;/long e;/' main.c && git commit -qam change",
    );
    let c = list(&env, &id);
    assert_eq!(state(&c, &on_e)["state"], "outdated", "{c}");
    assert_eq!(state(&c, &on_e)["at"], serde_json::Value::Null);
    assert_eq!(state(&c, &on_list)["state"], "open");
    assert_eq!(state(&c, &whole)["state"], "open");
    let review = env.run(["review", &id]).ok();
    review.stdout_has("== comments on the loop");
    review.stdout_has(&format!("#{on_list} open"));
    review.stdout_has("items.c:10-11 (was list.c:2-3)");
    review.stdout_has(&format!("#{on_e} outdated"));
}

#[test]
fn a_comment_on_what_is_not_there_is_refused_with_nothing_recorded() {
    let env = TestEnv::new();
    let (_repo, id) = proposing(&env);
    env.run(["comment", &id, "nope.c:1", "-m", "x"])
        .fails(2)
        .stderr_has("nope.c is not a file of loop/");
    env.run(["comment", &id, "main.c:9", "-m", "x"])
        .fails(2)
        .stderr_has("main.c has 5 lines; there is no line 9");
    env.run(["comment", &id, "main.c:0", "-m", "x"]).fails(2);
    env.run(["comment", &id, "main.c:3-2", "-m", "x"]).fails(2);
    env.run(["comment", &id, "main.c:1", "-m", "  "])
        .fails(2)
        .stderr_has("no comment text");
    env.run(["comment", &id, "--resolve", "abcdef"])
        .fails(2)
        .stderr_has("has no comment 'abcdef'");
    assert_eq!(list(&env, &id), serde_json::json!([]));
    // The editor writes the text; its '#' lines are left out.
    let editor = script(
        &env,
        "editor.sh",
        "printf 'from the editor\\n# dropped\\n' >> \"$1\"\n",
    );
    let mut cmd = env.command();
    cmd.current_dir(&env.root)
        .env("EDITOR", &editor)
        .args(["comment", &id, "main.c:1"]);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = list(&env, &id);
    assert_eq!(c[0]["text"], "from the editor");
    // -F from stdin.
    let mut cmd = env.command();
    cmd.current_dir(&env.root)
        .args(["comment", &id, "main.c:2", "-F", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"from stdin\n")
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    assert_eq!(list(&env, &id).as_array().unwrap().len(), 2);
}

/// The comments' branch of `notes`, as a test reads it.
fn comments_branch(env: &TestEnv, notes: &Path) -> Option<String> {
    env.rev(notes, "refs/heads/git-loop/comments")
}

#[test]
fn comments_outlive_the_loop() {
    let env = TestEnv::new();
    let (repo, id) = proposing(&env);
    let c = comment(&env, &id, "main.c:2", "keep me");
    env.run(["rm", "--force", &id]).ok();
    assert!(comments_branch(&env, &env.notes()).is_some());
    // The branch loop/<id> is kept: the comment is still judged against it.
    let listed = list(&env, &id);
    assert_eq!(state(&listed, &c)["state"], "open");
    assert_eq!(state(&listed, &c)["checked"], true);
    env.run(["comment", &id, "--resolve", &c]).ok();
    // A new comment needs the loop.
    env.run(["comment", &id, "main.c:1", "-m", "x"]).fails(2);
    let _ = repo;
}

/// A bare notes remote both machines reach, as a forge's would be.
fn notes_remote() -> (tempfile::TempDir, String) {
    let tmp = tempfile::Builder::new()
        .prefix("git-loop-remote")
        .tempdir()
        .unwrap();
    let url = tmp.path().join("notes.git");
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&url)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(ok.success());
    (tmp, url.display().to_string())
}

/// Comments travel with `sync`: machine A's comment reaches machine B (which never had
/// the loop), B's reply and resolution reach A, and comments made on both sides before
/// they sync are all kept.
#[test]
fn comments_survive_sync_to_a_second_workspace() {
    let (_remote, url) = notes_remote();
    let a = TestEnv::new();
    a.run(["init", "--notes", &url]).ok();
    let (_repo, id) = proposing(&a);
    let first = comment(&a, &id, "main.c:2", "from machine a");
    a.run(["sync"]).ok().stderr_has("review comments: pushed");
    let b = TestEnv::new();
    b.run(["init", "--notes", &url]).ok();
    b.run(["sync", "--dry-run"])
        .ok()
        .stderr_has("review comments: would take the remote's");
    assert_eq!(
        comments_branch(&b, &b.notes()),
        None,
        "a dry run moved the branch"
    );
    b.run(["sync"])
        .ok()
        .stderr_has("review comments: took the remote's");
    let on_b = list(&b, &id);
    let c = state(&on_b, &first);
    assert_eq!(c["text"], "from machine a");
    assert_eq!(c["state"], "open");
    // B never had the loop: its lines are not judged there, and it says so.
    assert_eq!(c["checked"], false);
    b.run(["comment", &id, "--resolve", &first, "-m", "seen on b"])
        .ok();
    b.run(["sync"]).ok().stderr_has("review comments: pushed");
    a.run(["sync"]).ok();
    let on_a = list(&a, &id);
    let c = state(&on_a, &first);
    assert_eq!(c["state"], "resolved", "{c}");
    assert_eq!(c["events"][0]["text"], "seen on b");
    // Both sides comment before either syncs: both comments are kept.
    let from_a = comment(&a, &id, "main.c:1", "second from a");
    let from_b = b
        .run(["comment", &id, "--reply", &first, "-m", "and from b"])
        .ok();
    let _ = from_b;
    a.run(["sync"]).ok();
    b.run(["sync"])
        .ok()
        .stderr_has("review comments: merged both sides, pushed");
    a.run(["sync"])
        .ok()
        .stderr_has("review comments: took the remote's");
    for env in [&a, &b] {
        let c = list(env, &id);
        assert_eq!(c.as_array().unwrap().len(), 2, "{c}");
        assert_eq!(state(&c, &from_a)["text"], "second from a");
        let events: Vec<&str> = state(&c, &first)["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(events, ["seen on b", "", "and from b"]);
    }
    assert_eq!(
        comments_branch(&a, &a.notes()),
        comments_branch(&b, &b.notes())
    );
}

/// A workspace `a` synced with a bare notes remote (`url`), its loop `id` with one comment
/// (`good`, "fine") pushed there, and a teammate's clone of the remote (`mate`) on the
/// comments' branch.
struct Teammate {
    remote: tempfile::TempDir,
    url: String,
    a: TestEnv,
    id: String,
    good: String,
    mate: std::path::PathBuf,
}

impl Teammate {
    fn of_comments() -> Teammate {
        let (remote, url) = notes_remote();
        let a = TestEnv::new();
        a.run(["init", "--notes", &url]).ok();
        let (_repo, id) = proposing(&a);
        let good = comment(&a, &id, "main.c:2", "fine");
        a.run(["sync"]).ok();
        let mate = remote.path().join("mate");
        a.git(remote.path(), ["clone", "-q", &url, "mate"]);
        a.git(
            &mate,
            [
                "checkout",
                "-q",
                "-b",
                "git-loop/comments",
                "origin/git-loop/comments",
            ],
        );
        Teammate {
            remote,
            url,
            a,
            id,
            good,
            mate,
        }
    }
}

/// A teammate pushes to the comments' branch what git loop would never write: a path
/// with control characters, a file that is not a comment, a huge text. After sync, the
/// good comments are shown, the rest is named and left out, and nothing reaches the
/// terminal unescaped.
#[test]
fn what_a_teammate_pushes_to_the_comments_is_read_as_data() {
    // The remote's folder lives as long as the binding.
    let Teammate {
        remote: _remote,
        a,
        id,
        good,
        mate,
        ..
    } = Teammate::of_comments();
    let dir = mate.join(&id);
    fs::create_dir_all(dir.join("abcdef")).unwrap();
    fs::write(
        dir.join("abcdef/comment.toml"),
        format!(
            "id = \"abcdef\"\nloop = \"{id}\"\nauthor = \"mallory\\u001b]0;pwned\\u0007\"\ncreated_at = \"2026-01-01T00:00:00Z\"\ntext = \"look \\u001b[2J here\"\n"
        ),
    )
    .unwrap();
    fs::create_dir_all(dir.join("bbbbbb")).unwrap();
    fs::write(dir.join("bbbbbb/comment.toml"), "not = [toml").unwrap();
    fs::create_dir_all(dir.join("cccccc")).unwrap();
    fs::write(
        dir.join("cccccc/comment.toml"),
        format!(
            "id = \"cccccc\"\nloop = \"{id}\"\nauthor = \"m\"\ncreated_at = \"2026-01-01T00:00:00Z\"\ntext = \"{}\"\n",
            "x".repeat(70 << 10)
        ),
    )
    .unwrap();
    a.git(&mate, ["add", "-A"]);
    a.git(&mate, ["commit", "-q", "-m", "odd comments"]);
    a.git(&mate, ["push", "-q", "origin", "git-loop/comments"]);
    a.run(["sync"]).ok();
    let listed = a.run(["comment", &id, "--list"]).ok();
    assert!(!listed.stdout.contains('\x1b'), "{:?}", listed.stdout);
    assert!(!listed.stderr.contains('\x1b'), "{:?}", listed.stderr);
    listed.stdout_has("look \\x1b[2J here");
    listed.stdout_has("mallory\\x1b]0;pwned\\x07");
    listed.stdout_has(&format!("#{good}"));
    listed.stderr_has("bbbbbb/comment.toml: not TOML of a comment");
    listed.stderr_has("cccccc/comment.toml: the text is");
    let review = a.run(["review", &id]).ok();
    assert!(!review.stdout.contains('\x1b'), "{:?}", review.stdout);
}

/// A teammate pushes to the comments' branch a commit larger than `import.max_object_size`
/// (its message: nothing reads a comment's commit bounded, so it is judged before it is
/// taken, as a fetched trunk is, ATTACKS 43). `sync` refuses it and the local branch stays
/// where it was; raised as the hint says, the same push comes in.
#[test]
fn a_comments_commit_over_the_object_limit_is_refused_by_sync() {
    let Teammate {
        remote,
        url,
        a,
        id,
        good,
        mate,
    } = Teammate::of_comments();
    let before = comments_branch(&a, &a.notes()).unwrap();
    let message = remote.path().join("message");
    fs::write(&message, "x".repeat(3 << 20)).unwrap();
    let message = message.to_str().unwrap();
    a.git(
        &mate,
        [
            "commit",
            "-q",
            "--allow-empty",
            "--cleanup=verbatim",
            "-F",
            message,
        ],
    );
    a.git(&mate, ["push", "-q", "origin", "git-loop/comments"]);
    let operator = a.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(operator.parent().unwrap()).unwrap();
    fs::write(&operator, "[import]\nmax_object_size = \"1M\"\n").unwrap();
    let refused = a.run(["sync"]).fails(1);
    let big = a.git(&mate, ["rev-parse", "HEAD"]).trim().to_string();
    refused.stderr_has(&format!("notes: the remote {url} holds commit {big} of"));
    refused.stderr_has("import.max_object_size");
    assert_eq!(comments_branch(&a, &a.notes()).unwrap(), before);
    assert!(!refused.stderr.contains("review comments: took"));
    // The good comment is still read, from the branch as it was.
    assert_eq!(state(&list(&a, &id), &good)["text"], "fine");

    // Raised as the hint says: taken.
    fs::write(&operator, "[import]\nmax_object_size = \"4M\"\n").unwrap();
    a.run(["sync"])
        .ok()
        .stderr_has("review comments: took the remote's");
    assert_eq!(comments_branch(&a, &a.notes()).unwrap(), big);
}

/// The same with the real Claude Code CLI against a stand-in for the Messages API (see
/// `agent_e2e.rs`): the comment, its place and its hunk reach the model in the agent's
/// prompt; the Bash tool call the stand-in answers with commits the change, which makes
/// the comment outdated.
#[test]
fn claude_code_gets_the_comment_with_its_hunk_and_its_commit_makes_it_outdated() {
    use crate::agent_e2e::{claude, Setup, StandIn, KEY};
    let stand_in = StandIn::start(
        "sed -i 's/int B;/int b2;/' main.c && git commit -qam 'rename B to b2' && echo COMMITTED",
    );
    let command = format!("[{:?}]", claude().display().to_string());
    let s = Setup::with(stand_in, &command, "sandbox", KEY);
    let url = format!("https://api.stand-in.test:{}", s.stand_in.port);
    s.git_loop(
        &["vault", "set", "default", "env", "ANTHROPIC_BASE_URL"],
        Some(url.as_bytes()),
    );
    let propose = s.git_loop(
        &[
            "run",
            "-q",
            &s.id,
            "--",
            "sh",
            "-c",
            "printf 'int a;\\nint B;\\n' > main.c && git commit -qam propose",
        ],
        None,
    );
    assert_eq!(propose.code, 0, "{}", propose.stderr);
    let made = s.git_loop(&["comment", &s.id, "main.c:2", "-m", "call it b2"], None);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let id = made.stdout.trim().to_string();
    let run = s.git_loop(&["agent", &s.id, "--address-review"], None);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run.stderr_has(&format!("#{id}"));
    let seen = s.stand_in.seen();
    let first = seen[0].body.to_string();
    assert!(first.contains("call it b2"), "{first}");
    assert!(
        first.contains(&format!("Comment {id} on main.c:2")),
        "{first}"
    );
    assert!(
        first.contains("+int B;"),
        "the hunk is not in the prompt: {first}"
    );
    let listed = s.git_loop(&["comment", &s.id, "--list", "--json"], None);
    let comments: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(comments[0]["state"], "outdated", "{comments}");
    let review = s.git_loop(&["review", &s.id], None);
    review.stdout_has("rename B to b2");
    review.stdout_has(&format!("#{id} outdated"));
}

/// The comments' branch is the reviewer's: an agent that tries to resolve its own comment
/// by writing that branch (pushing to the notes origin, or making the branch in its own
/// clone for the import to carry) changes nothing; its reply in the folder meant for it,
/// the twin, is recorded.
#[test]
fn an_agent_cannot_write_or_resolve_a_comment() {
    let env = TestEnv::new();
    let agent = script(
        &env,
        "forge.sh",
        r#"id=$(printf '%s\n' "$1" | sed -n 's/^## Comment \([0-9a-f]*\) on .*/\1/p' | head -1)
cd /loopat/context/notes
git fetch -q origin git-loop/comments
git checkout -q FETCH_HEAD
mkdir -p "$GIT_LOOP_ID/$id"
printf 'kind = "resolve"\nauthor = "tester"\ncreated_at = "2026-01-01T00:00:00Z"\n' > "$GIT_LOOP_ID/$id/99999999999999999999-00000000.toml"
git add -A && git commit -qm forge
if git push -q origin HEAD:refs/heads/git-loop/comments 2>/dev/null; then echo PUSHED; fi
git branch -f git-loop/comments HEAD
git branch -f "loop/$GIT_LOOP_ID" HEAD 2>/dev/null || true
printf 'I would rather not\n' > "/loopat/loop/$GIT_LOOP_ID/.claude/review-replies/$id.md"
"#,
    );
    operator(
        &env,
        &format!("[agent]\ncommand = [{:?}]\n", agent.display().to_string()),
    );
    let (_repo, id) = proposing(&env);
    let c = comment(&env, &id, "main.c:2", "rename it");
    let before = comments_branch(&env, &env.notes()).unwrap();
    let run = env.run(["agent", &id, "--address-review"]).ok();
    assert!(!run.stdout.contains("PUSHED"), "{}", run.stdout);
    // The branch moved once: git loop's commit of the agent's reply.
    assert_ne!(comments_branch(&env, &env.notes()).unwrap(), before);
    let listed = list(&env, &id);
    let mine = state(&listed, &c);
    assert_eq!(mine["state"], "open", "{mine}");
    let events = mine["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{mine}");
    assert_eq!(events[0]["kind"], "reply");
    assert_eq!(events[0]["agent"], true);
    assert_eq!(events[0]["text"], "I would rather not");
    // The branch's history is git loop's alone: no commit of the agent's is in it.
    let log = env.git(&env.notes(), ["log", "--format=%s", "git-loop/comments"]);
    assert!(!log.contains("forge"), "{log}");
}
