//! The attack battery, "Files and git" (ATTACKS.md 1-10): each attack is really attempted
//! from inside a real sandbox started by `git loop run`, and each test asserts that it
//! failed *and* that nothing on the host changed. Twins show that what the agent
//! legitimately needs still works.
//!
//! Every in-sandbox script starts with [`PRELUDE`], which defines two shell functions:
//!
//! - `works NAME 'CODE'` prints `works NAME`, or `BROKEN NAME: output` when CODE fails;
//! - `attack NAME TWIN WHY 'CODE'` prints `BREACH NAME` when CODE succeeds; when it fails,
//!   `refused NAME: output` only if the failure is the refusal expected: WHY, an extended
//!   regular expression its output must match (the errno's message, the policy's words), or
//!   `-` for an attempt that must fail without a word (a `test`, a `grep` that finds
//!   nothing). Any other failure (a typo, a missing tool) is `WRONG NAME`, which fails the
//!   test: an attack proves nothing by failing for another reason. TWIN names a `works`
//!   line of the same script that makes the same operation against a permitted target,
//!   proving the operation itself works in that sandbox.
//!
//! [`inside`] checks that the script ran in the sandbox, that no attack succeeded and each
//! was refused for its reason, that every attack's twin exists and worked, that every
//! legitimate action worked, and that each named step printed its verdict.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::{Run, TestEnv};

const PRELUDE: &str = r##"
NOENT='No such file or directory'
EXDEV='Invalid cross-device link'
EROFS='Read-only file system'
EBUSY='Device or resource busy'
EPERM='Operation not permitted'
EACCES='Permission denied'
attack() {
  n=$1 why=$3 code=$4
  if out=$( ( eval "$code" ) 2>&1 ); then echo "BREACH $n"; return; fi
  flat=$(printf %s "$out" | tr '\n' ' ' | cut -c1-200)
  if [ "$why" = - ]; then
    if [ -z "$out" ]; then echo "refused $n: (silently)"; else echo "WRONG $n: expected no output, got: $flat"; fi
  elif printf %s "$out" | grep -Eq -- "$why"; then echo "refused $n: $flat"
  else echo "WRONG $n: expected /$why/, got: $flat"; fi
}
works() { if out=$( ( eval "$2" ) 2>&1 ); then echo "works $1"; else echo "BROKEN $1: $out"; fi; }
# Twins every script may name: the operations attacks try, against what the sandbox holds.
mkdir -p /tmp/twin && echo planted > /tmp/twin/own_file
works read-own-file 'cat /tmp/twin/own_file'
works list-own-folder 'ls -A /tmp/twin | grep -q .'
works own-file-exists 'test -e /tmp/twin/own_file'
works write-own-file 'echo x > /tmp/twin/written && echo y >> /tmp/twin/written'
works mkdir-own 'mkdir /tmp/twin/made'
works rm-own-file 'echo x > /tmp/twin/gone && rm /tmp/twin/gone'
works rm-own-tree 'mkdir -p /tmp/twin/tree/a && rm -rf /tmp/twin/tree && test ! -e /tmp/twin/tree'
works mv-own-file 'echo x > /tmp/twin/a && mv /tmp/twin/a /tmp/twin/b'
works chmod-own-file 'chmod 600 /tmp/twin/own_file'
works symlink-own 'ln -sf /etc/passwd /tmp/twin/link'
works find-own-by-name 'test -n "$(find /loopat /home /tmp /etc -name own_file -print 2>/dev/null)"'
works hardlink-own 'echo x > /tmp/twin/hl-src && ln /tmp/twin/hl-src /tmp/twin/hl-dst'
works git-in-own-repo 'git init -q /tmp/twin/repo && cd /tmp/twin/repo && git commit -q --allow-empty -m twin && git branch twin-branch && git tag twin-tag && git config twin.key value && git update-ref refs/heads/moved HEAD && git symbolic-ref HEAD refs/heads/moved && git gc -q' 
if [ -d "/loopat/loop/$GIT_LOOP_ID/workdir" ] && [ "$PWD" = "/loopat/loop/$GIT_LOOP_ID/workdir" ]; then echo IN-SANDBOX; fi
"##;

/// Runs `script` (after [`PRELUDE`]) with `sh -c` in the loop's sandbox and checks the
/// verdicts of every `attack` and `works` line of the script.
#[track_caller]
fn inside(env: &TestEnv, id: &str, script: &str) -> Run {
    let run = sandboxed(env, id, script);
    check_verdicts(&format!("{PRELUDE}\n{script}"), &run);
    run
}

/// Runs `script` (after [`PRELUDE`]) in the loop's sandbox; checks only that it ran there.
#[track_caller]
fn sandboxed(env: &TestEnv, id: &str, script: &str) -> Run {
    let full = format!("{PRELUDE}\n{script}\n");
    let run = env.run(["run", id, "--", "sh", "-c", &full]);
    assert_eq!(
        run.code, 0,
        "the sandboxed script failed (exit 3: no sandbox)\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stdout.lines().any(|l| l == "IN-SANDBOX"),
        "the script did not run inside the sandbox's view\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    run
}

/// No `BREACH`, no `BROKEN`, and a verdict for every `attack` and `works` of `script`.
#[track_caller]
fn check_verdicts(script: &str, run: &Run) {
    if std::env::var_os("ATTACKS_VERBOSE").is_some() {
        eprintln!("{}\n{}", run.stdout, run.stderr);
    }
    let breaches: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("BREACH "))
        .collect();
    assert!(
        breaches.is_empty(),
        "attacks succeeded inside the sandbox: {breaches:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    let wrong: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("WRONG "))
        .collect();
    assert!(
        wrong.is_empty(),
        "attacks failed, but not with the refusal they expect (a typo, or another fault?): {wrong:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    let broken: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("BROKEN "))
        .collect();
    assert!(
        broken.is_empty(),
        "legitimate actions failed inside the sandbox: {broken:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    let works_names: Vec<&str> = script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("works "))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    for line in script.lines().map(str::trim) {
        let (verdict, rest) = if let Some(rest) = line.strip_prefix("attack ") {
            ("refused", rest)
        } else if let Some(rest) = line.strip_prefix("works ") {
            ("works", rest)
        } else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let name = words.next().unwrap();
        if verdict == "refused" {
            let twin = words.next().unwrap_or_default();
            assert!(
                works_names.contains(&twin),
                "attack {name} names no `works` twin of the script (it names {twin:?})"
            );
        }
        let want = format!("{verdict} {name}");
        assert!(
            run.stdout
                .lines()
                .any(|l| l == want || l.starts_with(&format!("{want}: "))),
            "no verdict for {name}\nstdout:\n{}\nstderr:\n{}",
            run.stdout,
            run.stderr
        );
    }
}

/// A value of `KEY value` printed by a script.
#[track_caller]
fn printed(run: &Run, key: &str) -> String {
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} ")))
        .unwrap_or_else(|| panic!("{key} not printed:\n{}", run.stdout))
        .trim()
        .to_string()
}

/// Every file, folder and symlink under `root` (symlinks not followed): kind, mode, and
/// a hash of the content or the link's target, by path relative to `root`.
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    snapshot_where(root, |_| true)
}

/// [`snapshot`] of the paths `keep` accepts (a refused folder is not descended into).
fn snapshot_where(root: &Path, keep: impl Fn(&str) -> bool) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(root, root, &keep, &mut out);
    out
}

fn walk(root: &Path, path: &Path, keep: &dyn Fn(&str) -> bool, out: &mut BTreeMap<String, String>) {
    let rel = path
        .strip_prefix(root)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    if !keep(&rel) {
        return;
    }
    let Ok(meta) = fs::symlink_metadata(path) else {
        out.insert(rel, "missing".into());
        return;
    };
    let mode = meta.permissions().mode();
    let ft = meta.file_type();
    if ft.is_symlink() {
        let target = fs::read_link(path).unwrap();
        out.insert(rel, format!("link {mode:o} -> {}", target.display()));
    } else if ft.is_dir() {
        out.insert(rel, format!("dir {mode:o}"));
        let mut entries: Vec<PathBuf> = fs::read_dir(path)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            walk(root, &e, keep, out);
        }
    } else if ft.is_file() {
        let bytes = fs::read(path).unwrap();
        let mut h = DefaultHasher::new();
        bytes.hash(&mut h);
        out.insert(
            rel,
            format!("file {mode:o} {} {:016x}", bytes.len(), h.finish()),
        );
    } else {
        out.insert(rel, format!("other {mode:o}"));
    }
}

/// Panics with the differences when `after` is not `before`.
#[track_caller]
fn assert_same(what: &str, before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) {
    let mut diff = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            None => diff.push(format!("  removed {k} ({v})")),
            Some(w) if w != v => diff.push(format!("  changed {k}: {v} => {w}")),
            _ => {}
        }
    }
    for (k, v) in after {
        if !before.contains_key(k) {
            diff.push(format!("  added {k} ({v})"));
        }
    }
    assert!(
        diff.is_empty(),
        "{what} changed on the host:\n{}",
        diff.join("\n")
    );
}

/// Panics unless every entry of `before` is still in `after`, unchanged.
#[track_caller]
fn assert_kept(what: &str, before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) {
    let lost: Vec<String> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(*v))
        .map(|(k, v)| format!("  {k} ({v}) => {:?}", after.get(k)))
        .collect();
    assert!(
        lost.is_empty(),
        "{what} lost or changed:\n{}",
        lost.join("\n")
    );
}

