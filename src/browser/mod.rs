//! The browser layer: finds and launches Chromium (or attaches to one over CDP),
//! owns the page, and navigates. Nothing else in seamark talks to chromiumoxide's
//! launch API.

mod camera;
mod consent;
mod device;
mod devtools;
mod dialogs;
mod find;
mod hit;
mod intercept;
mod launch;
mod personal;
mod place;
mod pool;
mod remote;
mod traffic;
mod viewport;

pub use launch::tie_to_this_process;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::page::{NavigateParams, StopLoadingParams};
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams, GetTargetsParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::Page;
use futures::StreamExt;
use tokio::task::JoinHandle;

pub use camera::{close_look, screenshot, Region};
pub use consent::{consent_note, Consent, ConsentOutcome, ConsentRecord};
pub use device::{Device, DeviceOs, UnknownDevice, DEVICES, FALLBACK_CHROME};
pub use devtools::{own_profile_folder, usual_folders, DevTools, DevToolsError, ACTIVE_PORT_FILE};
pub use dialogs::DialogAnswer;
pub use find::find_chromium;
pub use hit::{Hit, HitTester};
pub use intercept::RequestFilter;
pub use launch::NET_LOG_ENV;
pub use personal::PersonalBrowser;
pub use place::{local_time, PageClock, Place};
pub use pool::Pool;
pub(crate) use remote::{found_frames, link_of, remote_frame, remote_frames};
pub use remote::{CdpReply, Link, RemoteError, RemoteSession};
pub use traffic::{Answer, Asked, Exchange, Got, Responder, Tap, Traffic, MAX_BODY};
pub use viewport::{DeviceScale, Viewport};

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
    Profile(std::io::Error),
    /// A `--profile` that cannot be used.
    #[error("cannot use the profile {dir}: {reason}")]
    ProfileDir {
        /// The profile directory.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
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
    /// A browser context could not be made in a shared browser.
    #[error("cannot open a browser context in {browser}: {reason}")]
    Context {
        /// The browser (its binary or DevTools URL).
        browser: String,
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
    Cdp(chromiumoxide::error::CdpError),
    /// The screenshot could not be taken or decoded.
    #[error("screenshot failed: {0}")]
    Screenshot(String),
    /// A command on seamark's side connection failed.
    #[error("browser command failed: {0}")]
    Remote(RemoteError),
}

// Written out, not `#[from]`: the message says the cause, so it is not the source too.
impl From<chromiumoxide::error::CdpError> for BrowserError {
    fn from(e: chromiumoxide::error::CdpError) -> Self {
        BrowserError::Cdp(e)
    }
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
    /// Viewport size in CSS pixels, and its device scale factor.
    pub viewport: Viewport,
    /// Upper bound for one protocol command.
    pub command_timeout: Duration,
    /// Send every request through this HTTP proxy (`host:port`), loopback
    /// included: the domain guard. Only for a browser seamark launches.
    pub proxy: Option<String>,
    /// Check every request of the session's tabs (and of the frames in
    /// them) with this before it leaves: the domain guard in a browser
    /// seamark attached to, which cannot be given a proxy.
    pub request_filter: Option<RequestFilter>,
    /// A profile that lasts (`--profile`): cookies, storage and cache kept
    /// between runs; created when missing, refused when another browser
    /// uses it. Else a fresh one, removed at the end.
    pub profile: Option<PathBuf>,
    /// In a browser seamark attached to: leave its tabs open at the end
    /// (`--keep-tab`).
    pub keep_tab: bool,
    /// The time zone and locale of every tab (`--timezone`, `--locale`).
    pub place: Place,
    /// What the session does with its tabs' traffic: records every response
    /// (`--record-site`) or answers every request from a recording (`--site`).
    pub traffic: Option<Traffic>,
    /// How cookie banners are answered (`--consent`): by rule, before the
    /// model sees them, or left to it.
    pub consent: Consent,
    /// The phone or tablet every tab is (`--device`): its user agent and
    /// touch; its screen is [`BrowserOptions::viewport`].
    pub device: Option<&'static Device>,
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
            request_filter: None,
            profile: None,
            keep_tab: false,
            place: Place::default(),
            traffic: None,
            consent: Consent::default(),
            device: None,
        }
    }
}

