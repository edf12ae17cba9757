//! A loop's ports on the host (DESIGN 10): a port inside the loop's network namespace,
//! reachable on the host at `127.0.0.1:HOST` while the loop's session is up.
//!
//! Which ports: a sandbox profile's `ports = [3000, 5173]` and those added by
//! `git loop port ID INSIDE`. Which host port: remembered per loop and inside port in
//! `loops/<id>/ports.toml` (host-side: the loop's folder itself is not in any sandbox's
//! view), else derived from the loop's id and the inside port ([`candidate`]: the same
//! loop and port get the same host port on every machine), moved to the next candidate
//! when something else on the host holds it or another loop remembers it, and remembered
//! from then on. `--host PORT` pins one; a pinned port is never moved.
//!
//! Where: `ports.address` of the config, loopback unless the operator config names
//! another address (`config::policy`: no other layer may, and a sandbox profile names
//! inside ports only).
//!
//! How: the session's supervisor holds each host listener (so nothing listens while the
//! session is down, and a connection is refused), and for each connection it accepts
//! asks the session's init, over the socketpair only the two of them hold, for a TCP
//! connection to `127.0.0.1:INSIDE` made inside the sandbox's network namespace; the
//! init hands that socket back (`SCM_RIGHTS`) and the supervisor moves bytes between the
//! two ([`relay`]). Nothing of the host is in the sandbox's view through it: the listener
//! is in the host's namespace, the socket inside is a plain client connection from the
//! sandbox's own loopback, and the init dials nothing but 127.0.0.1 of its own namespace
//! on a port the supervisor names. While the session is up, `locks/live/<id>.ports`
//! (host-only) says what is forwarded; `list` and `show` read it, else the remembered
//! ports.

pub mod relay;

use std::net::{IpAddr, TcpListener};
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Error, Result};
use crate::workspace::Workspace;

/// Where derived host ports fall: below Linux's ephemeral range (32768-60999), so an
/// outgoing connection's port never takes one, and above the usual dev servers' own.
pub const DERIVED_FIRST: u16 = 20000;
pub const DERIVED_COUNT: u16 = 10000;
/// The most read of a ports file (a loop forwards a handful of ports).
const MAX_FILE: u64 = 1 << 20;
/// How many candidates a port tries before giving up.
const ATTEMPTS: u32 = 64;

/// A profile's `ports`: a list of ports 1-65535, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsidePorts(pub Vec<u16>);

impl<'de> Deserialize<'de> for InsidePorts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<InsidePorts, D::Error> {
        use serde::de::Error as _;
        let raw = Vec::<i64>::deserialize(d)?;
        let mut out = Vec::new();
        for n in raw {
            let port = u16::try_from(n)
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| D::Error::custom(format!("{n} is not a port (1-65535)")))?;
            if out.contains(&port) {
                return Err(D::Error::custom(format!("port {port} is listed twice")));
            }
            out.push(port);
        }
        Ok(InsidePorts(out))
    }
}

/// A port as a person writes it on the command line: 1-65535.
pub fn parse_port(text: &str) -> std::result::Result<u16, String> {
    match text.parse::<u32>() {
        Ok(0) => Err("port 0 is not a port to forward".into()),
        Ok(n) if n <= 65535 => Ok(n as u16),
        Ok(n) => Err(format!("{n} is not a port (ports go up to 65535)")),
        Err(_) => Err(format!(
            "{} is not a port number",
            crate::terminal::visible(text)
        )),
    }
}

/// One remembered forward of a loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forward {
    pub inside: u16,
    pub host: u16,
    /// Added by `git loop port` (forwarded at every `up`, as the profile's are).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub added: bool,
    /// Chosen with `--host`: never moved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    /// Removed by `git loop port ID INSIDE --remove`: a profile's port stays off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub off: bool,
}

/// `loops/<id>/ports.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remembered {
    #[serde(default, rename = "port")]
    pub ports: Vec<Forward>,
}

impl Remembered {
    pub fn get(&self, inside: u16) -> Option<&Forward> {
        self.ports.iter().find(|f| f.inside == inside)
    }

