//! The import (DESIGN 4.1): a loop's branch reaches its origin only as verified objects and
//! one compare-and-swap ref update, and nothing the loop repository configures runs.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::TestEnv;

/// Writes a loose object file named `name` holding `content` (zlib of `blob N\0...`),
/// which need not hash to `name`: the corrupt object an attacker would plant.
fn plant_loose(git_dir: &Path, name: &str, kind: &str, content: &[u8]) {
    let mut raw = format!("{kind} {}\0", content.len()).into_bytes();
    raw.extend_from_slice(content);
    let path = git_dir.join("objects").join(&name[..2]).join(&name[2..]);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = fs::remove_file(&path);
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys,zlib; sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&raw).unwrap();
    let out = child.wait_with_output().unwrap();
    fs::write(path, out.stdout).unwrap();
}

fn object_path(git_dir: &Path, id: &str) -> PathBuf {
    git_dir.join("objects").join(&id[..2]).join(&id[2..])
}

#[test]
fn a_corrupt_object_is_refused_and_the_origin_stays_clean() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "corrupt");
    let wd = env.workdir(&id);
    env.commit_file(&wd, "secret.txt", "honest content\n", "work");
    let blob = env
        .git(&wd, ["rev-parse", "HEAD:secret.txt"])
        .trim()
        .to_string();
    let before = env.refs(&repo);
    // The blob's file now holds other content: its name no longer matches.
    plant_loose(&wd.join(".git"), &blob, "blob", b"evil content\n");

    env.run(["show", &id])
        .fails(1)
        .stderr_has("corrupt")
        .stderr_has("nothing of it reached the origin");
    assert_eq!(env.refs(&repo), before, "no origin ref moved");
    assert!(
        !object_path(&repo.join(".git"), &blob).exists(),
        "the corrupt object was not written"
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    let list = env.run(["list"]).ok();
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("error")),
        "{}",
        list.stdout
    );
}

#[test]
fn import_copies_only_missing_objects_and_moves_only_the_loop_branch() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "import");
    let wd = env.workdir(&id);
    // The agent commits, amends, branches, and rebases in its own repository.
    env.commit_file(&wd, "a.c", "int a;\n", "a");
    env.git(&wd, ["commit", "-q", "--amend", "-m", "a, amended"]);
    env.git(&wd, ["branch", "experiment"]);
    env.git(&wd, ["tag", "mine"]);
    env.commit_file(&wd, "b/c/d.c", "int d;\n", "nested");
    let tip = env.rev(&wd, "HEAD").unwrap();
    let before = env.refs(&repo);
    let objects_before = env.git(&repo, ["count-objects", "-v"]);

    env.run(["show", &id]).ok();
    assert_eq!(env.rev(&repo, &format!("loop/{id}")).unwrap(), tip);
    let after = env.refs(&repo);
    for line in before
        .lines()
        .filter(|l| !l.starts_with(&format!("refs/heads/loop/{id} ")))
    {
        assert!(after.contains(line), "{line} changed");
    }
    assert!(
        !after.contains("experiment") && !after.contains("refs/tags/mine"),
        "only loop/<id> is imported"
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    assert_ne!(env.git(&repo, ["count-objects", "-v"]), objects_before);
    // A second import has nothing to do.
    let objects_mid = env.git(&repo, ["count-objects", "-v"]);
    env.run(["show", &id]).ok();
    assert_eq!(env.git(&repo, ["count-objects", "-v"]), objects_mid);

    // A rewritten history (reset to the base) is imported as well: the branch is the loop's.
    env.git(&wd, ["reset", "-q", "--hard", "HEAD~2"]);
    env.run(["list"]).ok();
    assert_eq!(env.rev(&repo, &format!("loop/{id}")), env.rev(&wd, "HEAD"));
}

