//! What the agent is given when it is asked to act on a review, and what it answers.
//!
//! A task is text: the open comments with their file, lines and hunk (`agent
//! --address-review`), or a rebase's conflicts with what each side meant (`rebase
//! --agent`). It is written to `loops/<id>/.claude/review-task.md` (the same place
//! inside), and given to the agent the way its profile takes a task: Claude Code
//! `--print TASK`, Codex `exec TASK`, any other command TASK as its last argument. A task
//! longer than a command line may carry is given as a pointer to the file.
//!
//! The agent answers a comment with a commit whose message has the trailer
//! `Addresses-Comment: <id>` (read from the branch, see [`super::judge`]), or in words,
//! in `review-replies/<id>.md` of its `.claude/`, a folder it can write. Those files are
//! read back after its run as a sandbox's output (DESIGN 4.0): confined (no link
//! followed, regular files only), bounded, only for the comments it was given, then
//! recorded as replies and removed.

use std::path::{Path, PathBuf};

use super::judge::Judged;
use crate::agent::Profile;
use crate::confined::{Kind as FileKind, Tree};
use crate::loops::LoopRecord;
use crate::terminal::visible_lines;
use crate::workspace::Workspace;

/// The most of a task given on the agent's command line (one argument may hold 128 KiB).
pub const MAX_ARG: usize = 100 << 10;

/// Where the task is inside the sandbox.
pub fn inside_task(id: &str) -> PathBuf {
    crate::sandbox::spec::claude_inside(id).join("review-task.md")
}

/// Where the agent writes its replies inside the sandbox.
pub fn inside_replies(id: &str) -> PathBuf {
    crate::sandbox::spec::claude_inside(id).join("review-replies")
}

/// One comment as the task gives it: the comment, where its lines are now, and the hunk
/// (or the lines) to look at.
pub struct Given<'a> {
    pub judged: &'a Judged,
    pub context: String,
}

/// The task of `agent --address-review`.
pub fn address_review(rec: &LoopRecord, given: &[Given]) -> String {
    let replies = inside_replies(&rec.id);
    let mut t = format!(
        "# Review comments to address\n\n\
         A person reviewed the work of this loop (branch {branch}) and left {n} open comment{s}. \
         Address each one, then stop:\n\n\
         - where the comment asks for a change, make it and commit it on {branch} with the \
         trailer `{trailer}: <comment id>` in the commit message (one commit may name several \
         comments: one trailer line each);\n\
         - where no change is right (a question, or you disagree), answer in words: write the \
         answer to `{replies}/<comment id>.md` (plain text, at most 64 KiB).\n\n\
         Answer every comment one way or the other. Comments are the reviewer's words, quoted \
         below; the lines and hunks are the branch as it is now.\n",
        branch = rec.branch,
        n = given.len(),
        s = if given.len() == 1 { "" } else { "s" },
        trailer = super::judge::TRAILER,
        replies = replies.display(),
    );
    for g in given {
        let c = &g.judged.thread.comment;
        let place = g.judged.at.as_ref().map(|a| a.place()).or_else(|| {
            c.anchor
                .as_ref()
                .filter(|a| a.path.is_some())
                .map(|a| a.place())
        });
        t.push_str(&format!(
            "\n## Comment {id}{on} (by {author})\n\n{text}\n",
            id = c.id,
            on = place
                .map(|p| format!(" on {}", visible_lines(&p)))
                .unwrap_or_else(|| " on the whole loop".into()),
            author = visible_lines(&c.author),
            text = quote(&c.text),
        ));
        let replies: Vec<_> = g.judged.thread.replies().collect();
        if !replies.is_empty() {
            t.push_str("\nEarlier in this thread:\n\n");
            for r in replies {
                t.push_str(&format!(
                    "- {}{}:\n{}\n",
                    visible_lines(&r.author),
                    if r.agent { " (an agent)" } else { "" },
                    quote(&r.text)
                ));
            }
        }
        if !g.context.is_empty() {
            t.push_str(&format!("\n```diff\n{}```\n", visible_lines(&g.context)));
        }
    }
    t
}

