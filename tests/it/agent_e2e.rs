//! A real agent in a loop, out of the box (issue 13): the real Claude Code CLI (the npm
//! package `@anthropic-ai/claude-code`, which `.ci/run` installs) runs in a loop's sandbox
//! against a stand-in for the Anthropic Messages API that the test serves over HTTPS on
//! loopback (a certificate of the test's own CA, which the operator's `upstream_ca`
//! trusts), under a name pinned with `[network.hosts]` and reached through the proxy. The
//! real API is never contacted: the stand-in listens in a network namespace of the test's
//! own with only a loopback, and every `git loop` of the test runs there, so whatever the
//! baseline allowlist lets through, no packet can leave the machine. The user does what a
//! user does: a git identity in their own git config, `git loop agent login` with a key,
//! `git loop agent ID`.
//!
//! The key is bound to the stand-in's host (issue 16): the agent runs with a placeholder,
//! and the proxy, ending TLS toward that host, puts the key in.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::common::netns::Netns;
use crate::common::{Run, TestEnv, BIN};

/// The Claude Code CLI on the host, which the test needs.
pub(crate) fn claude() -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("claude"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the Claude Code CLI is not installed: npm install -g @anthropic-ai/claude-code (.ci/run does)"
            )
        })
}

/// One request the stand-in received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) path: String,
    pub(crate) api_key: Option<String>,
    pub(crate) body: Value,
}

/// A stand-in for the Messages API: to a request that offers tools and has no tool result
/// yet, it answers with one Bash tool call running `command`; to the others, "done".
/// Answers stream as server-sent events, as the API's do.
pub(crate) struct StandIn {
    /// The network namespace of the test's own, with only a loopback, where the stand-in
    /// listens and every `git loop` of the test runs: the agent and the proxy can reach
    /// the stand-in and nothing else, whatever the baseline allowlist lets through.
    pub(crate) ns: Netns,
    pub(crate) port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// The CA of the stand-in's certificate (PEM).
    ca_pem: String,
}

/// The stand-in's side of one connection: TLS over the accepted socket.
pub(crate) type Tls = rustls::StreamOwned<rustls::ServerConnection, TcpStream>;

/// How a stand-in answers: the Anthropic Messages API or the OpenAI Responses API.
pub(crate) type Serve = fn(&mut Tls, &Mutex<Vec<Seen>>, &str) -> std::io::Result<()>;

impl StandIn {
    pub(crate) fn start(command: &str) -> StandIn {
        StandIn::serving(command, serve)
    }

    pub(crate) fn serving(command: &str, serve: Serve) -> StandIn {
        let ns = Netns::new();
        let listener = ns.listen();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (log, command) = (seen.clone(), command.to_string());
        let (ca_pem, config) = tls_config("api.stand-in.test");
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, command, config) = (log.clone(), command.clone(), config.clone());
                std::thread::spawn(move || {
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    let mut tls = rustls::StreamOwned::new(conn, stream);
                    let _ = serve(&mut tls, &log, &command);
                    tls.conn.send_close_notify();
                    let _ = tls.flush();
                });
            }
        });
        StandIn {
            ns,
            port,
            seen,
            ca_pem,
        }
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A test CA (rcgen) and a TLS server config with a certificate it signed for `name`.
fn tls_config(name: &str) -> (String, Arc<rustls::ServerConfig>) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign];
    let issuer =
        rcgen::CertifiedIssuer::self_signed(params, rcgen::KeyPair::generate().unwrap()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec![name.to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .unwrap();
    (issuer.pem(), Arc::new(config))
}

/// Reads one request: its path, the key it carries (`x-api-key`, or a bearer token in
/// `authorization`) and its JSON body. Every answer closes the connection, so nothing
/// the reader buffers past the body is lost.
fn read_request(stream: &mut Tls) -> std::io::Result<(String, Option<String>, Value)> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let (mut length, mut api_key) = (0usize, None);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "x-api-key" => api_key = Some(value.trim().to_string()),
                "authorization" => {
                    api_key = value.trim().strip_prefix("Bearer ").map(str::to_string)
                }
                _ => {}
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok((
        path,
        api_key,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    ))
}

