//! The frames viewers get: the run's page screencast while anyone looks
//! (stopped a few seconds after the last viewer's last request, so that a
//! viewer that went away costs the run nothing), numbered, and with the
//! fields holding a secret painted over as the screenshots have them.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;

use super::{lock, Hidden, Inner, Target};
use crate::browser::{ScreenFrame, Screencast};

/// How long after a viewer's last request the screencast goes on.
const VIEWER_GONE: Duration = Duration::from_secs(5);

/// How often the pump looks for a viewer or a new page when it has none.
const IDLE_LOOK: Duration = Duration::from_millis(100);

/// JPEG quality of a frame painted over (as the screencast's).
const QUALITY: u8 = 70;

/// One frame as viewers get it.
#[derive(Debug, Clone)]
pub struct LiveFrame {
    /// Its number: each frame's is higher than the one before.
    pub seq: u64,
    /// The image, JPEG.
    pub jpeg: Bytes,
    /// The width of the viewport it shows, in CSS pixels.
    pub css_width: f64,
    /// Its height.
    pub css_height: f64,
}

impl Inner {
    /// Whether a viewer looks, or looked a moment ago.
    fn viewed_recently(&self) -> bool {
        let now = self.born.elapsed().as_millis() as u64;
        self.watching.load(Ordering::SeqCst) > 0
            || now.saturating_sub(self.last_view_ms.load(Ordering::SeqCst))
                < VIEWER_GONE.as_millis() as u64
    }
}

/// Streams the page the run drives while anyone looks, until the live
/// view is gone.
pub(super) async fn pump(live: Weak<Inner>) {
    let mut seq = 0;
    loop {
        let Some(target) = wanted(&live) else {
            if live.strong_count() == 0 {
                return;
            }
            tokio::time::sleep(IDLE_LOOK).await;
            continue;
        };
        let cast =
            match Screencast::start(&target.browser_ws, &target.target, target.viewport).await {
                Ok(cast) => Arc::new(cast),
                Err(e) => {
                    tracing::debug!("no screencast of the page: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
        let Some(inner) = live.upgrade() else { return };
        *lock(&inner.cast) = Some(cast.clone());
        let mut targets = inner.target.subscribe();
        drop(inner);
        let mut frames = cast.frames();
        loop {
            tokio::select! {
                changed = frames.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let frame = frames.borrow_and_update().clone();
                    let Some(inner) = live.upgrade() else { return };
                    if let Some(frame) = frame {
                        seq += 1;
                        let hidden = lock(&inner.hidden).clone();
                        let shown = painted(&frame, &hidden, seq);
                        inner.frames.send_replace(Some(Arc::new(shown)));
                    }
                }
                _ = targets.changed() => break,
                _ = tokio::time::sleep(Duration::from_secs(1)) => {
                    let Some(inner) = live.upgrade() else { return };
                    if !inner.viewed_recently() || !cast.is_open() {
                        break;
                    }
                }
            }
        }
        if let Some(inner) = live.upgrade() {
            *lock(&inner.cast) = None;
        }
    }
}

/// The page to stream, when there is one and anyone looks.
fn wanted(live: &Weak<Inner>) -> Option<Target> {
    let inner = live.upgrade()?;
    if !inner.viewed_recently() {
        return None;
    }
    let target = inner.target.borrow().clone();
    target
}

/// `frame` as viewers get it: numbered `seq`, the hidden boxes painted
/// over where the page has scrolled them to. A frame that cannot be
/// painted is not shown bare: it is shown blank.
fn painted(frame: &ScreenFrame, hidden: &Hidden, seq: u64) -> LiveFrame {
    let jpeg = if hidden.rects.is_empty() {
        Bytes::from(frame.jpeg.clone())
    } else {
        Bytes::from(paint(frame, hidden).unwrap_or_default())
    };
    LiveFrame {
        seq,
        jpeg,
        css_width: frame.css_width,
        css_height: frame.css_height,
    }
}

fn paint(frame: &ScreenFrame, hidden: &Hidden) -> Option<Vec<u8>> {
    let mut image = image::load_from_memory_with_format(&frame.jpeg, image::ImageFormat::Jpeg)
        .ok()?
        .to_rgb8();
    let (dx, dy) = (
        hidden.scroll.x - frame.scroll.0,
        hidden.scroll.y - frame.scroll.1,
    );
    let rects: Vec<crate::perceive::Rect> = hidden
        .rects
        .iter()
        .map(|r| crate::perceive::Rect {
            x: r.x + dx,
            y: r.y + dy,
            ..*r
        })
        .collect();
    let scale = f64::from(image.width()) / frame.css_width.max(1.0);
    crate::mark::paint_over(&mut image, &rects, scale);
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, QUALITY)
        .encode_image(&image)
        .ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perceive::{Point, Rect};

    fn frame(scroll_y: f64) -> ScreenFrame {
        let image = image::RgbImage::from_pixel(200, 100, image::Rgb([250, 250, 250]));
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90)
            .encode_image(&image)
            .unwrap();
        ScreenFrame {
            jpeg,
            css_width: 100.0,
            css_height: 50.0,
            scroll: (0.0, scroll_y),
        }
    }

    fn dark_at(jpeg: &[u8], x: u32, y: u32) -> bool {
        let image = image::load_from_memory(jpeg).unwrap().to_rgb8();
        image.get_pixel(x, y).0.iter().all(|&c| c < 100)
    }

    #[test]
    fn a_secrets_box_is_painted_where_the_page_has_scrolled_it() {
        let hidden = Hidden {
            rects: vec![Rect {
                x: 10.0,
                y: 30.0,
                w: 20.0,
                h: 10.0,
            }],
            scroll: Point { x: 0.0, y: 0.0 },
        };
        // As seen: CSS 10..30 × 30..40, at 2 image pixels per CSS pixel.
        let shown = painted(&frame(0.0), &hidden, 1);
        assert!(dark_at(&shown.jpeg, 40, 70));
        assert!(!dark_at(&shown.jpeg, 40, 20));
        // Scrolled down 20 CSS pixels since: the box is 20 higher.
        let shown = painted(&frame(20.0), &hidden, 2);
        assert!(dark_at(&shown.jpeg, 40, 30));
        assert!(!dark_at(&shown.jpeg, 40, 70));
        assert_eq!(shown.seq, 2);
    }

    #[test]
    fn a_frame_with_nothing_to_hide_is_passed_as_it_came() {
        let f = frame(0.0);
        let shown = painted(&f, &Hidden::default(), 7);
        assert_eq!(shown.jpeg.as_ref(), f.jpeg.as_slice());
    }
}
