//! The browser behind the MCP tools: one session, its executor and its run
//! directory, driven call by call. Every call that acts is journaled as a
//! step of a run (the observation it was planned on, the commands, their
//! outcomes), so a session is reported like a run.
use crate::records::CheckRecord;
use crate::records::StepMark;

use crate::records::BatchReport;
use crate::records::Finish;

use crate::act::{ActOptions, Executor};
use crate::agent;
use crate::agent::view::{self, ModelView};
use crate::agent::{RunResult, RunStatus, StartRecord, StepRecord, StepTimings};
use crate::brain::Image;
use crate::browser::{BrowserOptions, Pool, Session};
use crate::check::Check;
use crate::clock::utc_rfc3339;
use crate::commands::{self, Command, ReadTarget, Step};
use crate::journal::{Journal, JournalError};
use crate::perceive::{self, Observation};
use crate::records::Shown;
use crate::safety::{ConfirmPolicy, DomainGuard};
use crate::site::{ClockStart, SiteHold, SiteUse};
use crate::skill::{Follow, Found, Params, Skill, SkillStore};
use crate::storage::{Item, StorageState};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::consent::{ElicitConfirmer, PeerSlot};
use rmcp::service::{Peer, RoleServer};
use std::sync::Arc;

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

/// The browser, its executor and the session's journal.
pub struct Desk {
    options: McpOptions,
    journal: Journal,
    started: Instant,
    guard: Option<DomainGuard>,
    /// The site recorded, or answered from a recording, from the first
    /// browser on.
    site: Option<SiteHold>,
    session: Option<Session>,
    exec: Option<Executor>,
    shown: Option<Shown>,
    /// Looks saved so far (each screenshot's number).
    looks: usize,
    /// Steps journaled so far.
    steps: usize,
    /// The client of the call under way, asked to confirm destructive actions.
    peer: PeerSlot,
    /// The localStorage of each origin seen, for the state saved at the end.
    local_storage: BTreeMap<String, Vec<Item>>,
    /// The session's end was written.
    finished: bool,
    /// The files downloads saved.
    downloads: Vec<crate::files::DownloadedFile>,
    /// The region a ZOOM asked to see closer, for the next look.
    zoom: Option<crate::records::ZoomRequest>,
    /// Cookie banners answered by rule already told.
    consent_told: usize,
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
    async fn ensure(&mut self) -> Result<(), String> {
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
                    .map_err(|e| e.to_string())?;
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
            )
            .map_err(|e| e.to_string())?;
        }
        let session = match &self.options.pool {
            Some(pool) => pool.open(&self.options.browser).await,
            None => Session::start(&self.options.browser).await,
        }
        .map_err(|e| format!("the browser could not start: {e}"))?;
        if let Some(path) = &self.options.storage_state {
            let loaded = match StorageState::read(path) {
                Ok(state) => state.apply(&session).await,
                Err(e) => Err(e),
            };
            if let Err(e) = loaded {
                session.close().await;
                return Err(format!("the storage state could not be loaded: {e}"));
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
    fn alive(&mut self) -> Result<(), String> {
        match self.session.as_ref().map(Session::is_alive) {
            None => Err("no page is open: call open with a URL first".into()),
            Some(true) => Ok(()),
            Some(false) => {
                self.session = None;
                self.exec = None;
                self.shown = None;
                Err(
                    "the browser was lost (it crashed or was closed); open a page to start a \
                     new one"
                        .into(),
                )
            }
        }
    }

    /// Forgets a browser that stopped answering, so the next call starts one.
    async fn lose_browser(&mut self, why: &str) -> ToolOutput {
        if let Some(s) = self.session.take() {
            s.close().await;
        }
        self.exec = None;
        self.shown = None;
        ToolOutput::error(format!(
            "{why}. The browser was lost; the next call starts a new one (open a page first)"
        ))
    }

    /// `open`: navigates and shows the page.
    pub async fn open(&mut self, target: &str, image: bool) -> ToolOutput {
        let url = match crate::start_url::to_url(target) {
            Ok(u) => u,
            Err(e) => return ToolOutput::error(format!("bad URL: {e}")),
        };
        if let Some(why) = self.options.act.domains.url_refusal(&url) {
            return ToolOutput::error(format!("refused by the domain policy: {why}"));
        }
        if let Err(why) = self.ensure().await {
            return ToolOutput::error(why);
        }
        let Some(session) = self.session.as_mut() else {
            return ToolOutput::error("no browser");
        };
        if let Err(e) = session
            .navigate(&url, self.options.act.navigation_timeout)
            .await
        {
            if session.page().url().await.is_err() {
                return self
                    .lose_browser(&format!("the page could not be opened: {e}"))
                    .await;
            }
            return ToolOutput::error(format!("the page could not be opened: {e}"));
        }
        // A fresh executor: the ids and typed fields of the page before are gone.
        let exec = Executor::new(session, self.options.act.clone()).await;
        self.exec = Some(exec);
        self.observe(image).await
    }

    /// `observe`: the marked screenshot and the list of the page as it is.
    pub async fn observe(&mut self, image: bool) -> ToolOutput {
        if let Err(why) = self.alive() {
            return ToolOutput::error(why);
        }
        let (Some(session), Some(exec)) = (self.session.as_ref(), self.exec.as_mut()) else {
            return ToolOutput::error("no page is open: call open with a URL first");
        };
        // A cookie banner being answered by rule is not shown.
        session.consent_settled().await;
        let obs = match exec.observe(session).await {
            Ok(o) => {
                let mut o = o.clone();
                let handled = session.consent_handled();
                let new = handled.get(self.consent_told..).unwrap_or_default();
                o.notes.extend(crate::browser::consent_note(new));
                self.consent_told = handled.len();
                o
            }
            Err(e) => {
                return self
                    .lose_browser(&format!("the page could not be read: {e}"))
                    .await
            }
        };
        // Each origin's localStorage is read while its page is open: the
        // state saved at the end holds every origin the session went to.
        if self.options.save_storage_state.is_some() {
            if let Err(e) = StorageState::capture(session, &mut self.local_storage).await {
                tracing::debug!("the page's storage was not read: {e}");
            }
        }
        let mut out = self.show(&obs, image);
        if let (Some(zoom), true, false) = (self.zoom.take(), image, out.is_error) {
            self.add_close_look(&obs, zoom, &mut out).await;
        }
        out
    }

    /// `observe` with a region to see closer (an id, or two corners of the
    /// last image), as `ZOOM` asks for it.
    pub async fn observe_closer(&mut self, region: &str) -> ToolOutput {
        let steps = match commands::parse(&format!("ZOOM:{region}")) {
            Ok(steps) => steps,
            Err(e) => {
                return ToolOutput::error(format!(
                    "the zoom region could not be read ({e}): give an id, as \"12\", or two \
                     corners of the last image, as \"@400,200:@600,320\""
                ))
            }
        };
        let report = match self.run(&steps).await {
            Ok(r) => r,
            Err(why) => return ToolOutput::error(why),
        };
        if report.failed() {
            return ToolOutput::error(batch_text(&report));
        }
        self.zoom = report.zoom;
        self.observe(true).await
    }

    /// Takes the close look asked for on the page just observed, keeps it in
    /// the session's directory, and adds it (and what it shows) to `out`.
    async fn add_close_look(
        &mut self,
        obs: &Observation,
        zoom: crate::records::ZoomRequest,
        out: &mut ToolOutput,
    ) {
        let (Some(session), Some(exec)) = (self.session.as_ref(), self.exec.as_ref()) else {
            return;
        };
        let secrets = &self.options.act.secrets;
        match view::close_look(session, exec, secrets, obs, zoom).await {
            Ok(look) => {
                let _ = self.journal.save_close_look(self.looks, &look.full_png);
                out.text.push_str("\n\n");
                out.text
                    .push_str(&look.note("the second image is", "the first (the screenshot)"));
                out.close_look = Some(look.sent);
            }
            Err(why) => {
                out.text
                    .push_str(&format!("\n\nthe close look could not be taken: {why}"));
            }
        }
    }

    fn show(&mut self, obs: &Observation, image: bool) -> ToolOutput {
        let Some(exec) = self.exec.as_mut() else {
            return ToolOutput::error("no page is open: call open with a URL first");
        };
        let secrets = &self.options.act.secrets;
        let view = match view::model_view(
            obs,
            exec,
            secrets,
            self.options.scrub,
            self.options.list_cap,
        ) {
            Ok(v) => v,
            Err(why) => return ToolOutput::error(why.to_string()),
        };
        self.looks += 1;
        let screenshot = match self.journal.save_image(self.looks, "png", &view.full_png) {
            Ok(name) => name,
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        exec.set_screenshot(Some(self.journal.dir().join(&screenshot)));
        let mut notes = obs.notes.clone();
        notes.extend(view.secrets_note());
        notes.extend(agent::view::files_note(
            obs,
            self.options.act.files.as_ref(),
        ));
        let text = page_text(obs, &view, &notes);
        self.shown = Some(Shown {
            url: obs.url.clone(),
            title: view.title.clone(),
            signature: obs.signature.clone(),
            elements: view.elements.clone(),
            notes,
            screenshot,
        });
        ToolOutput {
            text: self.options.act.secrets.redact(&text),
            image: image.then_some(view.sent),
            close_look: None,
            is_error: false,
        }
    }

    /// `act`: a batch of commands, run by the executor with its rules.
    pub async fn act(&mut self, commands: &str, expect: &[Check], image: bool) -> ToolOutput {
        let steps = match commands::parse(commands) {
            Ok(s) if s.is_empty() => return ToolOutput::error("no command given"),
            // Through MCP the client's model talks to the person itself.
            Ok(s) if s.iter().any(|s| matches!(s.command, Command::Ask { .. })) => {
                return ToolOutput::error(
                    "ASK is for seamark's own runs: here, ask the person yourself; nothing was done",
                )
            }
            Ok(s) => s,
            Err(e) => {
                return ToolOutput::error(format!(
                    "the commands could not be read: {e}. One command per line, as CLICK:3 or \
                     TYPE:5:John Smith"
                ))
            }
        };
        let t = Instant::now();
        let report = match self.run(&steps).await {
            Ok(r) => r,
            Err(why) => return ToolOutput::error(why),
        };
        let act_ms = t.elapsed().as_secs_f64() * 1e3;
        self.zoom = report.zoom;
        let mut failed = report.failed();
        let mut text = batch_text(&report);
        self.journal_step(commands, &steps, &report, act_ms, None);
        if !expect.is_empty() {
            let (held, lines) = self.expect(expect).await;
            failed |= !held;
            text.push_str("\n\nexpected:\n");
            text.push_str(&lines);
        }
        let after = self.observe(image).await;
        text.push_str("\n\n");
        text.push_str(&after.text);
        ToolOutput {
            text: self.options.act.secrets.redact(&text),
            image: after.image,
            close_look: after.close_look,
            is_error: failed || after.is_error,
        }
    }

    /// Checks the page after `act`: whether every check held, and a line
    /// for each, journaled as the step's checks.
    async fn expect(&mut self, checks: &[Check]) -> (bool, String) {
        let mut lines = Vec::new();
        let mut held = true;
        for check in checks {
            let look = match self.session.as_ref() {
                Some(session) => Some(crate::check::look(session, check).await),
                None => None,
            };
            let (passed, detail) = crate::check::judge(check, None, look, "no page is open");
            // The session's journal is the client's to read too: sealed alike.
            let detail = crate::check::told(check, &detail, !self.options.act.secrets.is_empty());
            held &= passed;
            lines.push(format!(
                "{} {:?} {}: {detail}",
                check.kind(),
                check.wanted(),
                if passed { "held" } else { "did NOT hold" }
            ));
            let record = CheckRecord::new(self.steps, check.kind(), check.wanted(), passed, detail);
            if let Err(e) = self.journal.write(&record) {
                tracing::warn!("the session's journal could not be written: {e}");
            }
        }
        (held, lines.join("\n"))
    }

    /// `skill`: opens `url` and does `task` from the skill that fits it,
    /// with no model, while each page fits; says where it stopped and why,
    /// and shows the page. No skill fits: says which tasks the site's skills
    /// do, and nothing runs.
    pub async fn skill(&mut self, task: &str, url: &str, image: bool) -> ToolOutput {
        let Some(dir) = self.options.skills.clone() else {
            return ToolOutput::error(
                "seamark mcp was started without --skills DIR: no skill can be followed",
            );
        };
        let mut told = Vec::new();
        let (skill, params) = match skill_for(&dir, task, url, &mut told) {
            Ok(found) => found,
            Err(why) => return ToolOutput::error(why),
        };
        let opened = self.open(url, false).await;
        if opened.is_error {
            return opened;
        }
        let mut follow = Follow::new(skill, params);
        let name = follow.name().to_string();
        let mut ending = None;
        for _ in 0..=follow.skill().steps.len() {
            let obs = match self.observe(false).await {
                out if out.is_error => return out,
                _ => match self.exec.as_ref().and_then(Executor::observation) {
                    Some(obs) => obs.clone(),
                    None => return ToolOutput::error("no page is open"),
                },
            };
            let planned = match follow.plan(&obs) {
                Ok(p) => p,
                Err(why) => {
                    ending = Some(format!("it stops here: {why}. Go on with observe and act"));
                    break;
                }
            };
            let t = Instant::now();
            let report = match self.run(&planned.steps).await {
                Ok(r) => r,
                Err(why) => return ToolOutput::error(why),
            };
            let answer: Vec<String> = planned.steps.iter().map(|s| s.to_string()).collect();
            let mark = StepMark {
                name: name.clone(),
                step: Some(planned.step),
                took_over: None,
            };
            let ms = t.elapsed().as_secs_f64() * 1e3;
            self.journal_step(&answer.join("\n"), &planned.steps, &report, ms, Some(mark));
            told.push(format!("step {}:\n{}", planned.step, batch_text(&report)));
            if let Some(Finish::Complete { summary }) = &report.finish {
                ending = Some(format!("the task is done: {summary}"));
                break;
            }
            if report.failed() || !report.dropped.is_empty() {
                follow.stop_with("a step did not run as learned".into());
            }
        }
        let failed = ending
            .as_deref()
            .is_none_or(|e| !e.starts_with("the task is done"));
        let after = self.observe(image).await;
        let text = format!(
            "skill {name}: {} steps with no model call; {}\n{}\n\n{}",
            follow.done(),
            ending.unwrap_or_else(|| "its steps ran out".into()),
            told.join("\n"),
            after.text
        );
        ToolOutput {
            text: self.options.act.secrets.redact(&text),
            image: after.image,
            close_look: after.close_look,
            is_error: failed || after.is_error,
        }
    }

    /// `read`: the page's content as Markdown, or a part of it.
    pub async fn read(&mut self, of: ReadTarget) -> ToolOutput {
        let step = Step {
            command: Command::Read { of },
            echo: None,
        };
        let report = match self.run(std::slice::from_ref(&step)).await {
            Ok(r) => r,
            Err(why) => return ToolOutput::error(why),
        };
        let failed = report.failed();
        let text = if failed {
            batch_text(&report)
        } else {
            report.readings.join("\n\n")
        };
        let text = match &self.exec {
            Some(exec) => {
                view::privacy(exec, &self.options.act.secrets, self.options.scrub).reading(&text)
            }
            None => text,
        };
        ToolOutput {
            text,
            image: None,
            close_look: None,
            is_error: failed,
        }
    }

    /// `tabs`: the open tabs; with `select` a switch to one, with `close`
    /// the tab shown closed (back to the one before it). A switch or a
    /// close observes the tab shown then.
    pub async fn tabs(&mut self, select: Option<usize>, close: bool) -> ToolOutput {
        if let Err(why) = self.alive() {
            return ToolOutput::error(why);
        }
        let (Some(session), Some(exec)) = (self.session.as_mut(), self.exec.as_mut()) else {
            return ToolOutput::error("no browser yet: call open with a URL first");
        };
        let changed = match (select, close) {
            (Some(_), true) => {
                return ToolOutput::error("give select or close, not both: nothing was done")
            }
            (Some(n), false) => Some(exec.switch_tab(session, n).await),
            (None, true) => Some(exec.close_tab(session).await),
            (None, false) => None,
        };
        match changed {
            Some(Ok(message)) => {
                let mut out = self.observe(false).await;
                out.text = format!("{message}\n\n{}", out.text);
                out
            }
            Some(Err(why)) => ToolOutput::error(why.to_string()),
            None => match exec.tabs(session).await {
                Ok(tabs) => ToolOutput {
                    text: self
                        .options
                        .act
                        .secrets
                        .redact(&tabs.iter().map(|t| t.line()).collect::<Vec<_>>().join("\n")),
                    image: None,
                    close_look: None,
                    is_error: false,
                },
                Err(why) => self.lose_browser(&why.to_string()).await,
            },
        }
    }

    /// Runs steps on the current page.
    async fn run(&mut self, steps: &[Step]) -> Result<BatchReport, String> {
        self.alive()?;
        let (Some(session), Some(exec)) = (self.session.as_mut(), self.exec.as_mut()) else {
            return Err("no page is open: call open with a URL first".into());
        };
        if exec.observation().is_none() {
            // Commands name ids of an observation: make one first.
            let _ = exec.observe(session).await;
        }
        Ok(exec.run(session, steps).await)
    }

    fn journal_step(
        &mut self,
        answer: &str,
        steps: &[Step],
        report: &BatchReport,
        act_ms: f64,
        skill: Option<StepMark>,
    ) {
        self.steps += 1;
        let shown = self.shown.take().unwrap_or_default();
        let record = StepRecord {
            answer: Some(answer.to_string()),
            commands: steps.iter().map(|s| s.to_string()).collect(),
            report: Some(report.clone()),
            skill,
            timings: StepTimings {
                act_ms,
                ..StepTimings::default()
            },
            ..StepRecord::new(self.steps, shown)
        };
        if let Err(e) = self.journal.write(&record) {
            tracing::warn!("the session's journal could not be written: {e}");
        }
        for file in report.downloads.iter().filter_map(|d| d.saved.clone()) {
            let record = crate::records::DownloadRecord {
                kind: "download",
                step: self.steps,
                file: file.clone(),
            };
            if let Err(e) = self.journal.write(&record) {
                tracing::warn!("the session's journal could not be written: {e}");
            }
            self.downloads.push(file);
        }
        for checkpoint in &report.checkpoints {
            let checkpoint = crate::records::CheckpointRecord {
                step: self.steps,
                ..checkpoint.clone()
            };
            if let Err(e) = self.journal.write(&checkpoint) {
                tracing::warn!("the session's journal could not be written: {e}");
            }
        }
    }

    /// Writes the browser's state to `--save-storage-state`'s file, when
    /// asked; one that cannot be written is said in the log, and costs the
    /// session nothing else.
    async fn save_state(&mut self, session: &Session) {
        let Some(path) = &self.options.save_storage_state else {
            return;
        };
        let saved = match tokio::time::timeout(
            Duration::from_secs(10),
            StorageState::capture(session, &mut self.local_storage),
        )
        .await
        {
            Ok(Ok(state)) => state.write(path, &self.options.act.secrets),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(crate::storage::StorageError::Browser("read in 10 s".into())),
        };
        match saved {
            Ok(()) => tracing::info!("the browser's state was saved to {}", path.display()),
            Err(e) => tracing::warn!("the storage state was not saved: {e}"),
        }
    }

    /// Ends the session: the end record, the report, the browser closed.
    /// Once: a desk already finished is left as it is.
    pub async fn finish(&mut self) -> PathBuf {
        if std::mem::replace(&mut self.finished, true) {
            return self.dir();
        }
        agent::drop_empty_downloads(&self.dir());
        let result = RunResult {
            success: true,
            status: RunStatus::Done,
            answer: None,
            reason: "the MCP session ended".into(),
            steps: self.steps,
            tokens: Default::default(),
            cost_usd: None,
            run_dir: self.dir(),
            wall_time_s: self.started.elapsed().as_secs_f64(),
            model: "mcp client".into(),
            divergences: Vec::new(),
            data: None,
            prompt_tokens: Vec::new(),
            report: None,
            skill: None,
            downloads: self.downloads.clone(),
            judge: None,
            site: None,
        };
        if let Some(s) = self.session.take() {
            self.save_state(&s).await;
            let _ = tokio::time::timeout(Duration::from_secs(10), s.close()).await;
        }
        let result = RunResult {
            site: self.site.as_ref().and_then(|hold| {
                hold.finish(&self.dir())
                    .map_err(|e| tracing::warn!("the session's site was not kept: {e}"))
                    .ok()
            }),
            ..result
        };
        if let Err(e) = agent::write_end(&mut self.journal, result, true) {
            tracing::warn!("the session's end could not be written: {e}");
        }
        self.dir()
    }
}

/// The page as the client's model reads it: URL, title, viewport, notes,
/// then the element list.
fn page_text(obs: &Observation, view: &ModelView, notes: &[String]) -> String {
    let mut text = format!(
        "URL: {}\nTitle: {}\nViewport: {}x{} at scroll {},{}\n",
        obs.url, view.title, obs.viewport.width, obs.viewport.height, obs.scroll.x, obs.scroll.y
    );
    for n in notes {
        text.push_str(&format!("Note: {n}\n"));
    }
    text.push_str("Elements ([id] role \"name\" state; the ids match the marks on the image):\n");
    text.push_str(&view.elements);
    text
}

/// Each command's outcome, and what was not run and why.
fn batch_text(report: &BatchReport) -> String {
    let mut text = report.feedback();
    for a in &report.answers {
        text.push_str(&format!("\nanswer recorded: {a}"));
    }
    // The client reads the file where it is: it runs on this machine.
    for f in report.downloads.iter().filter_map(|d| d.saved.as_ref()) {
        text.push_str(&format!(
            "\ndownloaded file: {} ({} bytes, {}, sha256 {}) from {}",
            f.path.display(),
            f.size,
            f.mime,
            f.sha256,
            f.url
        ));
    }
    text
}

/// The skill of `dir` that does `task` from `url`, with its values; else
/// all that was told (files ignored, skills that fit alike, the site's
/// skills). What is told on the way goes into `told`.
fn skill_for(
    dir: &Path,
    task: &str,
    url: &str,
    told: &mut Vec<String>,
) -> Result<(Skill, Params), String> {
    let listed = SkillStore::new(dir).list();
    told.extend(listed.iter().filter_map(|l| {
        let why = l.skill.as_ref().err()?;
        Some(format!("skill file {} is ignored: {why}", l.path.display()))
    }));
    match SkillStore::find(&listed, task, url) {
        Found::One(skill, params) => Ok((*skill, params)),
        Found::Several(names) => {
            told.push(format!(
                "skills {} all fit this task: none is followed (remove all but one with \
                 seamark skill rm)",
                names.join(", ")
            ));
            Err(told.join("\n"))
        }
        Found::SameSite(same) => {
            told.push(format!(
                "no skill does this task as worded; this site's skills do: {}. Call skill \
                 again in those words with your values, or do the task with observe and act",
                same.iter()
                    .map(|s| format!("\"{}\"", s.task))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
            Err(told.join("\n"))
        }
        Found::Nothing => {
            told.push(
                "no skill of this site does this task: do it with open, observe and act".into(),
            );
            Err(told.join("\n"))
        }
    }
}
