//! The team boundary of the vaults (ATTACKS 41-43, DESIGN 4.0): whoever can push to the
//! personal or the vaults remote writes data into the victim's trees, never instructions.
//! Each test plays the teammate: a clone of a bare remote, a commit, a push; then the
//! victim's `git loop sync` and the commands a person runs next (`vault list`, `vault set`,
//! `run`, `doctor`), checked to have moved nothing, followed nothing and leaked nothing: an
//! age identity and an ssh key planted on the host are where they were, with the same
//! bytes, and in no remote's history. Each has its positive twin.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use git_loop::vault::{crypto, identity, recipients::Recipient, Identity};

use crate::common::{Run, TestEnv};

/// Bare remotes of the personal and the vaults repository, as a forge keeps them.
struct Remotes {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Remotes {
    fn new() -> Remotes {
        let tmp = tempfile::Builder::new()
            .prefix("git-loop-team")
            .tempdir()
            .unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        for name in ["personal", "vaults"] {
            let status = std::process::Command::new("git")
                .args(["init", "-q", "--bare", "-b", "main"])
                .arg(dir.join(format!("{name}.git")))
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .unwrap();
            assert!(status.success());
        }
        Remotes { _tmp: tmp, dir }
    }

    fn url(&self, name: &str) -> String {
        self.dir.join(format!("{name}.git")).display().to_string()
    }

    /// The teammate's clone of the remote `name` (a fresh one each time).
    fn clone(&self, env: &TestEnv, name: &str) -> PathBuf {
        let dir = self.dir.join(format!("teammate-{name}-{}", unique()));
        env.git(
            &self.dir,
            ["clone", "-q", &self.url(name), dir.to_str().unwrap()],
        );
        dir
    }

    /// The teammate commits everything in `clone` and pushes it.
    fn push(&self, env: &TestEnv, clone: &Path, message: &str) {
        env.git(clone, ["add", "-A"]);
        env.git(clone, ["commit", "-q", "--allow-empty", "-m", message]);
        env.git(clone, ["push", "-q", "origin", "HEAD:main"]);
    }

    /// Everything the remote `name` ever held, every blob of every commit as text.
    fn history(&self, env: &TestEnv, name: &str) -> String {
        env.git(
            &self.dir.join(format!("{name}.git")),
            [
                "log",
                "-p",
                "--all",
                "--text",
                "--no-textconv",
                "--no-ext-diff",
            ],
        )
    }
}

fn unique() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{nanos:x}")
}

/// What the victim keeps on the host and must never lose or push.
struct Host {
    ssh_key: PathBuf,
    ssh_bytes: Vec<u8>,
    identity: PathBuf,
    identity_bytes: Vec<u8>,
}

impl Host {
    /// An ssh key planted in the victim's `~/.ssh`, and the identity `vault init` made.
    fn plant(env: &TestEnv) -> Host {
        let ssh = env.home.join(".ssh");
        fs::create_dir_all(&ssh).unwrap();
        let ssh_key = ssh.join("id_ed25519");
        let body = format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAplanted{}\n-----END OPENSSH PRIVATE KEY-----\n",
            unique()
        );
        fs::write(&ssh_key, &body).unwrap();
        let identity = env.home.join(".config/git-loop/identity.txt");
        Host {
            ssh_bytes: body.into_bytes(),
            identity_bytes: fs::read(&identity).expect("vault init made the identity"),
            ssh_key,
            identity,
        }
    }

    /// Both are where they were, with the same bytes, and in no remote's history.
    #[track_caller]
    fn intact(&self, env: &TestEnv, remotes: &Remotes) {
        assert_eq!(
            fs::read(&self.ssh_key).unwrap(),
            self.ssh_bytes,
            "the ssh key moved"
        );
        assert_eq!(
            fs::read(&self.identity).unwrap(),
            self.identity_bytes,
            "the identity moved"
        );
        let secret_line = String::from_utf8_lossy(&self.identity_bytes)
            .lines()
            .find(|l| l.starts_with("AGE-SECRET-KEY-"))
            .unwrap()
            .to_string();
        let ssh_line = String::from_utf8_lossy(&self.ssh_bytes)
            .lines()
            .nth(1)
            .unwrap()
            .to_string();
        for name in ["personal", "vaults"] {
            let history = remotes.history(env, name);
            assert!(
                !history.contains(&secret_line),
                "the identity reached the {name} remote"
            );
            assert!(
                !history.contains(&ssh_line),
                "the ssh key reached the {name} remote"
            );
            assert!(
                !history.contains("AGE-SECRET-KEY-"),
                "a secret key reached the {name} remote"
            );
        }
    }
}

