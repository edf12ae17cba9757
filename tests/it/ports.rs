//! A loop's ports on the host (DESIGN 10, issue 32): a real web server inside a live
//! session reached from the host through the loop's port; stable host ports; the relay
//! attacked from inside; bad input; `open` with a stand-in browser; a teammate's config.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::common::{Run, TestEnv};

fn up(env: &TestEnv, id: &str) -> Run {
    let run = env.run(["up", id]).ok();
    run.stderr_has("session is up");
    run
}

/// Starts `python3 -m http.server PORT` in loop `id`'s session, serving `who` at /who.
fn serve(env: &TestEnv, id: &str, port: u16, who: &str) {
    let script = format!(
        "mkdir -p /tmp/www && echo {who} > /tmp/www/who && cd /tmp/www && \
         setsid python3 -m http.server {port} --bind 127.0.0.1 >/tmp/www.log 2>&1 </dev/null &"
    );
    env.run(["run", "-q", id, "--", "sh", "-c", &script]).ok();
}

/// The loop's ports as `port --json` gives them: (inside, host).
fn ports(env: &TestEnv, id: &str) -> Vec<(u16, u16)> {
    let v = env.run(["port", id, "--json"]).ok().json();
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!(p["url"], format!("http://127.0.0.1:{}/", p["host"]), "{p}");
            (
                p["inside"].as_u64().unwrap() as u16,
                p["host"].as_u64().unwrap() as u16,
            )
        })
        .collect()
}

/// GET `path` on 127.0.0.1:`port` of the host: the body, or `None` when the connection is
/// refused or cut.
fn get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").as_bytes())
        .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.0 200").then(|| body.to_string())
}

/// `get` until the server inside answers (it takes a moment to start).
fn get_when_up(port: u16, path: &str) -> String {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(body) = get(port, path) {
            return body;
        }
        assert!(
            Instant::now() < until,
            "nothing answered on 127.0.0.1:{port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn refused(port: u16) -> bool {
    matches!(
        TcpStream::connect(("127.0.0.1", port)),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused
    )
}

#[test]
fn a_web_server_inside_is_reached_from_the_host_and_two_loops_get_two_ports() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = env.new_loop(&repo, "site a");
    let b = env.new_loop(&repo, "site b");
    env.write_profile("ports = [3000]\n");
    // Nothing is forwarded before a session is up.
    assert_eq!(ports(&env, &a), vec![]);
    up(&env, &a).stderr_has("port 3000 is at http://127.0.0.1:");
    up(&env, &b);
    let pa = ports(&env, &a);
    let pb = ports(&env, &b);
    assert_eq!(pa.len(), 1);
    assert_eq!(pb.len(), 1);
    assert_eq!(pa[0].0, 3000);
    assert_ne!(
        pa[0].1, pb[0].1,
        "two loops, one inside port, two host ports"
    );
    serve(&env, &a, 3000, "loop-a");
    serve(&env, &b, 3000, "loop-b");
    assert_eq!(get_when_up(pa[0].1, "/who"), "loop-a\n");
    assert_eq!(get_when_up(pb[0].1, "/who"), "loop-b\n");
    // list and show say the same, with the URL.
    let list = env.run(["list", "--json"]).ok().json();
    for item in list.as_array().unwrap() {
        let host = if item["id"] == a.as_str() {
            pa[0].1
        } else {
            pb[0].1
        };
        assert_eq!(
            item["ports"],
            serde_json::json!([{"inside": 3000, "host": host, "url": format!("http://127.0.0.1:{host}/")}])
        );
    }
    env.run(["list"])
        .ok()
        .stdout_has(&format!("up · :{}", pa[0].1));
    let show = env.run(["show", &a, "--json"]).ok().json();
    assert_eq!(show["ports"][0]["host"], pa[0].1);
    env.run(["show", &a]).ok().stdout_has(&format!(
        "port:       3000 at http://127.0.0.1:{}/",
        pa[0].1
    ));

    // Down: the host port refuses; the other loop's still answers.
    env.run(["down", &a]).ok();
    assert!(refused(pa[0].1), "a loop's port listens while it is down");
    assert_eq!(get(pb[0].1, "/who").as_deref(), Some("loop-b\n"));
    // Still listed (the same port comes back), and back at the same port after up.
    assert_eq!(ports(&env, &a), pa);
    up(&env, &a);
    assert_eq!(ports(&env, &a), pa, "the host port changed across down/up");
    // A new session has a new /tmp: the server is started again, and reached again.
    assert!(get(pa[0].1, "/who").is_none());
    serve(&env, &a, 3000, "loop-a-again");
    assert_eq!(get_when_up(pa[0].1, "/who"), "loop-a-again\n");
    env.run(["down", &a]).ok();
    env.run(["down", &b]).ok();
    assert!(refused(pb[0].1));
}

