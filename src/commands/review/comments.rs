//! `review ID`'s review comments: each beside the diff line it is on, the rest after the
//! diff with the hunk they were made on, and what changed since them.

use std::collections::HashSet;

use super::*;
use crate::review::comments::Role;
use crate::review::judge::{Judged, State};
use crate::review::show;

pub(super) struct Comments {
    judged: Vec<Judged>,
    shown: HashSet<String>,
}

impl Comments {
    /// The loop's comments, judged at its branches (imported by the caller); a stored
    /// comment that cannot be read is named and left out.
    pub(super) fn load(ui: &mut Ui, ws: &Workspace, id: &str) -> Result<Comments> {
        let (judged, skipped) = crate::review::judged(ws, id)?;
        for s in skipped {
            ui.warn(format!("a stored comment is left out: {s}"))?;
        }
        Ok(Comments {
            judged,
            shown: HashSet::new(),
        })
    }

    pub(super) fn is_empty(&self) -> bool {
        self.judged.is_empty()
    }

    /// The branch a comment on a file is on.
    fn role_of(j: &Judged) -> Option<Role> {
        j.thread
            .comment
            .anchor
            .as_ref()
            .filter(|a| a.path.is_some())
            .map(|a| a.role)
    }

    /// Comments on the loop as a whole, first.
    pub(super) fn write_general(&mut self, ui: &mut Ui) -> Result<()> {
        let general: Vec<&Judged> = self
            .judged
            .iter()
            .filter(|j| {
                j.thread
                    .comment
                    .anchor
                    .as_ref()
                    .is_none_or(|a| a.path.is_none())
            })
            .collect();
        if general.is_empty() {
            return Ok(());
        }
        writeln!(ui.out(), "{BOLD}== comments on the loop{RESET}")?;
        for j in general {
            show::write_thread(ui.out(), j)?;
            self.shown.insert(j.id().to_string());
        }
        Ok(())
    }

    /// The diff of `role`'s branch with its comments: beside their lines in a patch, and
    /// after it those no line of it shows.
    pub(super) fn write_diff(
        &mut self,
        ui: &mut Ui,
        role: &str,
        text: &[u8],
        patch: bool,
    ) -> Result<()> {
        let of_role: Vec<&Judged> = self
            .judged
            .iter()
            .filter(|j| Self::role_of(j).is_some_and(|r| r.as_str() == role))
            .collect();
        let placed = if patch {
            show::write_diff_with_comments(ui.out(), text, &of_role)?
        } else {
            terminal::write_diff(ui.out(), text)?;
            Vec::new()
        };
        let rest: Vec<&Judged> = of_role
            .iter()
            .filter(|j| !placed.iter().any(|p| p == j.id()))
            .copied()
            .collect();
        show::write_unplaced(ui.out(), &rest)?;
        for j in of_role {
            self.shown.insert(j.id().to_string());
        }
        Ok(())
    }

    /// The comments no diff showed (their branch proposes nothing now), then what changed
    /// on the branch since the oldest comment still open.
    pub(super) fn write_rest(&mut self, ui: &mut Ui, ws: &Workspace) -> Result<()> {
        let rest: Vec<&Judged> = self
            .judged
            .iter()
            .filter(|j| !self.shown.contains(j.id()))
            .collect();
        if !rest.is_empty() {
            writeln!(
                ui.out(),
                "{BOLD}== comments on what the loop no longer proposes{RESET}"
            )?;
            show::write_unplaced(ui.out(), &rest)?;
        }
        // What changed since the comments: from the oldest anchor of a comment not yet
        // resolved that the branch still descends from.
        let mut oldest: Option<(&str, &str, std::path::PathBuf)> = None;
        for j in &self.judged {
            let (Some(a), Some(tip)) = (&j.thread.comment.anchor, &j.tip) else {
                continue;
            };
            if j.state == State::Resolved || a.commit == *tip {
                continue;
            }
            let Some(origin) = crate::review::judge::origin_of(ws, a) else {
                continue;
            };
            let Ok(repo) = crate::git::objects::open_trusted(&origin) else {
                continue;
            };
            let (Ok(from), Ok(to)) = (
                gix::ObjectId::from_hex(a.commit.as_bytes()),
                gix::ObjectId::from_hex(tip.as_bytes()),
            ) else {
                continue;
            };
            if !crate::git::objects::is_ancestor(&repo, from, to).unwrap_or(false) {
                continue;
            }
            let older = match &oldest {
                None => true,
                Some((c, _, _)) => gix::ObjectId::from_hex(c.as_bytes()).ok().is_some_and(|c| {
                    c != from && crate::git::objects::is_ancestor(&repo, from, c).unwrap_or(false)
                }),
            };
            if older {
                oldest = Some((&a.commit, tip, origin));
            }
        }
        if let Some((from, tip, origin)) = oldest {
            show::write_since(ui.out(), &origin, from, tip)?;
        }
        Ok(())
    }
}
