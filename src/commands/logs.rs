use crate::error::{Error, Result};
use crate::loops;
use crate::session::services;
use crate::ui::Ui;

/// Show the end of a live session's service log (or of its `start` hook).
///
/// Each service of the loop's profile (`[services.NAME]`) writes its output to
/// loops/ID/logs/NAME.log while the session is up. What a log holds was written inside
/// the sandbox: at most its last 64 KiB is read, and control characters are shown as
/// escapes.
#[derive(Debug, clap::Args)]
pub struct LogsArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// The service's name (`start` for the profile's start hook).
    pub name: String,
    /// How many lines of the log's end to show.
    #[arg(long, short = 'n', default_value_t = 100)]
    pub lines: usize,
}

pub fn run(ui: &mut Ui, args: LogsArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    if !loops::is_id_like(&args.name) {
        return Err(Error::usage(format!(
            "{} is not a service's name (letters, digits and '-')",
            crate::terminal::visible(&args.name)
        )));
    }
    let path = services::log_path(&ws, &id, &args.name);
    let text = services::tail(&path, args.lines)
        .map_err(|e| Error::failure(format!("cannot read {}", path.display())).with_source(e))?;
    let Some(text) = text else {
        return Err(Error::failure(format!(
            "loop {id} has no log of {}",
            args.name
        ))
        .hint(format!(
            "a service's log is written once `git loop up {id}` starts it; the services are the profile's [services.NAME]"
        )));
    };
    if !text.is_empty() {
        writeln!(ui.out(), "{text}")?;
    }
    Ok(0)
}
