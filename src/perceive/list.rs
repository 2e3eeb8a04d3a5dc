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

/// Longest name an offscreen element shows in the list: it is named in full
/// once it is scrolled into view.
const OFFSCREEN_NAME_SHOWN: usize = 40;

/// Renders the list: at most `cap` lines, interactable elements first, then
/// occluded, disabled and offscreen ones; a last line says what was left out.
///
/// Lean in characters, without losing a fact: the elements in view come
/// first, in id order, then the offscreen ones under one line per direction
/// (`offscreen below:`) instead of a state on each line; a link's line has
/// no role word (`[12] "Pricing"`: every other role is written); an
/// offscreen element's name is cut at `OFFSCREEN_NAME_SHOWN` characters.
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
    // In view first, then one group per direction, each in id order.
    let group = |e: &Element| match e.state {
        ElementState::Offscreen {
            direction,
            in_container,
        } => Some((direction as u8, in_container)),
        _ => None,
    };
    chosen.sort_by_key(|e| (group(e), e.id));
    let mut out = String::new();
    let mut current = None;
    for e in chosen {
        if let ElementState::Offscreen {
            direction,
            in_container,
        } = e.state
        {
            if current != group(e) {
                current = group(e);
                let _ = writeln!(
                    out,
                    "offscreen {}{}:",
                    direction.as_str(),
                    if in_container {
                        ", in a scroll area"
                    } else {
                        ""
                    }
                );
            }
        }
        out.push_str(&render(e, true));
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

/// A name said twice over ("Upvote Upvote": a label and its tooltip) once.
fn once(name: &str) -> &str {
    let half = name.len() / 2;
    if !name.len().is_multiple_of(2)
        && name.is_char_boundary(half)
        && name.is_char_boundary(half + 1)
    {
        let (a, b) = (&name[..half], &name[half + 1..]);
        if a == b && name.as_bytes()[half] == b' ' {
            return a;
        }
    }
    name
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

/// One line of the list, with the role and state written out in full:
/// `[12] link "Pricing" offscreen below`.
pub fn line(e: &Element) -> String {
    render(e, false)
}

/// A line; `lean` as the list writes it: no role word for a link, no
/// offscreen state (the group says it), an offscreen name cut short.
fn render(e: &Element, lean: bool) -> String {
    let offscreen = matches!(e.state, ElementState::Offscreen { .. });
    let mut s = if lean && e.role == "link" {
        format!("[{}]", e.id)
    } else {
        format!("[{}] {}", e.id, e.role)
    };
    write_label(&mut s, e, lean && offscreen);
    write_value(&mut s, e);
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
    write_options(&mut s, e);
    match &e.state {
        ElementState::Interactable => {}
        ElementState::Disabled => s.push_str(" disabled"),
        ElementState::Occluded { by, .. } => {
            let _ = write!(s, " occluded by {by}");
        }
        ElementState::Offscreen { .. } if lean => {}
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

/// What tells the element by: its name (cut short when `short`), else its
/// drawn size, its link's target or its hint.
fn write_label(s: &mut String, e: &Element, short: bool) {
    if !e.name.is_empty() {
        let name = once(&e.name);
        let name = if short {
            shorten(name, OFFSCREEN_NAME_SHOWN)
        } else {
            name.to_string()
        };
        let _ = write!(s, " {}", quoted(&name));
    } else if let Some(size) = e.drawn_size() {
        let _ = write!(s, " {size}");
    } else if let Some(target) = e.href.as_deref().and_then(link_target) {
        // An icon link (a social network's logo) has nothing else to tell it by.
        let _ = write!(s, " to {}", quoted(&shorten(&target, TARGET_SHOWN)));
    } else if let Some(hint) = e.hint.as_deref().filter(|h| !h.is_empty()) {
        let _ = write!(s, " hint {}", quoted(hint));
    }
}

/// What the element holds: its type, value and selection.
fn write_value(s: &mut String, e: &Element) {
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
}

/// The options of a list box, the first few.
fn write_options(s: &mut String, e: &Element) {
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
    fn the_list_groups_offscreen_elements_and_names_links_without_a_role() {
        let off = |direction, in_container| ElementState::Offscreen {
            direction,
            in_container,
        };
        let table = ElementTable {
            elements: vec![
                el(1, "link", "Top", off(Direction::Above, false)),
                el(2, "button", "Upvote Upvote", ElementState::Interactable),
                el(3, "link", &"long ".repeat(20), off(Direction::Below, false)),
                el(4, "textbox", "Email", off(Direction::Below, false)),
                el(5, "clickable", "Card", off(Direction::Right, true)),
                el(6, "link", "Docs", ElementState::Interactable),
            ],
        };
        let text = element_list(&table, 100);
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            vec![
                "[2] button \"Upvote\"",
                "[6] \"Docs\"",
                "offscreen above:",
                "[1] \"Top\"",
                "offscreen below:",
                &format!(
                    "[3] \"{}\"",
                    shorten(&"long ".repeat(20), OFFSCREEN_NAME_SHOWN)
                ),
                "[4] textbox \"Email\"",
                "offscreen right, in a scroll area:",
                "[5] clickable \"Card\"",
            ]
        );
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
        assert_eq!(
            lines,
            vec![
                "[4] \"L4\"",
                "[5] \"L5\"",
                "offscreen below:",
                "[1] \"L1\"",
                "(2 more elements not listed: 2 offscreen; scroll to see more)"
            ]
        );
    }
}
