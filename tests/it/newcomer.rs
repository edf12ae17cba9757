//! The rough edges a first user hits (issue 14), each as it was met: what failed, now
//! either working or refused with what to do, and nothing left behind.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::common::TestEnv;

/// `distill` checks that its agent is there before it makes a loop for it.
#[test]
fn distill_without_its_agent_makes_no_loop() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let config = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "[agent]\ncommand = [\"no-such-agent-cli\"]\n").unwrap();
    env.run(["distill"])
        .fails(1)
        .stderr_has("the agent command 'no-such-agent-cli' is not installed")
        .stderr_has("git loop distill --no-agent");
    assert_eq!(env.loop_entries(), Vec::<String>::new());
    for repo in [env.notes(), env.ws.join("context/knowledge")] {
        assert!(
            !env.refs(&repo).contains("refs/heads/loop/"),
            "{}",
            repo.display()
        );
    }
    // Twin: --no-agent makes the loop.
    env.run(["distill", "--no-agent"]).ok();
    assert_eq!(env.loop_entries().len(), 1);
}

/// A loop's clones have the git folders a user's tools expect (`info/`, `hooks/`):
/// `.git/info/exclude` can be written inside and from the host.
#[test]
fn a_loops_clone_has_info_and_hooks() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "folders");
    for clone in [env.workdir(&id), env.loop_notes(&id)] {
        assert!(clone.join(".git/info").is_dir(), "{}", clone.display());
        assert!(clone.join(".git/hooks").is_dir(), "{}", clone.display());
    }
    env.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        "echo '*.log' >> .git/info/exclude && echo x > a.log && git status --porcelain",
    ])
    .ok();
    assert_eq!(
        fs::read_to_string(env.workdir(&id).join(".git/info/exclude")).unwrap(),
        "*.log\n"
    );
    let review = env.run(["review", &id, "--json"]).ok().json();
    assert_eq!(review["uncommitted"], serde_json::json!([]), "{review}");
}

/// `pr` without a remote names the user's own repository in its hint (not the
/// workspace's link to it); with a forge tool, the pull request's body says where it
/// comes from, its commits, its changes and what needs a person's eye.
#[test]
fn pr_names_the_users_repository_and_describes_the_work() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "describe me");
    env.commit_file(
        &env.workdir(&id),
        "feature.c",
        "int f;\n",
        "add the feature",
    );
    let run = env.run(["pr", &id]).fails(1);
    let real = fs::canonicalize(&repo).unwrap();
    run.stderr_has(&format!("git -C {} remote add origin URL", real.display()));
    assert!(!run.stderr.contains("context/repos"), "{}", run.stderr);

    let forge = env.root.join("forge.git");
    env.git(&env.root, ["init", "-q", "--bare", forge.to_str().unwrap()]);
    env.git(
        &repo,
        ["remote", "add", "origin", "https://github.com/team/app.git"],
    );
    env.git(
        &repo,
        [
            "remote",
            "set-url",
            "--push",
            "origin",
            forge.to_str().unwrap(),
        ],
    );
    let bin = env.root.join("bin");
    fs::create_dir(&bin).unwrap();
    let body = env.root.join("body.txt");
    fs::write(
        bin.join("gh"),
        format!(
            "#!/bin/sh\n[ \"$1\" = auth ] && exit 0\nwhile [ $# -gt 0 ]; do [ \"$1\" = --body ] && printf '%s' \"$2\" > {}; shift; done\n",
            body.display()
        ),
    )
    .unwrap();
    fs::set_permissions(bin.join("gh"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = env
        .command()
        .current_dir(&env.root)
        .env("PATH", path)
        .args(["pr", &id])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(&body).unwrap();
    assert!(text.contains(&format!("From git loop `{id}`")), "{text}");
    assert!(text.contains("## Commits"), "{text}");
    assert!(text.contains("add the feature"), "{text}");
    assert!(text.contains("## Changes"), "{text}");
    assert!(text.contains("feature.c"), "{text}");
}

/// A loop squash-merged into another branch is merged: `rm` removes it without --force
/// and `gc --merged` counts it; new work after the squash makes it unmerged again.
#[test]
fn a_squash_merged_loop_counts_as_merged() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, ["branch", "release"]);
    let id = env.new_loop(&repo, "squash me");
    env.commit_file(&env.workdir(&id), "a.c", "a\n", "one");
    env.commit_file(&env.workdir(&id), "b.c", "b\n", "two");
    env.run(["merge", &id, "--squash", "--into", "release"])
        .ok();
    let show = env.run(["show", &id, "--json"]).ok().json();
    assert_eq!(show["state"], "merged", "{show}");
    // More work after the squash is unmerged work: deleting the branch would lose it.
    env.commit_file(&env.workdir(&id), "c.c", "c\n", "three");
    env.run(["rm", &id, "--delete-branches"])
        .fails(1)
        .stderr_has("would lose work")
        .stderr_has("1 commit on loop/");
    env.run(["merge", &id, "--squash", "--into", "release"])
        .ok();
    env.run(["rm", &id, "--delete-branches"]).ok();
    assert!(!env.loop_dir(&id).exists());
}

/// Listings a script reads have `--json`: `vault list`, `cron status`.
#[test]
fn vault_list_and_cron_status_speak_json() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let set = env
        .command()
        .current_dir(&env.root)
        .args(["vault", "set", "default", "env", "API_TOKEN"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"value")?;
            c.wait()
        })
        .unwrap();
    assert!(set.success());
    let vaults = env.run(["vault", "list", "--json"]).ok().json();
    assert!(vaults.to_string().contains("API_TOKEN"), "{vaults}");
    assert!(!vaults.to_string().contains("value\""), "{vaults}");
    // A stand-in crontab: the status says, as JSON, that nothing is installed.
    let bin = env.root.join("bin");
    fs::create_dir(&bin).unwrap();
    fs::write(bin.join("crontab"), "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(bin.join("crontab"), fs::Permissions::from_mode(0o755)).unwrap();
    let out = env
        .command()
        .current_dir(&env.root)
        .env("GIT_LOOP_CRONTAB", bin.join("crontab"))
        .args(["cron", "status", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["installed"], false, "{json}");
    assert_eq!(json["scheduler"], "cron", "{json}");
}

/// A server the proxy could not reach is a line in `git loop log`, not only a failed
/// exit code: an allowed name whose server is down.
#[test]
fn an_unreachable_upstream_is_an_event() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "upstream");
    // A port nothing listens on: bound and closed at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(
        &config,
        "[network]\nallow_domains = [\"down.test\"]\nallow_cidrs = [\"127.0.0.1/32\"]\n\n[network.hosts]\n\"down.test\" = \"127.0.0.1\"\n",
    )
    .unwrap();
    let run = env.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        &format!("curl -s -o /dev/null -w '%{{http_code}}' http://down.test:{port}/"),
    ]);
    assert_eq!(run.stdout.trim(), "502", "{}\n{}", run.stdout, run.stderr);
    env.run(["log", &id])
        .ok()
        .stdout_has(&format!("upstream  down.test:{port} could not be reached"));
}
