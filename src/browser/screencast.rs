//! The page as Chromium paints it, streamed: `Page.startScreencast` over a
//! DevTools connection of its own to the page target, each frame
//! acknowledged as soon as it comes (the browser sends the next one only
//! then), so that how fast anyone looks at the frames never holds the
//! browser up. The same connection carries a person's input to the page
//! (`Input.dispatch*`), and tells where the page's top frame went.
//!
//! Like the camera's, the connection is a plain websocket to the page
//! target's own endpoint: the run's own connection neither waits for it
//! nor hears of it.

use std::sync::Arc;

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchMouseEventParams, InsertTextParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    EnableParams as PageEnable, ScreencastFrameAckParams, ScreencastFrameMetadata,
    StartScreencastFormat, StartScreencastParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::Value;
use tokio::sync::watch;

use super::camera::page_endpoint;
use super::wire::{self, Call, RemoteError, Wire};
use super::Viewport;

/// The longest side of a frame, in image pixels: a phone at a device scale
/// of 3 would otherwise stream images of 1170 × 2532.
const MAX_SIDE: u32 = 1600;

/// JPEG quality of the frames: text stays legible at a fifth of a PNG's
/// size.
const QUALITY: i64 = 70;

/// One frame of the page, as painted.
#[derive(Debug, Clone)]
pub struct ScreenFrame {
    /// The image, JPEG.
    pub jpeg: Vec<u8>,
    /// The width of the page's viewport it shows, in CSS pixels.
    pub css_width: f64,
    /// Its height, in CSS pixels.
    pub css_height: f64,
    /// The document's scroll offset when it was painted, in CSS pixels.
    pub scroll: (f64, f64),
}

impl ScreenFrame {
    /// The frame of `data` (base64 JPEG) painted as `meta` says.
    fn of(data: &str, meta: &ScreencastFrameMetadata) -> Option<ScreenFrame> {
        let jpeg = base64::engine::general_purpose::STANDARD
            .decode(data)
            .ok()?;
        // A pinch zoom shows a part of the viewport: what the frame shows is
        // the viewport divided by it.
        let zoom = if meta.page_scale_factor > 0.0 {
            meta.page_scale_factor
        } else {
            1.0
        };
        Some(ScreenFrame {
            jpeg,
            css_width: meta.device_width / zoom,
            css_height: meta.device_height / zoom,
            scroll: (meta.scroll_offset_x, meta.scroll_offset_y),
        })
    }
}

/// A page's screencast, and the way in for a person's input.
pub struct Screencast {
    wire: Arc<Wire>,
    frames: watch::Receiver<Option<Arc<ScreenFrame>>>,
    url: watch::Receiver<String>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Screencast {
    fn drop(&mut self) {
        // The connection closes with the reader; Chromium stops the
        // screencast (and drops the connection's overrides) with it.
        self.reader.abort();
    }
}

impl Screencast {
    /// Connects to page target `target` of the browser at `browser_ws`,
    /// gives it the session's `viewport` (overrides belong to the
    /// connection that set them) and starts the screencast.
    pub async fn start(
        browser_ws: &str,
        target: &str,
        viewport: Viewport,
    ) -> Result<Screencast, RemoteError> {
        let socket = wire::connect(&page_endpoint(browser_ws, target)?).await?;
        let (sink, stream) = socket.split();
        let wire = Wire::over(sink);
        let (frames_tx, frames) = watch::channel(None);
        let (url_tx, url) = watch::channel(String::new());
        let w = wire.clone();
        let reader = tokio::spawn(wire::read(stream, wire.clone(), async move |message| {
            heard(&w, message, &frames_tx, &url_tx).await;
        }));
        let cast = Screencast {
            wire,
            frames,
            url,
            reader,
        };
        cast.wire.execute(None, viewport.metrics_override()).await?;
        cast.wire.execute(None, PageEnable::default()).await?;
        let (w, h) = viewport.device_size();
        let shrink = (f64::from(MAX_SIDE) / f64::from(w.max(h).max(1))).min(1.0);
        let start = StartScreencastParams::builder()
            .format(StartScreencastFormat::Jpeg)
            .quality(QUALITY)
            .max_width((f64::from(w) * shrink).round() as i64)
            .max_height((f64::from(h) * shrink).round() as i64)
            .every_nth_frame(1)
            .build();
        cast.wire.execute(None, start).await?;
        Ok(cast)
    }

    /// The frames as they come: the last one painted (none before the
    /// first).
    pub fn frames(&self) -> watch::Receiver<Option<Arc<ScreenFrame>>> {
        self.frames.clone()
    }

    /// The URL of the page's top frame, from its last navigation seen (empty
    /// before the first).
    pub fn url(&self) -> String {
        self.url.borrow().clone()
    }

    /// Whether the connection still stands.
    pub fn is_open(&self) -> bool {
        !self.reader.is_finished()
    }

    /// A mouse event, as it is.
    pub async fn mouse(&self, event: DispatchMouseEventParams) -> Result<(), RemoteError> {
        self.wire.execute(None, event).await.map(drop)
    }

    /// A key event, as it is.
    pub async fn key(&self, event: DispatchKeyEventParams) -> Result<(), RemoteError> {
        self.wire.execute(None, event).await.map(drop)
    }

    /// Text put in where the focus is, as a paste or an input method does.
    pub async fn insert_text(&self, text: &str) -> Result<(), RemoteError> {
        self.wire
            .execute(None, InsertTextParams::new(text))
            .await
            .map(drop)
    }

    /// The value of `expression` in the page's top frame, by value.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, RemoteError> {
        let mut params = EvaluateParams::new(expression);
        params.return_by_value = Some(true);
        let answer = self.wire.call(None, Call::of(&params)).await?;
        Ok(answer
            .get("result")
            .and_then(|r| r.get("value"))
            .cloned()
            .unwrap_or(Value::Null))
    }
}

/// One event on the connection: a frame acknowledged and kept, or the top
/// frame's navigation noted.
async fn heard(
    wire: &Wire,
    message: &Value,
    frames: &watch::Sender<Option<Arc<ScreenFrame>>>,
    url: &watch::Sender<String>,
) {
    let params = &message["params"];
    match message["method"].as_str() {
        Some("Page.screencastFrame") => {
            if let Some(n) = params["sessionId"].as_i64() {
                // Acknowledged at once: the browser paints on at its own pace,
                // and whoever looks takes the newest frame when they are ready.
                let _ = wire
                    .send(None, Call::of(&ScreencastFrameAckParams::new(n)))
                    .await;
            }
            let meta =
                serde_json::from_value::<ScreencastFrameMetadata>(params["metadata"].clone());
            if let (Some(data), Ok(meta)) = (params["data"].as_str(), meta) {
                if let Some(frame) = ScreenFrame::of(data, &meta) {
                    frames.send_replace(Some(Arc::new(frame)));
                }
            }
        }
        Some("Page.frameNavigated") if params["frame"].get("parentId").is_none() => {
            if let Some(u) = params["frame"]["url"].as_str() {
                url.send_replace(u.to_string());
            }
        }
        _ => {}
    }
}