/// `git loop ARGS` with `input` on stdin.
fn with_stdin(env: &TestEnv, args: &[&str], input: &[u8]) -> Run {
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
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn set_env(env: &TestEnv, vault: &str, name: &str, value: &str) -> Run {
    with_stdin(env, &["vault", "set", vault, "env", name], value.as_bytes())
}

/// The victim: a workspace with both remotes, a default vault holding GITHUB_TOKEN,
/// synced once.
fn victim(remotes: &Remotes) -> (TestEnv, Host) {
    let env = TestEnv::new();
    env.run([
        "init",
        "--personal",
        &remotes.url("personal"),
        "--vaults",
        &remotes.url("vaults"),
    ])
    .ok();
    env.run(["vault", "init"]).ok();
    set_env(&env, "default", "GITHUB_TOKEN", "ghp_victims_own_value").ok();
    let host = Host::plant(&env);
    env.run(["sync"]).ok();
    (env, host)
}

fn identity_of(env: &TestEnv) -> Identity {
    Identity::load(&env.home.join(".config/git-loop/identity.txt")).unwrap()
}

/// Someone else's identity, made in a folder of the test's own.
fn stranger(env: &TestEnv, name: &str) -> (PathBuf, Identity) {
    let path = env.root.join(format!("{name}-identity.txt"));
    let (id, _) = identity::ensure(&path).unwrap();
    (path, id)
}

fn scratch_loop(env: &TestEnv, vault: &str) -> String {
    env.run(["new", "--scratch", "--vault", vault, "team boundary"])
        .ok()
        .stdout
        .trim()
        .to_string()
}

/// ATTACKS 41, issue 27 item 2: links (and a submodule, and a plaintext file) pushed to the
/// personal remote where the old vaults' folder was are never followed: after the
/// victim's sync, `vault list`, `vault set`, `run` and `doctor` move nothing out of
/// `~/.ssh` or the identity's folder, and nothing reaches a remote. Each is refused with
/// its path. Twins: the victim's own vault keeps working throughout, and a well-formed
/// vault folder pushed there is moved but not used until accepted.
#[test]
fn links_pushed_where_the_old_vaults_were_move_nothing() {
    let remotes = Remotes::new();
    let (env, host) = victim(&remotes);
    let me = identity_of(&env);
    let legacy = env.ws.join("personal/tester/.loopat/vaults");
    let ssh_dir = env.home.join(".ssh");
    let config_dir = env.home.join(".config/git-loop");
    let recipients = format!("{}\n", me.recipient());
    let age_file = crypto::encrypt(&[Recipient::parse(me.recipient()).unwrap()], b"x").unwrap();
    // (what the teammate plants below .loopat/, the path the refusal names, why)
    type Plant = Box<dyn Fn(&Path)>;
    let variants: Vec<(&str, Plant, PathBuf, &str)> = vec![
        (
            "the old folder is a link to ~/.ssh",
            Box::new({
                let ssh_dir = ssh_dir.clone();
                move |dot: &Path| symlink(&ssh_dir, dot.join("vaults")).unwrap()
            }),
            legacy.clone(),
            "it is a symlink",
        ),
        (
            "the old folder is a link to the identity's folder",
            Box::new({
                let config_dir = config_dir.clone();
                move |dot: &Path| symlink(&config_dir, dot.join("vaults")).unwrap()
            }),
            legacy.clone(),
            "it is a symlink",
        ),
        (
            "a vault's folder is a link to ~/.ssh",
            Box::new({
                let ssh_dir = ssh_dir.clone();
                move |dot: &Path| {
                    fs::create_dir_all(dot.join("vaults")).unwrap();
                    symlink(&ssh_dir, dot.join("vaults/work")).unwrap()
                }
            }),
            legacy.join("work"),
            "it is a symlink",
        ),
        (
            "an entry is a link to the identity",
            Box::new({
                let (identity, recipients) = (host.identity.clone(), recipients.clone());
                move |dot: &Path| {
                    let envs = dot.join("vaults/work/envs");
                    fs::create_dir_all(&envs).unwrap();
                    fs::write(dot.join("vaults/work/recipients.txt"), &recipients).unwrap();
                    symlink(&identity, envs.join("ID.age")).unwrap()
                }
            }),
            legacy.join("work/envs/ID.age"),
            "it is a symlink",
        ),
        (
            "an entry is plaintext",
            Box::new({
                let recipients = recipients.clone();
                move |dot: &Path| {
                    let envs = dot.join("vaults/work/envs");
                    fs::create_dir_all(&envs).unwrap();
                    fs::write(dot.join("vaults/work/recipients.txt"), &recipients).unwrap();
                    fs::write(envs.join("PLAIN.age"), "not encrypted").unwrap()
                }
            }),
            legacy.join("work/envs/PLAIN.age"),
            "it is not an age file",
        ),
    ];
    let id = scratch_loop(&env, "default");
    for (i, (what, plant, named, why)) in variants.iter().enumerate() {
        let clone = remotes.clone(&env, "personal");
        let _ = fs::remove_dir_all(clone.join(".loopat"));
        let dot = clone.join(".loopat");
        fs::create_dir_all(&dot).unwrap();
        plant(&dot);
        remotes.push(&env, &clone, what);
        env.run(["sync"]).ok();
        let list = env.run(["vault", "list"]).ok();
        list.stdout_has("GITHUB_TOKEN")
            .stderr_has("were not moved")
            .stderr_has(&format!("{}: {why}", named.display()));
        host.intact(&env, &remotes);
        // The person's own vault keeps working, and what they store is committed alone.
        set_env(&env, "default", &format!("MORE_{i}"), "more").ok();
        env.run(["sync"]).ok();
        host.intact(&env, &remotes);
        if i == 0 {
            let run = env.run(["run", &id, "--", "sh", "-c", "printenv GITHUB_TOKEN"]);
            assert_eq!(run.code, 0, "{}", run.stderr);
            run.stdout_has("ghp_victims_own_value")
                .stderr_has("were not moved");
            env.run(["doctor"])
                .stdout_has(&format!("{} is still there", legacy.display()));
            env.run(["doctor", "--fix"]).stdout_has("were not moved");
            host.intact(&env, &remotes);
        }
    }
    assert!(
        !env.ws.join("vaults/tester/work").exists(),
        "nothing was moved"
    );

    // A submodule where a vault's folder goes (git leaves it an empty folder).
    let clone = remotes.clone(&env, "personal");
    env.git(
        &clone,
        ["rm", "-r", "-q", "--cached", "--ignore-unmatch", ".loopat"],
    );
    let _ = fs::remove_dir_all(clone.join(".loopat"));
    let head = env.git(&clone, ["rev-parse", "HEAD"]);
    env.git(
        &clone,
        [
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{},.loopat/vaults/work", head.trim()),
        ],
    );
    env.git(&clone, ["commit", "-q", "-m", "a submodule"]);
    env.git(&clone, ["push", "-q", "origin", "HEAD:main"]);
    env.run(["sync"]).ok();
    // Nothing to move in it: it goes with the old folder, and nothing is said.
    let list = env.run(["vault", "list"]).ok();
    assert!(!list.stderr.contains("moved"), "{}", list.stderr);
    assert!(!env.ws.join("vaults/tester/work").exists());
    host.intact(&env, &remotes);

    // A well-formed vault folder pushed there is moved (it is only age files and public
    // keys), and not used until the person accepts it.
    let clone = remotes.clone(&env, "personal");
    env.git(
        &clone,
        ["rm", "-q", "-r", "--cached", "--ignore-unmatch", ".loopat"],
    );
    let _ = fs::remove_dir_all(clone.join(".loopat"));
    let envs = clone.join(".loopat/vaults/planted/envs");
    fs::create_dir_all(&envs).unwrap();
    fs::write(
        clone.join(".loopat/vaults/planted/recipients.txt"),
        &recipients,
    )
    .unwrap();
    fs::write(envs.join("NODE_OPTIONS.age"), &age_file).unwrap();
    remotes.push(&env, &clone, "a vault");
    env.run(["sync"]).ok();
    let list = env.run(["vault", "list"]).ok();
    list.stderr_has("moved 1 vault (planted)")
        .stdout_has("planted  (0 plaintext, 0 bound, not accepted on this machine");
    let planted = scratch_loop(&env, "planted");
    env.run(["run", &planted, "--", "true"])
        .fails(1)
        .stderr_has("vault 'planted' arrived by sync")
        .stderr_has("git loop vault recipients accept planted");
    assert!(!legacy.exists());
    host.intact(&env, &remotes);
}

/// The positive twin of the migration: a real old vaults' folder, as an earlier git-loop
/// kept it in the personal repository (entries encrypted without their names inside), is
/// moved on first use, read, and rewritten with names by `vault rekey`.
#[test]
fn an_old_vaults_folder_is_still_moved_and_works() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let id_path = env.home.join(".config/git-loop/identity.txt");
    let (me, _) = identity::ensure(&id_path).unwrap();
    let to = [Recipient::parse(me.recipient()).unwrap()];
    let old = env.ws.join("personal/tester/.loopat/vaults/old");
    fs::create_dir_all(old.join("envs")).unwrap();
    fs::create_dir_all(old.join("mounts/home/.config/tool")).unwrap();
    fs::write(
        old.join("recipients.txt"),
        format!("# team\n{}\n", me.recipient()),
    )
    .unwrap();
    fs::write(
        old.join("envs/TOKEN.age"),
        crypto::encrypt(&to, b"legacy-value").unwrap(),
    )
    .unwrap();
    fs::write(
        old.join("mounts/home/.config/tool/key.age"),
        crypto::encrypt(&to, b"legacy-file\n").unwrap(),
    )
    .unwrap();
    let list = env.run(["vault", "list"]).ok();
    list.stderr_has("moved 1 vault (old)")
        .stdout_has("TOKEN")
        .stdout_has("older format: git loop vault rekey old");
    assert!(!old.exists());
    assert_eq!(
        with_stdin(&env, &["vault", "get", "old", "env", "TOKEN"], b"")
            .ok()
            .stdout,
        "legacy-value\n"
    );
    env.run(["vault", "rekey", "old"])
        .ok()
        .stderr_has("2 written by an earlier git-loop, now with their names inside");
    let list = env.run(["vault", "list", "old"]).ok();
    assert!(!list.stdout.contains("older format"), "{}", list.stdout);
    let vaults = env.ws.join("vaults/tester");
    let tracked = env.git(&vaults, ["ls-files"]);
    assert!(tracked.contains("old/envs/TOKEN.age"), "{tracked}");
    assert!(
        tracked.contains("old/mounts/home/.config/tool/key.age"),
        "{tracked}"
    );
    assert_eq!(env.git(&vaults, ["status", "--porcelain"]), "");
}

