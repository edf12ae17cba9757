//! Vaults: round trips, several recipients (ssh keys too), rekey, the pre-commit secret
//! guard, the diff textconv, and every bad input of issue 4, each with a one-line error,
//! a hint, its exit code and nothing written.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{Run, TestEnv, BIN};

fn personal(env: &TestEnv) -> PathBuf {
    env.ws.join("personal/tester")
}

/// The vaults' repository of the test's user: outside the personal tree, a repository
/// of its own.
fn vaults(env: &TestEnv) -> PathBuf {
    env.ws.join("vaults/tester")
}

fn vault_dir(env: &TestEnv, vault: &str) -> PathBuf {
    vaults(env).join(vault)
}

fn identity(env: &TestEnv) -> PathBuf {
    env.home.join(".config/git-loop/identity.txt")
}

/// PATH with our binary first: git runs the hook and the textconv as `git-loop …`.
fn path_with_bin() -> OsString {
    let dir = Path::new(BIN).parent().unwrap();
    let mut path = OsString::from(dir);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

fn output(mut cmd: Command, stdin: Option<&[u8]>) -> Run {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start");
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `git loop ARGS` with `stdin` and extra variables.
fn run_with(env: &TestEnv, args: &[&str], stdin: Option<&[u8]>, vars: &[(&str, &Path)]) -> Run {
    let mut cmd = env.command();
    cmd.current_dir(&env.root).args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    output(cmd, stdin)
}

fn set_env(env: &TestEnv, vault: &str, name: &str, value: &str) -> Run {
    run_with(
        env,
        &["vault", "set", vault, "env", name],
        Some(value.as_bytes()),
        &[],
    )
}

/// `git loop vault get` as the identity at `id` (None: the default one).
fn get_env(env: &TestEnv, vault: &str, name: &str, id: Option<&Path>) -> Run {
    let vars: Vec<(&str, &Path)> = id.map(|p| ("GIT_LOOP_IDENTITY", p)).into_iter().collect();
    run_with(env, &["vault", "get", vault, "env", name], None, &vars)
}

/// `git ARGS` in `dir` with our binary on PATH.
fn git(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new("git");
    cmd.env_clear()
        .envs(env.envs())
        .env("PATH", path_with_bin())
        .current_dir(dir)
        .args(args);
    output(cmd, None)
}

/// Every path below `dir` with its content (a link: its target), for "nothing written".
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        let rel = p.strip_prefix(dir).unwrap().display().to_string();
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&p).unwrap();
            out.push((rel, target.as_os_str().as_encoded_bytes().to_vec()));
        } else if meta.is_dir() {
            out.push((format!("{rel}/"), Vec::new()));
            for e in fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        } else {
            out.push((rel, fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

/// A workspace with the default vault, one variable in it, and the recipient.
fn with_vault(env: &TestEnv) -> String {
    let recipient = env.run(["vault", "init"]).ok().stdout.trim().to_string();
    set_env(env, "default", "GITHUB_TOKEN", "ghp_value_1\n").ok();
    recipient
}

fn ssh_key(env: &TestEnv, kind: &str, name: &str) -> PathBuf {
    let key = env.root.join(name);
    let mut args = vec!["-q", "-t", kind, "-N", "", "-C", "member@test", "-f"];
    if kind == "rsa" {
        args.splice(0..0, ["-b", "2048"]);
    }
    let status = Command::new("ssh-keygen")
        .args(&args)
        .arg(&key)
        .status()
        .expect("ssh-keygen is needed (openssh-client; .ci/run installs it)");
    assert!(status.success());
    key
}

#[test]
fn round_trip_env_and_file() {
    let env = TestEnv::new();
    let init = env.run(["vault", "init"]).ok();
    let recipient = init.stdout.trim();
    assert!(recipient.starts_with("age1"), "{}", init.stdout);
    init.stderr_has("created your identity");
    let id = identity(&env);
    assert_eq!(
        fs::metadata(&id).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(fs::read_to_string(&id)
        .unwrap()
        .contains("AGE-SECRET-KEY-1"));
    let recipients = fs::read_to_string(vault_dir(&env, "default").join("recipients.txt")).unwrap();
    assert!(recipients.contains(recipient));

    set_env(&env, "default", "GITHUB_TOKEN", "ghp_value_1\n")
        .ok()
        .stderr_has("stored env:GITHUB_TOKEN in vault 'default'");
    let sealed = fs::read(vault_dir(&env, "default").join("envs/GITHUB_TOKEN.age")).unwrap();
    assert!(sealed.starts_with(b"age-encryption.org/v1\n"));
    assert!(!String::from_utf8_lossy(&sealed).contains("ghp_value_1"));
    assert_eq!(
        get_env(&env, "default", "GITHUB_TOKEN", None).ok().stdout,
        "ghp_value_1\n"
    );

    let file = env.root.join("hosts.yml");
    fs::write(&file, "github.com:\n  oauth_token: gho_x\n").unwrap();
    env.run(["vault", "set", "default", "file", ".config/gh/hosts.yml"])
        .fails(2)
        .stderr_has("needs the PATH");
    env.run([
        "vault",
        "set",
        "default",
        "file",
        ".config/gh/hosts.yml",
        file.to_str().unwrap(),
    ])
    .ok();
    assert!(vault_dir(&env, "default")
        .join("mounts/home/.config/gh/hosts.yml.age")
        .is_file());
    env.run(["vault", "get", "default", "file", ".config/gh/hosts.yml"])
        .ok()
        .stdout_has("oauth_token: gho_x");

    let list = env.run(["vault", "list"]).ok();
    list.stdout_has("default")
        .stdout_has(recipient)
        .stdout_has("GITHUB_TOKEN")
        .stdout_has(".config/gh/hosts.yml");
    assert!(!list.stdout.contains("ghp_value_1") && !list.stdout.contains("gho_x"));
    let json = env.run(["vault", "list", "--json"]).ok();
    assert!(!json.stdout.contains("ghp_value_1"));
    let json = json.json();
    assert_eq!(json[0]["name"], "default");
    assert_eq!(json[0]["recipients"][0], recipient);
    assert_eq!(json[0]["entries"][0]["kind"], "env");
    assert_eq!(json[0]["entries"][0]["name"], "GITHUB_TOKEN");
    assert_eq!(json[0]["entries"][1]["kind"], "file");
    assert_eq!(json[0]["entries"][1]["name"], ".config/gh/hosts.yml");

    // A new value replaces the old; `rm` takes env:/file: or a bare name.
    set_env(&env, "default", "GITHUB_TOKEN", "ghp_value_2").ok();
    assert_eq!(
        get_env(&env, "default", "GITHUB_TOKEN", None).ok().stdout,
        "ghp_value_2\n"
    );
    env.run(["vault", "rm", "default", "file:.config/gh/hosts.yml"])
        .ok();
    assert!(!vault_dir(&env, "default")
        .join("mounts/home/.config")
        .exists());
    env.run(["vault", "rm", "default", "GITHUB_TOKEN"]).ok();
    get_env(&env, "default", "GITHUB_TOKEN", None)
        .fails(1)
        .stderr_has("has no entry env:GITHUB_TOKEN");

    // `init` again changes nothing; another vault gets the same recipient.
    let before = snapshot(&personal(&env));
    env.run(["vault", "init"]).ok();
    assert_eq!(snapshot(&personal(&env)), before);
    assert_eq!(
        env.run(["vault", "init", "work"]).ok().stdout.trim(),
        recipient
    );
    assert!(vault_dir(&env, "work").join("recipients.txt").is_file());
}

#[test]
fn the_first_set_creates_the_identity_and_the_default_vault() {
    let env = TestEnv::new();
    set_env(&env, "default", "TOKEN", "v")
        .ok()
        .stderr_has("created vault 'default'");
    assert!(identity(&env).is_file());
    assert_eq!(get_env(&env, "default", "TOKEN", None).ok().stdout, "v\n");
    // Any other vault is made on purpose.
    set_env(&env, "work", "TOKEN", "v")
        .fails(1)
        .stderr_has("vault 'work' does not exist")
        .stderr_has("git loop vault init work");
    assert!(!vault_dir(&env, "work").exists());
}

#[test]
fn several_recipients_including_ssh_keys() {
    let env = TestEnv::new();
    with_vault(&env);
    let ed = ssh_key(&env, "ed25519", "id_ed25519");
    let rsa = ssh_key(&env, "rsa", "id_rsa");
    // Not yet a recipient.
    get_env(&env, "default", "GITHUB_TOKEN", Some(&ed))
        .fails(1)
        .stderr_has("is not a recipient of env:GITHUB_TOKEN in vault 'default'");
    // A .pub file, and a key given as its words.
    env.run([
        "vault",
        "recipients",
        "default",
        "add",
        ed.with_extension("pub").to_str().unwrap(),
    ])
    .ok()
    .stderr_has("git loop vault rekey default");
    let rsa_pub = fs::read_to_string(rsa.with_extension("pub")).unwrap();
    let mut args = vec!["vault", "recipients", "default", "add"];
    args.extend(rsa_pub.split_whitespace());
    env.run(&args).ok();
    env.run(&args).ok().stderr_has("already");
    let list = env.run(["vault", "recipients", "default", "list"]).ok();
    assert_eq!(list.stdout.lines().count(), 3, "{}", list.stdout);
    list.stdout_has("ssh-ed25519 ").stdout_has("ssh-rsa ");

    // Listed but encrypted before: the hint says rekey.
    get_env(&env, "default", "GITHUB_TOKEN", Some(&ed))
        .fails(1)
        .stderr_has("rekey default");
    env.run(["vault", "rekey", "default"])
        .ok()
        .stderr_has("re-encrypted 1 entry of vault 'default' to the 3 recipients you accepted");
    for id in [None, Some(ed.as_path()), Some(rsa.as_path())] {
        assert_eq!(
            get_env(&env, "default", "GITHUB_TOKEN", id).ok().stdout,
            "ghp_value_1\n",
            "{id:?}"
        );
    }

    // An ssh key is an identity of its own: a vault made with it is encrypted to it.
    let ed_env: &[(&str, &Path)] = &[("GIT_LOOP_IDENTITY", &ed)];
    let init = run_with(&env, &["vault", "init", "ssh-only"], None, ed_env).ok();
    let public = fs::read_to_string(ed.with_extension("pub")).unwrap();
    assert!(
        public.starts_with(init.stdout.trim()),
        "{} vs {public}",
        init.stdout
    );
    run_with(
        &env,
        &["vault", "set", "ssh-only", "env", "K"],
        Some(b"kv"),
        ed_env,
    )
    .ok();
    assert_eq!(
        get_env(&env, "ssh-only", "K", Some(&ed)).ok().stdout,
        "kv\n"
    );
    get_env(&env, "ssh-only", "K", None)
        .fails(1)
        .stderr_has("vault 'ssh-only'");
}

#[test]
fn rekey_after_removing_a_recipient() {
    let env = TestEnv::new();
    let alice = with_vault(&env);
    set_env(&env, "default", "AWS_SECRET_ACCESS_KEY", "aws-secret").ok();
    let bob_id = env.root.join("bob.txt");
    let bob_env: &[(&str, &Path)] = &[("GIT_LOOP_IDENTITY", &bob_id)];
    let bob = run_with(&env, &["vault", "init", "bobs"], None, bob_env)
        .ok()
        .stdout
        .trim()
        .to_string();
    assert_ne!(alice, bob);
    env.run(["vault", "recipients", "default", "add", &bob])
        .ok();
    env.run(["vault", "rekey", "default"]).ok();
    assert_eq!(
        get_env(&env, "default", "AWS_SECRET_ACCESS_KEY", Some(&bob_id))
            .ok()
            .stdout,
        "aws-secret\n"
    );

    env.run(["vault", "recipients", "default", "rm", &bob])
        .ok()
        .stderr_has("until `git loop vault rekey default`");
    env.run(["vault", "rekey", "default"]).ok();
    for name in ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"] {
        get_env(&env, "default", name, Some(&bob_id))
            .fails(1)
            .stderr_has("vault 'default'")
            .stderr_has(&format!("recipients default add {bob}"))
            .stderr_has("rekey default");
        get_env(&env, "default", name, None).ok();
    }
    // The last recipient is never removed.
    env.run(["vault", "recipients", "default", "rm", &alice])
        .fails(1)
        .stderr_has("last recipient");
    env.run(["vault", "recipients", "default", "rm", &bob])
        .fails(1)
        .stderr_has("is not a recipient");
}

#[test]
fn the_hook_refuses_plaintext_and_keys_and_keeps_the_users_hook() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let repo = personal(&env);
    let hooks = repo.join(".git/hooks");
    fs::create_dir_all(&hooks).unwrap();
    let mine = "#!/bin/sh\necho user-hook-ran >> \"$(git rev-parse --git-dir)/user-hook.log\"\n";
    fs::write(hooks.join("pre-commit"), mine).unwrap();
    fs::set_permissions(hooks.join("pre-commit"), fs::Permissions::from_mode(0o755)).unwrap();

    with_vault(&env);
    let hook = fs::read_to_string(hooks.join("pre-commit")).unwrap();
    assert!(hook.contains("# >>> git-loop >>>") && hook.contains("# <<< git-loop <<<"));
    assert!(hook.contains("git-loop hook pre-commit"));
    assert!(hook.contains("user-hook-ran"), "{hook}");
    env.run(["vault", "init"]).ok();
    assert_eq!(fs::read_to_string(hooks.join("pre-commit")).unwrap(), hook);

    // Vaults live in their own repository now, but the personal repository's guard still
    // knows the old layout: an age file there commits; the user's hook ran too.
    let old_layout = repo.join(".loopat/vaults/default/envs");
    fs::create_dir_all(&old_layout).unwrap();
    fs::copy(
        vault_dir(&env, "default").join("envs/GITHUB_TOKEN.age"),
        old_layout.join("GITHUB_TOKEN.age"),
    )
    .unwrap();
    git(&env, &repo, &["add", "-A"]);
    git(&env, &repo, &["commit", "-q", "-m", "vault"]).ok();
    assert!(repo.join(".git/user-hook.log").is_file());

    // Plaintext under the vaults.
    let plain = old_layout.join("LEAKED.age");
    fs::write(&plain, "hunter2\n").unwrap();
    git(&env, &repo, &["add", "-A"]);
    let refused = git(&env, &repo, &["commit", "-q", "-m", "oops"]);
    assert_ne!(refused.code, 0);
    refused
        .stderr_has(".loopat/vaults/default/envs/LEAKED.age")
        .stderr_has("not an age file")
        .stderr_has("secret guard");
    assert!(!refused.stderr.contains("hunter2"));
    git(
        &env,
        &repo,
        &[
            "rm",
            "-q",
            "--cached",
            ".loopat/vaults/default/envs/LEAKED.age",
        ],
    )
    .ok();
    fs::remove_file(&plain).unwrap();

    // A private key anywhere, also in a partial commit (`git commit PATH`).
    let key = repo.join("memory/deploy-key.md");
    fs::write(
        &key,
        "notes\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    git(&env, &repo, &["add", "memory/deploy-key.md"]);
    git(&env, &repo, &["commit", "-q", "-m", "key"])
        .stderr_has("memory/deploy-key.md:2: a private key");
    let token = format!("token: ghp_{}\n", "A1b2".repeat(9));
    fs::write(&key, &token).unwrap();
    let partial = git(
        &env,
        &repo,
        &["commit", "-q", "-m", "key", "memory/deploy-key.md"],
    );
    assert_ne!(partial.code, 0);
    partial.stderr_has("a GitHub token");
    assert!(!partial.stderr.contains(&token.trim()[7..]));
    assert_eq!(
        git(&env, &repo, &["log", "--format=%s"])
            .stdout
            .lines()
            .next(),
        Some("vault")
    );
}

/// Issue 27 item 2: the vaults' repository has the secret guard too. A commit made there
/// by hand is checked as git-loop checks its own: every file below a vault's folder an age
/// file (or its recipients), nothing that looks like a key anywhere, the top included, no
/// link. A repository an earlier version made gets the guard at the next vault command.
#[test]
fn the_vaults_repository_has_the_secret_guard() {
    let env = TestEnv::new();
    with_vault(&env);
    let repo = vaults(&env);
    let hook = repo.join(".git/hooks/pre-commit");
    assert!(fs::read_to_string(&hook)
        .unwrap()
        .contains("git-loop hook pre-commit"));
    let plain = vault_dir(&env, "default").join("envs/PLAIN.age");
    fs::write(&plain, "hunter2\n").unwrap();
    git(&env, &repo, &["add", "default/envs/PLAIN.age"]).ok();
    let refused = git(&env, &repo, &["commit", "-q", "-m", "plain"]);
    assert_ne!(refused.code, 0);
    refused
        .stderr_has("default/envs/PLAIN.age")
        .stderr_has("not an age file");
    git(
        &env,
        &repo,
        &["rm", "-q", "--cached", "default/envs/PLAIN.age"],
    )
    .ok();
    fs::remove_file(&plain).unwrap();
    fs::copy(identity(&env), repo.join("identity.txt")).unwrap();
    git(&env, &repo, &["add", "identity.txt"]).ok();
    let refused = git(&env, &repo, &["commit", "-q", "-m", "key"]);
    assert_ne!(refused.code, 0);
    refused
        .stderr_has("identity.txt")
        .stderr_has("secret guard");
    git(&env, &repo, &["rm", "-q", "--cached", "identity.txt"]).ok();
    fs::remove_file(repo.join("identity.txt")).unwrap();
    symlink(identity(&env), repo.join("default/envs/LINK.age")).unwrap();
    git(&env, &repo, &["add", "default/envs/LINK.age"]).ok();
    git(&env, &repo, &["commit", "-q", "-m", "link"]).stderr_has("a link or a nested repository");
    git(
        &env,
        &repo,
        &["rm", "-q", "--cached", "default/envs/LINK.age"],
    )
    .ok();
    fs::remove_file(repo.join("default/envs/LINK.age")).unwrap();
    // Twin: an age file commits.
    fs::copy(
        vault_dir(&env, "default").join("envs/GITHUB_TOKEN.age"),
        vault_dir(&env, "default").join("envs/COPY.age"),
    )
    .unwrap();
    git(&env, &repo, &["add", "default/envs/COPY.age"]).ok();
    git(&env, &repo, &["commit", "-q", "-m", "an age file"]).ok();

    // An earlier version's repository: no guard, no role. The next vault command puts
    // them there.
    fs::remove_file(&hook).unwrap();
    git(&env, &repo, &["config", "--unset", "loop.role"]).ok();
    env.run(["vault", "list"]).ok();
    assert!(hook.is_file());
    assert_eq!(
        git(&env, &repo, &["config", "--get", "loop.role"])
            .ok()
            .stdout,
        "vaults\n"
    );
}

/// Issue 27 item 2: a vault command commits exactly the entry paths it wrote, never what
/// else lies in the repository (`git add --all` once committed an identity moved there).
#[test]
fn a_vault_commit_stages_only_what_it_wrote() {
    let env = TestEnv::new();
    with_vault(&env);
    let repo = vaults(&env);
    fs::copy(identity(&env), repo.join("identity.txt")).unwrap();
    fs::write(
        vault_dir(&env, "default").join("envs/STRAY.age"),
        "not git loop's",
    )
    .unwrap();
    set_env(&env, "default", "MINE", "mine").ok();
    let last = git(&env, &repo, &["show", "--name-only", "--format=", "HEAD"])
        .ok()
        .stdout;
    assert_eq!(last, "default/envs/MINE.age\n");
    let tracked = git(&env, &repo, &["ls-files"]).ok().stdout;
    assert!(
        !tracked.contains("identity.txt") && !tracked.contains("STRAY"),
        "{tracked}"
    );
    let history = git(
        &env,
        &repo,
        &["log", "-p", "--all", "--text", "--no-textconv"],
    )
    .ok()
    .stdout;
    assert!(!history.contains("AGE-SECRET-KEY-"));
}

#[test]
fn the_hook_goes_where_core_hooks_path_says() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let repo = personal(&env);
    git(&env, &repo, &["config", "core.hooksPath", ".githooks"]).ok();
    env.run(["vault", "init"]).ok();
    assert!(repo.join(".githooks/pre-commit").is_file());
    assert!(!repo.join(".git/hooks/pre-commit").exists());
}

#[test]
fn a_hook_in_another_language_is_left_alone_with_a_warning() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let hooks = personal(&env).join(".git/hooks");
    fs::create_dir_all(&hooks).unwrap();
    fs::write(
        hooks.join("pre-commit"),
        "#!/usr/bin/env python3\nprint('hi')\n",
    )
    .unwrap();
    env.run(["vault", "init"])
        .ok()
        .stderr_has("secret guard is not installed")
        .stderr_has("hint:");
    assert_eq!(
        fs::read_to_string(hooks.join("pre-commit")).unwrap(),
        "#!/usr/bin/env python3\nprint('hi')\n"
    );
}

#[test]
fn git_diff_shows_sizes_never_values() {
    let env = TestEnv::new();
    with_vault(&env);
    let repo = vaults(&env);
    assert!(fs::read_to_string(repo.join(".gitattributes"))
        .unwrap()
        .contains("*/envs/** diff=git-loop-vault"));
    assert_eq!(
        git(&env, &repo, &["config", "diff.git-loop-vault.textconv"])
            .stdout
            .trim(),
        "git-loop hook textconv-vault"
    );
    // Every change is a commit of the vaults' repository, shown as sizes.
    set_env(&env, "default", "GITHUB_TOKEN", "ghp_value_changed").ok();
    assert_eq!(
        git(&env, &repo, &["status", "--porcelain"]).stdout,
        "",
        "the change was not committed"
    );
    let diff = git(&env, &repo, &["diff", "HEAD~1"]).ok();
    // It lacked the entry once, under load, and the output then said nothing more: should
    // it again, the vaults' history says which commit holds the change.
    if !diff.stdout.contains("envs/GITHUB_TOKEN.age") {
        let log = git(&env, &repo, &["log", "--stat", "--format=%h %s"]).stdout;
        panic!(
            "`git diff HEAD~1` lacks the entry:\n{}\nthe vaults' history:\n{log}",
            diff.stdout
        );
    }
    diff.stdout_has("envs/GITHUB_TOKEN.age")
        .stdout_has("-age-encrypted entry, ")
        .stdout_has("+age-encrypted entry, ")
        .stdout_has("1 recipient");
    assert!(!diff.stdout.contains("ghp_value"), "{}", diff.stdout);
    let show = git(&env, &repo, &["log", "-p", "-1"]).ok();
    assert!(!show.stdout.contains("ghp_value"), "{}", show.stdout);

    // The textconv on its own.
    let sealed = vault_dir(&env, "default").join("envs/GITHUB_TOKEN.age");
    let size = fs::metadata(&sealed).unwrap().len();
    env.run(["hook", "textconv-vault", sealed.to_str().unwrap()])
        .ok()
        .stdout_has(&format!("age-encrypted entry, {size} bytes, 1 recipient"));
    let plain = env.root.join("plain");
    fs::write(&plain, "hunter2").unwrap();
    let run = env
        .run(["hook", "textconv-vault", plain.to_str().unwrap()])
        .ok();
    run.stdout_has("NOT an age file: 7 bytes");
    assert!(!run.stdout.contains("hunter2"));
}

#[test]
fn get_refuses_a_terminal_without_force() {
    let env = TestEnv::new();
    with_vault(&env);
    // `script` gives the command a terminal as stdout.
    let script = |extra: &str| {
        let mut cmd = Command::new("script");
        cmd.env_clear()
            .envs(env.envs())
            .current_dir(&env.root)
            .args([
                "-qec",
                &format!("{BIN} vault get default env GITHUB_TOKEN {extra}"),
                "/dev/null",
            ]);
        output(cmd, None)
    };
    let refused = script("");
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused
        .stdout
        .contains("refusing to print a secret on a terminal"));
    assert!(refused.stdout.contains("hint:"));
    assert!(!refused.stdout.contains("ghp_value_1"));
    let forced = script("--force");
    assert_eq!(forced.code, 0, "{forced:?}");
    assert!(forced.stdout.contains("ghp_value_1"));
}

