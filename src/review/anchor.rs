//! Where a comment's lines are now: the anchoring that keeps a review comment on its code
//! while the branch moves (pure; the reads are in [`super::judge`]).
//!
//! A comment is anchored to a commit, a path and a range of lines, and keeps the text of
//! those lines. At a later tip, the lines are followed:
//!
//! 1. with the file as it was at the anchor commit, a line diff (Myers) from then to now
//!    maps each anchored line to its new number; when every line maps, unchanged and
//!    still one block, the comment is there (lines inserted or removed above only move
//!    it);
//! 2. otherwise the lines were changed in place, or moved: the block is looked for among
//!    the lines the diff says were *inserted*. Found exactly once, the block moved there
//!    unchanged and the comment follows it. A block that is still somewhere among the
//!    lines that did not change is not taken for a move (that copy was there before:
//!    the commented lines themselves were edited), and two inserted copies are
//!    ambiguous: either way the comment is outdated;
//! 3. without the anchor commit (a workspace that never had it), only the text is there
//!    to go by: the block at its old place, else its one occurrence anywhere.
//!
//! The diff runs with a deadline, so a pathological file makes the mapping coarser, never
//! slow.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp};

/// Where the anchored block is in the file as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The block is at `start` (1-based), unchanged; `moved` when it got there by being
    /// cut and put elsewhere rather than by lines added or removed around it.
    At { start: usize, moved: bool },
    /// The lines were changed (or removed), or cannot be told apart from a copy.
    Changed,
}

impl Found {
    pub fn start(self) -> Option<usize> {
        match self {
            Found::At { start, .. } => Some(start),
            Found::Changed => None,
        }
    }
}

/// How long the line diff of one file may take before it settles for a coarser answer.
const DEADLINE: Duration = Duration::from_millis(500);

/// Follows the block `lines`, which started at line `start` (1-based) of the file as it
/// was (`then`, when that version can be read), into the file as it is (`now`).
pub fn follow(lines: &[String], start: usize, then: Option<&[&str]>, now: &[&str]) -> Found {
    if lines.is_empty() || start == 0 {
        return Found::Changed;
    }
    match then {
        Some(then) => follow_with(lines, start, then, now),
        None => follow_by_text(lines, start, now),
    }
}

/// Step 1 and 2 of the module header.
fn follow_with(lines: &[String], start: usize, then: &[&str], now: &[&str]) -> Found {
    let first = start - 1;
    // The anchor must describe the file it names; when it does not (a stored anchor that
    // disagrees with the commit), only the text is trusted.
    if then
        .get(first..first + lines.len())
        .is_none_or(|got| !same(got, lines))
    {
        return follow_by_text(lines, start, now);
    }
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        then,
        now,
        Some(Instant::now() + DEADLINE),
    );
    if let Some(mapped) = map_block(&ops, first, lines.len()) {
        return Found::At {
            start: mapped + 1,
            moved: false,
        };
    }
    let inserted = inserted_lines(&ops, now.len());
    let candidates: Vec<usize> = occurrences(lines, now)
        .into_iter()
        .filter(|&at| inserted[at..at + lines.len()].iter().all(|&i| i))
        .collect();
    match candidates.as_slice() {
        [one] => Found::At {
            start: one + 1,
            moved: true,
        },
        _ => Found::Changed,
    }
}

/// Step 3: the block at its old place, else its one occurrence.
fn follow_by_text(lines: &[String], start: usize, now: &[&str]) -> Found {
    let first = start - 1;
    if now
        .get(first..first + lines.len())
        .is_some_and(|got| same(got, lines))
    {
        return Found::At {
            start,
            moved: false,
        };
    }
    match occurrences(lines, now).as_slice() {
        [one] => Found::At {
            start: one + 1,
            moved: true,
        },
        _ => Found::Changed,
    }
}

fn same(got: &[&str], lines: &[String]) -> bool {
    got.len() == lines.len() && got.iter().zip(lines).all(|(a, b)| *a == b.as_str())
}

/// The new index of old line `first`, when lines `first..first+len` all lie in unchanged
/// stretches and stay one block.
fn map_block(ops: &[DiffOp], first: usize, len: usize) -> Option<usize> {
    let mut mapped = Vec::with_capacity(len);
    for old in first..first + len {
        let new = ops.iter().find_map(|op| match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } if (old_index..old_index + len).contains(&old) => Some(new_index + (old - old_index)),
            _ => None,
        })?;
        mapped.push(new);
    }
    let start = *mapped.first()?;
    mapped
        .iter()
        .enumerate()
        .all(|(i, &n)| n == start + i)
        .then_some(start)
}

