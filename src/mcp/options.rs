//! What an MCP server is started with, and what a tool gives back.

use std::path::PathBuf;
use std::sync::Arc;

use crate::act::ActOptions;
use crate::brain::Image;
use crate::browser::{BrowserOptions, Pool};
use crate::perceive;
use crate::site::{ClockStart, SiteUse};

/// How the MCP server drives its browser.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// How the browser starts (or which one to attach to).
    pub browser: BrowserOptions,
    /// How commands run: timeouts, domains, secrets, confirmation.
    pub act: ActOptions,
    /// Tag emails, phone numbers, card numbers and tokens in what the client reads.
    pub scrub: bool,
    /// Most elements in a list.
    pub list_cap: usize,
    /// The session's run directory; else a new one under `runs_root`.
    pub out: Option<PathBuf>,
    /// Where run directories go.
    pub runs_root: PathBuf,
    /// The skills folder the `skill` tool follows skills from (none: the
    /// tool says so).
    pub skills: Option<PathBuf>,
    /// A storage state (Playwright's format) every browser the session
    /// starts begins with: signed in where it was.
    pub storage_state: Option<PathBuf>,
    /// Where the browser's state is written when the session ends (0600).
    pub save_storage_state: Option<PathBuf>,
    /// Browsers shared by the sessions of a server: the desk opens its
    /// session in a browser context of its own there, instead of launching
    /// a browser (`browser` then gives the context's viewport).
    pub pool: Option<Arc<Pool>>,
    /// The network as it is, recorded into the run directory's `site.har`,
    /// or a recording instead of it.
    pub site: SiteUse,
    /// The pages' clock and `Math.random` fixed, from this start.
    pub fixed_clock: Option<ClockStart>,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            browser: BrowserOptions::default(),
            act: ActOptions::default(),
            scrub: true,
            list_cap: perceive::DEFAULT_LIST_CAP,
            out: None,
            runs_root: PathBuf::from("runs"),
            skills: None,
            storage_state: None,
            save_storage_state: None,
            pool: None,
            site: SiteUse::Live,
            fixed_clock: None,
        }
    }
}

/// What a tool gives back: text, the marked image when asked for, and
/// whether the call failed (a tool error the client's model reads).
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// The text content.
    pub text: String,
    /// The marked screenshot, as a model gets it.
    pub image: Option<Image>,
    /// A close look (`ZOOM`) at a region of it, when one was asked for.
    pub close_look: Option<Image>,
    /// The call did not do what it was asked.
    pub is_error: bool,
}

impl ToolOutput {
    pub(super) fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            image: None,
            close_look: None,
            is_error: true,
        }
    }
}
