//! Changes the page makes on its own: a clock, a countdown, a "3 people are
//! looking at this" line. Such a change is neither a command's effect nor a
//! new page: it must not cut a batch nor be told as "the text on the page
//! changed" after a click that did nothing.
//!
//! Each look carries one hash per line of each frame's text. Two looks with
//! nothing done between them tell which lines change by themselves: those are
//! ambient for this page from then on. The model's thinking time lies between
//! the executor's last look after a batch and the next step's look; on a page
//! with no line known to tick yet, the executor looks once more right before
//! a batch acts when the page changed since the look (two looks that saw no
//! tick may have fallen between two ticks). A later pair of looks whose only differences are in ambient
//! lines (same URL, same elements, same number of lines) is the same page.
//! Lines are told apart by their place, so a change that adds or removes
//! lines is always a change.

use std::collections::HashSet;

use super::Observation;

/// The lines of one page that change on their own.
#[derive(Debug, Clone, Default)]
pub struct Ambient {
    /// The page (URL) the lines belong to.
    url: String,
    /// (frame place, line index).
    lines: HashSet<(usize, usize)>,
}

/// The lines (frame place, line index) where two looks of the same structure
/// differ; `None` when they are not comparable line by line (another URL, other
/// elements, lines added or removed).
fn differing(before: &Observation, after: &Observation) -> Option<Vec<(usize, usize)>> {
    if before.url != after.url
        || before.structure != after.structure
        || before.text_lines.len() != after.text_lines.len()
    {
        return None;
    }
    let mut out = Vec::new();
    for (f, (a, b)) in before.text_lines.iter().zip(&after.text_lines).enumerate() {
        if a.len() != b.len() {
            return None;
        }
        out.extend(
            a.iter()
                .zip(b)
                .enumerate()
                .filter(|(_, (x, y))| x != y)
                .map(|(i, _)| (f, i)),
        );
    }
    Some(out)
}

impl Ambient {
    /// Learns from two looks with nothing done between them: the lines that
    /// differ changed on their own. A look at another page forgets the last.
    pub fn learn(&mut self, before: &Observation, after: &Observation) {
        if self.url != after.url {
            self.url = after.url.clone();
            self.lines.clear();
        }
        if let Some(lines) = differing(before, after) {
            self.lines.extend(lines);
        }
    }

    /// Whether the line (frame place, index) is known to change on its own.
    pub fn knows_line(&self, line: &(usize, usize)) -> bool {
        self.lines.contains(line)
    }

    /// Whether lines of the page at `url` are known to change on their own.
    pub fn ticks(&self, url: &str) -> bool {
        self.url == url && !self.lines.is_empty()
    }

    /// The lines in which `after` differs from `before` that are not known
    /// to change on their own (`None`: not comparable line by line).
    pub fn unexplained(
        &self,
        before: &Observation,
        after: &Observation,
    ) -> Option<Vec<(usize, usize)>> {
        let lines = differing(before, after)?;
        Some(
            lines
                .into_iter()
                .filter(|l| !self.lines.contains(l))
                .collect(),
        )
    }

    /// Whether `after` differs from `before` only in lines that change on
    /// their own (or not at all): then it is the same page.
    pub fn only_ambient(&self, before: &Observation, after: &Observation) -> bool {
        self.url == after.url
            && differing(before, after)
                .is_some_and(|lines| lines.iter().all(|l| self.lines.contains(l)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perceive::ElementTable;

    fn look(url: &str, structure: &str, lines: &[u32]) -> Observation {
        Observation {
            signature: format!("{structure}{lines:?}"),
            structure: structure.into(),
            text_lines: vec![lines.to_vec()],
            ..Observation::of_table(url, ElementTable::default())
        }
    }

    #[test]
    fn a_line_that_ticks_by_itself_is_ambient_and_only_there() {
        let mut ambient = Ambient::default();
        let (a, b) = (look("u", "s", &[1, 10, 3]), look("u", "s", &[1, 11, 3]));
        assert!(!ambient.only_ambient(&a, &b), "nothing learned yet");
        assert!(!ambient.ticks("u"));
        // Two looks too close together to see a tick teach nothing.
        ambient.learn(&a, &a.clone());
        assert!(!ambient.ticks("u"));
        ambient.learn(&a, &b);
        assert!(ambient.ticks("u") && !ambient.ticks("v"));
        // The clock ticks again: the same page.
        assert!(ambient.only_ambient(&b, &look("u", "s", &[1, 12, 3])));
        // Another line changed too, or a line was added, or an element: a change.
        assert!(!ambient.only_ambient(&b, &look("u", "s", &[1, 12, 4])));
        assert!(!ambient.only_ambient(&b, &look("u", "s", &[1, 12, 3, 5])));
        assert!(!ambient.only_ambient(&b, &look("u", "t", &[1, 12, 3])));
        // Another page forgets what the last one taught.
        ambient.learn(&b, &look("v", "s", &[1, 2, 3]));
        assert!(!ambient.ticks("u"));
        let (c, d) = (look("v", "s", &[1, 2, 3]), look("v", "s", &[1, 9, 3]));
        assert!(
            !ambient.only_ambient(&c, &d),
            "line 1 ticked on u, not on v"
        );
    }
}