/// Where the browser's own services that no switch turns off are pointed:
/// a loopback port no one serves, outside the domain guard (see
/// [`NO_BYPASS`]). Not 127.0.0.1: the browser keeps the account origin's
/// pages in a process of their own, and pages of 127.0.0.1 must not be.
macro_rules! dead_end {
    () => {
        "127.0.0.2:9"
    };
}

/// Flags fit for a closed network and for automation: all of them, as bare
/// keys (the launcher adds the `--`), so that one `disable-features` holds.
///
/// Background services that ask hosts of their own are turned off here,
/// each found in Chromium's net log (`SEAMARK_NET_LOG`, read by
/// `scripts/soak.sh`) by the traffic annotation of its requests, or by the
/// domain guard of the sign-in test:
///
/// | service | annotation | off by |
/// |---|---|---|
/// | component updater | 54845618 | `disable-component-update`, and its URL at the dead end |
/// | network time (clients2.google.com/time) | 46188932 | `NetworkTimeServiceQuerying` |
/// | omnibox AI Mode eligibility (www.google.com/async/folae) | 109231476 | `AimEnabled` |
/// | GCM device check-in and registrations (android.clients.google.com) | 65957842, 61656965 | no switch: its URLs at the dead end |
/// | Google account list (accounts.google.com/ListAccounts) | 35565745 | no switch: `gaia-url` at the dead end |
/// | spell-check dictionary (redirector.gvt1.com) | 117649486 | a preference ([`QUIET_PREFERENCES`]) |
/// | password leak check, autofill, optimization guide, safe browsing | | features below, and preferences |
/// | extensions and their updates | | `disable-extensions` and its kin |
const FLAGS: &[&str] = &[
    "disable-gpu",
    "disable-dev-shm-usage",
    "disable-background-networking",
    "disable-background-timer-throttling",
    "disable-backgrounding-occluded-windows",
    "disable-renderer-backgrounding",
    "disable-ipc-flooding-protection",
    "disable-hang-monitor",
    "disable-popup-blocking",
    "disable-prompt-on-repost",
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
    "enable-automation",
    "force-color-profile=srgb",
    "lang=en_US",
    "enable-features=NetworkService,NetworkServiceInProcess",
    "enable-blink-features=IdleDetection",
    // Each site in a process of its own, as in a person's browser: what keeps
    // a hostile page from reading another site's data in the same process,
    // and an agent visits hostile pages. Frames of other sites are followed
    // through their own sessions (browser/remote.rs).
    "site-per-process",
    // Background services (see the table above).
    "disable-extensions",
    "disable-default-apps",
    "disable-component-extensions-with-background-pages",
    "no-pings",
    "safebrowsing-disable-auto-update",
    concat!("component-updater=url-source=http://", dead_end!(), "/"),
    concat!("gaia-url=http://", dead_end!()),
    concat!("gcm-checkin-url=http://", dead_end!(), "/checkin"),
    concat!("gcm-registration-url=http://", dead_end!(), "/register"),
    concat!("gcm-mcs-endpoint=", dead_end!()),
    "disable-features=Translate,TranslateUI,MediaRouter,\
     DialMediaRouteProvider,OptimizationHints,OptimizationHintsFetching,\
     OptimizationGuideModelDownloading,OptimizationGuideOnDeviceModel,\
     OptimizationTargetPrediction,AutofillServerCommunication,PasswordLeakDetection,\
     NetworkTimeServiceQuerying,CertificateTransparencyComponentUpdater,\
     InterestFeedContentSuggestions,PreconnectToSearch,AimEnabled",
];