#[test]
fn edit_uses_a_private_tmpfs_copy_and_leaves_nothing() {
    let env = TestEnv::new();
    with_vault(&env);
    let log = env.root.join("editor.log");
    let editor = env.root.join("editor.sh");
    fs::write(
        &editor,
        format!(
            "#!/bin/sh\nset -e\necho \"$1\" > {log}\nstat -c %a \"$(dirname \"$1\")\" >> {log}\ncat \"$1\" >> {log}\nprintf 'ghp_edited\\n' > \"$1\"\n",
            log = log.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&editor, fs::Permissions::from_mode(0o755)).unwrap();
    let ed: &[(&str, &Path)] = &[("EDITOR", &editor)];
    run_with(
        &env,
        &["vault", "edit", "default", "GITHUB_TOKEN"],
        None,
        ed,
    )
    .ok()
    .stderr_has("saved env:GITHUB_TOKEN");
    let seen = fs::read_to_string(&log).unwrap();
    let mut lines = seen.lines();
    let copy = PathBuf::from(lines.next().unwrap());
    assert_eq!(lines.next(), Some("700"));
    assert_eq!(
        lines.next(),
        Some("ghp_value_1"),
        "the editor saw the value"
    );
    assert!(
        !copy.exists() && !copy.parent().unwrap().exists(),
        "{copy:?} left behind"
    );
    let fs_type = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(copy.parent().unwrap().parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&fs_type.stdout).trim(), "tmpfs");
    assert_eq!(
        get_env(&env, "default", "GITHUB_TOKEN", None).ok().stdout,
        "ghp_edited\n"
    );

    // A new file entry by its prefix; an editor that fails changes nothing.
    run_with(&env, &["vault", "edit", "default", "file:.netrc"], None, ed).ok();
    env.run(["vault", "get", "default", "file", ".netrc"])
        .ok()
        .stdout_has("ghp_edited");
    let before = snapshot(&vault_dir(&env, "default"));
    let fail: &[(&str, &Path)] = &[("EDITOR", Path::new("false"))];
    run_with(
        &env,
        &["vault", "edit", "default", "GITHUB_TOKEN"],
        None,
        fail,
    )
    .fails(1)
    .stderr_has("nothing was changed");
    assert_eq!(snapshot(&vault_dir(&env, "default")), before);
}