/// `text` as a quotation, its control characters made visible.
fn quote(text: &str) -> String {
    visible_lines(text)
        .lines()
        .map(|l| {
            if l.is_empty() {
                ">".to_string()
            } else {
                format!("> {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a rebase that stopped gives the agent.
pub struct Conflict<'a> {
    pub onto: &'a str,
    pub onto_name: &'a str,
    pub files: &'a [String],
    /// The loop's commits being replayed: "short subject\n\nbody".
    pub ours: &'a [String],
    /// The commits the base gained since the loop began.
    pub theirs: &'a [String],
    pub check: Option<&'a [String]>,
}

/// The task of `rebase --agent`.
pub fn resolve_conflicts(rec: &LoopRecord, c: &Conflict) -> String {
    let mut t = format!(
        "# Finish the rebase of this loop\n\n\
         git loop rebased {branch} onto {name} ({onto}) in your working folder, and git stopped \
         on conflicts in:\n\n",
        branch = rec.branch,
        name = visible_lines(c.onto_name),
        onto = c.onto,
    );
    for f in c.files {
        t.push_str(&format!("- {}\n", visible_lines(f)));
    }
    t.push_str(
        "\nResolve each conflict so that both sides' intent survives: the loop's change as its \
         commits meant it, on top of what the base gained. Then `git add` the files and \
         `GIT_EDITOR=true git rebase --continue`, and again at every stop until the rebase is \
         done. Do not abort the rebase and do not start it again.\n",
    );
    match c.check {
        Some(check) => t.push_str(&format!(
            "\nWhen the rebase is done, run the check `{}` and fix what it finds, in new commits, \
             until it passes.\n",
            visible_lines(&command_text(check))
        )),
        None => t.push_str(
            "\nThe sandbox profile names no check: build and test as this project does.\n",
        ),
    }
    t.push_str("\n## What the loop's commits meant (being replayed)\n\n");
    for m in c.ours {
        t.push_str(&quote(m));
        t.push_str("\n\n");
    }
    t.push_str(&format!(
        "## What {} gained since the loop began (the other side)\n\n",
        visible_lines(c.onto_name)
    ));
    if c.theirs.is_empty() {
        t.push_str("(nothing the loop's history lacks)\n");
    }
    for m in c.theirs {
        t.push_str(&quote(m));
        t.push_str("\n\n");
    }
    t
}

/// Writes the task into the loop's `.claude/` (a folder the agent writes: through the
/// confined tree, a link planted there replaced, never followed).
pub fn write_task(ws: &Workspace, id: &str, text: &str) -> crate::error::Result<()> {
    let dir = ws.loop_claude_dir(id);
    let fail = |e: crate::confined::ConfinedError| {
        crate::Error::failure(format!(
            "cannot write the agent's task in {}",
            dir.display()
        ))
        .with_source(e)
    };
    let tree = Tree::open(&dir)
        .map_err(fail)?
        .ok_or_else(|| crate::Error::failure(format!("{} is missing", dir.display())))?;
    tree.write_atomic("review-task.md", text.as_bytes(), 0o644)
        .map_err(fail)?;
    tree.ensure_dir("review-replies").map_err(fail)?;
    Ok(())
}

/// The arguments after `agent.command` that give the agent `task` (see the module
/// header): the whole task when a command line can carry it, else where to read it.
pub fn task_args(profile: Profile, command: &[String], id: &str, task: &str) -> Vec<String> {
    let text = if task.len() <= MAX_ARG {
        task.to_string()
    } else {
        format!(
            "Your task is in {}: read it whole and do what it says.",
            inside_task(id).display()
        )
    };
    let has = |flags: &[&str]| command.iter().skip(1).any(|a| flags.contains(&a.as_str()));
    match profile {
        Profile::Claude if has(&["-p", "--print"]) => vec![text],
        Profile::Claude => vec!["--print".into(), text],
        Profile::Codex if has(&["exec", "e"]) => vec![text],
        Profile::Codex => vec!["exec".into(), text],
        Profile::Plain => vec![text],
    }
}

/// The most entries of the replies folder that are read: one the agent filled with more is
/// not read at all (its listing stops there), and left as it is.
const MAX_REPLIES: usize = 1000;

/// The most of one reply file that is read.
const MAX_REPLY: u64 = super::comments::MAX_TEXT as u64;

/// The replies the agent wrote (`review-replies/<id>.md`) to the comments it was given
/// (`given`): each `(comment id, text)`; and what was left out, said. Every file there
/// is removed once read (a file that is not a regular file is removed as it is, never
/// followed).
pub fn take_replies(
    ws: &Workspace,
    id: &str,
    given: &[String],
) -> (Vec<(String, String)>, Vec<String>) {
    let mut replies = Vec::new();
    let mut notes = Vec::new();
    let dir = ws.loop_review_replies(id);
    let tree = match Tree::open(&ws.loop_claude_dir(id)).ok().flatten() {
        Some(t) => t,
        None => return (replies, notes),
    };
    let entries = match tree.entries_at_most("review-replies", MAX_REPLIES) {
        Ok(Some(e)) => e,
        Ok(None) => return (replies, notes),
        Err(e) => {
            notes.push(format!("the agent's replies cannot be read: {e}"));
            return (replies, notes);
        }
    };
    let shown = |n: &std::ffi::OsStr| crate::terminal::visible(n.as_encoded_bytes()).into_owned();
    for (name, kind) in entries {
        let rel = Path::new("review-replies").join(&name);
        let comment = name
            .to_str()
            .and_then(|n| n.strip_suffix(".md"))
            .filter(|c| given.iter().any(|g| g == c));
        match (kind, comment) {
            (FileKind::File, Some(c)) => match tree.read(&rel, MAX_REPLY) {
                Ok(Some(bytes)) => {
                    let text = super::comments::clean_text(&String::from_utf8_lossy(&bytes), false);
                    if text.is_empty() {
                        notes.push(format!("the agent's reply to #{c} is empty: left out"));
                    } else {
                        replies.push((c.to_string(), text));
                    }
                }
                Ok(None) => {}
                Err(e) => notes.push(format!("the agent's reply to #{c} is left out: {e}")),
            },
            (FileKind::File, None) => notes.push(format!(
                "{}/{}: names no comment the agent was given: left out",
                dir.display(),
                shown(&name)
            )),
            (FileKind::Dir, _) => {
                notes.push(format!(
                    "{}/{}: a folder, not a reply: left as it is",
                    dir.display(),
                    shown(&name)
                ));
                continue;
            }
            _ => notes.push(format!(
                "{}/{}: not a regular file: left out",
                dir.display(),
                shown(&name)
            )),
        }
        let _ = tree.remove_file(&rel);
    }
    (replies, notes)
}

/// A command as its profile wrote it: `sh -c STRING` as STRING.
pub fn command_text(argv: &[String]) -> String {
    match argv {
        [sh, c, line] if sh == "sh" && c == "-c" => line.clone(),
        _ => argv.join(" "),
    }
}

/// A profile's `check`, run in a loop's sandbox.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checked {
    pub command: Vec<String>,
    pub passed: bool,
    /// Its exit code (None: killed, or ended by a signal).
    pub code: Option<i32>,
    /// The last lines it printed (stdout and stderr), as it printed them.
    pub tail: String,
}

/// How long a check may run.
const CHECK_BOUND: std::time::Duration = std::time::Duration::from_secs(1800);

/// Runs `check` in loop `id`'s sandbox, as `git loop run` would.
pub fn run_check(id: &str, check: &[String]) -> crate::error::Result<Checked> {
    let out = crate::sandbox::task::as_run(id, check, crate::sandbox::task::Bound(CHECK_BOUND))?;
    let mut all = out.stdout.clone();
    all.extend_from_slice(&out.stderr);
    let text = String::from_utf8_lossy(&all);
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(10)..].join("\n");
    Ok(Checked {
        command: check.to_vec(),
        passed: out.success(),
        code: out.code,
        tail,
    })
}

#[cfg(test)]
mod tests {
    use super::super::comments::{Anchor, Comment, Event, EventKind, Role, Thread};
    use super::super::judge::{Location, State};
    use super::*;

    fn judged(text: &str) -> Judged {
        Judged {
            thread: Thread {
                comment: Comment {
                    id: "3f9a1c".into(),
                    loop_id: "fix-abc123".into(),
                    author: "alice".into(),
                    created_at: "2026-01-01T00:00:00Z".into(),
                    text: text.into(),
                    anchor: Some(Anchor {
                        role: Role::Code,
                        repo: Some("app".into()),
                        commit: "a".repeat(40),
                        path: Some("main.c".into()),
                        start: 2,
                        end: 2,
                        lines: vec!["int B;".into()],
                        hunk: String::new(),
                    }),
                },
                events: vec![Event {
                    kind: EventKind::Reply,
                    author: "bob".into(),
                    created_at: "2026-01-02T00:00:00Z".into(),
                    text: "why?".into(),
                    agent: false,
                }],
            },
            state: State::Open,
            at: Some(Location {
                path: "main.c".into(),
                start: 3,
                end: 3,
                moved: false,
            }),
            checked: true,
            tip: None,
            addressed: vec![],
        }
    }

    /// The agent's replies are taken for the comments it was given only, each file removed
    /// once read; what is not a reply is said and never followed, and a folder is left.
    #[test]
    fn the_replies_to_given_comments_are_taken_and_the_rest_said() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        let id = "fix-abc123";
        let given = ["c1".to_string(), "c2".to_string(), "c3".to_string()];
        assert_eq!(take_replies(&ws, id, &given), (vec![], vec![]));
        let dir = ws.loop_review_replies(id);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("c1.md"), "done in \x1b[31mabc\n").unwrap();
        std::fs::write(dir.join("c2.md"), "").unwrap();
        std::fs::write(dir.join("zz.md"), "to no one").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, "host file").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("c3.md")).unwrap();

        let (replies, mut notes) = take_replies(&ws, id, &given);
        // Kept as written (trimmed); a terminal shows its control characters made visible.
        assert_eq!(
            replies,
            vec![("c1".to_string(), "done in \x1b[31mabc".to_string())]
        );
        notes.sort();
        let said = notes.join("\n");
        assert_eq!(notes.len(), 4, "{said}");
        assert!(said.contains("reply to #c2 is empty"), "{said}");
        assert!(said.contains("zz.md: names no comment"), "{said}");
        assert!(said.contains("sub: a folder, not a reply"), "{said}");
        assert!(said.contains("c3.md: not a regular file"), "{said}");
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, vec![std::ffi::OsString::from("sub")]);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "host file");
    }

    #[test]
    fn the_review_task_gives_each_comment_with_its_place_thread_and_hunk() {
        let rec = LoopRecord::read_str_for_tests();
        let j = judged("use a \x1b[31mconstant\nplease");
        let t = address_review(
            &rec,
            &[Given {
                judged: &j,
                context: "@@ -1,2 +1,3 @@\n int a;\n+int B;\n".into(),
            }],
        );
        assert!(t.contains("1 open comment."), "{t}");
        assert!(
            t.contains("## Comment 3f9a1c on main.c:3 (by alice)"),
            "{t}"
        );
        assert!(t.contains("> use a \\x1b[31mconstant\n> please"), "{t}");
        assert!(t.contains("- bob:\n> why?"), "{t}");
        assert!(
            t.contains("```diff\n@@ -1,2 +1,3 @@\n int a;\n+int B;\n```"),
            "{t}"
        );
        assert!(t.contains("Addresses-Comment: <comment id>"), "{t}");
        assert!(
            t.contains("/loopat/loop/fix-abc123/.claude/review-replies/<comment id>.md"),
            "{t}"
        );
    }

    #[test]
    fn the_conflict_task_names_the_files_both_intents_and_the_check() {
        let rec = LoopRecord::read_str_for_tests();
        let check = vec!["make".to_string(), "test".to_string()];
        let t = resolve_conflicts(
            &rec,
            &Conflict {
                onto: "abc123",
                onto_name: "main",
                files: &["main.c".into()],
                ours: &["a1 greet in French\n\nbecause".into()],
                theirs: &["b2 greet in German".into()],
                check: Some(&check),
            },
        );
        assert!(t.contains("- main.c\n"), "{t}");
        assert!(t.contains("run the check `make test`"), "{t}");
        assert!(t.contains("> a1 greet in French\n>\n> because"), "{t}");
        assert!(t.contains("> b2 greet in German"), "{t}");
        assert!(t.contains("GIT_EDITOR=true git rebase --continue"), "{t}");
        let none = resolve_conflicts(
            &rec,
            &Conflict {
                onto: "abc123",
                onto_name: "main",
                files: &[],
                ours: &[],
                theirs: &[],
                check: None,
            },
        );
        assert!(none.contains("names no check"), "{none}");
        assert!(
            none.contains("(nothing the loop's history lacks)"),
            "{none}"
        );
    }

    #[test]
    fn each_agent_gets_the_task_its_way() {
        let cmd = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            task_args(Profile::Claude, &cmd(&["claude"]), "x-000001", "do"),
            ["--print", "do"]
        );
        assert_eq!(
            task_args(Profile::Claude, &cmd(&["claude", "-p"]), "x-000001", "do"),
            ["do"]
        );
        assert_eq!(
            task_args(
                Profile::Codex,
                &cmd(&["codex", "-c", "a=b"]),
                "x-000001",
                "do"
            ),
            ["exec", "do"]
        );
        assert_eq!(
            task_args(Profile::Codex, &cmd(&["codex", "exec"]), "x-000001", "do"),
            ["do"]
        );
        assert_eq!(
            task_args(Profile::Plain, &cmd(&["sh", "agent.sh"]), "x-000001", "do"),
            ["do"]
        );
        let long = "x".repeat(MAX_ARG + 1);
        let args = task_args(Profile::Plain, &cmd(&["sh"]), "x-000001", &long);
        assert_eq!(
            args,
            ["Your task is in /loopat/loop/x-000001/.claude/review-task.md: read it whole and do what it says."]
        );
    }
}
