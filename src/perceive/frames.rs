//! Running the enumerator in every frame (and in closed shadow roots), and
//! turning its answers into elements in top-level viewport coordinates.

use std::collections::HashSet;

use chromiumoxide::cdp::browser_protocol::dom::{
    BackendNodeId, DescribeNodeParams, GetBoxModelParams, GetFrameOwnerParams, ResolveNodeParams,
};
use chromiumoxide::cdp::browser_protocol::page::FrameId;

use crate::browser::{found_frames, link_of, remote_frame, remote_frames, HitTester, Link};
use chromiumoxide::cdp::browser_protocol::target::GetTargetsParams;
use chromiumoxide::cdp::js_protocol::runtime::{
    CallArgument, CallFunctionOnParams, ExecutionContextId, RemoteObject, RemoteObjectId,
    SerializationOptions, SerializationOptionsSerialization,
};
use chromiumoxide::Page;
use serde::Deserialize;

use super::registry::{self, Registry};
use super::sheets;
use super::table::{Direction, Element, ElementState, NodeNumbers, Point, Rect};
use super::PerceiveError;

/// Object group for the handles the enumerator returns, released after each perception.
pub(crate) const OBJECT_GROUP: &str = "seamark-perceive";

/// How many processes deep frames inside frames of other sites are followed.
const MAX_PROCESS_DEPTH: usize = 16;

/// How deep closed shadow roots inside closed shadow roots are followed.
const MAX_SHADOW_DEPTH: usize = 4;

/// Limits passed to the enumerator.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EnumerateOptions {
    pub max_name: usize,
    pub max_options: usize,
    pub max_elements: usize,
    pub max_offscreen: usize,
    pub exact_occlusion: bool,
    pub spot_checks: usize,
    /// Milliseconds the enumerator runs before it yields to the page's event
    /// loop; 0 never.
    pub yield_ms: f64,
    /// Screens beyond the viewport past which a subtree is not walked; 0 walks
    /// everything.
    pub far_screens: f64,
}