/// Runs `args`, expects exit `code` with `needle`, and checks the vaults are untouched.
#[track_caller]
fn refused(env: &TestEnv, args: &[&str], code: i32, needle: &str) -> Run {
    let before = snapshot(&vaults(env));
    let run = env.run(args);
    let run = run.fails(code);
    run.stderr_has(needle);
    assert_eq!(
        snapshot(&vaults(env)),
        before,
        "{args:?} wrote to the vaults"
    );
    run
}

#[test]
fn bad_names_are_usage_errors() {
    let env = TestEnv::new();
    with_vault(&env);
    // A NUL cannot travel in argv; names::tests covers it.
    for (vault, why) in [
        ("a/b", "contains '/'"),
        ("..", "contains '..'"),
        ("", "it is empty"),
        (".hidden", "starts with '.'"),
        ("a_b", "only letters, digits and '-'"),
    ] {
        refused(&env, &["vault", "set", vault, "env", "X"], 2, why);
        refused(&env, &["vault", "init", vault], 2, why);
        refused(&env, &["vault", "get", vault, "env", "X"], 2, why);
        refused(&env, &["vault", "rekey", vault], 2, why);
    }
    for (name, why) in [
        ("1BAD", "starts with a digit"),
        ("A-B", "only letters, digits and '_'"),
        ("A/B", "contains '/'"),
        ("", "it is empty"),
        ("..", "contains '..'"),
    ] {
        refused(&env, &["vault", "set", "default", "env", name], 2, why)
            .stderr_has("variable name");
        refused(
            &env,
            &["vault", "rm", "default", &format!("env:{name}")],
            2,
            why,
        );
    }
    let file = env.root.join("f");
    fs::write(&file, "x").unwrap();
    let f = file.to_str().unwrap();
    for (rel, why) in [
        ("../x", "contains '..'"),
        ("a/../../x", "contains '..'"),
        ("/etc/passwd", "absolute"),
        ("a//b", "empty component"),
        ("", "it is empty"),
    ] {
        refused(&env, &["vault", "set", "default", "file", rel, f], 2, why)
            .stderr_has("file entry");
    }
    refused(
        &env,
        &["vault", "set", "default", "env", "X", f],
        2,
        "from stdin",
    );
}