/// The refs of `repo` that differ between two `TestEnv::refs` listings.
fn changed_refs(before: &str, after: &str) -> Vec<String> {
    let mut out: Vec<String> = after
        .lines()
        .filter(|l| !before.lines().any(|b| b == *l))
        .map(|l| format!("+{l}"))
        .collect();
    out.extend(
        before
            .lines()
            .filter(|l| !after.lines().any(|a| a == *l))
            .map(|l| format!("-{l}")),
    );
    out
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Shell single-quoting of a host path for a script.
fn q(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// A secret that the script can search for without the literal appearing in its own text:
/// returns (the secret, shell code that sets `$var` to it).
fn secret(tag: &str, var: &str) -> (String, String) {
    let a = "HOST-SEC";
    let b = format!("RET-{tag}-8d1f0c");
    (format!("{a}{b}"), format!("{var}='{a}''{b}'"))
}

// ---------------------------------------------------------------------------------------
// 1. The host's credentials.

#[test]
fn host_credentials_cannot_be_read_from_inside() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "creds");
    let (secret, set_s) = secret("creds", "S");
    let planted = [
        ".ssh/id_ed25519",
        ".ssh/id_rsa",
        ".aws/credentials",
        ".gnupg/private-keys-v1.d/key.key",
        ".config/gh/hosts.yml",
    ];
    for rel in planted {
        write(&env.home.join(rel), &format!("{secret} {rel}\n"));
    }
    let home_before = snapshot(&env.home);

    let h = q(&env.home);
    let script = format!(
        r##"
{set_s}
H={h}
# Twins: the same paths of access, to a file the sandbox does hold.
works climb-to-own-file 'cat "../../../../../../../../tmp/twin/own_file"'
works through-proc-root-to-own 'cat "/proc/self/root/tmp/twin/own_file"'
works through-proc-cwd-to-own 'cat "/proc/self/cwd/../../../../tmp/twin/own_file"'
attack read-host-ssh-key read-own-file "$NOENT" 'cat "$H/.ssh/id_ed25519"'
attack read-host-rsa-key read-own-file "$NOENT" 'cat "$H/.ssh/id_rsa"'
attack read-host-aws read-own-file "$NOENT" 'cat "$H/.aws/credentials"'
attack list-host-gnupg list-own-folder "$NOENT" 'ls -A "$H/.gnupg" | grep -q .'
attack read-host-gnupg read-own-file "$NOENT" 'cat "$H/.gnupg/private-keys-v1.d/key.key"'
attack read-host-gh read-own-file "$NOENT" 'cat "$H/.config/gh/hosts.yml"'
attack host-home-exists own-file-exists - 'test -e "$H"'
attack read-sandbox-home-ssh read-own-file "$NOENT" 'cat "$HOME/.ssh/id_ed25519"'
attack read-sandbox-home-aws read-own-file "$NOENT" 'cat "$HOME/.aws/credentials"'
attack read-sandbox-home-gh read-own-file "$NOENT" 'cat "$HOME/.config/gh/hosts.yml"'
attack climb-from-workdir climb-to-own-file "$NOENT" 'cat "../../../../../../../../$H/.ssh/id_ed25519"'
attack through-proc-root through-proc-root-to-own "$NOENT" 'cat "/proc/self/root$H/.ssh/id_ed25519"'
attack through-proc-cwd through-proc-cwd-to-own "$NOENT" 'cat "/proc/self/cwd/../../../..$H/.aws/credentials"'
works search-finds-a-planted-copy 'echo "$S" > /tmp/control && grep -rqsF "$S" /loopat /home /tmp /etc && rm /tmp/control'
attack grep-everything search-finds-a-planted-copy - 'grep -rqsF "$S" /loopat /home /tmp /etc'
attack find-by-name find-own-by-name - 'test -n "$(find /loopat /home /tmp /etc \( -name id_ed25519 -o -name id_rsa -o -name hosts.yml -o -path "*/.aws/credentials" -o -name key.key \) -print 2>/dev/null)"'
"##
    );
    inside(&env, &id, &script);
    assert_same("the host HOME", &home_before, &snapshot(&env.home));
}

// ---------------------------------------------------------------------------------------
// 2. The age identity and the vaults.

#[test]
fn the_identity_and_the_vaults_are_hidden() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "vaults");
    let (secret, set_s) = secret("vault", "S");
    let identity = env.home.join(".config/git-loop/identity.txt");
    write(&identity, &format!("AGE-SECRET-KEY-1{secret}\n"));
    fs::set_permissions(&identity, fs::Permissions::from_mode(0o600)).unwrap();
    // Not the loop's vault (`default`, which holds nothing here): decrypting is not what
    // this test is about; tests/it/vault_delivery.rs covers the selected vault's files.
    let vaults = env.ws.join("vaults/tester");
    write(
        &vaults.join("other/envs/X.age"),
        &format!("age-encryption.org/v1 {secret} other\n"),
    );
    write(
        &vaults.join("team/envs/Y.age"),
        &format!("age-encryption.org/v1 {secret} default\n"),
    );
    write(
        &vaults.join("team/mounts/home/.npmrc.age"),
        &format!("age-encryption.org/v1 {secret} npmrc\n"),
    );
    let home_before = snapshot(&env.home);
    let vaults_before = snapshot(&vaults);

    let script = format!(
        r##"
{set_s}
I={identity}
V={vaults_q}
OLD=/loopat/context/personal/.loopat/vaults
attack read-identity read-own-file "$NOENT" 'cat "$I"'
attack identity-folder-exists own-file-exists - 'test -e "$(dirname "$I")"'
attack vaults-exist-by-host-path own-file-exists - 'test -e "$V"'
attack read-other-vault read-own-file "$NOENT" 'cat "$V/other/envs/X.age"'
attack read-team-vault read-own-file "$NOENT" 'cat "$V/team/envs/Y.age"'
attack read-team-vault-home read-own-file "$NOENT" 'cat "$V/team/mounts/home/.npmrc.age"'
attack old-place-exists own-file-exists - 'test -e "$OLD"'
attack write-old-place mkdir-own "$EROFS" 'mkdir "$OLD"'
attack vault-names-anywhere find-own-by-name - 'find /loopat /home /tmp -name other -o -name team 2>/dev/null | grep -q .'
attack find-age-files find-own-by-name - 'test -n "$(find /loopat /home /tmp /etc -name "*.age" -print 2>/dev/null)"'
attack find-identity find-own-by-name - 'test -n "$(find /loopat /home /tmp /etc -name identity.txt -print 2>/dev/null)"'
works search-finds-a-planted-copy 'echo "$S" > /tmp/control && grep -rqsF "$S" /loopat /home /tmp /etc && rm /tmp/control'
attack grep-everything search-finds-a-planted-copy - 'grep -rqsF "$S" /loopat /home /tmp /etc'
"##,
        identity = q(&identity),
        vaults_q = q(&vaults),
    );
    inside(&env, &id, &script);
    assert_same("the host HOME", &home_before, &snapshot(&env.home));
    assert_same("the vaults", &vaults_before, &snapshot(&vaults));
}

/// ATTACKS 30: vaults made where they lived before (the personal tree) are moved into
/// their own repository before any sandbox starts; their history in the personal
/// repository stays out of every sandbox's view with it.
#[test]
fn vaults_from_before_are_moved_and_their_history_is_out_of_view() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "old vaults");
    let personal = env.ws.join("personal/tester");
    let legacy = personal.join(".loopat/vaults");
    // A real vault, made where vaults lived before: made now, then put back there, as a
    // workspace of an earlier version holds it.
    env.run(["vault", "init", "work"]).ok();
    let mut set = env
        .command()
        .current_dir(&env.root)
        .args(["vault", "set", "work", "env", "TOKEN"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        set.stdin
            .take()
            .unwrap()
            .write_all(b"the-token-value")
            .unwrap();
    }
    assert!(set.wait().unwrap().success());
    fs::create_dir_all(&legacy).unwrap();
    fs::rename(env.ws.join("vaults/tester/work"), legacy.join("work")).unwrap();
    fs::remove_dir_all(env.ws.join("vaults")).unwrap();
    // The ciphertext's recipient stanza: a string found only in that file.
    let sealed = fs::read(legacy.join("work/envs/TOKEN.age")).unwrap();
    let secret = String::from_utf8_lossy(&sealed)
        .lines()
        .find(|l| l.starts_with("-> X25519 "))
        .unwrap()
        .to_string();
    let set_s = format!("S='{secret}'");
    // As an earlier autocommit did: the vault went into the personal history.
    env.git(&personal, ["add", "-A"]);
    env.git(
        &personal,
        ["commit", "-q", "--no-verify", "-m", "vaults in history"],
    );

    let script = format!(
        r##"
{set_s}
P=/loopat/context/personal
attack old-place-exists own-file-exists - 'test -e "$P/.loopat/vaults"'
attack history-log git-in-own-repo "not a git repository" 'git -C "$P" log --all --name-only | grep -q TOKEN'
attack history-objects list-own-folder - 'ls -A "$P/.git" | grep -q .'
attack find-age find-own-by-name - 'test -n "$(find /loopat /home /tmp -name "*.age" -print 2>/dev/null)"'
works search-finds-a-planted-copy 'echo "$S" > /tmp/control && grep -rqsF -e "$S" /loopat /home /tmp && rm /tmp/control'
attack grep-everything search-finds-a-planted-copy - 'grep -rqsF -e "$S" /loopat /home /tmp'
"##
    );
    let run = inside(&env, &id, &script);
    run.stderr_has("moved 1 vault (work)");
    // Moved, whole, into the vaults' repository, and committed there.
    let moved = env.ws.join("vaults/tester/work/envs/TOKEN.age");
    assert_eq!(fs::read(&moved).unwrap(), sealed);
    assert!(!legacy.exists());
    assert_eq!(
        env.git(&env.ws.join("vaults/tester"), ["status", "--porcelain"]),
        ""
    );
    // Said once.
    let again = env.run(["run", &id, "--", "true"]).ok();
    assert!(!again.stderr.contains("moved"), "{}", again.stderr);
    // The vault still works from its new place.
    env.run(["vault", "list", "work"]).ok().stdout_has("TOKEN");
}

// ---------------------------------------------------------------------------------------
// 3. Another user's personal folder, another loop's folder.