/// ATTACKS 42, issue 27 item 3: a recipient added on the vaults remote is shown and never
/// used: after sync, `vault set` and `vault rekey` encrypt to the recipients the person
/// accepted, the hints never invite a rekey to the newcomer, `refuse` puts the accepted
/// ones back on the remote, and nothing on the remote opens for the teammate. Twins: a
/// recipient the person adds (`vault recipients add`) works at once; an accepted change is
/// used; normal vault sync goes on working.
#[test]
fn a_recipient_added_on_the_vaults_remote_is_not_used_without_the_person_s_word() {
    let remotes = Remotes::new();
    let (env, host) = victim(&remotes);
    let (eve_path, eve) = stranger(&env, "eve");
    let clone = remotes.clone(&env, "vaults");
    let file = clone.join("default/recipients.txt");
    let mut text = fs::read_to_string(&file).unwrap();
    text.push_str(&format!("{}\n", eve.recipient()));
    fs::write(&file, text).unwrap();
    remotes.push(&env, &clone, "add me");
    env.run(["sync"]).ok();

    env.run(["vault", "list"])
        .ok()
        .stdout_has(&format!(
            "{}  (arrived by sync, not accepted",
            eve.recipient()
        ))
        .stderr_has("changed by sync")
        .stderr_has("git loop vault recipients accept default");
    let set = set_env(&env, "default", "NEW_TOKEN", "ghp_stored_after_the_sync").ok();
    set.stderr_has("changed by sync")
        .stderr_has("encrypted to 1 recipient");
    assert!(!set.stderr.contains("rekey"), "{}", set.stderr);
    env.run(["vault", "rekey", "default"])
        .ok()
        .stderr_has("to the 1 recipient you accepted");
    env.run(["doctor"]).stdout_has("changed by sync");
    let id = scratch_loop(&env, "default");
    let run = env.run(["run", &id, "--", "sh", "-c", "printenv NEW_TOKEN"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout_has("ghp_stored_after_the_sync")
        .stderr_has("changed by sync");
    // No hint invites a rekey while the change waits: a rekey would hand her the rest.
    let list = env.run(["vault", "list"]).ok();
    assert!(!list.stderr.contains("rekey"), "{}", list.stderr);
    // Eve, with her identity, opens nothing: through git loop or from the remote's files.
    let get = env
        .command()
        .current_dir(&env.root)
        .args(["vault", "get", "default", "env", "NEW_TOKEN"])
        .env("GIT_LOOP_IDENTITY", &eve_path)
        .output()
        .unwrap();
    assert!(!get.status.success());
    let err = String::from_utf8_lossy(&get.stderr);
    assert!(err.contains("is not a recipient"), "{err}");
    env.run(["sync"]).ok();
    let eves = remotes.clone(&env, "vaults");
    for entry in [
        "default/envs/GITHUB_TOKEN.age",
        "default/envs/NEW_TOKEN.age",
    ] {
        let sealed = fs::read(eves.join(entry)).unwrap();
        assert!(
            matches!(
                crypto::decrypt(&eve, &sealed, 1 << 20),
                Err(crypto::DecryptFailure::NotRecipient)
            ),
            "{entry} opens for the newcomer"
        );
    }
    // add and rm wait for the decision; refuse puts the accepted recipients back.
    let (bob_path, bob) = stranger(&env, "bob");
    env.run(["vault", "recipients", "add", "default", bob.recipient()])
        .fails(1)
        .stderr_has("changed by sync and you have not accepted or refused that yet");
    env.run(["vault", "recipients", "refuse", "default"])
        .ok()
        .stderr_has("put back the recipients of vault 'default' you accepted");
    env.run(["sync"]).ok();
    let after = remotes.clone(&env, "vaults");
    assert!(!fs::read_to_string(after.join("default/recipients.txt"))
        .unwrap()
        .contains(eve.recipient()));
    let list = env.run(["vault", "list"]).ok();
    assert!(!list.stderr.contains("changed by sync"), "{}", list.stderr);

    // Twin: the person's own `recipients add` works at once, without an accept.
    env.run(["vault", "recipients", "add", "default", bob.recipient()])
        .ok()
        .stderr_has("accepted on this machine");
    set_env(&env, "default", "FOR_BOB", "bobs-value").ok();
    let get = env
        .command()
        .current_dir(&env.root)
        .args(["vault", "get", "default", "env", "FOR_BOB"])
        .env("GIT_LOOP_IDENTITY", &bob_path)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&get.stdout), "bobs-value\n");
    env.run(["sync"]).ok();
    // Twin: a change accepted by the person is used from then on.
    let clone = remotes.clone(&env, "vaults");
    let mut text = fs::read_to_string(clone.join("default/recipients.txt")).unwrap();
    text.push_str(&format!("{}\n", eve.recipient()));
    fs::write(clone.join("default/recipients.txt"), text).unwrap();
    remotes.push(&env, &clone, "add eve, asked for");
    env.run(["sync"]).ok();
    env.run(["vault", "recipients", "accept", "default"])
        .ok()
        .stderr_has("accepted the recipients of vault 'default'");
    set_env(&env, "default", "FOR_EVE", "eves-value").ok();
    let get = env
        .command()
        .current_dir(&env.root)
        .args(["vault", "get", "default", "env", "FOR_EVE"])
        .env("GIT_LOOP_IDENTITY", &eve_path)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&get.stdout), "eves-value\n");
    env.run(["sync"]).ok();
    host.intact(&env, &remotes);
}