#[test]
fn bad_values_are_refused_before_writing() {
    let env = TestEnv::new();
    with_vault(&env);
    let big = env.root.join("big");
    fs::write(&big, vec![b'x'; 1024 * 1024 + 1]).unwrap();
    refused(
        &env,
        &[
            "vault",
            "set",
            "default",
            "file",
            ".big",
            big.to_str().unwrap(),
        ],
        2,
        "larger than 1048576 bytes",
    );
    let exact = env.root.join("exact");
    fs::write(&exact, vec![b'x'; 1024 * 1024]).unwrap();
    env.run([
        "vault",
        "set",
        "default",
        "file",
        ".exact",
        exact.to_str().unwrap(),
    ])
    .ok();
    // Stdin is empty in `refused`.
    refused(
        &env,
        &["vault", "set", "default", "env", "EMPTY"],
        2,
        "no value",
    );
    let before = snapshot(&vault_dir(&env, "default"));
    set_env(&env, "default", "NUL", "a\0b")
        .fails(2)
        .stderr_has("NUL");
    assert_eq!(snapshot(&vault_dir(&env, "default")), before);
    refused(
        &env,
        &["vault", "set", "default", "file", ".x", "/nonexistent/file"],
        2,
        "cannot read /nonexistent/file",
    );
}

