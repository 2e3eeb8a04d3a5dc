//! From a table entry to a point a real click reaches: scroll the node into
//! view, read its boxes again (they move when the page scrolls), and hit-test
//! candidate points until one lands on the element. A click at a covered point
//! "succeeds" and clicks the cover (docs/notes.md), so a covered element is
//! reported with what covers it instead.

use chromiumoxide::cdp::browser_protocol::dom::{
    BackendNodeId, DescribeNodeParams, GetContentQuadsParams, ResolveNodeParams,
    ScrollIntoViewIfNeededParams,
};
use chromiumoxide::cdp::browser_protocol::page::FrameId;
use chromiumoxide::cdp::js_protocol::runtime::{
    CallArgument, CallFunctionOnParams, EvaluateParams, RemoteObjectId,
};
use chromiumoxide::Page;
use serde_json::Value;

use crate::browser::{found_frames, link_of, HitTester, Link};
use crate::perceive::{frame_origin, Element, Point, Rect};

/// Where a click on the element would go.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Reach {
    /// This point reaches the element.
    At(Point),
    /// Every candidate point lands on something else.
    Covered {
        /// What is on top, e.g. `dialog "Cookie consent"`.
        by: String,
    },
    /// The element has no box on screen (collapsed, hidden, zero size).
    NoBox,
    /// The node is no longer in the document.
    Gone,
}

/// Calls `function` on the node with `this` bound to it, in its frame's main
/// world, and returns the value. `None` when the node is gone or the call threw.
pub(super) async fn call_on_node(
    link: &Link,
    backend_node_id: i64,
    function: &str,
    args: Vec<Value>,
) -> Option<Value> {
    let object = resolve(link, backend_node_id).await?;
    let mut params = CallFunctionOnParams::new(function);
    params.object_id = Some(object);
    params.return_by_value = Some(true);
    params.await_promise = Some(true);
    params.arguments = Some(args.into_iter().map(value_arg).collect());
    let reply = link.execute(params).await.ok()?;
    if reply.result.exception_details.is_some() {
        return None;
    }
    Some(reply.result.result.value.clone().unwrap_or(Value::Null))
}

/// Calls `function` on an element of the table (see [`call_on_node`]), in
/// its own frame.
pub(super) async fn call_on_element(
    page: &Page,
    e: &Element,
    function: &str,
    args: Vec<Value>,
) -> Option<Value> {
    call_on_node(&link_of(page, &e.frame), e.backend_node_id, function, args).await
}

/// Calls `function` on the node and returns the node it returns, as a
/// backendNodeId (an option of a custom dropdown, found in the page).
pub(super) async fn node_from_call(
    link: &Link,
    backend_node_id: i64,
    function: &str,
    args: Vec<Value>,
) -> Option<i64> {
    let object = resolve(link, backend_node_id).await?;
    let mut params = CallFunctionOnParams::new(function);
    params.object_id = Some(object);
    params.arguments = Some(args.into_iter().map(value_arg).collect());
    let reply = link.execute(params).await.ok()?;
    backend_id_of(link, reply.result.result.object_id.clone()?).await
}

/// The focused element of a frame's document, through shadow roots, when
/// the keyboard focus is in that document itself (not in a frame inside it).
const FOCUSED_JS: &str = "(() => { let a = document.activeElement; \
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; \
    if (!document.hasFocus() || !a || a.tagName === 'IFRAME' || a.tagName === 'FRAME') return null; \
    return a; })()";

/// The element with the keyboard focus, and its frame: in whichever frame of
/// the page holds the focus, one of another site's process included (an
/// Enter there submits that frame's form). When no document says it has
/// the focus (a tab in the background), the main frame's active element.
pub(super) async fn focused_node(page: &Page) -> Option<(String, i64)> {
    let main = page.mainframe().await.ok()??.inner().clone();
    let own = Link::Page(page.clone());
    let mut frames: Vec<(String, Link)> = page
        .frames()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|f| (f.inner().clone(), own.clone()))
        .collect();
    frames.extend(found_frames(page).into_iter().map(|f| (f.id, f.link)));
    for (frame, link) in &frames {
        if let Some(node) = active_in(link, frame, FOCUSED_JS).await {
            return Some((frame.clone(), node));
        }
    }
    let anyway = "(() => { let a = document.activeElement || document.body; \
        while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; \
        return a; })()";
    let node = active_in(&own, &main, anyway).await?;
    Some((main, node))
}

