//! Whether a batch goes on after a command changed the page: each later
//! command's element must still be there as the model saw it. A sequence
//! on one screen (the moves of a puzzle, the cells of a grid, buttons to
//! click within a time limit) then runs in one reply instead of a model
//! call per click, while anything the change moved, replaced or covered
//! still cuts the batch, as before.

use super::Executor;
use crate::commands::{Command, ReadTarget, Spot, Step};
use crate::perceive::Element;

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
    pub(super) fn carries(&mut self, step: &Step) -> Result<(), String> {
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
                .ok_or("a point may show something else now")?,
            c if c.point().is_some() => return Err("a point may show something else now".into()),
            Command::Click { .. }
            | Command::DoubleClick { .. }
            | Command::RightClick { .. }
            | Command::Hold { .. }
            | Command::Hover { .. }
            | Command::Type { .. }
            | Command::Clear { .. }
            | Command::Select { .. }
            | Command::Deselect { .. } => step.command.target().into_iter().collect(),
            _ => {
                return Err(format!(
                    "{} was planned for the page as it was",
                    step.command
                ))
            }
        };
        let (Some(seen), Some(now)) = (self.seen.as_ref(), self.last.as_ref()) else {
            return Err("the page could not be looked at".into());
        };
        for id in ids {
            let Some(was) = seen.table.get(id) else {
                return Err(format!("there is no element {id}"));
            };
            let is = now
                .table
                .elements
                .iter()
                .find(|e| e.frame == was.frame && e.node == was.node && e.node.document != 0);
            if let Some(why) = unlike(was, is) {
                return Err(format!("element {id} {why}"));
            }
        }
        self.stale = None;
        Ok(())
    }
}

/// How the element now differs from the one seen, if it does.
fn unlike(was: &Element, is: Option<&Element>) -> Option<String> {
    let Some(is) = is else {
        return Some("was removed or replaced".into());
    };
    if is.role != was.role || is.name != was.name {
        return Some(format!(
            "is now {} \"{}\", no longer {} \"{}\"",
            is.role, is.name, was.role, was.name
        ));
    }
    let moved = (is.bbox.x - was.bbox.x).abs() > SHIFT
        || (is.bbox.y - was.bbox.y).abs() > SHIFT
        || (is.bbox.w - was.bbox.w).abs() > SHIFT
        || (is.bbox.h - was.bbox.h).abs() > SHIFT;
    if moved {
        return Some("moved".into());
    }
    use crate::perceive::ElementState;
    match &is.state {
        ElementState::Interactable => None,
        // Out of view as it was (a field further down a form): the command
        // scrolls to it, as it would have.
        ElementState::Offscreen { .. } if is.state == was.state => None,
        ElementState::Offscreen { .. } => Some("is out of view now".into()),
        ElementState::Occluded { by, .. } => Some(format!("is covered by {by} now")),
        ElementState::Disabled => Some("is disabled now".into()),
    }
}
