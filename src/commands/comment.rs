use std::io::Read;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::loops;
use crate::review::comments::{self, EventKind};
use crate::review::judge::Judged;
use crate::review::show::CommentJson;
use crate::review::{self, NewComment};
use crate::terminal::{shown, visible};
use crate::ui::Ui;

/// Comment on a loop's proposal: lines of a file, a whole file, or the loop itself.
///
/// The comment is anchored to the loop's branch as it is now (its commit), the file and
/// the lines, whose text it keeps. `git loop review ID` shows it beside its hunk, marked
/// open, outdated (its lines changed since; lines that only moved, or whose file was
/// renamed, are followed) or resolved. `git loop agent ID --address-review` gives the
/// open comments to the agent.
///
/// Comments are kept in the notes repository (its branch git-loop/comments), so `git loop
/// sync` carries them to the team's other workspaces, and they outlive the loop. Without
/// -m or -F the text is written in your editor ($VISUAL, $EDITOR, else vi).
#[derive(Debug, clap::Args)]
pub struct CommentArgs {
    /// The loop: its id, or a unique prefix of its id or title slug (a loop that is no
    /// longer here, by the id its comments name).
    pub id: String,
    /// What the comment is on: PATH, PATH:LINE or PATH:FIRST-LAST, lines of the file as the
    /// loop's branch has it now. Without it, the comment is on the loop as a whole.
    #[arg(
        value_name = "PATH[:LINE]",
        conflicts_with_all = ["reply", "resolve", "reopen", "list"]
    )]
    pub at: Option<String>,
    /// The text (repeatable: each is a paragraph).
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Vec<String>,
    /// Read the text from FILE (`-`: standard input).
    #[arg(
        short = 'F',
        long = "file",
        value_name = "FILE",
        conflicts_with = "message"
    )]
    pub file: Option<PathBuf>,
    /// Answer comment N (its id, or a unique prefix of it) with the text.
    #[arg(long, value_name = "N", conflicts_with_all = ["resolve", "reopen", "list"])]
    pub reply: Option<String>,
    /// Mark comment N resolved (with -m or -F: a reply first).
    #[arg(long, value_name = "N", conflicts_with_all = ["reopen", "list"])]
    pub resolve: Option<String>,
    /// Reopen resolved comment N.
    #[arg(long, value_name = "N", conflicts_with = "list")]
    pub reopen: Option<String>,
    /// List the loop's comments: id, state, where its lines are now, author, text.
    #[arg(long)]
    pub list: bool,
    /// With --list: a JSON array, one object per comment (id, loop, author, created_at,
    /// text, state, checked, role, anchor, at, events, addressed_by).
    #[arg(long, requires = "list")]
    pub json: bool,
}

/// `PATH`, `PATH:LINE` or `PATH:FIRST-LAST` (a path may hold `:` itself).
pub fn parse_at(at: &str) -> std::result::Result<(String, usize, usize), String> {
    let number = |s: &str| {
        s.parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("'{s}' is not a line number (lines count from 1)"))
    };
    if let Some((path, lines)) = at.rsplit_once(':') {
        if !lines.is_empty() && lines.chars().all(|c| c.is_ascii_digit() || c == '-') {
            let (start, end) = match lines.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(lines)?, number(lines)?),
            };
            if end < start {
                return Err(format!(
                    "{start}-{end}: the last line comes before the first"
                ));
            }
            return Ok((path.to_string(), start, end));
        }
    }
    Ok((at.to_string(), 0, 0))
}

pub fn run(ui: &mut Ui, args: CommentArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let (id, rec) = review::resolve_loop(&ws, &args.id)?;
    if let Some(rec) = &rec {
        // The state of a comment is judged at the branch as the loop has it now.
        if let Err(e) = loops::check_repo(&ws, rec).and_then(|()| loops::import(&ws, rec)) {
            crate::report::Report::problem(ui, "", &e)?;
        }
    }
    if args.list {
        return list(ui, &ws, &id, args.json);
    }
    let action = [
        (&args.reply, EventKind::Reply),
        (&args.resolve, EventKind::Resolve),
        (&args.reopen, EventKind::Reopen),
    ]
    .into_iter()
    .find_map(|(q, kind)| q.as_ref().map(|q| (q.clone(), kind)));
    if let Some((query, kind)) = action {
        let loaded = review::load(&ws, &id)?;
        let thread = review::find(&loaded.threads, &id, &query)?;
        let text = match kind {
            EventKind::Reply => text(
                &args,
                Some(&format!("your reply to comment #{}", thread.comment.id)),
            )?,
            _ if args.message.is_empty() && args.file.is_none() => String::new(),
            _ => text(&args, None)?,
        };
        if kind == EventKind::Resolve && !text.is_empty() {
            review::add_event(&ws, thread, EventKind::Reply, &text)?;
        }
        review::add_event(
            &ws,
            thread,
            kind,
            if kind == EventKind::Resolve {
                ""
            } else {
                &text
            },
        )?;
        let done = match kind {
            EventKind::Reply => "replied to",
            EventKind::Resolve => "resolved",
            EventKind::Reopen => "reopened",
        };
        ui.status(format!(
            "{done} comment #{} of loop {id}",
            thread.comment.id
        ))?;
        return Ok(0);
    }
    let Some(rec) = rec else {
        return Err(Error::usage(format!(
            "loop {id} is not in this workspace: a new comment needs its branch"
        ))
        .hint(format!("its comments: git loop comment {id} --list")));
    };
    let (path, start, end) = match &args.at {
        Some(at) => {
            let (path, start, end) = parse_at(at).map_err(|why| {
                Error::usage(format!("{at}: {why}")).hint("give PATH, PATH:LINE or PATH:FIRST-LAST")
            })?;
            (Some(path), start, end)
        }
        None => (None, 0, 0),
    };
    let on = path
        .as_deref()
        .map(|p| comments::place(p, start, end))
        .unwrap_or_else(|| "the loop as a whole".into());
    let text = text(&args, Some(&format!("your comment on {on} of loop {id}")))?;
    let c = review::comment(
        &ws,
        &rec,
        &NewComment {
            path,
            start,
            end,
            text,
        },
    )?;
    let at = c
        .anchor
        .as_ref()
        .map(|a| format!(" on {} at {}", shown(&a.place()), &a.commit[..12]))
        .unwrap_or_default();
    ui.status(format!("commented #{}{at} of loop {id}", c.id))?;
    writeln!(ui.out(), "{}", c.id)?;
    Ok(0)
}