#[test]
fn tampered_alternates_are_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let other = env.repo("private");
    env.commit_file(&other, "secret.txt", "private\n", "private work");
    let id = env.new_loop(&repo, "alt");
    let wd = env.workdir(&id);
    fs::write(
        wd.join(".git/objects/info/alternates"),
        format!("{}\n", other.join(".git/objects").display()),
    )
    .unwrap();
    let private_head = env.rev(&other, "HEAD").unwrap();
    fs::create_dir_all(wd.join(".git/refs/heads/loop")).unwrap();
    fs::write(
        wd.join(".git/refs/heads/loop").join(&id),
        format!("{private_head}\n"),
    )
    .unwrap();
    env.run(["show", &id]).fails(1).stderr_has("alternates");
    assert!(
        env.git_out(&repo, ["cat-file", "-e", &private_head]).code != 0,
        "no object of another repository reached the origin"
    );
}

#[test]
fn planted_hooks_and_config_never_run_on_the_host() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "planted");
    let wd = env.workdir(&id);
    let marker = env.root.join("PWNED");
    let cmd = format!("touch {}", marker.display());
    for dir in [wd.clone(), env.loop_notes(&id)] {
        let git_dir = dir.join(".git");
        fs::create_dir_all(git_dir.join("hooks")).unwrap();
        for hook in [
            "pre-commit",
            "post-checkout",
            "post-merge",
            "reference-transaction",
            "pre-push",
            "post-index-change",
            "fsmonitor-watchman",
        ] {
            let h = git_dir.join("hooks").join(hook);
            fs::write(&h, format!("#!/bin/sh\n{cmd}\n")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&h, fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut config = fs::OpenOptions::new()
            .append(true)
            .open(git_dir.join("config"))
            .unwrap();
        write!(
            config,
            "[core]\n\tfsmonitor = {cmd}\n\tpager = {cmd}\n\thooksPath = hooks\n\tsshCommand = {cmd}\n\teditor = {cmd}\n[diff]\n\texternal = {cmd}\n[filter \"evil\"]\n\tclean = {cmd}\n\tsmudge = {cmd}\n\tprocess = {cmd}\n\trequired = true\n[include]\n\tpath = /etc/passwd\n"
        )
        .unwrap();
        fs::write(dir.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
        fs::write(dir.join("dirty.c"), "modified\n").unwrap();
    }
    assert!(!marker.exists());
    env.run(["list"]).ok();
    env.run(["list", "--json"]).ok();
    env.run(["show", &id]).ok();
    env.run(["show", &id, "--json"]).ok();
    env.run(["rm", &id])
        .fails(1)
        .stderr_has("uncommitted changes");
    env.run(["gc"]).ok();
    env.run(["doctor"]);
    env.run(["rm", &id, "--force"]).ok();
    assert!(!marker.exists(), "a planted command ran on the host");
}

/// How long a command that refuses or imports may take (the forging run itself hashes and
/// compresses 2 GiB inside the sandbox, so it gets longer).
const BOUND: Duration = Duration::from_secs(120);
const FORGING_BOUND: Duration = Duration::from_secs(600);
/// Peak resident set git-loop may reach while refusing an object of 2 GiB, or importing one
/// of 20 MB: the import holds one object at a time, read from its header first.
const RSS_BOUND_KIB: u64 = 256 << 10;

/// Every file below `.git/objects` of `repo` with its size, and every ref: what an origin
/// holds, to show that nothing was added.
fn origin_state(env: &TestEnv, repo: &Path) -> (String, Vec<(String, u64)>) {
    let mut files = Vec::new();
    let mut pending = vec![repo.join(".git/objects")];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                files.push((entry.path().display().to_string(), meta.len()));
            }
        }
    }
    files.sort();
    (env.refs(repo), files)
}

