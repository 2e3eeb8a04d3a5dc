//! How to get a browser: the options, and the flags and preferences a
//! launched one starts with.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Consent, Device, Place, RequestFilter, Traffic, Viewport};

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
pub(super) const FLAGS: &[&str] = &[
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
pub(super) fn quiet_profile(dir: &Path) -> std::io::Result<()> {
    let prefs = dir.join("Default").join("Preferences");
    if prefs.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir.join("Default"))?;
    std::fs::write(prefs, QUIET_PREFERENCES)
}

/// The proxy bypass list that takes away the implicit bypass of loopback:
/// every request goes through the domain guard but those to the dead end
/// (a closed port), whose services retry for minutes: the guard would
/// refuse them in the middle of a step, and list them among what the page
/// was refused.
pub(super) const NO_BYPASS: &str = concat!("<-loopback>;", dead_end!());

/// A proxy no one serves: a browser (or context) sent through it reaches
/// nothing, as a replay wants what the recording does not answer.
pub const NO_NETWORK: &str = dead_end!();