/// The preferences a profile seamark makes starts with: every service that
/// would send what the person types or visits somewhere (password saving
/// and its leak check, safe browsing, translation, autofill, search
/// suggestions and the default search engine, network prediction,
/// sign-in, spell checking: its dictionary is fetched from a Google host
/// the first time a field is typed into, which the sign-in test caught)
/// off, a blank first page instead of the new tab page (which
/// preconnects to the default search engine), and WebRTC kept to its proxy:
/// no UDP to a STUN server or a peer, which the guard (a proxy) would not
/// see, and which tells a STUN server the machine's addresses.
const QUIET_PREFERENCES: &str = r#"{
  "credentials_enable_service": false,
  "credentials_enable_autosignin": false,
  "profile": {"password_manager_enabled": false, "password_manager_leak_detection": false},
  "safebrowsing": {"enabled": false, "enhanced": false},
  "translate": {"enabled": false},
  "autofill": {"enabled": false, "profile_enabled": false, "credit_card_enabled": false},
  "search": {"suggest_enabled": false},
  "default_search_provider": {"enabled": false},
  "alternate_error_pages": {"enabled": false},
  "net": {"network_prediction_options": 2},
  "signin": {"allowed": false},
  "browser": {"has_seen_welcome_page": true, "enable_spellchecking": false},
  "spellcheck": {"dictionaries": [], "dictionary": "", "use_spelling_service": false},
  "session": {"restore_on_startup": 4, "startup_urls": ["about:blank"]},
  "homepage": "about:blank",
  "homepage_is_newtabpage": false,
  "webrtc": {"ip_handling_policy": "disable_non_proxied_udp"}
}"#;

/// Starts a new profile with [`QUIET_PREFERENCES`]; a profile that has its
/// preferences already (a person's `--profile`) keeps them.
fn quiet_profile(dir: &Path) -> std::io::Result<()> {
    let prefs = dir.join("Default").join("Preferences");
    if prefs.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir.join("Default"))?;
    std::fs::write(prefs, QUIET_PREFERENCES)
}

/// A running Chromium that seamark drives: one it launched (with a fresh
/// profile, removed when it ends) or one it attached to (`--cdp`). Sessions
/// open in it: a run's own [`Session`], or, in a batch, one session per run,
/// each in a browser context of its own (cookies, storage, cache and
/// permissions apart) of one shared browser.
pub struct SharedBrowser {
    browser: Browser,
    handler: JoinHandle<()>,
    /// The fresh profile of a launched browser; removed when it ends (a
    /// `--profile` is kept).
    temp_profile: Option<tempfile::TempDir>,
    /// The process of a browser seamark launched (and so ends); `None` for
    /// one it attached to.
    process: Option<launch::BrowserProcess>,
    /// Where it came from, for messages: the binary or the DevTools URL.
    origin: String,
    /// Set when the connection to the browser broke: it is gone.
    lost: Arc<AtomicBool>,
    /// Its out-of-process frames, over a connection of seamark's own.
    remote: Arc<remote::RemoteFrames>,
}

impl std::fmt::Debug for SharedBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBrowser")
            .field("origin", &self.origin)
            .field("launched", &self.launched())
            .finish()
    }
}

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

impl SharedBrowser {
    /// Launches a fresh headless Chromium, or attaches to one when `options.cdp` is set.
    pub async fn start(options: &BrowserOptions) -> Result<Arc<Self>, BrowserError> {
        match &options.cdp {
            Some(url) => Self::attach(url, options).await,
            None => Self::launch(options).await,
        }
        .map(Arc::new)
    }

