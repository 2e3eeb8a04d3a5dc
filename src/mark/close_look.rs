//! A close look (`ZOOM`): a region of the viewport captured again at a
//! larger scale, with the marks that fall inside it drawn at that scale.

use image::RgbImage;

use super::{decode, marks_for, paint_over, render, MarkError, MarkStyle};
use crate::perceive::{Element, Rect};

/// The most a close look enlarges: past it a region is too small to show
/// more than a blur of pixels would.
pub const MAX_MAGNIFICATION: f64 = 8.0;

/// Image pixels per CSS pixel of a close look at a `w`×`h` region whose
/// long edge is to fill `long_edge` pixels, at most [`MAX_MAGNIFICATION`].
pub fn close_look_scale(w: f64, h: f64, long_edge: u32) -> f64 {
    (f64::from(long_edge) / w.max(h).max(1.0)).min(MAX_MAGNIFICATION)
}

/// Draws on a close look (`png`: `region` of the viewport captured at
/// `px_per_css` image pixels per CSS pixel) the marks of the elements that
/// show in it, with their ids, as the screenshot has them; the `hide`
/// boxes (CSS pixels of the viewport) are painted over first.
pub fn mark_close_look(
    png: &[u8],
    elements: &[Element],
    region: Rect,
    px_per_css: f64,
    hide: &[Rect],
    style: &MarkStyle,
) -> Result<RgbImage, MarkError> {
    let mut shot = decode(png)?;
    let shift = |r: Rect| r.offset(-region.x, -region.y);
    let hide: Vec<Rect> = hide.iter().map(|r| shift(*r)).collect();
    paint_over(&mut shot, &hide, px_per_css);
    let inside: Vec<Element> = elements
        .iter()
        .filter(|e| e.visible.unwrap_or(e.bbox).intersect(&region).is_some())
        .map(|e| {
            let mut e = e.clone();
            e.bbox = shift(e.bbox);
            e.visible = e.visible.map(shift);
            e
        })
        .collect();
    let marks = marks_for(
        &inside,
        px_per_css,
        style.debug,
        shot.width(),
        shot.height(),
    );
    Ok(render(shot, &marks, style))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_region_is_enlarged_at_most_eight_times_and_a_large_one_fills_the_edge() {
        assert_eq!(close_look_scale(80.0, 50.0, 1568), 8.0);
        assert_eq!(close_look_scale(392.0, 100.0, 1568), 4.0);
        assert_eq!(close_look_scale(0.0, 0.0, 1568), 8.0);
    }
}
