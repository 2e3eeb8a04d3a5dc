//! Elements of child frames covered by something in a parent frame, which
//! their own frame cannot see.

use chromiumoxide::cdp::browser_protocol::dom::{BackendNodeId, DescribeNodeParams};
use chromiumoxide::Page;

use crate::browser::{HitTester, Link};

use super::table::{Element, ElementState};

/// A child frame's element may be covered by something in a parent frame, which
/// its own frame cannot see: hit-test its click point at the top level.
/// A hit on the element holding the element's frame in the page's own process
/// (`holders`: frame → that element, for frames in processes of their own)
/// reached the frame: what is inside is the frame's own test's.
pub(super) async fn check_child_frame_covers(
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
