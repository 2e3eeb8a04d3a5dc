//! What is at a point of the viewport. `DOM.getNodeForLocation` takes its point
//! in the main document's coordinates (Chromium converts it to the frame's by
//! taking the page's scroll off), while element boxes, click points and input
//! events are in the viewport's. Every hit test goes through here, so none
//! forgets the scroll: a point taken as it was missed by the scroll offset, and
//! every click below the first screen was refused as "covered by another
//! element" (issue 20).

use chromiumoxide::cdp::browser_protocol::dom::GetNodeForLocationParams;
use chromiumoxide::cdp::browser_protocol::page::GetLayoutMetricsParams;

use super::Link;

/// The node at a point, and the frame it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The node hit (the deepest one, through frames).
    pub backend_node_id: i64,
    /// Its frame.
    pub frame_id: String,
}

/// Hit tests at viewport points, for one scroll position of the page: make a
/// new one after anything may have scrolled it.
#[derive(Debug, Clone, Copy)]
pub struct HitTester {
    /// Where the viewport's top-left corner is in the document (CSS pixels).
    scroll: (f64, f64),
}

impl HitTester {
    /// Reads the page's scroll offset (one round trip), or that of the
    /// process of a frame of another site (its `link`: then points are in
    /// its viewport). A page that cannot say is taken as not scrolled.
    pub async fn new(link: &Link) -> HitTester {
        let scroll = match link.execute(GetLayoutMetricsParams::default()).await {
            Ok(m) => {
                let v = &m.result.css_visual_viewport;
                (v.page_x, v.page_y)
            }
            Err(_) => (0.0, 0.0),
        };
        HitTester { scroll }
    }

    /// The document point `getNodeForLocation` wants for a viewport point,
    /// in whole pixels (the same pixel the click goes to).
    fn document_point(&self, x: f64, y: f64) -> (i64, i64) {
        (
            (x.floor() + self.scroll.0).round() as i64,
            (y.floor() + self.scroll.1).round() as i64,
        )
    }

    /// The node at viewport point (x, y), or `None` where there is none
    /// (outside the page) or the browser would not say. `pointer-events:
    /// none` is respected, as a real click does.
    pub async fn node_at(&self, link: &Link, x: f64, y: f64) -> Option<Hit> {
        let (dx, dy) = self.document_point(x, y);
        let hit = link
            .execute(GetNodeForLocationParams::new(dx, dy))
            .await
            .ok()?;
        Some(Hit {
            backend_node_id: *hit.result.backend_node_id.inner(),
            frame_id: hit.result.frame_id.inner().clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_viewport_point_moves_by_the_scroll_into_the_document() {
        let at = HitTester {
            scroll: (0.0, 950.0),
        };
        assert_eq!(at.document_point(46.7, 700.2), (46, 1650));
        let unscrolled = HitTester { scroll: (0.0, 0.0) };
        assert_eq!(unscrolled.document_point(10.0, 20.0), (10, 20));
        let fractional = HitTester {
            scroll: (12.5, 0.0),
        };
        assert_eq!(fractional.document_point(10.0, 0.0), (23, 0));
    }
}