#[test]
fn a_port_added_by_command_is_kept_moved_when_taken_and_removed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "added ports");
    let other = env.new_loop(&repo, "another");
    env.run(["port", &id, "8000"])
        .fails(1)
        .stderr_has("has no session up")
        .stderr_has(&format!("hint: start it: git loop up {id}"));
    up(&env, &id);
    let run = env.run(["port", &id, "8000"]).ok();
    let first = ports(&env, &id);
    assert_eq!(first.len(), 1);
    let p1 = first[0].1;
    assert_eq!(run.stdout.trim(), format!("http://127.0.0.1:{p1}/"));
    // Again: the same port, nothing new.
    env.run(["port", &id, "8000"])
        .ok()
        .stderr_has("was already at");
    serve(&env, &id, 8000, "added");
    assert_eq!(get_when_up(p1, "/who"), "added\n");

    // Down, something else takes the port on the host; up moves it and remembers.
    env.run(["down", &id]).ok();
    let squatter = TcpListener::bind(("127.0.0.1", p1)).unwrap();
    up(&env, &id);
    let moved = ports(&env, &id);
    assert_eq!(moved.len(), 1);
    let p2 = moved[0].1;
    assert_ne!(p2, p1);
    let remembered = fs::read_to_string(env.loop_dir(&id).join("ports.toml")).unwrap();
    assert!(remembered.contains(&format!("host = {p2}")), "{remembered}");
    env.run(["down", &id]).ok();
    drop(squatter);
    up(&env, &id);
    assert_eq!(ports(&env, &id), moved, "the moved port was not remembered");

    // --host: a port in use on the host, another loop's, then a free one.
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy_port = busy.local_addr().unwrap().port().to_string();
    env.run(["port", &id, "9000", "--host", &busy_port])
        .fails(2)
        .stderr_has(&format!("port {busy_port} on the host is in use"));
    up(&env, &other);
    let theirs = env.run(["port", &other, "9000"]).ok().stdout;
    let their_port = theirs
        .trim()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/');
    env.run(["port", &id, "9000", "--host", their_port])
        .fails(2)
        .stderr_has(&format!("is loop {other}'s (its port 9000)"));
    drop(busy);
    env.run(["port", &id, "9000", "--host", &busy_port]).ok();
    assert!(ports(&env, &id).contains(&(9000, busy_port.parse().unwrap())));

    // Removed: refused at once, and not forwarded at the next up.
    env.run(["port", &id, "8000", "--remove"]).ok();
    assert!(refused(p2));
    env.run(["port", &id, "8000", "--remove"])
        .fails(2)
        .stderr_has("does not forward port 8000");
    env.run(["down", &id]).ok();
    up(&env, &id);
    let after: Vec<u16> = ports(&env, &id).iter().map(|p| p.0).collect();
    assert_eq!(after, vec![9000]);
    env.run(["down", &id]).ok();
    env.run(["down", &other]).ok();
}