/// The node `expression` returns in frame `frame`'s main world.
async fn active_in(link: &Link, frame: &str, expression: &str) -> Option<i64> {
    let context = link
        .frame_execution_context(FrameId::new(frame))
        .await
        .ok()??;
    let mut params = EvaluateParams::new(expression);
    params.context_id = Some(context);
    params.return_by_value = Some(false);
    let reply = link.execute(params).await.ok()?;
    backend_id_of(link, reply.result.result.object_id.clone()?).await
}

/// The backendNodeId of the node a handle points at.
async fn backend_id_of(link: &Link, object: RemoteObjectId) -> Option<i64> {
    let node = link
        .execute(DescribeNodeParams::builder().object_id(object).build())
        .await
        .ok()?;
    Some(*node.result.node.backend_node_id.inner())
}

fn value_arg(v: Value) -> CallArgument {
    CallArgument {
        value: Some(v),
        ..CallArgument::default()
    }
}

/// A handle on the node in its frame's main world.
async fn resolve(link: &Link, backend_node_id: i64) -> Option<RemoteObjectId> {
    link.execute(
        ResolveNodeParams::builder()
            .backend_node_id(BackendNodeId::new(backend_node_id))
            .build(),
    )
    .await
    .ok()?
    .result
    .object
    .object_id
}

/// Whether `hit` is the node itself or inside it (through shadow roots), or the
/// label of a control that is the node: a click there reaches the node.
const CONTAINS_JS: &str = r#"function(hit) {
  for (let n = hit; n; n = n.parentNode || n.host) if (n === this) return true;
  if (this.labels) for (const l of this.labels) for (let n = hit; n; n = n.parentNode || n.host) if (n === l) return true;
  return false;
}"#;

/// Names what covers a point: the dialog, fixed or sticky layer it belongs to,
/// as the element list names covers (`dialog "Cookie consent"`).
const COVER_JS: &str = r#"function() {
  const txt = s => (s || '').replace(/\s+/g, ' ').trim().slice(0, 60);
  const start = this.nodeType === 1 ? this : this.parentElement;
  let layer = null;
  for (let e = start; e; e = e.parentElement || (e.getRootNode && e.getRootNode().host) || null) {
    const role = e.getAttribute('role');
    if (e.tagName === 'DIALOG' || role === 'dialog' || role === 'alertdialog' || e.getAttribute('aria-modal') === 'true') { layer = e; break; }
    const pos = getComputedStyle(e).position;
    if (!layer && (pos === 'fixed' || pos === 'sticky')) layer = e;
  }
  const e = layer || start;
  if (!e) return 'another element';
  const tag = e.tagName.toLowerCase();
  const role = e.getAttribute('role') || (tag === 'dialog' ? 'dialog' : tag === 'header' ? 'header'
    : tag === 'nav' ? 'navigation' : layer ? 'overlay' : tag);
  let name = e.getAttribute('aria-label') || '';
  const by = e.getAttribute('aria-labelledby');
  if (!name && by) name = by.split(/\s+/).map(id => { const l = document.getElementById(id); return l ? l.textContent : ''; }).join(' ');
  if (!name) name = e.innerText || e.textContent;
  name = txt(name);
  return name ? `${role} "${name}"` : role;
}"#;

/// Brings the node to the middle of its scroll areas and of the viewport: out
/// from under a sticky header or a fixed bar, where a person scrolls a little.
/// Returns whether anything moved.
const CENTER_JS: &str = r#"function() {
  const at = () => { const r = this.getBoundingClientRect(); return r.x + ',' + r.y; };
  const before = at();
  this.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  return at() !== before;
}"#;

/// Scrolls the node into view if needed and finds a point that reaches it.
/// When every point lands on a cover, the node is brought to the middle of
/// the viewport and tried once more: a sticky header or a fixed bar covers the
/// edges of the viewport, not its middle, while a modal covers both.
///
/// A node of a frame in a process of its own is reached over that process's
/// session, in its viewport (which lies at the frame's place in the page's):
/// the points found are the page's, where input goes.
pub(super) async fn reach(page: &Page, backend_node_id: i64, frame: &str, view: Rect) -> Reach {
    let node = BackendNodeId::new(backend_node_id);
    let link = crate::browser::link_of(page, frame);
    if link
        .execute(
            ScrollIntoViewIfNeededParams::builder()
                .backend_node_id(node)
                .build(),
        )
        .await
        .is_err()
    {
        return Reach::Gone;
    }
    let cover = match try_points(page, backend_node_id, frame, view).await {
        Ok(reach) => return reach,
        Err(cover) => cover,
    };
    let moved = call_on_node(&link, backend_node_id, CENTER_JS, Vec::new()).await;
    let cover = if moved == Some(Value::Bool(true)) {
        match try_points(page, backend_node_id, frame, view).await {
            Ok(reach) => return reach,
            Err(cover) => cover,
        }
    } else {
        cover
    };
    let by = match cover {
        Some(node) => call_on_node(&link, node, COVER_JS, Vec::new())
            .await
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "another element".into()),
        None => "another element".into(),
    };
    Reach::Covered { by }
}

