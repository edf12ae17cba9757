//! `git loop rebase` (issue 33): a loop's branch replayed onto its moved base inside the
//! loop's sandbox. Nothing of the user's repository moves but `loop/<id>`; a conflict stops
//! with the files named and the rebase left for `git loop shell`; `--agent` hands the
//! conflict to the loop's agent, whose result passes the profile's check.

use std::fs;

use crate::common::TestEnv;
use crate::review_loop::{inside, script};

/// A repository whose main and a loop both changed greet.txt after the loop began.
fn diverged(env: &TestEnv) -> (std::path::PathBuf, String) {
    let repo = env.root.join("app");
    fs::create_dir_all(&repo).unwrap();
    env.git(&repo, ["init", "-q", "-b", "main"]);
    fs::write(repo.join("greet.txt"), "hello\n").unwrap();
    env.git(&repo, ["add", "-A"]);
    env.git(&repo, ["commit", "-q", "-m", "first"]);
    let id = env.new_loop(&repo, "greet");
    inside(
        env,
        &id,
        "echo bonjour > greet.txt && git commit -qam 'greet in French'",
    );
    fs::write(repo.join("greet.txt"), "hallo\n").unwrap();
    env.git(&repo, ["commit", "-q", "-am", "greet in German"]);
    (repo, id)
}

fn operator(env: &TestEnv, text: &str) {
    let path = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The default sandbox profile's check, as a team would write it in knowledge.
fn check(env: &TestEnv, line: &str) {
    let dir = env.ws.join("context/knowledge/.loopat/sandboxes/default");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("sandbox.toml"), format!("check = {line:?}\n")).unwrap();
}

#[test]
fn a_rebase_that_conflicts_stops_with_the_files_named_and_changes_nothing_of_the_users() {
    let env = TestEnv::new();
    let (repo, id) = diverged(&env);
    // merge says what to do about a loop that is behind and conflicts.
    env.run(["merge", &id])
        .fails(1)
        .stderr_has(&format!("git loop rebase {id}"));
    let refs = env.refs(&repo);
    let rebase = env.run(["rebase", &id]).fails(1);
    rebase.stderr_has(&format!(
        "the rebase of loop {id} onto main stopped on conflicts in greet.txt"
    ));
    rebase.stderr_has(&format!("git loop shell {id}"));
    rebase.stderr_has(&format!("git loop rebase {id} --agent"));
    assert_eq!(
        env.refs(&repo),
        refs,
        "a ref of the user's repository moved"
    );
    assert_eq!(
        fs::read_to_string(repo.join("greet.txt")).unwrap(),
        "hallo\n"
    );
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    // The rebase waits in the loop, where a shell finishes it.
    let status = env.run(["run", "-q", &id, "--", "git", "status"]).ok();
    status.stdout_has("rebase in progress");
    env.run(["rebase", &id])
        .fails(1)
        .stderr_has("a rebase is already in progress");
    inside(
        &env,
        &id,
        "echo 'bonjour hallo' > greet.txt && git add greet.txt && GIT_EDITOR=true git rebase --continue",
    );
    env.run(["rebase", &id])
        .ok()
        .stderr_has("already on top of main");
    let main = env.rev(&repo, "main").unwrap();
    let branch = format!("loop/{id}");
    assert_eq!(env.git(&repo, ["merge-base", "main", &branch]).trim(), main);
    assert_eq!(env.rev(&repo, "main").unwrap(), main);
    // Now the merge is a fast-forward.
    env.run(["merge", &id]).ok().stdout_has("fast-forward");
}

