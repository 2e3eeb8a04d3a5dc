//! The enumerator's answer as it comes over the wire (deep-serialized), and
//! its elements turned into table elements placed in top-level viewport
//! coordinates.

use chromiumoxide::cdp::js_protocol::runtime::{
    ExceptionDetails, RemoteObject, SerializationOptions, SerializationOptionsSerialization,
};
use serde::Deserialize;

use super::places::FramePlace;
use super::registry::Registry;
use super::table::{Direction, Element, ElementState, NodeNumbers, Point, Rect};
use super::PerceiveError;

/// What the enumerator reports for one root (document or closed shadow root).
#[derive(Debug, Deserialize)]
pub(super) struct Meta {
    pub(super) url: String,
    pub(super) title: String,
    pub(super) sx: f64,
    pub(super) sy: f64,
    els: Vec<RawElement>,
    /// Indexes into the nodes sent of custom elements that may hide a closed shadow root.
    pub(super) hosts: Vec<usize>,
    #[serde(default)]
    pub(super) dropped: usize,
    /// Subtrees not walked: far from the viewport.
    #[serde(default)]
    pub(super) far: usize,
    /// Stylesheets the enumerator could not read, and has no text for.
    #[serde(default)]
    pub(super) unread: Vec<String>,
    /// Parts of the work on the whole document kept from the last look.
    #[serde(default)]
    pub(super) reused: usize,
    /// The whole table was the last look's, with values read again.
    #[serde(default)]
    pub(super) kept: bool,
    pub(super) text_hash: String,
    /// One hash per line of the text (see perceive/ambient.rs).
    #[serde(default)]
    pub(super) text_lines: Vec<u32>,
    /// Characters of the document's rendered text.
    #[serde(default)]
    pub(super) text_chars: usize,
    pub(super) truncated: bool,
    pub(super) listeners: bool,
}

#[derive(Debug, Deserialize)]
struct RawRect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl From<&RawRect> for Rect {
    fn from(r: &RawRect) -> Self {
        Rect {
            x: r.x,
            y: r.y,
            w: r.w,
            h: r.h,
        }
    }
}

#[derive(Debug, Deserialize)]
struct RawCover {
    n: usize,
    text: String,
}

#[derive(Debug, Deserialize)]
struct RawElement {
    n: usize,
    tag: String,
    role: String,
    name: String,
    hint: Option<String>,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    state: String,
    vis: Option<RawRect>,
    px: Option<f64>,
    py: Option<f64>,
    dir: Option<String>,
    #[serde(default)]
    in_container: bool,
    cover: Option<RawCover>,
    #[serde(rename = "type")]
    input_type: Option<String>,
    value: Option<String>,
    has_value: Option<bool>,
    #[serde(default)]
    options: Vec<String>,
    option_count: Option<u32>,
    #[serde(default)]
    multiple: bool,
    #[serde(default)]
    selected_options: Vec<String>,
    href: Option<String>,
    checked: Option<bool>,
    selected: Option<bool>,
    expanded: Option<bool>,
    #[serde(default)]
    focused: bool,
    proxy: Option<usize>,
}

/// A node handed back by the enumerator, as deep serialization describes it.
#[derive(Debug, Clone, Copy)]
pub(super) struct NodeRef {
    pub(super) backend_node_id: i64,
    pub(super) closed_shadow_root: Option<i64>,
}

pub(super) fn deep_options() -> SerializationOptions {
    SerializationOptions {
        serialization: SerializationOptionsSerialization::Deep,
        max_depth: Some(3),
        additional_parameters: Some(serde_json::json!({
            "maxNodeDepth": 0,
            "includeShadowTree": "none"
        })),
    }
}

/// Reads the enumerator's `{meta, nodes}` out of a deep-serialized result.
pub(super) fn read_result(obj: &RemoteObject) -> Result<(Meta, Vec<NodeRef>), PerceiveError> {
    let deep = obj
        .deep_serialized_value
        .as_ref()
        .and_then(|d| d.value.as_ref())
        .ok_or_else(|| PerceiveError::Enumerate("no deep-serialized value".into()))?;
    let pairs = deep
        .as_array()
        .ok_or_else(|| PerceiveError::Enumerate(format!("unexpected result shape: {deep}")))?;
    let field = |name: &str| {
        pairs.iter().find_map(|p| {
            let p = p.as_array()?;
            (p.first()?.as_str()? == name).then(|| p.get(1)?.get("value"))?
        })
    };
    let meta_text = field("meta")
        .and_then(|v| v.as_str())
        .ok_or_else(|| PerceiveError::Enumerate("result has no meta".into()))?;
    let meta: Meta = serde_json::from_str(meta_text)
        .map_err(|e| PerceiveError::Enumerate(format!("bad meta: {e}")))?;
    let nodes = field("nodes").map(node_refs).unwrap_or_default();
    Ok((meta, nodes))
}

