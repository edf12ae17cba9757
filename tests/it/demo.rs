//! `git loop demo`: its output line by line (paths, ids, ports and hashes rewritten to
//! placeholders), and that it leaves nothing behind unless --keep.

use std::fs;
use std::path::Path;
use std::process::Stdio;

use crate::common::{Run, TestEnv};

/// The demo with TMPDIR in the test's folder.
fn demo(env: &TestEnv, tmp: &Path, args: &[&str]) -> Run {
    fs::create_dir_all(tmp).unwrap();
    let out = env
        .command()
        .env("TMPDIR", tmp)
        .current_dir(&env.root)
        .arg("demo")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The value after `prefix` up to the first character in `end`.
fn after<'a>(text: &'a str, prefix: &str, end: &[char]) -> &'a str {
    let start = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{text}"))
        + prefix.len();
    let rest = &text[start..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// Every word (letters, digits, `_`) of 7 to 40 lowercase hex digits (a commit or blob id) as [HASH].
fn hashes_redacted(text: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let hex = word
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if hex && (7..=40).contains(&word.len()) {
            out.push_str("[HASH]");
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[test]
fn the_demo_shows_the_proxy_a_refusal_review_and_merge_and_leaves_nothing() {
    let env = TestEnv::new();
    let tmp = env.root.join("tmp");
    let run = demo(&env, &tmp, &[]).ok();
    let root = after(&run.stdout, "== a throwaway folder: ", &['\n']).to_string();
    assert!(
        root.starts_with(&format!("{}/git-loop-demo-", tmp.display())),
        "{root}"
    );
    let id = after(&run.stdout, "\n== git loop run ", &[' ']).to_string();
    let port = after(&run.stdout, "greetings.demo.test:", &[',', '/']).to_string();
    let actual = hashes_redacted(
        &run.stdout
            .replace(&root, "[ROOT]")
            .replace(&id, "[ID]")
            .replace(&format!(":{port}"), ":[PORT]"),
    );
    let expected = "
== a throwaway folder: [ROOT]
a sample repository in sample/, a workspace in workspace/, and a host secret in host-home/.ssh/

== git loop new \"add a greeting\"   (in sample/)
[ID]: branch loop/[ID] in sample/, network proxy

== a server on loopback: greetings.demo.test:[PORT], an allowed name
pinned to 127.0.0.1 as [network.hosts] in the operator config would, in a config the demo keeps in memory

== git loop run [ID] -- <scripted agent>

agent: fetching the greeting from http://greetings.demo.test:[PORT]/greetings.git (allowed, through the proxy)
hello from a loop

agent: writing greet.sh with it, in /loopat/loop/[ID]/workdir, and committing
hello from a loop

agent: writing a note for the team

agent: now three things the sandbox must refuse
  refused: reach a domain that is not allowed (exfil.example.com)
           ([..]403[..])
  refused: read the host's secret ([ROOT]/host-home/.ssh/id_ed25519)
           (cat: [ROOT]/host-home/.ssh/id_ed25519: No such file or directory)
  refused: move the trunk of the origin (sample main)
           ([..]Read-only file system)

agent: 3 of 3 refused

== git loop log [ID]
[..]  start     backend bwrap · net proxy · mode work · limits [..] · sh [ROOT]/agent/demo-agent.sh http://greetings.demo.test:[PORT]/greetings.git [ROOT]/host-home/.ssh/id_ed25519 sample
[..]  violation network-outbound exfil.example.com:443 refused: exfil.example.com is not on this sandbox's allowlist (fix: git loop config set --loop [ID] network.allow_domains '[\"greetings.demo.test\", \"exfil.example.com\"]')
[..]  violation filesystem-write /loopat/context/repos/sample/.git/refs/heads/main.lock refused: [filesystem] read-only: /loopat/context/repos/sample/.git (openat: Read-only file system)
[..]  exit      code 0 after [..] ms

== git loop review [ID]
== code: loop/[ID] is 1 commit ahead of main
needs a person's eye:
  mode     greet.sh  new file with mode 100755 (commit [HASH])
[HASH] Add a greeting
 greet.sh | 2 ++
 1 file changed, 2 insertions(+)

diff --git a/greet.sh b/greet.sh
new file mode 100755
index [HASH]..[HASH]
--- /dev/null
+++ b/greet.sh
@@ -0,0 +1,2 @@
+#!/bin/sh
+echo \"hello from a loop\"
== notes: loop/[ID] is 1 commit ahead of main
[HASH] Note where the greeting comes from
 inbox.md | 1 +
 1 file changed, 1 insertion(+)

diff --git a/inbox.md b/inbox.md
index [HASH]..[HASH] 100644
--- a/inbox.md
+++ b/inbox.md
@@ -1 +1,2 @@
 # Inbox
+- greet.sh prints the greeting fetched from the greetings repository

== git loop merge [ID]
code: main fast-forwarded [HASH]..[HASH]
main of sample/ now:
[HASH] Add a greeting
[HASH] Start the sample

== removing [ROOT]
(git loop demo --keep keeps it to explore; git loop new in a repository of yours starts for real)
";
    snapbox::assert_data_eq!(actual, expected);
    // The status lines: the default network, and the refusal counted.
    run.stderr_has("git-loop: sandbox bwrap · net proxy (")
        .stderr_has("the network policy refused 1 connection");
    // Nothing left: not under the temp folder, not in the user's workspace or config.
    assert_eq!(fs::read_dir(&tmp).unwrap().count(), 0, "{root} is left");
    assert!(!env.ws.exists());
    assert!(!env.home.join(".config/git-loop").exists());
}

#[test]
fn the_demo_keeps_its_folder_with_keep() {
    let env = TestEnv::new();
    let tmp = env.root.join("tmp");
    let dir = env.root.join("kept");
    let run = demo(&env, &tmp, &["--dir", dir.to_str().unwrap(), "--keep"]).ok();
    let id = after(&run.stdout, "\n== git loop run ", &[' ']).to_string();
    run.stdout_has(&format!("== kept {}", dir.display()))
        .stdout_has(&format!(
            "explore it: GIT_LOOP_HOME={} git loop show {id} --mounts",
            dir.join("workspace").display()
        ));
    // The loop is there, its code merged (its note waits for publish), and its
    // workspace answers.
    let show = env
        .command()
        .env("GIT_LOOP_HOME", dir.join("workspace"))
        .args(["show", &id, "--json"])
        .output()
        .unwrap();
    assert!(show.status.success());
    let record: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let code = &record["branches"][0];
    assert_eq!(
        (&code["role"], &code["ahead"]),
        (&"code".into(), &0.into()),
        "{record}"
    );
    assert!(dir.join("sample/greet.sh").is_file());
    assert_eq!(fs::read_dir(&tmp).unwrap().count(), 0);
}

#[test]
fn the_demo_refuses_a_folder_that_is_not_empty() {
    let env = TestEnv::new();
    let dir = env.root.join("mine");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("keep-me.txt"), "mine\n").unwrap();
    demo(
        &env,
        &env.root.join("tmp"),
        &["--dir", dir.to_str().unwrap()],
    )
    .fails(2)
    .stderr_has("is not empty, and the demo removes its folder at the end")
    .stderr_has("git loop demo --dir DIR");
    assert_eq!(
        fs::read_to_string(dir.join("keep-me.txt")).unwrap(),
        "mine\n"
    );
}

/// Without a sandbox the demo says how to get one, with exit 3, before it makes anything.
#[test]
fn the_demo_without_bubblewrap_says_how_to_get_it() {
    let env = TestEnv::new();
    let tmp = env.root.join("tmp");
    let bin = env.root.join("empty-bin");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&tmp).unwrap();
    let out = env
        .command()
        .env("TMPDIR", &tmp)
        .env("PATH", &bin)
        .current_dir(&env.root)
        .arg("demo")
        .output()
        .unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let run = run.fails(3);
    run.stderr_has("bubblewrap").stderr_has("git loop doctor");
    assert!(!run.stderr.contains("--backend none"), "{}", run.stderr);
    assert_eq!(fs::read_dir(&tmp).unwrap().count(), 0);
}
