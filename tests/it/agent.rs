//! A real agent works in a loop out of the box (issue 13), the parts a stand-in agent can
//! show: commits carry the user's identity, known agents get their profile, the install
//! folder is bound whole (and never a folder that holds more), vault scope. The real
//! Claude Code CLI end to end is tests/it/agent_e2e.rs.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{Run, TestEnv, BIN};

/// `git loop ARGS` with the user's identity in their git config, not in the environment.
fn as_user(
    env: &TestEnv,
    cwd: &Path,
    gitconfig: Option<&Path>,
    args: &[&str],
    stdin: Option<&str>,
) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .envs(
            env.envs()
                .into_iter()
                .filter(|(k, _)| !k.starts_with("GIT_AUTHOR") && !k.starts_with("GIT_COMMITTER")),
        )
        .current_dir(cwd)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(g) = gitconfig {
        cmd.env("GIT_CONFIG_GLOBAL", g);
    }
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `git loop agent login --agent AGENT` with `key`, as a user logs in.
fn login(env: &TestEnv, agent: &str, key: &str) {
    as_user(
        env,
        &env.root,
        None,
        &["agent", "login", "--agent", agent],
        Some(key),
    )
    .ok();
}

fn gitconfig(env: &TestEnv) -> PathBuf {
    let path = env.home.join(".gitconfig");
    fs::write(
        &path,
        "[user]\n\tname = Alice Example\n\temail = alice@example.com\n",
    )
    .unwrap();
    path
}