/// The nodes of a deep-serialized array (a node that is not one, as null,
/// has backendNodeId 0).
pub(super) fn node_refs(array: &serde_json::Value) -> Vec<NodeRef> {
    let items = array.as_array().map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .map(|item| {
            let v = item.get("value");
            NodeRef {
                backend_node_id: v
                    .and_then(|v| v.get("backendNodeId"))
                    .and_then(|b| b.as_i64())
                    .unwrap_or(0),
                closed_shadow_root: v
                    .and_then(|v| v.get("shadowRoot"))
                    .and_then(|s| s.get("value"))
                    .filter(|s| s.get("mode").and_then(|m| m.as_str()) == Some("closed"))
                    .and_then(|s| s.get("backendNodeId"))
                    .and_then(|b| b.as_i64()),
            }
        })
        .collect()
}

/// The enumerator's answer, or the exception it threw.
pub(super) fn answer(
    result: &RemoteObject,
    exception: &Option<ExceptionDetails>,
) -> Result<(Meta, Vec<NodeRef>), PerceiveError> {
    if let Some(e) = exception {
        return Err(thrown(e));
    }
    read_result(result)
}

/// What a script threw, as an error.
pub(super) fn thrown(e: &ExceptionDetails) -> PerceiveError {
    PerceiveError::Enumerate(
        e.exception
            .as_ref()
            .and_then(|x| x.description.clone())
            .unwrap_or_else(|| e.text.clone()),
    )
}

fn direction_of(word: Option<&str>) -> Direction {
    match word {
        Some("above") => Direction::Above,
        Some("left") => Direction::Left,
        Some("right") => Direction::Right,
        _ => Direction::Below,
    }
}

fn direction_from(b: &Rect, area: &Rect) -> Direction {
    if b.y + b.h <= area.y {
        Direction::Above
    } else if b.y >= area.y + area.h {
        Direction::Below
    } else if b.x + b.w <= area.x {
        Direction::Left
    } else if b.x >= area.x + area.w {
        Direction::Right
    } else {
        Direction::Below
    }
}

/// An element's state as the enumerator told it.
fn state_of(raw: &RawElement, registry: &Registry) -> ElementState {
    match raw.state.as_str() {
        "interactable" => ElementState::Interactable,
        "disabled" => ElementState::Disabled,
        "occluded" => ElementState::Occluded {
            by: raw
                .cover
                .as_ref()
                .map(|c| c.text.clone())
                .unwrap_or_else(|| "another element".into()),
            by_node: raw.cover.as_ref().and_then(|c| registry.node(c.n)),
        },
        _ => ElementState::Offscreen {
            direction: direction_of(raw.dir.as_deref()),
            in_container: raw.in_container,
        },
    }
}

/// Turns one root's raw elements into table elements placed in top-level coordinates.
pub(super) fn place_elements(
    meta: &Meta,
    registry: &Registry,
    place: &FramePlace,
    viewport: &Rect,
    out: &mut Vec<Element>,
) {
    let node = |number: usize| registry.node(number);
    // A number from a page that bent the enumerator's built-ins past any
    // real count: the element is left out.
    let number = |n: usize| u32::try_from(n).ok();
    for raw in &meta.els {
        let Some(own) = number(raw.n) else {
            continue;
        };
        let (dx, dy) = (place.offset.x, place.offset.y);
        let bbox = Rect {
            x: raw.x,
            y: raw.y,
            w: raw.w,
            h: raw.h,
        }
        .offset(dx, dy);
        let mut visible = raw.vis.as_ref().map(|v| Rect::from(v).offset(dx, dy));
        let mut click_point = match (raw.px, raw.py) {
            (Some(x), Some(y)) => Some(Point {
                x: x + dx,
                y: y + dy,
            }),
            _ => None,
        };
        let mut state = state_of(raw, registry);
        // A child frame is seen through its owner's box: clip to it.
        if !place.is_main {
            let seen = match (visible, place.clip) {
                (Some(v), Some(c)) => v.intersect(&c),
                _ => None,
            };
            if seen.is_none() && visible.is_some() {
                if matches!(
                    state,
                    ElementState::Interactable | ElementState::Occluded { .. }
                ) {
                    state = ElementState::Offscreen {
                        direction: direction_from(&bbox, &place.clip.unwrap_or(*viewport)),
                        in_container: place.clip.is_some(),
                    };
                }
                click_point = None;
            } else if let (Some(p), Some(s)) = (click_point, seen) {
                if !s.contains(p) {
                    click_point = Some(s.center());
                }
            }
            visible = seen;
        }
        out.push(Element {
            id: 0,
            frame: place.id.inner().clone(),
            backend_node_id: node(raw.n).unwrap_or(0),
            node: NodeNumbers {
                document: registry.document,
                number: own,
                control: raw.proxy.and_then(number),
            },
            bbox,
            visible,
            click_point,
            tag: raw.tag.clone(),
            role: raw.role.clone(),
            name: raw.name.clone(),
            hint: raw.hint.clone(),
            input_type: raw.input_type.clone(),
            value: raw.value.clone(),
            has_value: raw.has_value,
            href: raw.href.clone(),
            checked: raw.checked,
            selected: raw.selected,
            expanded: raw.expanded,
            focused: raw.focused,
            options: raw.options.clone(),
            option_count: raw.option_count,
            multiple: raw.multiple,
            selected_options: raw.selected_options.clone(),
            control_node_id: raw.proxy.and_then(node),
            state,
        });
    }
}
