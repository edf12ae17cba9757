//! `port` and `open`: a loop's ports on the host (see `crate::ports`).

use std::net::IpAddr;

use crate::error::{Error, Result};
use crate::loops;
use crate::ports::{self, Added, Listed};
use crate::ui::Ui;

/// Forward a port of a loop's live session to the host, list them, or remove one.
///
/// `git loop port ID INSIDE` makes port INSIDE of the loop's network namespace reachable
/// on the host at 127.0.0.1:HOST while the session is up, and again at every later `up`.
/// HOST is stable for the loop and port: derived from the loop's id, moved when something
/// else holds it, and remembered. A sandbox profile's `ports = [3000, 5173]` are forwarded
/// the same way from `up`. Without INSIDE: the loop's ports, one line each
/// (`--json`: `[{inside, host, url}]`).
///
/// Exit codes: 0 done; 1 the loop has no session up (`git loop up ID`) or the session
/// refused; 2 a bad port, a host port in use or another loop's, a port not forwarded.
#[derive(Debug, clap::Args)]
pub struct PortArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// The port inside the loop's sandbox (1-65535).
    #[arg(value_name = "INSIDE")]
    pub inside: Option<String>,
    /// The host port to listen on instead of the loop's derived one (kept from then on).
    #[arg(long, value_name = "PORT", conflicts_with = "remove")]
    pub host: Option<String>,
    /// Stop forwarding INSIDE (a profile's port included) from now on.
    #[arg(long, requires = "inside")]
    pub remove: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Open a loop's forwarded port in your browser.
///
/// Opens http://127.0.0.1:HOST/ of the loop's port INSIDE (without INSIDE: its first
/// port) with $BROWSER (its first command; `%s` is the URL, else the URL comes last),
/// else xdg-open. The browser is run as an argument list, never through a shell.
///
/// Exit codes: 0 opened; 1 no session up, or the browser could not start; 2 a port the
/// loop does not forward.
#[derive(Debug, clap::Args)]
pub struct OpenArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// The port inside the loop's sandbox.
    #[arg(value_name = "INSIDE")]
    pub inside: Option<String>,
}

fn port_arg(text: &str, what: &str) -> Result<u16> {
    ports::parse_port(text).map_err(|why| {
        Error::usage(format!("{what}: {why}")).hint("give a port from 1 to 65535, such as 3000")
    })
}

/// Where the loop's ports listen on the host (`ports.address`).
fn address(ws: &crate::workspace::Workspace, rec: &loops::LoopRecord) -> Result<IpAddr> {
    Ok(super::read_config(ws, Some(rec))?.settings().ports.address)
}

pub fn run(ui: &mut Ui, args: PortArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    let address = address(&ws, &rec)?;
    let Some(inside) = args.inside.as_deref() else {
        let listed = ports::listed(&ws, &id, address);
        if args.json {
            let value = serde_json::to_value(&listed)
                .map_err(|e| Error::failure("cannot write JSON").with_source(e))?;
            return super::print_json(ui, &value).map(|()| 0);
        }
        if listed.is_empty() {
            ui.status(format!(
                "loop {id} forwards no port (git loop port {id} INSIDE adds one)"
            ))?;
        }
        for l in &listed {
            writeln!(ui.out(), "{}  {}", l.inside, l.url)?;
        }
        if crate::session::is_up(&ws, &id) {
            for (inside, why) in ports::read_live(&ws, &id).unwrap_or_default().failed {
                ui.warn(format!("port {inside} is not forwarded: {why}"))?;
            }
        }
        return Ok(0);
    };
    let inside = port_arg(inside, "INSIDE")?;
    if args.remove {
        ports::remove(&ws, &id, inside)?;
        ui.status(format!("loop {id}'s port {inside} is no longer forwarded"))?;
        return Ok(0);
    }
    let want = args
        .host
        .as_deref()
        .map(|h| port_arg(h, "--host"))
        .transpose()?;
    let (listed, new) = match ports::add(&ws, &id, inside, want, address)? {
        Added::New(l) => (l, true),
        Added::Already(l) => (l, false),
    };
    if args.json {
        let value = serde_json::to_value(&listed)
            .map_err(|e| Error::failure("cannot write JSON").with_source(e))?;
        return super::print_json(ui, &value).map(|()| 0);
    }
    writeln!(ui.out(), "{}", listed.url)?;
    ui.status(format!(
        "loop {id}'s port {inside} {} {}",
        if new {
            "is forwarded to"
        } else {
            "was already at"
        },
        listed.url
    ))?;
    Ok(0)
}

pub fn open(ui: &mut Ui, args: OpenArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    let address = address(&ws, &rec)?;
    let inside = args
        .inside
        .as_deref()
        .map(|p| port_arg(p, "INSIDE"))
        .transpose()?;
    if !crate::session::is_up(&ws, &id) {
        return Err(Error::failure(format!(
            "loop {id} has no session up: nothing answers on its ports"
        ))
        .hint(format!("start it: git loop up {id}")));
    }
    let listed = ports::listed(&ws, &id, address);
    let chosen: Option<&Listed> = match inside {
        Some(p) => listed.iter().find(|l| l.inside == p),
        None => listed.first(),
    };
    let Some(l) = chosen else {
        let what = inside.map_or("no port".to_string(), |p| format!("no port {p}"));
        return Err(
            Error::usage(format!("loop {id} forwards {what}")).hint(format!(
                "forward it first: git loop port {id} {}",
                inside.map_or("INSIDE".to_string(), |p| p.to_string())
            )),
        );
    };
    let argv = ports::browser_argv(std::env::var("BROWSER").ok().as_deref(), &l.url);
    let (program, rest) = argv.split_first().expect("a browser command has a program");
    let status = std::process::Command::new(program)
        .args(rest)
        .stdin(std::process::Stdio::null())
        .status()
        .map_err(|e| {
            Error::failure(format!("cannot start the browser {program}"))
                .with_source(e)
                .hint("set BROWSER to your browser's command, or install xdg-utils")
        })?;
    if !status.success() {
        return Err(Error::failure(format!(
            "the browser {program} failed ({status}) to open {}",
            l.url
        ))
        .hint("set BROWSER to your browser's command"));
    }
    ui.status(format!("opened {}", l.url))?;
    Ok(0)
}
