//! The browser behind the MCP tools: one session, its executor and its run
//! directory, driven call by call (the tools are in tools.rs, what is
//! journaled of them in record.rs).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use rmcp::service::{Peer, RoleServer};

use crate::act::Executor;
use crate::agent::{self, SetupError, StartRecord};
use crate::browser::{BrowserError, Session};
use crate::clock::utc_rfc3339;
use crate::commands::Step;
use crate::journal::{Journal, JournalError};
use crate::records::{BatchReport, Shown};
use crate::safety::{ConfirmPolicy, DomainGuard};
use crate::site::SiteHold;
use crate::storage::{Item, StorageError, StorageState};

use super::consent::{ElicitConfirmer, PeerSlot};
use super::options::{McpOptions, ToolOutput};

/// Why a tool found no page to work on.
#[derive(Debug, thiserror::Error)]
pub(super) enum DeskError {
    /// No browser has opened a page yet.
    #[error("no page is open: call open with a URL first")]
    NoPage,
    /// The browser went away.
    #[error("the browser was lost (it crashed or was closed); open a page to start a new one")]
    Lost,
    /// The domain guard or the recorded site could not be set up.
    #[error("{0}")]
    Setup(SetupError),
    /// The browser did not start.
    #[error("the browser could not start: {0}")]
    Start(BrowserError),
    /// `--storage-state` could not be loaded into it.
    #[error("the storage state could not be loaded: {0}")]
    StorageState(StorageError),
}

/// The browser, its executor and the session's journal.
pub struct Desk {
    pub(super) options: McpOptions,
    pub(super) journal: Journal,
    pub(super) started: Instant,
    pub(super) guard: Option<DomainGuard>,
    /// The site recorded, or answered from a recording, from the first
    /// browser on.
    pub(super) site: Option<SiteHold>,
    pub(super) session: Option<Session>,
    pub(super) exec: Option<Executor>,
    pub(super) shown: Option<Shown>,
    /// Looks saved so far (each screenshot's number).
    pub(super) looks: usize,
    /// Steps journaled so far.
    pub(super) steps: usize,
    /// The client of the call under way, asked to confirm destructive actions.
    pub(super) peer: PeerSlot,
    /// The localStorage of each origin seen, for the state saved at the end.
    pub(super) local_storage: BTreeMap<String, Vec<Item>>,
    /// The session's end was written.
    pub(super) finished: bool,
    /// The files downloads saved.
    pub(super) downloads: Vec<crate::files::DownloadedFile>,
    /// The region a ZOOM asked to see closer, for the next look.
    pub(super) zoom: Option<crate::records::ZoomRequest>,
    /// Cookie banners answered by rule already told.
    pub(super) consent_told: usize,
}