#[test]
fn missing_and_unreadable_identities() {
    let env = TestEnv::new();
    with_vault(&env);
    let id = identity(&env);
    let saved = fs::read(&id).unwrap();

    fs::remove_file(&id).unwrap();
    refused(
        &env,
        &["vault", "get", "default", "env", "GITHUB_TOKEN"],
        1,
        "no identity at",
    )
    .stderr_has(&id.display().to_string())
    .stderr_has("GIT_LOOP_IDENTITY");
    refused(&env, &["vault", "rekey", "default"], 1, "no identity at");
    assert!(
        !id.exists(),
        "a decrypting command never creates an identity"
    );

    fs::create_dir(&id).unwrap();
    refused(
        &env,
        &["vault", "get", "default", "env", "GITHUB_TOKEN"],
        1,
        "cannot read the identity",
    );
    fs::remove_dir(&id).unwrap();

    fs::write(&id, "AGE-SECRET-KEY-1THISISNOTAKEY\n").unwrap();
    let run = refused(
        &env,
        &["vault", "rekey", "default"],
        1,
        "is not a usable age or ssh identity",
    );
    assert!(!run.stderr.contains("THISISNOTAKEY"));

    fs::write(&id, &saved).unwrap();
    // Never inside the workspace, where a sandbox or a commit could reach it.
    let inside = personal(&env).join("identity.txt");
    let vars: &[(&str, &Path)] = &[("GIT_LOOP_IDENTITY", &inside)];
    let before = snapshot(&personal(&env));
    run_with(&env, &["vault", "init", "other"], None, vars)
        .fails(1)
        .stderr_has("is inside the workspace");
    run_with(
        &env,
        &["vault", "get", "default", "env", "GITHUB_TOKEN"],
        None,
        vars,
    )
    .fails(1)
    .stderr_has("is inside the workspace");
    assert_eq!(snapshot(&personal(&env)), before);

    fs::set_permissions(&id, fs::Permissions::from_mode(0o644)).unwrap();
    get_env(&env, "default", "GITHUB_TOKEN", None)
        .ok()
        .stderr_has("can be read by others");
}