fn operator(env: &TestEnv, text: &str) {
    let path = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn executable(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Any command's commits inside carry the user's git identity (from their git config),
/// with no `-c user.name`; with `agent.identity = "agent"` the agent is the author and
/// the user the committer; with no identity at all, `new` says so and how to set one.
#[test]
fn commits_inside_carry_the_users_identity() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let config = gitconfig(&env);
    let new = as_user(&env, &repo, Some(&config), &["new", "who"], None).ok();
    assert!(!new.stderr.contains("no git identity"), "{}", new.stderr);
    let id = new.stdout.trim().to_string();
    let commit = "echo x > a.txt && git add a.txt && git commit -q -m inside && git log -1 --format='%an <%ae>|%cn <%ce>'";
    let run = as_user(
        &env,
        &env.root,
        Some(&config),
        &["run", "-q", &id, "--", "sh", "-c", commit],
        None,
    )
    .ok();
    assert_eq!(
        run.stdout.trim(),
        "Alice Example <alice@example.com>|Alice Example <alice@example.com>"
    );
    // An identity the agent writes into its $HOME does not override the user's.
    let planted = "git config --global user.name Mallory && git config --global user.email m@evil.test && \
                   echo y > b.txt && git add b.txt && git commit -q -m again && git log -1 --format='%an <%ae>'";
    let run = as_user(
        &env,
        &env.root,
        Some(&config),
        &["run", "-q", &id, "--", "sh", "-c", planted],
        None,
    )
    .ok();
    assert_eq!(run.stdout.trim(), "Alice Example <alice@example.com>");
    // The agent as author, the user as committer.
    operator(
        &env,
        "[agent]\nidentity = \"agent\"\nauthor = \"Robo Agent <robo@agents.test>\"\n",
    );
    let run = as_user(&env, &env.root, Some(&config), &["run", "-q", &id, "--", "sh", "-c",
        "echo z > c.txt && git add c.txt && git commit -q -m third && git log -1 --format='%an <%ae>|%cn <%ce>'"], None).ok();
    assert_eq!(
        run.stdout.trim(),
        "Robo Agent <robo@agents.test>|Alice Example <alice@example.com>"
    );
    // No identity anywhere: new says so, with the fix, and a commit inside fails as git's does.
    fs::remove_file(env.home.join(".config/git-loop/config.toml")).unwrap();
    let none = env.root.join("empty.gitconfig");
    fs::write(&none, "").unwrap();
    let new = as_user(&env, &repo, Some(&none), &["new", "nobody"], None).ok();
    new.stderr_has("you have no git identity")
        .stderr_has("hint: set yours: git config --global user.name");
}

/// A stand-in agent named `codex`, installed npm-style under a prefix of its own, prints
/// what it was given: Codex's profile (its config in the loop's $HOME, with its own
/// sandbox off and no approvals, and AGENTS.md from the prompt layers), and the files of
/// its platform package beside it, which only binding the whole install folder shows.
#[test]
fn codex_gets_its_profile_and_its_whole_install_folder() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "codex");
    let prefix = env.root.join("npm-prefix");
    let modules = prefix.join("lib/node_modules/@openai");
    executable(
        &modules.join("codex/bin/codex.js"),
        "#!/bin/sh\necho \"CODEX_HOME=$CODEX_HOME\"\ncat \"$CODEX_HOME/config.toml\"\nhead -1 \"$CODEX_HOME/AGENTS.md\"\n\
         cat \"$(dirname \"$0\")/../../codex-linux-x64/vendor/native.txt\"\n\
         grep -qF \"\\\"OPENAI_API_KEY\\\":\\\"$OPENAI_API_KEY\\\"\" \"$CODEX_HOME/auth.json\" && echo LOGGED-IN-WITH-THIS-RUNS-KEY\n\
         grep -qF \"[projects.\\\"$PWD\\\"]\" \"$CODEX_HOME/config.toml\" && echo FOLDER-TRUSTED\n",
    );
    fs::create_dir_all(modules.join("codex-linux-x64/vendor")).unwrap();
    fs::write(
        modules.join("codex-linux-x64/vendor/native.txt"),
        "NATIVE-PACKAGE-FOUND\n",
    )
    .unwrap();
    fs::create_dir_all(prefix.join("bin")).unwrap();
    symlink(
        "../lib/node_modules/@openai/codex/bin/codex.js",
        prefix.join("bin/codex"),
    )
    .unwrap();
    operator(
        &env,
        &format!(
            "[agent]\ncommand = [{:?}]\n",
            prefix.join("bin/codex").display().to_string()
        ),
    );
    login(&env, "codex", "sk-proj-stand-in-0123456789");
    let run = env.run(["agent", &id]).ok();
    run.stdout_has("CODEX_HOME=/home/tester/.codex")
        .stdout_has("sandbox_mode = \"danger-full-access\"")
        .stdout_has("approval_policy = \"never\"")
        .stdout_has("check_for_update_on_startup = false")
        .stdout_has("[analytics]\nenabled = false")
        .stdout_has("[features]\nplugins = false")
        .stdout_has("# Working in a git loop")
        .stdout_has("NATIVE-PACKAGE-FOUND")
        .stdout_has("LOGGED-IN-WITH-THIS-RUNS-KEY")
        .stdout_has("FOLDER-TRUSTED");
    // The install folder bound is the node_modules it sits in, read-only.
    let mounts = env.run(["show", &id, "--mounts"]).ok();
    assert!(!mounts
        .stdout
        .contains(&prefix.join("bin").display().to_string()));
    // With permissions = ask, Codex would ask before nothing (its own sandbox cannot run
    // inside the loop's): refused, not run with the promise broken.
    operator(
        &env,
        &format!(
            "[agent]\ncommand = [{:?}]\npermissions = \"ask\"\n",
            prefix.join("bin/codex").display().to_string()
        ),
    );
    let refused = env.run(["agent", &id]).fails(1);
    refused.stderr_has("agent.permissions = \"ask\" cannot be kept for Codex");
    assert!(!refused.stdout.contains("approval_policy"));
}

