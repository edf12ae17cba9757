//! Reading a unified diff (`git diff --patch`, with the `a/` and `b/` prefixes asked for
//! explicitly) for what a review comment needs: which file and which line of the new
//! side each line of the diff shows, and the hunk around a line. Pure.

/// For every line of `diff` (split at `\n`): the new side's path and line number it
/// shows, for a context or added line inside a hunk; None for anything else (headers, a
/// removed line, the stat, a "\ No newline" marker).
pub fn new_lines(diff: &[u8]) -> Vec<Option<(String, usize)>> {
    let mut out = Vec::new();
    let mut path: Option<String> = None;
    let mut next: Option<usize> = None;
    let mut in_hunk = false;
    for line in diff.split(|&b| b == b'\n') {
        let mut this = None;
        if line.starts_with(b"diff --git ") || line.starts_with(b"diff --cc ") {
            path = None;
            next = None;
            in_hunk = false;
        } else if !in_hunk && line.starts_with(b"+++ ") {
            path = new_path(&line[4..]);
        } else if line.starts_with(b"@@ ") {
            next = hunk_new_start(line);
            in_hunk = next.is_some();
        } else if in_hunk {
            match line.first() {
                Some(b' ') | Some(b'+') => {
                    if let (Some(p), Some(n)) = (&path, next) {
                        this = Some((p.clone(), n));
                        next = Some(n + 1);
                    }
                }
                Some(b'-') | Some(b'\\') => {}
                _ => in_hunk = false,
            }
        }
        out.push(this);
    }
    // `split` yields an empty piece after a final newline: it is no line of the diff.
    if diff.ends_with(b"\n") {
        out.pop();
    }
    out
}

/// The new side's first line from `@@ -a,b +c,d @@`.
fn hunk_new_start(line: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(line).ok()?;
    let plus = text.split_whitespace().nth(2)?.strip_prefix('+')?;
    let start = plus.split(',').next()?.parse::<usize>().ok()?;
    // `+0,0`: the file is gone on the new side; nothing of it is shown there.
    Some(start.max(1))
}

/// The path of a `+++ ` line: `b/<path>` (quoted by git when unusual), or None for
/// `/dev/null`.
fn new_path(field: &[u8]) -> Option<String> {
    let unquoted = if field.first() == Some(&b'"') {
        unquote(field)?
    } else {
        field.to_vec()
    };
    let rest = unquoted.strip_prefix(b"b/")?;
    String::from_utf8(rest.to_vec()).ok()
}

/// git's C-style quoting of a path: `"b/a\tb"`, `"b/\303\251"`.
fn unquote(field: &[u8]) -> Option<Vec<u8>> {
    let inner = field.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let esc = *inner.get(i + 1)?;
        i += 2;
        out.push(match esc {
            b'a' => 7,
            b'b' => 8,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 11,
            b'f' => 12,
            b'r' => b'\r',
            b'"' => b'"',
            b'\\' => b'\\',
            b'0'..=b'3' => {
                let digits = inner.get(i - 1..i + 2)?;
                i += 2;
                let text = std::str::from_utf8(digits).ok()?;
                u8::from_str_radix(text, 8).ok()?
            }
            _ => return None,
        });
    }
    Some(out)
}

/// The hunk of `diff` that shows new line `line` of `path`: its `@@` line and body, or
/// None when no hunk does.
pub fn hunk_at(diff: &[u8], path: &str, line: usize) -> Option<String> {
    let numbers = new_lines(diff);
    let lines: Vec<&[u8]> = diff.split(|&b| b == b'\n').collect();
    let hit = numbers
        .iter()
        .position(|n| n.as_ref().is_some_and(|(p, l)| p == path && *l == line))?;
    let start = (0..=hit).rev().find(|&i| lines[i].starts_with(b"@@ "))?;
    let end = (hit + 1..numbers.len())
        .find(|&i| {
            lines[i].starts_with(b"@@ ")
                || lines[i].starts_with(b"diff --git ")
                || !matches!(lines[i].first(), Some(b' ' | b'+' | b'-' | b'\\'))
        })
        .unwrap_or(numbers.len());
    let mut text = Vec::new();
    for l in &lines[start..end] {
        text.extend_from_slice(l);
        text.push(b'\n');
    }
    Some(String::from_utf8_lossy(&text).into_owned())
}

