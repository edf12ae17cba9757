//! Toolchains of the user's home in a loop's sandbox (issue 13): a fake layout of rustup,
//! pyenv, nvm, mise and an npm prefix in the test's HOME, run by name inside, read-only,
//! their credentials nowhere inside; caches per loop or shared; nothing of it without the
//! operator's `[toolchains]`; and the machine's real rustup building a crate offline.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::common::{Run, TestEnv};

const CARGO_SECRET: &str = "cargo-secret-TOKEN-1f2e";
const NPM_SECRET: &str = "npm-secret-TOKEN-3c4d";
const MISE_SECRET: &str = "mise-secret-TOKEN-5a6b";

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn executable(path: &Path, text: &str) {
    write(path, text);
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn operator(env: &TestEnv, text: &str) {
    write(&env.home.join(".config/git-loop/config.toml"), text);
}

/// A tool that says who it is, where it runs from, and its arguments.
fn tool(path: &Path, marker: &str) {
    executable(path, &format!("#!/bin/sh\necho \"{marker} $0 $*\"\n"));
}

/// rustup, pyenv, nvm, mise and an npm prefix laid out in the test's HOME as their
/// installers do, each tool a script that prints a marker; the credentials beside them.
fn fake_toolchains(env: &TestEnv) {
    let h = &env.home;
    fs::create_dir_all(h.join(".rustup/toolchains/stable-x86_64-unknown-linux-gnu")).unwrap();
    write(
        &h.join(".rustup/settings.toml"),
        "default_toolchain = \"stable\"\n",
    );
    tool(&h.join(".cargo/bin/cargo"), "fake-cargo");
    tool(&h.join(".cargo/bin/rustc"), "fake-rustc");
    write(
        &h.join(".cargo/credentials.toml"),
        &format!("[registry]\ntoken = \"{CARGO_SECRET}\"\n"),
    );
    write(
        &h.join(".cargo/credentials"),
        &format!("[registry]\ntoken = \"{CARGO_SECRET}\"\n"),
    );
    write(
        &h.join(".cargo/config.toml"),
        &format!("[registries.private]\ntoken = \"{CARGO_SECRET}\"\n"),
    );
    tool(&h.join(".pyenv/bin/pyenv"), "fake-pyenv");
    tool(&h.join(".pyenv/shims/python"), "fake-python");
    write(&h.join(".pyenv/version"), "3.12.1\n");
    write(&h.join(".nvm/nvm.sh"), "# nvm\n");
    tool(
        &h.join(".nvm/versions/node/v18.19.0/bin/node"),
        "fake-node-18",
    );
    tool(
        &h.join(".nvm/versions/node/v20.11.1/bin/node"),
        "fake-node-20",
    );
    write(&h.join(".nvm/alias/default"), "20\n");
    // mise's shims link to the binary that made them.
    tool(&h.join(".local/bin/mise"), "fake-mise");
    fs::create_dir_all(h.join(".local/share/mise/shims")).unwrap();
    symlink(
        h.join(".local/bin/mise"),
        h.join(".local/share/mise/shims/fake-tool"),
    )
    .unwrap();
    write(
        &h.join(".config/mise/config.toml"),
        &format!("[tools]\nfake-tool = \"1.2\"\n\n[env]\nAPI_TOKEN = \"{MISE_SECRET}\"\n"),
    );
    write(
        &h.join(".npmrc"),
        &format!("prefix=${{HOME}}/.npm-global\n//registry.npmjs.org/:_authToken={NPM_SECRET}\n"),
    );
    tool(&h.join(".npm-global/bin/fake-global"), "fake-npm-global");
}

/// Every file below `dir` with its content, for "nothing on the host changed".
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p.clone());
                out.push((p, Vec::new()));
            } else if t.is_symlink() {
                out.push((
                    p.clone(),
                    fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            } else {
                out.push((p.clone(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The host folders of the fake toolchains (and the `.npmrc`).
fn toolchain_dirs(env: &TestEnv) -> Vec<PathBuf> {
    [
        ".rustup",
        ".cargo",
        ".pyenv",
        ".nvm",
        ".local",
        ".npm-global",
        ".config/mise",
    ]
    .iter()
    .map(|d| env.home.join(d))
    .collect()
}

/// `git loop run -q ID -- sh -c SCRIPT`, with extra variables in git loop's environment.
fn sh(env: &TestEnv, id: &str, script: &str, vars: &[(&str, &str)]) -> Run {
    let out = env
        .command()
        .current_dir(&env.root)
        .envs(vars.iter().copied())
        .args(["run", "-q", id, "--", "sh", "-c", script])
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// What a script inside prints for one variable.
fn line<'a>(run: &'a Run, key: &str) -> &'a str {
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in:\n{}\n{}", run.stdout, run.stderr))
}

/// Enabled by the operator and picked by the profile, every fake toolchain runs inside by
/// name, with its variables; none of their folders takes a write; the credentials of
/// cargo, npm and mise are nowhere inside, not in a file, not in the environment.
#[test]
fn home_toolchains_run_inside_read_only_without_their_credentials() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fake_toolchains(&env);
    operator(&env, "[toolchains]\nenable = \"detected\"\n");
    let id = env.new_loop(&repo, "tools");
    env.write_profile(
        "[toolchains]\nenable = [\"rustup\", \"pyenv\", \"nvm\", \"mise\", \"npm-prefix\"]\n",
    );
    let before: Vec<_> = toolchain_dirs(&env).iter().map(|d| snapshot(d)).collect();
    let npmrc = fs::read(env.home.join(".npmrc")).unwrap();
    let h = env.home.display().to_string();
    let script = format!(
        r#"cargo build; rustc -V; python; node; fake-global; fake-tool
for v in RUSTUP_HOME CARGO_HOME PYENV_ROOT NVM_DIR MISE_DATA_DIR npm_config_prefix PIP_CACHE_DIR npm_config_cache PATH; do
  eval "echo $v=\$$v"
done
echo "mise-config=$(cat "$MISE_GLOBAL_CONFIG_FILE" | tr '\n' ' ')"
for d in {h}/.rustup {h}/.cargo/bin {h}/.pyenv {h}/.pyenv/shims {h}/.nvm {h}/.local/share/mise {h}/.npm-global; do
  if touch "$d/planted" 2>/dev/null; then echo "WROTE $d"; else echo "read-only $d"; fi
done
echo x >> {h}/.cargo/bin/cargo 2>/dev/null && echo "WROTE cargo"
echo "credentials=$(cat {h}/.cargo/credentials.toml 2>&1 | head -c 200)"
echo "npmrc=$(cat {h}/.npmrc 2>&1 | head -c 200)"
echo "found: $(grep -rlsF -e {CARGO_SECRET} -e {NPM_SECRET} -e {MISE_SECRET} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr --exclude-dir=opt | tr '\n' ' ')"
env | grep -c -e TOKEN -e secret
true"#
    );
    let run = env.run(["run", &id, "--", "sh", "-c", &script]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stderr_has("· toolchains rustup, pyenv, nvm, mise, npm-prefix");
    for marker in [
        format!("fake-cargo {h}/.cargo/bin/cargo build"),
        format!("fake-rustc {h}/.cargo/bin/rustc -V"),
        format!("fake-python {h}/.pyenv/shims/python"),
        format!("fake-node-20 {h}/.nvm/versions/node/v20.11.1/bin/node"),
        format!("fake-npm-global {h}/.npm-global/bin/fake-global"),
        format!("fake-mise {h}/.local/share/mise/shims/fake-tool"),
    ] {
        run.stdout_has(&marker);
    }
    assert_eq!(line(&run, "RUSTUP_HOME"), format!("{h}/.rustup"));
    assert_eq!(line(&run, "CARGO_HOME"), "/home/tester/.cache/cargo");
    assert_eq!(line(&run, "PYENV_ROOT"), format!("{h}/.pyenv"));
    assert_eq!(line(&run, "NVM_DIR"), format!("{h}/.nvm"));
    assert_eq!(
        line(&run, "MISE_DATA_DIR"),
        format!("{h}/.local/share/mise")
    );
    assert_eq!(line(&run, "npm_config_prefix"), format!("{h}/.npm-global"));
    assert_eq!(line(&run, "PIP_CACHE_DIR"), "/home/tester/.cache/pip");
    assert_eq!(line(&run, "npm_config_cache"), "/home/tester/.npm");
    assert!(
        line(&run, "PATH").starts_with(&format!(
            "{h}/.cargo/bin:{h}/.pyenv/shims:{h}/.pyenv/bin:{h}/.nvm/versions/node/v20.11.1/bin:"
        )),
        "{}",
        line(&run, "PATH")
    );
    // Of mise's config only its [tools].
    let mise = line(&run, "mise-config");
    assert!(mise.contains("fake-tool = \"1.2\""), "{mise}");
    for d in [
        ".rustup",
        ".cargo/bin",
        ".pyenv",
        ".pyenv/shims",
        ".nvm",
        ".local/share/mise",
        ".npm-global",
    ] {
        run.stdout_has(&format!("read-only {h}/{d}\n"));
    }
    assert!(!run.stdout.contains("WROTE"), "{}", run.stdout);
    // Only cargo's bin/ is bound: its credentials are not in view at all, nor the .npmrc.
    run.stdout_has("credentials=cat: ");
    run.stdout_has("npmrc=cat: ");
    let found = run
        .stdout
        .lines()
        .find(|l| l.starts_with("found:"))
        .unwrap();
    assert_eq!(found.trim(), "found:", "the secrets are inside: {found}");
    assert!(run.stdout.trim_end().ends_with("\n0"), "{}", run.stdout);
    for secret in [CARGO_SECRET, NPM_SECRET, MISE_SECRET] {
        assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret));
    }
    let events = fs::read_to_string(env.loop_dir(&id).join("events.jsonl")).unwrap();
    assert!(
        events.contains(r#""toolchains":["rustup","pyenv","nvm","mise","npm-prefix"]"#),
        "{events}"
    );
    // Nothing of the host's toolchains changed.
    let after: Vec<_> = toolchain_dirs(&env).iter().map(|d| snapshot(d)).collect();
    assert!(before == after, "a toolchain folder changed on the host");
    assert_eq!(fs::read(env.home.join(".npmrc")).unwrap(), npmrc);

    // The agent is told which toolchains it has, and that they are read-only.
    let agent = env.root.join("agent-bin/fake-agent");
    executable(&agent, "#!/bin/sh\ncat \"$CLAUDE_CONFIG_DIR/CLAUDE.md\"\n");
    operator(
        &env,
        &format!(
            "[toolchains]\nenable = \"detected\"\n[agent]\ncommand = [{:?}]\n",
            agent.display().to_string()
        ),
    );
    env.run(["agent", &id]).ok().stdout_has(
        "- toolchains of the user's home: rustup, pyenv, nvm, mise, npm-prefix (read-only",
    );

    // `show --mounts` lists each folder read-only at its own path.
    let mounts = env.run(["show", &id, "--mounts", "--json"]).ok().json();
    for d in [
        ".rustup",
        ".cargo/bin",
        ".pyenv",
        ".nvm",
        ".local/share/mise",
        ".local/bin/mise",
        ".npm-global",
    ] {
        let p = format!("{h}/{d}");
        assert!(
            mounts
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["inside"] == p && m["source"] == p && m["mode"] == "ro"),
            "{p} is not listed read-only: {mounts}"
        );
    }
}

/// A credentials file that a bound folder holds (cargo's home inside rustup's, as some set
/// it up) reads as empty inside; the tools in that folder still run.
#[test]
fn credentials_a_bound_folder_holds_read_as_empty() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let rust = env.home.join(".rust");
    fs::create_dir_all(rust.join("toolchains")).unwrap();
    tool(&rust.join("bin/cargo"), "fake-cargo");
    write(
        &rust.join("credentials.toml"),
        &format!("[registry]\ntoken = \"{CARGO_SECRET}\"\n"),
    );
    operator(&env, "[toolchains]\nenable = [\"rustup\"]\n");
    let id = env.new_loop(&repo, "creds");
    let r = rust.display().to_string();
    let vars = [("RUSTUP_HOME", r.as_str()), ("CARGO_HOME", r.as_str())];
    let script = format!(
        "cargo; echo \"size=$(wc -c < {r}/credentials.toml)\"; cat {r}/credentials.toml; \
         echo x > {r}/credentials.toml 2>/dev/null && echo WROTE; \
         grep -rlsF {CARGO_SECRET} {r} /home /tmp /loopat; true"
    );
    let run = sh(&env, &id, &script, &vars);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has(&format!("fake-cargo {r}/bin/cargo"));
    assert_eq!(line(&run, "size"), "0", "{}\n{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.contains("WROTE") && !run.stdout.contains(CARGO_SECRET),
        "{}",
        run.stdout
    );
    assert!(fs::read_to_string(rust.join("credentials.toml"))
        .unwrap()
        .contains(CARGO_SECRET));
}

/// The caches a loop's tools fill: its own by default (in its `$HOME`, not the host's, and
/// not another loop's); the host's with `caches = "shared"` in the operator config, where
/// a second loop finds what the first put there.
#[test]
fn caches_are_the_loops_own_unless_the_operator_shares_them() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fake_toolchains(&env);
    // A cargo that fills its cache as a download would.
    executable(
        &env.home.join(".cargo/bin/cargo"),
        "#!/bin/sh\nmkdir -p \"$CARGO_HOME/registry/cache\" && echo crate > \"$CARGO_HOME/registry/cache/$1.crate\"\n",
    );
    operator(
        &env,
        "[toolchains]\nenable = [\"rustup\", \"pyenv\", \"nvm\"]\n",
    );
    let fill = "cargo one && mkdir -p \"$PIP_CACHE_DIR\" \"$npm_config_cache\" && echo w > \"$PIP_CACHE_DIR/one.whl\" && echo t > \"$npm_config_cache/one.tgz\"";
    let look = "ls \"$CARGO_HOME/registry/cache\" \"$PIP_CACHE_DIR\" \"$npm_config_cache\" 2>/dev/null; true";
    let first = env.new_loop(&repo, "first");
    let second = env.new_loop(&repo, "second");
    sh(&env, &first, fill, &[]).ok();
    let upper = env.loop_dir(&first).join("home/upper");
    for f in [
        ".cache/cargo/registry/cache/one.crate",
        ".cache/pip/one.whl",
        ".npm/one.tgz",
    ] {
        assert!(upper.join(f).is_file(), "{f} is not in the loop's $HOME");
    }
    for f in [".cargo/registry", ".cache/pip", ".npm"] {
        assert!(!env.home.join(f).exists(), "{f} appeared on the host");
    }
    let run = sh(&env, &second, look, &[]).ok();
    assert!(!run.stdout.contains("one."), "{}", run.stdout);

    // Shared: the host's folders, read-write; a second loop sees what the first put there.
    operator(
        &env,
        "[toolchains]\nenable = [\"rustup\", \"pyenv\", \"nvm\"]\ncaches = \"shared\"\n",
    );
    sh(&env, &first, fill, &[]).ok();
    for f in [
        ".cargo/registry/cache/one.crate",
        ".cache/pip/one.whl",
        ".npm/one.tgz",
    ] {
        assert!(env.home.join(f).is_file(), "{f} is not in the host's cache");
    }
    let run = sh(&env, &second, look, &[]).ok();
    for f in ["one.crate", "one.whl", "one.tgz"] {
        run.stdout_has(f);
    }
    let mounts = env.run(["show", &second, "--mounts", "--json"]).ok().json();
    let h = env.home.display().to_string();
    let rw: Vec<(String, String)> = mounts
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["mode"] == "rw" && m["source"].as_str().unwrap().starts_with(&h))
        .map(|m| {
            (
                m["source"].as_str().unwrap().into(),
                m["inside"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        rw,
        vec![
            (
                format!("{h}/.cargo/registry"),
                "/home/tester/.cache/cargo/registry".into()
            ),
            (format!("{h}/.cache/pip"), format!("{h}/.cache/pip")),
            (format!("{h}/.npm"), format!("{h}/.npm")),
        ],
        "{mounts}"
    );
    // In review mode even a shared cache takes no writes.
    let run = env.run([
        "run",
        "-q",
        "--mode",
        "review",
        &second,
        "--",
        "sh",
        "-c",
        "touch \"$PIP_CACHE_DIR/two.whl\" 2>/dev/null && echo WROTE; true",
    ]);
    assert!(!run.ok().stdout.contains("WROTE"));
    assert!(!env.home.join(".cache/pip/two.whl").exists());

    // A profile may keep its caches per loop; asking for shared ones where the operator
    // shares none is ignored, with a warning naming its line.
    let path = env.write_profile("[toolchains]\ncaches = \"loop\"\n");
    let run = sh(&env, &second, "echo PIP=$PIP_CACHE_DIR", &[]).ok();
    run.stdout_has("PIP=/home/tester/.cache/pip");
    operator(
        &env,
        "[toolchains]\nenable = [\"rustup\", \"pyenv\", \"nvm\"]\n",
    );
    fs::write(&path, "\n[toolchains]\ncaches = \"shared\"\n").unwrap();
    let run = sh(&env, &second, "echo PIP=$PIP_CACHE_DIR", &[]).ok();
    run.stdout_has("PIP=/home/tester/.cache/pip");
    run.stderr_has(&format!(
        "{}:3: toolchains.caches = \"shared\" (team layer) is ignored: only the operator config may share",
        path.display()
    ));
}

/// Without the operator's `[toolchains]`, nothing of them exists inside: not the tools by
/// name, not their folders, not their variables; a profile or a team config that enables
/// them is ignored with a warning, as every widening outside the operator config is.
#[test]
fn without_the_operators_toolchains_none_are_inside() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fake_toolchains(&env);
    let id = env.new_loop(&repo, "bare");
    let h = env.home.display().to_string();
    let script = format!(
        "for t in cargo rustc python node fake-global fake-tool; do p=$(command -v $t) && echo \"HAS $p\"; done; \
         for d in {h}/.rustup {h}/.cargo {h}/.pyenv {h}/.nvm {h}/.local {h}/.npm-global; do [ -e $d ] && echo \"SEES $d\"; done; \
         env | grep -E '^(RUSTUP_HOME|CARGO_HOME|PYENV_ROOT|NVM_DIR|MISE_DATA_DIR|npm_config_)'; true"
    );
    let check = |run: Run| {
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        // The system's own tools (a node in /usr/bin) are there, as always; nothing of
        // the home's, nor of the real rustup's folders.
        let theirs: Vec<&str> = run
            .stdout
            .lines()
            .filter(|l| !(l.starts_with("HAS /usr/") || l.starts_with("HAS /bin/")))
            .collect();
        assert!(theirs.is_empty(), "{}", run.stdout);
        assert!(!run.stderr.contains("toolchains "), "{}", run.stderr);
        run
    };
    // The real rustup of this machine is named too: it stays out as well.
    let real = real_rustup();
    let vars: Vec<(&str, &str)> = real
        .iter()
        .flat_map(|(r, c)| {
            [
                ("RUSTUP_HOME", r.to_str().unwrap()),
                ("CARGO_HOME", c.to_str().unwrap()),
            ]
        })
        .collect();
    check(sh(&env, &id, &script, &vars));
    // A profile alone enables nothing.
    let path = env.write_profile("[toolchains]\nenable = [\"rustup\", \"pyenv\"]\n");
    let run = check(sh(&env, &id, &script, &[]));
    run.stderr_has(&format!(
        "{}:2: toolchains.enable = \"rustup\" (team layer) is ignored: only the operator config may show sandboxes the host's toolchains",
        path.display()
    ));
    // Nor does the team's config layer.
    fs::remove_file(&path).unwrap();
    let team = env.ws.join("context/knowledge/.loopat/config.toml");
    write(
        &team,
        "[toolchains]\nenable = \"detected\"\ncaches = \"shared\"\n",
    );
    let run = check(sh(&env, &id, &script, &[]));
    run.stderr_has("toolchains.enable = \"detected\" (team layer) is ignored")
        .stderr_has("toolchains.caches = \"shared\" (team layer) is ignored");
    // `config set` refuses it outside the operator config, and takes it there.
    env.run(["config", "set", "--team", "toolchains.enable", "detected"])
        .fails(2)
        .stderr_has("may only be set in the operator config");
    fs::remove_file(&team).unwrap();
    env.run([
        "config",
        "set",
        "--operator",
        "toolchains.enable",
        "detected",
    ])
    .ok();
    let run = sh(&env, &id, "command -v cargo; command -v node", &[]).ok();
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        vec![
            format!("{h}/.cargo/bin/cargo"),
            format!("{h}/.nvm/versions/node/v20.11.1/bin/node")
        ]
    );
}

/// `doctor` lists each toolchain it finds with its folders, and which the default profile's
/// sandboxes see, with the line that enables the others.
#[test]
fn doctor_lists_the_toolchains() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.new_loop(&repo, "doc");
    env.agent_login();
    let run = env.run(["doctor"]).ok();
    run.stdout_has("ok      toolchains: none found in your home folder (looked for rustup, pyenv, nvm, mise, npm-prefix)");
    fake_toolchains(&env);
    let h = env.home.display().to_string();
    let run = env.run(["doctor"]).ok();
    run.stdout_has(&format!(
        "info    toolchains: rustup at {h}/.rustup, {h}/.cargo: not in sandboxes (the operator config does not enable it)\n        fix: git loop config set --operator toolchains.enable '[\"rustup\"]' (or detected: every one found)"
    ));
    operator(
        &env,
        "[toolchains]\nenable = [\"rustup\", \"pyenv\", \"mise\"]\n",
    );
    env.write_profile("[toolchains]\nenable = [\"rustup\", \"mise\"]\n");
    let run = env.run(["doctor"]).ok();
    for expected in [
        format!("ok      toolchains: rustup at {h}/.rustup, {h}/.cargo: in view, read-only, in sandboxes of profile 'default' (package caches the loop's own)"),
        format!("info    toolchains: pyenv at {h}/.pyenv: not in sandboxes of profile 'default' (its [toolchains] enable leaves it out)"),
        format!("info    toolchains: nvm at {h}/.nvm: not in sandboxes (the operator config does not enable it)"),
        format!("ok      toolchains: mise at {h}/.local/share/mise: in view"),
        format!("info    toolchains: npm-prefix at {h}/.npm-global: not in sandboxes"),
    ] {
        run.stdout_has(&expected);
    }
    let json = env.run(["doctor", "--json"]).ok().json();
    let toolchains = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "toolchains")
        .count();
    assert_eq!(toolchains, 5, "{json}");
    // A prefix that is the home folder itself is never bound, and says why.
    write(&env.home.join(".npmrc"), "prefix=${HOME}\n");
    operator(&env, "[toolchains]\nenable = \"detected\"\n");
    fs::remove_file(env.profile_path("default")).unwrap();
    let run = env.run(["doctor"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    run.stdout_has(&format!(
        "problem toolchains: npm-prefix at {h}: never bound into a sandbox: {h} is (or holds) the home folder"
    ));
}

/// rustup's folders of this machine, as the environment names them (rustup sets both for
/// the cargo that builds these tests) or where rustup puts them.
fn real_rustup() -> Option<(PathBuf, PathBuf)> {
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".rustup"));
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".cargo"));
    (rustup.join("toolchains").is_dir() && cargo.join("bin/cargo").is_file())
        .then_some((rustup, cargo))
}