/// Writes a 2 GiB blob of zeros into the loop's store from inside its sandbox, streaming
/// (as a loose object, or as the one object of a pack with its index), and points
/// loop/<id> at a commit of a tree holding it. Prints `BLOB <id>`.
const FORGE_ZEROS: &str = r##"
set -e
blob=$(python3 - "$HOW" <<'PY'
import hashlib, os, struct, sys, zlib
size = 2 << 30
chunk = bytes(1 << 20)
sha = hashlib.sha1(b"blob %d\0" % size)
deflate = zlib.compressobj(1)
if sys.argv[1] == "loose":
    tmp = ".git/objects/tmp-forged"
    with open(tmp, "wb") as f:
        f.write(deflate.compress(b"blob %d\0" % size))
        for _ in range(size >> 20):
            sha.update(chunk)
            f.write(deflate.compress(chunk))
        f.write(deflate.flush())
    oid = sha.hexdigest()
    os.makedirs(".git/objects/" + oid[:2], exist_ok=True)
    os.rename(tmp, ".git/objects/%s/%s" % (oid[:2], oid[2:]))
else:
    # A pack of one blob entry (type 3), its size in the entry header, then its index (v2).
    head = [(3 << 4) | (size & 15)]
    rest = size >> 4
    while rest:
        head[-1] |= 0x80
        head.append(rest & 0x7f)
        rest >>= 7
    entry = bytes(head)
    pack_sha = hashlib.sha1()
    tmp = ".git/objects/pack/tmp-forged"
    with open(tmp, "wb") as f:
        def put(data, crc=None):
            f.write(data)
            pack_sha.update(data)
            return zlib.crc32(data, crc) if crc is not None else None
        put(b"PACK" + struct.pack(">II", 2, 1))
        crc = put(entry, 0)
        for _ in range(size >> 20):
            sha.update(chunk)
            crc = put(deflate.compress(chunk), crc)
        crc = put(deflate.flush(), crc)
        trailer = pack_sha.digest()
        f.write(trailer)
    oid = sha.hexdigest()
    raw = bytes.fromhex(oid)
    idx = b"\377tOc" + struct.pack(">I", 2)
    idx += b"".join(struct.pack(">I", 1 if i >= raw[0] else 0) for i in range(256))
    idx += raw + struct.pack(">I", crc & 0xffffffff) + struct.pack(">I", 12) + trailer
    idx += hashlib.sha1(idx).digest()
    name = ".git/objects/pack/pack-" + trailer.hex()
    os.rename(tmp, name + ".pack")
    with open(name + ".idx", "wb") as f:
        f.write(idx)
print(oid)
PY
)
tree=$(printf '100644 blob %s\tzeros.bin\n' "$blob" | git mktree)
commit=$(git commit-tree "$tree" -p HEAD -m "two gigabytes of zeros")
git update-ref "refs/heads/loop/$GIT_LOOP_ID" "$commit"
du -sk .git/objects | sed 's/^/STORE-KIB /'
echo "BLOB $blob"
"##;

/// The import refuses an object over the limit before inflating it, names it, and says how
/// to let it in; the origin gains nothing and git-loop's memory stays small. `how` is
/// `loose` or `pack`.
fn a_two_gigabyte_blob_is_refused(how: &str) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, &format!("zeros {how}"));
    let before = origin_state(&env, &repo);

    let script = format!("HOW={how}\n{FORGE_ZEROS}");
    let forged = env.run_within(FORGING_BOUND, ["run", &id, "--", "sh", "-c", &script]);
    let run = &forged.run;
    assert_eq!(
        run.code, 0,
        "the forging script failed:\n{}\n{}",
        run.stdout, run.stderr
    );
    let blob = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("BLOB "))
        .unwrap_or_else(|| panic!("no blob printed:\n{}\n{}", run.stdout, run.stderr))
        .to_string();
    let store_kib: u64 = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("STORE-KIB "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        store_kib < 64 << 10,
        "the loop stores {store_kib} KiB: not a bomb"
    );
    // The run's own import (at its end) refused, and said why.
    for needle in [
        "warning:",
        blob.as_str(),
        id.as_str(),
        "2.0 GiB",
        "more than the limit of 100.0 MiB",
        "hint: ",
        "import.max_object_size",
    ] {
        run.stderr_has(needle);
    }
    assert!(
        forged.max_rss_kib < RSS_BOUND_KIB,
        "git-loop run reached {} KiB",
        forged.max_rss_kib
    );

    // review (and show) import again, and refuse the same way, within the same bound.
    for cmd in ["review", "show"] {
        let refused = env.run_within(BOUND, [cmd, id.as_str()]);
        let run = refused.run.fails(1);
        for needle in [
            blob.as_str(),
            id.as_str(),
            "2.0 GiB",
            "100.0 MiB",
            "import.max_object_size",
        ] {
            run.stderr_has(needle);
        }
        assert!(
            refused.max_rss_kib < RSS_BOUND_KIB,
            "git loop {cmd} reached {} KiB",
            refused.max_rss_kib
        );
    }
    assert_eq!(origin_state(&env, &repo), before, "the origin changed");
    assert_ne!(env.git_out(&repo, ["cat-file", "-e", &blob]).code, 0);
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn a_two_gigabyte_loose_blob_made_inside_is_refused_by_its_header() {
    a_two_gigabyte_blob_is_refused("loose");
}

