//! Points of the image the model was sent (`CLICK:@412,230`), for what no
//! mark covers: mapped to the viewport's CSS pixels through the shrink the
//! image had, refused outside the image.

use crate::browser::Viewport;
use crate::commands::ImagePoint;
use crate::mark;
use crate::perceive::{Element, ElementState, Point};

/// A point outside the image the model was sent; told to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{at} is outside the image you were sent ({width}×{height}, from @0,0 to @{},{}): nothing \
     was done",
    .width.saturating_sub(1),
    .height.saturating_sub(1)
)]
pub struct OutsideImage {
    /// The point written.
    pub at: ImagePoint,
    /// The sent image's width.
    pub width: u32,
    /// Its height.
    pub height: u32,
}

/// The CSS point of the viewport that pixel `at` of the sent image shows
/// (its centre), or why there is none. The image is the screenshot in
/// device pixels (`viewport.scale` per CSS pixel), shrunk to the long edge
/// models take.
pub fn to_css(at: ImagePoint, viewport: Viewport) -> Result<Point, OutsideImage> {
    let (dw, dh) = viewport.device_size();
    let (sw, sh) = mark::sent_size(dw, dh, mark::DEFAULT_LONG_EDGE);
    if at.x >= sw || at.y >= sh {
        return Err(OutsideImage {
            at,
            width: sw,
            height: sh,
        });
    }
    let (w, h) = (f64::from(viewport.width), f64::from(viewport.height));
    let (fx, fy) = (w / f64::from(sw), h / f64::from(sh));
    Ok(Point {
        x: ((f64::from(at.x) + 0.5) * fx).min(w - 0.5),
        y: ((f64::from(at.y) + 0.5) * fy).min(h - 0.5),
    })
}

/// The pixel of the sent image that shows CSS point `p` of the viewport:
/// what [`to_css`] maps back to `p` (to a pixel).
pub fn to_image(p: Point, viewport: Viewport) -> ImagePoint {
    let (dw, dh) = viewport.device_size();
    let (sw, sh) = mark::sent_size(dw, dh, mark::DEFAULT_LONG_EDGE);
    let (fx, fy) = (
        f64::from(sw) / f64::from(viewport.width),
        f64::from(sh) / f64::from(viewport.height),
    );
    let pixel = |v: f64, f: f64, size: u32| (v * f).floor().clamp(0.0, f64::from(size)) as u32;
    ImagePoint {
        x: pixel(p.x, fx, sw),
        y: pixel(p.y, fy, sh),
    }
}

/// The element of the table a CSS point falls on, if any: the smallest
/// one shown there. A click at a point is guarded as a click on it (a
/// point on a "Delete" button waits for a person as its id would).
pub fn element_at(elements: &[Element], p: Point) -> Option<&Element> {
    elements
        .iter()
        .filter(|e| !matches!(e.state, ElementState::Offscreen { .. }))
        .filter_map(|e| {
            let r = e.visible.unwrap_or(e.bbox);
            let inside = p.x >= r.x && p.x < r.x + r.w && p.y >= r.y && p.y < r.y + r.h;
            inside.then_some((e, r.w * r.h))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(e, _)| e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_of_a_shrunk_image_lands_where_it_shows() {
        let big = Viewport {
            width: 1920,
            height: 1080,
            ..Viewport::default()
        };
        // 1920×1080 is sent at 1568×882: a pixel is 1.224 CSS px.
        let p = to_css(ImagePoint { x: 784, y: 441 }, big).unwrap();
        assert!(
            (p.x - 960.6).abs() < 0.5 && (p.y - 540.6).abs() < 0.5,
            "{p:?}"
        );
        let why = to_css(ImagePoint { x: 1568, y: 10 }, big)
            .unwrap_err()
            .to_string();
        assert!(
            why.contains("outside the image you were sent (1568×882"),
            "{why}"
        );
        let small = Viewport {
            width: 1280,
            height: 800,
            ..Viewport::default()
        };
        let p = to_css(ImagePoint { x: 412, y: 230 }, small).unwrap();
        assert_eq!((p.x, p.y), (412.5, 230.5));
        // And back, at any shrink.
        for vp in [small, big] {
            for at in [ImagePoint { x: 0, y: 0 }, ImagePoint { x: 777, y: 333 }] {
                assert_eq!(to_image(to_css(at, vp).unwrap(), vp), at, "{vp}");
            }
        }
    }

    #[test]
    fn a_point_at_device_scale_two_lands_where_it_shows() {
        // 1280×800 at scale 2 is a 2560×1600 screenshot, sent at 1568×980:
        // a pixel of the image is 0.816 CSS px.
        let dense = Viewport {
            scale: "2".parse().unwrap(),
            ..Viewport::default()
        };
        let p = to_css(ImagePoint { x: 784, y: 490 }, dense).unwrap();
        assert!(
            (p.x - 640.4).abs() < 0.5 && (p.y - 400.4).abs() < 0.5,
            "{p:?}"
        );
        let why = to_css(ImagePoint { x: 10, y: 980 }, dense)
            .unwrap_err()
            .to_string();
        assert!(why.contains("(1568×980"), "{why}");
    }
}
