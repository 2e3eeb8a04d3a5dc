//! A running Chromium that seamark drives, launched or attached to, which
//! sessions open in.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::CreateTargetParams;
use chromiumoxide::handler::HandlerConfig;
use futures::StreamExt;
use tokio::task::JoinHandle;

use super::options::{quiet_profile, FLAGS, NO_BYPASS};
use super::{find_chromium, launch, remote, BrowserError, BrowserOptions, NET_LOG_ENV};

/// A running Chromium that seamark drives: one it launched (with a fresh
/// profile, removed when it ends) or one it attached to (`--cdp`). Sessions
/// open in it: a run's own [`Session`](crate::browser::Session), or, in a batch, one session per run,
/// each in a browser context of its own (cookies, storage, cache and
/// permissions apart) of one shared browser.
pub struct SharedBrowser {
    pub(super) browser: Browser,
    pub(super) handler: JoinHandle<()>,
    /// The fresh profile of a launched browser; removed when it ends (a
    /// `--profile` is kept).
    pub(super) temp_profile: Option<tempfile::TempDir>,
    /// The process of a browser seamark launched (and so ends); `None` for
    /// one it attached to.
    pub(super) process: Option<launch::BrowserProcess>,
    /// Where it came from, for messages: the binary or the DevTools URL.
    pub(super) origin: String,
    /// Set when the connection to the browser broke: it is gone.
    pub(super) lost: Arc<AtomicBool>,
    /// Its out-of-process frames, over a connection of seamark's own.
    pub(super) remote: Arc<remote::RemoteFrames>,
}

impl std::fmt::Debug for SharedBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBrowser")
            .field("origin", &self.origin)
            .field("launched", &self.launched())
            .finish()
    }
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

    /// Whether it answers a command (its version) within `limit`: one that
    /// does not is wedged.
    pub async fn answers(&self, limit: Duration) -> bool {
        matches!(
            tokio::time::timeout(limit, self.browser.version()).await,
            Ok(Ok(_))
        )
    }

    /// Its DevTools websocket, where other processes reach it.
    pub fn websocket(&self) -> &str {
        self.browser.websocket_address()
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

/// A DevTools URL as it may be written down: without its query (a hosted
/// browser's token) or its user and password.
pub(super) fn without_secrets(url: &str) -> String {
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
pub(super) fn blank_tab(context: Option<&BrowserContextId>) -> CreateTargetParams {
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

/// Whether process `pid` runs: it exists and is no zombie (Linux's /proc;
/// elsewhere it is taken to run).
pub(super) fn process_runs(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses: `1 (chromium) S …`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| !matches!(state, "Z" | "X")),
        Err(_) => !std::path::Path::new("/proc/self").exists(),
    }
}

/// Removes the profile; Chromium's helpers may still write into it for a moment,
/// so a failed first attempt is retried briefly.
pub(super) fn remove_profile(profile: tempfile::TempDir) {
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

pub(super) fn is_root() -> bool {
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