/// Claude Code's profile as a stand-in named `claude` sees it: told it is sandboxed, no
/// updater, no telemetry; settings without prompts and its first-run screens done.
#[test]
fn claude_code_gets_its_profile() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "claude");
    let bin = env.root.join("claude-install/claude");
    executable(
        &bin,
        "#!/bin/sh\nenv | grep -E '^(IS_SANDBOX|DISABLE_AUTOUPDATER|CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC|DISABLE_TELEMETRY)=' | sort\n\
         cat \"$CLAUDE_CONFIG_DIR/settings.json\" \"$CLAUDE_CONFIG_DIR/.claude.json\"\n\
         tail=$(printf %s \"$ANTHROPIC_API_KEY\" | tail -c 20)\n\
         grep -qF \"\\\"$tail\\\"\" \"$CLAUDE_CONFIG_DIR/.claude.json\" && echo THIS-RUNS-KEY-APPROVED\n\
         grep -qF \"\\\"$PWD\\\": {\" \"$CLAUDE_CONFIG_DIR/.claude.json\" && echo FOLDER-LISTED\n",
    );
    operator(
        &env,
        &format!("[agent]\ncommand = [{:?}]\n", bin.display().to_string()),
    );
    login(&env, "claude", "sk-ant-api03-stand-in-0123456789");
    let run = env.run(["agent", &id]).ok();
    run.stdout_has("IS_SANDBOX=1")
        .stdout_has("DISABLE_AUTOUPDATER=1")
        .stdout_has("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
        .stdout_has("\"defaultMode\": \"bypassPermissions\"")
        .stdout_has("\"hasCompletedOnboarding\": true")
        .stdout_has("\"hasTrustDialogAccepted\": true")
        .stdout_has("THIS-RUNS-KEY-APPROVED")
        .stdout_has("FOLDER-LISTED");
    operator(
        &env,
        &format!(
            "[agent]\ncommand = [{:?}]\npermissions = \"ask\"\n",
            bin.display().to_string()
        ),
    );
    let run = env.run(["agent", &id]).ok();
    assert!(!run.stdout.contains("IS_SANDBOX"), "{}", run.stdout);
    run.stdout_has("\"defaultMode\": \"default\"");
}

/// An agent installed right in the home folder (or anywhere its folder would hold the
/// workspace) is refused: binding its folder would show the sandbox the whole home.
#[test]
fn an_install_folder_that_holds_the_home_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "broad");
    let bin = env.home.join("my-agent");
    executable(&bin, "#!/bin/sh\necho ran\n");
    operator(
        &env,
        &format!("[agent]\ncommand = [{:?}]\n", bin.display().to_string()),
    );
    env.run(["agent", &id])
        .fails(1)
        .stderr_has("which is (or holds) your home folder")
        .stderr_has("install the agent in a folder of its own");
}

/// Who gets a vault entry is said when it is stored; a loop made with `--vault none`, or
/// while `vault.default = "none"`, gets nothing; `show` names what a loop receives, never
/// a value.
#[test]
fn vault_scope_is_said_and_none_means_none() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let with = env.new_loop(&repo, "with");
    let without = env
        .run_in(&repo, ["new", "without", "--vault", "none"])
        .ok()
        .stdout
        .trim()
        .to_string();
    let set = as_user(
        &env,
        &env.root,
        None,
        &["vault", "set", "default", "env", "DEPLOY_TOKEN"],
        Some("tok-value-123"),
    )
    .ok();
    set.stderr_has(&format!(
        "env:DEPLOY_TOKEN goes to loop {with} and every new loop"
    ))
    .stderr_has("whatever runs there");
    env.run(["show", &with])
        .ok()
        .stdout_has("receives:   variables DEPLOY_TOKEN");
    let show = env.run(["show", &without]).ok();
    assert!(!show.stdout.contains("DEPLOY_TOKEN"), "{}", show.stdout);
    let json = env.run(["show", &with, "--json"]).ok().json();
    assert_eq!(json["receives"]["variables"][0], "DEPLOY_TOKEN");
    assert!(!json.to_string().contains("tok-value-123"));
    let probe = "if [ -n \"${DEPLOY_TOKEN:-}\" ]; then echo HAS; else echo NONE; fi";
    env.run(["run", "-q", &with, "--", "sh", "-c", probe])
        .ok()
        .stdout_has("HAS");
    env.run(["run", "-q", &without, "--", "sh", "-c", probe])
        .ok()
        .stdout_has("NONE");
    // vault.default = "none": new loops get none.
    operator(&env, "[vault]\ndefault = \"none\"\n");
    let later = env.new_loop(&repo, "later");
    env.run(["run", "-q", &later, "--", "sh", "-c", probe])
        .ok()
        .stdout_has("NONE");
    // "none" is no vault's name.
    env.run(["vault", "init", "none"])
        .fails(2)
        .stderr_has("reserved");
}