#[test]
fn another_users_personal_folder_and_another_loop_are_out_of_reach() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "mine");
    let other_loop = env.new_loop(&repo, "theirs");
    let (secret, set_s) = secret("others", "S");
    let other_user = env.ws.join("personal/other");
    write(&other_user.join("secret.txt"), &format!("{secret} user\n"));
    write(
        &other_user.join("memory/MEMORY.md"),
        &format!("{secret} memory\n"),
    );
    let other_dir = env.loop_dir(&other_loop);
    write(
        &other_dir.join("workdir/wip-secret.txt"),
        &format!("{secret} wip\n"),
    );
    write(
        &other_dir.join("context/notes/draft.md"),
        &format!("{secret} draft\n"),
    );
    write(
        &other_dir.join("home/upper/.netrc"),
        &format!("{secret} netrc\n"),
    );
    write(
        &other_dir.join(".claude/.credentials.json"),
        &format!("{secret} claude\n"),
    );
    let other_user_before = snapshot(&other_user);
    let other_loop_before = snapshot(&other_dir);

    let script = format!(
        r##"
{set_s}
O={other_user}
L={other_dir}
P=/loopat/context/personal
X={other_loop}
attack other-user-by-host-path read-own-file "$NOENT" 'cat "$O/secret.txt"'
attack other-user-beside-mine read-own-file "$NOENT" 'cat "$P/../other/secret.txt"'
attack other-user-anywhere find-own-by-name - 'test -n "$(find /loopat /home -name secret.txt -print 2>/dev/null)"'
attack other-loop-by-host-path read-own-file "$NOENT" 'cat "$L/workdir/wip-secret.txt"'
attack other-loop-by-inside-path list-own-folder "$NOENT" 'ls "/loopat/loop/$X"'
attack other-loop-listed list-own-folder - 'ls -A /loopat/loop | grep -v "^$GIT_LOOP_ID$" | grep -q .'
attack other-loop-notes read-own-file "$NOENT" 'cat "$L/context/notes/draft.md"'
attack other-loop-home read-own-file "$NOENT" 'cat "$L/home/upper/.netrc"'
attack other-loop-home-in-mine read-own-file "$NOENT" 'cat "$HOME/.netrc"'
attack other-loop-claude read-own-file "$NOENT" 'cat "$L/.claude/.credentials.json"'
attack other-loop-relative read-own-file "$NOENT" 'cat "../../$X/workdir/wip-secret.txt"'
attack workspace-loops-folder find-own-by-name - 'test -n "$(find /loopat /home /tmp -name loop.toml -print 2>/dev/null)"'
works search-finds-a-planted-copy 'echo "$S" > /tmp/control && grep -rqsF "$S" /loopat /home /tmp /etc && rm /tmp/control'
attack grep-everything search-finds-a-planted-copy - 'grep -rqsF "$S" /loopat /home /tmp /etc'
works own-personal 'ls "$P/memory"'
"##,
        other_user = q(&other_user),
        other_dir = q(&other_dir),
    );
    inside(&env, &id, &script);
    assert_same(
        "another user's personal folder",
        &other_user_before,
        &snapshot(&other_user),
    );
    assert_same(
        "another loop's folder",
        &other_loop_before,
        &snapshot(&other_dir),
    );
}

// ---------------------------------------------------------------------------------------
// 4. Writes to the system, knowledge and the registered repository.

#[test]
fn system_knowledge_and_registered_repos_are_read_only() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "writes");
    let knowledge = env.ws.join("context/knowledge");
    let notes_origin = env.notes();
    let tag = format!("git-loop-pwned-{id}");
    let host_probes: Vec<PathBuf> = ["/usr", "/etc", "/opt", "/usr/bin", "/usr/lib"]
        .iter()
        .map(|d| Path::new(d).join(&tag))
        .collect();
    // The origin's working tree holds what never reaches git: an untracked `.env` and an
    // ignored build folder with credentials. Only its git folder is in the sandbox's view.
    let origin_secret = format!("origin-secret-{id}");
    fs::write(repo.join(".env"), format!("API_KEY={origin_secret}\n")).unwrap();
    fs::write(repo.join(".gitignore"), "build/\n").unwrap();
    fs::create_dir_all(repo.join("build")).unwrap();
    fs::write(repo.join("build/local-credentials"), &origin_secret).unwrap();
    let knowledge_before = snapshot(&knowledge);
    let repo_before = snapshot(&repo);
    let notes_origin_before = snapshot(&notes_origin);
    let etc_hostname = fs::metadata("/etc/hostname")
        .ok()
        .map(|m| m.modified().ok());

    let script = format!(
        r##"
T={tag}
K=/loopat/context/knowledge
R=/loopat/context/repos/app
N=/loopat/context/.origins/notes
attack write-usr write-own-file "$EROFS" 'touch "/usr/$T"'
attack write-usr-bin write-own-file "$EROFS" 'touch "/usr/bin/$T"'
attack mkdir-usr-lib mkdir-own "$EROFS" 'mkdir "/usr/lib/$T"'
attack write-etc write-own-file "$EROFS" 'touch "/etc/$T"'
attack touch-etc-file write-own-file "$EROFS" 'test -e /etc/hostname && touch -c /etc/hostname'
attack write-opt write-own-file "$EROFS" 'touch "/opt/$T"'
attack write-knowledge-file write-own-file "$EROFS" 'echo pwned >> "$K/README.md"'
attack new-knowledge-file write-own-file "$EROFS" 'touch "$K/$T"'
attack rm-knowledge-file rm-own-file "$EROFS" 'rm "$K/README.md"'
attack mv-knowledge-file mv-own-file "$EROFS" 'mv "$K/README.md" "$K/moved.md"'
attack chmod-knowledge chmod-own-file "$EROFS" 'chmod 777 "$K/README.md"'
attack knowledge-git-config git-in-own-repo "$EROFS|could not lock" 'git -C "$K" config core.hooksPath /tmp'
attack knowledge-commit git-in-own-repo "$EROFS" 'git -C "$K" commit -q --allow-empty -m pwned'
attack write-repo-file write-own-file "$EROFS" 'echo pwned >> "$R/README.md"'
attack new-repo-file write-own-file "$EROFS" 'touch "$R/$T"'
attack rm-repo-file rm-own-file "$NOENT" 'rm "$R/main.c"'
attack symlink-in-repo symlink-own "$EROFS" 'ln -s /etc/passwd "$R/link"'
attack repo-checkout git-in-own-repo "$EROFS" 'git -C "$R" checkout -q -b evil'
attack repo-reset git-in-own-repo "$EROFS" 'git -C "$R" reset -q --hard HEAD'
attack repo-commit git-in-own-repo "$EROFS" 'git -C "$R" commit -q --allow-empty -m pwned'
attack write-notes-origin write-own-file "$EROFS" 'echo pwned >> "$N/inbox.md"'
attack new-notes-origin-file write-own-file "$EROFS" 'touch "$N/$T"'
attack mount-point-rm rm-own-tree "$EROFS|$EBUSY" 'rm -rf "$K"'
works write-workdir 'echo ok > ok.txt && cat ok.txt'
works write-notes 'echo ok >> /loopat/context/notes/inbox.md'
works write-home 'echo ok > "$HOME/ok"'
works write-tmp 'echo ok > /tmp/ok'
works write-claude-dir 'echo ok > "/loopat/loop/$GIT_LOOP_ID/.claude/ok"'
works read-knowledge 'cat "$K/README.md" && git -C "$K" log --oneline -1'
works read-repo 'git -C "$R" log --oneline -1 && git -C "$R" show HEAD:README.md'
works fetch-from-origin 'git fetch -q origin && git log --oneline -1 origin/main'
attack read-untracked-env read-own-file "$NOENT" 'cat "$R/.env"'
attack read-ignored-file read-own-file "$NOENT" 'cat "$R/build/local-credentials"'
attack origin-worktree-listed list-own-folder - 'ls "$R" | grep -q .'
attack grep-origin-secret find-own-by-name - 'grep -rqsF "{secret}" /loopat /home /tmp'
"##,
        secret = origin_secret,
    );
    inside(&env, &id, &script);
    for p in &host_probes {
        let existed = p.exists();
        let _ = fs::remove_file(p);
        let _ = fs::remove_dir(p);
        assert!(!existed, "{} was created on the host", p.display());
    }
    assert_eq!(
        fs::metadata("/etc/hostname")
            .ok()
            .map(|m| m.modified().ok()),
        etc_hostname,
        "/etc/hostname was touched"
    );
    assert_same("knowledge", &knowledge_before, &snapshot(&knowledge));
    assert_same("the registered repository", &repo_before, &snapshot(&repo));
    assert_same(
        "the notes origin",
        &notes_origin_before,
        &snapshot(&notes_origin),
    );
    env.git(&knowledge, ["fsck", "--strict", "--no-dangling"]);
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    // The twins landed where they belong.
    assert_eq!(
        fs::read_to_string(env.workdir(&id).join("ok.txt")).unwrap(),
        "ok\n"
    );
    assert!(fs::read_to_string(env.loop_notes(&id).join("inbox.md"))
        .unwrap()
        .ends_with("ok\n"));
    assert!(env.loop_dir(&id).join("home/upper/ok").is_file());
    assert!(env.loop_dir(&id).join(".claude/ok").is_file());
}

// ---------------------------------------------------------------------------------------
// 5. The origins' objects, trunk and branches.

/// The origin with trunk one commit ahead of a branch `old`, so that moving trunk back is
/// a real change; returns it.
fn repo_with_history(env: &TestEnv) -> PathBuf {
    let repo = env.repo("app");
    env.git(&repo, ["branch", "old"]);
    env.commit_file(&repo, "second.c", "int second;\n", "second");
    repo
}

