//! The browser layer: finds and launches Chromium (or attaches to one over CDP),
//! owns the page, and navigates. Nothing else in seamark talks to chromiumoxide's
//! launch API.

mod camera;
mod find;
mod hit;
mod viewport;

use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;
use futures::StreamExt;
use tokio::task::JoinHandle;

pub use camera::screenshot;
pub use find::find_chromium;
pub use hit::{Hit, HitTester};
pub use viewport::Viewport;

/// Errors of the browser layer.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No Chromium binary could be found.
    #[error(
        "Chromium not found (tried {tried}); install it (Debian: apt-get install chromium), \
         or pass --chrome PATH, or set SEAMARK_CHROME"
    )]
    NotFound {
        /// The places that were looked at.
        tried: String,
    },
    /// The binary given explicitly does not exist.
    #[error("Chromium not found at {0} (from {1})")]
    NotAt(PathBuf, &'static str),
    /// The temporary profile directory could not be made.
    #[error("cannot create a temporary browser profile: {0}")]
    Profile(#[source] std::io::Error),
    /// Chromium started but could not be driven.
    #[error("cannot launch Chromium at {path}: {reason}")]
    Launch {
        /// The binary that was launched.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// Attaching to a running browser failed.
    #[error("cannot attach to the browser at {url}: {reason}")]
    Attach {
        /// The websocket URL given with `--cdp`.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// A navigation could not reach the page.
    #[error("cannot open {url}: {reason}")]
    Navigate {
        /// The URL asked for.
        url: String,
        /// What the browser said.
        reason: String,
    },
    /// A protocol command failed.
    #[error("browser command failed: {0}")]
    Cdp(#[from] chromiumoxide::error::CdpError),
    /// The screenshot could not be taken or decoded.
    #[error("screenshot failed: {0}")]
    Screenshot(String),
}

/// How to get a browser.
#[derive(Debug, Clone)]
pub struct BrowserOptions {
    /// Explicit Chromium binary (`--chrome`).
    pub chrome: Option<PathBuf>,
    /// Attach to a running browser at this websocket URL instead of launching (`--cdp`).
    pub cdp: Option<String>,
    /// Show the browser window.
    pub headful: bool,
    /// Viewport size in CSS pixels, at device scale factor 1.
    pub viewport: Viewport,
    /// Upper bound for one protocol command.
    pub command_timeout: Duration,
    /// Send every request through this HTTP proxy (`host:port`), loopback
    /// included: the domain guard. Only for a browser seamark launches.
    pub proxy: Option<String>,
}

impl Default for BrowserOptions {
    fn default() -> Self {
        Self {
            chrome: None,
            cdp: None,
            headful: false,
            viewport: Viewport::default(),
            command_timeout: Duration::from_secs(30),
            proxy: None,
        }
    }
}

/// Flags fit for a closed network and for automation. chromiumoxide prepends
/// the `--` itself (../shared/NOTES.md): bare keys only.
const FLAGS: &[&str] = &[
    "disable-gpu",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
    "disable-quic",
    "no-first-run",
    "no-default-browser-check",
    "disable-breakpad",
    "disable-crash-reporter",
    "disable-domain-reliability",
    "disable-client-side-phishing-detection",
    "metrics-recording-only",
    "password-store=basic",
    "use-mock-keychain",
    // Cross-origin iframes stay in the page's renderer process, so one CDP
    // session reaches every frame (no out-of-process iframe sessions).
    "disable-site-isolation-trials",
    "disable-features=IsolateOrigins,site-per-process,Translate,MediaRouter,OptimizationHints",
];

/// A live browser with one page that seamark drives.
pub struct Session {
    browser: Browser,
    page: Page,
    handler: JoinHandle<()>,
    /// The fresh profile of a launched browser; removed when the session ends.
    profile: Option<tempfile::TempDir>,
    viewport: Viewport,
    command_timeout: Duration,
    /// Screenshots' own connection to the page (see [`Session::screenshot`]).
    camera: tokio::sync::Mutex<CameraSlot>,
}

/// The camera of the page seamark drives, or why there is none.
#[derive(Default)]
struct CameraSlot {
    /// The page target a camera was last opened for; one that could not be
    /// opened is not tried again.
    tried: Option<String>,
    camera: Option<camera::Camera>,
}

/// `work`'s answer, or an error once `limit` has passed.
async fn within<T>(
    limit: Duration,
    work: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or_else(|_| Err("timed out".into()))
}

/// What a navigation found.
#[derive(Debug, Clone, Default)]
pub struct Navigation {
    /// HTTP status of the main document, when one was received.
    pub status: Option<i64>,
    /// MIME type of the main document.
    pub mime_type: Option<String>,
    /// The page had not loaded within the wait: it was perceived as it was.
    pub load_timed_out: bool,
}

impl Session {
    /// Launches a fresh headless Chromium, or attaches to one when `options.cdp` is set.
    pub async fn start(options: &BrowserOptions) -> Result<Self, BrowserError> {
        match &options.cdp {
            Some(url) => Self::attach(url, options).await,
            None => Self::launch(options).await,
        }
    }

    async fn launch(options: &BrowserOptions) -> Result<Self, BrowserError> {
        let path = find_chromium(options.chrome.as_deref())?;
        let profile = tempfile::Builder::new()
            .prefix("seamark-profile-")
            .tempdir()
            .map_err(BrowserError::Profile)?;
        let vp = options.viewport;
        let mut builder = BrowserConfig::builder()
            .chrome_executable(&path)
            .user_data_dir(profile.path())
            .request_timeout(options.command_timeout)
            .launch_timeout(Duration::from_secs(30))
            .window_size(vp.width, vp.height)
            .viewport(vp.to_cdp())
            .args(FLAGS.iter().copied());
        if let Some(proxy) = &options.proxy {
            // `<-loopback>` takes away the implicit bypass of localhost: every
            // request goes through the guard.
            builder = builder
                .arg(format!("proxy-server=http://{proxy}"))
                .arg("proxy-bypass-list=<-loopback>");
        }
        builder = if options.headful {
            builder.with_head()
        } else {
            builder.new_headless_mode()
        };
        if is_root() {
            builder = builder.no_sandbox();
        }
        let config = builder.build().map_err(|reason| BrowserError::Launch {
            path: path.clone(),
            reason,
        })?;
        let (browser, handler) =
            Browser::launch(config)
                .await
                .map_err(|e| BrowserError::Launch {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
        Self::finish(browser, handler, Some(profile), vp, options.command_timeout).await
    }

    async fn attach(url: &str, options: &BrowserOptions) -> Result<Self, BrowserError> {
        if options.proxy.is_some() {
            return Err(BrowserError::Attach {
                url: url.to_string(),
                reason: "domain limits need a browser seamark launches: the requests of an \
                         attached browser cannot be routed through the domain guard"
                    .into(),
            });
        }
        let (browser, handler) = Browser::connect(url)
            .await
            .map_err(|e| BrowserError::Attach {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
        Self::finish(
            browser,
            handler,
            None,
            options.viewport,
            options.command_timeout,
        )
        .await
    }

    async fn finish(
        browser: Browser,
        mut handler: chromiumoxide::Handler,
        profile: Option<tempfile::TempDir>,
        viewport: Viewport,
        command_timeout: Duration,
    ) -> Result<Self, BrowserError> {
        // The handler yields per-message errors; keep polling it, or every later
        // command times out (../shared/NOTES.md).
        let handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(e) = event {
                    tracing::debug!("CDP handler: {e}");
                }
            }
        });
        let page = browser.new_page("about:blank").await?;
        // An attached browser keeps its own viewport unless told; a launched one
        // gets it from the config already, and this makes both the same.
        page.execute(viewport.metrics_override()).await?;
        Ok(Self {
            browser,
            page,
            handler,
            profile,
            viewport,
            command_timeout,
            camera: tokio::sync::Mutex::default(),
        })
    }

    /// The page seamark drives.
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// The viewport in CSS pixels.
    pub fn viewport(&self) -> Viewport {
        self.viewport
    }

    /// The browser the page lives in (for tabs, downloads and browser-wide events).
    pub fn browser(&self) -> &Browser {
        &self.browser
    }

    /// Whether seamark launched the browser (with its flags: every frame in
    /// the page's process) rather than attaching to a running one (`--cdp`).
    /// Whether the browser is still there: its connection is open and, when
    /// seamark launched it, its process runs. A dead browser's commands wait
    /// out their timeouts, so this is asked first.
    pub fn is_alive(&mut self) -> bool {
        if self.handler.is_finished() {
            return false;
        }
        match self.browser.get_mut_child() {
            Some(child) => !matches!(child.as_mut_inner().try_wait(), Ok(Some(_))),
            None => true,
        }
    }

    pub fn launched(&self) -> bool {
        self.profile.is_some()
    }

    /// A PNG of the viewport (fast compression), taken over the page's camera:
    /// a DevTools connection of its own, so that the screenshot neither waits
    /// for nor holds up the commands perception sends meanwhile. When no camera
    /// can be opened (a browser behind a proxy that serves only its own
    /// endpoint) or it fails, the page's own connection takes the screenshot.
    pub async fn screenshot(&self) -> Result<Vec<u8>, BrowserError> {
        let target = self.page.target_id().inner().clone();
        let mut slot = self.camera.lock().await;
        if slot.tried.as_ref() != Some(&target) {
            // A connection on the browser's own host opens in a millisecond.
            let opened = within(
                self.command_timeout.min(Duration::from_secs(5)),
                camera::Camera::open(self.browser.websocket_address(), &target),
            )
            .await;
            slot.camera = opened
                .map_err(|e| {
                    tracing::debug!(
                        "no camera for the page, screenshots go over its connection: {e}"
                    )
                })
                .ok();
            slot.tried = Some(target);
        }
        if let Some(camera) = slot.camera.as_mut() {
            match within(self.command_timeout, camera.shoot()).await {
                Ok(png) => return Ok(png),
                // Closed with its page, or broken: the next screenshot opens a new one.
                Err(e) => {
                    tracing::debug!(
                        "camera failed, the page's connection takes the screenshot: {e}"
                    );
                    *slot = CameraSlot::default();
                }
            }
        }
        drop(slot);
        camera::screenshot(&self.page).await
    }

    /// Makes `page` the one seamark drives (a tab an action opened), with the
    /// session's viewport.
    pub async fn switch_to(&mut self, page: Page) -> Result<(), BrowserError> {
        page.execute(self.viewport.metrics_override()).await?;
        self.page = page;
        Ok(())
    }

    /// Replaces a crashed or closed page with a fresh blank tab, so the browser
    /// stays usable. The old page is closed when it still answers.
    pub async fn replace_page(&mut self) -> Result<(), BrowserError> {
        let fresh = self.browser.new_page("about:blank").await?;
        fresh.execute(self.viewport.metrics_override()).await?;
        let old = std::mem::replace(&mut self.page, fresh);
        let _ = tokio::time::timeout(Duration::from_secs(2), old.close()).await;
        Ok(())
    }

    /// Opens `url` and waits for it to load, at most `wait`. A page that does not
    /// finish loading in time is left as it is, and says so.
    pub async fn navigate(&self, url: &str, wait: Duration) -> Result<Navigation, BrowserError> {
        let failed = |reason: String| BrowserError::Navigate {
            url: url.to_string(),
            reason,
        };
        let mut nav = Navigation::default();
        // chromiumoxide answers a Page.navigate once the frame has loaded; past
        // our wait (or its own request timeout) the page is perceived as it is.
        match tokio::time::timeout(wait, self.page.execute(NavigateParams::new(url))).await {
            Err(_) | Ok(Err(chromiumoxide::error::CdpError::Timeout)) => nav.load_timed_out = true,
            Ok(Err(e)) => return Err(failed(e.to_string())),
            Ok(Ok(reply)) => {
                if let Some(text) = reply.result.error_text.as_deref() {
                    return Err(failed(match text {
                        "net::ERR_ABORTED" => {
                            "the response is not a page the browser shows (a download?)".into()
                        }
                        other => other.to_string(),
                    }));
                }
            }
        }
        // What the main document was, asked of the page itself.
        let mut params = EvaluateParams::new(
            "[document.contentType, (performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0]",
        );
        params.return_by_value = Some(true);
        if let Ok(Ok(reply)) =
            tokio::time::timeout(Duration::from_secs(5), self.page.execute(params)).await
        {
            if let Some(v) = reply
                .result
                .result
                .value
                .as_ref()
                .and_then(|v| v.as_array())
            {
                nav.mime_type = v.first().and_then(|m| m.as_str()).map(str::to_string);
                nav.status = v.get(1).and_then(|s| s.as_i64()).filter(|&s| s > 0);
            }
        }
        Ok(nav)
    }

    /// Ends the session: closes a browser seamark launched (never one it attached
    /// to) and removes its temporary profile.
    pub async fn close(mut self) {
        if self.profile.is_none() {
            // Attached: leave the browser running, close only the tab we opened.
            let _ = tokio::time::timeout(Duration::from_secs(5), self.page.clone().close()).await;
        } else {
            let _ = tokio::time::timeout(Duration::from_secs(5), self.browser.close()).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), self.browser.wait()).await;
            if let Some(child) = self.browser.get_mut_child().map(|c| c.as_mut_inner()) {
                let _ = child.start_kill();
                let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
            }
        }
        self.handler.abort();
        if let Some(profile) = self.profile.take() {
            remove_profile(profile);
        }
    }
}

impl Drop for Session {
    /// On an error or Ctrl-C path that skipped [`Session::close`]: kill the browser
    /// we launched now, so its profile can be removed.
    fn drop(&mut self) {
        if let Some(profile) = self.profile.take() {
            if let Some(child) = self.browser.get_mut_child() {
                let child = child.as_mut_inner();
                let _ = child.start_kill();
                // Give the process a moment to release the profile; bounded.
                for _ in 0..50 {
                    if matches!(child.try_wait(), Ok(Some(_))) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            remove_profile(profile);
        }
        self.handler.abort();
    }
}

/// Removes the profile; Chromium's helpers may still write into it for a moment,
/// so a failed first attempt is retried briefly.
fn remove_profile(profile: tempfile::TempDir) {
    let path = profile.path().to_path_buf();
    let _ = profile.close();
    // Chromium's helper processes outlive the main one for a moment (longer
    // on a loaded machine) and may still write into the profile, even create
    // it again: remove it until it stays gone, for at most about 3 s.
    for _ in 0..60 {
        if !path.exists() {
            std::thread::sleep(Duration::from_millis(25));
            if !path.exists() {
                return;
            }
        }
        let _ = std::fs::remove_dir_all(&path);
        std::thread::sleep(Duration::from_millis(25));
    }
    tracing::warn!("could not remove the browser profile {}", path.display());
}

fn is_root() -> bool {
    // Chromium refuses to run sandboxed as root. The effective uid is the
    // second field of /proc/self/status's Uid line; no libc dependency needed.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}
