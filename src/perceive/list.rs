//! The element list the model reads: one line per element,
//! `[id] role "name" facts state`, lean in tokens and deterministic.

use std::fmt::Write;

use super::table::{Element, ElementState, ElementTable};

/// Default number of elements listed.
pub const DEFAULT_LIST_CAP: usize = 300;

/// How many select options are shown in a line.
const OPTIONS_SHOWN: usize = 8;

/// Longest value shown in a line.
const VALUE_SHOWN: usize = 60;

/// Longest link target shown for a link without a name.
const TARGET_SHOWN: usize = 60;

/// Input types whose kind the model needs to know (text is the default).
const TELLING_TYPES: &[&str] = &[
    "email",
    "password",
    "number",
    "date",
    "datetime-local",
    "time",
    "month",
    "week",
    "tel",
    "url",
    "search",
    "file",
    "color",
    "range",
];

/// Renders the list: at most `cap` lines, interactable elements first, then
/// occluded, disabled and offscreen ones, each group in id order; a last line
/// says what was left out.
pub fn element_list(table: &ElementTable, cap: usize) -> String {
    let rank = |e: &Element| match e.state {
        ElementState::Interactable => 0,
        ElementState::Occluded { .. } => 1,
        ElementState::Disabled => 2,
        ElementState::Offscreen { .. } => 3,
    };
    let mut chosen: Vec<&Element> = table.elements.iter().collect();
    chosen.sort_by_key(|e| (rank(e), e.id));
    let left_out = chosen.split_off(cap.min(chosen.len()));
    chosen.sort_by_key(|e| e.id);
    let mut out = String::new();
    for e in chosen {
        out.push_str(&line(e));
        out.push('\n');
    }
    if !left_out.is_empty() {
        let offscreen = left_out.iter().filter(|e| rank(e) == 3).count();
        let other = left_out.len() - offscreen;
        let _ = write!(out, "({} more elements not listed", left_out.len());
        if offscreen > 0 {
            let _ = write!(out, ": {offscreen} offscreen");
            if other > 0 {
                let _ = write!(out, ", {other} occluded or disabled");
            }
        }
        out.push_str("; scroll to see more)\n");
    }
    out
}