#[test]
fn bad_ports_get_one_line_and_a_hint() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "bad ports");
    for (args, says) in [
        (
            vec!["port", &id, "0"],
            "INSIDE: port 0 is not a port to forward",
        ),
        (vec!["port", &id, "65536"], "INSIDE: 65536 is not a port"),
        (
            vec!["port", &id, "http"],
            "INSIDE: http is not a port number",
        ),
        (
            vec!["port", &id, "3000", "--host", "70000"],
            "--host: 70000 is not a port",
        ),
        (vec!["open", &id, "0"], "INSIDE: port 0"),
    ] {
        env.run(&args)
            .fails(2)
            .stderr_has(says)
            .stderr_has("hint: give a port from 1 to 65535");
    }
    env.run(["open", &id])
        .fails(1)
        .stderr_has("has no session up");
    // A profile's port that is not one is the profile's error, with its line.
    env.write_profile("ports = [3000, 70000]\n");
    env.run(["up", &id])
        .fails(1)
        .stderr_has("70000 is not a port");
    assert!(!env.loop_dir(&id).join("ports.toml").exists());
}

#[test]
fn open_runs_the_browser_with_the_url_as_an_argument_never_a_shell() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "open me");
    env.write_profile("ports = [5173, 3000]\n");
    up(&env, &id);
    let hosts = ports(&env, &id);
    let record = env.root.join("browser-argv");
    let browser = env.root.join("browser");
    fs::write(
        &browser,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > {}\n",
            record.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&browser, fs::Permissions::from_mode(0o755)).unwrap();
    let url = |h: u16| format!("http://127.0.0.1:{h}/");
    let open = |args: &[&str], browser_var: &str| {
        let mut cmd = env.command();
        cmd.args(args).env("BROWSER", browser_var);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        fs::read_to_string(&record).unwrap()
    };
    // The first port without one named; the one named; `%s`; a shell line is words.
    assert_eq!(
        open(&["open", &id], browser.to_str().unwrap()),
        format!("{}\n", url(hosts[0].1))
    );
    assert_eq!(
        open(&["open", &id, "3000"], browser.to_str().unwrap()),
        format!("{}\n", url(hosts[1].1))
    );
    assert_eq!(
        open(
            &["open", &id, "3000"],
            &format!("{} --new-tab=%s:firefox", browser.display())
        ),
        format!("--new-tab={}\n", url(hosts[1].1))
    );
    let marker = env.root.join("PWNED");
    let line = format!(
        "{} ;touch {} $(touch {})",
        browser.display(),
        marker.display(),
        marker.display()
    );
    let said = open(&["open", &id], &line);
    assert!(!marker.exists(), "BROWSER went through a shell");
    assert!(said.starts_with(";touch"), "{said}");
    env.run(["open", &id, "4000"])
        .fails(2)
        .stderr_has(&format!("hint: forward it first: git loop port {id} 4000"));
    env.run(["down", &id]).ok();
}

/// From inside: the forwarded port reaches only the server inside; the loop's host port,
/// and a server that listens on the host's loopback only, are not reachable at all.
#[test]
fn the_relay_gives_the_sandbox_no_way_to_the_host() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "attack the relay");
    env.write_profile("ports = [3000]\n");
    // A host-only server, which must see no connection.
    let host_server = TcpListener::bind("127.0.0.1:0").unwrap();
    let host_only = host_server.local_addr().unwrap().port();
    host_server.set_nonblocking(true).unwrap();
    up(&env, &id);
    let forwarded = ports(&env, &id)[0].1;
    serve(&env, &id, 3000, "inside");
    assert_eq!(get_when_up(forwarded, "/who"), "inside\n");
    let probe = format!(
        r#"
import socket
def try_port(name, port):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /who HTTP/1.0\r\n\r\n")
        # http.server writes its head and its body apart: read to the end.
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        print(name, "REACHED", data.split(b"\r\n\r\n")[-1].decode().strip())
    except OSError as e:
        print(name, "refused")
for name, port in [("forwarded-host-port", {forwarded}), ("host-only-server", {host_only}), ("inside", 3000)]:
    try_port(name, port)
# Through the sandbox's own way out, the proxy, as well.
import os, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({{"http": os.environ["HTTP_PROXY"]}}))
for name, port in [("forwarded-host-port", {forwarded}), ("host-only-server", {host_only})]:
    try:
        opener.open("http://127.0.0.1:%d/who" % port, timeout=5).read()
        print(name, "via proxy REACHED")
    except Exception:
        print(name, "via proxy refused")
