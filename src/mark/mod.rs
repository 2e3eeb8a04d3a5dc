//! Mark rendering: a pure function `(screenshot, marks, style) → image` that
//! draws numbered boxes, and the encoders that prepare the image for the model.
//!
//! Deterministic to the pixel: a large layout is cut into two halves that are
//! placed and drawn on their own, and whether one thread or two does it, the
//! pixels depend only on the marks.

mod close_look;
mod encode;
mod glyphs;
mod layout;
mod palette;
mod sample;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use image::{ImageBuffer, Rgb, RgbImage};
use imageproc::drawing::draw_line_segment_mut;

use crate::perceive::{Element, ElementState};

pub use close_look::{close_look_scale, mark_close_look, MAX_MAGNIFICATION};
pub use encode::{
    data_url, downscale, encode, for_model, sent_size, shrink, EncodeError, Encoding,
    DEFAULT_LONG_EDGE,
};
pub use glyphs::{DigitAtlas, FONT_BYTES};
pub use layout::{
    is_small_target, Colored, Cost, IRect, Label, Layout, MarkBox, MarkKind, SplitPart, SPLIT_MIN,
};
pub use palette::{contrast, text_color, PALETTE};
pub use sample::crowded_marks;

/// Errors of rendering.
#[derive(Debug, thiserror::Error)]
pub enum MarkError {
    /// The screenshot could not be decoded.
    #[error("cannot decode the screenshot: {0}")]
    Decode(image::ImageError),
    /// The image has no pixels.
    #[error("the screenshot is empty ({0}x{1})")]
    Empty(u32, u32),
}

// Written out, not `#[from]`: the message says the cause, so it is not the source too.
impl From<image::ImageError> for MarkError {
    fn from(e: image::ImageError) -> Self {
        MarkError::Decode(e)
    }
}

/// How marks are drawn.
#[derive(Debug, Clone)]
pub struct MarkStyle {
    /// Also draw offscreen, occluded and disabled elements (dashed), for people
    /// reading traces. The model's image marks interactable elements only.
    pub debug: bool,
    /// Long edge of the image actually sent to the model; labels are sized so
    /// that they stay `min_text_px` tall after that downscale.
    pub send_long_edge: Option<u32>,
    /// Smallest digit height, in pixels of the image as sent.
    pub min_text_px: f32,
    /// Lay out and draw the two halves of a split layout (from [`SPLIT_MIN`]
    /// marks) on two threads; the output is identical either way.
    pub parallel: bool,
}

impl Default for MarkStyle {
    fn default() -> Self {
        Self {
            debug: false,
            send_long_edge: Some(encode::DEFAULT_LONG_EDGE),
            min_text_px: 11.0,
            parallel: true,
        }
    }
}

impl MarkStyle {
    /// Digit height in pixels of an image of this size, so that the digits are
    /// at least `min_text_px` tall once the image is downscaled for sending.
    pub fn digit_height(&self, width: u32, height: u32) -> f32 {
        let long = width.max(height).max(1) as f32;
        let shrink = match self.send_long_edge {
            Some(edge) if (edge as f32) < long && edge > 0 => long / edge as f32,
            _ => 1.0,
        };
        (self.min_text_px.max(4.0) * shrink).ceil()
    }
}

/// Turns table elements into marks in image pixels (`scale` image px per CSS px)
/// on a `width`×`height` image: the visible part of each interactable element,
/// and in debug style the others that show on the image at all.
pub fn marks_for(
    elements: &[Element],
    scale: f64,
    debug: bool,
    width: u32,
    height: u32,
) -> Vec<MarkBox> {
    let image = IRect {
        x: 0,
        y: 0,
        w: width as i32,
        h: height as i32,
    };
    elements
        .iter()
        .filter_map(|e| {
            let kind = match e.state {
                ElementState::Interactable => MarkKind::Interactable,
                ElementState::Offscreen { .. } => MarkKind::Offscreen,
                ElementState::Occluded { .. } => MarkKind::Occluded,
                ElementState::Disabled => MarkKind::Disabled,
            };
            if kind != MarkKind::Interactable && !debug {
                return None;
            }
            let r = e.visible.unwrap_or(e.bbox);
            to_irect(r.x * scale, r.y * scale, r.w * scale, r.h * scale)
                .filter(|rect| rect.overlap(&image) > 0)
                .map(|rect| MarkBox {
                    id: e.id,
                    rect,
                    kind,
                })
        })
        .collect()
}

