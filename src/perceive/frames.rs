//! Running the enumerator in every frame (and in closed shadow roots) of the
//! page, and calling on a frame's node registry.

use std::collections::HashSet;

use chromiumoxide::cdp::browser_protocol::dom::{BackendNodeId, ResolveNodeParams};
use chromiumoxide::cdp::browser_protocol::page::FrameId;
use chromiumoxide::cdp::browser_protocol::target::GetTargetsParams;
use chromiumoxide::cdp::js_protocol::runtime::{
    CallArgument, CallFunctionOnParams, ExecutionContextId, RemoteObjectId,
};
use chromiumoxide::Page;

use crate::browser::{found_frames, link_of, Link};

use super::places::{child_places, main_place, FramePlace};
use super::raw::{answer, deep_options, node_refs, place_elements, thrown, Meta, NodeRef};
use super::registry::{self, Registry};
use super::sheets;
use super::table::{Element, Rect};
use super::PerceiveError;

/// Object group for the handles the enumerator returns, released after each perception.
pub(crate) const OBJECT_GROUP: &str = "seamark-perceive";

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