/// ATTACKS 42, issue 27 item 3: an age file copied from one vault into another, or renamed
/// within one, through the vaults remote, is refused where it lands, with the name it was
/// stored under: `vault get` fails naming it, `vault list` marks it, and a run of a loop of
/// that vault goes on without it (said), while the vault's own entries are delivered. An
/// older entry (no name inside) copied the same way is refused too: this machine never
/// pinned it there. Twin: the entries as they were stored are delivered.
#[test]
fn an_entry_copied_or_renamed_through_the_vaults_remote_is_refused() {
    let remotes = Remotes::new();
    let (env, host) = victim(&remotes);
    env.run(["vault", "init", "personal"]).ok();
    set_env(&env, "personal", "BANK_TOKEN", "the-personal-secret").ok();
    env.run(["vault", "init", "work"]).ok();
    set_env(&env, "work", "OWN", "work-value").ok();
    env.run(["sync"]).ok();
    let clone = remotes.clone(&env, "vaults");
    fs::copy(
        clone.join("personal/envs/BANK_TOKEN.age"),
        clone.join("work/envs/BANK_TOKEN.age"),
    )
    .unwrap();
    fs::copy(
        clone.join("work/envs/OWN.age"),
        clone.join("work/envs/LD_PRELOAD.age"),
    )
    .unwrap();
    remotes.push(&env, &clone, "copies");
    env.run(["sync"]).ok();

    with_stdin(&env, &["vault", "get", "work", "env", "BANK_TOKEN"], b"")
        .fails(1)
        .stderr_has("was stored as env:BANK_TOKEN of vault 'personal'")
        .stderr_has("a copied or renamed entry is not delivered");
    with_stdin(&env, &["vault", "get", "work", "env", "LD_PRELOAD"], b"")
        .fails(1)
        .stderr_has("was stored as env:OWN of vault 'work'");
    env.run(["vault", "list", "work"])
        .ok()
        .stdout_has("refused (not delivered)")
        .stderr_has("was stored as env:BANK_TOKEN of vault 'personal'");
    let id = scratch_loop(&env, "work");
    let run = env.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        "printenv OWN; printenv BANK_TOKEN; printenv LD_PRELOAD; true",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout, "work-value\n",
        "only the vault's own entry went in"
    );
    run.stderr_has("skipped: env:BANK_TOKEN of vault 'work'");
    // Rekey does not launder them.
    env.run(["vault", "rekey", "work"])
        .ok()
        .stderr_has("left as it is: env:BANK_TOKEN of vault 'work'");
    with_stdin(&env, &["vault", "get", "work", "env", "BANK_TOKEN"], b"")
        .fails(1)
        .stderr_has("of vault 'personal'");

    // An entry of the older format, copied: this machine never pinned it there.
    let me = identity_of(&env);
    let older = crypto::encrypt(&[Recipient::parse(me.recipient()).unwrap()], b"older").unwrap();
    let clone = remotes.clone(&env, "vaults");
    fs::write(clone.join("work/envs/OLDER.age"), &older).unwrap();
    remotes.push(&env, &clone, "an older entry");
    env.run(["sync"]).ok();
    with_stdin(&env, &["vault", "get", "work", "env", "OLDER"], b"")
        .fails(1)
        .stderr_has("is in the older format (no name inside) and was not there when this machine pinned the vault");
    // Twin: the entries as stored are delivered (and the person can replace a refused one).
    set_env(&env, "work", "BANK_TOKEN", "the-work-value").ok();
    let run = env.run(["run", &id, "--", "printenv", "BANK_TOKEN"]);
    assert_eq!(run.stdout, "the-work-value\n", "{}", run.stderr);
    host.intact(&env, &remotes);
}

