//! The element table: mark id → frame, backendNodeId, box, role, name, state.

use serde::{Deserialize, Serialize};

/// A rectangle in viewport CSS pixels of the top-level page.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// The bounding rectangle of a quad as CDP gives it (four x,y corners,
    /// the first eight values), if its corners are finite numbers. It may be
    /// empty: a caller that needs an area checks for one.
    pub fn around_quad(quad: &[f64]) -> Option<Rect> {
        let corners = quad.get(..8)?;
        let xs = [corners[0], corners[2], corners[4], corners[6]];
        let ys = [corners[1], corners[3], corners[5], corners[7]];
        if !xs.iter().chain(&ys).all(|v| v.is_finite()) {
            return None;
        }
        let x0 = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let x1 = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let y0 = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let y1 = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Rect {
            x: x0,
            y: y0,
            w: x1 - x0,
            h: y1 - y0,
        })
    }

    /// The overlap of two rectangles, if they overlap at all.
    pub fn intersect(&self, other: &Rect) -> Option<Rect> {
        let x = self.x.max(other.x);
        let y = self.y.max(other.y);
        let r = (self.x + self.w).min(other.x + other.w);
        let b = (self.y + self.h).min(other.y + other.h);
        (r > x && b > y).then_some(Rect {
            x,
            y,
            w: r - x,
            h: b - y,
        })
    }

    /// This rectangle moved by (dx, dy).
    pub fn offset(&self, dx: f64, dy: f64) -> Rect {
        Rect {
            x: self.x + dx,
            y: self.y + dy,
            ..*self
        }
    }

    /// The center point.
    pub fn center(&self) -> Point {
        Point {
            x: self.x + self.w / 2.0,
            y: self.y + self.h / 2.0,
        }
    }

    /// Whether the point lies inside (edges included).
    pub fn contains(&self, p: Point) -> bool {
        p.x >= self.x && p.x <= self.x + self.w && p.y >= self.y && p.y <= self.y + self.h
    }
}

/// A point in viewport CSS pixels of the top-level page.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Point {
    /// Horizontal.
    pub x: f64,
    /// Vertical.
    pub y: f64,
}

/// Where an offscreen element lies, so the model knows which way to scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Above the visible area.
    Above,
    /// Below the visible area.
    Below,
    /// Left of the visible area.
    Left,
    /// Right of the visible area.
    Right,
}

impl Direction {
    /// The word used in the element list.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Above => "above",
            Direction::Below => "below",
            Direction::Left => "left",
            Direction::Right => "right",
        }
    }
}

/// Whether an element can be acted on now, and if not why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ElementState {
    /// Visible in the viewport and a click at its point reaches it.
    Interactable,
    /// Outside the visible area (of the page, or of a scroll container inside it).
    Offscreen {
        /// Which way it lies.
        direction: Direction,
        /// It is hidden inside a scroll container rather than outside the page's viewport.
        in_container: bool,
    },
    /// In the viewport, but every sampled point of it is covered by something else.
    Occluded {
        /// What covers it, e.g. `dialog "Cookie consent"`.
        by: String,
        /// backendNodeId of the covering element, when known.
        by_node: Option<i64>,
    },
    /// Disabled (`disabled`, `aria-disabled`, or inside a disabled fieldset).
    Disabled,
}

/// An element's nodes as the registry of its document numbered them
/// (perceive/registry.rs): telling them apart costs nothing, and their
/// backendNodeIds are asked for only when a command names the element.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NodeNumbers {
    /// The registry that numbered them, one per document (0: a table built
    /// by hand, whose backendNodeIds are given).
    pub document: u64,
    /// The element's node.
    pub number: u32,
    /// The number of the control a label draws for (see `control_node_id`).
    #[serde(default)]
    pub control: Option<u32>,
}