#[test]
fn origins_cannot_be_corrupted_moved_or_branched() {
    let env = TestEnv::battery(module_path!());
    let repo = repo_with_history(&env);
    let id = env.new_loop(&repo, "origins");
    let notes_origin = env.notes();
    let refs_before = env.refs(&repo);
    let notes_refs_before = env.refs(&notes_origin);
    let objects_before = snapshot(&repo.join(".git/objects"));
    let notes_objects_before = snapshot(&notes_origin.join(".git/objects"));
    let not_git = |rel: &str| rel != ".git" && !rel.starts_with(".git/");
    let tree_before = snapshot_where(&repo, not_git);
    let hooks_before = snapshot(&repo.join(".git/hooks"));
    let config_before = fs::read(repo.join(".git/config")).unwrap();

    let script = r##"
O=/loopat/context/repos/app
N=/loopat/context/.origins/notes
works agent-commit 'echo agent > agent.c && git add agent.c && git commit -qm agent'
works notes-commit 'cd /loopat/context/notes && echo fact >> inbox.md && git commit -qam fact'
echo TIP $(git rev-parse HEAD)
echo NOTES-TIP $(git -C /loopat/context/notes rev-parse HEAD)
attack rm-origin-objects rm-own-tree "$EROFS" 'rm -rf "$O/.git/objects"'
attack rm-origin-object-file rm-own-file "$EROFS" 'f=$(find "$O/.git/objects" -type f | head -1) && rm -f "$f" && test ! -e "$f"'
attack truncate-origin-object write-own-file "$EROFS" 'f=$(find "$O/.git/objects" -type f | head -1) && : > "$f"'
attack rm-origin-refs rm-own-tree "$EROFS" 'rm -rf "$O/.git/refs/heads"'
attack move-trunk-update-ref git-in-own-repo "$EROFS" 'git -C "$O" update-ref refs/heads/main refs/heads/old'
attack delete-trunk git-in-own-repo "$EROFS" 'git -C "$O" update-ref -d refs/heads/main'
attack write-trunk-file write-own-file "$EROFS" 'git rev-parse HEAD > "$O/.git/refs/heads/main"'
attack push-trunk-by-path git-in-own-repo "unable to create temporary object directory|$EROFS" 'git push -q "$O" HEAD:main'
attack push-trunk-by-remote git-in-own-repo "unable to create temporary object directory|$EROFS" 'git push -q origin HEAD:refs/heads/main'
attack force-push-trunk git-in-own-repo "unable to create temporary object directory|$EROFS" 'git push -q -f origin HEAD~2:refs/heads/main'
attack push-inside-origin git-in-own-repo "unable to create temporary object directory|$EROFS" 'git -C "$O" push -q . old:main -f'
attack push-new-branch git-in-own-repo "unable to create temporary object directory|$EROFS" 'git push -q origin HEAD:refs/heads/evil'
attack push-delete-branch git-in-own-repo "unable to create temporary object directory|$EROFS" 'git push -q origin :refs/heads/old'
attack branch-in-origin git-in-own-repo "$EROFS" 'git -C "$O" branch evil'
attack tag-in-origin git-in-own-repo "$EROFS" 'git -C "$O" tag evil'
attack symbolic-ref-in-origin git-in-own-repo "$EROFS" 'git -C "$O" symbolic-ref HEAD refs/heads/old'
attack origin-config git-in-own-repo "$EROFS" 'git -C "$O" config core.hooksPath /tmp'
attack origin-hook write-own-file "$EROFS" 'printf "#!/bin/sh\ntouch /tmp/x\n" > "$O/.git/hooks/post-checkout"'
attack origin-gc git-in-own-repo "$EROFS" 'git -C "$O" gc -q --prune=now'
attack origin-packed-refs write-own-file "$EROFS" 'echo "0000000000000000000000000000000000000000 refs/heads/main" >> "$O/.git/packed-refs"'
attack push-loop-branch-directly git-in-own-repo "unable to create temporary object directory|$EROFS" 'git push -q -f origin HEAD:refs/heads/loop/$GIT_LOOP_ID'
attack rm-notes-origin-objects rm-own-tree "$EROFS" 'rm -rf "$N/.git/objects"'
attack move-notes-trunk git-in-own-repo "$EROFS" 'git -C "$N" update-ref refs/heads/main refs/heads/loop/$GIT_LOOP_ID'
attack push-notes-trunk git-in-own-repo "unable to create temporary object directory|$EROFS" 'git -C /loopat/context/notes push -q origin HEAD:main'
attack notes-branch-in-origin git-in-own-repo "$EROFS" 'git -C "$N" branch evil'
"##;
    let run = inside(&env, &id, script);
    let tip = printed(&run, "TIP");
    let notes_tip = printed(&run, "NOTES-TIP");

    // After the run's import: loop/<id> moved to the agent's commit, nothing else.
    assert_eq!(
        changed_refs(&refs_before, &env.refs(&repo)),
        vec![
            format!("+refs/heads/loop/{id} {tip}"),
            format!(
                "-refs/heads/loop/{id} {}",
                env.rev(&repo, "refs/heads/main").unwrap()
            )
        ]
    );
    assert_eq!(
        changed_refs(&notes_refs_before, &env.refs(&notes_origin))
            .into_iter()
            .filter(|l| l.starts_with('+'))
            .collect::<Vec<_>>(),
        vec![format!("+refs/heads/loop/{id} {notes_tip}")]
    );
    assert_kept(
        "the origin's objects",
        &objects_before,
        &snapshot(&repo.join(".git/objects")),
    );
    assert_kept(
        "the notes origin's objects",
        &notes_objects_before,
        &snapshot(&notes_origin.join(".git/objects")),
    );
    assert_same(
        "the origin's working tree",
        &tree_before,
        &snapshot_where(&repo, not_git),
    );
    assert_same(
        "the origin's hooks",
        &hooks_before,
        &snapshot(&repo.join(".git/hooks")),
    );
    assert_eq!(fs::read(repo.join(".git/config")).unwrap(), config_before);
    assert!(
        !repo.join(".git/packed-refs").exists() || {
            let p = fs::read_to_string(repo.join(".git/packed-refs")).unwrap();
            !p.contains("0000000000000000000000000000000000000000")
        }
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    env.git(&notes_origin, ["fsck", "--strict", "--no-dangling"]);
    assert_eq!(
        env.git(&repo, ["show", &format!("loop/{id}:agent.c")]),
        "agent\n"
    );
}

#[test]
fn a_symbolic_loop_branch_cannot_move_trunk() {
    let env = TestEnv::battery(module_path!());
    let repo = repo_with_history(&env);
    let id = env.new_loop(&repo, "symref");
    let main_before = env.rev(&repo, "refs/heads/main").unwrap();
    let old_before = env.rev(&repo, "refs/heads/old").unwrap();
    let notes_main_before = env.rev(&env.notes(), "refs/heads/main").unwrap();
    // Inside, loop/<id> becomes a symbolic ref to main (and in notes), then the agent
    // commits: in its own repository, main moves.
    let script = r##"
works symref 'git symbolic-ref "refs/heads/loop/$GIT_LOOP_ID" refs/heads/main'
works commit-through-symref 'echo x > x.c && git add x.c && git commit -qm "through the symref"'
works symref-to-old 'cd /loopat/context/notes && git branch -f old HEAD && git symbolic-ref "refs/heads/loop/$GIT_LOOP_ID" refs/heads/main && echo y >> inbox.md && git commit -qam y'
"##;
    inside(&env, &id, script);
    assert_eq!(
        env.rev(&repo, "refs/heads/main").unwrap(),
        main_before,
        "trunk moved"
    );
    assert_eq!(env.rev(&repo, "refs/heads/old").unwrap(), old_before);
    assert_eq!(
        env.rev(&env.notes(), "refs/heads/main").unwrap(),
        notes_main_before,
        "notes trunk moved"
    );
    for origin in [repo.clone(), env.notes()] {
        let sym = env.git_out(
            &origin,
            ["symbolic-ref", "-q", &format!("refs/heads/loop/{id}")],
        );
        assert_ne!(
            sym.code,
            0,
            "loop/{id} became a symbolic ref in {}: {}",
            origin.display(),
            sym.stdout
        );
        env.git(&origin, ["fsck", "--strict", "--no-dangling"]);
    }
}

#[test]
fn the_agent_commits_amends_rebases_and_branches_and_only_its_branch_lands() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "git work");
    let refs_before = env.refs(&repo);
    let notes_refs_before = env.refs(&env.notes());
    let script = r##"
works commit 'echo one > a.c && git add a.c && git commit -qm one'
works amend 'git commit -q --amend -m "one, amended"'
works branch-and-tag 'git branch experiment && git tag mine'
works second 'echo two > b.c && git add b.c && git commit -qm two'
works rebase 'git checkout -q experiment && echo x > x.c && git add x.c && git commit -qm x && git checkout -q "loop/$GIT_LOOP_ID" && git rebase -q experiment'
works fetch 'git fetch -q origin && git log -1 origin/main'
works status-diff 'git status --short && git diff HEAD~1 --stat'
works notes-commit 'cd /loopat/context/notes && echo fact >> memory/MEMORY.md && git add -A && git commit -qm note'
works notes-amend 'cd /loopat/context/notes && git commit -q --amend -m "note, amended"'
works notes-branch 'cd /loopat/context/notes && git branch side && git fetch -q origin'
echo TIP $(git rev-parse HEAD)
echo NOTES-TIP $(git -C /loopat/context/notes rev-parse HEAD)
"##;
    let run = inside(&env, &id, script);
    let tip = printed(&run, "TIP");
    let notes_tip = printed(&run, "NOTES-TIP");
    assert_eq!(env.rev(&env.workdir(&id), "HEAD").unwrap(), tip);
    let base = env.rev(&repo, "main").unwrap();
    assert_eq!(
        changed_refs(&refs_before, &env.refs(&repo)),
        vec![
            format!("+refs/heads/loop/{id} {tip}"),
            format!("-refs/heads/loop/{id} {base}")
        ],
        "only loop/<id> moved, to the agent's commit"
    );
    let notes_trunk = env.rev(&env.notes(), "main").unwrap();
    assert_eq!(
        changed_refs(&notes_refs_before, &env.refs(&env.notes())),
        vec![
            format!("+refs/heads/loop/{id} {notes_tip}"),
            format!("-refs/heads/loop/{id} {notes_trunk}")
        ]
    );
    assert_eq!(
        env.git(&repo, ["log", "--format=%s", &format!("loop/{id}")])
            .lines()
            .collect::<Vec<_>>(),
        vec!["two", "x", "one, amended", "first"]
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    env.git(&env.notes(), ["fsck", "--strict", "--no-dangling"]);
}

// ---------------------------------------------------------------------------------------
// 6. Hooks and config planted from inside never run on the host.

/// What git reads as instructions in a loop's repository (`d`) is git-loop's and
/// read-only inside: each way to plant it is an attack; attributes stay the agent's.
fn plant_attempts(n: &str, d: &str) -> String {
    format!(
        r##"d={d}
attack hook-{n} write-own-file "$EROFS" 'printf "#!/bin/sh\n%s\n" "$C" > "$d/.git/hooks/pre-commit"'
attack hooks-folder-{n} mv-own-file "$EBUSY" 'mv "$d/.git/hooks" "$d/.git/hooks-moved"'
attack config-{n} git-in-own-repo "$EBUSY|$EROFS" 'git -C "$d" config core.fsmonitor "$C"'
attack config-hookspath-{n} git-in-own-repo "$EBUSY|$EROFS" 'git -C "$d" config core.hooksPath .planted-hooks'
attack config-include-{n} git-in-own-repo "$EBUSY|$EROFS" 'git -C "$d" config include.path /etc/passwd'
attack config-replace-{n} mv-own-file "$EBUSY" 'cp "$d/.git/config" /tmp/c && printf "[core]\n\tpager = %s\n" "$C" >> /tmp/c && mv /tmp/c "$d/.git/config"'
attack config-append-{n} write-own-file "$EROFS" 'printf "[diff]\n\texternal = %s\n" "$C" >> "$d/.git/config"'
attack config-unlink-{n} rm-own-file "$EBUSY" 'rm -f "$d/.git/config"'
attack commondir-{n} write-own-file "$EROFS" 'mkdir -p "$d/evil" && printf "[core]\n\tfsmonitor = %s\n" "$C" > "$d/evil/config" && echo ../evil > "$d/.git/commondir"'
attack git-folder-{n} mv-own-file "$EBUSY" 'mv "$d/.git" "$d/git-moved"'
works attributes-{n} 'printf "* filter=evil diff=evil merge=evil\n" > "$d/.gitattributes" && echo dirty > "$d/dirty.c"'
"##
    )
}