#[test]
fn an_identity_that_is_not_a_recipient() {
    let env = TestEnv::new();
    with_vault(&env);
    let stranger = env.root.join("stranger.txt");
    run_with(
        &env,
        &["vault", "init", "theirs"],
        None,
        &[("GIT_LOOP_IDENTITY", &stranger)],
    )
    .ok();
    let before = snapshot(&vaults(&env));
    let as_stranger: &[(&str, &Path)] = &[("GIT_LOOP_IDENTITY", &stranger)];
    for args in [
        &["vault", "get", "default", "env", "GITHUB_TOKEN"][..],
        &["vault", "rekey", "default"][..],
    ] {
        run_with(&env, args, None, as_stranger)
            .fails(1)
            .stderr_has("is not a recipient of env:GITHUB_TOKEN in vault 'default'")
            .stderr_has("git loop vault recipients default add age1")
            .stderr_has("git loop vault rekey default");
    }
    assert_eq!(snapshot(&vaults(&env)), before);
}

#[test]
fn a_corrupt_entry() {
    let env = TestEnv::new();
    with_vault(&env);
    set_env(&env, "default", "OTHER", "other").ok();
    let path = vault_dir(&env, "default").join("envs/GITHUB_TOKEN.age");
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    fs::write(&path, &bytes).unwrap();
    refused(
        &env,
        &["vault", "get", "default", "env", "GITHUB_TOKEN"],
        1,
        "cannot decrypt env:GITHUB_TOKEN of vault 'default'",
    )
    .stderr_has("it is damaged")
    .stderr_has("restore it from git history");
    // Rekey decrypts everything before it writes anything.
    refused(
        &env,
        &["vault", "rekey", "default"],
        1,
        "cannot decrypt env:GITHUB_TOKEN",
    );
    fs::write(&path, "not age at all").unwrap();
    refused(
        &env,
        &["vault", "get", "default", "env", "GITHUB_TOKEN"],
        1,
        "not an age file",
    );
    // A foreign file in the vault is named and skipped; the rest is listed.
    fs::write(vault_dir(&env, "default").join("envs/1BAD.age"), "x").unwrap();
    env.run(["vault", "list"])
        .ok()
        .stdout_has("OTHER")
        .stderr_has("skipped")
        .stderr_has("envs/1BAD.age")
        .stderr_has("variable name '1BAD' is not valid");
}

