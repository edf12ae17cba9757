use crate::error::Result;
use crate::loops::{self, State};
use crate::ui::Ui;

/// Remove finished loops: merged or published, with nothing left that is not.
///
/// A loop with unimported, unpublished or unmerged work, or uncommitted changes, is never
/// removed. The branches of a removed loop are deleted too: everything on them is already
/// in their base branch or trunk.
#[derive(Debug, clap::Args)]
pub struct GcArgs {
    /// Only loops whose code is merged.
    #[arg(long)]
    pub merged: bool,
    /// Only loops created longer ago than this (e.g. 14d, 12h, 2w).
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    pub older_than: Option<std::time::Duration>,
    /// Say what would be removed, remove nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
}

/// `14d`, `12h`, `30m`, `2w`, `90s`.
pub fn parse_age(text: &str) -> std::result::Result<std::time::Duration, String> {
    let (num, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not an age like 14d, 12h, 30m or 2w"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" | "" => 86400,
        "w" => 7 * 86400,
        _ => return Err(format!("'{text}' is not an age like 14d, 12h, 30m or 2w")),
    };
    Ok(std::time::Duration::from_secs(n.saturating_mul(secs)))
}

pub fn run(ui: &mut Ui, args: GcArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let now = time::OffsetDateTime::now_utc();
    let mut removed = 0;
    for s in loops::survey(&ws)? {
        let (rec, status) = match (s.record, s.status) {
            (Ok(rec), Ok(status)) => (rec, status),
            (_, Err(e)) | (Err(e), _) => {
                ui.warn(format!("{}: skipped: {}", s.id, e.one_line()))?;
                continue;
            }
        };
        let finished = match status.state {
            State::Merged => true,
            State::Published => !args.merged,
            _ => false,
        };
        if !finished {
            continue;
        }
        if let Some(limit) = args.older_than {
            let old_enough = (now - rec.created_at.0).whole_seconds() >= limit.as_secs() as i64;
            if !old_enough {
                continue;
            }
        }
        // A live loop is never removed (its run lock is held until its folder is gone).
        let _run = match crate::removal::hold(&ws, &rec.id) {
            Ok(hold) => hold,
            Err(e) => {
                ui.warn(format!("{}: kept: {}", rec.id, e.one_line()))?;
                continue;
            }
        };
        // A loop whose repository cannot be read (a sandbox may have planted something
        // there) is kept, and the others are still looked at.
        let leftovers = match loops::unfinished_work(&ws, &rec, &status) {
            Ok(leftovers) => leftovers,
            Err(e) => vec![e.one_line()],
        };
        if !leftovers.is_empty() {
            ui.warn(format!("{}: kept: {}", rec.id, leftovers.join("; ")))?;
            continue;
        }
        if args.dry_run {
            writeln!(ui.out(), "would remove {} ({})", rec.id, status.state)?;
        } else {
            crate::removal::remove_and_say(ui, &ws, &rec.id, Some(&rec), true)?;
            writeln!(ui.out(), "removed {} ({})", rec.id, status.state)?;
        }
        removed += 1;
    }
    if removed == 0 {
        ui.status("nothing to remove")?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::parse_age;
    #[test]
    fn ages() {
        assert_eq!(parse_age("14d").unwrap().as_secs(), 14 * 86400);
        assert_eq!(parse_age("2w").unwrap().as_secs(), 14 * 86400);
        assert_eq!(parse_age("30m").unwrap().as_secs(), 1800);
        assert!(parse_age("d").is_err());
        assert!(parse_age("3y").is_err());
    }
}