/// Quotes text for the list: double quotes inside become single ones, so a
/// name can never close its own quotes; control characters become spaces.
fn quoted(s: &str) -> String {
    let inner: String = s
        .chars()
        .map(|c| match c {
            '"' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    format!("\"{inner}\"")
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Where a link goes, as a person would say it: without the scheme of a web
/// address or a lone trailing slash. None for a script.
fn link_target(href: &str) -> Option<String> {
    let lower = href.to_ascii_lowercase();
    if lower.starts_with("javascript:") || href.trim().is_empty() {
        return None;
    }
    let bare = ["https://", "http://"]
        .iter()
        .find(|p| lower.starts_with(*p))
        .map_or(href, |p| &href[p.len()..]);
    Some(bare.strip_suffix('/').unwrap_or(bare).to_string())
}

/// One line of the list.
pub fn line(e: &Element) -> String {
    let mut s = format!("[{}] {}", e.id, e.role);
    if !e.name.is_empty() {
        let _ = write!(s, " {}", quoted(&e.name));
    } else if let Some(target) = e.href.as_deref().and_then(link_target) {
        // An icon link (a social network's logo) has nothing else to tell it by.
        let _ = write!(s, " to {}", quoted(&shorten(&target, TARGET_SHOWN)));
    } else if let Some(hint) = e.hint.as_deref().filter(|h| !h.is_empty()) {
        let _ = write!(s, " hint {}", quoted(hint));
    }
    if let Some(t) = e
        .input_type
        .as_deref()
        .filter(|t| TELLING_TYPES.contains(t))
    {
        let _ = write!(s, " type={t}");
    }
    if let Some(v) = e.value.as_deref().filter(|v| !v.is_empty()) {
        let _ = write!(s, " value={}", quoted(&shorten(v, VALUE_SHOWN)));
    }
    if e.has_value == Some(true) {
        s.push_str(" (filled)");
    }
    if e.multiple {
        if e.selected_options.is_empty() {
            s.push_str(" multiple, none selected");
        } else {
            let chosen: Vec<String> = e.selected_options.iter().map(|o| quoted(o)).collect();
            let _ = write!(s, " multiple, selected: {}", chosen.join(", "));
        }
    }
    match e.checked {
        Some(true) => s.push_str(" checked"),
        Some(false) => s.push_str(" unchecked"),
        None => {}
    }
    if e.selected == Some(true) {
        s.push_str(" selected");
    }
    match e.expanded {
        Some(true) => s.push_str(" expanded"),
        Some(false) => s.push_str(" collapsed"),
        None => {}
    }
    if e.focused {
        s.push_str(" focused");
    }
    if !e.options.is_empty() {
        let shown: Vec<String> = e
            .options
            .iter()
            .take(OPTIONS_SHOWN)
            .map(|o| quoted(o))
            .collect();
        let _ = write!(s, " options: {}", shown.join(", "));
        let total = e.option_count.map_or(e.options.len(), |c| c as usize);
        if total > shown.len() {
            let _ = write!(s, " (+{} more)", total - shown.len());
        }
    }
    match &e.state {
        ElementState::Interactable => {}
        ElementState::Disabled => s.push_str(" disabled"),
        ElementState::Occluded { by, .. } => {
            let _ = write!(s, " occluded by {by}");
        }
        ElementState::Offscreen {
            direction,
            in_container,
        } => {
            let _ = write!(s, " offscreen {}", direction.as_str());
            if *in_container {
                s.push_str(" in a scroll area");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perceive::table::{Direction, Rect};

    fn el(id: u32, role: &str, name: &str, state: ElementState) -> Element {
        Element::new(id, role, name, Rect::default(), state)
    }

    #[test]
    fn lines_read_as_the_issue_shows() {
        let covered = el(
            7,
            "button",
            "Submit",
            ElementState::Occluded {
                by: "dialog \"Cookie consent\"".into(),
                by_node: None,
            },
        );
        assert_eq!(
            line(&covered),
            "[7] button \"Submit\" occluded by dialog \"Cookie consent\""
        );
        let below = el(
            12,
            "link",
            "Pricing",
            ElementState::Offscreen {
                direction: Direction::Below,
                in_container: false,
            },
        );
        assert_eq!(line(&below), "[12] link \"Pricing\" offscreen below");
    }

    #[test]
    fn a_link_without_a_name_says_where_it_goes() {
        let mut e = el(28, "link", "", ElementState::Interactable);
        e.href = Some("https://www.facebook.com/heyriddleriddle/".into());
        assert_eq!(
            line(&e),
            "[28] link to \"www.facebook.com/heyriddleriddle\""
        );
        e.href = Some("mailto:help@example.com".into());
        assert_eq!(line(&e), "[28] link to \"mailto:help@example.com\"");
        e.href = Some("JavaScript:void(0)".into());
        assert_eq!(line(&e), "[28] link");
        e.href = Some(format!("http://example.com/{}", "a".repeat(100)));
        assert_eq!(
            line(&e).chars().count(),
            "[28] link to \"\"".len() + TARGET_SHOWN
        );
        // Without a target, the words its code gives it.
        e.href = None;
        e.hint = Some("menu toggle".into());
        assert_eq!(line(&e), "[28] link hint \"menu toggle\"");
        // A named link is told by its name.
        e.name = "Instagram".into();
        assert_eq!(line(&e), "[28] link \"Instagram\"");
    }

    #[test]
    fn a_name_cannot_close_its_own_quotes() {
        let e = el(1, "link", "say \"hi\"\nnow", ElementState::Interactable);
        assert_eq!(line(&e), "[1] link \"say 'hi' now\"");
    }

    #[test]
    fn cap_keeps_interactable_first_and_says_what_it_left_out() {
        let mut table = ElementTable::default();
        for id in 1..=5 {
            let state = if id <= 3 {
                ElementState::Offscreen {
                    direction: Direction::Below,
                    in_container: false,
                }
            } else {
                ElementState::Interactable
            };
            table
                .elements
                .push(el(id, "link", &format!("L{id}"), state));
        }
        let text = element_list(&table, 3);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "[1] link \"L1\" offscreen below");
        assert_eq!(lines[1], "[4] link \"L4\"");
        assert_eq!(lines[2], "[5] link \"L5\"");
        assert_eq!(
            lines[3],
            "(2 more elements not listed: 2 offscreen; scroll to see more)"
        );
    }
}
