//! The page signature: a hash that changes when the interactive structure or the
//! visible text changes, and not on a caret blink or a repaint of the same content.
//!
//! It counts each element's frame (by its place in the frame tree), tag, role, name and whether it is disabled,
//! as a multiset (the order of ids follows the boxes, which move when a scroll
//! area scrolls); the rendered text of every frame (`innerText`, hashed in the
//! page); and the URL. It leaves out what moves without the page changing:
//! boxes and scroll offsets (a scroll is not a new page), occlusion and offscreen
//! states (they follow the scroll), field values, checked and focus (they are the
//! direct effect of typing and clicking, which the executor reports itself).

use super::table::{ElementState, ElementTable};

/// 64-bit FNV-1a: tiny, fast, and stable across Rust versions and runs (std's
/// `DefaultHasher` promises neither).
#[derive(Debug, Clone, Copy)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Feeds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Feeds a string and a separator, so that ("ab","c") ≠ ("a","bc").
    pub fn field(&mut self, s: &str) {
        self.write(s.as_bytes());
        self.write(&[0xff]);
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// Computes the signature of a page from its table, its frames (ids in frame
/// tree order, each with the hash of its text) and URL. A frame counts by its
/// place in the tree, not its id: ids differ from one browser to the next, and
/// a replay must find the same page the same.
pub fn page_signature(url: &str, table: &ElementTable, frames: &[(String, String)]) -> String {
    let place = |frame: &str| {
        frames
            .iter()
            .position(|(id, _)| id == frame)
            .map_or_else(|| "?".to_string(), |i| i.to_string())
    };
    let mut each: Vec<u64> = table
        .elements
        .iter()
        .map(|e| {
            let mut h = Fnv64::default();
            h.field(&place(&e.frame));
            h.field(&e.tag);
            h.field(&e.role);
            h.field(&e.name);
            h.field(if e.state == ElementState::Disabled {
                "d"
            } else {
                ""
            });
            h.finish()
        })
        .collect();
    each.sort_unstable();
    let mut h = Fnv64::default();
    h.field(url);
    for e in each {
        h.write(&e.to_le_bytes());
    }
    for (_, text) in frames {
        h.field(text);
    }
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_reference_vectors() {
        let mut h = Fnv64::default();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63dc4c8601ec8c);
        let mut h = Fnv64::default();
        h.write(b"foobar");
        assert_eq!(h.finish(), 0x85944171f73967e8);
    }

    #[test]
    fn element_order_does_not_matter_but_elements_do() {
        use crate::perceive::{Element, Rect};
        let el = |id, name: &str| {
            Element::new(
                id,
                "link",
                name,
                Rect::default(),
                ElementState::Interactable,
            )
        };
        let ab = ElementTable {
            elements: vec![el(1, "A"), el(2, "B")],
        };
        let ba = ElementTable {
            elements: vec![el(1, "B"), el(2, "A")],
        };
        let aa = ElementTable {
            elements: vec![el(1, "A"), el(2, "A")],
        };
        let sig = |t: &ElementTable| page_signature("u", t, &[(String::new(), "x".into())]);
        assert_eq!(sig(&ab), sig(&ba));
        assert_ne!(sig(&ab), sig(&aa));
    }

    #[test]
    fn frames_count_by_place_not_by_id() {
        use crate::perceive::{Element, Rect};
        let table = |frame: &str| {
            let mut e = Element::new(1, "link", "A", Rect::default(), ElementState::Interactable);
            e.frame = frame.into();
            ElementTable { elements: vec![e] }
        };
        let frames = |id: &str| vec![(id.to_string(), "text".to_string())];
        assert_eq!(
            page_signature("u", &table("F1"), &frames("F1")),
            page_signature("u", &table("F2"), &frames("F2")),
            "a new browser gives new frame ids to the same page"
        );
        let two = vec![
            ("M".to_string(), "t".to_string()),
            ("C".to_string(), "t".to_string()),
        ];
        assert_ne!(
            page_signature("u", &table("M"), &two),
            page_signature("u", &table("C"), &two),
            "the same link in the main page or in a child frame differs"
        );
    }

    #[test]
    fn fields_are_separated() {
        let mut a = Fnv64::default();
        a.field("ab");
        a.field("c");
        let mut b = Fnv64::default();
        b.field("a");
        b.field("bc");
        assert_ne!(a.finish(), b.finish());
    }
}