/// The color secrets are painted over with.
pub const HIDDEN: Rgb<u8> = Rgb([48, 48, 48]);

/// Draws an observation's marks on its screenshot: what `seamark mark` writes
/// and what the agent sends (before any downscale). The `hide` boxes (CSS
/// pixels: password fields, fields holding a secret) are painted over first,
/// so their content shows in no image. The screenshot is taken in device
/// pixels, so at a device scale of 2 the boxes are drawn twice as large.
pub fn mark_observation(
    obs: &crate::perceive::Observation,
    style: &MarkStyle,
    hide: &[crate::perceive::Rect],
) -> Result<RgbImage, MarkError> {
    let mut shot = decode(&obs.screenshot_png)?;
    // The screenshot is in device pixels: `scale` of them per CSS pixel.
    let scale = obs.viewport.scale.get();
    paint_over(&mut shot, hide, scale);
    let marks = marks_for(
        &obs.table.elements,
        scale,
        style.debug,
        shot.width(),
        shot.height(),
    );
    Ok(render(shot, &marks, style))
}

/// Paints the `hide` boxes (CSS pixels, `scale` image pixels each) over
/// with [`HIDDEN`].
pub fn paint_over(shot: &mut RgbImage, hide: &[crate::perceive::Rect], scale: f64) {
    let (w, h) = shot.dimensions();
    for r in hide {
        let x0 = (r.x * scale).floor().clamp(0.0, f64::from(w)) as u32;
        let y0 = (r.y * scale).floor().clamp(0.0, f64::from(h)) as u32;
        let x1 = ((r.x + r.w) * scale).ceil().clamp(0.0, f64::from(w)) as u32;
        let y1 = ((r.y + r.h) * scale).ceil().clamp(0.0, f64::from(h)) as u32;
        for y in y0..y1 {
            for x in x0..x1 {
                shot.put_pixel(x, y, HIDDEN);
            }
        }
    }
}

/// A float box to an integer one; `None` for NaN, infinite or empty boxes.
pub fn to_irect(x: f64, y: f64, w: f64, h: f64) -> Option<IRect> {
    const LIMIT: f64 = 1e6;
    if ![x, y, w, h].iter().all(|v| v.is_finite()) || w <= 0.0 || h <= 0.0 {
        return None;
    }
    let x0 = x.clamp(-LIMIT, LIMIT).floor() as i32;
    let y0 = y.clamp(-LIMIT, LIMIT).floor() as i32;
    let x1 = (x + w).clamp(-LIMIT, LIMIT).ceil() as i32;
    let y1 = (y + h).clamp(-LIMIT, LIMIT).ceil() as i32;
    (x1 > x0 && y1 > y0).then_some(IRect {
        x: x0,
        y: y0,
        w: x1 - x0,
        h: y1 - y0,
    })
}

/// What placing and drawing need, computed once per image.
struct Plan {
    /// The marks, clipped to the image, and where their labels may go.
    layout: Layout,
    metrics: Metrics,
}

/// The digits at one size: rasterized, and inked on every chip color.
struct Face {
    atlas: DigitAtlas,
    /// See [`inked_glyphs`].
    glyphs: Vec<Vec<u8>>,
}

/// Faces kept for reuse. One size serves a whole run (every step's screenshot
/// has the viewport's size); a few more cover tests and traces.
const KEPT_FACES: usize = 4;