pub(crate) fn serve(
    stream: &mut Tls,
    log: &Mutex<Vec<Seen>>,
    command: &str,
) -> std::io::Result<()> {
    let (path, api_key, body) = read_request(stream)?;
    let has_result = body["messages"].as_array().is_some_and(|msgs| {
        msgs.iter().any(|m| {
            m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
        })
    });
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    log.lock().unwrap().push(Seen {
        path,
        api_key,
        body: body.clone(),
    });
    let out = stream;
    out.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
    )?;
    let mut event = |kind: &str, data: Value| -> std::io::Result<()> {
        out.write_all(format!("event: {kind}\ndata: {data}\n\n").as_bytes())?;
        out.flush()
    };
    let model = body["model"].as_str().unwrap_or("stand-in").to_string();
    event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )?;
    let stop = if offers_tools && !has_result {
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}}),
        )?;
        let input = json!({"command": command, "description": "commit a greeting"}).to_string();
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": input}}),
        )?;
        "tool_use"
    } else {
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
        )?;
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "done"}}),
        )?;
        "end_turn"
    };
    event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    )?;
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
    )?;
    event("message_stop", json!({"type": "message_stop"}))
}

/// A stand-in for the OpenAI Responses API, as Codex speaks it: to a request without a
/// tool's output yet, one `exec_command` call running `command`; to the others, "done".
pub(crate) fn serve_responses(
    stream: &mut Tls,
    log: &Mutex<Vec<Seen>>,
    command: &str,
) -> std::io::Result<()> {
    let (path, api_key, body) = read_request(stream)?;
    let has_output = body["input"]
        .as_array()
        .is_some_and(|items| items.iter().any(|i| i["type"] == "function_call_output"));
    let offers_exec = body["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "exec_command"));
    log.lock().unwrap().push(Seen {
        path: path.clone(),
        api_key,
        body,
    });
    let out = stream;
    if !path.ends_with("/responses") {
        return out.write_all(
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
    }
    out.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
    )?;
    let mut event = |kind: &str, mut data: Value| -> std::io::Result<()> {
        data["type"] = json!(kind);
        out.write_all(format!("event: {kind}\ndata: {data}\n\n").as_bytes())?;
        out.flush()
    };
    event("response.created", json!({"response": {"id": "resp_1"}}))?;
    let item = if offers_exec && !has_output {
        json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command",
            "arguments": json!({"cmd": command}).to_string(), "status": "completed"})
    } else {
        json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}]})
    };
    event(
        "response.output_item.done",
        json!({"output_index": 0, "item": item}),
    )?;
    event(
        "response.completed",
        json!({"response": {"id": "resp_1", "usage": {"input_tokens": 10,
            "input_tokens_details": null, "output_tokens": 5, "output_tokens_details": null,
            "total_tokens": 15}}}),
    )
}

/// What Codex's commands printed, as it sent them back to the stand-in.
pub(crate) fn function_outputs(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .flat_map(|s| s.body["input"].as_array().cloned().unwrap_or_default())
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].to_string())
        .collect()
}

