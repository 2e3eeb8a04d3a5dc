//! Screenshots, over a DevTools connection of their own.
//!
//! The browser runs one connection's commands strictly in turn around a
//! screenshot: it holds a `Page.captureScreenshot` until the connection's
//! earlier commands are answered, and the later ones until the screenshot is
//! done. On the connection that perceives, the screenshot and the element
//! enumerator therefore ran one after the other: about 28 ms, then the
//! enumerator. The screenshot needs the page's main thread only for a moment,
//! which the enumerator leaves it between its steps; on a connection of its
//! own, the screenshot is taken while the enumerator runs (after a quiet
//! pause, per perception: github 45.6 → 31.2 ms, the dense page 45.5 → 33.4
//! ms, old reddit 65.4 → 54.9 ms).
//!
//! The camera is that connection: a plain websocket to the page target's own
//! DevTools endpoint, which enables no domain and so receives no events. It
//! sends nothing but screenshots.
//!
//! A close look (`ZOOM`) is a clipped capture rendered at a scale of its
//! own, over the page's own connection: rare, and it must not disturb the
//! camera's metrics.

use super::wire::RemoteError;
use async_tungstenite::tokio::ConnectStream;
use async_tungstenite::tungstenite::Message;
use async_tungstenite::WebSocketStream;
use base64::Engine;
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, GetLayoutMetricsParams, Viewport as ClipArea,
};
use chromiumoxide::Page;
use futures::StreamExt;

use super::{BrowserError, Viewport};

/// The screenshot seamark takes: the viewport, PNG with fast compression.
fn screenshot_params() -> CaptureScreenshotParams {
    CaptureScreenshotParams::builder()
        .format(CaptureScreenshotFormat::Png)
        .optimize_for_speed(true)
        .build()
}

/// Decodes the base64 image the browser answers with.
fn decode(data: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("bad base64 from the browser: {e}"))
}

/// Takes a screenshot over the page's own connection (the one that drives it):
/// the bare `Page.captureScreenshot`.
pub async fn screenshot(page: &Page) -> Result<Vec<u8>, BrowserError> {
    let reply = page.execute(screenshot_params()).await?;
    decode(reply.result.data.as_ref()).map_err(BrowserError::Screenshot)
}

/// A region of the viewport in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    /// Left edge, from the viewport's.
    pub x: f64,
    /// Top edge, from the viewport's.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

/// A PNG of `region` of the viewport rendered at `px_per_css` image pixels
/// per CSS pixel: the browser draws it again at that scale (text and
/// vectors stay sharp), it is not an enlarged copy of the screenshot.
pub async fn close_look(
    page: &Page,
    region: Region,
    px_per_css: f64,
    device_scale: f64,
) -> Result<Vec<u8>, BrowserError> {
    // The clip is in document coordinates: the viewport's scroll is added.
    let metrics = page.execute(GetLayoutMetricsParams::default()).await?;
    let layout = &metrics.result.css_layout_viewport;
    let clip = ClipArea {
        x: region.x + layout.page_x as f64,
        y: region.y + layout.page_y as f64,
        width: region.w,
        height: region.h,
        // The capture comes out at `scale` times the device's pixels.
        scale: px_per_css / device_scale,
    };
    let params = CaptureScreenshotParams::builder()
        .format(CaptureScreenshotFormat::Png)
        .optimize_for_speed(true)
        .clip(clip)
        .build();
    let reply = page.execute(params).await?;
    decode(reply.result.data.as_ref()).map_err(BrowserError::Screenshot)
}

/// The DevTools endpoint of page target `target`, next to the browser's own
/// endpoint `browser_ws` (`ws://host:port/devtools/browser/<id>`). A query (a
/// hosted browser's token) is kept.
pub(super) fn page_endpoint(browser_ws: &str, target: &str) -> Result<String, RemoteError> {
    let mut url = url::Url::parse(browser_ws).map_err(|e| RemoteError::Connect {
        url: browser_ws.to_string(),
        cause: e.to_string(),
    })?;
    url.set_path(&format!("/devtools/page/{target}"));
    Ok(url.into())
}

/// A connection to one page target that takes screenshots.
pub(crate) struct Camera {
    socket: WebSocketStream<ConnectStream>,
    next_id: u64,
}