impl Face {
    /// The face for digits `digit` pixels tall, made on first use. It depends
    /// on the size alone, and making it (about 0.2 ms) would otherwise sit on
    /// every render's critical path, before either half can draw.
    fn of_height(digit: f32) -> Arc<Face> {
        static FACES: Mutex<Vec<(u32, Arc<Face>)>> = Mutex::new(Vec::new());
        let key = digit.to_bits();
        let mut faces = FACES.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, face)) = faces.iter().find(|(k, _)| *k == key) {
            return Arc::clone(face);
        }
        let atlas = DigitAtlas::new(digit);
        let face = Arc::new(Face {
            glyphs: inked_glyphs(&atlas),
            atlas,
        });
        if faces.len() >= KEPT_FACES {
            faces.remove(0);
        }
        faces.push((key, Arc::clone(&face)));
        face
    }
}

/// What depends on the image's size alone: cheap, as the face is kept.
struct Metrics {
    face: Arc<Face>,
    /// Chip padding around the digits.
    pad: i32,
    /// Box outline thickness.
    thickness: i32,
}

impl Metrics {
    fn new(width: u32, height: u32, style: &MarkStyle) -> Metrics {
        let digit = style.digit_height(width, height);
        Metrics {
            face: Face::of_height(digit),
            pad: (digit / 4.0).ceil().max(2.0) as i32,
            thickness: (digit / 6.0).round().max(2.0) as i32,
        }
    }

    fn chip_height(&self) -> i32 {
        self.face.atlas.height as i32 + 2 * self.pad
    }
}

impl Plan {
    fn new(marks: &[MarkBox], width: u32, height: u32, metrics: Metrics) -> Plan {
        let (atlas, pad, chip_h) = (&metrics.face.atlas, metrics.pad, metrics.chip_height());
        let layout = Layout::new(marks, width, height, |id| {
            (atlas.text_width(id) as i32 + 2 * pad, chip_h)
        });
        Plan { layout, metrics }
    }
}

/// Lays out labels for `marks` on a `width`×`height` image (for tests and traces).
pub fn plan_labels(marks: &[MarkBox], width: u32, height: u32, style: &MarkStyle) -> Vec<Label> {
    Plan::new(marks, width, height, Metrics::new(width, height, style))
        .layout
        .all_labels(style.parallel)
}

/// Draws the marks onto the screenshot, in place (the caller owns a decoded
/// image it has no other use for: no copy of a few megabytes per step).
///
/// A split layout (see [`Layout::new`]) keeps each half's labels and leader
/// lines inside that half, and each half colors its own marks (see
/// [`Layout::colored`]), so a half is laid out with nothing from the other:
/// with `style.parallel`, by a thread of its own. Each thread then draws its
/// half's strips, and takes the last strips of the other half while that
/// one's thread is still drawing. A strip is drawn once, by either, with
/// everything crossing it, so the pixels are those of drawing everything in
/// one pass.
pub fn render(mut screenshot: RgbImage, marks: &[MarkBox], style: &MarkStyle) -> RgbImage {
    let (width, height) = screenshot.dimensions();
    if width == 0 || height == 0 || marks.is_empty() {
        return screenshot;
    }
    let plan = Plan::new(marks, width, height, Metrics::new(width, height, style));
    let buf: &mut [u8] = &mut screenshot;
    match plan.layout.split() {
        Some(line) => {
            let (top, bottom) = buf.split_at_mut(line as usize * width as usize * 3);
            let top = PartDrawing::new(SplitPart::Top, top, 0, width);
            let bottom = PartDrawing::new(SplitPart::Bottom, bottom, line, width);
            if style.parallel {
                // The calling thread takes the bottom half at once, and a
                // scoped thread the top: it starts sooner than rayon jobs
                // given from outside the pool, which wake one pool thread to
                // start and then a second to steal (at 1920×1080, 1.42×
                // faster than one thread with `rayon::join`, 1.65× so). The
                // caller most likely wrote the screenshot last, bottom rows
                // last: they are still in its core's cache.
                std::thread::scope(|s| {
                    let spawned = std::thread::Builder::new()
                        .spawn_scoped(s, || top.draw(&plan, Some(&bottom)));
                    bottom.draw(&plan, Some(&top));
                    if spawned.is_err() {
                        // No thread to be had: the caller draws the top too.
                        top.draw(&plan, Some(&bottom));
                    }
                });
            } else {
                top.draw(&plan, Some(&bottom));
                bottom.draw(&plan, Some(&top));
            }
        }
        None => PartDrawing::new(SplitPart::All, buf, 0, width).draw(&plan, None),
    }
    screenshot
}