/// One interactive element of the page.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Element {
    /// The mark id the model sees: small, in reading order.
    pub id: u32,
    /// CDP frame id of the frame that holds it.
    pub frame: String,
    /// Stable node identity inside the browser, once asked for: 0 until a
    /// command names the element (a look reports node numbers only, see
    /// [`NodeNumbers`]; [`crate::perceive::identify`] asks), or until an
    /// earlier command named the same node.
    pub backend_node_id: i64,
    /// Which node it is, as its document numbered it during the look.
    #[serde(default)]
    pub node: NodeNumbers,
    /// Border box in top-level viewport CSS pixels (may lie outside the viewport).
    pub bbox: Rect,
    /// The part of the box that is visible in the viewport, if any.
    #[serde(default)]
    pub visible: Option<Rect>,
    /// A point inside the element that a hit test showed reaches it.
    #[serde(default)]
    pub click_point: Option<Point>,
    /// Lower-case tag name.
    pub tag: String,
    /// ARIA role, explicit or implicit (`clickable` for listener/pointer-only elements).
    pub role: String,
    /// Accessible name, whitespace-normalised and bounded.
    pub name: String,
    /// For an element without a name (an icon): the words of a small
    /// vocabulary (`menu`, `close`, `search`, …) found in its id and classes,
    /// its icons' classes and the symbols its SVG draws, e.g. `menu toggle`.
    #[serde(default)]
    pub hint: Option<String>,
    /// `type` of an input.
    #[serde(default)]
    pub input_type: Option<String>,
    /// Current value (never a password's).
    #[serde(default)]
    pub value: Option<String>,
    /// For a password field: whether it holds something (its value never leaves the browser).
    #[serde(default)]
    pub has_value: Option<bool>,
    /// Link target.
    #[serde(default)]
    pub href: Option<String>,
    /// Checked state of a checkbox, radio or ARIA equivalent.
    #[serde(default)]
    pub checked: Option<bool>,
    /// `aria-selected`.
    #[serde(default)]
    pub selected: Option<bool>,
    /// `aria-expanded`, or a `<details>` summary's open state.
    #[serde(default)]
    pub expanded: Option<bool>,
    /// Has keyboard focus.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub focused: bool,
    /// A select's options (bounded).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub options: Vec<String>,
    /// How many options the select really has.
    #[serde(default)]
    pub option_count: Option<u32>,
    /// A list that takes several options (`<select multiple>`, a listbox with
    /// `aria-multiselectable`).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub multiple: bool,
    /// The options selected in such a list (bounded).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub selected_options: Vec<String>,
    /// When a visually hidden control is drawn by its label, the label is the
    /// node acted on and this is the control's own backendNodeId (once asked
    /// for, as `backend_node_id`).
    #[serde(default)]
    pub control_node_id: Option<i64>,
    /// Interactable, offscreen, occluded or disabled.
    pub state: ElementState,
}

impl Element {
    /// An element with an identity, a box and a state and no other facts, for
    /// tools and tests that build a table by hand: the node id is the mark id,
    /// and an interactable element is visible whole.
    pub fn new(id: u32, role: &str, name: &str, bbox: Rect, state: ElementState) -> Self {
        Self {
            id,
            frame: String::new(),
            backend_node_id: i64::from(id),
            node: NodeNumbers {
                document: 0,
                number: id,
                control: None,
            },
            bbox,
            visible: (state == ElementState::Interactable).then_some(bbox),
            click_point: None,
            tag: String::new(),
            role: role.to_string(),
            name: name.to_string(),
            hint: None,
            input_type: None,
            value: None,
            has_value: None,
            href: None,
            checked: None,
            selected: None,
            expanded: None,
            focused: false,
            options: Vec::new(),
            option_count: None,
            multiple: false,
            selected_options: Vec::new(),
            control_node_id: None,
            state,
        }
    }

    /// For a drawing that takes clicks (a canvas, an svg, a video) with no
    /// name: its size, `900×500` (CSS pixels), which tells it apart.
    pub fn drawn_size(&self) -> Option<String> {
        (self.name.is_empty() && matches!(self.role.as_str(), "canvas" | "svg" | "video"))
            .then(|| format!("{:.0}×{:.0}", self.bbox.w, self.bbox.h))
    }

    /// Whether a click would reach it now.
    pub fn is_interactable(&self) -> bool {
        self.state == ElementState::Interactable
    }
}

/// The id → node table of one observation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElementTable {
    /// Elements in mark-id order; `elements[i].id == i + 1`.
    pub elements: Vec<Element>,
}

impl ElementTable {
    /// The element with this mark id.
    pub fn get(&self, id: u32) -> Option<&Element> {
        let i = usize::try_from(id).ok()?.checked_sub(1)?;
        self.elements.get(i).filter(|e| e.id == id)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// Whether the page showed no interactive element.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::Rect;

    #[test]
    fn a_quad_is_bounded_by_its_first_four_corners_and_may_be_empty() {
        let tilted = [50.0, 0.0, 100.0, 50.0, 50.0, 100.0, 0.0, 50.0, 999.0, 999.0];
        let r = Rect::around_quad(&tilted).unwrap();
        assert_eq!((r.x, r.y, r.w, r.h), (0.0, 0.0, 100.0, 100.0));
        let flat = [5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0];
        assert_eq!(Rect::around_quad(&flat).map(|r| r.w), Some(0.0));
        assert!(Rect::around_quad(&[1.0, 2.0, 3.0]).is_none());
        let broken = [f64::NAN, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        assert!(Rect::around_quad(&broken).is_none());
    }
}
