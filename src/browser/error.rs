//! Why the browser layer failed.

use std::path::PathBuf;

use super::RemoteError;

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