#[test]
fn a_two_gigabyte_packed_blob_made_inside_is_refused_by_its_header() {
    a_two_gigabyte_blob_is_refused("pack");
}

#[test]
fn ordinary_work_and_a_moderately_large_blob_import_and_the_limit_can_be_raised() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "big but fine");
    let script = r#"set -e
mkdir -p src
echo 'int f(void) { return 1; }' > src/f.c
python3 -c 'import os, sys; sys.stdout.buffer.write(os.urandom(20_000_000))' > data.bin
git add -A
git commit -qm "work and 20 MB of data"
git rev-parse HEAD | sed 's/^/TIP /'
"#;
    let ran = env.run_within(BOUND, ["run", &id, "--", "sh", "-c", script]);
    assert_eq!(ran.run.code, 0, "{}\n{}", ran.run.stdout, ran.run.stderr);
    assert!(!ran.run.stderr.contains("warning"), "{}", ran.run.stderr);
    let tip = ran
        .run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("TIP "))
        .unwrap()
        .to_string();
    assert_eq!(env.rev(&repo, &format!("loop/{id}")).unwrap(), tip);
    assert_eq!(
        env.git(&repo, ["cat-file", "-s", &format!("{tip}:data.bin")])
            .trim(),
        "20000000"
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    assert!(
        ran.max_rss_kib < RSS_BOUND_KIB,
        "git-loop run reached {} KiB",
        ran.max_rss_kib
    );
    let review = env.run_within(BOUND, ["review", id.as_str()]);
    review.run.ok().stdout_has("data.bin");
    assert!(review.max_rss_kib < RSS_BOUND_KIB);

    // Under a limit below it, the same kind of work is refused; raised as the hint says, it
    // comes in.
    let operator = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(operator.parent().unwrap()).unwrap();
    fs::write(&operator, "[import]\nmax_object_size = \"10M\"\n").unwrap();
    let id = env.new_loop(&repo, "over a lowered limit");
    let ran = env.run_within(BOUND, ["run", &id, "--", "sh", "-c", script]);
    assert_eq!(ran.run.code, 0, "{}", ran.run.stderr);
    ran.run
        .stderr_has("19.1 MiB")
        .stderr_has("more than the limit of 10.0 MiB")
        .stderr_has("max_object_size = \"20M\"");
    let tip = ran
        .run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("TIP "))
        .unwrap()
        .to_string();
    assert_ne!(env.rev(&repo, &format!("loop/{id}")).unwrap(), tip);
    fs::write(&operator, "[import]\nmax_object_size = \"20M\"\n").unwrap();
    env.run_within(BOUND, ["show", id.as_str()]).run.ok();
    assert_eq!(env.rev(&repo, &format!("loop/{id}")).unwrap(), tip);

    // The limit is the operator's alone: a personal config raising it is ignored.
    let personal = env.ws.join("personal/tester/.loopat/config.toml");
    fs::create_dir_all(personal.parent().unwrap()).unwrap();
    fs::write(&personal, "[import]\nmax_object_size = \"100G\"\n").unwrap();
    fs::write(&operator, "[import]\nmax_object_size = \"10M\"\n").unwrap();
    let id = env.new_loop(&repo, "personal cannot raise it");
    let ran = env.run_within(BOUND, ["run", &id, "--", "sh", "-c", script]);
    ran.run.stderr_has("more than the limit of 10.0 MiB");
}
