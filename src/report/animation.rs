//! The run as an animated GIF: one frame per step, the marked screenshot
//! downscaled to [`FRAME_WIDTH`] with the step's commands captioned under it
//! in the bundled font, about a second a frame.
//!
//! Colors come from one fixed palette (a color cube, a gray ramp and the
//! marks' own colors) through a lookup table, not from a quantizer per frame:
//! it is an order of magnitude faster, every frame shares it, text stays
//! crisp (no dithering), and the marks keep their exact colors. A frame
//! after the first holds only the box that changed, with the unchanged pixels
//! in it transparent, which is what keeps a long run small.

use std::sync::OnceLock;

use ab_glyph::{FontRef, PxScale};
use image::{Rgb, RgbImage};
use rayon::prelude::*;

use crate::mark::{self, FONT_BYTES, PALETTE};

/// Width of a frame, in pixels.
pub const FRAME_WIDTH: u32 = 800;
/// How long a frame shows, in hundredths of a second.
pub const FRAME_DELAY_CS: u16 = 100;
/// How long the last frame shows: the run's end stays readable before the loop.
pub const LAST_FRAME_DELAY_CS: u16 = 300;
/// Caption lines under a frame: the step line and up to this many commands
/// less one (the last line says how many more there were).
pub const CAPTION_LINES: usize = 4;

const CAPTION_PX: f32 = 15.0;
const LINE_HEIGHT: u32 = 20;
const MARGIN: u32 = 8;
/// The palette index left free for "unchanged since the last frame".
const TRANSPARENT: u8 = 255;

/// Errors of the animation.
#[derive(Debug, thiserror::Error)]
pub enum AnimationError {
    /// There was no frame to encode.
    #[error("no step has a screenshot to animate")]
    NoFrames,
    /// The GIF encoder failed.
    #[error("cannot encode the animation: {0}")]
    Encode(gif::EncodingError),
}

// Written out, not `#[from]`: the message says the cause, so it is not the source too.
impl From<gif::EncodingError> for AnimationError {
    fn from(e: gif::EncodingError) -> Self {
        AnimationError::Encode(e)
    }
}

/// How a caption line is colored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// The step line, and commands that ran.
    Plain,
    /// A command that ran without a visible effect.
    Muted,
    /// A command that failed, was held or refused, or an error.
    Bad,
    /// The run's success.
    Good,
}

/// One line of a caption.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptionLine {
    /// The text (cut to the frame's width when drawn).
    pub text: String,
    /// Its color.
    pub tone: Tone,
}

impl CaptionLine {
    /// A line of text in a tone.
    pub fn new(text: impl Into<String>, tone: Tone) -> Self {
        Self {
            text: text.into(),
            tone,
        }
    }
}

