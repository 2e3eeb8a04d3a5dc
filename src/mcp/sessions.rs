//! The sessions of an MCP server over HTTP. Each MCP session (each client
//! that initializes) gets a desk of its own: its browser context, from one
//! pool of browsers, so that one client's cookies, tabs and ids are not
//! another's; and its run directory. A session's desk is finished when the
//! session ends (the client closes it) or, at the latest, with the server.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::Mutex;

use super::desk::Desk;
use super::options::McpOptions;
use crate::browser::{BrowserError, Pool};
use crate::journal::JournalError;

/// The desks of a server's sessions, over one pool of browsers.
pub struct Desks {
    /// Every session's options; `out`, when given, is the folder of the
    /// sessions' run directories.
    options: McpOptions,
    pool: Arc<Pool>,
    /// Sessions opened so far (their run directories are numbered).
    opened: AtomicUsize,
    /// Every desk handed out, to finish those still open at the end.
    desks: std::sync::Mutex<Vec<Arc<Mutex<Desk>>>>,
}

impl Desks {
    /// Starts the pool's browser (or reaches the `--cdp` ones in `remote`)
    /// at once, so that a browser that cannot start is told before a client
    /// connects.
    pub async fn start(options: McpOptions, remote: &[String]) -> Result<Desks, BrowserError> {
        let pool = Arc::new(Pool::start(&options.browser, remote).await?);
        Ok(Desks {
            options,
            pool,
            opened: AtomicUsize::new(0),
            desks: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// A new session's desk: its run directory is `session-N` in `out`, or
    /// a new one under the runs folder; its browser context opens at its
    /// first call that needs one.
    pub fn open(&self) -> Result<Arc<Mutex<Desk>>, JournalError> {
        let n = self.opened.fetch_add(1, Ordering::SeqCst) + 1;
        let desk = Desk::new(McpOptions {
            out: self
                .options
                .out
                .as_ref()
                .map(|dir| dir.join(format!("session-{n}"))),
            pool: Some(self.pool.clone()),
            ..self.options.clone()
        })?;
        let desk = Arc::new(Mutex::new(desk));
        if let Ok(mut desks) = self.desks.lock() {
            desks.push(desk.clone());
        }
        Ok(desk)
    }

    /// Finishes every session's desk not finished yet, then closes the
    /// browsers the pool launched: the run directories of all sessions.
    pub async fn finish(&self) -> Vec<PathBuf> {
        let desks: Vec<_> = self
            .desks
            .lock()
            .map(|mut d| std::mem::take(&mut *d))
            .unwrap_or_default();
        let mut dirs = Vec::with_capacity(desks.len());
        for desk in desks {
            dirs.push(desk.lock().await.finish().await);
        }
        self.pool.close().await;
        dirs
    }
}

/// Finishes a session's desk when the last handle of its server is dropped,
/// which the MCP service does when the session ends.
pub(super) struct FinishOnDrop(pub(super) Arc<Mutex<Desk>>);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        let desk = self.0.clone();
        // With no runtime left, the server's own end finishes it.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                desk.lock().await.finish().await;
            });
        }
    }
}