/// The tool results Claude Code sent back to the stand-in.
pub(crate) fn tool_results(seen: &[Seen]) -> Vec<Value> {
    seen.iter()
        .flat_map(|s| s.body["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

pub(crate) const KEY: &str = "sk-ant-api03-stand-in-key-0123456789";

/// A user with a git identity in their own global git config (not in the environment),
/// the operator config pointing the stand-in's name at loopback, a repository, a loop,
/// and the agent logged in with `agent login`.
pub(crate) struct Setup {
    pub(crate) env: TestEnv,
    pub(crate) repo: PathBuf,
    pub(crate) id: String,
    pub(crate) gitconfig: PathBuf,
    pub(crate) stand_in: StandIn,
}

/// What every agent's stand-in is asked to run.
const COMMIT: &str = "echo hello > greeting.txt && git add greeting.txt && git commit -q -m 'add greeting' && echo COMMITTED";

impl Setup {
    /// Claude Code in `-p` mode.
    fn new(permissions: &str) -> Setup {
        Setup::claude(&["-p", "add a greeting"], COMMIT, permissions)
    }

    /// Claude Code with `args`, its base URL set in the vault (as a user behind a gateway
    /// would), its key bound to the stand-in's host, which runs `command` when asked.
    pub(crate) fn claude(args: &[&str], command: &str, permissions: &str) -> Setup {
        let stand_in = StandIn::start(command);
        let mut argv = vec![claude().display().to_string()];
        argv.extend(args.iter().map(|a| a.to_string()));
        let command = format!("{argv:?}");
        let setup = Setup::with(stand_in, &command, permissions, KEY);
        // Where the stand-in answers: test plumbing, as a user behind a gateway would set.
        let url = format!("https://api.stand-in.test:{}", setup.stand_in.port);
        setup.vault_set("ANTHROPIC_BASE_URL", &url);
        setup
    }

    /// `git loop vault set default env NAME` with `value`.
    pub(crate) fn vault_set(&self, name: &str, value: &str) {
        let set = self.git_loop(
            &["vault", "set", "default", "env", name],
            Some(value.as_bytes()),
        );
        assert_eq!(set.code, 0, "{}", set.stderr);
    }

    /// The environment this user runs `git loop` with: their identity comes from their
    /// git config.
    pub(crate) fn user_env(&self) -> Vec<(String, std::ffi::OsString)> {
        self.env
            .envs()
            .into_iter()
            .filter(|(k, _)| !k.starts_with("GIT_AUTHOR") && !k.starts_with("GIT_COMMITTER"))
            .map(|(k, v)| (k.to_string(), v))
            .chain([(
                "GIT_CONFIG_GLOBAL".to_string(),
                self.gitconfig.clone().into(),
            )])
            .collect()
    }

    /// A user whose agent is `command` (a TOML array), logged in with `key` bound to the
    /// stand-in's host and port (a user behind a gateway says the same with `--for`).
    pub(crate) fn with(stand_in: StandIn, command: &str, permissions: &str, key: &str) -> Setup {
        let env = TestEnv::new();
        let gitconfig = env.home.join(".gitconfig");
        std::fs::write(
            &gitconfig,
            "[user]\n\tname = Alice Example\n\temail = alice@example.com\n",
        )
        .unwrap();
        let config = env.home.join(".config/git-loop/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(
            &config,
            format!(
                "[agent]\ncommand = {command}\npermissions = \"{permissions}\"\n\n\
                 [network]\nallow_domains = [\"api.stand-in.test\"]\nallow_cidrs = [\"127.0.0.1/32\"]\n\
                 upstream_ca = {ca:?}\n\n\
                 [network.hosts]\n\"api.stand-in.test\" = \"127.0.0.1\"\n",
                ca = env.root.join("stand-in-ca.pem").display().to_string(),
            ),
        )
        .unwrap();
        std::fs::write(env.root.join("stand-in-ca.pem"), &stand_in.ca_pem).unwrap();
        let repo = env.repo("app");
        let mut setup = Setup {
            env,
            repo,
            id: String::new(),
            gitconfig,
            stand_in,
        };
        let new = setup.git_loop_in(&setup.repo.clone(), &["new", "greet"], None);
        assert_eq!(new.code, 0, "{}", new.stderr);
        setup.id = new.stdout.trim().to_string();
        // Bound to the stand-in's port as well: a binding without one is for 443 only.
        let bound_to = format!("api.stand-in.test:{}", setup.stand_in.port);
        let login = setup.git_loop(
            &["agent", "login", "--for", &bound_to],
            Some(key.as_bytes()),
        );
        assert_eq!(login.code, 0, "{}", login.stderr);
        // Inside, the agent's variable holds a placeholder of the key's shape: what reaches
        // the stand-in is the proxy's doing.
        let inside = setup.git_loop(&["run", "-q", &setup.id, "--", "env"], None);
        assert_eq!(inside.code, 0, "{}", inside.stderr);
        assert!(!inside.stdout.contains(key), "{}", inside.stdout);
        let value = inside
            .stdout
            .lines()
            .find_map(|l| {
                l.strip_prefix("ANTHROPIC_API_KEY=")
                    .or_else(|| l.strip_prefix("OPENAI_API_KEY="))
            })
            .unwrap_or_else(|| panic!("no key variable inside: {}", inside.stdout));
        assert!(
            value.starts_with("sk-") && value.len() == key.len(),
            "{value}"
        );
        setup
    }

    /// The agent's commit is in the user's repository, on the loop's branch, with their
    /// identity as author and committer.
    #[track_caller]
    fn assert_greeting_committed(&self) {
        let branch = format!("loop/{}", self.id);
        let log = self.env.git(
            &self.repo,
            ["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", &branch],
        );
        assert_eq!(
            log.trim(),
            "Alice Example <alice@example.com>|Alice Example <alice@example.com>|add greeting"
        );
        assert_eq!(
            self.env
                .git(&self.repo, ["show", &format!("{branch}:greeting.txt")]),
            "hello\n"
        );
    }

    /// `git loop ARGS` as this user runs it (in the stand-in's network namespace): their
    /// identity comes from their git config.
    pub(crate) fn git_loop_in(&self, cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
        let mut cmd = self.stand_in.ns.command(BIN);
        cmd.env_clear()
            .envs(self.user_env())
            .current_dir(cwd)
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        if let Some(input) = stdin {
            child.stdin.take().unwrap().write_all(input).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `git loop ARGS` as the command line a terminal runs (in the stand-in's network
    /// namespace).
    pub(crate) fn git_loop_argv(&self, args: &[&str]) -> Vec<String> {
        let mut argv = self.stand_in.ns.prefix.clone();
        argv.push(BIN.to_string());
        argv.extend(args.iter().map(|a| a.to_string()));
        argv
    }

    pub(crate) fn git_loop(&self, args: &[&str], stdin: Option<&[u8]>) -> Run {
        self.git_loop_in(&self.env.root.clone(), args, stdin)
    }
}

/// The agent's first `git commit` works and carries the user's identity, the agent runs
/// its Bash tool without a prompt (the sandbox is the boundary), it is logged in with
/// nothing but the key `agent login` stored, and the commit lands on `loop/<id>` in the
/// user's repository.
#[test]
fn claude_code_commits_in_its_loop_with_the_users_identity_and_no_prompt() {
    let s = Setup::new("sandbox");
    let run = s.git_loop(&["agent", &s.id], None);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run.stdout_has("done");
    let seen = s.stand_in.seen();
    assert!(seen.len() >= 2, "the stand-in saw {} requests", seen.len());
    for request in &seen {
        assert!(request.path.starts_with("/v1/messages"), "{}", request.path);
        assert_eq!(
            request.api_key.as_deref(),
            Some(KEY),
            "not logged in with the stored key"
        );
    }
    let results = tool_results(&seen);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_ne!(
        results[0]["is_error"], true,
        "the tool failed: {}",
        results[0]
    );
    assert!(
        results[0]["content"].to_string().contains("COMMITTED"),
        "{}",
        results[0]
    );
    // The commit is in the user's repository, on the loop's branch, with their identity.
    s.assert_greeting_committed();
    // Reached through the proxy, with nothing refused on the way.
    let log = s.git_loop(&["log", &s.id], None);
    assert!(!log.stdout.contains("violation"), "{}", log.stdout);
}

/// The twin that shows the profile is what makes it work: with `agent.permissions =
/// "ask"`, the same agent in the same loop is not told it may act without asking, so its
/// tool call is held for an approval no one can give in `-p` mode, and nothing lands.
#[test]
fn with_permissions_ask_claude_code_asks_and_commits_nothing() {
    let s = Setup::new("ask");
    let run = s.git_loop(&["agent", &s.id], None);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let results = tool_results(&s.stand_in.seen());
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["is_error"], true, "{}", results[0]);
    assert!(
        !results[0]["content"].to_string().contains("COMMITTED"),
        "{}",
        results[0]
    );
    let branch = format!("loop/{}", s.id);
    assert_eq!(
        s.env
            .git(&s.repo, ["log", "-1", "--format=%s", &branch])
            .trim(),
        "first"
    );
}

/// The Codex CLI on the host, which the test needs.
pub(crate) fn codex() -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("codex"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("the Codex CLI is not installed: npm install -g @openai/codex (.ci/run does)")
        })
}

pub(crate) const OPENAI_KEY: &str = "sk-proj-stand-in-key-0123456789";

/// The same with the real Codex CLI (the npm package `@openai/codex`) against a stand-in
/// for the Responses API. A user points Codex at another endpoint with its own `-c`
/// options (a model provider with a `base_url`); the key comes from `agent login`, which
/// stores it as `OPENAI_API_KEY`. Codex's own sandbox is off and it asks no approval, as
/// the config git-loop writes in its `CODEX_HOME` says; its command runs in the loop's
/// sandbox, commits with the user's identity, and the commit lands on `loop/<id>`.
#[test]
fn codex_commits_in_its_loop_with_the_users_identity_and_no_prompt() {
    let stand_in = StandIn::serving(COMMIT, serve_responses);
    let provider = format!(
        "model_providers.standin={{ name = \"stand-in\", base_url = \"https://api.stand-in.test:{}/v1\", env_key = \"OPENAI_API_KEY\", wire_api = \"responses\" }}",
        stand_in.port
    );
    let command = format!(
        "[{codex:?}, \"exec\", \"-c\", \"model_provider=\\\"standin\\\"\", \"-c\", {provider:?}, \"-m\", \"gpt-5\", \"add a greeting\"]",
        codex = codex().display().to_string(),
    );
    let s = Setup::with(stand_in, &command, "sandbox", OPENAI_KEY);
    let run = s.git_loop(&["agent", &s.id], None);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run.stdout_has("done");
    let seen = s.stand_in.seen();
    assert!(seen.len() >= 2, "the stand-in saw {} requests", seen.len());
    for request in &seen {
        assert_eq!(request.path, "/v1/responses");
        assert_eq!(
            request.api_key.as_deref(),
            Some(OPENAI_KEY),
            "not logged in with the stored key"
        );
    }
    let outputs = function_outputs(&seen);
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(outputs[0].contains("COMMITTED"), "{}", outputs[0]);
    s.assert_greeting_committed();
    // Nothing refused, and nothing but the stand-in asked for: no update check, no
    // analytics, no plugin marketplace.
    let log = s.git_loop(&["log", &s.id], None);
    assert!(!log.stdout.contains("violation"), "{}", log.stdout);
    assert!(!log.stdout.contains("upstream"), "{}", log.stdout);
}

/// A tmux server of the test's own, for the user's terminals.
struct Terminals {
    socket: PathBuf,
}

impl Terminals {
    fn new(root: &Path) -> Terminals {
        Terminals {
            socket: root.join("terminals.sock"),
        }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg("/dev/null")
            .args(args)
            .output()
            .expect("tmux is installed (.ci/run installs it)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A terminal named `name` running `argv` with `envs` (and nothing else).
    fn open(&self, name: &str, envs: &[(String, String)], argv: &[String]) {
        let mut line = vec!["env".to_string(), "-i".to_string()];
        line.extend(envs.iter().map(|(k, v)| format!("{k}={v}")));
        line.extend(argv.iter().cloned());
        let quoted: Vec<String> = line
            .iter()
            .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
            .collect();
        let shell = format!("{}; sleep 600", quoted.join(" "));
        let mut args = vec![
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "140",
            "-y",
            "40",
            &shell,
        ];
        if self.tmux(&["has-session"]).is_empty() && !self.socket.exists() {
            args[0] = "new-session";
        }
        self.tmux(&args);
    }

    fn screen(&self, name: &str) -> String {
        self.tmux(&["capture-pane", "-p", "-t", name])
    }
}

impl Drop for Terminals {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

fn wait_for(limit: std::time::Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    f()
}

/// A live loop with the real Claude Code (issue 31): `agent --detach`, two terminals
/// attached to the same screen, the detach key, the agent's states in `list` and `watch`,
/// the operator's notification command, and `down` ending everything.
#[test]
fn claude_code_runs_detached_in_a_live_session_and_says_what_it_is_doing() {
    // The turn takes a few seconds (its tool sleeps), so `working` is seen.
    let stand_in = StandIn::start("sleep 4 && echo WORKED");
    let command = format!("[{:?}]", claude().display().to_string());
    let s = Setup::with(stand_in, &command, "sandbox", KEY);
    let url = format!("https://api.stand-in.test:{}", s.stand_in.port);
    let base = s.git_loop(
        &["vault", "set", "default", "env", "ANTHROPIC_BASE_URL"],
        Some(url.as_bytes()),
    );
    assert_eq!(base.code, 0, "{}", base.stderr);
    // The operator's notification program records what it is given.
    let notified = s.env.root.join("notified.txt");
    let script = s.env.root.join("notify.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$1|$2|$3\" >> {}\n", notified.display()),
    )
    .unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&script).unwrap().permissions(),
        0o755,
    );
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = s.env.home.join(".config/git-loop/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[notify]\ncommand = [{:?}]\n",
        script.display().to_string()
    ));
    std::fs::write(&config, text).unwrap();

    // `watch --json` from the start.
    let watch_out = s.env.root.join("watch.jsonl");
    let mut watch = s
        .stand_in
        .ns
        .command(BIN)
        .env_clear()
        .envs(s.env.envs())
        .args(["watch", "--json", &s.id])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&watch_out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    let detach = s.git_loop(&["agent", &s.id, "--detach", "--", "add a greeting"], None);
    assert_eq!(detach.code, 0, "{}", detach.stderr);
    assert!(
        detach.stderr.contains("git loop attach"),
        "{}",
        detach.stderr
    );

    // Two terminals attach and see the same screen: the agent's.
    let terms = Terminals::new(&s.env.root);
    let envs: Vec<(String, String)> = s
        .env
        .envs()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string_lossy().into_owned()))
        .chain([("TERM".to_string(), "xterm-256color".to_string())])
        .collect();
    let attach = s.git_loop_argv(&["attach", &s.id]);
    terms.open("one", &envs, &attach);
    terms.open("two", &envs, &attach);
    let agent_screen = |name: &str| {
        let screen = terms.screen(name);
        screen.contains("add a greeting") || screen.contains("WORKED") || screen.contains("done")
    };
    assert!(
        wait_for(std::time::Duration::from_secs(30), || agent_screen("one")
            && agent_screen("two")),
        "one:\n{}\ntwo:\n{}",
        terms.screen("one"),
        terms.screen("two")
    );
    let list = s.git_loop(&["list", "--json"], None);
    let loops: Value = serde_json::from_str(&list.stdout).unwrap();
    let agent = &loops[0]["agent"];
    assert_eq!(agent["attached"], 2, "{agent}");

    // The stand-in ends the turn: the agent waits for the person.
    let state = || {
        let list = s.git_loop(&["list", "--json"], None);
        let loops: Value = serde_json::from_str(&list.stdout).unwrap_or_default();
        loops[0]["agent"]["state"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        wait_for(std::time::Duration::from_secs(60), || state()
            == "needs-input"),
        "state {}; screen:\n{}",
        state(),
        terms.screen("one")
    );
    // `watch` prints the change within a second of the hook.
    wait_for(std::time::Duration::from_secs(5), || {
        std::fs::read_to_string(&watch_out)
            .unwrap_or_default()
            .contains("\"needs-input\"")
    });
    let watched = std::fs::read_to_string(&watch_out).unwrap();
    let states: Vec<String> = watched
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["state"].as_str().map(str::to_string))
        .collect();
    let working = states.iter().position(|s| s == "working");
    let waiting = states.iter().rposition(|s| s == "needs-input");
    assert!(
        matches!((working, waiting), (Some(w), Some(n)) if w < n),
        "watch printed: {watched}"
    );
    let said = std::fs::read_to_string(&notified).unwrap_or_default();
    assert!(
        said.contains(&format!("{}|greet|needs-input", s.id)),
        "notified: {said}"
    );

    // The detach key leaves the agent running.
    terms.tmux(&["send-keys", "-t", "one", "C-b", "d"]);
    assert!(wait_for(std::time::Duration::from_secs(10), || terms
        .screen("one")
        .contains("detached")));
    let ps = s.git_loop(&["run", "-q", &s.id, "--", "ps", "-eo", "args"], None);
    assert!(ps.stdout.contains("claude"), "{}", ps.stdout);

    // `down` ends everything of the session.
    let sup: u32 =
        std::fs::read_to_string(s.env.ws.join("locks/live").join(format!("{}.pid", s.id)))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
    let down = s.git_loop(&["down", &s.id], None);
    assert_eq!(down.code, 0, "{}", down.stderr);
    assert!(
        !std::path::Path::new(&format!("/proc/{sup}")).exists() || {
            let stat = std::fs::read_to_string(format!("/proc/{sup}/stat")).unwrap_or_default();
            stat.contains(") Z")
        }
    );
    assert!(
        wait_for(std::time::Duration::from_secs(10), || terms
            .screen("two")
            .contains("exited")
            || terms.screen("two").contains("lost")
            || terms.screen("two").contains("ended")),
        "{}",
        terms.screen("two")
    );
    let _ = watch.kill();
    let _ = watch.wait();
}