#[test]
fn hooks_and_config_planted_inside_never_run_on_the_host() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "planted");
    let marker = env.root.join("PWNED");
    let cmd = format!("touch {}", q(&marker));
    let script = format!(
        r##"
C={cmd_q}
{per_repo}works plant-home-gitconfig 'printf "[core]\n\tfsmonitor = %s\n" "$C" > "$HOME/.gitconfig"'
# The agent's git work is untouched: commit, branch, amend, rebase, fetch.
works commit 'git add dirty.c && git commit -qm work'
works branch 'git branch side && git checkout -q side && git checkout -q -'
works amend 'git commit -q --amend -m "work, amended"'
works rebase 'git rebase -q HEAD~1'
works fetch 'git fetch -q origin'
works info-exclude 'echo "*.tmp" >> .git/info/exclude'
attack marker-folder-visible own-file-exists - 'test -d "$(dirname {marker_q})"'
"##,
        cmd_q = q(Path::new(&cmd)),
        marker_q = q(&marker),
        per_repo = ["workdir", "notes"]
            .iter()
            .map(|n| plant_attempts(
                n,
                if *n == "workdir" {
                    "$PWD"
                } else {
                    "/loopat/context/notes"
                }
            ))
            .collect::<String>(),
    );
    inside(&env, &id, &script);
    assert!(!marker.exists(), "a planted command ran during the run");
    operator_agent(&env, "true");
    let steps: Vec<Vec<String>> = vec![
        vec!["list".into()],
        vec!["list".into(), "--json".into()],
        vec!["list".into(), "--all".into()],
        vec!["show".into(), id.clone()],
        vec!["show".into(), id.clone(), "--json".into()],
        vec!["show".into(), id.clone(), "--mounts".into()],
        vec!["log".into(), id.clone()],
        vec!["gc".into(), "--dry-run".into()],
        vec!["gc".into()],
        vec!["gc".into(), "--merged".into()],
        vec!["doctor".into()],
        vec!["review".into()],
        vec!["review".into(), id.clone()],
        vec!["review".into(), id.clone(), "--json".into()],
        vec!["autocommit".into(), id.clone()],
        vec!["publish".into(), id.clone()],
        vec!["merge".into(), id.clone()],
        vec!["agent".into(), id.clone()],
        vec!["run".into(), id.clone(), "--".into(), "true".into()],
        vec!["rm".into(), id.clone()],
        vec!["rm".into(), id.clone(), "--force".into()],
    ];
    for args in steps {
        let run = env.run(&args);
        assert!(
            !marker.exists(),
            "a planted command ran on the host during `git loop {}`:\n{}\n{}",
            args.join(" "),
            run.stdout,
            run.stderr
        );
        if args[0] == "rm" && args.len() == 2 {
            assert_eq!(run.code, 1, "rm refuses a dirty loop:\n{}", run.stderr);
        }
    }
    assert!(!env.loop_dir(&id).exists(), "rm --force removed the loop");
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
}

/// ATTACKS 32: the person's own git in a loop's folder (`git status` where `new` said the
/// workdir is) runs nothing the agent wrote: not through the repository's config or hooks
/// (git-loop's, read-only inside), not through `commondir`, not through a nested
/// repository committed as a gitlink (which the profile lets the loop make here: by
/// default none can be, tests/it/nested.rs), whose commit moved, not even where the
/// person's own global config asks git to enter submodules, not through attributes naming
/// filters. (`git add -A` at the root is the one command that enters such a submodule
/// whatever the config says: hence the default refusal.)
#[test]
fn the_users_own_git_in_a_loops_folder_runs_nothing_the_agent_wrote() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "own git");
    // The working tree's `.gitmodules` is refused when made unless the profile says so
    // (tests/it/fsevents.rs); said here, so what the person's git does with it is tried.
    env.write_profile("[filesystem]\nallow_write = [\".gitmodules\", \"**/.git\"]\n");
    env.run([
        "config",
        "set",
        "--operator",
        "sandbox.allow_nested_git",
        "true",
    ])
    .ok();
    let marker = env.root.join("PWNED-own-git");
    let cmd = format!("touch {}", q(&marker));
    let script = format!(
        r##"C={cmd_q}
nested() {{
  d=$1
  mkdir -p "$d/evil" && cd "$d/evil" && git init -q && git commit -q --allow-empty -m x &&
  git config core.fsmonitor "$C" && git config core.pager "$C" &&
  printf '#!/bin/sh\n%s\n' "$C" > .git/hooks/post-index-change && chmod +x .git/hooks/post-index-change &&
  cd "$d" && git add evil 2>/dev/null &&
  printf '[submodule "evil"]\n\tpath = evil\n\turl = ./evil\n' > .gitmodules &&
  printf '* filter=evil diff=evil\n' > .gitattributes &&
  git add .gitmodules .gitattributes && git commit -qm "gitlink" &&
  moved "$d/evil" &&
  echo change > "$d/evil/dirty" && echo dirty >> "$d/.gitattributes"
}}
# The submodule's commit moves past its gitlink: signed, with a file whose diff runs a
# program of the submodule's (what `git status` runs where `status.submoduleSummary` is
# on, and `git diff` where `diff.submodule = diff`).
moved() {{
  cd "$1" && printf '#!/bin/sh\n%s\ncat "$@"\n' "$C" > run.sh && chmod +x run.sh &&
  echo '* diff=evil' > .gitattributes && echo a > f && git add f .gitattributes && git commit -qm content &&
  c=$(printf 'tree %s\nparent %s\nauthor a <a@a> 1700000000 +0000\ncommitter a <a@a> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n x\n -----END PGP SIGNATURE-----\n\nsigned\n' "$(git rev-parse 'HEAD^{{tree}}')" "$(git rev-parse HEAD)" | git hash-object -t commit -w --stdin) &&
  git update-ref HEAD "$c" &&
  git config log.showSignature true && git config gpg.program ./run.sh && git config diff.evil.textconv ./run.sh
}}
works nested-workdir 'nested "$PWD"'
works nested-notes 'nested /loopat/context/notes'
"##,
        cmd_q = q(Path::new(&cmd)),
    );
    inside(&env, &id, &script);
    assert!(!marker.exists(), "a planted command ran during the run");
    // The person's own git, as a user runs it, in both of the loop's clones, with no
    // global config and with one that asks git to enter submodules.
    let global = env.root.join("person.gitconfig");
    fs::write(
        &global,
        "[diff]\n\tsubmodule = diff\n\tignoreSubmodules = none\n[status]\n\tsubmoduleSummary = true\n\
         [submodule]\n\trecurse = true\n[fetch]\n\trecurseSubmodules = on-demand\n\
         [push]\n\trecurseSubmodules = on-demand\n",
    )
    .unwrap();
    let persons_git = |dir: &Path, global: &Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .env_clear()
            .envs(env.envs())
            .env("GIT_CONFIG_GLOBAL", global)
            .current_dir(dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    for (dir, global) in [
        (env.workdir(&id), Path::new("/dev/null")),
        (env.loop_notes(&id), Path::new("/dev/null")),
        (env.workdir(&id), global.as_path()),
        (env.loop_notes(&id), global.as_path()),
    ] {
        for args in [
            &["status"][..],
            &["status", "--porcelain"],
            &["diff"],
            &["diff", "HEAD~1"],
            &["log", "-p", "-2"],
            &["show", "HEAD"],
            &["stash", "list"],
            &["branch", "-vv"],
            &["fetch", "-q", "origin"],
            &["pull", "-q", "--no-rebase", "--no-edit", "origin", "HEAD"],
            &["submodule", "status"],
            &["commit", "-q", "-a", "-m", "person"],
            &["checkout", "-q", "-b", "person"],
            &["checkout", "-q", "-"],
            &["branch", "-q", "-D", "person"],
            &["reset", "-q", "HEAD~1"],
        ] {
            let out = persons_git(&dir, global, args);
            assert!(
                !marker.exists(),
                "`git {}` in {} (global config {}) ran a planted command:\n{out}",
                args.join(" "),
                dir.display(),
                global.display(),
            );
        }
        // Positive twin: the person's git sees the agent's work.
        let log = env.git(&dir, ["log", "-1", "--format=%s"]);
        assert_eq!(log.trim(), "gitlink", "{}", dir.display());
    }
    // And none of git-loop's own commands run it either.
    for args in [
        vec!["review".to_string(), id.clone()],
        vec!["autocommit".to_string(), id.clone()],
        vec!["list".to_string()],
    ] {
        env.run(&args);
        assert!(
            !marker.exists(),
            "`git loop {}` ran a planted command",
            args.join(" ")
        );
    }
}

// ---------------------------------------------------------------------------------------
// 7. An object whose content does not hash to its name.

/// Shell functions for forging loose objects: `forge KIND PATH DATA` writes a loose object
/// file holding DATA as KIND at PATH, whatever PATH's name; `objpath REPO REV` is the
/// loose file of REV in REPO.
const FORGE: &str = r##"
forge() {
  python3 -c '
import sys, zlib
kind, path, data = sys.argv[1], sys.argv[2], sys.argv[3].encode()
raw = kind.encode() + b" " + str(len(data)).encode() + b"\0" + data
open(path, "wb").write(zlib.compress(raw))
' "$@"
}
objpath() { n=$(git -C "$1" rev-parse "$2") && echo "$1/.git/objects/$(echo $n | cut -c1-2)/$(echo $n | cut -c3-)"; }
"##;