    async fn launch(options: &BrowserOptions) -> Result<Self, BrowserError> {
        let path = find_chromium(options.chrome.as_deref())?;
        let (temp_profile, profile_dir) = match &options.profile {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| BrowserError::ProfileDir {
                    dir: dir.clone(),
                    reason: e.to_string(),
                })?;
                if let Some(holder) = profile_holder(dir) {
                    return Err(BrowserError::ProfileDir {
                        dir: dir.clone(),
                        reason: format!(
                            "it is in use by another browser ({holder}); close that browser, \
                             or use another --profile"
                        ),
                    });
                }
                (None, dir.clone())
            }
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("seamark-profile-")
                    .tempdir()
                    .map_err(BrowserError::Profile)?;
                let dir = temp.path().to_path_buf();
                (Some(temp), dir)
            }
        };
        quiet_profile(&profile_dir).map_err(|e| BrowserError::ProfileDir {
            dir: profile_dir.clone(),
            reason: e.to_string(),
        })?;
        let vp = options.viewport;
        let mut args: Vec<String> = FLAGS.iter().map(|f| f.to_string()).collect();
        args.push(format!("window-size={},{}", vp.width, vp.height));
        if let Some(proxy) = &options.proxy {
            // `<-loopback>` takes away the implicit bypass of localhost: every
            // request goes through the guard.
            args.push(format!("proxy-server=http://{proxy}"));
            args.push(format!("proxy-bypass-list={NO_BYPASS}"));
        }
        if !options.headful {
            args.extend(["headless=new", "hide-scrollbars", "mute-audio"].map(String::from));
        }
        if is_root() {
            args.extend(["no-sandbox", "disable-setuid-sandbox"].map(String::from));
        }
        let fail = |reason: String| BrowserError::Launch {
            path: path.clone(),
            reason,
        };
        let launched = launch::launch(&path, &profile_dir, &args)
            .await
            .map_err(|e| fail(e.to_string()))?;
        let config = HandlerConfig {
            viewport: Some(vp.to_cdp()),
            request_timeout: options.command_timeout,
            ..HandlerConfig::default()
        };
        let (browser, handler) =
            match Browser::connect_with_config(launched.ws_url.clone(), config).await {
                Ok(pair) => pair,
                // The browser's group is killed when dropped.
                Err(e) => return Err(fail(e.to_string())),
            };
        Ok(Self::finish(
            browser,
            handler,
            Some((temp_profile, launched.child)),
            path.display().to_string(),
        ))
    }

    async fn attach(url: &str, options: &BrowserOptions) -> Result<Self, BrowserError> {
        if options.proxy.is_some() {
            return Err(BrowserError::Attach {
                url: url.to_string(),
                reason: "an attached browser cannot be given a proxy: its tabs' requests are \
                         checked with a request filter instead"
                    .into(),
            });
        }
        // A browser that does not answer must not hold the caller for long.
        // The person's browser keeps its own checks of certificates and its
        // tabs their own size: nothing is overridden but in seamark's tab.
        let config = HandlerConfig {
            viewport: None,
            ignore_https_errors: false,
            request_timeout: options.command_timeout,
            ..HandlerConfig::default()
        };
        let connect = tokio::time::timeout(
            options.command_timeout,
            Browser::connect_with_config(url, config),
        );
        let (browser, handler) = match connect.await {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => {
                return Err(BrowserError::Attach {
                    url: url.to_string(),
                    reason: e.to_string(),
                })
            }
            Err(_) => {
                return Err(BrowserError::Attach {
                    url: url.to_string(),
                    reason: format!("no answer within {} s", options.command_timeout.as_secs()),
                })
            }
        };
        Ok(Self::finish(browser, handler, None, without_secrets(url)))
    }

    /// `launched` holds the temporary profile (none for a `--profile`) and
    /// the process of a browser seamark launched; `None` for one it attached to.
    fn finish(
        browser: Browser,
        mut handler: chromiumoxide::Handler,
        launched: Option<(Option<tempfile::TempDir>, launch::BrowserProcess)>,
        origin: String,
    ) -> Self {
        // The handler yields per-message errors; keep polling it, or every later
        // command times out (docs/notes.md). A broken connection (the
        // browser was killed, or its host went away) is the end: the handler
        // is dropped, so that every command waiting on it fails at once
        // instead of at its timeout, and the browser counts as lost.
        let lost = Arc::new(AtomicBool::new(false));
        let gone = lost.clone();
        let handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                match event {
                    Err(chromiumoxide::error::CdpError::Ws(e)) => {
                        // Unless seamark is ending the browser itself.
                        if gone.load(Ordering::SeqCst) {
                            tracing::debug!("the connection to the browser closed: {e}");
                        } else {
                            tracing::warn!("the connection to the browser broke: {e}");
                        }
                        break;
                    }
                    Err(e) => tracing::debug!("CDP handler: {e}"),
                    Ok(()) => {}
                }
            }
            gone.store(true, Ordering::SeqCst);
        });
        let (temp_profile, process) = match launched {
            Some((profile, child)) => (profile, Some(child)),
            None => (None, None),
        };
        let remote = remote::RemoteFrames::new(browser.websocket_address());
        Self {
            browser,
            handler,
            temp_profile,
            process,
            origin,
            lost,
            remote,
        }
    }

    /// The browser, for its tabs, downloads and browser-wide events.
    pub fn browser(&self) -> &Browser {
        &self.browser
    }

    /// Where the browser came from: the binary launched, or the DevTools URL.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Whether seamark launched the browser (with its flags) rather than
    /// attaching to a running one (`--cdp`).
    pub fn launched(&self) -> bool {
        self.process.is_some()
    }

    /// Whether the browser is still there: its connection is open and, when
    /// seamark launched it, its process runs. A dead browser's commands wait
    /// out their timeouts, so this is asked first.
    pub fn is_alive(&self) -> bool {
        !self.lost.load(Ordering::SeqCst)
            && !self.handler.is_finished()
            && match &self.process {
                Some(child) => child.id().is_some_and(process_runs),
                None => true,
            }
    }

    /// Opens a session in a new browser context of this browser: its own
    /// cookies, storage, cache and permissions, and its own proxy when
    /// `options.proxy` is set (the run's domain guard).
    pub async fn open_context(
        self: &Arc<Self>,
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
            self.browser.create_browser_context(params.build()),
        )
        .await;
        let context = match made {
            Ok(Ok(context)) => context,
            failed => {
                return Err(BrowserError::Context {
                    browser: self.origin.clone(),
                    reason: match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => "timed out".into(),
                    },
                })
            }
        };
        match self.browser.new_page(blank_tab(Some(&context))).await {
            Ok(page) => Session::open(self.clone(), Some(context), page, options).await,
            Err(e) => {
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    self.browser.dispose_browser_context(context),
                )
                .await;
                Err(e.into())
            }
        }
    }

    /// Ends the browser when nothing else holds it: closes one seamark
    /// launched (never one it attached to) and removes its profile.
    pub async fn close(self: Arc<Self>) {
        let Ok(mut this) = Arc::try_unwrap(self) else {
            return;
        };
        this.lost.store(true, Ordering::SeqCst);
        // A graceful close writes a lasting profile's cookies to disk and
        // ends the net log's file; a temporary profile keeps nothing, and a
        // kill ends the browser at once where a close takes 0.15–0.5 s.
        let graceful = this.temp_profile.is_none() || std::env::var_os(NET_LOG_ENV).is_some();
        if let Some(child) = this.process.as_mut() {
            if graceful {
                let _ = tokio::time::timeout(Duration::from_secs(5), this.browser.close()).await;
            }
            if !graceful
                || tokio::time::timeout(Duration::from_secs(5), child.wait())
                    .await
                    .is_err()
            {
                child.start_kill();
                let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
            }
        }
        // Drop removes the profile.
    }
}

