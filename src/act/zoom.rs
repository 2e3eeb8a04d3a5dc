//! `ZOOM`: which region of the viewport the next step shows closer. The
//! capture is the next look's (the agent's or the MCP desk's), so that the
//! close look and the screenshot beside it show the same moment.

use crate::records::{Outcome, Status};

use super::Executor;
use crate::browser::Viewport;
use crate::commands::{Step, ZoomRegion};
use crate::mark;
use crate::perceive::Rect;
use crate::records::ZoomRequest;

/// The smallest side of a region, in CSS pixels: a close look at less
/// shows no more than the screenshot does.
const MIN_SIDE: f64 = 16.0;

/// `r` grown to at least [`MIN_SIDE`] each way around its centre, and
/// moved inside the viewport; `None` when it shows nothing of the viewport.
fn fitted(r: Rect, viewport: Viewport) -> Option<Rect> {
    let (vw, vh) = (f64::from(viewport.width), f64::from(viewport.height));
    let view = crate::perceive::view_rect(viewport);
    Rect {
        w: r.w.max(1.0),
        h: r.h.max(1.0),
        ..r
    }
    .intersect(&view)?;
    let fit = |start: f64, len: f64, limit: f64| {
        let wanted = len.max(MIN_SIDE).min(limit);
        let start = (start + len / 2.0 - wanted / 2.0).clamp(0.0, limit - wanted);
        (start, wanted)
    };
    let (x, w) = fit(r.x, r.w, vw);
    let (y, h) = fit(r.y, r.h, vh);
    Some(Rect { x, y, w, h })
}

impl Executor {
    /// `ZOOM`: the region it names, checked, for the next look to capture.
    pub(super) fn zoom(
        &self,
        viewport: Viewport,
        step: &Step,
        region: &ZoomRegion,
    ) -> (Outcome, Option<ZoomRequest>) {
        let asked = match region {
            ZoomRegion::Element(id) => self
                .listed(*id, step)
                .map(|e| e.visible.unwrap_or(e.bbox))
                .map_err(|e| e.to_string()),
            ZoomRegion::Area(a, b) => super::points::to_css(*a, viewport)
                .and_then(|p| {
                    let q = super::points::to_css(*b, viewport)?;
                    Ok(Rect {
                        x: p.x.min(q.x),
                        y: p.y.min(q.y),
                        w: (p.x - q.x).abs(),
                        h: (p.y - q.y).abs(),
                    })
                })
                .map_err(|e| e.to_string()),
        };
        let region = match asked.map(|r| fitted(r, viewport)) {
            Ok(Some(r)) => r,
            Ok(None) => {
                return (
                    Outcome::new(step, Status::Failed, "that region is outside the viewport"),
                    None,
                )
            }
            Err(why) => return (Outcome::new(step, Status::Failed, why), None),
        };
        let message = format!(
            "the next step shows CSS {:.0},{:.0} {:.0}×{:.0} closer, {}",
            region.x,
            region.y,
            region.w,
            region.h,
            magnification_words(region, viewport)
        );
        (
            Outcome::new(step, Status::Done, message),
            Some(ZoomRequest { region }),
        )
    }
}

/// How much larger a close look at `region` shows it than the screenshot
/// the model was sent: "magnified 3.2×".
pub fn magnification_words(region: Rect, viewport: Viewport) -> String {
    format!("magnified {:.1}×", magnification(region, viewport))
}

/// Image pixels per CSS pixel of the close look, over the sent
/// screenshot's.
fn magnification(region: Rect, viewport: Viewport) -> f64 {
    let look = mark::close_look_scale(region.w, region.h, mark::DEFAULT_LONG_EDGE);
    let (dw, dh) = viewport.device_size();
    let (sw, _) = mark::sent_size(dw, dh, mark::DEFAULT_LONG_EDGE);
    look / (f64::from(sw) / f64::from(viewport.width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_is_kept_in_the_viewport_and_never_thinner_than_sixteen_pixels() {
        let vp = Viewport::default();
        let r = fitted(
            Rect {
                x: 100.0,
                y: 100.0,
                w: 4.0,
                h: 40.0,
            },
            vp,
        )
        .unwrap();
        assert_eq!((r.x, r.y, r.w, r.h), (94.0, 100.0, 16.0, 40.0));
        let edge = fitted(
            Rect {
                x: 1270.0,
                y: -20.0,
                w: 50.0,
                h: 50.0,
            },
            vp,
        )
        .unwrap();
        assert_eq!((edge.x, edge.y, edge.w, edge.h), (1230.0, 0.0, 50.0, 50.0));
        let m = magnification(
            Rect {
                x: 0.0,
                y: 0.0,
                w: 392.0,
                h: 100.0,
            },
            vp,
        );
        assert!((m - 4.0).abs() < 1e-9, "{m}");
    }
}
