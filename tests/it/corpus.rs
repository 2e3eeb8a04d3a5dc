//! Perception on real saved sites (the corpus: `SEAMARK_CORPUS`): no error, every
//! interactable box inside the viewport, occlusion by layout analysis equal to
//! hit-testing every control, and a sample of boxes really hit by their own
//! element according to the browser's own hit test.

use std::time::{Duration, Instant};

use std::collections::{HashMap, HashSet};

use chromiumoxide::cdp::browser_protocol::dom::{GetDocumentParams, GetNodeForLocationParams};
use chromiumoxide::Page;
use seamark::browser::Link;
use seamark::mark::{self, MarkStyle};
use seamark::perceive::{self, Element, ElementState, NodeNumbers, PerceiveOptions};

use crate::golden::quality;
use crate::support::{walking_every_part, within_screens, Fixture};

/// Interactable elements hit-tested per page.
const SAMPLE: usize = 25;

/// Parent of every node of the page (pierced: frames, shadow roots, pseudo-elements),
/// from the browser's own DOM tree rather than from our enumerator.
async fn parent_map(link: &Link) -> HashMap<i64, i64> {
    let doc = link
        .execute(GetDocumentParams::builder().depth(-1).pierce(true).build())
        .await
        .expect("DOM.getDocument");
    let mut parents = HashMap::new();
    let mut stack = vec![(doc.result.root, 0i64)];
    while let Some((node, parent)) = stack.pop() {
        let id = *node.backend_node_id.inner();
        parents.insert(id, parent);
        let kids = node
            .children
            .into_iter()
            .flatten()
            .chain(node.shadow_roots.into_iter().flatten())
            .chain(node.pseudo_elements.into_iter().flatten())
            .chain(node.content_document.map(|d| *d));
        for kid in kids {
            stack.push((kid, id));
        }
    }
    parents
}

/// Is the node at the element's click point the element itself or inside it (for
/// a control drawn by its label: inside the label)? Asked of the browser's own
/// hit test and DOM tree: in the process of the element's frame, at the point
/// in that process's viewport (a frame of another site has one of its own).
/// `parents` keeps each process's tree, by its link's target.
async fn hit_by_itself(
    page: &Page,
    parents: &mut HashMap<String, HashMap<i64, i64>>,
    e: &Element,
) -> Result<bool, String> {
    let p = e.click_point.ok_or("no click point")?;
    let (link, origin) = perceive::frame_origin(page, &e.frame).await;
    let parents = match parents.entry(link.target_id().to_string()) {
        std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => v.insert(parent_map(&link).await),
    };
    // Default: pointer-events:none is respected, as a real click does.
    let hit = link
        .execute(GetNodeForLocationParams::new(
            (p.x - origin.x).round() as i64,
            (p.y - origin.y).round() as i64,
        ))
        .await
        .map_err(|err| err.to_string())?;
    let mut n = *hit.result.backend_node_id.inner();
    for _ in 0..10_000 {
        if n == e.backend_node_id || Some(n) == e.control_node_id {
            return Ok(true);
        }
        match parents.get(&n) {
            Some(&parent) if parent != 0 => n = parent,
            _ => return Ok(false),
        }
    }
    Ok(false)
}

/// What perception concluded about one element: interactable, occluded or
/// other (by name), and where it would click.
#[derive(Debug, PartialEq)]
struct Verdict {
    state: &'static str,
    click_point: Option<(i64, i64)>,
}

impl Verdict {
    fn of(e: &Element) -> Self {
        let state = match e.state {
            ElementState::Interactable => "interactable",
            ElementState::Occluded { .. } => "occluded",
            ElementState::Offscreen { .. } => "offscreen",
            ElementState::Disabled => "disabled",
        };
        let click_point = e
            .click_point
            .map(|p| (p.x.round() as i64, p.y.round() as i64));
        Self { state, click_point }
    }
}

