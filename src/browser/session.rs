//! A live page that seamark drives: its tabs, navigation, screenshots and
//! the keepers of its dialogs, banners and requests.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::page::{NavigateParams, StopLoadingParams};
use chromiumoxide::cdp::browser_protocol::target::{CreateBrowserContextParams, GetTargetsParams};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;
use tokio::task::JoinHandle;

use super::options::NO_BYPASS;
use super::shared::blank_tab;
use super::{
    camera, consent, device, dialogs, remote, traffic, BrowserError, BrowserOptions, ConsentRecord,
    Device, DialogAnswer, Place, RemoteError, RequestFilter, SharedBrowser, Traffic, Viewport,
};

/// A live page that seamark drives, in a browser of its own or in a context
/// of a shared one.
pub struct Session {
    host: Arc<SharedBrowser>,
    /// The browser context the session's tabs live in, when it has its own;
    /// disposed (its tabs closed, its storage gone) when the session ends.
    context: Option<BrowserContextId>,
    page: Page,
    viewport: Viewport,
    command_timeout: Duration,
    /// Screenshots' own connection to the page (see [`Session::screenshot`]).
    camera: tokio::sync::Mutex<CameraSlot>,
    /// Answers the page's JavaScript dialogs, from before its first load.
    dialogs: dialogs::DialogKeeper,
    /// In a browser seamark attached to, with no context of its own: the
    /// tabs that are the session's (the one it opened, and those opened from
    /// them), by target id. The person's other tabs are never listed, shown,
    /// read or closed. `None`: every tab the session sees is its own.
    guest: Option<std::sync::Mutex<HashSet<String>>>,
    /// Leave the guest's tabs open at the end (`--keep-tab`).
    keep_tab: bool,
    /// What checks the requests of the session's tabs, when something does.
    request_filter: Option<RequestFilter>,
    /// The time zone and locale of every tab.
    place: Place,
    /// What the session does with its tabs' traffic, when anything.
    traffic: Option<Traffic>,
    /// The tabs whose requests are checked, and the tasks answering them.
    checked: Vec<(Page, JoinHandle<()>)>,
    /// Answers the cookie banners of the session's tabs.
    consent: consent::ConsentKeeper,
    /// The device every tab is, with the major version of the Chromium
    /// that runs (an Android device's user agent names it).
    device: Option<(&'static Device, String)>,
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
    work: impl std::future::Future<Output = Result<T, RemoteError>>,
) -> Result<T, RemoteError> {
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or(Err(RemoteError::TimedOut(limit)))
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
    /// Opens a session in a new browser context of this browser: its own
    /// cookies, storage, cache and permissions, and its own proxy when
    /// `options.proxy` is set (the run's domain guard).
    pub async fn in_context(
        host: &Arc<SharedBrowser>,
        options: &BrowserOptions,
    ) -> Result<Session, BrowserError> {
        let mut params = CreateBrowserContextParams::builder().dispose_on_detach(true);
        if let Some(proxy) = &options.proxy {
            params = params
                .proxy_server(format!("http://{proxy}"))
                .proxy_bypass_list(NO_BYPASS);
        }
        let made = tokio::time::timeout(
            options.command_timeout,
            host.browser.create_browser_context(params.build()),
        )
        .await;
        let context = match made {
            Ok(Ok(context)) => context,
            failed => {
                return Err(BrowserError::Context {
                    browser: host.origin.clone(),
                    reason: match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => "timed out".into(),
                    },
                })
            }
        };
        match host.browser.new_page(blank_tab(Some(&context))).await {
            Ok(page) => Session::open(host.clone(), Some(context), page, options).await,
            Err(e) => {
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    host.browser.dispose_browser_context(context),
                )
                .await;
                Err(e.into())
            }
        }
    }

    /// Launches a fresh headless Chromium, or attaches to one when
    /// `options.cdp` is set, and opens a page in it.
    pub async fn start(options: &BrowserOptions) -> Result<Self, BrowserError> {
        let host = SharedBrowser::start(options).await?;
        let page = host.browser.new_page("about:blank").await?;
        if !host.launched() {
            let mut session = Self::open(host, None, page, options).await?;
            let own = session.page.target_id().inner().clone();
            session.guest = Some(std::sync::Mutex::new(HashSet::from([own])));
            return Ok(session);
        }
        // The blank tab a launched browser starts with is no tab of the
        // run's: the model's list of tabs would show it.
        let pages = host.browser.pages().await.unwrap_or_default();
        for other in pages
            .into_iter()
            .filter(|p| p.target_id() != page.target_id())
        {
            let _ = tokio::time::timeout(Duration::from_secs(2), other.close()).await;
        }
        Self::open(host, None, page, options).await
    }

    async fn open(
        host: Arc<SharedBrowser>,
        context: Option<BrowserContextId>,
        page: Page,
        options: &BrowserOptions,
    ) -> Result<Self, BrowserError> {
        // An attached browser keeps its own viewport unless told; a launched one
        // gets it from the config already, and this makes both the same.
        page.execute(options.viewport.metrics_override()).await?;
        remote::follow(&page, &host.remote);
        if let Some(filter) = &options.request_filter {
            host.remote
                .check_requests(filter.clone())
                .await
                .map_err(BrowserError::Remote)?;
        }
        let mut dialogs = dialogs::DialogKeeper::default();
        dialogs.follow(&page).await;
        let device = match options.device {
            Some(device) => {
                let version = host.browser.version().await?;
                Some((device, device::chrome_major(&version.product)))
            }
            None => None,
        };
        let mut session = Self {
            host,
            context,
            page: page.clone(),
            viewport: options.viewport,
            command_timeout: options.command_timeout,
            camera: tokio::sync::Mutex::default(),
            dialogs,
            guest: None,
            keep_tab: options.keep_tab,
            request_filter: options.request_filter.clone(),
            place: options.place.clone(),
            traffic: options.traffic.clone(),
            checked: Vec::new(),
            consent: consent::ConsentKeeper::new(options.consent),
            device,
        };
        session.follow_page(&page).await?;
        Ok(session)
    }

    /// Follows `page` as one of the session's tabs from now on: its frames
    /// of other sites are attached as they start (see
    /// [`remote::RemoteFrames::attach_frames`]), and its requests are checked
    /// with the session's filter, when it has one.
    async fn follow_page(&mut self, page: &Page) -> Result<(), BrowserError> {
        if let Err(e) = self.host.remote.attach_frames(page).await {
            tracing::debug!("frames of other sites are attached when first looked at: {e}");
        }
        if self.traffic.is_some() || self.request_filter.is_some() {
            let task =
                traffic::follow(page, self.request_filter.clone(), self.traffic.clone()).await?;
            self.checked.push((page.clone(), task));
        }
        self.place.apply(page).await?;
        if let Some((device, chrome)) = &self.device {
            device.emulate(page, chrome).await?;
        }
        self.consent.follow(page).await?;
        Ok(())
    }

    /// The page takes touches, not clicks: CLICK is a tap, SCROLL a swipe
    /// (`--device` of a touch screen).
    pub fn touch(&self) -> bool {
        self.device.as_ref().is_some_and(|(d, _)| d.touch)
    }

    /// The cookie banners answered by rule so far, in order.
    pub fn consent_handled(&self) -> Vec<ConsentRecord> {
        self.consent.handled()
    }

    /// A count that moves whenever a cookie banner is found or answered by
    /// rule: a look taken while it stood still, even one taken while
    /// [`Session::consent_settled`] waited, saw no banner's doing.
    pub fn consent_stirred(&self) -> u64 {
        self.consent.stirred()
    }

    /// Waits (a few seconds at most) for the cookie banners being answered
    /// by rule to be done, so a look does not show one about to go.
    pub async fn consent_settled(&self) {
        self.consent.settled().await;
    }

    /// Counts `page` among the guest's own tabs (a tab it opened or followed).
    fn adopt(&self, page: &Page) {
        if let Some(owned) = &self.guest {
            owned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(page.target_id().inner().clone());
        }
    }

    /// How the page's confirm and prompt dialogs are answered from now on
    /// (until then: OK, and an empty prompt); alerts are always taken.
    pub fn answer_dialogs(&self, answer: DialogAnswer) {
        self.dialogs.set(answer);
    }

    /// The page seamark drives.
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// The viewport in CSS pixels, and its device scale factor.
    pub fn viewport(&self) -> Viewport {
        self.viewport
    }

    /// The browser the page lives in (for tabs, downloads and browser-wide events).
    pub fn browser(&self) -> &Browser {
        &self.host.browser
    }

    /// The browser, for a task that outlives a borrow of the session (a
    /// download cancelled when it passes its cap). Weak: a strong hold would
    /// keep [`Session::close`] from being the last one, and the browser
    /// would be killed instead of closed (losing a profile's cookies).
    pub fn weak_browser(&self) -> std::sync::Weak<SharedBrowser> {
        Arc::downgrade(&self.host)
    }

    /// Where the session's browser came from: the binary launched, or the
    /// DevTools URL attached to.
    pub fn origin(&self) -> &str {
        self.host.origin()
    }

    /// The browser context of the session's tabs, when it has its own.
    pub fn context(&self) -> Option<&BrowserContextId> {
        self.context.as_ref()
    }

    /// Whether the browser is still there (see [`SharedBrowser::is_alive`]).
    pub fn is_alive(&self) -> bool {
        self.host.is_alive()
    }

    /// Whether seamark launched the browser (with its flags) rather than
    /// attaching to a running one (`--cdp`).
    pub fn launched(&self) -> bool {
        self.host.launched()
    }

    /// A flag set the moment the connection to the browser breaks, for
    /// waits that would otherwise wait out their bound on a dead browser.
    pub fn lost_flag(&self) -> Arc<AtomicBool> {
        self.host.lost.clone()
    }

    /// The session's tabs: every tab of the browser, or of the session's
    /// context when it has one (another run's tabs are none of its business).
    pub async fn tabs(&self) -> Result<Vec<Page>, BrowserError> {
        let pages = self.browser().pages().await?;
        if let Some(owned) = &self.guest {
            // A guest's tabs: its own, and those opened from them (a link
            // with `noopener` names its opener too), to any depth.
            let mut owned = owned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            loop {
                let before = owned.len();
                for p in &pages {
                    if p.opener_id()
                        .as_ref()
                        .is_some_and(|o| owned.contains(o.inner()))
                    {
                        owned.insert(p.target_id().inner().clone());
                    }
                }
                if owned.len() == before {
                    break;
                }
            }
            return Ok(pages
                .into_iter()
                .filter(|p| owned.contains(p.target_id().inner()))
                .collect());
        }
        let Some(context) = &self.context else {
            return Ok(pages);
        };
        let targets = self.browser().execute(GetTargetsParams::default()).await?;
        let mine: HashSet<&str> = targets
            .result
            .target_infos
            .iter()
            .filter(|t| t.browser_context_id.as_ref() == Some(context))
            .map(|t| t.target_id.inner().as_str())
            .collect();
        Ok(pages
            .into_iter()
            .filter(|p| mine.contains(p.target_id().inner().as_str()))
            .collect())
    }

    /// Whether the page seamark drives is still one of the session's tabs.
    pub async fn has_page(&self) -> bool {
        let mine = self.page.target_id();
        self.tabs()
            .await
            .is_ok_and(|tabs| tabs.iter().any(|t| t.target_id() == mine))
    }

    /// Whether frame `frame` is in one of the session's tabs (a download's
    /// source, in a browser other runs share).
    pub async fn owns_frame(&self, frame: &str) -> bool {
        if self.context.is_none() && self.guest.is_none() {
            return true;
        }
        for tab in self.tabs().await.unwrap_or_default() {
            if tab.target_id().inner() == frame {
                return true;
            }
            if let Ok(frames) = tab.frames().await {
                if frames.iter().any(|f| f.inner() == frame) {
                    return true;
                }
            }
        }
        false
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
                camera::Camera::open(self.browser().websocket_address(), &target, self.viewport),
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
        remote::follow(&page, &self.host.remote);
        self.follow_page(&page).await?;
        self.adopt(&page);
        self.dialogs.follow(&page).await;
        self.page = page;
        Ok(())
    }

    /// Replaces a crashed or closed page with a fresh blank tab, so the browser
    /// stays usable. The old page is closed when it still answers.
    pub async fn replace_page(&mut self) -> Result<(), BrowserError> {
        let fresh = self
            .browser()
            .new_page(blank_tab(self.context.as_ref()))
            .await?;
        self.adopt(&fresh);
        remote::follow(&fresh, &self.host.remote);
        self.follow_page(&fresh).await?;
        fresh.execute(self.viewport.metrics_override()).await?;
        self.dialogs.follow(&fresh).await;
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
        // Which document the page shows now: one that is still the same
        // after a load that timed out means nothing came.
        let before = self.document_origin().await;
        // chromiumoxide answers a Page.navigate once the frame has loaded; past
        // our wait (or its own request timeout) the load is stopped, and the
        // page is perceived as it is.
        match tokio::time::timeout(wait, self.page.execute(NavigateParams::new(url))).await {
            Err(_) | Ok(Err(chromiumoxide::error::CdpError::Timeout)) => {
                nav.load_timed_out = true;
                // Stopped, a load no longer holds back the commands behind it.
                let stop = self.page.execute(StopLoadingParams::default());
                if tokio::time::timeout(Duration::from_secs(5), stop)
                    .await
                    .is_err()
                {
                    tracing::debug!("the load could not be stopped");
                }
                if before.is_some() && self.document_origin().await == before {
                    return Err(failed(format!(
                        "the page did not finish loading in {} s: nothing came from the server",
                        wait.as_secs()
                    )));
                }
            }
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

    /// When the page's document began (`performance.timeOrigin`): another
    /// number is another document. None when the page does not answer.
    async fn document_origin(&self) -> Option<String> {
        let mut params = EvaluateParams::new("String(performance.timeOrigin)");
        params.return_by_value = Some(true);
        let reply = tokio::time::timeout(Duration::from_secs(5), self.page.execute(params))
            .await
            .ok()?
            .ok()?;
        reply.result.result.value?.as_str().map(str::to_string)
    }

    /// Ends the session: disposes of its browser context (its tabs and
    /// storage) when it has one; else closes a browser seamark launched (never
    /// one it attached to: there only the session's own tabs are closed,
    /// unless `--keep-tab`) and removes its profile.
    pub async fn close(mut self) {
        let bound = Duration::from_secs(5);
        if let Some(context) = self.context.take() {
            let _ = tokio::time::timeout(bound, self.host.browser.dispose_browser_context(context))
                .await;
        } else if !self.host.launched() {
            self.leave().await;
        } else {
            // The session lets go of the browser first, so that this close is
            // the last hold on it: a graceful close writes the profile's
            // cookies to disk, which a kill would lose.
            let host = self.host.clone();
            drop(self);
            host.close().await;
        }
    }
}

impl Drop for Session {
    /// On an error or Ctrl-C path that skipped [`Session::close`]: the
    /// context goes in the background (the shared browser stays for the
    /// others); a browser of the session's own goes with the last hold on it
    /// ([`SharedBrowser`]'s drop).
    fn drop(&mut self) {
        for (_, task) in self.checked.drain(..) {
            task.abort();
        }
        // A guest's tab, left on an error path: closed in the background.
        if let (Some(_), false, Ok(runtime)) = (
            self.guest.take(),
            self.keep_tab,
            tokio::runtime::Handle::try_current(),
        ) {
            let page = self.page.clone();
            runtime.spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), page.close()).await;
            });
        }
        if let (Some(context), Ok(runtime)) =
            (self.context.take(), tokio::runtime::Handle::try_current())
        {
            let host = self.host.clone();
            runtime.spawn(async move {
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    host.browser.dispose_browser_context(context),
                )
                .await;
            });
        }
    }
}

impl Session {
    /// A guest's goodbye: its own tabs closed (unless `--keep-tab`), and the
    /// downloads of the person's browser handled as before seamark came.
    async fn leave(&mut self) {
        let bound = Duration::from_secs(5);
        let reset = SetDownloadBehaviorParams::new(SetDownloadBehaviorBehavior::Default);
        let _ = tokio::time::timeout(bound, self.host.browser.execute(reset)).await;
        if self.keep_tab {
            // A tab left open goes on without seamark's checks: nothing
            // would answer its paused requests.
            for (page, task) in self.checked.drain(..) {
                task.abort();
                let disable = page
                    .execute(chromiumoxide::cdp::browser_protocol::fetch::DisableParams::default());
                let _ = tokio::time::timeout(bound, disable).await;
            }
            return;
        }
        let mut tabs = match tokio::time::timeout(bound, self.tabs()).await {
            Ok(Ok(tabs)) => tabs,
            _ => vec![self.page.clone()],
        };
        if tabs.is_empty() {
            tabs.push(self.page.clone());
        }
        for tab in tabs {
            let _ = tokio::time::timeout(bound, tab.close()).await;
        }
        // Closed: nothing is left for the drop to close.
        self.guest = None;
    }
}