/// Reads the node's boxes where the page is scrolled now and hit-tests their
/// candidate points. `Err` holds the first node found on top instead, when no
/// point reaches the node.
async fn try_points(
    page: &Page,
    backend_node_id: i64,
    frame: &str,
    view: Rect,
) -> Result<Reach, Option<i64>> {
    // Where the frame's process's viewport lies now (after any scroll).
    let (link, origin) = frame_origin(page, frame).await;
    let quads = match link
        .execute(
            GetContentQuadsParams::builder()
                .backend_node_id(BackendNodeId::new(backend_node_id))
                .build(),
        )
        .await
    {
        Ok(r) => r.result.quads.clone(),
        Err(_) => return Ok(Reach::Gone),
    };
    let boxes: Vec<Rect> = quads
        .iter()
        .filter_map(|q| bounds(q.inner()))
        .map(|r| r.offset(origin.x, origin.y))
        .filter_map(|r| r.intersect(&view))
        .filter(|r| r.w >= 1.0 && r.h >= 1.0)
        .collect();
    if boxes.is_empty() {
        return Ok(Reach::NoBox);
    }
    // Read after any scroll: the hit test needs the page's offset of now.
    let at = HitTester::new(&link).await;
    let mut cover = None;
    for b in &boxes {
        for p in candidates(b) {
            // Hit-test and click the same whole-pixel point.
            let p = Point {
                x: p.x.floor(),
                y: p.y.floor(),
            };
            let Some(hit) = at.node_at(&link, p.x - origin.x, p.y - origin.y).await else {
                continue;
            };
            let hit_node = hit.backend_node_id;
            if hit_node == backend_node_id
                || (hit.frame_id == frame && contains(&link, backend_node_id, hit_node).await)
            {
                return Ok(Reach::At(p));
            }
            if cover.is_none() {
                cover = Some(hit_node);
            }
        }
    }
    Err(cover)
}

/// Whether the node `hit` lies inside the node `target` (same frame).
async fn contains(link: &Link, target: i64, hit: i64) -> bool {
    let (Some(hit_id), Some(target_id)) = (resolve(link, hit).await, resolve(link, target).await)
    else {
        return false;
    };
    let mut params = CallFunctionOnParams::new(CONTAINS_JS);
    params.object_id = Some(target_id);
    params.return_by_value = Some(true);
    params.arguments = Some(vec![CallArgument {
        object_id: Some(hit_id),
        ..CallArgument::default()
    }]);
    matches!(
        link.execute(params)
            .await
            .map(|r| r.result.result.value.clone()),
        Ok(Some(Value::Bool(true)))
    )
}

/// The bounding rectangle of a quad (four x,y corners), if it has an area.
fn bounds(quad: &[f64]) -> Option<Rect> {
    Rect::around_quad(quad).filter(|r| r.w > 0.0 && r.h > 0.0)
}

/// Points to try in a box: the center first, then a ring around it, so a
/// partly covered element is still reached where it shows.
fn candidates(b: &Rect) -> Vec<Point> {
    const SPOTS: [(f64, f64); 9] = [
        (0.5, 0.5),
        (0.25, 0.5),
        (0.75, 0.5),
        (0.5, 0.25),
        (0.5, 0.75),
        (0.15, 0.15),
        (0.85, 0.15),
        (0.15, 0.85),
        (0.85, 0.85),
    ];
    SPOTS
        .iter()
        .map(|(fx, fy)| Point {
            x: b.x + b.w * fx,
            y: b.y + b.h * fy,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quad_bounds_and_degenerate_quads() {
        let r = bounds(&[10.0, 20.0, 110.0, 20.0, 110.0, 60.0, 10.0, 60.0]).unwrap();
        assert_eq!((r.x, r.y, r.w, r.h), (10.0, 20.0, 100.0, 40.0));
        assert!(bounds(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).is_none());
        assert!(bounds(&[1.0, 2.0]).is_none());
    }

    #[test]
    fn candidates_start_at_the_center_and_stay_inside() {
        let b = Rect {
            x: 0.0,
            y: 0.0,
            w: 100.0,
            h: 20.0,
        };
        let c = candidates(&b);
        assert_eq!(c[0], Point { x: 50.0, y: 10.0 });
        assert!(c.iter().all(|p| b.contains(*p)));
    }
}