/// What the enumerator reports for one root (document or closed shadow root).
#[derive(Debug, Deserialize)]
struct Meta {
    url: String,
    title: String,
    sx: f64,
    sy: f64,
    els: Vec<RawElement>,
    /// Indexes into the nodes sent of custom elements that may hide a closed shadow root.
    hosts: Vec<usize>,
    #[serde(default)]
    dropped: usize,
    /// Subtrees not walked: far from the viewport.
    #[serde(default)]
    far: usize,
    /// Stylesheets the enumerator could not read, and has no text for.
    #[serde(default)]
    unread: Vec<String>,
    /// Parts of the work on the whole document kept from the last look.
    #[serde(default)]
    reused: usize,
    /// The whole table was the last look's, with values read again.
    #[serde(default)]
    kept: bool,
    text_hash: String,
    /// One hash per line of the text (see perceive/ambient.rs).
    #[serde(default)]
    text_lines: Vec<u32>,
    /// Characters of the document's rendered text.
    #[serde(default)]
    text_chars: usize,
    truncated: bool,
    listeners: bool,
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
struct NodeRef {
    backend_node_id: i64,
    closed_shadow_root: Option<i64>,
}

/// One frame's part of the page.
#[derive(Debug)]
pub(crate) struct FrameResult {
    pub frame_id: String,
    pub url: String,
    pub title: String,
    pub elements: Vec<Element>,
    pub text_hash: String,
    /// One hash per line of the frame's text.
    pub text_lines: Vec<u32>,
    /// Characters of the frame's rendered text.
    pub text_chars: usize,
    /// Page scroll offset of this frame (used for reading order in the main frame).
    pub scroll: (f64, f64),
    pub truncated: bool,
    pub listeners_seen: bool,
    /// Elements found but left out of the table (far offscreen, over the cap).
    pub dropped: usize,
    /// Parts of the document not walked, for lying far from the viewport.
    pub far_parts: usize,
    /// Parts of the work on the whole document kept from the last look.
    pub reused: usize,
    /// The table was the last look's, with values read again.
    pub table_kept: bool,
    /// For a frame in another process, the element holding it in the page's
    /// own process.
    pub outer_owner: Option<i64>,
}

/// A frame of the tree with where its content lies in the top-level viewport.
#[derive(Debug, Clone)]
struct FramePlace {
    id: FrameId,
    /// Top-left of the frame's content box in top-level viewport coordinates.
    offset: Point,
    /// The part of the top-level viewport through which this frame can be seen.
    clip: Option<Rect>,
    is_main: bool,
    /// Where the frame's commands go.
    link: Link,
    /// Where the viewport of the frame's process (its link) lies in the
    /// top-level viewport: boxes its session reports are in that viewport's
    /// coordinates. The top-left corner for the page's own frames.
    origin: Point,
    /// For a frame in a process of its own (or in one that is), the element
    /// in the page's own process that holds it: a top-level hit test inside
    /// the frame lands there.
    outer_owner: Option<i64>,
}

/// The main frame's place: the whole viewport, on the page's own link. It
/// needs no round trip to the page (chromiumoxide keeps the frame tree from
/// page events), so the main frame's look starts at once.
async fn main_place(page: &Page, viewport: Rect) -> Result<FramePlace, PerceiveError> {
    let main = page
        .mainframe()
        .await?
        .ok_or_else(|| PerceiveError::Enumerate("the page has no main frame".into()))?;
    Ok(FramePlace {
        id: main,
        offset: Point::default(),
        clip: Some(viewport),
        is_main: true,
        link: Link::Page(page.clone()),
        origin: Point::default(),
        outer_owner: None,
    })
}

/// Lists every child frame with its place, parents before children. The
/// page's own frames come from the frame tree chromiumoxide keeps from page
/// events (no protocol round trip); frames of other sites in processes of
/// their own from their targets (see browser/remote.rs); each one's box from
/// its owner element, asked of the page. `missed` is set when frames in other
/// processes could not all be followed.
async fn child_places(
    page: &Page,
    main: &FramePlace,
    missed: &mut bool,
) -> Result<Vec<FramePlace>, PerceiveError> {
    let own = main.link.clone();
    let mut out = vec![main.clone()];
    let frames = page.frames().await?;
    let known: Vec<String> = frames.iter().map(|f| f.inner().clone()).collect();
    let remote = match remote_frames(page, &known).await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!("frames in other processes not all followed: {e}");
            *missed = true;
            found_frames(page)
        }
    };
    // (frame, its parent, its link, whether its owner is in its parent's process)
    let mut children: Vec<(FrameId, FrameId, Link, bool)> = Vec::new();
    for f in frames.into_iter().filter(|f| *f != main.id) {
        if remote.iter().any(|r| r.id == *f.inner()) {
            continue;
        }
        if let Some(p) = page.frame_parent(f.clone()).await? {
            children.push((f, p, own.clone(), false));
        }
    }
    for r in remote {
        children.push((
            FrameId::new(r.id),
            FrameId::new(r.parent),
            r.link,
            r.is_root,
        ));
    }
    // Parents before children, so a child's clip can use its parent's.
    let mut pending = children;
    let mut progress = true;
    while !pending.is_empty() && progress {
        progress = false;
        let mut rest = Vec::new();
        for (f, parent, link, is_root) in pending {
            let Some(parent) = out.iter().find(|o| o.id == parent).cloned() else {
                rest.push((f, parent, link, is_root));
                continue;
            };
            progress = true;
            // The owner element lives in the parent's process.
            let owner_link = if is_root { &parent.link } else { &link };
            let Some((owner, content)) = owner_box(owner_link, &f, parent.origin).await else {
                continue;
            };
            let content_origin = Point {
                x: content.x,
                y: content.y,
            };
            out.push(FramePlace {
                id: f,
                offset: content_origin,
                clip: parent.clip.and_then(|c| c.intersect(&content)),
                is_main: false,
                origin: if is_root {
                    content_origin
                } else {
                    parent.origin
                },
                outer_owner: parent
                    .outer_owner
                    .or((is_root && !parent.link.is_remote()).then_some(owner)),
                link,
            });
        }
        pending = rest;
    }
    out.remove(0);
    Ok(out)
}