/// For each line of the new file, whether the diff says it was inserted (not there
/// before, at least not at this place).
fn inserted_lines(ops: &[DiffOp], new_len: usize) -> Vec<bool> {
    let mut inserted = vec![false; new_len];
    for op in ops {
        let (at, len) = match *op {
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => (new_index, new_len),
            _ => continue,
        };
        for flag in inserted.iter_mut().skip(at).take(len) {
            *flag = true;
        }
    }
    inserted
}

/// Every index of `now` where the block `lines` starts.
fn occurrences(lines: &[String], now: &[&str]) -> Vec<usize> {
    if lines.len() > now.len() {
        return Vec::new();
    }
    (0..=now.len() - lines.len())
        .filter(|&at| same(&now[at..at + lines.len()], lines))
        .collect()
}

/// A file's text as lines, the way a comment counts them: split at `\n`, a final newline
/// ending the last line rather than starting an empty one.
pub fn lines_of(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() && text.len() <= 1 {
        return if text.is_empty() {
            Vec::new()
        } else {
            vec![""]
        };
    }
    body.split('\n').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| s.to_string()).collect()
    }

    const THEN: &[&str] = &["a", "b", "c", "d", "e"];

    #[test]
    fn unchanged_lines_stay_where_they_are() {
        let b = block(&["b", "c"]);
        assert_eq!(
            follow(&b, 2, Some(THEN), THEN),
            Found::At {
                start: 2,
                moved: false
            }
        );
        // The last line of the file, and a one-line block.
        assert_eq!(
            follow(&block(&["e"]), 5, Some(THEN), THEN),
            Found::At {
                start: 5,
                moved: false
            }
        );
    }

    #[test]
    fn lines_added_or_removed_above_move_the_comment_with_its_lines() {
        let b = block(&["c", "d"]);
        let now = ["x", "y", "a", "b", "c", "d", "e"];
        assert_eq!(
            follow(&b, 3, Some(THEN), &now),
            Found::At {
                start: 5,
                moved: false
            }
        );
        let now = ["b", "c", "d", "e"];
        assert_eq!(
            follow(&b, 3, Some(THEN), &now),
            Found::At {
                start: 2,
                moved: false
            }
        );
        // Lines changed below and just after the block leave it where it is.
        let now = ["a", "b", "c", "d", "E", "f"];
        assert_eq!(
            follow(&b, 3, Some(THEN), &now),
            Found::At {
                start: 3,
                moved: false
            }
        );
    }

    #[test]
    fn a_changed_line_of_the_block_makes_it_outdated() {
        let b = block(&["b", "c"]);
        let now = ["a", "b", "C", "d", "e"];
        assert_eq!(follow(&b, 2, Some(THEN), &now), Found::Changed);
        // Removed.
        let now = ["a", "d", "e"];
        assert_eq!(follow(&b, 2, Some(THEN), &now), Found::Changed);
        // A line put between the block's lines splits it: changed.
        let now = ["a", "b", "x", "c", "d", "e"];
        assert_eq!(follow(&b, 2, Some(THEN), &now), Found::Changed);
        // Emptied.
        assert_eq!(follow(&b, 2, Some(THEN), &[]), Found::Changed);
    }

    #[test]
    fn a_block_cut_and_put_elsewhere_is_followed() {
        let then = ["fn a() {", "  one", "}", "fn b() {", "  two", "}", "end"];
        let b = block(&["fn a() {", "  one", "}"]);
        // `a` moved below `b`, unchanged.
        let now = ["fn b() {", "  two", "}", "end", "fn a() {", "  one", "}"];
        assert_eq!(
            follow(&b, 1, Some(&then), &now),
            Found::At {
                start: 5,
                moved: true
            }
        );
    }

    #[test]
    fn a_copy_that_was_already_there_is_not_a_move() {
        // The commented block (lines 4-5) is edited in place; an identical block (lines
        // 1-2) was there before: the comment is outdated, not moved onto the copy.
        let then = ["x", "y", "-", "x", "y", "end"];
        let b = block(&["x", "y"]);
        let now = ["x", "y", "-", "x", "Y", "end"];
        assert_eq!(follow(&b, 4, Some(&then), &now), Found::Changed);
    }

    #[test]
    fn two_inserted_copies_are_ambiguous() {
        // The block moves below four lines that stay, twice.
        let then = ["x", "y", "m", "n", "o", "p"];
        let b = block(&["x", "y"]);
        let now = ["m", "n", "o", "p", "x", "y", "q", "x", "y"];
        assert_eq!(follow(&b, 1, Some(&then), &now), Found::Changed);
        // Once: followed.
        let now = ["m", "n", "o", "p", "q", "x", "y"];
        assert_eq!(
            follow(&b, 1, Some(&then), &now),
            Found::At {
                start: 6,
                moved: true
            }
        );
    }

    #[test]
    fn without_the_anchor_commit_the_text_decides() {
        let b = block(&["c", "d"]);
        assert_eq!(
            follow(&b, 3, None, THEN),
            Found::At {
                start: 3,
                moved: false
            }
        );
        let now = ["c", "d", "a"];
        assert_eq!(
            follow(&b, 3, None, &now),
            Found::At {
                start: 1,
                moved: true
            }
        );
        let now = ["c", "d", "c", "d"];
        assert_eq!(
            follow(&b, 2, None, &now),
            Found::Changed,
            "two copies, neither at the old place"
        );
        // At the old place wins over a copy elsewhere.
        assert_eq!(
            follow(&b, 3, None, &now),
            Found::At {
                start: 3,
                moved: false
            }
        );
        assert_eq!(follow(&b, 3, None, &["a"]), Found::Changed);
    }

    #[test]
    fn an_anchor_that_disagrees_with_its_commit_goes_by_the_text() {
        // The stored lines are not what the commit has at that place.
        let b = block(&["q", "r"]);
        let now = ["a", "q", "r"];
        assert_eq!(
            follow(&b, 1, Some(THEN), &now),
            Found::At {
                start: 2,
                moved: true
            }
        );
        // Past the end of the old file.
        assert_eq!(follow(&b, 9, Some(THEN), THEN), Found::Changed);
    }

    #[test]
    fn nothing_anchored_is_never_found() {
        assert_eq!(follow(&[], 1, Some(THEN), THEN), Found::Changed);
        assert_eq!(follow(&block(&["a"]), 0, Some(THEN), THEN), Found::Changed);
        assert_eq!(Found::Changed.start(), None);
        assert_eq!(
            Found::At {
                start: 4,
                moved: true
            }
            .start(),
            Some(4)
        );
    }

    #[test]
    fn a_longer_block_than_the_file_is_not_found() {
        let b = block(&["a", "b", "c"]);
        assert_eq!(follow(&b, 1, None, &["a", "b"]), Found::Changed);
    }

    #[test]
    fn a_block_as_long_as_the_file_is_found_by_its_text() {
        let b = block(&["a", "b"]);
        assert_eq!(
            follow(&b, 3, None, &["a", "b"]),
            Found::At {
                start: 1,
                moved: true
            }
        );
    }

    #[test]
    fn the_old_place_is_the_blocks_exact_lines() {
        // Further down a file (where first line index times length is not first plus
        // length): at its old place, not moved.
        let b = block(&["e", "f"]);
        let now = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        assert_eq!(
            follow(&b, 5, None, &now),
            Found::At {
                start: 5,
                moved: false
            }
        );
    }

    #[test]
    fn a_long_file_with_many_changes_is_still_diffed_line_by_line() {
        // Three thousand lines, every tenth changed: the diff has to work through them
        // (within its deadline), and an unchanged line in the middle keeps its place.
        let then: Vec<String> = (0..3000).map(|i| format!("line {i}")).collect();
        let now: Vec<String> = then
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if i % 10 == 0 {
                    format!("{l} changed")
                } else {
                    l.clone()
                }
            })
            .collect();
        let then: Vec<&str> = then.iter().map(String::as_str).collect();
        let now: Vec<&str> = now.iter().map(String::as_str).collect();
        assert_eq!(
            follow(&block(&["line 1501"]), 1502, Some(&then), &now),
            Found::At {
                start: 1502,
                moved: false
            }
        );
    }

    #[test]
    fn lines_are_counted_as_a_comment_counts_them() {
        assert_eq!(lines_of(""), Vec::<&str>::new());
        assert_eq!(lines_of("\n"), vec![""]);
        assert_eq!(lines_of("a"), vec!["a"]);
        assert_eq!(lines_of("a\n"), vec!["a"]);
        assert_eq!(lines_of("a\n\nb\n"), vec!["a", "", "b"]);
        assert_eq!(lines_of("a\r\nb"), vec!["a\r", "b"]);
    }
}