/// Links in the vaults are never followed (DESIGN 4.0: what is there may have arrived by
/// sync): a link where an entry, a folder of entries or a vault goes is named and skipped,
/// whether it points at another vault's entry, back at itself, or out of the vaults; the
/// vault's own entries and the other vaults keep working.
#[test]
fn vault_symlinks_are_named_and_skipped_never_followed() {
    let env = TestEnv::new();
    with_vault(&env);
    env.run(["vault", "init", "work"]).ok();
    set_env(&env, "work", "OWN", "own-value").ok();
    let envs = vault_dir(&env, "work").join("envs");
    // A link to another vault's entry, a loop, a link out of the vaults.
    symlink(
        "../../default/envs/GITHUB_TOKEN.age",
        envs.join("GITHUB_TOKEN.age"),
    )
    .unwrap();
    symlink("B.age", envs.join("A.age")).unwrap();
    symlink("A.age", envs.join("B.age")).unwrap();
    let other = env.ws.join("vaults/mallory/x/envs");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("T.age"), "x").unwrap();
    symlink(other.join("T.age"), envs.join("T.age")).unwrap();
    let home = vault_dir(&env, "work").join("mounts/home");
    fs::create_dir_all(&home).unwrap();
    symlink("/etc", home.join(".ssh")).unwrap();
    // A vault's folder that is a link.
    symlink("default", vaults(&env).join("alias")).unwrap();

    let list = env.run(["vault", "list"]).ok();
    list.stdout_has("OWN").stdout_has("GITHUB_TOKEN");
    for link in [
        envs.join("GITHUB_TOKEN.age"),
        envs.join("A.age"),
        envs.join("B.age"),
        envs.join("T.age"),
        home.join(".ssh"),
        vaults(&env).join("alias"),
    ] {
        list.stderr_has(&format!("{}: it is a symlink", link.display()));
    }
    refused(
        &env,
        &["vault", "get", "work", "env", "GITHUB_TOKEN"],
        1,
        "it is a symlink",
    );
    assert_eq!(
        get_env(&env, "work", "OWN", None).ok().stdout,
        "own-value\n"
    );
    refused(&env, &["vault", "list", "alias"], 1, "it is a symlink");
    // Rekey leaves the links as they are and says so.
    env.run(["vault", "rekey", "work"])
        .ok()
        .stderr_has("re-encrypted 1 entry")
        .stderr_has("left as it is");
    // `vault set` replaces a link with a file of its own, writing nothing through it.
    set_env(&env, "work", "T", "replaced")
        .ok()
        .stderr_has("replaced the link");
    assert_eq!(fs::read(other.join("T.age")).unwrap(), b"x");
    assert!(fs::symlink_metadata(envs.join("T.age")).unwrap().is_file());
}

#[test]
fn unknown_vaults_entries_and_recipients() {
    let env = TestEnv::new();
    with_vault(&env);
    refused(
        &env,
        &["vault", "get", "nope", "env", "X"],
        1,
        "vault 'nope' does not exist",
    )
    .stderr_has("git loop vault init nope");
    refused(
        &env,
        &["vault", "rm", "default", "env:NOPE"],
        1,
        "has no entry env:NOPE",
    );
    let secret = format!("AGE-SECRET-KEY-1{}", "Q".repeat(58));
    let run = refused(
        &env,
        &["vault", "recipients", "default", "add", &secret],
        2,
        "that is a secret key",
    );
    assert!(!run.stderr.contains(&secret[16..]));
    refused(
        &env,
        &["vault", "recipients", "default", "add", "hello"],
        2,
        "not a valid recipient",
    );
    refused(
        &env,
        &["vault", "recipients", "default", "add"],
        2,
        "it is empty",
    );
    refused(
        &env,
        &[
            "vault",
            "recipients",
            "default",
            "add",
            "ssh-dss AAAAB3NzaC1kc3M=",
        ],
        2,
        "not a valid recipient",
    );
}