for line in open("/proc/net/tcp").read().splitlines()[1:]:
    local = int(line.split()[1].split(":")[1], 16)
    if local in ({forwarded}, {host_only}):
        print("seen", local)
"#
    );
    let out = env
        .run(["run", "-q", &id, "--", "python3", "-c", &probe])
        .ok()
        .stdout;
    assert_eq!(
        out,
        "forwarded-host-port refused\nhost-only-server refused\ninside REACHED inside\n\
         forwarded-host-port via proxy refused\nhost-only-server via proxy refused\n",
        "{out}"
    );
    // The positive twin from the host, and the host-only server saw nobody.
    assert_eq!(get(forwarded, "/who").as_deref(), Some("inside\n"));
    assert!(
        host_server.accept().is_err(),
        "the host-only server was reached"
    );
    env.run(["down", &id]).ok();
    assert!(refused(forwarded));
}

/// ATTACKS 40-style: a teammate's team config asks for the ports on every address; the
/// victim's ports still listen on loopback only (the operator's key), while the profile's
/// inside ports (data) are forwarded.
#[test]
fn a_teammate_cannot_open_a_loop_s_ports_beyond_loopback() {
    use crate::sync::{machine, sync, Remotes};
    let remotes = Remotes::new();
    let teammate = machine(&remotes);
    sync(&teammate).ok();
    let victim = machine(&remotes);
    sync(&victim).ok();
    let clone = teammate.root.join("teammate-knowledge");
    teammate.git(
        &teammate.root,
        [
            "clone",
            "-q",
            "-b",
            "main",
            &remotes.url("knowledge"),
            clone.to_str().unwrap(),
        ],
    );
    fs::create_dir_all(clone.join(".loopat/sandboxes/default")).unwrap();
    fs::write(
        clone.join(".loopat/config.toml"),
        "[ports]\naddress = \"0.0.0.0\"\n",
    )
    .unwrap();
    fs::write(
        clone.join(".loopat/sandboxes/default/sandbox.toml"),
        "ports = [3000]\n",
    )
    .unwrap();
    teammate.git(&clone, ["add", "-A"]);
    teammate.git(&clone, ["commit", "-q", "-m", "ports everywhere"]);
    teammate.git(&clone, ["push", "-q", "origin", "main"]);
    sync(&victim).ok();
    victim
        .run(["config", "list", "--show-origin"])
        .ok()
        .stderr_has("only the operator config may open a loop's ports");
    let repo = victim.repo("app");
    let id = victim.new_loop(&repo, "team ports");
    up(&victim, &id);
    let host = ports(&victim, &id)[0].1;
    serve(&victim, &id, 3000, "team");
    assert_eq!(get_when_up(host, "/who"), "team\n");
    let listening = listen_address(host);
    assert_eq!(
        listening.as_deref(),
        Some("0100007F"),
        "listening on {listening:?}"
    );
    // The personal layer is refused the same; the operator's is taken.
    victim
        .run(["config", "set", "ports.address", "0.0.0.0"])
        .fails(2)
        .stderr_has("only the operator config may open a loop's ports");
    victim
        .run(["config", "set", "ports.address", "127.0.0.2"])
        .ok();
    victim
        .run(["config", "set", "--operator", "ports.address", "0.0.0.0"])
        .ok();
    victim
        .run(["config", "unset", "--operator", "ports.address"])
        .ok();
    victim.run(["down", &id]).ok();
}

/// The local address (hex, as /proc/net/tcp has it) of the socket listening on `port`.
fn listen_address(port: u16) -> Option<String> {
    let table = fs::read_to_string("/proc/net/tcp").ok()?;
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (addr, p) = f.get(1)?.split_once(':')?;
        (u16::from_str_radix(p, 16).ok()? == port && f.get(3) == Some(&"0A"))
            .then(|| addr.to_string())
    })
}