/// The machine's real rustup, named by `RUSTUP_HOME` and `CARGO_HOME` as a user with
/// such variables would: inside, cargo builds and runs a crate with no dependencies,
/// offline, with the host's compiler, and its folders take no writes.
#[test]
fn the_real_rustup_builds_a_crate_offline_inside() {
    // Needed, never skipped: its absence fails with the fix.
    let Some((rustup, cargo)) = real_rustup() else {
        panic!(
            "this test needs rustup: RUSTUP_HOME and CARGO_HOME, or ~/.rustup and ~/.cargo \
             (curl --proto '=https' -sSf https://sh.rustup.rs | sh -s -- -y; .ci/run does)"
        );
    };
    let env = TestEnv::new();
    let repo = env.repo("tiny");
    write(
        &repo.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(
        &repo.join("src/main.rs"),
        "fn main() { println!(\"tiny built inside\"); }\n",
    );
    write(&repo.join(".gitignore"), "target/\n");
    env.git(&repo, ["add", "-A"]);
    env.git(&repo, ["commit", "-q", "-m", "a crate"]);
    operator(&env, "[toolchains]\nenable = [\"rustup\"]\n");
    let id = env.new_loop(&repo, "build");
    let (r, c) = (rustup.display().to_string(), cargo.display().to_string());
    let vars = [("RUSTUP_HOME", r.as_str()), ("CARGO_HOME", c.as_str())];
    let host_rustc = std::process::Command::new(cargo.join("bin/rustc"))
        .arg("--version")
        .env("RUSTUP_HOME", &rustup)
        .env("CARGO_HOME", &cargo)
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .unwrap();
    let host_rustc = String::from_utf8_lossy(&host_rustc.stdout)
        .trim()
        .to_string();
    let script = format!(
        "cargo build --offline -q && ./target/debug/tiny && rustc --version && \
         echo CARGO_HOME=$CARGO_HOME && \
         if touch {r}/planted 2>/dev/null || touch {c}/bin/planted 2>/dev/null; then echo WROTE; fi"
    );
    let run = sh(&env, &id, &script, &vars);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("tiny built inside");
    run.stdout_has(&host_rustc);
    assert_eq!(line(&run, "CARGO_HOME"), "/home/tester/.cache/cargo");
    assert!(!run.stdout.contains("WROTE"), "{}", run.stdout);
    assert!(!rustup.join("planted").exists() && !cargo.join("bin/planted").exists());
    // The build happened in the loop's working tree.
    assert!(env.workdir(&id).join("target/debug/tiny").is_file());
}

const PLANTED_TOKEN: &str = "planted-registry-TOKEN-9e8d";

/// Credential files wherever a bound toolchain folder holds them (ATTACKS 45), as `npm
/// config set -g`, `pip config --site` and other tools write them: each reads as empty
/// inside, and no file inside holds the token; a library's `credentials.py` is not one and
/// reads as it is.
#[test]
fn credential_files_anywhere_in_a_bound_toolchain_folder_read_as_empty() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fake_toolchains(&env);
    let h = &env.home;
    let planted = [
        ".npm-global/etc/npmrc",
        ".nvm/versions/node/v20.11.1/etc/npmrc",
        ".nvm/versions/node/v20.11.1/lib/node_modules/npm/npmrc",
        ".nvm/.yarnrc.yml",
        ".nvm/.docker/config.json",
        ".pyenv/versions/3.12.1/pip.conf",
        ".pyenv/versions/3.12.1/envs/tools/pip.ini",
        ".pyenv/.pypirc",
        ".pyenv/.netrc",
        ".rustup/credentials.toml",
        ".rustup/.git-credentials",
        ".local/share/mise/installs/python/3.12/pip.conf",
    ];
    for rel in planted {
        write(&h.join(rel), &format!("token = {PLANTED_TOKEN}\n"));
    }
    let library =
        h.join(".pyenv/versions/3.12.1/lib/python3.12/site-packages/botocore/credentials.py");
    write(&library, "def load(): pass\n");
    operator(&env, "[toolchains]\nenable = \"detected\"\n");
    let id = env.new_loop(&repo, "planted");
    let mut script = String::new();
    for rel in planted {
        script.push_str(&format!(
            "echo \"{rel}=$(wc -c < {} 2>&1)\"; ",
            h.join(rel).display()
        ));
    }
    script.push_str(&format!(
        "echo \"library=$(cat {})\"; grep -rlsF {PLANTED_TOKEN} {} {} {} {} {} /home /tmp /loopat; true",
        library.display(),
        h.join(".npm-global").display(),
        h.join(".nvm").display(),
        h.join(".pyenv").display(),
        h.join(".rustup").display(),
        h.join(".local/share/mise").display(),
    ));
    let run = sh(&env, &id, &script, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for rel in planted {
        assert_eq!(
            line(&run, rel),
            "0",
            "{rel}: {}\n{}",
            run.stdout,
            run.stderr
        );
    }
    assert_eq!(line(&run, "library"), "def load(): pass");
    assert!(!run.stdout.contains(PLANTED_TOKEN), "{}", run.stdout);
    // A token written on the host later is covered from the next run on (the search's
    // cache sees its folder change).
    let later = h.join(".pyenv/versions/3.12.1/lib/pip.conf");
    write(&later, &format!("token = {PLANTED_TOKEN}\n"));
    let run = sh(
        &env,
        &id,
        &format!("echo \"later=$(wc -c < {})\"", later.display()),
        &[],
    );
    assert_eq!(line(&run, "later"), "0", "{}\n{}", run.stdout, run.stderr);
    for rel in planted {
        assert!(fs::read_to_string(h.join(rel))
            .unwrap()
            .contains(PLANTED_TOKEN));
    }
}

/// The positive twin, with the machine's real pyenv and npm: with a site `pip.conf` and a
/// global `npmrc` holding tokens covered, pip and npm still work inside and read their
/// other settings.
#[test]
fn real_pip_and_npm_work_with_their_credential_files_covered() {
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))
        .filter(|p| p.join("versions").is_dir());
    let npm = Path::new("/usr/bin/npm");
    // Needed, never skipped: their absence fails with the fix.
    let (Some(pyenv), true) = (pyenv, npm.is_file()) else {
        panic!(
            "this test needs pyenv with a Python (PYENV_ROOT or ~/.pyenv) and npm: \
             apt-get install npm; git clone https://github.com/pyenv/pyenv ~/.pyenv && \
             ~/.pyenv/bin/pyenv install 3.12 (.ci/run does)"
        );
    };
    let env = TestEnv::new();
    let repo = env.repo("app");
    // A copy of one interpreter would be large: the real root is bound read-only, and its
    // site config is planted in the test's own npm prefix instead (the same cover).
    let prefix = env.home.join(".npm-global");
    write(
        &prefix.join("etc/npmrc"),
        &format!("//registry.npmjs.org/:_authToken={PLANTED_TOKEN}\n"),
    );
    fs::create_dir_all(prefix.join("bin")).unwrap();
    write(
        &env.home.join(".npmrc"),
        "prefix=${HOME}/.npm-global\nfund=false\n",
    );
    operator(&env, "[toolchains]\nenable = [\"pyenv\", \"npm-prefix\"]\n");
    let id = env.new_loop(&repo, "real");
    let p = pyenv.display().to_string();
    let script = format!(
        "python -m pip --version && python -m pip config list && \
         echo \"prefix=$(npm config get prefix)\" && npm config list && \
         echo \"npmrc=$(wc -c < {}/etc/npmrc)\"",
        prefix.display()
    );
    let run = sh(&env, &id, &script, &[("PYENV_ROOT", p.as_str())]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("pip ");
    assert_eq!(line(&run, "prefix"), prefix.display().to_string());
    assert_eq!(line(&run, "npmrc"), "0", "{}", run.stdout);
    assert!(!run.stdout.contains(PLANTED_TOKEN), "{}", run.stdout);
}