    /// Sets the forward of `f.inside`.
    pub fn put(&mut self, f: Forward) {
        match self.ports.iter_mut().find(|g| g.inside == f.inside) {
            Some(g) => *g = f,
            None => self.ports.push(f),
        }
    }

    /// The inside ports forwarded at `up`: the profile's, then the added ones, less the
    /// ones turned off.
    pub fn wanted(&self, profile: &[u16]) -> Vec<u16> {
        let mut out: Vec<u16> = profile
            .iter()
            .copied()
            .filter(|p| !self.get(*p).is_some_and(|f| f.off))
            .collect();
        for f in &self.ports {
            if f.added && !f.off && !out.contains(&f.inside) {
                out.push(f.inside);
            }
        }
        out
    }
}

/// The loop's remembered ports (none when the file is not there).
pub fn load(ws: &Workspace, id: &str) -> Result<Remembered> {
    let path = ws.loop_ports(id);
    let bytes = crate::fsutil::read_regular(&path, MAX_FILE)
        .map_err(|e| Error::failure(format!("cannot read {}", path.display())).with_source(e))?;
    let Some(bytes) = bytes else {
        return Ok(Remembered::default());
    };
    let text = String::from_utf8_lossy(&bytes);
    toml::from_str(&text).map_err(|e| {
        PortError::BadFile {
            path: path.clone(),
            message: e.message().to_string(),
        }
        .into()
    })
}

/// Writes the loop's remembered ports (atomically). The caller holds the workspace lock.
pub fn save(ws: &Workspace, id: &str, r: &Remembered) -> Result<()> {
    let text =
        toml::to_string(r).map_err(|e| Error::failure("cannot write the ports").with_source(e))?;
    crate::fsutil::write_atomic(&ws.loop_ports(id), text.as_bytes())
}

/// The `attempt`th host port candidate of loop `id`'s port `inside`: FNV-1a of both, so
/// it is the same wherever the loop is, in [`DERIVED_FIRST`], + [`DERIVED_COUNT`].
pub fn candidate(id: &str, inside: u16, attempt: u32) -> u16 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id
        .bytes()
        .chain([0])
        .chain(inside.to_be_bytes())
        .chain(attempt.to_be_bytes())
    {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    DERIVED_FIRST + (h % u64::from(DERIVED_COUNT)) as u16
}

/// The URL a forward is opened at.
pub fn url(address: IpAddr, host: u16) -> String {
    match address {
        IpAddr::V6(a) => format!("http://[{a}]:{host}/"),
        IpAddr::V4(a) => format!("http://{a}:{host}/"),
    }
}

/// Why a port cannot be forwarded or removed (the command line's words and hints for
/// each are in `cli::errors::ports`).
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    #[error("port {host} on the host is loop {owner}'s (its port {inside})")]
    OtherLoop {
        host: u16,
        owner: String,
        inside: u16,
    },
    #[error("port {host} on the host is in use")]
    InUse { host: u16, id: String, inside: u16 },
    #[error("cannot listen on {address} port {host}: {source}")]
    Listen {
        address: IpAddr,
        host: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("no free host port for port {inside} after {ATTEMPTS} tries")]
    Exhausted { inside: u16 },
    #[error("loop {id} has no session up: its ports are forwarded only while it is")]
    NoSession { id: String },
    #[error("loop {id} does not forward port {inside}")]
    NotForwarded { id: String, inside: u16 },
    #[error("loop {id}'s session ended")]
    SessionEnded { id: String },
    #[error("loop {id}'s session did not answer")]
    NoAnswer { id: String },
    #[error("loop {id}'s session refused the port: {why}")]
    Refused { id: String, why: String },
    #[error("{} is not a ports file: {message}", path.display())]
    BadFile { path: PathBuf, message: String },
}

/// The host ports other loops remember: (host, loop, inside).
fn others(ws: &Workspace, id: &str) -> Vec<(u16, String, u16)> {
    let mut out = Vec::new();
    for other in ws.loop_ids().unwrap_or_default() {
        if other == id {
            continue;
        }
        if let Ok(r) = load(ws, &other) {
            out.extend(r.ports.iter().map(|f| (f.host, other.clone(), f.inside)));
        }
    }
    out
}

