//! A target described so that it can be found again on a new look at the
//! page, where the mark ids are new: its role, name, the names of the
//! elements nearest to it, its rank among elements that look the same, and
//! its frame.

use super::error::SkillError;
use serde::{Deserialize, Serialize};

use crate::perceive::{Element, Observation};

/// How many neighbours' names describe where an element stands.
const NEAR: usize = 2;

/// An element of a skill's step, as found again on a new page.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// Its role (`button`, `textbox`, `checkbox`, …).
    pub role: String,
    /// Its accessible name.
    pub name: String,
    /// An input's `type`.
    #[serde(default)]
    pub input_type: Option<String>,
    /// For an element without a name (an icon): the words its classes and
    /// symbols gave.
    #[serde(default)]
    pub hint: Option<String>,
    /// The names of the elements nearest to it: what tells equals apart
    /// when their number changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub near: Vec<String>,
    /// 1-based rank among the elements that look the same (same role, name
    /// and frame), in reading order.
    pub rank: usize,
    /// How many elements looked the same when it was learned.
    pub equals: usize,
    /// 0 for the page itself, else the frame's place among the page's
    /// frames, in order of their first element.
    #[serde(default)]
    pub frame: usize,
}

/// What an element is, for comparing: role, name, input type and hint, with
/// case and spacing folded.
#[derive(Debug, PartialEq, Eq)]
struct Key {
    role: String,
    name: String,
    input_type: Option<String>,
    hint: Option<String>,
}

fn fold(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl Key {
    fn new(role: &str, name: &str, input_type: Option<&str>, hint: Option<&str>) -> Key {
        Key {
            role: fold(role),
            name: fold(name),
            input_type: input_type.map(fold),
            // A hint tells only nameless elements apart.
            hint: name.trim().is_empty().then(|| hint.map(fold)).flatten(),
        }
    }

    fn of(e: &Element) -> Key {
        Key::new(&e.role, &e.name, e.input_type.as_deref(), e.hint.as_deref())
    }

    fn of_target(t: &Target) -> Key {
        Key::new(&t.role, &t.name, t.input_type.as_deref(), t.hint.as_deref())
    }
}

/// The frame of each element, numbered: 0 for the page's own.
fn frame_number(obs: &Observation, e: &Element) -> usize {
    if e.frame == obs.frame || e.frame.is_empty() {
        return 0;
    }
    let mut seen: Vec<&str> = Vec::new();
    for other in &obs.table.elements {
        if other.frame == obs.frame || other.frame.is_empty() {
            continue;
        }
        if !seen.contains(&other.frame.as_str()) {
            seen.push(&other.frame);
        }
        if other.frame == e.frame {
            break;
        }
    }
    seen.iter().position(|f| *f == e.frame).map_or(0, |i| i + 1)
}

/// The names of the nearest named elements that are not like `e`.
fn near_names(obs: &Observation, e: &Element) -> Vec<String> {
    let key = Key::of(e);
    let c = e.bbox.center();
    let mut others: Vec<(f64, String)> = obs
        .table
        .elements
        .iter()
        .filter(|o| o.id != e.id && !o.name.trim().is_empty() && Key::of(o) != key)
        .map(|o| {
            let p = o.bbox.center();
            ((p.x - c.x).hypot(p.y - c.y), fold(&o.name))
        })
        .collect();
    others.sort_by(|a, b| a.0.total_cmp(&b.0));
    others.into_iter().take(NEAR).map(|(_, n)| n).collect()
}

/// The elements that look like `key` in frame `frame`, in mark order.
fn equals<'a>(obs: &'a Observation, key: &Key, frame: usize) -> Vec<&'a Element> {
    obs.table
        .elements
        .iter()
        .filter(|e| Key::of(e) == *key && frame_number(obs, e) == frame)
        .collect()
}

impl Target {
    /// Describes element `id` of the observation (`None` when it has no
    /// such element).
    pub fn describe(obs: &Observation, id: u32) -> Option<Target> {
        let e = obs.table.get(id)?;
        let frame = frame_number(obs, e);
        let same = equals(obs, &Key::of(e), frame);
        let rank = same.iter().position(|o| o.id == id)? + 1;
        Some(Target {
            role: e.role.clone(),
            name: e.name.clone(),
            input_type: e.input_type.clone(),
            hint: e.hint.clone().filter(|_| e.name.trim().is_empty()),
            near: near_names(obs, e),
            rank,
            equals: same.len(),
            frame,
        })
    }