/// The text from -m, -F or the editor; `editing` says what the editor is for (None: no
/// editor, an empty text).
fn text(args: &CommentArgs, editing: Option<&str>) -> Result<String> {
    let raw = if !args.message.is_empty() {
        args.message.join("\n\n")
    } else if let Some(file) = &args.file {
        read_file(file)?
    } else if let Some(what) = editing {
        return edit(what);
    } else {
        String::new()
    };
    Ok(comments::clean_text(&raw, false))
}

fn read_file(file: &PathBuf) -> Result<String> {
    let limit = comments::MAX_TEXT as u64 + 1;
    let mut bytes = Vec::new();
    let read = if file.as_os_str() == "-" {
        std::io::stdin().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    read.map_err(|e| {
        Error::usage(format!("cannot read {}", file.display()))
            .with_source(e)
            .hint("give a file that exists, or - for standard input")
    })?;
    String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!("{} is not UTF-8 text", file.display())).hint("a comment is text")
    })
}

/// The user's editor on a file of its own, as git does for a commit message: lines
/// starting with `#` are left out.
fn edit(what: &str) -> Result<String> {
    let dir = std::env::temp_dir().join(format!(
        "git-loop-comment-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))?;
    let file = dir.join("COMMENT_EDITMSG");
    let template = format!(
        "\n# Write {what} above.\n# Lines starting with '#' are left out; an empty text records nothing.\n"
    );
    let result = std::fs::write(&file, template)
        .map_err(|e| Error::failure(format!("cannot write {}", file.display())).with_source(e))
        .and_then(|()| crate::vault::edit::run_editor(&file))
        .and_then(|()| {
            std::fs::read_to_string(&file).map_err(|e| {
                Error::failure(format!("cannot read {}", file.display())).with_source(e)
            })
        });
    let _ = std::fs::remove_dir_all(&dir);
    Ok(comments::clean_text(&result?, true))
}

fn list(ui: &mut Ui, ws: &crate::workspace::Workspace, id: &str, json: bool) -> Result<u8> {
    let (judged, skipped) = review::judged(ws, id)?;
    for s in &skipped {
        ui.warn(format!("a stored comment is left out: {s}"))?;
    }
    if json {
        let items: Vec<CommentJson> = judged.iter().map(CommentJson::from).collect();
        let value = serde_json::to_value(&items)
            .map_err(|e| Error::failure("cannot write JSON").with_source(e))?;
        return super::print_json(ui, &value).map(|()| 0);
    }
    if judged.is_empty() {
        ui.status(format!("loop {id} has no comments"))?;
        return Ok(0);
    }
    for j in &judged {
        write_line(ui, j)?;
    }
    Ok(0)
}

fn write_line(ui: &mut Ui, j: &Judged) -> Result<()> {
    let c = &j.thread.comment;
    let place =
        j.at.as_ref()
            .map(|a| a.place())
            .or_else(|| {
                c.anchor
                    .as_ref()
                    .filter(|a| a.path.is_some())
                    .map(|a| format!("was {}", a.place()))
            })
            .unwrap_or_else(|| "(the loop)".into());
    let first = c.text.lines().next().unwrap_or_default();
    let replies = j.thread.replies().count();
    writeln!(
        ui.out(),
        "#{}  {:<8}  {}  {}  {}{}",
        visible(&c.id),
        j.state.as_str(),
        visible(&place),
        visible(&c.author),
        visible(first),
        if replies > 0 {
            format!(
                "  ({replies} repl{})",
                if replies == 1 { "y" } else { "ies" }
            )
        } else {
            String::new()
        }
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_at;

    #[test]
    fn a_place_is_a_path_with_lines() {
        assert_eq!(parse_at("src/a.rs"), Ok(("src/a.rs".into(), 0, 0)));
        assert_eq!(parse_at("src/a.rs:12"), Ok(("src/a.rs".into(), 12, 12)));
        assert_eq!(parse_at("src/a.rs:12-14"), Ok(("src/a.rs".into(), 12, 14)));
        assert_eq!(parse_at("a:b.rs:3"), Ok(("a:b.rs".into(), 3, 3)));
        assert_eq!(parse_at("a:b"), Ok(("a:b".into(), 0, 0)));
        assert!(parse_at("a.rs:0").is_err());
        assert!(parse_at("a.rs:5-3").is_err());
        assert!(parse_at("a.rs:-3").is_err());
        assert!(parse_at("a.rs:3-").is_err());
    }
}