/// Lines `start..=end` of `text` with up to `around` lines on each side, numbered, for a
/// comment on lines no hunk shows.
pub fn snippet(text: &[&str], start: usize, end: usize, around: usize) -> String {
    let first = start.saturating_sub(around).max(1);
    let last = (end + around).min(text.len());
    let mut out = String::new();
    for n in first..=last {
        let mark = if (start..=end).contains(&n) { '>' } else { ' ' };
        out.push_str(&format!("{mark}{n:>5} {}\n", text[n - 1]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &[u8] = b" main.c | 3 ++-\n 1 file changed\n\ndiff --git a/main.c b/main.c\nindex 1..2 100644\n--- a/main.c\n+++ b/main.c\n@@ -1,3 +1,4 @@\n int a;\n-int b;\n+int B;\n+int c;\n int d;\n\\ No newline at end of file\n@@ -10,2 +11,2 @@ fn\n x\n+y\ndiff --git a/gone.c b/gone.c\n--- a/gone.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n";

    #[test]
    fn each_line_knows_the_new_line_it_shows() {
        let n = new_lines(DIFF);
        let shown: Vec<(usize, String, usize)> = n
            .iter()
            .enumerate()
            .filter_map(|(i, x)| x.clone().map(|(p, l)| (i, p, l)))
            .collect();
        assert_eq!(
            shown,
            vec![
                (8, "main.c".into(), 1),
                (10, "main.c".into(), 2),
                (11, "main.c".into(), 3),
                (12, "main.c".into(), 4),
                (15, "main.c".into(), 11),
                (16, "main.c".into(), 12),
            ]
        );
        assert_eq!(n.len(), DIFF.split(|&b| b == b'\n').count() - 1);
    }

    #[test]
    fn the_hunk_around_a_line() {
        let h = hunk_at(DIFF, "main.c", 3).unwrap();
        assert!(h.starts_with("@@ -1,3 +1,4 @@\n int a;\n-int b;"), "{h}");
        assert!(h.ends_with("\\ No newline at end of file\n"), "{h}");
        assert_eq!(
            hunk_at(DIFF, "main.c", 12).unwrap(),
            "@@ -10,2 +11,2 @@ fn\n x\n+y\n"
        );
        assert_eq!(hunk_at(DIFF, "main.c", 7), None);
        assert_eq!(hunk_at(DIFF, "other.c", 1), None);
    }

    #[test]
    fn quoted_paths_are_read_as_git_wrote_them() {
        let diff = b"diff --git \"a/x\\ty\" \"b/x\\ty\"\n+++ \"b/x\\ty\"\n@@ -0,0 +1 @@\n+new\ndiff --git a/e b/e\n+++ \"b/\\303\\251\"\n@@ -1 +1 @@\n-a\n+b\n";
        let n: Vec<_> = new_lines(diff).into_iter().flatten().collect();
        assert_eq!(n, vec![("x\ty".to_string(), 1), ("é".to_string(), 1)]);
        assert_eq!(unquote(b"\"b/\\q\""), None);
        assert_eq!(unquote(b"\"b/\\\"\\\\\""), Some(b"b/\"\\".to_vec()));
        assert_eq!(new_path(b"/dev/null"), None);
        assert_eq!(new_path(b"w/x"), None);
    }

    #[test]
    fn a_snippet_marks_the_commented_lines() {
        let text = ["a", "b", "c", "d", "e"];
        assert_eq!(snippet(&text, 3, 3, 1), "     2 b\n>    3 c\n     4 d\n");
        assert_eq!(snippet(&text, 1, 2, 1), ">    1 a\n>    2 b\n     3 c\n");
        assert_eq!(snippet(&text, 5, 5, 3).lines().count(), 4);
    }
}