#[test]
fn a_corrupt_object_planted_inside_is_not_imported() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "corrupt");
    let refs_before = env.refs(&repo);
    let notes_refs_before = env.refs(&env.notes());
    let objects_before = snapshot(&repo.join(".git/objects"));
    let notes_objects_before = snapshot(&env.notes().join(".git/objects"));

    // Workdir: the committed blob's file gets other content; loop/<id> references it.
    let script = format!(
        r##"{FORGE}
works commit 'echo "honest content" > secret.txt && git add secret.txt && git commit -qm work'
works forge-blob 'p=$(objpath "$PWD" HEAD:secret.txt) && chmod u+w "$p" && forge blob "$p" "evil content
"'
works blob-lies '! git cat-file blob HEAD:secret.txt | grep -q honest'
echo BLOB $(git rev-parse HEAD:secret.txt)
echo TIP $(git rev-parse HEAD)
"##
    );
    let run = inside(&env, &id, &script);
    run.stderr_has("warning:").stderr_has("corrupt");
    let blob = printed(&run, "BLOB");
    let tip = printed(&run, "TIP");

    // Notes of a scratch loop: the tip commit's file gets another commit (another
    // message), so loop/<id> names a lying object.
    let scratch = env
        .run(["new", "--scratch", "corrupt notes"])
        .ok()
        .stdout
        .trim()
        .to_string();
    let script = format!(
        r##"{FORGE}
N=/loopat/context/notes
works notes-commit 'cd $N && echo fact >> inbox.md && git commit -qam fact'
works forge-commit 'p=$(objpath $N HEAD) && body=$(git -C $N cat-file commit HEAD | sed "s/^fact$/forged/") && chmod u+w "$p" && forge commit "$p" "$body
"'
works commit-lies 'git -C $N cat-file commit HEAD | grep -q forged'
echo NOTES-TIP $(git -C $N rev-parse HEAD)
"##
    );
    let run = inside(&env, &scratch, &script);
    run.stderr_has("warning:").stderr_has("corrupt");
    let notes_tip = printed(&run, "NOTES-TIP");

    assert_eq!(env.refs(&repo), refs_before, "no origin ref moved");
    assert_eq!(
        changed_refs(&notes_refs_before, &env.refs(&env.notes())),
        vec![format!(
            "+refs/heads/loop/{scratch} {}",
            env.rev(&env.notes(), "main").unwrap()
        )],
        "no notes origin ref moved (the scratch loop's branch stays at trunk)"
    );
    for (origin, obj) in [
        (repo.clone(), &blob),
        (repo.clone(), &tip),
        (env.notes(), &notes_tip),
    ] {
        assert_ne!(
            env.git_out(&origin, ["cat-file", "-e", obj]).code,
            0,
            "{obj} reached {}",
            origin.display()
        );
        env.git(&origin, ["fsck", "--strict", "--no-dangling"]);
    }
    assert_kept(
        "the origin's objects",
        &objects_before,
        &snapshot(&repo.join(".git/objects")),
    );
    assert_kept(
        "the notes origin's objects",
        &notes_objects_before,
        &snapshot(&env.notes().join(".git/objects")),
    );
}

// ---------------------------------------------------------------------------------------
// 8. Symlinks and hardlinks.

#[test]
fn symlinks_to_host_paths_and_hardlinks_to_read_only_files_lead_nowhere() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "links");
    let (secret, set_s) = secret("links", "S");
    let key = env.home.join(".ssh/id_ed25519");
    write(&key, &format!("{secret} key\n"));
    let precious = env.root.join("precious");
    write(
        &precious.join("secret.txt"),
        &format!("{secret} precious\n"),
    );
    write(&precious.join("deep/keep.txt"), "keep me\n");
    let home_before = snapshot(&env.home);
    let precious_before = snapshot(&precious);
    let knowledge_before = snapshot(&env.ws.join("context/knowledge"));
    let repo_refs_before = env.refs(&repo);

    let script = format!(
        r##"
{set_s}
KEY={key}
PRE={precious}
NOTES=/loopat/context/notes
P=/loopat/context/personal
works plant-links 'ln -s "$KEY" key && ln -s "$PRE" precious && ln -s "$PRE/secret.txt" direct && ln -s /etc/shadow shadow && ln -s "../../../../../../..$PRE/secret.txt" climb && ln -s "/proc/self/root$KEY" viaproc'
works plant-notes-links 'ln -s "$KEY" "$NOTES/key" && ln -s "$PRE" "$NOTES/precious"'
works plant-personal-links 'ln -s "$PRE" "$P/memory/precious" && ln -s "$KEY" "$P/memory/key"'
works plant-home-links 'ln -s "$PRE" "$HOME/precious" && ln -s "$KEY" "$HOME/key"'
works commit-links 'git add -A && git commit -qm links && git -C "$NOTES" add -A && git -C "$NOTES" commit -qm links'
attack read-key-link read-own-file "$NOENT" 'cat key'
attack read-dir-link list-own-folder "$NOENT" 'ls precious/'
attack read-direct-link read-own-file "$NOENT" 'cat direct'
attack read-climb-link read-own-file "$NOENT" 'cat climb'
attack read-proc-link read-own-file "$NOENT" 'cat viaproc'
attack read-notes-links read-own-file "$NOENT" 'cat "$NOTES/key" || ls "$NOTES/precious/"'
attack read-personal-links read-own-file "$NOENT" 'cat "$P/memory/key" || ls "$P/memory/precious/"'
attack read-home-links read-own-file "$NOENT" 'cat "$HOME/key" || ls "$HOME/precious/"'
attack shadow-holds-secret read-own-file "$EACCES" 'grep -qF "$S" shadow'
attack write-through-link write-own-file "Directory nonexistent|$NOENT" 'echo pwned > direct'
attack write-through-dir-link write-own-file "Directory nonexistent|$NOENT" 'echo pwned > precious/planted'
attack hardlink-knowledge hardlink-own "$EXDEV|Invalid cross-device link|$EPERM" 'ln /loopat/context/knowledge/README.md ./hard-knowledge'
attack hardlink-repo hardlink-own "$NOENT" 'ln /loopat/context/repos/app/README.md ./hard-repo'
attack hardlink-repo-object hardlink-own "Invalid cross-device link|$EPERM" 'ln "$(find /loopat/context/repos/app/.git/objects -type f | head -1)" ./hard-object'
attack hardlink-notes-origin hardlink-own "Invalid cross-device link|$EPERM" 'ln /loopat/context/.origins/notes/inbox.md "$NOTES/hard-inbox"'
attack hardlink-personal-git hardlink-own "$NOENT" 'ln "$P/.git/config" "$P/memory/hard-config"'
attack hardlink-etc hardlink-own "Invalid cross-device link|$EPERM" 'ln /etc/passwd "$HOME/hard-passwd"'
attack hardlink-usr hardlink-own "Invalid cross-device link|$EPERM" 'ln /usr/bin/env ./hard-env'
works search-finds-a-planted-copy 'echo "$S" > /tmp/control && grep -rqsF "$S" /loopat /home /tmp /etc && rm /tmp/control'
attack grep-everything search-finds-a-planted-copy - 'grep -rqsF "$S" /loopat /home /tmp /etc'
"##,
        key = q(&key),
        precious = q(&precious),
    );
    inside(&env, &id, &script);
    // The run's import carried the links as links; nothing followed them.
    assert_eq!(
        env.git(&repo, ["cat-file", "-p", &format!("loop/{id}:key")]),
        key.display().to_string()
    );
    assert_eq!(
        changed_refs(&repo_refs_before, &env.refs(&repo))
            .iter()
            .filter(|l| !l.contains(&format!("refs/heads/loop/{id} ")))
            .count(),
        0
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    // Host-side commands walk the loop's folders without following the links either.
    env.run(["list"]).ok();
    env.run(["show", &id]).ok();
    env.run(["gc"]).ok();
    env.run(["rm", &id, "--force"]).ok();
    assert!(!env.loop_dir(&id).exists());
    assert_same("the host HOME", &home_before, &snapshot(&env.home));
    assert_same(
        "a host folder a link pointed at",
        &precious_before,
        &snapshot(&precious),
    );
    assert_same(
        "knowledge",
        &knowledge_before,
        &snapshot(&env.ws.join("context/knowledge")),
    );
    let personal_memory = env.ws.join("personal/tester/memory");
    assert!(fs::symlink_metadata(personal_memory.join("precious"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn symlinked_objects_do_not_smuggle_host_objects_into_an_origin() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    // A private repository elsewhere on the host, loose (for the workdir) and packed (for
    // notes); the sandbox learns their host paths (e.g. from /proc/self/mountinfo).
    let private = env.repo("private");
    env.commit_file(&private, "secret.txt", "private\n", "private work");
    let private_head = env.rev(&private, "HEAD").unwrap();
    let packed = env.root.join("private-packed");
    env.git(
        &env.root,
        [
            "clone",
            "-q",
            private.to_str().unwrap(),
            packed.to_str().unwrap(),
        ],
    );
    env.git(&packed, ["repack", "-q", "-a", "-d"]);
    let loose: Vec<String> = walk_files(&private.join(".git/objects"))
        .into_iter()
        .filter(|p| !p.contains("pack") && !p.contains("info"))
        .collect();
    let packs: Vec<String> = walk_files(&packed.join(".git/objects/pack"));
    assert!(!loose.is_empty() && !packs.is_empty());
    let id = env.new_loop(&repo, "smuggle");
    let refs_before = env.refs(&repo);
    let notes_refs_before = env.refs(&env.notes());

    let mut script = String::from("set -e\n");
    for rel in &loose {
        // <root>/private/.git/objects/ab/cdef...: link each into the workdir's objects.
        script.push_str(&format!(
            "mkdir -p .git/objects/{dir} && ln -sf {host} .git/objects/{rel}\n",
            dir = &rel[..2],
            host = q(&private.join(".git/objects").join(rel)),
        ));
    }
    for rel in &packs {
        script.push_str(&format!(
            "ln -sf {host} /loopat/context/notes/.git/objects/pack/{rel}\n",
            host = q(&packed.join(".git/objects/pack").join(rel)),
        ));
    }
    script.push_str(&format!(
        "mkdir -p .git/refs/heads/loop /loopat/context/notes/.git/refs/heads/loop\n\
         echo {private_head} > .git/refs/heads/loop/$GIT_LOOP_ID\n\
         echo {private_head} > /loopat/context/notes/.git/refs/heads/loop/$GIT_LOOP_ID\n\
         works read-own-object 'git cat-file -p origin/main >/dev/null'\n\
         attack private-readable-inside read-own-object \"could not get object info|Not a valid object name|fatal\" 'git cat-file -p {private_head}'\n\
         set +e\n"
    ));
    inside(&env, &id, &script);
    for origin in [repo.clone(), env.notes()] {
        assert_ne!(
            env.git_out(&origin, ["cat-file", "-e", &private_head]).code,
            0,
            "an object of another host repository reached {}",
            origin.display()
        );
        env.git(&origin, ["fsck", "--strict", "--no-dangling"]);
    }
    assert_eq!(env.refs(&repo), refs_before);
    assert_eq!(env.refs(&env.notes()), notes_refs_before);
}

/// Paths of the files under `dir`, relative to it.
fn walk_files(dir: &Path) -> Vec<String> {
    snapshot(dir)
        .into_iter()
        .filter(|(_, v)| v.starts_with("file "))
        .map(|(k, _)| k)
        .collect()
}

// ---------------------------------------------------------------------------------------
// 9. Renaming or unlinking an ancestor of a hidden path.

/// The folder that hides the personal history (which once held the vaults) cannot be
/// moved, removed or unmounted, nor the folders it hangs from.
#[test]
fn the_folder_over_the_personal_history_cannot_be_moved_or_unmounted() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "history move");
    let (secret, set_s) = secret("moved", "S");
    let personal = env.ws.join("personal/tester");
    write(&personal.join("memory/old.md"), &format!("{secret}\n"));
    env.git(&personal, ["add", "-A"]);
    env.git(&personal, ["commit", "-q", "-m", "in history"]);
    fs::remove_file(personal.join("memory/old.md")).unwrap();
    let git_before = snapshot(&personal.join(".git"));

    let script = r##"
P=/loopat/context/personal
attack mv-personal-git mv-own-file "$EBUSY" 'mv "$P/.git" "$P/git-moved"'
attack rename-git-python mv-own-file "Device or resource busy|Errno 16" 'python3 -c "import os; os.rename(\"$P/.git\", \"$P/g2\")"'
attack rmdir-git rm-own-tree "$EBUSY|$EROFS|Directory not empty" 'rmdir "$P/.git"'
attack umount-git git-in-own-repo "$EPERM|must be superuser|not permitted" 'umount "$P/.git"'
attack umount-lazy-git git-in-own-repo "$EPERM|must be superuser|not permitted" 'umount -l "$P/.git"'
attack mv-personal mv-own-file "$EROFS|$EBUSY" 'mv "$P" /loopat/context/personal-moved && ls -A /loopat/context/personal-moved/.git | grep -q .'
attack mv-loopat mv-own-file "$EBUSY" 'mv "$P/.loopat" "$P/moved"'
attack history-visible list-own-folder - 'ls -A "$P/.git" | grep -q .'
"##;
    let first = sandboxed(&env, &id, script);

    // On the next run the history is still hidden (checked before the first run's
    // verdicts, to show what a successful move would expose).
    let next = format!(
        r##"
{set_s}
attack history-visible-next-run list-own-folder - 'ls -A /loopat/context/personal/.git | grep -q .'
works search-finds-a-planted-copy 'echo "$S" > /tmp/control && grep -rqsF "$S" /loopat /home /tmp && rm /tmp/control'
attack grep-next-run search-finds-a-planted-copy - 'grep -rqsF "$S" /loopat /home /tmp'
"##
    );
    inside(&env, &id, &next);
    assert_same(
        "personal .git",
        &git_before,
        &snapshot(&personal.join(".git")),
    );
    check_verdicts(&format!("{PRELUDE}\n{script}"), &first);
}

// ---------------------------------------------------------------------------------------
// 10. The personal repository's .git is read-only; its files are not.

/// The personal repository's files are the agent's to write; its git folder is hidden
/// (an empty read-only folder): its history is git-loop's, and held the vaults once.
#[test]
fn personal_git_is_read_only_and_personal_files_are_writable() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "personal");
    let personal = env.ws.join("personal/tester");
    let git_before = snapshot(&personal.join(".git"));
    let refs_before = env.refs(&personal);

    let script = r##"
