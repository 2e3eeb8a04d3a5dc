//! Where each frame of the page lies in the top-level viewport: the page's
//! own frames, and frames of other sites in processes of their own.

use chromiumoxide::cdp::browser_protocol::dom::{GetBoxModelParams, GetFrameOwnerParams};
use chromiumoxide::cdp::browser_protocol::page::FrameId;
use chromiumoxide::Page;

use crate::browser::{found_frames, remote_frame, remote_frames, Link};

use super::table::{Point, Rect};
use super::PerceiveError;

/// How many processes deep frames inside frames of other sites are followed.
const MAX_PROCESS_DEPTH: usize = 16;

/// A frame of the tree with where its content lies in the top-level viewport.
#[derive(Debug, Clone)]
pub(super) struct FramePlace {
    pub(super) id: FrameId,
    /// Top-left of the frame's content box in top-level viewport coordinates.
    pub(super) offset: Point,
    /// The part of the top-level viewport through which this frame can be seen.
    pub(super) clip: Option<Rect>,
    pub(super) is_main: bool,
    /// Where the frame's commands go.
    pub(super) link: Link,
    /// Where the viewport of the frame's process (its link) lies in the
    /// top-level viewport: boxes its session reports are in that viewport's
    /// coordinates. The top-left corner for the page's own frames.
    pub(super) origin: Point,
    /// For a frame in a process of its own (or in one that is), the element
    /// in the page's own process that holds it: a top-level hit test inside
    /// the frame lands there.
    pub(super) outer_owner: Option<i64>,
}

/// The main frame's place: the whole viewport, on the page's own link. It
/// needs no round trip to the page (chromiumoxide keeps the frame tree from
/// page events), so the main frame's look starts at once.
pub(super) async fn main_place(page: &Page, viewport: Rect) -> Result<FramePlace, PerceiveError> {
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
pub(super) async fn child_places(
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
    let content = Rect::around_quad(model.result.model.content.inner())?;
    Some((
        *owner.result.backend_node_id.inner(),
        content.offset(origin.x, origin.y),
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