impl Drop for SharedBrowser {
    /// Kills a browser seamark launched that is still there (an error or
    /// Ctrl-C path skipped [`SharedBrowser::close`]), so that its profile can
    /// be removed.
    fn drop(&mut self) {
        self.lost.store(true, Ordering::SeqCst);
        if let Some(child) = self.process.as_mut() {
            child.start_kill();
            // Give the process a moment to release the profile; bounded.
            for _ in 0..50 {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if let Some(profile) = self.temp_profile.take() {
            remove_profile(profile);
        }
        self.handler.abort();
    }
}

/// Why a script's value did not come back.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The browser did not run it.
    #[error("{0}")]
    Cdp(chromiumoxide::error::CdpError),
    /// It threw: what it threw, as the page describes it.
    #[error("{0}")]
    Thrown(String),
    /// It gave no answer in time.
    #[error("no answer within {} s", .0.as_secs())]
    Timeout(Duration),
}

/// Evaluates `js` in the page's main world, its promise awaited, and gives
/// its value (`null` when it has none to give), or what it threw.
pub async fn evaluate(page: &Page, js: &str) -> Result<serde_json::Value, EvalError> {
    let mut params = EvaluateParams::new(js);
    params.await_promise = Some(true);
    params.return_by_value = Some(true);
    let reply = page.execute(params).await.map_err(EvalError::Cdp)?;
    if let Some(e) = &reply.result.exception_details {
        return Err(EvalError::Thrown(
            e.exception
                .as_ref()
                .and_then(|x| x.description.clone())
                .unwrap_or_else(|| e.text.clone()),
        ));
    }
    Ok(reply
        .result
        .result
        .value
        .clone()
        .unwrap_or(serde_json::Value::Null))
}

/// A DevTools URL as it may be written down: without its query (a hosted
/// browser's token) or its user and password.
fn without_secrets(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Err(_) => "a browser at an unreadable URL".to_string(),
    }
}

