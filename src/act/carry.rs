//! Whether a batch goes on after a command changed the page: each later
//! command's element must still be there as the model saw it. A sequence
//! on one screen (the moves of a puzzle, the cells of a grid, buttons to
//! click within a time limit) then runs in one reply instead of a model
//! call per click, while anything the change moved, replaced or covered
//! still cuts the batch, as before.

use super::Executor;
use crate::commands::{Command, ReadTarget, Spot, Step};
use crate::perceive::Element;

/// Why a command does not run on a page an earlier command of its batch
/// changed (the model is told it, and looks again).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum Cut {
    /// A command at a point of the image.
    #[error("a point may show something else now")]
    AtPoint,
    /// A command about the page as a whole (a key, a new page, an answer).
    #[error("{0} was planned for the page as it was")]
    Planned(String),
    /// No look at the page before and after to compare.
    #[error("the page could not be looked at")]
    NoLook,
    /// An id the look the batch was planned on does not have.
    #[error("there is no element {0}")]
    NoElement(u32),
    /// An element the command names is not as it was seen.
    #[error("element {id} {change}")]
    Changed {
        /// Its id.
        id: u32,
        /// How.
        change: Change,
    },
}

/// How an element differs from the one the model saw.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum Change {
    /// It left the page, or another node took its place.
    #[error("was removed or replaced")]
    Gone,
    /// Its role or name changed: (role, name) now, then.
    #[error("is now {} \"{}\", no longer {} \"{}\"", now.0, now.1, then.0, then.1)]
    Renamed {
        /// Its role and name now.
        now: (String, String),
        /// Its role and name as seen.
        then: (String, String),
    },
    /// Its box moved or changed size.
    #[error("moved")]
    Moved,
    /// It was in view and is not.
    #[error("is out of view now")]
    OutOfView,
    /// Something covers it: what.
    #[error("is covered by {0} now")]
    Covered(String),
    /// It cannot be used now.
    #[error("is disabled now")]
    Disabled,
}

/// How far an element may have shifted and still be where it was seen, in
/// CSS pixels (a border that thickens on selection, a rounding).
const SHIFT: f64 = 2.0;

impl Executor {
    /// Whether `step` may run on the page as it is now, after an earlier
    /// command of its batch changed it: a WAIT and a READ of the page always
    /// may; a command on
    /// elements may when each of them is the same node, with the same role
    /// and name, in the same place, and can be clicked (not covered, not
    /// disabled, and in view, or out of view as it was) in the latest look. Any other command (a key, a
    /// point, a new page, an answer) may not: the model planned it for the
    /// page it saw. Why not, in words, when it may not; the ids of the look
    /// the batch was planned on are usable again when it may.
    pub(super) fn carries(&mut self, step: &Step) -> Result<(), Cut> {
        let ids: Vec<u32> = match &step.command {
            // A pause, and reading the page as it is now, fit any page.
            Command::Wait { .. }
            | Command::Read {
                of: ReadTarget::Page | ReadTarget::Print | ReadTarget::Text(_),
            } => {
                self.stale = None;
                return Ok(());
            }
            Command::Drag { from, to, .. } => [from, to]
                .into_iter()
                .map(|s| match s {
                    Spot::Id(id) => Some(*id),
                    Spot::At(_) => None,
                })
                .collect::<Option<Vec<u32>>>()
                .ok_or(Cut::AtPoint)?,
            c if c.point().is_some() => return Err(Cut::AtPoint),
            Command::Click { .. }
            | Command::DoubleClick { .. }
            | Command::RightClick { .. }
            | Command::Hold { .. }
            | Command::Hover { .. }
            | Command::Type { .. }
            | Command::Clear { .. }
            | Command::Select { .. }
            | Command::Deselect { .. } => step.command.target().into_iter().collect(),
            _ => return Err(Cut::Planned(step.command.to_string())),
        };
        let (Some(seen), Some(now)) = (self.seen.as_ref(), self.last.as_ref()) else {
            return Err(Cut::NoLook);
        };
        for id in ids {
            let Some(was) = seen.table.get(id) else {
                return Err(Cut::NoElement(id));
            };
            let is = now
                .table
                .elements
                .iter()
                .find(|e| e.frame == was.frame && e.node == was.node && e.node.document != 0);
            if let Some(change) = unlike(was, is) {
                return Err(Cut::Changed { id, change });
            }
        }
        self.stale = None;
        Ok(())
    }
}

/// How the element now differs from the one seen, if it does.
fn unlike(was: &Element, is: Option<&Element>) -> Option<Change> {
    let Some(is) = is else {
        return Some(Change::Gone);
    };
    if is.role != was.role || is.name != was.name {
        return Some(Change::Renamed {
            now: (is.role.clone(), is.name.clone()),
            then: (was.role.clone(), was.name.clone()),
        });
    }
    let moved = (is.bbox.x - was.bbox.x).abs() > SHIFT
        || (is.bbox.y - was.bbox.y).abs() > SHIFT
        || (is.bbox.w - was.bbox.w).abs() > SHIFT
        || (is.bbox.h - was.bbox.h).abs() > SHIFT;
    if moved {
        return Some(Change::Moved);
    }
    use crate::perceive::ElementState;
    match &is.state {
        ElementState::Interactable => None,
        // Out of view as it was (a field further down a form): the command
        // scrolls to it, as it would have.
        ElementState::Offscreen { .. } if is.state == was.state => None,
        ElementState::Offscreen { .. } => Some(Change::OutOfView),
        ElementState::Occluded { by, .. } => Some(Change::Covered(by.clone())),
        ElementState::Disabled => Some(Change::Disabled),
    }
}