impl Desk {
    /// Opens the session's run directory; the browser starts at the first
    /// call that needs it.
    pub fn new(mut options: McpOptions) -> Result<Desk, JournalError> {
        let peer = PeerSlot::default();
        // `ask` asks the person at the client, where it supports elicitation.
        if options.act.confirm.policy == ConfirmPolicy::Ask {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let confirmer = ElicitConfirmer::new(peer.clone(), runtime);
                options.act.confirm = options
                    .act
                    .confirm
                    .clone()
                    .with_confirmer(Arc::new(confirmer));
            }
        }
        let mut journal = match &options.out {
            Some(dir) => Journal::create(dir)?,
            None => Journal::create_in(&options.runs_root, "mcp session")?,
        };
        agent::keep_downloads_in(&mut options.act, journal.dir());
        journal.redact(options.act.secrets.clone());
        journal.write(&StartRecord {
            kind: "start",
            task: "an MCP session: the client's model gives the commands".into(),
            url: String::new(),
            model: "mcp client".into(),
            started: utc_rfc3339(SystemTime::now()),
            seamark: env!("CARGO_PKG_VERSION").to_string(),
            max_steps: 0,
            policy: None,
        })?;
        Ok(Desk {
            options,
            journal,
            started: Instant::now(),
            guard: None,
            site: None,
            session: None,
            exec: None,
            shown: None,
            zoom: None,
            consent_told: 0,
            looks: 0,
            steps: 0,
            peer,
            local_storage: BTreeMap::new(),
            finished: false,
            downloads: Vec::new(),
        })
    }

    /// The client of the call under way: a destructive action is put to it.
    pub fn set_peer(&self, peer: Peer<RoleServer>) {
        if let Ok(mut slot) = self.peer.lock() {
            *slot = Some(peer);
        }
    }

    /// The run directory.
    pub fn dir(&self) -> PathBuf {
        self.journal.dir().to_path_buf()
    }

    /// Starts the browser (and the domain guard) unless it runs.
    pub(super) async fn ensure(&mut self) -> Result<(), DeskError> {
        if self.alive().is_ok() {
            return Ok(());
        }
        // The guard outlives a browser that died: the next one is routed through it too.
        if self.options.act.domains.is_active() && self.guard.is_none() {
            let attached = self.options.browser.cdp.is_some()
                || self.options.pool.as_ref().is_some_and(|p| !p.launches());
            let guard =
                agent::start_guard(&mut self.options.act, &mut self.options.browser, attached)
                    .await
                    .map_err(DeskError::Setup)?;
            self.guard = Some(guard);
        }
        // The recording, too, outlives a browser that died: it goes on in
        // the next one.
        if self.site.is_none() {
            self.site = agent::hold_site(
                &self.options.site,
                self.options.fixed_clock,
                &self.options.act.secrets,
                &mut self.options.browser,
                self.journal.dir(),
                self.guard.as_ref(),
            )
            .map_err(DeskError::Setup)?;
        }
        let session = match &self.options.pool {
            Some(pool) => pool.open(&self.options.browser).await,
            None => Session::start(&self.options.browser).await,
        }
        .map_err(DeskError::Start)?;
        if let Some(path) = &self.options.storage_state {
            let loaded = match StorageState::read(path) {
                Ok(state) => state.apply(&session).await,
                Err(e) => Err(e),
            };
            if let Err(e) = loaded {
                session.close().await;
                return Err(DeskError::StorageState(e));
            }
        }
        let exec = Executor::new(&session, self.options.act.clone()).await;
        self.session = Some(session);
        self.exec = Some(exec);
        self.consent_told = 0;
        Ok(())
    }

    /// Whether a browser runs; one that died is forgotten (dropping it kills
    /// what is left of it and removes its profile), with a message saying so.
    pub(super) fn alive(&mut self) -> Result<(), DeskError> {
        match self.session.as_ref().map(Session::is_alive) {
            None => Err(DeskError::NoPage),
            Some(true) => Ok(()),
            Some(false) => {
                self.session = None;
                self.exec = None;
                self.shown = None;
                Err(DeskError::Lost)
            }
        }
    }

    /// Forgets a browser that stopped answering, so the next call starts one.
    pub(super) async fn lose_browser(&mut self, why: &str) -> ToolOutput {
        if let Some(s) = self.session.take() {
            s.close().await;
        }
        self.exec = None;
        self.shown = None;
        ToolOutput::error(format!(
            "{why}. The browser was lost; the next call starts a new one (open a page first)"
        ))
    }

    /// Runs steps on the current page.
    pub(super) async fn run(&mut self, steps: &[Step]) -> Result<BatchReport, DeskError> {
        self.alive()?;
        let (Some(session), Some(exec)) = (self.session.as_mut(), self.exec.as_mut()) else {
            return Err(DeskError::NoPage);
        };
        if exec.observation().is_none() {
            // Commands name ids of an observation: make one first.
            let _ = exec.observe(session).await;
        }
        Ok(exec.run(session, steps).await)
    }
}
