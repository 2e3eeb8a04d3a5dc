//! A browser for the person (`seamark browser`): Chromium with a profile
//! folder seamark keeps for them and remote debugging on, so that they log
//! in once and lend it to seamark with `--cdp DIR`.
//!
//! Since Chrome 136, `--remote-debugging-port` is ignored on the everyday
//! profile: a browser that is driven needs a profile folder of its own.
//! This one starts with none of seamark's automation flags: it is the
//! person's, with site isolation and everything else as a browser has it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::shared::is_root;
use super::{devtools, find_chromium, launch, profile_holder, BrowserError};

/// How long a started browser may take to write its `DevToolsActivePort`.
const ACTIVE_PORT_WITHIN: Duration = Duration::from_secs(20);

/// A Chromium started for the person, with remote debugging on.
pub struct PersonalBrowser {
    child: launch::BrowserProcess,
    /// Its DevTools websocket URL.
    pub ws_url: String,
    /// Its profile folder (what `--cdp` takes).
    pub profile: PathBuf,
}

impl PersonalBrowser {
    /// Starts Chromium (`chrome`, else the usual places) with `profile`
    /// (created when missing) and remote debugging on a port of its
    /// choosing, which it writes into the folder's `DevToolsActivePort`.
    /// Refused when another browser uses the folder.
    pub async fn start(
        chrome: Option<&Path>,
        profile: &Path,
        headless: bool,
    ) -> Result<Self, BrowserError> {
        let path = find_chromium(chrome)?;
        let refuse = |reason: String| BrowserError::ProfileDir {
            dir: profile.to_path_buf(),
            reason,
        };
        std::fs::create_dir_all(profile).map_err(|e| refuse(e.to_string()))?;
        if let Some(holder) = profile_holder(profile) {
            let how = match devtools::from_folder(profile) {
                Ok(_) => format!(
                    "it runs already, with remote debugging on: give seamark `--cdp {}`",
                    profile.display()
                ),
                Err(_) => "close that browser first".into(),
            };
            return Err(refuse(format!(
                "it is in use by another browser ({holder}); {how}"
            )));
        }
        let mut args: Vec<String> = ["no-first-run", "no-default-browser-check"]
            .map(String::from)
            .to_vec();
        if headless {
            args.push("headless=new".into());
        }
        if is_root() {
            args.extend(["no-sandbox", "disable-setuid-sandbox"].map(String::from));
        }
        let launched =
            launch::launch(&path, profile, &args)
                .await
                .map_err(|e| BrowserError::Launch {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
        let mut browser = Self {
            child: launched.child,
            ws_url: launched.ws_url,
            profile: profile.to_path_buf(),
        };
        // Chromium prints where it listens a moment before it writes the
        // folder's DevToolsActivePort: a `--cdp DIR` given right after the
        // start was refused ("has no DevToolsActivePort") on a busy machine.
        // The start ends once the folder leads to this browser.
        let written = tokio::time::timeout(ACTIVE_PORT_WITHIN, async {
            while devtools::from_folder(profile).ok().as_ref() != Some(&browser.ws_url) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        if written.await.is_err() {
            browser.child.start_kill();
            return Err(refuse(format!(
                "the browser did not write its {} within {} s",
                devtools::ACTIVE_PORT_FILE,
                ACTIVE_PORT_WITHIN.as_secs()
            )));
        }
        Ok(browser)
    }

    /// Waits until the person closes the browser.
    pub async fn wait(&mut self) {
        let _ = self.child.wait().await;
    }

    /// Ends the browser: asked to close, then killed if it does not.
    pub async fn close(mut self) {
        if let Some(pid) = self.child.id() {
            // SIGTERM lets Chromium write its profile (cookies) to disk.
            #[cfg(unix)]
            // SAFETY: kill(2) with a pid of our own child and a valid signal.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGTERM);
            }
            #[cfg(not(unix))]
            let _ = pid;
        }
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            self.child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        }
    }
}