/// Some rows of the image ([`STRIP_ROWS`] or fewer), with the first one's
/// image row.
type Strip<'a> = (i32, &'a mut [u8]);

/// A part of the image (see [`SplitPart`](crate::mark::layout::SplitPart)) and its strips still to draw.
struct PartDrawing<'a, 'p> {
    part: SplitPart,
    width: u32,
    /// The strips not drawn yet: the part's own thread takes them from the
    /// front, the other part's thread from the back.
    strips: Mutex<VecDeque<Strip<'a>>>,
    /// The part's colors and labels, once its thread has placed them.
    labels: OnceLock<(Colored<'p>, Vec<(usize, Label)>)>,
}

impl<'a, 'p> PartDrawing<'a, 'p> {
    /// The part of the image in `rows`, whose first row is image row `y0`.
    fn new(part: SplitPart, rows: &'a mut [u8], y0: i32, width: u32) -> Self {
        let strips = rows
            .chunks_mut(STRIP_ROWS * width as usize * 3)
            .enumerate()
            .map(|(k, strip)| (y0 + (k * STRIP_ROWS) as i32, strip))
            .collect();
        PartDrawing {
            part,
            width,
            strips: Mutex::new(strips),
            labels: OnceLock::new(),
        }
    }

    /// Places this part's labels and draws its strips; then, if there is an
    /// other part and its labels are placed already, draws what is left of
    /// its strips from the far end.
    fn draw(&self, plan: &'p Plan, other: Option<&PartDrawing>) {
        let colored = plan.layout.colored(self.part);
        let labels = colored.labels();
        let placed = self.labels.get_or_init(|| (colored, labels));
        self.draw_strips(plan, placed, VecDeque::pop_front);
        let Some(other) = other else {
            return;
        };
        if let Some(placed) = other.labels.get() {
            other.draw_strips(plan, placed, VecDeque::pop_back);
        }
    }

