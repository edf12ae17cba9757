//! Claude Code and Codex as people use them: interactive, in a real terminal (tmux), logged
//! in only through `git loop agent login`, against the stand-in APIs of `agent_e2e` on
//! loopback. The agent opens on its prompt with no question (no API-key approval, no
//! folder trust, no onboarding or sign-in), a typed request reaches the stand-in, its tool
//! call runs and the commit lands on `loop/<id>`; again for a second run of the loop (a
//! new placeholder key) and for a second loop. Nothing here answers a question: one that
//! appears is the defect.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::agent_e2e::{
    codex, function_outputs, serve_responses, tool_results, Setup, StandIn, KEY, OPENAI_KEY,
};
use crate::common::terminal::Terminal;
use crate::common::BIN;

/// What the stand-ins run when asked: a commit numbered by the loop's history, so each
/// run adds one.
const COMMIT: &str = "n=$(git rev-list --count HEAD) && echo \"greeting $n\" > greeting.txt && git add greeting.txt && git commit -q -m \"greeting $n\" && echo COMMITTED";

/// How an agent's screen reads.
struct Agent {
    /// The prompt is up, waiting for the person.
    ready: fn(&str) -> bool,
    /// Words of a question the product must have answered before the agent started.
    questions: &'static [&'static str],
    /// How the person leaves it.
    leave: fn(&Terminal),
    /// The requests the stand-in received that carried a tool's output.
    outputs: fn(&[crate::agent_e2e::Seen]) -> usize,
}

const CLAUDE: Agent = Agent {
    ready: |s| s.contains("bypass permissions on") && s.contains('❯'),
    questions: &[
        "Enter to confirm",
        "Do you want to use this API key",
        "trust this folder",
        "Bypass Permissions mode",
        "Choose the text style",
        "Select login method",
        "Not logged in",
        "Press Enter to continue",
    ],
    leave: |term| {
        term.type_text("/exit");
        term.press("Enter");
    },
    outputs: |seen| tool_results(seen).len(),
};

const CODEX: Agent = Agent {
    ready: |s| s.contains("Ask Codex to do anything"),
    questions: &[
        "Sign in",
        "Trust this folder",
        "Press enter to continue",
        "enter continue",
        "Use an API key",
        "Approve",
    ],
    // Ctrl-C on an empty prompt ends it; while it still finishes the turn (a title for the
    // session), the first one stops that and a second ends it, as a person presses again.
    leave: |term| {
        for _ in 0..3 {
            term.press("C-c");
            if term.ended_within(Duration::from_secs(5)) {
                return;
            }
        }
    },
    outputs: |seen| function_outputs(seen).len(),
};