/// The agent's twin of the above: given the conflict with both sides' intent, it resolves,
/// continues the rebase, and the profile's check, run again afterwards, passes.
#[test]
fn the_agent_resolves_a_conflicting_rebase_and_its_check_passes() {
    let env = TestEnv::new();
    let agent = script(
        &env,
        "resolve.sh",
        r#"printf '%s' "$1" > /loopat/loop/$GIT_LOOP_ID/.claude/seen-task.md
printf 'bonjour, hallo\n' > greet.txt
git add greet.txt
GIT_EDITOR=true git rebase --continue
"#,
    );
    operator(
        &env,
        &format!("[agent]\ncommand = [{:?}]\n", agent.display().to_string()),
    );
    let (repo, id) = diverged(&env);
    check(&env, "grep -q bonjour greet.txt && grep -q hallo greet.txt");
    let main = env.rev(&repo, "main").unwrap();
    let run = env.run(["rebase", &id, "--agent"]).ok();
    run.stderr_has("giving the conflicts to the agent: greet.txt");
    run.stderr_has("check `grep -q bonjour greet.txt && grep -q hallo greet.txt` passed");
    run.stdout_has(&format!("rebased loop/{id} onto main"));
    let task = fs::read_to_string(env.loop_dir(&id).join(".claude/seen-task.md")).unwrap();
    assert!(task.contains("- greet.txt\n"), "{task}");
    assert!(task.contains("greet in French"), "{task}");
    assert!(task.contains("greet in German"), "{task}");
    assert!(task.contains("run the check `grep -q bonjour"), "{task}");
    let branch = format!("loop/{id}");
    assert_eq!(
        env.git(&repo, ["show", &format!("{branch}:greet.txt")]),
        "bonjour, hallo\n"
    );
    assert_eq!(env.git(&repo, ["merge-base", "main", &branch]).trim(), main);
    assert_eq!(env.rev(&repo, "main").unwrap(), main);
    let record = fs::read_to_string(env.loop_dir(&id).join("loop.toml")).unwrap();
    assert!(record.contains(&format!("base = \"{main}\"")), "{record}");
    // Reviewed like any proposal.
    env.run(["review", &id]).ok().stdout_has("+bonjour, hallo");
}

/// What the agent leaves undone is said, never taken for done: a rebase it did not finish,
/// and a result whose check fails.
#[test]
fn an_unfinished_or_failing_resolution_is_refused() {
    let env = TestEnv::new();
    let idle = script(&env, "idle.sh", "true\n");
    operator(
        &env,
        &format!("[agent]\ncommand = [{:?}]\n", idle.display().to_string()),
    );
    let (repo, id) = diverged(&env);
    check(&env, "grep -q hallo greet.txt");
    let loop_tip = env.rev(&repo, &format!("loop/{id}")).unwrap();
    env.run(["rebase", &id, "--agent"])
        .fails(1)
        .stderr_has("the agent left the rebase of loop");
    assert_eq!(env.rev(&repo, &format!("loop/{id}")).unwrap(), loop_tip);
    // The rebase is still there to finish; this agent keeps its own side only.
    let careless = script(
        &env,
        "careless.sh",
        "echo bonjour > greet.txt && git add greet.txt && GIT_EDITOR=true git rebase --continue\n",
    );
    operator(
        &env,
        &format!(
            "[agent]\ncommand = [{:?}]\n",
            careless.display().to_string()
        ),
    );
    env.run(["rebase", &id, "--agent"])
        .fails(1)
        .stderr_has("the rebase is done, but the check `grep -q hallo greet.txt` fails");
}

#[test]
fn a_clean_rebase_moves_only_the_loops_branch() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "add a");
    inside(
        &env,
        &id,
        "echo a > a.txt && git add a.txt && git commit -qm 'add a'",
    );
    env.commit_file(&repo, "b.txt", "b\n", "add b");
    let main = env.rev(&repo, "main").unwrap();
    // main moved: a merge now would be a merge commit, and merge says how to avoid it.
    env.run(["merge", &id, "--dry-run"])
        .ok()
        .stderr_has(&format!(
            "`git loop rebase {id}` before merging makes it a fast-forward"
        ));
    // Uncommitted work is refused first.
    inside(&env, &id, "echo dirty > a.txt");
    env.run(["rebase", &id])
        .fails(1)
        .stderr_has("uncommitted changes (a.txt)");
    inside(&env, &id, "git checkout -q a.txt");
    let run = env.run(["rebase", &id]).ok();
    run.stdout_has(&format!("rebased loop/{id} onto main"));
    let branch = format!("loop/{id}");
    assert_eq!(env.git(&repo, ["show", &format!("{branch}:b.txt")]), "b\n");
    assert_eq!(env.git(&repo, ["show", &format!("{branch}:a.txt")]), "a\n");
    assert_eq!(env.rev(&repo, "main").unwrap(), main);
    let list = env.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["branches"][0]["behind"], 0, "{list}");
    // --onto a commit that does not exist.
    env.run(["rebase", &id, "--onto", "nope"])
        .fails(2)
        .stderr_has("--onto nope names no commit");
    // A scratch loop has nothing to rebase.
    let scratch = env
        .run(["new", "--scratch", "s"])
        .ok()
        .stdout
        .trim()
        .to_string();
    env.run(["rebase", &scratch]).fails(2);
}