/// A child frame's owner element and its content box in top-level
/// coordinates, asked of `link` (the process of the owner), whose viewport
/// lies at `origin`.
async fn owner_box(link: &Link, id: &FrameId, origin: Point) -> Option<(i64, Rect)> {
    let owner = link
        .execute(GetFrameOwnerParams::new(id.clone()))
        .await
        .ok()?;
    let model = link
        .execute(
            GetBoxModelParams::builder()
                .backend_node_id(owner.result.backend_node_id)
                .build(),
        )
        .await
        .ok()?;
    let quad = model.result.model.content.inner();
    if quad.len() < 8 {
        return None;
    }
    let xs = [quad[0], quad[2], quad[4], quad[6]];
    let ys = [quad[1], quad[3], quad[5], quad[7]];
    let x0 = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let y0 = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let x1 = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let y1 = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((
        *owner.result.backend_node_id.inner(),
        Rect {
            x: x0 + origin.x,
            y: y0 + origin.y,
            w: x1 - x0,
            h: y1 - y0,
        },
    ))
}

/// Where frame `frame` of `page` lies now: its link and the origin of its
/// link's viewport in top-level coordinates (the top-left corner for the
/// page's own frames). Asked afresh: a scroll moves a frame. A point of the
/// page's viewport is at (x - origin.x, y - origin.y) in the link's.
pub async fn frame_origin(page: &Page, frame: &str) -> (Link, Point) {
    let Some(mut at) = remote_frame(page, frame) else {
        return (Link::Page(page.clone()), Point::default());
    };
    let link = at.link.clone();
    // Up to the frame whose owner is in another process, then its owner's
    // box there (in that process's viewport), and so on to the page's own
    // process: the boxes' corners add up.
    let mut origin = Point::default();
    for _ in 0..MAX_PROCESS_DEPTH {
        while !at.is_root {
            match remote_frame(page, &at.parent) {
                Some(up) => at = up,
                None => return (link, origin),
            }
        }
        let parent = remote_frame(page, &at.parent);
        let parent_link = parent
            .as_ref()
            .map_or_else(|| Link::Page(page.clone()), |p| p.link.clone());
        let Some((_, content)) =
            owner_box(&parent_link, &FrameId::new(&at.id), Point::default()).await
        else {
            return (link, origin);
        };
        origin.x += content.x;
        origin.y += content.y;
        match parent {
            Some(p) => at = p,
            None => break,
        }
    }
    (link, origin)
}