#[tokio::test]
async fn every_corpus_page_perceives_with_boxes_in_the_viewport_and_hit_by_their_element() {
    let dirs = crate::server::corpus_pages();
    assert!(dirs.len() >= 10, "corpus too small: {dirs:?}");
    let fx = Fixture::open("form.html").await;
    let mut report = Vec::new();
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut far_compared = 0;
    for dir in &dirs {
        let url = fx.server.url(&format!("corpus/{dir}/index.html"));
        let start = Instant::now();
        let nav = fx.session.navigate(&url, Duration::from_secs(15)).await;
        assert!(nav.is_ok(), "{dir}: {nav:?}");
        // Late layout (fonts, lazy images) settles, as `seamark mark --wait-ms` lets it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Entrance animations and transitions (mendable's Reset button slides
        // in for about a second) move click points without touching the DOM:
        // the hit test below must see the page perception saw. Bounded.
        fx.eval(
            "Promise.race([Promise.all(document.getAnimations().filter(a => { \
               const t = a.effect && a.effect.getComputedTiming(); \
               return a.playState === 'running' && t && t.endTime !== Infinity; \
             }).map(a => a.finished.catch(() => {}))), new Promise(r => setTimeout(r, 3000))])",
        )
        .await;
        let mut obs = tokio::time::timeout(
            Duration::from_secs(90),
            perceive::perceive(&fx.session, &PerceiveOptions::default()),
        )
        .await
        .unwrap_or_else(|_| panic!("{dir}: perception did not finish in 90 s"))
        .unwrap_or_else(|e| panic!("{dir}: {e}"));
        // The hit tests below compare nodes: told for this look (the others
        // are compared by node numbers, the same in one document).
        perceive::identify(fx.session.page(), &mut obs.table.elements)
            .await
            .unwrap_or_else(|e| panic!("{dir}: {e}"));
        // A frame perception gave up on (a frame sandboxed without scripts
        // used to cost 30 s and then be dropped).
        for note in obs.notes.iter().filter(|n| n.contains("skipped")) {
            failures.push(format!("{dir}: {note}"));
        }
        let interactable: Vec<&Element> = obs
            .table
            .elements
            .iter()
            .filter(|e| e.is_interactable())
            .collect();
        for e in &interactable {
            let v = e.visible.expect("interactable has a visible box");
            assert!(
                v.x >= -0.5 && v.y >= -0.5 && v.x + v.w <= 1280.5 && v.y + v.h <= 800.5,
                "{dir}: box outside the viewport: {e:?}"
            );
        }
        // Occlusion found by layout analysis must be what hit-testing every
        // control finds.
        let exact = perceive::perceive(
            &fx.session,
            &PerceiveOptions {
                exact_occlusion: true,
                ..PerceiveOptions::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{dir}: {e}"));
        let verdicts = |t: &perceive::ElementTable| -> HashMap<NodeNumbers, Verdict> {
            t.elements
                .iter()
                .map(|e| (e.node, Verdict::of(e)))
                .collect()
        };
        // A page that changed in between (a carousel) is not comparable.
        if exact.signature == obs.signature {
            compared += 1;
            let (fast, slow) = (verdicts(&obs.table), verdicts(&exact.table));
            for (node, v) in &fast {
                if slow.get(node).is_some_and(|s| s != v) {
                    failures.push(format!(
                        "{dir}: node {node:?}: analysis says {v:?}, hit tests say {:?}",
                        slow[node]
                    ));
                }
            }
        }
        // Skipping the far parts of the page changes nothing in view and
        // misses nothing within two screens that walking every part finds.
        let walked = perceive::perceive(&fx.session, &walking_every_part())
            .await
            .unwrap_or_else(|e| panic!("{dir}: {e}"));
        let again = perceive::perceive(&fx.session, &PerceiveOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{dir}: {e}"));
        if again.signature == obs.signature {
            far_compared += 1;
            let in_view = |t: &perceive::ElementTable| -> HashMap<NodeNumbers, (String, Verdict)> {
                t.elements
                    .iter()
                    .filter(|e| !matches!(e.state, ElementState::Offscreen { .. }))
                    .map(|e| (e.node, (e.name.clone(), Verdict::of(e))))
                    .collect()
            };
            // Past the cap, the whole walk looks only for native controls
            // (old reddit): skipping, which stays under it, may find more.
            let (skipping, whole) = (in_view(&obs.table), in_view(&walked.table));
            let capped = walked.notes.iter().any(|n| n.contains("(max_elements)"));
            let agree = if capped {
                whole.iter().all(|(node, v)| skipping.get(node) == Some(v))
            } else {
                skipping == whole
            };
            if !agree {
                failures.push(format!(
                    "{dir}: in view, skipping far parts:\n{}\nwalking every part:\n{}",
                    perceive::element_list(&obs.table, usize::MAX),
                    perceive::element_list(&walked.table, usize::MAX)
                ));
            }
            let found: HashSet<NodeNumbers> = obs.table.elements.iter().map(|e| e.node).collect();
            for e in walked
                .table
                .elements
                .iter()
                .filter(|e| within_screens(e, 2.0))
            {
                if !found.contains(&e.node) {
                    failures.push(format!("{dir}: skipping far parts misses {e:?}"));
                }
            }
        }
        let mut parents = HashMap::new();
        let step = (interactable.len() / SAMPLE).max(1);
        let mut checked = 0;
        for e in interactable.iter().step_by(step).take(SAMPLE) {
            match hit_by_itself(fx.session.page(), &mut parents, e).await {
                Ok(true) => checked += 1,
                Ok(false) => failures.push(format!(
                    "{dir}: [{}] {} {:?} not hit by itself at {:?}",
                    e.id, e.role, e.name, e.click_point
                )),
                Err(err) => failures.push(format!("{dir}: [{}] hit test failed: {err}", e.id)),
            }
        }
        // Label quality on the real screenshot, as the model would get it.
        let shot = mark::decode(&obs.screenshot_png).expect("decode screenshot");
        let marks = mark::marks_for(&obs.table.elements, 1.0, false, shot.width(), shot.height());
        let q = quality(&marks, shot.width(), shot.height(), &MarkStyle::default());
        assert_eq!(q.label_overlaps, 0, "{dir}: {q:?}");
        assert_eq!(q.outside, 0, "{dir}: {q:?}");
        assert!(q.smallest_digit_sent_px >= 11.0, "{dir}: {q:?}");
        assert_eq!(
            q.centers_covered, 0,
            "{dir}: a label covers another box's center: {q:?}"
        );
        assert_eq!(
            q.small_covered, 0,
            "{dir}: a chip covers a small target (a checkbox, an icon, a short link): {q:?}"
        );
        let (median, p90, max) = q.large_cover_summary();
        report.push(format!(
            "{dir}: labels: {} small targets, {} covered by a chip; {} large, covered (median, p90, max) {median:.2}, {p90:.2}, {max:.2}",
            q.small, q.small_covered, q.large_cover.len()
        ));
        report.push(format!(
            "{dir}: {} elements, {} interactable, {checked} hit-tested, perceive {:.0} ms (enumerate {:.0}, screenshot {:.0}), total {:.1} s",
            obs.table.len(),
            interactable.len(),
            obs.timings.total_ms,
            obs.timings.enumerate_ms,
            obs.timings.screenshot_ms,
            start.elapsed().as_secs_f64()
        ));
    }
    println!("{}", report.join("\n"));
    println!(
        "occlusion compared with hit tests on {compared} of {} pages, far parts on {far_compared}",
        dirs.len()
    );
    fx.close().await;
    assert!(
        compared * 4 >= dirs.len() * 3,
        "only {compared} of {} pages held still for the occlusion comparison",
        dirs.len()
    );
    assert!(
        far_compared * 4 >= dirs.len() * 3,
        "only {far_compared} of {} pages held still for the far-parts comparison",
        dirs.len()
    );
    assert!(
        failures.is_empty(),
        "{} hit-test failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
