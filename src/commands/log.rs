use crate::error::Result;
use crate::loops;
use crate::sandbox::{events, record};
use crate::terminal::shown;
use crate::ui::Ui;

/// Show a loop's sandbox events: starts, exits (code, duration), violations.
///
/// Control characters in the events (a proxy target or a command the sandbox chose) are
/// shown as escapes; `--json` keeps them exactly.
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Print the events as a JSON array.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ui: &mut Ui, args: LogArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    // A run killed with its supervisor is recorded as ended before the log is read.
    record::settle(&ws, &id)?;
    let all = events::read(&ws.loop_events(&id));
    if args.json {
        return super::print_json(ui, &serde_json::Value::Array(all)).map(|()| 0);
    }
    if all.is_empty() {
        ui.status(format!("loop {id} has not run yet"))?;
    }
    let s = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| x.to_string())
            })
            .unwrap_or_default()
    };
    for e in &all {
        let kind = s(e, "kind");
        let detail = match kind.as_str() {
            "start" => format!(
                "backend {} · net {} · mode {} · limits {} · {}",
                s(e, "backend"),
                s(e, "net"),
                s(e, "mode"),
                s(e, "limits"),
                e.get("command")
                    .and_then(|c| c.as_array())
                    .map(|a| a
                        .iter()
                        .filter_map(|x| x.as_str())
                        .collect::<Vec<_>>()
                        .join(" "))
                    .unwrap_or_default()
            ),
            "exit" => {
                let ran = format!("code {} after {} ms", s(e, "code"), s(e, "duration_ms"));
                match (s(e, "cause").as_str(), e.get("signal")) {
                    ("unknown", _) => format!(
                        "ended, cause unknown (no exit was recorded; found at {})",
                        s(e, "found_at")
                    ),
                    ("parent-ended", _) => format!(
                        "{ran} (its front end, pid {}, ended: SIG{} to git-loop)",
                        s(e, "parent"),
                        s(e, "signal")
                    ),
                    ("not-started", _) => format!("did not start: {}", s(e, "error")),
                    ("sandbox-killed", _) => {
                        format!("{ran} (the sandbox was killed by SIG{})", s(e, "signal"))
                    }
                    // Events of earlier versions have a signal and no cause.
                    (_, Some(_)) => format!("{ran} (ended by SIG{} to git-loop)", s(e, "signal")),
                    _ => ran,
                }
            }
            "agent" => format!("the agent's run ended with code {}", s(e, "code")),
            "service" => format!("{} {}", s(e, "name"), s(e, "state")),
            "hook" => format!(
                "the profile's {} ended with code {}",
                s(e, "hook"),
                s(e, "code")
            ),
            "state" => format!(
                "the agent is {}{}{}",
                s(e, "state"),
                e.get("code")
                    .map(|c| format!(" (code {c})"))
                    .unwrap_or_default(),
                if e.get("notified") == Some(&serde_json::Value::Bool(true)) {
                    ", the person was told"
                } else {
                    ""
                }
            ),
            "upstream" => format!("{} could not be reached: {}", s(e, "target"), s(e, "error")),
            "violation" => format!(
                "{} {} refused: {}{}",
                s(e, "action"),
                s(e, "target"),
                s(e, "reason"),
                match e.get("fix").and_then(|f| f.as_str()) {
                    Some(fix) => format!(" (fix: {fix})"),
                    None => String::new(),
                }
            ),
            _ => e.to_string(),
        };
        // A bounded kind's last event says that later ones were not recorded.
        let detail = match e.get("more").and_then(|m| m.as_str()) {
            Some(more) => format!("{detail} ({more})"),
            None => detail,
        };
        // Every field may hold what a sandbox chose (a proxy target, a command): shown
        // with its control characters visible, so none can rewrite the lines around it.
        writeln!(
            ui.out(),
            "{}  {:<9} {}",
            shown(&s(e, "ts")),
            shown(&kind),
            shown(&detail)
        )?;
    }
    Ok(0)
}
