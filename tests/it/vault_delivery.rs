//! The vault inside the sandbox: variables and files delivered from memory, the selected
//! vault only, and the plaintext nowhere on the host's disk or command lines.

use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::TestEnv;

fn with_stdin(env: &TestEnv, args: &[&str], input: &[u8]) {
    let mut child = env
        .command()
        .current_dir(&env.root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// Made at run time, so the secrets are in neither this source file nor the test binary
// (the disk search below would find those wherever the checkout lives).
fn unique() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{:x}{:x}", nanos, std::process::id())
}

struct Secrets {
    token: String,
    key: String,
    other: String,
}

fn setup() -> (TestEnv, String, Secrets) {
    let u = unique();
    let secrets = Secrets {
        token: format!("vault-token-{u}"),
        key: format!("vault-file-secret-{u}"),
        other: format!("other-vault-secret-{u}"),
    };
    let (token, key_secret, other) = (&secrets.token, &secrets.key, &secrets.other);
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "vaulted");
    with_stdin(
        &env,
        &["vault", "set", "default", "env", "API_TOKEN"],
        token.as_bytes(),
    );
    let key = env.root.join("key-source");
    fs::write(&key, format!("{key_secret}\n")).unwrap();
    env.run([
        "vault",
        "set",
        "default",
        "file",
        ".config/tool/key",
        key.to_str().unwrap(),
    ])
    .ok();
    fs::remove_file(&key).unwrap();
    env.run(["vault", "init", "other"]).ok();
    with_stdin(
        &env,
        &["vault", "set", "other", "env", "OTHER_TOKEN"],
        other.as_bytes(),
    );
    (env, id, secrets)
}

#[test]
fn the_selected_vault_is_delivered_and_no_other() {
    let (env, id, secrets) = setup();
    let script = "echo \"token=$API_TOKEN other=${OTHER_TOKEN:-absent}\"; \
                  stat -c '%a' ~/.config/tool/key; cat ~/.config/tool/key; \
                  echo x >> ~/.config/tool/key 2>/dev/null || echo key-ro; \
                  ls -A /loopat/context/personal/.loopat/vaults | wc -l; \
                  S=other-vault; S=$S-secret-$1; \
                  grep -rqsF \"$S\" /loopat /home /tmp /etc /dev 2>/dev/null && echo LEAK || echo no-other";
    let run = env
        .run([
            "run",
            &id,
            "--net",
            "none",
            "--",
            "sh",
            "-c",
            script,
            "sh",
            secrets.other.trim_start_matches("other-vault-secret-"),
        ])
        .ok();
    assert_eq!(
        run.stdout,
        format!(
            "token={} other=absent\n600\n{}\nkey-ro\n0\nno-other\n",
            secrets.token, secrets.key
        )
    );
    // Two entries, both unbound: the status line counts what goes in as it is.
    run.stderr_has("· vault default (2 plaintext) ·");
    // The loop's $HOME layer on the host holds no copy of the file's content.
    let upper = env.loop_dir(&id).join("home/upper");
    let copy = upper.join(".config/tool/key");
    assert!(
        fs::read(&copy).map(|b| b.is_empty()).unwrap_or(true),
        "the vault file reached the disk"
    );
    let view = env.run(["show", &id, "--mounts"]).ok();
    view.stdout_has("/home/tester/.config/tool/key")
        .stdout_has("vault file, decrypted in memory");
}

/// While a run is live: the plaintext is in no file of the workspace, the test's folders,
/// /dev/shm or the host's /tmp, and in no process's command line.
#[test]
fn plaintext_never_touches_the_disk_or_a_command_line() {
    let (env, id, secrets) = setup();
    let mut child = env
        .command()
        .current_dir(&env.root)
        .args([
            "run",
            "-q",
            &id,
            "--net",
            "none",
            "--",
            "sh",
            "-c",
            "test -n \"$API_TOKEN\" && sleep 3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the sandbox is up (its sleep is visible on the host).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ps = Command::new("pgrep")
            .args(["-f", "^sleep 3$"])
            .output()
            .unwrap();
        if ps.status.success() || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for secret in [&secrets.token, &secrets.key] {
        for dir in [env.root.clone(), "/dev/shm".into(), std::env::temp_dir()] {
            let hits = files_containing(&dir, secret.as_bytes());
            assert!(hits.is_empty(), "{secret} found on disk: {hits:?}");
        }
        for entry in fs::read_dir("/proc").unwrap().flatten() {
            if let Ok(cmdline) = fs::read(entry.path().join("cmdline")) {
                assert!(
                    !String::from_utf8_lossy(&cmdline).contains(secret),
                    "{secret} in the command line of {}",
                    entry.path().display()
                );
            }
        }
    }
    assert!(child.wait().unwrap().success());
}

#[test]
fn without_a_sandbox_files_are_refused_and_variables_pass() {
    let (env, id, secrets) = setup();
    env.run(["run", &id, "--backend", "none", "--", "true"])
        .fails(1)
        .stderr_has("only the sandbox can deliver");
    env.run(["vault", "rm", "default", "file:.config/tool/key"])
        .ok();
    let run = env
        .run([
            "run",
            "-q",
            &id,
            "--backend",
            "none",
            "--",
            "sh",
            "-c",
            "echo $API_TOKEN",
        ])
        .ok();
    assert_eq!(run.stdout.trim(), secrets.token);
}

#[test]
fn a_loop_without_a_vault_runs_without_one() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "plain");
    env.run(["run", &id, "--net", "none", "--", "true"])
        .ok()
        .stderr_has("· no vault ·");
}

/// Regular files below `dir` (links not followed) whose first MiB holds `needle`.
fn files_containing(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() && meta.len() <= 1 << 20 {
                if let Ok(bytes) = fs::read(e.path()) {
                    if bytes.windows(needle.len()).any(|w| w == needle) {
                        hits.push(e.path());
                    }
                }
            }
        }
    }
    hits
}