P=/loopat/context/personal
attack write-config write-own-file "$EROFS" 'echo "[core]" >> "$P/.git/config"'
attack replace-config mv-own-file "$NOENT" 'cp "$P/.git/config" /tmp/c && echo x >> /tmp/c && mv /tmp/c "$P/.git/config"'
attack git-config git-in-own-repo "not in a git directory" 'git -C "$P" config core.hooksPath /tmp'
attack plant-hook mkdir-own "$EROFS" 'mkdir -p "$P/.git/hooks" && printf "#!/bin/sh\ntrue\n" > "$P/.git/hooks/post-commit"'
attack git-add git-in-own-repo "not a git repository" 'echo new > "$P/memory/staged.md" && git -C "$P" add memory/staged.md'
attack git-commit git-in-own-repo "not a git repository" 'git -C "$P" commit -q --allow-empty -m pwned'
attack update-ref git-in-own-repo "not a git repository" 'git -C "$P" update-ref refs/heads/evil HEAD'
attack branch git-in-own-repo "not a git repository" 'git -C "$P" branch evil'
attack plant-objects mkdir-own "$EROFS" 'mkdir "$P/.git/objects"'
attack plant-head write-own-file "$EROFS" 'echo "ref: refs/heads/evil" > "$P/.git/HEAD"'
attack read-history git-in-own-repo "not a git repository" 'git -C "$P" log --oneline -1'
attack list-git list-own-folder - 'ls -A "$P/.git" | grep -q .'
attack mv-git mv-own-file "$EBUSY" 'mv "$P/.git" "$P/git-moved"'
attack rmdir-git rm-own-tree "$EBUSY|$EROFS|Directory not empty" 'rm -rf "$P/.git" && test ! -e "$P/.git"'
attack chmod-git chmod-own-file "$NOENT" 'chmod 777 "$P/.git/config"'
works write-memory 'echo "remember this" > "$P/memory/topic.md"'
works append-memory 'echo "- topic.md" >> "$P/memory/MEMORY.md"'
works mkdir-memory 'mkdir -p "$P/memory/sub" && echo deep > "$P/memory/sub/deep.md"'
works read-memory-back 'grep -q "remember this" "$P/memory/topic.md"'
"##;
    inside(&env, &id, script);
    let git_after = snapshot(&personal.join(".git"));
    assert_same("personal .git", &git_before, &git_after);
    assert_eq!(env.refs(&personal), refs_before);
    env.git(&personal, ["fsck", "--strict", "--no-dangling"]);
    assert_eq!(
        fs::read_to_string(personal.join("memory/topic.md")).unwrap(),
        "remember this\n"
    );
    assert_eq!(
        fs::read_to_string(personal.join("memory/sub/deep.md")).unwrap(),
        "deep\n"
    );
    // The memory is there on the next run too (and from another loop).
    let other = env.new_loop(&repo, "other");
    inside(
        &env,
        &other,
        "works memory-persists 'grep -q \"remember this\" /loopat/context/personal/memory/topic.md'",
    );
}

#[test]
fn personal_config_written_inside_cannot_turn_the_sandbox_off() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "config");
    // The personal repository's files are writable inside; its .loopat/config.toml is a
    // config layer. What the agent writes there must not widen its next sandbox.
    let script = r##"
C=/loopat/context/personal/.loopat/config.toml
printf '[sandbox]\nbackend = "none"\n\n[network]\nmode = "host"\n' > "$C" 2>/dev/null
echo WROTE $?
"##;
    inside(&env, &id, script);
    let next = env.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        "if [ -d /loopat/context ]; then echo IN-SANDBOX; else echo ON-THE-HOST; fi",
    ]);
    assert!(
        next.stdout.contains("IN-SANDBOX") && !next.stderr.contains("NO SANDBOX"),
        "a config the agent wrote inside turned the sandbox off for the next run:\nstdout:\n{}\nstderr:\n{}",
        next.stdout,
        next.stderr
    );
}

// ---------------------------------------------------------------------------------------
// Twins: $HOME persists per loop, knowledge is readable.

#[test]
fn home_persists_per_loop_and_knowledge_is_readable() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "home");
    let other = env.new_loop(&repo, "other home");
    let home_before = snapshot(&env.home);
    let script = r##"
works write-home 'mkdir -p "$HOME/.ssh" "$HOME/.cache/tool" && echo "github.com ssh-ed25519 AAAA" > "$HOME/.ssh/known_hosts" && echo cached > "$HOME/.cache/tool/state"'
works home-is-home 'test "$HOME" = "/home/$USER" && cd && pwd'
works read-knowledge 'cat /loopat/context/knowledge/README.md && git -C /loopat/context/knowledge log --oneline -1'
works read-notes-origin 'git -C /loopat/context/notes log --oneline -1 origin/main'
"##;
    inside(&env, &id, script);
    inside(
        &env,
        &id,
        "works home-persists 'grep -q github.com \"$HOME/.ssh/known_hosts\" && grep -q cached \"$HOME/.cache/tool/state\"'",
    );
    inside(
        &env,
        &other,
        "attack other-loop-sees-my-home own-file-exists - 'test -e \"$HOME/.ssh/known_hosts\" || test -e \"$HOME/.cache/tool/state\"'",
    );
    assert!(env
        .loop_dir(&id)
        .join("home/upper/.ssh/known_hosts")
        .is_file());
    assert_same("the host HOME", &home_before, &snapshot(&env.home));
}