/// A frame ready to encode: palette indices, row by row.
#[derive(Debug, Clone)]
pub struct IndexedFrame {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

/// Makes one frame: the screenshot downscaled to [`FRAME_WIDTH`] (never
/// enlarged), a caption strip of [`CAPTION_LINES`] lines under it, mapped to
/// the palette. Every frame of a run with one viewport has the same size.
pub fn frame(shot: &RgbImage, caption: &[CaptionLine]) -> IndexedFrame {
    let scaled;
    let shot = if shot.width() > FRAME_WIDTH {
        let h = (u64::from(shot.height()) * u64::from(FRAME_WIDTH) / u64::from(shot.width())).max(1)
            as u32;
        scaled = mark::shrink(shot, FRAME_WIDTH, h);
        &scaled
    } else {
        shot
    };
    let strip = MARGIN * 2 + LINE_HEIGHT * CAPTION_LINES as u32;
    let (w, h) = (FRAME_WIDTH, shot.height() + strip);
    let mut canvas = RgbImage::from_pixel(w, h, CAPTION_BG);
    image::imageops::replace(&mut canvas, shot, 0, 0);
    draw_caption(&mut canvas, shot.height(), caption);
    let lut = lut();
    let pixels = canvas
        .as_raw()
        .chunks_exact(3)
        .map(|p| lut[lut_key(p[0], p[1], p[2])])
        .collect();
    IndexedFrame {
        width: w,
        height: h,
        pixels,
    }
}

/// Encodes frames as a looping GIF, each shown [`FRAME_DELAY_CS`] (the last
/// [`LAST_FRAME_DELAY_CS`]). Frames are compressed in parallel.
pub fn encode(frames: &[IndexedFrame]) -> Result<Vec<u8>, AnimationError> {
    let first = frames.first().ok_or(AnimationError::NoFrames)?;
    // The canvas holds the largest frame; a smaller one sits at the top left.
    let width = frames.iter().map(|f| f.width).max().unwrap_or(first.width);
    let height = frames
        .iter()
        .map(|f| f.height)
        .max()
        .unwrap_or(first.height);
    let dims = |v: u32| u16::try_from(v).unwrap_or(u16::MAX);
    let last = frames.len() - 1;
    let mut encoded: Vec<gif::Frame<'static>> = (0..frames.len())
        .into_par_iter()
        .map(|i| {
            let previous = i.checked_sub(1).map(|p| &frames[p]);
            let mut f = delta(previous, &frames[i], dims);
            f.delay = if i == last {
                LAST_FRAME_DELAY_CS
            } else {
                FRAME_DELAY_CS
            };
            f.make_lzw_pre_encoded();
            f
        })
        .collect();
    let mut out = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut out, dims(width), dims(height), &palette_bytes())?;
        encoder.set_repeat(gif::Repeat::Infinite)?;
        for f in &mut encoded {
            encoder.write_lzw_pre_encoded_frame(f)?;
        }
        encoder.into_inner()?;
    }
    Ok(out)
}

/// The part of `frame` that differs from `previous` (same size), with the
/// unchanged pixels in it transparent; the whole frame when there is no
/// previous one of its size.
fn delta(
    previous: Option<&IndexedFrame>,
    frame: &IndexedFrame,
    dims: impl Fn(u32) -> u16,
) -> gif::Frame<'static> {
    let whole = || {
        gif::Frame::from_indexed_pixels(
            dims(frame.width),
            dims(frame.height),
            frame.pixels.clone(),
            None,
        )
    };
    let Some(prev) = previous.filter(|p| p.width == frame.width && p.height == frame.height) else {
        return whole();
    };
    let w = frame.width as usize;
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for (y, (a, b)) in prev
        .pixels
        .chunks_exact(w)
        .zip(frame.pixels.chunks_exact(w))
        .enumerate()
    {
        if a == b {
            continue;
        }
        let first = a.iter().zip(b).position(|(p, q)| p != q).unwrap_or(0);
        let last = a.iter().zip(b).rposition(|(p, q)| p != q).unwrap_or(first);
        x0 = x0.min(first);
        x1 = x1.max(last);
        y0 = y0.min(y);
        y1 = y;
    }
    if x0 == usize::MAX {
        // Nothing changed: one transparent pixel keeps the frame's time.
        let mut f = gif::Frame::from_indexed_pixels(1, 1, vec![TRANSPARENT], Some(TRANSPARENT));
        f.dispose = gif::DisposalMethod::Keep;
        return f;
    }
    let (bw, bh) = (x1 - x0 + 1, y1 - y0 + 1);
    let mut pixels = Vec::with_capacity(bw * bh);
    for y in y0..=y1 {
        let row = y * w;
        for x in x0..=x1 {
            let (a, b) = (prev.pixels[row + x], frame.pixels[row + x]);
            pixels.push(if a == b { TRANSPARENT } else { b });
        }
    }
    let mut f = gif::Frame::from_indexed_pixels(
        dims(bw as u32),
        dims(bh as u32),
        pixels,
        Some(TRANSPARENT),
    );
    f.left = dims(x0 as u32);
    f.top = dims(y0 as u32);
    f.dispose = gif::DisposalMethod::Keep;
    f
}

const CAPTION_BG: Rgb<u8> = Rgb([255, 255, 255]);
const CAPTION_RULE: Rgb<u8> = Rgb([204, 204, 204]);