/// ATTACKS 43, issue 27 item 7: an entry name with control characters, a vault folder that
/// is a link (to another vault, or out of the vaults) and a name that is no vault, pushed
/// to the vaults remote, are each named (escaped) and skipped: `vault list` lists every
/// other vault, runs of every loop go on (the loop whose vault holds the stray entry gets
/// the rest of it, and is told), and `doctor` names each.
#[test]
fn a_stray_file_on_the_vaults_remote_breaks_no_other_vault() {
    let remotes = Remotes::new();
    let (env, host) = victim(&remotes);
    env.run(["vault", "init", "work"]).ok();
    set_env(&env, "work", "OWN", "work-value").ok();
    env.run(["sync"]).ok();
    let clone = remotes.clone(&env, "vaults");
    fs::copy(
        clone.join("work/envs/OWN.age"),
        clone.join("work/envs/A\x1b]0;pwned\x07B.age"),
    )
    .unwrap();
    symlink("default", clone.join("alias")).unwrap();
    symlink(env.home.join(".ssh"), clone.join("keys")).unwrap();
    fs::create_dir_all(clone.join("bad\x1b[2Jname/envs")).unwrap();
    fs::write(clone.join("bad\x1b[2Jname/recipients.txt"), "x\n").unwrap();
    remotes.push(&env, &clone, "strays");
    env.run(["sync"]).ok();

    let list = env.run(["vault", "list"]).ok();
    list.stdout_has("default  (")
        .stdout_has("work  (")
        .stdout_has("GITHUB_TOKEN");
    assert!(!list.stdout.contains('\x1b') && !list.stderr.contains('\x1b'));
    list.stderr_has("alias: it is a symlink")
        .stderr_has("keys: it is a symlink")
        .stderr_has("A\\x1b]0;pwned\\x07B.age")
        .stderr_has("bad\\x1b[2Jname: it is not a vault");
    for (vault, want) in [
        ("default", "ghp_victims_own_value\n"),
        ("work", "work-value\n"),
    ] {
        let id = scratch_loop(&env, vault);
        let var = if vault == "default" {
            "GITHUB_TOKEN"
        } else {
            "OWN"
        };
        let run = env.run(["run", &id, "--", "printenv", var]);
        assert_eq!((run.code, run.stdout.as_str()), (0, want), "{}", run.stderr);
        if vault == "work" {
            run.stderr_has("skipped")
                .stderr_has("A\\x1b]0;pwned\\x07B.age");
        }
        assert!(!run.stderr.contains('\x1b'));
    }
    let doctor = env.run(["doctor"]);
    doctor
        .stdout_has("alias: it is a symlink")
        .stdout_has("A\\x1b]0;pwned\\x07B.age");
    assert!(!doctor.stdout.contains('\x1b'));
    // Twin: the vaults keep syncing (the person's next change goes out).
    set_env(&env, "default", "LATER", "later").ok();
    env.run(["sync"]).ok();
    assert!(remotes
        .history(&env, "vaults")
        .contains("default/envs/LATER.age"));
    host.intact(&env, &remotes);
}