    fn draw_strips(
        &self,
        plan: &Plan,
        (colored, labels): &(Colored, Vec<(usize, Label)>),
        take: fn(&mut VecDeque<Strip<'a>>) -> Option<Strip<'a>>,
    ) {
        loop {
            let next = take(&mut self.strips.lock().unwrap_or_else(PoisonError::into_inner));
            let Some((y0, rows)) = next else {
                return;
            };
            let height = (rows.len() / (self.width as usize * 3)) as u32;
            if let Some(mut strip) = Band::from_raw(self.width, height, rows) {
                draw_strip(&mut strip, y0, plan, colored.colors(), labels);
            }
        }
    }
}

/// Decodes a PNG or JPEG screenshot to RGB.
pub fn decode(screenshot: &[u8]) -> Result<RgbImage, MarkError> {
    let img = image::load_from_memory(screenshot)?.to_rgb8();
    if img.width() == 0 || img.height() == 0 {
        return Err(MarkError::Empty(img.width(), img.height()));
    }
    Ok(img)
}

type Band<'a> = ImageBuffer<Rgb<u8>, &'a mut [u8]>;

/// Fills a rectangle given in image coordinates, clipped to the band.
fn fill(band: &mut Band, y0: i32, r: IRect, color: [u8; 3]) {
    let (width, rows) = (band.width() as i32, band.height() as i32);
    let (x0, x1) = (r.x.clamp(0, width), r.right().clamp(0, width));
    let (top, bottom) = ((r.y - y0).clamp(0, rows), (r.bottom() - y0).clamp(0, rows));
    if x0 >= x1 || top >= bottom {
        return;
    }
    let stride = width as usize * 3;
    let buf: &mut [u8] = band;
    let (first, rest) = buf[top as usize * stride..].split_at_mut(stride);
    let span = x0 as usize * 3..x1 as usize * 3;
    for px in first[span.clone()].chunks_exact_mut(3) {
        px.copy_from_slice(&color);
    }
    // Every other row is a copy of the first.
    for row in rest
        .chunks_exact_mut(stride)
        .take((bottom - top - 1) as usize)
    {
        row[span.clone()].copy_from_slice(&first[span.clone()]);
    }
}

/// A box outline of the given thickness, inside the box; dashed when asked.
fn outline(band: &mut Band, y0: i32, r: IRect, t: i32, color: [u8; 3], dashed: bool) {
    let t = t.min(r.w).min(r.h).max(1);
    let edges = [
        IRect { h: t, ..r },
        IRect {
            y: r.bottom() - t,
            h: t,
            ..r
        },
        IRect { w: t, ..r },
        IRect {
            x: r.right() - t,
            w: t,
            ..r
        },
    ];
    for e in edges {
        if !dashed {
            fill(band, y0, e, color);
            continue;
        }
        // Dashes along the edge's long side: 4t on, 4t off.
        let dash = 4 * t;
        let horizontal = e.w >= e.h;
        let (start, end) = if horizontal {
            (e.x, e.right())
        } else {
            (e.y, e.bottom())
        };
        for p in (start..end).step_by((2 * dash) as usize) {
            let len = dash.min(end - p);
            let piece = if horizontal {
                IRect { x: p, w: len, ..e }
            } else {
                IRect { y: p, h: len, ..e }
            };
            fill(band, y0, piece, color);
        }
    }
}

/// Rows drawn together. Everything crossing a strip is drawn before the next
/// one, so the strip stays in cache: an outline touches every row of its box,
/// and drawn box by box, a 2560×1600 image (12 MB) went back to memory for
/// nearly every row of every box.
const STRIP_ROWS: usize = 64;

/// Draws everything crossing a strip of the image whose first row is image
/// row `y0`, in the order of one pass over the whole image (outlines,
/// leaders, chips), so the pixels are the same.
fn draw_strip(
    strip: &mut Band,
    y0: i32,
    plan: &Plan,
    colors: &[Option<usize>],
    labels: &[(usize, Label)],
) {
    let y1 = y0 + strip.height() as i32;
    let crosses = |r: &IRect| r.bottom() > y0 && r.y < y1;
    // Every mark crossing the part's rows has a color (see `Colored::colors`).
    for (m, color) in plan.layout.marks().iter().zip(colors) {
        if let (Some(color), true) = (*color, crosses(&m.rect)) {
            outline(
                strip,
                y0,
                m.rect,
                plan.metrics.thickness,
                PALETTE[color],
                m.kind != MarkKind::Interactable,
            );
        }
    }
    for (_, l) in labels {
        if let Some(((ax, ay), (bx, by))) = l.leader {
            if ay.max(by) >= y0 && ay.min(by) < y1 {
                draw_line_segment_mut(
                    strip,
                    (ax as f32, (ay - y0) as f32),
                    (bx as f32, (by - y0) as f32),
                    Rgb(PALETTE[l.color]),
                );
            }
        }
    }
    for (_, l) in labels {
        if crosses(&l.rect) {
            draw_chip(strip, y0, l, plan);
        }
    }
}

fn draw_chip(band: &mut Band, y0: i32, l: &Label, plan: &Plan) {
    fill(band, y0, l.rect, PALETTE[l.color]);
    let (width, rows) = (band.width() as i32, band.height() as i32);
    let stride = width as usize * 3;
    let (advance, height) = (
        plan.metrics.face.atlas.advance as i32,
        plan.metrics.face.atlas.height as i32,
    );
    // The glyph rows that fall inside this band.
    let top = l.rect.y + plan.metrics.pad;
    let (gy0, gy1) = ((y0 - top).max(0), (y0 + rows - top).min(height));
    let buf: &mut [u8] = band;
    let mut x = l.rect.x + plan.metrics.pad;
    for d in glyphs::digits(l.id) {
        let glyph = &plan.metrics.face.glyphs[l.color * 10 + usize::from(d.min(9))];
        // The glyph columns that fall inside the image.
        let (gx0, gx1) = ((-x).max(0), (width - x).min(advance));
        if gx0 < gx1 {
            let span = gx0 as usize * 3..gx1 as usize * 3;
            for gy in gy0..gy1 {
                let source = &glyph[gy as usize * advance as usize * 3..][span.clone()];
                let at = (top + gy - y0) as usize * stride + (x + gx0) as usize * 3;
                buf[at..at + source.len()].copy_from_slice(source);
            }
        }
        x += advance;
    }
}

/// Every digit drawn on every chip color, `advance`×`height` RGB each, indexed
/// by `color * 10 + digit`: a chip's digits always sit on its own fill, so
/// blending them once per color gives the same pixels as blending per chip.
fn inked_glyphs(atlas: &DigitAtlas) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(PALETTE.len() * 10);
    for chip in PALETTE {
        let ink = text_color(chip);
        // The blend of ink over chip for each coverage value, once per color.
        let mut blend = [[0u8; 3]; 256];
        for (a, px) in blend.iter_mut().enumerate() {
            let a = a as u32;
            for ((v, fg), bg) in px.iter_mut().zip(ink).zip(chip) {
                *v = ((u32::from(fg) * a + u32::from(bg) * (255 - a) + 127) / 255) as u8;
            }
        }
        for d in 0..10u8 {
            let mut glyph = Vec::with_capacity((atlas.advance * atlas.height * 3) as usize);
            for y in 0..atlas.height {
                for &a in atlas.row(d, y) {
                    glyph.extend_from_slice(&blend[usize::from(a)]);
                }
            }
            out.push(glyph);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(id: u32, x: i32, y: i32, w: i32, h: i32) -> MarkBox {
        MarkBox {
            id,
            rect: IRect { x, y, w, h },
            kind: MarkKind::Interactable,
        }
    }

    fn plain(w: u32, h: u32) -> RgbImage {
        RgbImage::from_pixel(w, h, Rgb([255, 255, 255]))
    }

    #[test]
    fn strips_taken_by_the_other_half_come_out_the_same() {
        let (w, h) = (640, 400);
        let marks = crowded_marks(SPLIT_MIN as u32 + 100, w, h, 5);
        let style = MarkStyle {
            parallel: false,
            ..MarkStyle::default()
        };
        let expected = render(plain(w, h), &marks, &style);
        let plan = Plan::new(&marks, w, h, Metrics::new(w, h, &style));
        let line = plan.layout.split().expect("a split layout");
        let mut img = plain(w, h);
        let buf: &mut [u8] = &mut img;
        let (top, bottom) = buf.split_at_mut(line as usize * w as usize * 3);
        let top = PartDrawing::new(SplitPart::Top, top, 0, w);
        let bottom = PartDrawing::new(SplitPart::Bottom, bottom, line, w);
        // The top's labels are placed, but its thread draws nothing: the
        // bottom's thread takes every top strip, last first.
        let colored = plan.layout.colored(SplitPart::Top);
        let labels = colored.labels();
        assert!(top.labels.set((colored, labels)).is_ok());
        bottom.draw(&plan, Some(&top));
        assert!(top.strips.lock().unwrap().is_empty());
        drop((top, bottom));
        assert!(img == expected);
    }

    #[test]
    fn an_empty_table_leaves_the_screenshot_as_it_was() {
        let img = plain(64, 48);
        assert!(render(img.clone(), &[], &MarkStyle::default()) == img);
    }

    #[test]
    fn boxes_outside_the_image_draw_nothing_and_do_not_panic() {
        let img = plain(200, 100);
        let far = [
            mark(1, -5000, -5000, 10, 10),
            mark(2, 900_000, 10, 50, 50),
            mark(3, -1_000_000, -1_000_000, 2_000_000, 2_000_000),
        ];
        let out = render(img.clone(), &far[..2], &MarkStyle::default());
        assert!(out == img, "marks entirely off the image must not draw");
        // A giant box covering everything is clipped, drawn, and labelled on the image.
        let labels = plan_labels(&far[2..], 200, 100, &MarkStyle::default());
        assert!(labels[0].rect.inside(200, 100));
        let _ = render(img, &far[2..], &MarkStyle::default());
    }

    #[test]
    fn nan_infinite_negative_and_empty_sizes_are_skipped() {
        for (x, y, w, h) in [
            (f64::NAN, 0.0, 10.0, 10.0),
            (0.0, 0.0, f64::INFINITY, 10.0),
            (0.0, 0.0, -5.0, 10.0),
            (0.0, 0.0, 10.0, 0.0),
        ] {
            assert_eq!(to_irect(x, y, w, h), None, "{x} {y} {w} {h}");
        }
        assert_eq!(
            to_irect(1.5, 2.5, 3.0, 3.0),
            Some(IRect {
                x: 1,
                y: 2,
                w: 4,
                h: 4
            })
        );
    }

    #[test]
    fn ids_over_9999_get_wider_chips_with_every_digit() {
        let style = MarkStyle::default();
        let labels = plan_labels(&[mark(123_456, 100, 100, 40, 20)], 400, 300, &style);
        let atlas = DigitAtlas::new(style.digit_height(400, 300));
        assert!(labels[0].rect.w as u32 >= 6 * atlas.advance);
        let out = render(plain(400, 300), &[mark(123_456, 100, 100, 40, 20)], &style);
        assert!(out != plain(400, 300));
    }

    #[test]
    fn many_marks_on_an_image_shorter_than_two_chips_keep_every_label_inside() {
        // Too short to cut in halves that each hold a chip: laid out whole.
        let (w, h) = (1280, 30);
        let marks = crowded_marks(SPLIT_MIN as u32 + 50, w, h, 5);
        let labels = plan_labels(&marks, w, h, &MarkStyle::default());
        assert_eq!(labels.len(), marks.len());
        for l in &labels {
            assert!(l.rect.inside(w, h), "{l:?}");
        }
    }

    #[test]
    fn a_one_pixel_screenshot_still_renders() {
        let out = render(plain(1, 1), &[mark(7, 0, 0, 1, 1)], &MarkStyle::default());
        assert_eq!(out.dimensions(), (1, 1));
    }

    #[test]
    fn a_huge_screenshot_gets_labels_that_survive_the_downscale() {
        let style = MarkStyle::default();
        // 10000 px long edge sent at 1568: digits must be drawn ≥ 11 × 10000/1568.
        let digit = style.digit_height(10_000, 10_000);
        assert!(digit * 1568.0 / 10_000.0 >= 11.0, "{digit}");
        let img = RgbImage::new(10_000, 10_000);
        let out = render(img, &[mark(1, 5000, 5000, 300, 100)], &style);
        assert_eq!(out.dimensions(), (10_000, 10_000));
    }

    #[test]
    fn an_undecodable_screenshot_is_an_error() {
        assert!(matches!(decode(b"not an image"), Err(MarkError::Decode(_))));
    }

    #[test]
    fn neighbors_get_different_colors() {
        let marks: Vec<MarkBox> = (0..12)
            .map(|i| mark(i + 1, 10 + 30 * i as i32, 50, 28, 20))
            .collect();
        let labels = plan_labels(&marks, 500, 200, &MarkStyle::default());
        for pair in labels.windows(2) {
            assert_ne!(pair[0].color, pair[1].color, "{pair:?}");
        }
    }
}