fn tone_color(tone: Tone) -> Rgb<u8> {
    match tone {
        Tone::Plain => Rgb([0, 0, 0]),
        Tone::Muted => Rgb([102, 102, 102]),
        Tone::Bad => Rgb([204, 0, 0]),
        Tone::Good => Rgb([0, 102, 0]),
    }
}

fn draw_caption(canvas: &mut RgbImage, top: u32, caption: &[CaptionLine]) {
    for x in 0..canvas.width() {
        canvas.put_pixel(x, top, CAPTION_RULE);
    }
    let Ok(font) = FontRef::try_from_slice(FONT_BYTES) else {
        return;
    };
    // DejaVu Sans Mono advances 0.602 em: the characters that fit a line.
    let fits = ((FRAME_WIDTH - 2 * MARGIN) as f32 / (CAPTION_PX * 0.602)) as usize;
    let mut lines: Vec<CaptionLine> = caption.iter().take(CAPTION_LINES).cloned().collect();
    if caption.len() > CAPTION_LINES {
        let more = caption.len() - (CAPTION_LINES - 1);
        lines[CAPTION_LINES - 1] = CaptionLine::new(format!("… and {more} more"), Tone::Muted);
    }
    for (i, line) in lines.iter().enumerate() {
        let text = cut(&line.text, fits);
        let y = top + MARGIN + LINE_HEIGHT * i as u32;
        imageproc::drawing::draw_text_mut(
            canvas,
            tone_color(line.tone),
            MARGIN as i32,
            y as i32,
            PxScale::from(CAPTION_PX),
            &font,
            &text,
        );
    }
}

/// The text cut to `n` characters, with an ellipsis when it was longer.
fn cut(text: &str, n: usize) -> String {
    let one_line = text.replace(['\n', '\r', '\t'], " ");
    if one_line.chars().count() <= n {
        return one_line;
    }
    let mut s: String = one_line.chars().take(n.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The palette: a 6×6×6 color cube, 24 more grays, the marks' colors; index
/// 255 is left for transparency.
fn palette() -> &'static [[u8; 3]] {
    static PALETTE_RGB: OnceLock<Vec<[u8; 3]>> = OnceLock::new();
    PALETTE_RGB.get_or_init(|| {
        let mut p = Vec::with_capacity(256);
        for r in 0..6u8 {
            for g in 0..6u8 {
                for b in 0..6u8 {
                    p.push([r * 51, g * 51, b * 51]);
                }
            }
        }
        for i in 1..=25u16 {
            let v = (i * 255 / 26) as u8;
            if !v.is_multiple_of(51) {
                p.push([v, v, v]);
            }
        }
        for c in PALETTE.iter().copied().chain([mark::HIDDEN.0]) {
            if !p.contains(&c) {
                p.push(c);
            }
        }
        p.truncate(usize::from(TRANSPARENT));
        p
    })
}

fn palette_bytes() -> Vec<u8> {
    let mut bytes: Vec<u8> = palette().iter().flatten().copied().collect();
    bytes.resize(256 * 3, 0);
    bytes
}

fn lut_key(r: u8, g: u8, b: u8) -> usize {
    (usize::from(r >> 3) << 10) | (usize::from(g >> 3) << 5) | usize::from(b >> 3)
}

/// Nearest palette color of every 5-bit-per-channel color, built once.
fn lut() -> &'static [u8] {
    static LUT: OnceLock<Vec<u8>> = OnceLock::new();
    LUT.get_or_init(build_lut)
}