    /// How a person reads it: `button "Search jobs"`.
    pub fn describe_text(&self) -> String {
        match (self.name.trim().is_empty(), &self.hint) {
            (false, _) => format!("{} \"{}\"", self.role, self.name),
            (true, Some(h)) => format!("{} ({h})", self.role),
            (true, None) => self.role.clone(),
        }
    }

    /// The mark id of this target on a new look, or why it cannot be told.
    pub fn find(&self, obs: &Observation) -> Result<u32, SkillError> {
        let same = equals(obs, &Key::of_target(self), self.frame);
        let what = self.describe_text();
        match same.as_slice() {
            [] => Err(SkillError::Gone(what)),
            [only] if self.equals == 1 => Ok(only.id),
            // As many as when it was learned: the same rank is the same one.
            many if many.len() == self.equals => many
                .get(self.rank.saturating_sub(1))
                .map(|e| e.id)
                .ok_or(SkillError::NoRank {
                    what,
                    rank: self.rank,
                }),
            many => self.by_neighbours(obs, many).ok_or(SkillError::Ambiguous {
                what,
                found: many.len(),
                known: self.equals,
            }),
        }
    }

    /// The one element among `many` whose neighbours are most like the
    /// learned ones, if one stands out.
    fn by_neighbours(&self, obs: &Observation, many: &[&Element]) -> Option<u32> {
        if self.near.is_empty() {
            return None;
        }
        let mut scored: Vec<(usize, u32)> = many
            .iter()
            .map(|e| {
                // The nearest neighbour weighs most.
                let near = near_names(obs, e);
                let score = self
                    .near
                    .iter()
                    .zip(&near)
                    .enumerate()
                    .filter(|(_, (a, b))| a == b)
                    .map(|(i, _)| NEAR - i)
                    .sum::<usize>();
                (score, e.id)
            })
            .collect();
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        match scored.as_slice() {
            [(best, id), rest @ ..] if *best > 0 && rest.first().is_none_or(|r| r.0 < *best) => {
                Some(*id)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perceive::{ElementState, ElementTable, Rect};

    fn obs(elements: Vec<Element>) -> Observation {
        Observation::of_table("http://a.test/", ElementTable { elements })
    }

    fn el(id: u32, role: &str, name: &str, y: f64) -> Element {
        Element::new(
            id,
            role,
            name,
            Rect {
                x: 0.0,
                y,
                w: 100.0,
                h: 20.0,
            },
            ElementState::Interactable,
        )
    }

    #[test]
    fn a_target_is_found_again_under_a_new_id() {
        let before = obs(vec![
            el(1, "textbox", "Keywords", 0.0),
            el(2, "button", "Search", 30.0),
        ]);
        let t = Target::describe(&before, 2).unwrap();
        let after = obs(vec![
            el(1, "link", "Home", 0.0),
            el(2, "textbox", "Keywords", 30.0),
            el(3, "button", "search", 60.0),
        ]);
        assert_eq!(t.find(&after).ok(), Some(3));
    }

    #[test]
    fn a_renamed_target_is_not_found() {
        let before = obs(vec![el(1, "button", "Search jobs", 0.0)]);
        let t = Target::describe(&before, 1).unwrap();
        let after = obs(vec![el(1, "button", "Find jobs", 0.0)]);
        assert_eq!(
            t.find(&after).unwrap_err().to_string(),
            "button \"Search jobs\" is not on the page"
        );
    }

    #[test]
    fn equals_are_told_apart_by_rank_then_by_neighbours() {
        let page = |extra: bool| {
            let mut v = vec![
                el(1, "link", "Tea", 0.0),
                el(2, "button", "Add", 20.0),
                el(3, "link", "Coffee", 200.0),
                el(4, "button", "Add", 220.0),
            ];
            if extra {
                v.insert(0, el(0, "button", "Add", -300.0));
                for (i, e) in v.iter_mut().enumerate() {
                    e.id = i as u32 + 1;
                }
            }
            obs(v)
        };
        let t = Target::describe(&page(false), 4).unwrap();
        assert_eq!((t.rank, t.equals), (2, 2));
        assert_eq!(t.find(&page(false)).ok(), Some(4));
        // One more "Add" above: the rank no longer holds, the neighbour does.
        assert_eq!(t.find(&page(true)).ok(), Some(5));
        // Neighbours that say nothing: ambiguous, never a guess.
        let lone = Target {
            near: Vec::new(),
            ..t
        };
        assert!(lone
            .find(&page(true))
            .unwrap_err()
            .to_string()
            .contains("ambiguous"));
    }
}