/// Polls `done` until it holds, for at most `within`, with every screen on the way given
/// to `never`; past it, fails with the screen and what the stand-in received.
#[track_caller]
fn wait_until(
    what: &str,
    within: Duration,
    term: &Terminal,
    (s, id): (&Setup, &str),
    never: impl Fn(&str),
    done: impl Fn() -> bool,
) {
    let start = Instant::now();
    while !done() {
        never(&term.screen());
        if start.elapsed() > within {
            let seen: Vec<String> = s
                .stand_in
                .seen()
                .iter()
                .map(|r| {
                    let body: String = r.body.to_string().chars().take(400).collect();
                    format!("{} {body}", r.path)
                })
                .collect();
            panic!(
                "no {what} within {within:?}; the stand-in received:\n{}\nthe screen:\n{}\nthe loop's log:\n{}",
                seen.join("\n"),
                term.screen(),
                s.git_loop(&["log", id], None).stdout
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One interactive run of `git loop agent ID`: the agent must open ready with no question
/// on the screen, take the typed request, run the stand-in's tool call and say "done";
/// then the person leaves it, and the commit it made is on `loop/<id>` in the repository,
/// the `n`th greeting of that loop.
fn run_once(s: &Setup, agent: &Agent, id: &str, run: usize, n: usize) {
    let dir = s.env.root.join(format!("terminal-{id}-{run}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut env = s.user_env();
    env.retain(|(k, _)| k != "LC_ALL");
    // A person's terminal: UTF-8, colours.
    env.push(("LC_ALL".into(), "C.UTF-8".into()));
    let term = Terminal::start(
        &dir,
        env,
        &s.env.root,
        &s.git_loop_argv(&["agent", id]),
        (160, 50),
    );
    let never = |screen: &str| {
        for q in agent.questions {
            assert!(
                !screen.contains(q),
                "the agent asked ({q:?}) where nothing should be asked; the screen:\n{screen}"
            );
        }
    };
    term.wait_for("agent prompt", Duration::from_secs(60), agent.ready, never);
    let before = (agent.outputs)(&s.stand_in.seen());
    term.paste("add a greeting");
    term.wait_for(
        "the request in the prompt",
        Duration::from_secs(10),
        |screen| screen.contains("add a greeting"),
        never,
    );
    term.press("Enter");
    wait_until(
        "tool output at the stand-in",
        Duration::from_secs(60),
        &term,
        (s, id),
        never,
        || (agent.outputs)(&s.stand_in.seen()) > before,
    );
    term.wait_for(
        "the agent's answer",
        Duration::from_secs(60),
        |screen| screen.contains("done") && (agent.ready)(screen),
        never,
    );
    (agent.leave)(&term);
    let code = term.wait_exit(Duration::from_secs(30));
    assert_eq!(code, 0, "exit {code}; the screen:\n{}", term.screen());
    assert_greeting(s, id, n);
}

/// The loop's branch in the user's repository ends with the `n`th greeting, made with
/// their identity.
#[track_caller]
fn assert_greeting(s: &Setup, id: &str, n: usize) {
    let branch = format!("loop/{id}");
    let log = s.env.git(
        &s.repo,
        ["log", "-1", "--format=%an <%ae>|%s", branch.as_str()],
    );
    assert_eq!(
        log.trim(),
        format!("Alice Example <alice@example.com>|greeting {n}")
    );
}

/// Every request reached the stand-in with the key `agent login` stored: the proxy put it
/// in for this run's placeholder.
#[track_caller]
fn all_with_key(s: &Setup, key: &str) {
    let seen = s.stand_in.seen();
    assert!(!seen.is_empty());
    for request in &seen {
        assert_eq!(
            request.api_key.as_deref(),
            Some(key),
            "{} not logged in with the stored key",
            request.path
        );
    }
}

/// A second loop of the same repository, made as the user makes one.
fn second_loop(s: &Setup) -> String {
    let new = s.git_loop_in(&s.repo, &["new", "another greeting"], None);
    assert_eq!(new.code, 0, "{}", new.stderr);
    new.stdout.trim().to_string()
}

#[test]
fn interactive_claude_code_asks_nothing_and_commits_in_every_run_and_loop() {
    let s = Setup::claude(&[], COMMIT, "sandbox");
    run_once(&s, &CLAUDE, &s.id, 1, 1);
    // Its state now approves this run's placeholder, not the next one's: a second run,
    // with a new placeholder, must be approved again.
    run_once(&s, &CLAUDE, &s.id, 2, 2);
    let other = second_loop(&s);
    run_once(&s, &CLAUDE, &other, 1, 1);
    all_with_key(&s, KEY);
    let log = s.git_loop(&["log", &s.id], None);
    assert!(!log.stdout.contains("violation"), "{}", log.stdout);
}

/// The twin: with `agent.permissions = "ask"` Claude Code still opens with no question
/// (key, trust, onboarding are the product's to answer), and asks before its tool runs,
/// which is the agent's own prompt, kept; unanswered, nothing is committed.
#[test]
fn with_permissions_ask_interactive_claude_code_asks_only_before_its_tool() {
    let s = Setup::claude(&[], COMMIT, "ask");
    let dir = s.env.root.join("terminal-ask");
    std::fs::create_dir_all(&dir).unwrap();
    let mut env = s.user_env();
    env.retain(|(k, _)| k != "LC_ALL");
    env.push(("LC_ALL".into(), "C.UTF-8".into()));
    let term = Terminal::start(
        &dir,
        env,
        &s.env.root,
        &s.git_loop_argv(&["agent", &s.id]),
        (160, 50),
    );
    let never = |screen: &str| {
        for q in CLAUDE.questions {
            assert!(
                !screen.contains(q),
                "the agent asked ({q:?}) before any tool ran; the screen:\n{screen}"
            );
        }
    };
    term.wait_for(
        "agent prompt",
        Duration::from_secs(60),
        |screen| screen.contains('❯') && screen.contains("? for shortcuts"),
        never,
    );
    term.paste("add a greeting");
    term.wait_for(
        "the request in the prompt",
        Duration::from_secs(10),
        |screen| screen.contains("add a greeting"),
        never,
    );
    term.press("Enter");
    term.wait_for(
        "the agent's own prompt before its tool",
        Duration::from_secs(60),
        |screen| screen.contains("Do you want to proceed?"),
        |_| {},
    );
    assert!(tool_results(&s.stand_in.seen()).is_empty());
    assert_greeting_absent(&s);
    // The person declines (Escape), then leaves.
    term.press("Escape");
    term.wait_for(
        "the prompt back",
        Duration::from_secs(30),
        |screen| !screen.contains("Do you want to proceed?") && screen.contains("? for shortcuts"),
        |_| {},
    );
    (CLAUDE.leave)(&term);
    term.wait_exit(Duration::from_secs(30));
    assert_greeting_absent(&s);
}

/// The loop's branch still ends with the user's first commit.
#[track_caller]
fn assert_greeting_absent(s: &Setup) {
    let branch = format!("loop/{}", s.id);
    assert_eq!(
        s.env
            .git(&s.repo, ["log", "-1", "--format=%s", branch.as_str()])
            .trim(),
        "first"
    );
}

#[test]
fn interactive_codex_asks_nothing_and_commits_in_every_run_and_loop() {
    let stand_in = StandIn::serving(COMMIT, serve_responses);
    let port = stand_in.port;
    // Codex as it comes (its built-in OpenAI provider, which needs a login), pointed at
    // the stand-in the way a user behind a gateway does: its `openai_base_url`. (A model
    // that takes its tools inline: the stand-in offers no tool search.)
    let command = format!(
        "[{:?}, \"-m\", \"gpt-5\", \"-c\", {:?}]",
        codex().display().to_string(),
        format!("openai_base_url=\"https://api.stand-in.test:{port}/v1\"")
    );
    let s = Setup::with(stand_in, &command, "sandbox", OPENAI_KEY);
    run_once(&s, &CODEX, &s.id, 1, 1);
    run_once(&s, &CODEX, &s.id, 2, 2);
    let other = second_loop(&s);
    run_once(&s, &CODEX, &other, 1, 1);
    let responses: Vec<_> = s
        .stand_in
        .seen()
        .into_iter()
        .filter(|r| r.path.ends_with("/responses"))
        .collect();
    assert!(responses.len() >= 6, "{responses:?}");
    for r in &responses {
        assert_eq!(r.api_key.as_deref(), Some(OPENAI_KEY));
    }
    // The login reached the sandbox in memory: no file of the loop holds the key.
    for id in [&s.id, &other] {
        assert_no_key_on_disk(&s.env.ws.join("loops").join(id), OPENAI_KEY);
    }
}

/// No file below `dir` holds `key`.
fn assert_no_key_on_disk(dir: &Path, key: &str) {
    for entry in walk(dir) {
        if let Ok(bytes) = std::fs::read(&entry) {
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "{} holds the key",
                entry.display()
            );
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => pending.push(path),
                Ok(t) if t.is_file() => out.push(path),
                _ => {}
            }
        }
    }
    out
}

/// Not logged in, `git loop agent` refuses and names the login command; `--no-login`
/// starts the agent anyway (which then asks for its own login: the person chose that).
#[test]
fn an_agent_without_a_login_is_refused_with_the_login_command() {
    let env = crate::common::TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "nologin");
    let bin = env.root.join("agent-bin/claude");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&bin, "#!/bin/sh\necho AGENT-STARTED\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = env.home.join(".config/git-loop/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!("[agent]\ncommand = [{:?}]\n", bin.display().to_string()),
    )
    .unwrap();
    let refused = env.run(["agent", &id]).fails(1);
    refused
        .stderr_has("Claude Code is not logged in: vault 'default' holds no ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN")
        .stderr_has("hint: log it in: printf %s \"$KEY\" | git loop agent login")
        .stderr_has(&format!("git loop agent {id} --no-login"));
    assert!(!refused.stdout.contains("AGENT-STARTED"));
    env.run(["agent", &id, "--no-login"])
        .ok()
        .stdout_has("AGENT-STARTED");
    // distill starts the agent in the loop it makes: refused before the loop is made.
    let before = env.loop_entries();
    env.run(["distill", "condense"])
        .fails(1)
        .stderr_has("Claude Code is not logged in")
        .stderr_has("git loop distill --no-agent");
    assert_eq!(env.loop_entries(), before);
    // Logged in, it starts.
    let mut login = std::process::Command::new(BIN);
    login
        .env_clear()
        .envs(env.envs())
        .args(["agent", "login"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = login.spawn().unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        b"sk-ant-api03-x0123456789",
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    env.run(["agent", &id]).ok().stdout_has("AGENT-STARTED");
}

/// The login and a vault's value typed at a real terminal, as a person does (the other
/// tests pipe them in): the prompt says the key is not shown, it is not shown while typed
/// nor after, and what was typed is what the vault holds (the agent starts with it).
#[test]
fn a_key_typed_at_a_terminal_is_never_shown_and_is_what_the_vault_holds() {
    let env = crate::common::TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "typed");
    const TYPED: &str = "sk-ant-api03-typed-at-the-terminal-0123";
    const VALUE: &str = "typed-value-4567";
    let type_secret = |name: &str, argv: &[&str], prompt: &str, secret: &str| {
        let dir = env.root.join(format!("terminal-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        argv.insert(0, BIN.to_string());
        let term = Terminal::start(
            &dir,
            env.envs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            &env.root,
            &argv,
            (120, 30),
        );
        let never = |screen: &str| {
            assert!(
                !screen.contains(&secret[secret.len() - 8..]),
                "the secret is on the screen:\n{screen}"
            );
        };
        term.wait_for(
            "the prompt",
            Duration::from_secs(30),
            |s| s.contains(prompt),
            never,
        );
        term.type_text(secret);
        // Still not shown once typed, before and after Enter.
        term.wait_for(
            "the typed key to be taken",
            Duration::from_secs(5),
            |s| s.contains(prompt),
            never,
        );
        term.press("Enter");
        let code = term.wait_exit(Duration::from_secs(30));
        never(&term.screen());
        assert_eq!(code, 0, "exit {code}; the screen:\n{}", term.screen());
    };
    type_secret(
        "login",
        &["agent", "login"],
        "API key or token for Claude Code (not shown):",
        TYPED,
    );
    type_secret(
        "vault",
        &["vault", "set", "default", "env", "TYPED_VALUE"],
        "value of TYPED_VALUE (not shown):",
        VALUE,
    );
    // What the sandbox gets is what was typed (the login is bound, so only its
    // placeholder is inside; the plain value is there as typed).
    let run = env
        .run([
            "run",
            &id,
            "--",
            "sh",
            "-c",
            "printf '%s\\n' \"$TYPED_VALUE\"; [ -n \"$ANTHROPIC_API_KEY\" ] && echo LOGIN",
        ])
        .ok();
    run.stdout_has(&format!("{VALUE}\n")).stdout_has("LOGIN");
}

/// `agent.permissions = "ask"` with Codex is refused, not run with the promise broken
/// (Codex asks before nothing without its own sandbox, which cannot run inside the loop's);
/// the hint's command is the fix that works.
#[test]
fn codex_with_permissions_ask_is_refused_and_the_hint_works() {
    let env = crate::common::TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "codexask");
    let bin = env.root.join("agent-bin/codex");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&bin, "#!/bin/sh\necho AGENT-STARTED\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = env.home.join(".config/git-loop/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[agent]\ncommand = [{:?}]\npermissions = \"ask\"\n",
            bin.display().to_string()
        ),
    )
    .unwrap();
    let refused = env.run(["agent", &id, "--no-login"]).fails(1);
    refused
        .stderr_has("agent.permissions = \"ask\" cannot be kept for Codex")
        .stderr_has("hint: let the loop's sandbox be the boundary: git loop config set agent.permissions sandbox");
    assert!(!refused.stdout.contains("AGENT-STARTED"));
    env.run(["agent", &id, "--no-login", "--detach"])
        .fails(1)
        .stderr_has("cannot be kept for Codex");
    env.run(["config", "set", "agent.permissions", "sandbox"])
        .ok();
    env.run(["agent", &id, "--no-login"])
        .ok()
        .stdout_has("AGENT-STARTED");
}