fn deep_options() -> SerializationOptions {
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
fn read_result(obj: &RemoteObject) -> Result<(Meta, Vec<NodeRef>), PerceiveError> {
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
fn node_refs(array: &serde_json::Value) -> Vec<NodeRef> {
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
fn answer(
    result: &RemoteObject,
    exception: &Option<chromiumoxide::cdp::js_protocol::runtime::ExceptionDetails>,
) -> Result<(Meta, Vec<NodeRef>), PerceiveError> {
    if let Some(e) = exception {
        return Err(thrown(e));
    }
    read_result(result)
}

/// What a script threw, as an error.
fn thrown(e: &chromiumoxide::cdp::js_protocol::runtime::ExceptionDetails) -> PerceiveError {
    PerceiveError::Enumerate(
        e.exception
            .as_ref()
            .and_then(|x| x.description.clone())
            .unwrap_or_else(|| e.text.clone()),
    )
}

/// Runs the enumerator on a document (`root` none) or a closed shadow root,
/// numbering nodes in `registry`.
async fn enumerate_root(
    link: &Link,
    registry: &Registry,
    root: Option<RemoteObjectId>,
    opts: &EnumerateOptions,
) -> Result<(Meta, Vec<NodeRef>), PerceiveError> {
    let opts = serde_json::to_value(opts).unwrap_or_default();
    let mut params = CallFunctionOnParams::new(
        "function (root, o) { return this.enumerate(root || document, o, this); }",
    );
    params.object_id = Some(registry.object.clone());
    params.arguments = Some(vec![
        CallArgument {
            value: None,
            unserializable_value: None,
            object_id: root,
        },
        CallArgument {
            value: Some(opts),
            unserializable_value: None,
            object_id: None,
        },
    ]);
    params.silent = Some(true);
    // The enumerator answers with a promise: it may yield on its way.
    params.await_promise = Some(true);
    params.object_group = Some(OBJECT_GROUP.into());
    params.serialization_options = Some(deep_options());
    let reply = link.execute(params).await?;
    answer(&reply.result.result, &reply.result.exception_details)
}

/// Which nodes a registry's numbers are: `null` for one let go since (it
/// left the document).
const IDENTIFY_JS: &str =
    "function (numbers) { return numbers.map((n) => this.nodes[n] || null); }";

/// Fills in the backendNodeId (and the drawn control's) of each element that
/// has none yet, asking its document's registry which nodes its numbers are;
/// the registry learns them for later looks. One call per frame. An element
/// whose document is gone (navigated, its frame removed) or whose node left
/// it and was let go keeps 0.
pub(crate) async fn identify(page: &Page, elements: &mut [Element]) -> Result<(), PerceiveError> {
    let unknown = |e: &Element| {
        e.node.document != 0
            && (e.backend_node_id == 0 || (e.node.control.is_some() && e.control_node_id.is_none()))
    };
    let mut frames: Vec<String> = elements
        .iter()
        .filter(|e| unknown(e))
        .map(|e| e.frame.clone())
        .collect();
    frames.sort();
    frames.dedup();
    for frame in frames {
        let link = link_of(page, &frame);
        let Some(context) = link.frame_execution_context(FrameId::new(&frame)).await? else {
            continue;
        };
        let (mut registry, _) = registry::take(&link, &frame, context).await?;
        let document = registry.document;
        let ours = |e: &Element| e.frame == frame && e.node.document == document && unknown(e);
        let mut numbers: Vec<u32> = elements
            .iter()
            .filter(|e| ours(e))
            .flat_map(|e| std::iter::once(e.node.number).chain(e.node.control))
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        if numbers.is_empty() {
            registry::give_back(&link, &frame, context, registry);
            continue;
        }
        let Some(told) = tell_nodes(&link, &frame, &registry, &numbers).await? else {
            continue;
        };
        for (number, node) in numbers.iter().zip(&told) {
            if node.backend_node_id > 0 {
                registry.learn(*number as usize, node.backend_node_id);
            }
        }
        let told = |n: u32| {
            numbers
                .binary_search(&n)
                .ok()
                .and_then(|i| told.get(i))
                .map(|t| t.backend_node_id)
                .filter(|&b| b > 0)
        };
        for e in elements.iter_mut().filter(|e| ours(e)) {
            if e.backend_node_id == 0 {
                e.backend_node_id = told(e.node.number).unwrap_or(0);
            }
            if e.control_node_id.is_none() {
                e.control_node_id = e.node.control.and_then(told);
            }
        }
        registry::give_back(&link, &frame, context, registry);
    }
    Ok(())
}

/// What nodes a registry's `numbers` are, asked of it in its document:
/// `None` when the call failed (its handle may be gone with its document).
async fn tell_nodes(
    link: &Link,
    frame: &str,
    registry: &Registry,
    numbers: &[u32],
) -> Result<Option<Vec<NodeRef>>, PerceiveError> {
    let mut params = CallFunctionOnParams::new(IDENTIFY_JS);
    params.object_id = Some(registry.object.clone());
    params.arguments = Some(vec![CallArgument {
        value: Some(serde_json::json!(numbers)),
        unserializable_value: None,
        object_id: None,
    }]);
    params.silent = Some(true);
    params.object_group = Some(OBJECT_GROUP.into());
    params.serialization_options = Some(deep_options());
    let reply = link.execute(params).await;
    super::release_handles(link).await;
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!("frame {frame}: nodes not told: {e}");
            return Ok(None);
        }
    };
    if let Some(e) = &reply.result.exception_details {
        return Err(thrown(e));
    }
    Ok(Some(
        reply
            .result
            .result
            .deep_serialized_value
            .as_ref()
            .and_then(|d| d.value.as_ref())
            .map(node_refs)
            .unwrap_or_default(),
    ))
}

/// A handle, in `context`, to a node (a closed shadow root, an element to
/// read); `what` names it in the error.
async fn node_handle(
    link: &Link,
    context: ExecutionContextId,
    node: i64,
    what: &str,
) -> Result<RemoteObjectId, PerceiveError> {
    let resolved = link
        .execute(
            ResolveNodeParams::builder()
                .backend_node_id(BackendNodeId::new(node))
                .execution_context_id(context)
                .object_group(OBJECT_GROUP)
                .build(),
        )
        .await?;
    resolved
        .result
        .object
        .object_id
        .ok_or_else(|| PerceiveError::Enumerate(format!("{what} has no handle")))
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
fn place_elements(
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

/// Enumerates one frame: its document, then the closed shadow roots found in it.
async fn enumerate_frame(
    place: &FramePlace,
    viewport: &Rect,
    opts: &EnumerateOptions,
) -> Result<FrameResult, PerceiveError> {
    let link = &place.link;
    let context = link
        .frame_execution_context(place.id.clone())
        .await?
        .ok_or_else(|| {
            PerceiveError::Enumerate(format!("frame {} has no script context", place.id.inner()))
        })?;
    let frame = place.id.inner();
    let (mut registry, cached) = registry::take(link, frame, context).await?;
    let first = match enumerate_root(link, &registry, None, opts).await {
        // A registry kept from an earlier perception may be gone with its
        // handle; one made now settles it.
        Err(_) if cached => {
            registry = registry::take(link, frame, context).await?.0;
            enumerate_root(link, &registry, None, opts).await
        }
        other => other,
    };
    let (meta, nodes) = first?;
    if !meta.unread.is_empty() {
        let object = registry.object.clone();
        registry
            .later(sheets::give_unread(
                link.clone(),
                place.id.clone(),
                object,
                meta.unread.clone(),
            ))
            .await;
    }
    let mut result = FrameResult {
        frame_id: frame.clone(),
        url: meta.url.clone(),
        title: meta.title.clone(),
        elements: Vec::new(),
        text_hash: meta.text_hash.clone(),
        text_lines: meta.text_lines.clone(),
        text_chars: meta.text_chars,
        scroll: (meta.sx, meta.sy),
        truncated: meta.truncated,
        listeners_seen: meta.listeners,
        dropped: meta.dropped,
        far_parts: meta.far,
        reused: meta.reused,
        table_kept: meta.kept,
        outer_owner: place.outer_owner,
    };
    place_elements(&meta, &registry, place, viewport, &mut result.elements);
    let mut pending: Vec<(i64, usize)> = closed_roots(&meta, &nodes)
        .into_iter()
        .map(|r| (r, 1))
        .collect();
    while let Some((root, depth)) = pending.pop() {
        let answer = match node_handle(link, context, root, "closed shadow root").await {
            Ok(handle) => enumerate_root(link, &registry, Some(handle), opts).await,
            Err(e) => Err(e),
        };
        match answer {
            Ok((meta, nodes)) => {
                place_elements(&meta, &registry, place, viewport, &mut result.elements);
                if depth < MAX_SHADOW_DEPTH {
                    pending.extend(
                        closed_roots(&meta, &nodes)
                            .into_iter()
                            .map(|r| (r, depth + 1)),
                    );
                }
            }
            // Numbers this call handed out and did not report are sent again
            // when their nodes are next reported (see `Registry::known`).
            Err(e) => tracing::debug!("closed shadow root {root}: {e}"),
        }
    }
    registry::give_back(link, frame, context, registry);
    if link.is_remote() {
        // The page's own group is let go by perception; a frame session's here.
        super::release_handles(link).await;
    }
    Ok(result)
}

fn closed_roots(meta: &Meta, nodes: &[NodeRef]) -> Vec<i64> {
    meta.hosts
        .iter()
        .filter_map(|&i| nodes.get(i).and_then(|n| n.closed_shadow_root))
        .collect()
}

/// Enumerates every frame of the page. Frames that cannot be read (gone while
/// we looked, no context yet) are reported in `notes` and skipped.
pub(crate) async fn enumerate_page(
    page: &Page,
    viewport: Rect,
    opts: &EnumerateOptions,
    notes: &mut Vec<String>,
) -> Result<Vec<FrameResult>, PerceiveError> {
    let main = main_place(page, viewport).await?;
    let mut missed = false;
    // The main frame is looked at while the children's places are found: on
    // a first look the page's main thread is busy, and their owners' boxes
    // wait for it (30-80 ms on reddit.com's two frames).
    let children = async {
        let places = child_places(page, &main, &mut missed).await?;
        let runs = places
            .iter()
            .map(|place| enumerate_frame(place, &viewport, opts));
        let results = futures::future::join_all(runs).await;
        Ok::<_, PerceiveError>(places.into_iter().zip(results).collect::<Vec<_>>())
    };
    let (first, children) = futures::join!(enumerate_frame(&main, &viewport, opts), children);
    let mut out = vec![first?];
    for (place, result) in children? {
        match result {
            Ok(r) => out.push(r),
            Err(e) => notes.push(format!("frame {} skipped: {e}", place.id.inner())),
        }
    }
    if missed {
        notes.extend(frames_out_of_reach(page).await);
    }
    Ok(out)
}

/// Most frame URLs a note names.
const MAX_NAMED_FRAMES: usize = 3;

/// A note on the child frames seamark could not reach, if any: cross-site
/// frames that run in processes of their own, which it could not attach to
/// (see browser/remote.rs).
async fn frames_out_of_reach(page: &Page) -> Option<String> {
    let frames = page.frames().await.ok()?;
    let targets = page.execute(GetTargetsParams::default()).await.ok()?;
    let reached = found_frames(page);
    let mut ours: HashSet<&str> = frames.iter().map(|f| f.inner().as_str()).collect();
    ours.extend(reached.iter().map(|f| f.id.as_str()));
    let iframes: Vec<_> = targets
        .result
        .target_infos
        .iter()
        .filter(|t| t.r#type == "iframe")
        .collect();
    let mut out: Vec<&str> = Vec::new();
    // A frame out of reach may hold more: until no frame is added.
    loop {
        let before = out.len();
        for t in &iframes {
            let id = t.target_id.inner().as_str();
            let parent = t.parent_frame_id.as_ref().map(|p| p.inner().as_str());
            if !ours.contains(id) && parent.is_some_and(|p| ours.contains(p)) {
                ours.insert(id);
                out.push(&t.url);
            }
        }
        if out.len() == before {
            break;
        }
    }
    if out.is_empty() {
        return None;
    }
    // Origins only: a frame's path and query are the page's words, and the
    // note reaches the model.
    let mut named: Vec<String> = out
        .iter()
        .take(MAX_NAMED_FRAMES)
        .map(|u| {
            url::Url::parse(u)
                .map(|u| u.origin().ascii_serialization())
                .unwrap_or_else(|_| "a frame".into())
        })
        .collect();
    if out.len() > MAX_NAMED_FRAMES {
        named.push(format!("{} more", out.len() - MAX_NAMED_FRAMES));
    }
    let what = match out.len() {
        1 => "a frame of another site runs in a process of its own".to_string(),
        n => format!("{n} frames of other sites run in processes of their own"),
    };
    Some(format!(
        "{what}, which seamark could not reach: their elements are not in the table ({})",
        named.join(", ")
    ))
}

/// A child frame's element may be covered by something in a parent frame, which
/// its own frame cannot see: hit-test its click point at the top level.
/// A hit on the element holding the element's frame in the page's own process
/// (`holders`: frame → that element, for frames in processes of their own)
/// reached the frame: what is inside is the frame's own test's.
pub(crate) async fn check_child_frame_covers(
    page: &Page,
    main_frame: &str,
    holders: &[(String, i64)],
    elements: &mut [Element],
) {
    let checks = elements
        .iter()
        .enumerate()
        .filter(|(_, e)| e.frame != main_frame && e.is_interactable())
        .filter_map(|(i, e)| e.click_point.map(|p| (i, p)))
        .collect::<Vec<_>>();
    if checks.is_empty() {
        return;
    }
    let own = Link::Page(page.clone());
    let at = HitTester::new(&own).await;
    let hits =
        futures::future::join_all(checks.iter().map(|(_, p)| at.node_at(&own, p.x, p.y))).await;
    for ((i, _), hit) in checks.into_iter().zip(hits) {
        let Some(hit) = hit else { continue };
        let frame = &elements[i].frame;
        if hit.frame_id == *frame
            || holders
                .iter()
                .any(|(f, holder)| f == frame && *holder == hit.backend_node_id)
        {
            continue;
        }
        let by_node = hit.backend_node_id;
        let by = describe_node(page, by_node).await;
        elements[i].state = ElementState::Occluded {
            by,
            by_node: Some(by_node),
        };
        elements[i].click_point = None;
    }
}

async fn describe_node(page: &Page, backend_node_id: i64) -> String {
    let reply = page
        .execute(
            DescribeNodeParams::builder()
                .backend_node_id(BackendNodeId::new(backend_node_id))
                .build(),
        )
        .await;
    match reply {
        Ok(r) => {
            let node = r.result.node;
            let attrs = node.attributes.unwrap_or_default();
            let attr = |k: &str| {
                attrs
                    .chunks(2)
                    .find(|c| c.first().map(String::as_str) == Some(k))
                    .and_then(|c| c.get(1).cloned())
            };
            let label = attr("aria-label")
                .or_else(|| attr("id"))
                .unwrap_or_default();
            let tag = node.local_name.to_lowercase();
            if label.is_empty() {
                tag
            } else {
                format!("{tag} \"{label}\"")
            }
        }
        Err(_) => "another element".into(),
    }
}

/// A frame of the page as the reader needs it: where its content lies in
/// the top-level viewport.
#[derive(Debug, Clone)]
pub(crate) struct FrameSpot {
    /// CDP frame id.
    pub id: String,
    /// Top-left of the frame's content box in top-level viewport coordinates.
    pub offset: Point,
    /// Whether this is the top-level frame.
    pub is_main: bool,
}

/// Every frame of the page with its place, the main frame first.
pub(crate) async fn frame_spots(
    page: &Page,
    viewport: Rect,
) -> Result<Vec<FrameSpot>, PerceiveError> {
    let main = main_place(page, viewport).await?;
    let children = child_places(page, &main, &mut false).await?;
    Ok(std::iter::once(main)
        .chain(children)
        .map(|p| FrameSpot {
            id: p.id.inner().clone(),
            offset: p.offset,
            is_main: p.is_main,
        })
        .collect())
}

/// Calls `function` with `this` the node registry of a frame's document
/// (made when perception has not met the document yet) and `args`, and
/// returns its value (by value) with the registry's numbers → backendNodeIds
/// known so far (0 where not asked for yet) and which registry it is
/// ([`NodeNumbers::document`]). `target`, a backendNodeId, is resolved in the frame's main
/// world and passed after `args`.
pub(crate) async fn call_on_registry(
    page: &Page,
    frame: &str,
    function: &str,
    args: serde_json::Value,
    target: Option<i64>,
) -> Result<(serde_json::Value, Vec<i64>, u64), PerceiveError> {
    let link = &link_of(page, frame);
    let context = link
        .frame_execution_context(FrameId::new(frame))
        .await?
        .ok_or_else(|| PerceiveError::Enumerate(format!("frame {frame} has no script context")))?;
    let (registry, _) = registry::take(link, frame, context).await?;
    let target = match target {
        Some(node) => Some(node_handle(link, context, node, "the element").await?),
        None => None,
    };
    let mut params = CallFunctionOnParams::new(function);
    params.object_id = Some(registry.object.clone());
    params.arguments = Some(vec![
        CallArgument {
            value: Some(args),
            unserializable_value: None,
            object_id: None,
        },
        CallArgument {
            value: None,
            unserializable_value: None,
            object_id: target,
        },
    ]);
    params.silent = Some(true);
    params.return_by_value = Some(true);
    params.object_group = Some(OBJECT_GROUP.into());
    let reply = link.execute(params).await;
    let (numbers, document) = (registry.numbers(), registry.document);
    registry::give_back(link, frame, context, registry);
    if link.is_remote() {
        // The caller lets go of the page's handles; a frame session's go here.
        super::release_handles(link).await;
    }
    let reply = reply?;
    if let Some(e) = &reply.result.exception_details {
        return Err(thrown(e));
    }
    Ok((
        reply.result.result.value.clone().unwrap_or_default(),
        numbers,
        document,
    ))
}