/// The operator config (outside the workspace, out of the sandbox's reach) with an
/// `agent.command` that runs `script` with `sh -c`, so `git loop agent` needs no Claude.
fn operator_agent(env: &TestEnv, script: &str) {
    let text = format!(
        "[agent]\ncommand = [\"sh\", \"-c\", {}]\n",
        toml_string(script)
    );
    write(&env.home.join(".config/git-loop/config.toml"), &text);
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[test]
fn links_planted_in_the_agent_folder_do_not_pull_host_files_in() {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "claude links");
    let (secret, set_s) = secret("docker", "S");
    // A JSON file of the host holding a credential (an object, so it merges as settings).
    let docker = env.home.join(".docker/config.json");
    write(
        &docker,
        &format!("{{\"auths\": {{\"registry.example\": {{\"auth\": \"{secret}\"}}}}}}\n"),
    );
    let notes_target = env.home.join(".config/gh/hosts.yml");
    write(&notes_target, &format!("{secret}: gh\n"));
    let home_before = snapshot(&env.home);

    // Run 1: the agent replaces its settings and doctrine with links to host files.
    let script = format!(
        r##"
C="/loopat/loop/$GIT_LOOP_ID/.claude"
works link-settings 'ln -sf {docker} "$C/settings.json"'
works link-claude-json 'ln -sf {docker} "$C/.claude.json"'
works link-doctrine 'rm -f "$C/CLAUDE.md"; ln -s {gh} "$C/CLAUDE.md" || test -e "$C/CLAUDE.md"'
attack read-through-links read-own-file "$NOENT" 'cat "$C/settings.json" || cat "$C/.claude.json"'
"##,
        docker = q(&docker),
        gh = q(&notes_target),
    );
    inside(&env, &id, &script);

    // Run 2: `git loop agent` writes the layers on the host, then the "agent" looks.
    let agent_script = format!(
        r##"{PRELUDE}
{set_s}
C="/loopat/loop/$GIT_LOOP_ID/.claude"
works search-finds-a-planted-copy 'echo "$S" > /tmp/control && grep -rqsF "$S" /loopat /home /tmp /etc && rm /tmp/control'
attack secret-in-claude-folder search-finds-a-planted-copy - 'grep -rqsF "$S" "$C"'
attack grep-everything search-finds-a-planted-copy - 'grep -rqsF "$S" /loopat /home /tmp /etc'
"##
    );
    operator_agent(&env, &agent_script);
    let run = env.run(["agent", &id]);
    assert_eq!(
        run.code, 0,
        "git loop agent failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stdout.contains("IN-SANDBOX"), "{}", run.stdout);
    // The host's files were neither read into the loop nor written.
    // A link the agent left behind and nothing read is harmless (inside it points at
    // nothing); a regular file holding the secret would mean git-loop copied it in.
    for f in ["settings.json", ".claude.json", "CLAUDE.md"] {
        let p = env.loop_dir(&id).join(".claude").join(f);
        let is_link = p
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            continue;
        }
        if let Ok(text) = fs::read_to_string(&p) {
            assert!(!text.contains(&secret), "{f} holds a host secret:\n{text}");
        }
    }
    check_verdicts(&format!("{PRELUDE}\n{agent_script}"), &run);
    let mut home_after = snapshot(&env.home);
    home_after.retain(|k, _| !k.starts_with(".config/git-loop"));
    let mut home_before = home_before;
    home_before.retain(|k, _| !k.starts_with(".config/git-loop"));
    assert_same("the host HOME", &home_before, &home_after);
}

// ---------------------------------------------------------------------------------------
// A file handed to the command on a descriptor.

/// Python that prints `OK label` or `REFUSED label: <the error>` for each attempt.
const ATTEMPT: &str = r#"
import os, sys
def attempt(label, f):
    try:
        f()
        print("OK", label)
    except OSError as e:
        print("REFUSED", label + ":", e.strerror)
"#;

/// A loop whose working tree holds `notes.txt`, and a file of the host's (`handed.txt`,
/// outside every view) to hand to a command on a descriptor.
fn handed_setup() -> (TestEnv, String, PathBuf) {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "handed");
    fs::write(env.workdir(&id).join("notes.txt"), "notes\n").unwrap();
    let handed = env.root.join("handed.txt");
    fs::write(&handed, "the host's\n").unwrap();
    (env, id, handed)
}

/// `git loop run -q ID --net none -- python3 -c PROGRAM < handed` (its standard output
/// appended to `log` where one is given).
fn run_handed(
    env: &TestEnv,
    id: &str,
    program: &str,
    handed: &Path,
    log: Option<&Path>,
) -> std::process::Output {
    let mut cmd = env.command();
    cmd.args([
        "run", "-q", id, "--net", "none", "--", "python3", "-c", program,
    ])
    .current_dir(&env.root)
    .stdin(fs::File::open(handed).unwrap());
    if let Some(log) = log {
        cmd.stdout(fs::OpenOptions::new().append(true).open(log).unwrap());
    }
    cmd.output().unwrap()
}

/// A file handed to a sandbox on its standard input (`git loop run ... < notes.txt`) lies
/// outside its view, and the descriptor reads only. Opening it again through /proc for
/// writing would write the host's file (the kernel checks the file's mode there, not the
/// descriptor's): refused by each name of the caller's descriptor (`/dev/stdin`,
/// `/dev/fd/0`, `/proc/self/fd/0`, and with `O_TRUNC`), one event each; what reaches pid
/// 1's own descriptors (`/proc/1/fd/0`, a link to `/proc/self/fd/0`, which pid 1 opens as
/// its own) finds /dev/null there once the command runs; the file is unchanged. Twins: it
/// reads; a descriptor the command opened for reading and writing opens again for writing;
/// `/dev/stdout` writes.
#[test]
fn a_file_handed_to_read_is_not_written_through_its_descriptor() {
    let (env, id, handed) = handed_setup();
    let program = ATTEMPT.to_string()
        + r#"
def write(path):
    with open(path, "a") as f:
        f.write("changed inside\n")
os.symlink("/proc/self/fd/0", "stdin-link")
print("READ", sys.stdin.read().strip())
for p in ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "stdin-link", "/proc/1/fd/0"]:
    attempt(p, lambda: write(p))
attempt("truncate", lambda: os.close(os.open("/proc/self/fd/0", os.O_RDONLY | os.O_TRUNC)))
fd = os.open("notes.txt", os.O_RDWR)
attempt("own read-write", lambda: write("/proc/self/fd/%d" % fd))
attempt("stdout", lambda: write("/dev/stdout"))
"#;
    let out = run_handed(&env, &id, &program, &handed, None);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("READ the host's"), "{stdout}");
    for p in ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "truncate"] {
        assert!(
            stdout.contains(&format!("REFUSED {p}: Permission denied")),
            "{p}: {stdout}"
        );
    }
    // pid 1's standard input is /dev/null once the command runs.
    assert!(stdout.contains("OK /proc/1/fd/0"), "{stdout}");
    assert!(stdout.contains("OK stdin-link"), "{stdout}");
    assert!(stdout.contains("OK own read-write"), "{stdout}");
    assert!(stdout.contains("OK stdout"), "{stdout}");
    assert_eq!(fs::read_to_string(&handed).unwrap(), "the host's\n");
    assert_eq!(
        fs::read_to_string(env.workdir(&id).join("notes.txt")).unwrap(),
        "notes\nchanged inside\n"
    );
    let said = crate::fsevents::refusals(&env, &id);
    let handed_events: Vec<&String> = said
        .iter()
        .filter(|l| l.contains("never opened again for writing"))
        .collect();
    assert_eq!(handed_events.len(), 4, "{said:#?}");
}

/// A file handed to the command on a descriptor is the host's, outside the view: the
/// descriptor reads (or writes) it, and nothing reached through it changes its mode,
/// owner, times, attributes or length, by the descriptor itself (`fchmod`) or by one of
/// its /proc forms (`chmod /proc/self/fd/0`), which init would otherwise do for the
/// caller as the file's owner.
#[test]
fn a_file_handed_on_a_descriptor_keeps_its_mode_owner_times_and_length() {
    let (env, id, handed) = handed_setup();
    let log = env.root.join("runs.log");
    fs::write(&log, "before\n").unwrap();
    let before = |p: &std::path::Path| {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(p).unwrap();
        (
            m.mode(),
            m.uid(),
            m.gid(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
        )
    };
    let (handed_was, log_was) = (before(&handed), before(&log));
    let program = ATTEMPT.to_string()
        + r#"
def changes(p, label=None):
    label = label or str(p)
    if not isinstance(p, int):
        # (`ftruncate` is the descriptor's own: EINVAL where it reads only, done where
        # it writes.)
        attempt("truncate " + label, lambda: os.truncate(p, 3))
    attempt("chmod " + label, lambda: os.chmod(p, 0o600))
    attempt("chown " + label, lambda: os.chown(p, os.getuid(), os.getgid()))
    attempt("utime " + label, lambda: os.utime(p, (1, 1)))
    attempt("setxattr " + label, lambda: os.setxattr(p, "user.x", b"1"))
for p in ["/dev/stdin", "/proc/self/fd/0", "/proc/thread-self/fd/0", 0, "/proc/self/fd/1", 1]:
    changes(p)
print("READ", sys.stdin.read().strip())
os.write(1, b"written inside\n")
fd = os.open("notes.txt", os.O_RDONLY)
changes("/proc/self/fd/%d" % fd, "tree-proc")
changes(fd, "tree-fd")
"#;
    let out = run_handed(&env, &id, &program, &handed, Some(&log));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = fs::read_to_string(&log).unwrap();
    let handed_forms = [
        "/dev/stdin",
        "/proc/self/fd/0",
        "/proc/thread-self/fd/0",
        "0",
        "/proc/self/fd/1",
        "1",
    ];
    for p in handed_forms {
        for call in ["truncate", "chmod", "chown", "utime", "setxattr"] {
            if call == "truncate" && (p == "0" || p == "1") {
                continue;
            }
            assert!(
                said.contains(&format!("REFUSED {call} {p}: Permission denied")),
                "{call} {p}: {said}"
            );
        }
    }
    // Twins: the handed descriptors still read and write; a file of the tree opened for
    // reading is changed through its /proc form and its descriptor as by its name.
    assert!(said.contains("READ the host's"), "{said}");
    assert!(said.contains("written inside"), "{said}");
    for call in ["truncate", "chmod", "chown", "utime", "setxattr"] {
        assert!(said.contains(&format!("OK {call} tree-proc")), "{said}");
        if call != "truncate" {
            assert!(said.contains(&format!("OK {call} tree-fd")), "{said}");
        }
    }
    use std::os::unix::fs::MetadataExt;
    let notes = fs::metadata(env.workdir(&id).join("notes.txt")).unwrap();
    assert_eq!(
        (notes.mode() & 0o777, notes.len(), notes.mtime()),
        (0o600, 3, 1)
    );
    assert_eq!(before(&handed), handed_was);
    assert_eq!(fs::read_to_string(&handed).unwrap(), "the host's\n");
    let log_now = before(&log);
    assert_eq!(
        (log_now.0, log_now.1, log_now.2),
        (log_was.0, log_was.1, log_was.2)
    );
    assert!(fs::read_to_string(&log).unwrap().starts_with("before\n"));
    assert!(xattr_names(&handed).is_empty() && xattr_names(&log).is_empty());
    let events = crate::fsevents::refusals(&env, &id);
    let outside: Vec<&String> = events
        .iter()
        .filter(|l| l.contains("handed to the command on a descriptor"))
        .collect();
    assert_eq!(outside.len(), 28, "{events:#?}");
}

/// The names of the extended attributes of `p` (`getfattr`'s, without the tool).
fn xattr_names(p: &std::path::Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    let mut buf = vec![0u8; 4096];
    // SAFETY: listxattr writes at most buf.len() bytes into buf; a NUL-terminated path.
    let n = unsafe { libc::listxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    assert!(n >= 0, "listxattr {}", p.display());
    buf.truncate(n as usize);
    buf
}