impl Camera {
    /// Connects to page target `target` of the browser at `browser_ws`, and
    /// gives it the session's viewport: overrides of device metrics belong
    /// to the connection that set them, and without it a screenshot at a
    /// device scale of 2 would come out at 1.
    pub async fn open(
        browser_ws: &str,
        target: &str,
        viewport: Viewport,
    ) -> Result<Self, RemoteError> {
        let socket = super::wire::connect(&page_endpoint(browser_ws, target)?).await?;
        let mut camera = Self { socket, next_id: 0 };
        let metrics = serde_json::to_value(viewport.metrics_override())
            .map_err(|e| RemoteError::Unreadable(e.to_string()))?;
        camera
            .call("Emulation.setDeviceMetricsOverride", metrics)
            .await?;
        Ok(camera)
    }

    /// Takes a screenshot.
    pub async fn shoot(&mut self) -> Result<Vec<u8>, RemoteError> {
        let params = serde_json::to_value(screenshot_params())
            .map_err(|e| RemoteError::Unreadable(e.to_string()))?;
        let result = self.call("Page.captureScreenshot", params).await?;
        let data = result
            .get("data")
            .and_then(|d| d.as_str())
            .ok_or_else(|| RemoteError::Unreadable(clip(&result.to_string()).to_string()))?;
        decode(data).map_err(RemoteError::Unreadable)
    }

    /// Sends one command and waits for its result. The connection answers
    /// nothing but its own commands, one at a time; anything else on it is
    /// skipped.
    async fn call(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, RemoteError> {
        self.next_id += 1;
        let id = self.next_id;
        let command = serde_json::json!({
            "id": id,
            "method": method,
            "params": params,
        });
        self.socket
            .send(Message::Text(command.to_string().into()))
            .await
            .map_err(|e| RemoteError::Send {
                method: method.to_string(),
                cause: e.to_string(),
            })?;
        while let Some(message) = self.socket.next().await {
            let text = match message.map_err(|_| RemoteError::Closed(method.to_string()))? {
                Message::Text(text) => text,
                Message::Close(_) => break,
                _ => continue,
            };
            let mut reply: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| RemoteError::Unreadable(format!("({e}) {}", clip(&text))))?;
            if reply.get("id").and_then(|v| v.as_u64()) != Some(id) {
                continue;
            }
            if let Some(error) = reply.get("error") {
                return Err(RemoteError::Refused {
                    method: method.to_string(),
                    error: error.clone(),
                });
            }
            return Ok(reply["result"].take());
        }
        Err(RemoteError::Closed(method.to_string()))
    }
}

/// The product and version the browser at `browser_ws` gives over a
/// connection of its own (`Browser.getVersion`): whether what answers
/// there is a browser at all, for `seamark doctor`.
pub async fn browser_version(browser_ws: &str) -> Result<String, RemoteError> {
    let socket = super::wire::connect(browser_ws).await?;
    let mut connection = Camera { socket, next_id: 0 };
    let result = connection
        .call("Browser.getVersion", serde_json::json!({}))
        .await?;
    result
        .get("product")
        .and_then(|p| p.as_str())
        .map(str::to_string)
        .ok_or_else(|| RemoteError::Unreadable(clip(&result.to_string()).to_string()))
}

/// The start of a long message, for an error.
fn clip(text: &str) -> &str {
    let end = text.char_indices().nth(200).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_endpoint_sits_beside_the_browser_endpoint() {
        assert_eq!(
            page_endpoint("ws://127.0.0.1:9222/devtools/browser/ab-12", "F00D")
                .ok()
                .as_deref(),
            Some("ws://127.0.0.1:9222/devtools/page/F00D")
        );
        assert_eq!(
            page_endpoint("wss://host:443/devtools/browser/x?token=1", "T")
                .ok()
                .as_deref(),
            Some("wss://host/devtools/page/T?token=1")
        );
        assert!(page_endpoint("not a url", "T").is_err());
    }

    #[test]
    fn a_long_answer_is_clipped_on_a_character_boundary() {
        let text = "é".repeat(300);
        assert_eq!(clip(&text).chars().count(), 200);
        assert_eq!(clip("short"), "short");
    }
}