/// The table, built on the calling thread alone. Never with rayon: frames
/// are encoded on rayon's threads and each waits here for the table, so a
/// build that needed those threads waited for threads that waited for it
/// (two reports written at once in a batch hung the process for good).
fn build_lut() -> Vec<u8> {
    let palette = palette();
    (0..1usize << 15)
        .map(|key| {
            let center = |v: usize| ((v & 31) * 8 + 4) as i32;
            let (r, g, b) = (center(key >> 10), center(key >> 5), center(key));
            let mut best = (i32::MAX, 0u8);
            for (i, c) in palette.iter().enumerate() {
                let (dr, dg, db) = (
                    r - i32::from(c[0]),
                    g - i32::from(c[1]),
                    b - i32::from(c[2]),
                );
                // Weighted as the eye weighs them (green most).
                let d = 3 * dr * dr + 4 * dg * dg + 2 * db * db;
                if d < best.0 {
                    best = (d, i as u8);
                }
            }
            best.1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 43's batch hang: two runs that ended together wrote their
    /// reports at once; one built the color table with rayon inside the
    /// table's once-lock while rayon's threads, encoding the other's
    /// frames, waited on that lock. The table is now built with every rayon
    /// thread busy: a build that needed them could never end.
    #[test]
    fn two_reports_at_once_do_not_deadlock_on_the_color_table() {
        let threads = rayon::current_num_threads();
        let (started_tx, started) = std::sync::mpsc::channel();
        let (release_tx, release) = std::sync::mpsc::channel::<()>();
        let release = std::sync::Arc::new(std::sync::Mutex::new(release));
        for _ in 0..threads {
            let (started_tx, release) = (started_tx.clone(), release.clone());
            rayon::spawn(move || {
                let _ = started_tx.send(());
                let _ = release.lock().map(|r| r.recv());
            });
        }
        for _ in 0..threads {
            started
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("rayon's threads start");
        }
        let (built_tx, built) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = built_tx.send(build_lut());
        });
        let table = built.recv_timeout(std::time::Duration::from_secs(60));
        for _ in 0..threads {
            let _ = release_tx.send(());
        }
        let table = table.expect("the color table is built while rayon's threads are busy");
        assert_eq!(table.len(), 1 << 15);
        assert_eq!(table, lut());
    }

    fn page(color: [u8; 3]) -> RgbImage {
        RgbImage::from_pixel(1280, 800, Rgb(color))
    }

    #[test]
    fn a_frame_is_800_wide_with_its_caption_and_the_marks_keep_their_colors() {
        let mut shot = page([255, 255, 255]);
        for x in 100..200 {
            for y in 100..140 {
                shot.put_pixel(x, y, Rgb(PALETTE[0]));
            }
        }
        let f = frame(&shot, &[CaptionLine::new("step 1 · CLICK:3", Tone::Plain)]);
        assert_eq!(
            (f.width, f.height),
            (800, 500 + 2 * MARGIN + 4 * LINE_HEIGHT)
        );
        let at = |x: u32, y: u32| palette()[usize::from(f.pixels[(y * f.width + x) as usize])];
        assert_eq!(at(100, 75), PALETTE[0]);
        assert_eq!(at(10, 10), [255, 255, 255]);
        // The caption drew something dark under the image.
        let caption = &f.pixels[(510 * 800) as usize..];
        assert!(caption
            .iter()
            .any(|&i| palette()[usize::from(i)] == [0, 0, 0]));
    }

    #[test]
    fn only_what_changed_is_stored_after_the_first_frame() {
        let a = frame(&page([255, 255, 255]), &[]);
        let mut shot = page([255, 255, 255]);
        for x in 640..700 {
            for y in 400..420 {
                shot.put_pixel(x, y, Rgb([0, 0, 0]));
            }
        }
        let b = frame(&shot, &[]);
        let d = delta(Some(&a), &b, |v| v as u16);
        assert_eq!((d.left, d.top), (400, 250));
        // 60×20 pixels at 1280 wide are 37.5×12.5 at 800.
        assert_eq!((d.width, d.height), (38, 13));
        let same = delta(Some(&a), &a, |v| v as u16);
        assert_eq!((same.width, same.height), (1, 1));
        let gif = encode(&[a, b]).unwrap();
        assert!(gif.starts_with(b"GIF89a"));
    }

    #[test]
    fn long_captions_are_cut_and_counted() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("a\nb", 4), "a b");
        let lines: Vec<CaptionLine> = (0..7)
            .map(|i| CaptionLine::new(format!("CLICK:{i}"), Tone::Plain))
            .collect();
        // Drawing more lines than fit must not panic; the frame keeps its size.
        let f = frame(&page([255, 255, 255]), &lines);
        assert_eq!(f.height, 500 + 2 * MARGIN + 4 * LINE_HEIGHT);
        assert!(encode(&[]).is_err());
    }
}