/// A new blank tab, in `context` when given.
fn blank_tab(context: Option<&BrowserContextId>) -> CreateTargetParams {
    let mut target = CreateTargetParams::new("about:blank");
    target.browser_context_id = context.cloned();
    target
}

/// Who holds a profile, if a running browser does: Chromium's
/// `SingletonLock` names `host-pid`; a lock of a process that is gone (on
/// this host) is stale, and Chromium takes it over.
pub fn profile_holder(dir: &std::path::Path) -> Option<String> {
    let target = std::fs::read_link(dir.join("SingletonLock")).ok()?;
    let target = target.to_string_lossy().into_owned();
    let (host, pid) = target.rsplit_once('-')?;
    let pid: u32 = pid.parse().ok()?;
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    if here.is_empty() || host != here {
        return Some(format!("process {pid} on host {host}"));
    }
    process_runs(pid).then(|| format!("process {pid}"))
}

/// The proxy bypass list that takes away the implicit bypass of loopback:
/// every request goes through the domain guard but those to the dead end
/// (a closed port), whose services retry for minutes: the guard would
/// refuse them in the middle of a step, and list them among what the page
/// was refused.
const NO_BYPASS: &str = concat!("<-loopback>;", dead_end!());

/// A proxy no one serves: a browser (or context) sent through it reaches
/// nothing, as a replay wants what the recording does not answer.
pub const NO_NETWORK: &str = dead_end!();

/// Whether process `pid` runs: it exists and is no zombie (Linux's /proc;
/// elsewhere it is taken to run).
fn process_runs(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses: `1 (chromium) S …`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| !matches!(state, "Z" | "X")),
        Err(_) => !std::path::Path::new("/proc/self").exists(),
    }
}

impl Session {
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

/// Removes the profile; Chromium's helpers may still write into it for a moment,
/// so a failed first attempt is retried briefly.
fn remove_profile(profile: tempfile::TempDir) {
    let path = profile.path().to_path_buf();
    // Chromium keeps its singleton socket in a folder of its own in the
    // temporary directory, linked from the profile: a browser that is
    // killed, not closed, leaves that folder behind.
    let socket_dir = std::fs::read_link(path.join("SingletonSocket"))
        .ok()
        .and_then(|socket| socket.parent().map(Path::to_path_buf))
        .filter(|dir| {
            dir.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("org.chromium.Chromium."))
        });
    if let Some(dir) = socket_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
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

/// Whether the browsers seamark launches keep Chromium's sandbox: not as
/// root, where Chromium refuses it and `--no-sandbox` is passed.
pub fn sandboxed() -> bool {
    !is_root()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_devtools_url_is_written_down_without_its_token() {
        assert_eq!(
            without_secrets("wss://user:pw@chrome.example.com/chromium?token=s3cret&stealth"),
            "wss://chrome.example.com/chromium"
        );
        assert_eq!(
            without_secrets("ws://127.0.0.1:9222/devtools/browser/ab"),
            "ws://127.0.0.1:9222/devtools/browser/ab"
        );
    }

    #[test]
    fn this_process_runs_and_a_finished_one_does_not() {
        assert!(process_runs(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Exited but not reaped: a zombie, which does not run.
        std::thread::sleep(Duration::from_millis(200));
        assert!(!process_runs(pid));
        child.wait().unwrap();
    }
}