/// Listens for loop `id`'s port `inside` on `address`: on `want` (pinned) if given, else
/// on the remembered port, else on the first free candidate. Returns the listener and the
/// forward to remember. The caller holds the workspace lock (so two loops never take one
/// port) and saves the forward.
pub fn listen(
    ws: &Workspace,
    id: &str,
    remembered: &Remembered,
    inside: u16,
    want: Option<u16>,
    address: IpAddr,
) -> std::result::Result<(TcpListener, Forward), PortError> {
    let taken = others(ws, id);
    let owner = |host: u16| taken.iter().find(|(h, _, _)| *h == host);
    let ours = |host: u16| {
        remembered
            .ports
            .iter()
            .any(|f| f.host == host && f.inside != inside)
    };
    let bind = |host: u16| TcpListener::bind((address, host));
    let prior = remembered.get(inside);
    let added = prior.is_some_and(|f| f.added);
    let pinned_host = want.or(prior.filter(|f| f.pinned).map(|f| f.host));
    if let Some(host) = pinned_host {
        if let Some(mine) = remembered
            .ports
            .iter()
            .find(|f| f.host == host && f.inside != inside)
        {
            return Err(PortError::OtherLoop {
                host,
                owner: id.to_string(),
                inside: mine.inside,
            });
        }
        if let Some((_, owner, theirs)) = owner(host) {
            return Err(PortError::OtherLoop {
                host,
                owner: owner.clone(),
                inside: *theirs,
            });
        }
        return match bind(host) {
            Ok(l) => Ok((
                l,
                Forward {
                    inside,
                    host,
                    added,
                    pinned: true,
                    off: false,
                },
            )),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(PortError::InUse {
                host,
                id: id.to_string(),
                inside,
            }),
            Err(source) => Err(PortError::Listen {
                address,
                host,
                source,
            }),
        };
    }
    let remembered_host = prior.map(|f| f.host);
    let candidates = remembered_host
        .into_iter()
        .chain((0..ATTEMPTS).map(|a| candidate(id, inside, a)));
    for host in candidates {
        if owner(host).is_some() || ours(host) {
            continue;
        }
        match bind(host) {
            Ok(l) => {
                return Ok((
                    l,
                    Forward {
                        inside,
                        host,
                        added,
                        pinned: false,
                        off: false,
                    },
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(source) => {
                return Err(PortError::Listen {
                    address,
                    host,
                    source,
                })
            }
        }
    }
    Err(PortError::Exhausted { inside })
}

/// One forwarded port as `list`, `show` and `port` give it (`ports: [{inside, host, url}]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    pub inside: u16,
    pub host: u16,
    pub url: String,
}

/// What a live session forwards now (`locks/live/<id>.ports`, the supervisor's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Live {
    pub ports: Vec<Listed>,
    /// Ports the session could not forward, with why.
    #[serde(default)]
    pub failed: Vec<(u16, String)>,
}

/// The host-only file of what a session forwards.
pub fn live_path(ws: &Workspace, id: &str) -> PathBuf {
    crate::session::live_dir(ws).join(format!("{id}.ports"))
}

/// What loop `id`'s session forwards (read by `up`, `list`, `show`).
pub fn read_live(ws: &Workspace, id: &str) -> Option<Live> {
    let bytes = crate::fsutil::read_regular(&live_path(ws, id), MAX_FILE).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Writes what the session forwards (the supervisor only).
pub fn write_live(ws: &Workspace, id: &str, live: &Live) {
    if let Ok(text) = serde_json::to_vec(live) {
        let _ = crate::fsutil::write_atomic(&live_path(ws, id), &text);
    }
}

/// Loop `id`'s ports: what its session forwards while it is up, else the remembered ones
/// (the same host ports come back at the next `up`).
pub fn listed(ws: &Workspace, id: &str, address: IpAddr) -> Vec<Listed> {
    if crate::session::is_up(ws, id) {
        if let Some(live) = read_live(ws, id) {
            return live.ports;
        }
    }
    let Ok(r) = load(ws, id) else {
        return Vec::new();
    };
    r.ports
        .iter()
        .filter(|f| !f.off)
        .map(|f| Listed {
            inside: f.inside,
            host: f.host,
            url: url(address, f.host),
        })
        .collect()
}

/// What [`add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// Forwarded now.
    New(Listed),
    /// Already forwarded there.
    Already(Listed),
}

/// `git loop port ID INSIDE [--host PORT]`: forwards `inside` of loop `id`'s live session
/// now and at every later `up`. The host port is `want`, else the one remembered, else
/// derived; the listener is made here and handed to the supervisor, which serves it.
pub fn add(
    ws: &Workspace,
    id: &str,
    inside: u16,
    want: Option<u16>,
    address: IpAddr,
) -> Result<Added> {
    use crate::session::wire::Message;
    use std::os::fd::AsRawFd;
    let _lock = crate::fsutil::Lock::acquire(&ws.workspace_lock())?;
    if !crate::session::is_up(ws, id) {
        return Err(PortError::NoSession { id: id.into() }.into());
    }
    let mut remembered = load(ws, id)?;
    let live = read_live(ws, id).unwrap_or_default();
    if let Some(now) = live.ports.iter().find(|l| l.inside == inside) {
        if want.is_none_or(|w| w == now.host) {
            // Remembered as added, so it comes back at the next `up` even without the profile.
            if let Some(f) = remembered.get(inside).cloned() {
                remembered.put(Forward {
                    added: true,
                    off: false,
                    ..f
                });
                save(ws, id, &remembered)?;
            }
            return Ok(Added::Already(now.clone()));
        }
        // Another host port: the old listener goes first (it would hold the port otherwise).
        ask(ws, id, &Message::Unforward { inside }, None)?;
    }
    let (listener, mut f) = listen(ws, id, &remembered, inside, want, address)?;
    f.added = true;
    ask(
        ws,
        id,
        &Message::Forward {
            inside,
            host: f.host,
        },
        Some(listener.as_raw_fd()),
    )?;
    let listed = Listed {
        inside,
        host: f.host,
        url: url(address, f.host),
    };
    remembered.put(f);
    save(ws, id, &remembered)?;
    Ok(Added::New(listed))
}

/// `git loop port ID INSIDE --remove`: no longer forwarded (now, if the session is up,
/// and at later `up`s, a profile's port included); its host port stays remembered for
/// when it is forwarded again.
pub fn remove(ws: &Workspace, id: &str, inside: u16) -> Result<()> {
    use crate::session::wire::Message;
    let _lock = crate::fsutil::Lock::acquire(&ws.workspace_lock())?;
    let mut remembered = load(ws, id)?;
    let live = crate::session::is_up(ws, id)
        .then(|| read_live(ws, id))
        .flatten()
        .unwrap_or_default();
    let is_live = live.ports.iter().any(|l| l.inside == inside);
    let Some(f) = remembered.get(inside).cloned().filter(|f| !f.off) else {
        return Err(PortError::NotForwarded {
            id: id.into(),
            inside,
        }
        .into());
    };
    if is_live {
        ask(ws, id, &Message::Unforward { inside }, None)?;
    }
    remembered.put(Forward {
        off: true,
        added: false,
        ..f
    });
    save(ws, id, &remembered)
}

/// Sends `msg` (with `fd`) to loop `id`'s supervisor and waits for its answer.
fn ask(
    ws: &Workspace,
    id: &str,
    msg: &crate::session::wire::Message,
    fd: Option<std::os::fd::RawFd>,
) -> Result<()> {
    use crate::session::wire::{self, Message};
    use std::os::fd::AsRawFd;
    let lost = |e: wire::WireError| {
        Error::failure(format!("cannot reach loop {id}'s session")).with_source(e)
    };
    let Some(conn) = crate::session::connect(ws, id)? else {
        return Err(PortError::SessionEnded { id: id.into() }.into());
    };
    wire::send(conn.as_raw_fd(), msg, fd.as_slice()).map_err(lost)?;
    match wire::recv(conn.as_raw_fd()).map_err(lost)? {
        Some((Message::Forwarded { error: None }, _)) => Ok(()),
        Some((Message::Forwarded { error: Some(why) }, _)) => {
            Err(PortError::Refused { id: id.into(), why }.into())
        }
        _ => Err(PortError::NoAnswer { id: id.into() }.into()),
    }
}

/// The browser command for `url`: `$BROWSER` (words split on blanks, `%s` replaced by the
/// URL or the URL appended; the first of a `:`-separated list), else `xdg-open`. An argv,
/// never a shell line.
pub fn browser_argv(browser: Option<&str>, url: &str) -> Vec<String> {
    let chosen = browser
        .and_then(|b| b.split(':').map(str::trim).find(|c| !c.is_empty()))
        .map(|c| c.split_whitespace().map(String::from).collect::<Vec<_>>())
        .filter(|w| !w.is_empty());
    let Some(mut words) = chosen else {
        return vec!["xdg-open".into(), url.into()];
    };
    if words.iter().any(|w| w.contains("%s")) {
        for w in &mut words {
            *w = w.replace("%s", url);
        }
    } else {
        words.push(url.into());
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_derived_port_is_stable_and_in_its_range() {
        let a = candidate("fix-the-login", 3000, 0);
        assert_eq!(a, candidate("fix-the-login", 3000, 0));
        assert_ne!(a, candidate("fix-the-login", 3000, 1));
        assert_ne!(a, candidate("fix-the-logout", 3000, 0));
        for i in 0..200 {
            let p = candidate("x", i, 0);
            assert!((DERIVED_FIRST..DERIVED_FIRST + DERIVED_COUNT).contains(&p));
        }
    }

    #[test]
    fn ports_read_as_numbers_from_1_to_65535() {
        assert_eq!(parse_port("3000"), Ok(3000));
        assert_eq!(parse_port("65535"), Ok(65535));
        assert!(parse_port("0").unwrap_err().contains("port 0"));
        assert!(parse_port("65536").unwrap_err().contains("65535"));
        assert!(parse_port("http").is_err());
        assert!(parse_port("-1").is_err());
        let p: std::result::Result<InsidePorts, _> = toml::from_str::<toml::Table>("p = [3000, 0]")
            .unwrap()["p"]
            .clone()
            .try_into();
        assert!(p.is_err());
        let p: InsidePorts = toml::from_str::<toml::Table>("p = [3000, 5173]").unwrap()["p"]
            .clone()
            .try_into()
            .unwrap();
        assert_eq!(p.0, vec![3000, 5173]);
    }

    #[test]
    fn the_profile_s_ports_come_first_and_removed_ones_stay_off() {
        let mut r = Remembered::default();
        r.put(Forward {
            inside: 8080,
            host: 20001,
            added: true,
            pinned: false,
            off: false,
        });
        r.put(Forward {
            inside: 5173,
            host: 20002,
            added: false,
            pinned: false,
            off: true,
        });
        assert_eq!(r.wanted(&[3000, 5173]), vec![3000, 8080]);
        let text = toml::to_string(&r).unwrap();
        assert_eq!(toml::from_str::<Remembered>(&text).unwrap(), r);
    }

    #[test]
    fn the_browser_is_an_argv_never_a_shell_line() {
        let u = "http://127.0.0.1:20001/";
        assert_eq!(browser_argv(None, u), ["xdg-open", u]);
        assert_eq!(browser_argv(Some(""), u), ["xdg-open", u]);
        assert_eq!(browser_argv(Some("firefox"), u), ["firefox", u]);
        assert_eq!(
            browser_argv(Some("firefox --new-tab %s:chromium"), u),
            ["firefox", "--new-tab", u]
        );
        assert_eq!(
            browser_argv(Some("sh -c 'rm -rf ~'"), u),
            ["sh", "-c", "'rm", "-rf", "~'", u]
        );
    }
}
