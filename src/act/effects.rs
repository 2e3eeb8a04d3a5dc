//! What a command changed, told from two looks at the page: before and after.
//! The words are for the model: "navigated to …", "3 new elements appeared:
//! option "Paris", …", "now checked".

use std::collections::HashMap;

use crate::perceive::{Element, NodeNumbers, Observation};

/// Most elements named in one "appeared" or "disappeared" sentence.
const NAMED_MAX: usize = 5;

fn key(e: &Element) -> (String, String) {
    (e.role.clone(), e.name.clone())
}

/// Elements of `a` that `b` does not have, counted by (role, name), so a list
/// that re-renders with the same items is no change.
fn missing_from<'a>(a: &'a Observation, b: &Observation) -> Vec<&'a Element> {
    let mut left: HashMap<(String, String), usize> = HashMap::new();
    for e in &b.table.elements {
        *left.entry(key(e)).or_default() += 1;
    }
    a.table
        .elements
        .iter()
        .filter(|e| match left.get_mut(&key(e)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

fn sentence(count_word: &str, elements: &[&Element]) -> String {
    let named: Vec<String> = elements
        .iter()
        .take(NAMED_MAX)
        .map(|e| {
            if e.name.is_empty() {
                format!("[{}] {}", e.id, e.role)
            } else {
                format!("[{}] {} \"{}\"", e.id, e.role, e.name)
            }
        })
        .collect();
    let more = elements.len().saturating_sub(NAMED_MAX);
    let noun = if elements.len() == 1 {
        "element"
    } else {
        "elements"
    };
    let mut s = format!(
        "{} {noun} {count_word}: {}",
        elements.len(),
        named.join(", ")
    );
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

/// How the acted-on element itself changed: value, checked, expanded, selected, focus.
fn target_changes(before: &Element, after: &Element) -> Vec<String> {
    let mut out = Vec::new();
    if before.value != after.value {
        if let Some(v) = &after.value {
            out.push(format!("its value is now \"{v}\""));
        }
    }
    if before.checked != after.checked {
        if let Some(c) = after.checked {
            out.push(if c { "now checked" } else { "now unchecked" }.into());
        }
    }
    if before.expanded != after.expanded {
        if let Some(x) = after.expanded {
            out.push(if x { "now expanded" } else { "now collapsed" }.into());
        }
    }
    if before.selected != after.selected && after.selected == Some(true) {
        out.push("now selected".into());
    }
    if after.multiple && before.selected_options != after.selected_options {
        let chosen: Vec<String> = after
            .selected_options
            .iter()
            .map(|o| format!("\"{o}\""))
            .collect();
        out.push(if chosen.is_empty() {
            "none of its options is selected now".into()
        } else {
            format!("selected now: {}", chosen.join(", "))
        });
    }
    out
}

/// The changes between two looks at the page, as sentences; empty when nothing
/// a person would notice changed. `target` is the acted-on node (by its
/// number: the look after knows it by that, whether told or not); `text_changed`
/// says whether the text changed other than where it changes on its own.
pub(super) fn changes(
    before: &Observation,
    after: &Observation,
    target: Option<NodeNumbers>,
    text_changed: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    if before.url != after.url {
        out.push(format!("navigated to {}", after.url));
    } else if before.title != after.title {
        out.push(format!("the title is now \"{}\"", after.title));
    }
    let find = |o: &Observation| {
        let node = target?;
        o.table.elements.iter().find(|e| e.node == node).cloned()
    };
    let (target_before, target_after) = (find(before), find(after));
    if let (Some(b), Some(a)) = (&target_before, &target_after) {
        out.extend(target_changes(b, a));
    }
    // A new page is described by its URL, not as every element coming and going.
    if before.url == after.url {
        let appeared = missing_from(after, before);
        if !appeared.is_empty() {
            out.push(sentence("appeared", &appeared));
        }
        let gone = missing_from(before, after);
        if !gone.is_empty() {
            out.push(sentence("disappeared", &gone));
        }
        if appeared.is_empty() && gone.is_empty() && text_changed {
            out.push("the text on the page changed".into());
        }
    }
    // Focus is news only when nothing else happened (a click into a field).
    if out.is_empty() {
        if let (Some(b), Some(a)) = (&target_before, &target_after) {
            if !b.focused && a.focused {
                out.push("it has the keyboard focus".into());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perceive::{ElementState, ElementTable, Rect};

    fn obs(url: &str, elements: Vec<Element>, signature: &str) -> Observation {
        Observation {
            title: "T".into(),
            signature: signature.into(),
            ..Observation::of_table(url, ElementTable { elements })
        }
    }

    fn el(id: u32, role: &str, name: &str) -> Element {
        Element::new(id, role, name, Rect::default(), ElementState::Interactable)
    }

    #[test]
    fn new_options_are_named_and_counted() {
        let before = obs("u", vec![el(1, "textbox", "From")], "a");
        let mut after_els = vec![el(1, "textbox", "From")];
        for (i, c) in ["Paris", "Palermo", "Panama City"].iter().enumerate() {
            after_els.push(el(i as u32 + 2, "option", c));
        }
        let after = obs("u", after_els, "b");
        let c = changes(&before, &after, Some(el(1, "", "").node), true);
        assert_eq!(
            c,
            vec!["3 elements appeared: [2] option \"Paris\", [3] option \"Palermo\", [4] option \"Panama City\""]
        );
    }

    #[test]
    fn a_checked_box_and_a_navigation() {
        let mut b = el(1, "checkbox", "Tea");
        b.checked = Some(false);
        let mut a = b.clone();
        a.checked = Some(true);
        let c = changes(
            &obs("u", vec![b], "s"),
            &obs("u", vec![a], "s"),
            Some(el(1, "", "").node),
            false,
        );
        assert_eq!(c, vec!["now checked"]);
        let c = changes(
            &obs("u", vec![], "s"),
            &obs("v", vec![el(1, "link", "x")], "t"),
            None,
            true,
        );
        assert_eq!(c, vec!["navigated to v"]);
    }

    #[test]
    fn the_same_page_rerendered_is_no_change() {
        let before = obs("u", vec![el(1, "link", "A"), el(2, "link", "A")], "s");
        let after = obs("u", vec![el(1, "link", "A"), el(2, "link", "A")], "s");
        assert!(changes(&before, &after, None, false).is_empty());
        let fewer = obs("u", vec![el(1, "link", "A")], "t");
        assert_eq!(
            changes(&before, &fewer, None, true),
            vec!["1 element disappeared: [2] link \"A\""]
        );
    }
}
