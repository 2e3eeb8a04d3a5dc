//! The orchestrator: perceive → mark → ask the model → act, until the task is
//! done, the model stops with a reason, or a budget runs out. The loop is
//! deterministic code; the model only proposes commands.
//!
//! ```no_run
//! # async fn demo() -> Result<(), seamark::agent::AgentError> {
//! use seamark::agent::Agent;
//!
//! let result = Agent::builder()
//!     .task("Find the price of the Pro plan")
//!     .url("https://example.com/pricing")
//!     .model("openai/gpt-4o")?
//!     .max_steps(15)
//!     .build()?
//!     .run()
//!     .await?;
//! println!("{} after {} steps: {:?}", result.reason, result.steps, result.answer);
//! # Ok(())
//! # }
//! ```

pub(crate) mod ask;
mod history;
pub mod policy;
pub(crate) mod prompt;
pub mod resume;
mod skill_use;
mod step;
pub(crate) mod view;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tracing::Instrument;

use crate::act::{ActOptions, Executor};
use crate::brain::{self, Brain, BrainError, HttpPolicy, Image, Prices, Usage};
use crate::browser::{BrowserOptions, Pool, Session};
use crate::clock::utc_rfc3339;
use crate::journal::{Journal, JournalError};
use crate::judge::Judge;
use crate::perceive;
use crate::safety::{self, DomainGuard, Secrets};
use crate::site::{ClockStart, SiteHold, SiteUse};
use crate::storage::StorageState;

pub use crate::records::{
    ActRecord, Asked, ResumeRecord, RunPolicy, RunResult, RunStatus, SkillReport, Spend,
    StartRecord, StepRecord, StepTimings,
};
use ask::Answer;
pub use ask::Asker;
pub use prompt::{instruction_like, SYSTEM};
pub use resume::{Resume, ResumeError};
pub use skill_use::LearnedSkill;

/// Errors that keep a run from starting. Once it runs, every ending is a
/// [`RunResult`].
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The builder lacks something.
    #[error("{0}")]
    Config(String),
    /// No model, or an unusable one.
    #[error(transparent)]
    Brain(#[from] BrainError),
    /// The run directory could not be written.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Why what a run goes through (its domain guard, its recorded site) could
/// not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The guard's proxy could not listen.
    #[error("the domain guard could not start: {0}")]
    Guard(std::io::Error),
    /// The start page is outside the domain policy.
    #[error("the start URL is refused by the domain policy: {0}")]
    StartRefused(String),
    /// The recording could not be opened or begun.
    #[error("{0}")]
    Site(crate::site::SiteError),
}

/// Limits and knobs of a run.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Most steps (one model call each).
    pub max_steps: usize,
    /// Most steps in a row whose answer could not be read or whose commands failed.
    pub max_failures: usize,
    /// Stop once the run has cost this much (USD), when the model's price is known.
    pub max_cost: Option<f64>,
    /// Stop once the run has taken this long.
    pub max_time: Option<Duration>,
    /// Screenshots a step may send: the current one, and the ones before it
    /// when the last step's changes are not all told in words.
    pub images: usize,
    /// Past steps shown in full in the history; older ones are folded to a
    /// line each, the oldest into ranges (see `agent/history.rs`).
    pub history: usize,
    /// Most elements in the list the model reads.
    pub list_cap: usize,
    /// The exact run directory; else a new one under `runs_root`.
    pub out: Option<PathBuf>,
    /// Where run directories go.
    pub runs_root: PathBuf,
    /// How the browser starts.
    pub browser: BrowserOptions,
    /// How commands run.
    pub act: ActOptions,
    /// Prices for cost accounting.
    pub prices: Prices,
    /// Tag emails, phone numbers, card numbers and tokens in what the model reads.
    pub scrub: bool,
    /// Write `report.html` and `run.gif` into the run directory when the run ends.
    pub report: bool,
    /// Cookies and localStorage to load before the first page (Playwright's
    /// `storageState` file).
    pub storage_state: Option<PathBuf>,
    /// Where to write the browser's cookies and localStorage when the run
    /// ends (mode 0600).
    pub save_storage_state: Option<PathBuf>,
    /// Hand the browser over to the person (the [`Asker`]) when a CAPTCHA
    /// stands in the way: only when they can see it (a headful browser).
    pub hand_over: bool,
    /// The skills folder: a task that fits one of its skills is done from
    /// it without the model while the pages fit, and a run that ends done
    /// is learned into it (see [`crate::skill`]). None: no skills.
    pub skills: Option<PathBuf>,
    /// What must hold before COMPLETE is taken: each is checked on the live
    /// page (or the answer) when the model says the task is done; one that
    /// fails refuses COMPLETE, and a second refusal ends the run
    /// [`RunStatus::Unverified`].
    pub expect: Vec<crate::check::Check>,
    /// The network as it is, recorded into the run directory's `site.har`,
    /// or a recording instead of it (see [`crate::site`]).
    pub site: SiteUse,
    /// The pages' clock and `Math.random` fixed, from this start.
    pub fixed_clock: Option<ClockStart>,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            max_steps: 30,
            max_failures: 3,
            max_cost: None,
            max_time: None,
            images: 2,
            history: 5,
            list_cap: perceive::DEFAULT_LIST_CAP,
            out: None,
            runs_root: PathBuf::from("runs"),
            browser: BrowserOptions::default(),
            act: ActOptions::default(),
            prices: Prices::built_in(),
            scrub: true,
            report: true,
            storage_state: None,
            save_storage_state: None,
            hand_over: false,
            skills: None,
            expect: Vec::new(),
            site: SiteUse::Live,
            fixed_clock: None,
        }
    }
}

/// Hears about a run as it goes (the CLI prints progress from it).
pub trait Progress: Send + Sync {
    /// The model is about to be asked.
    fn thinking(&self, _step: usize, _max_steps: usize, _url: &str) {}
    /// The model answered (or failed to): its commands are about to run,
    /// and may put a question to the person.
    fn answered(&self, _step: usize) {}
    /// A step is done from a skill: no model is asked.
    fn following(&self, _step: usize, _max_steps: usize, _url: &str, _skill: &str) {}
    /// Something the person should know about skills: the one used, one
    /// ignored and why, one learned.
    fn skill_note(&self, _note: &str) {}
    /// A step ended.
    fn step(&self, _record: &StepRecord, _max_steps: usize) {}
}

/// Progress that goes nowhere.
struct Silent;
impl Progress for Silent {}

/// A task to run.
pub struct Agent {
    task: String,
    url: String,
    brain: Box<dyn Brain>,
    options: AgentOptions,
    progress: Box<dyn Progress>,
    interrupt: Option<Interrupt>,
    pool: Option<Arc<Pool>>,
    setup: Option<String>,
    last_look: Option<LastLook>,
    asker: Option<Arc<dyn Asker>>,
    resume: Option<Resume>,
    answer: Option<String>,
    /// The page a resumed run opens (the start URL otherwise).
    open_url: Option<String>,
    /// The model that judges the run at COMPLETE, if any.
    judge: Option<Judge>,
    /// Where a learned skill is left unsaved (see [`AgentBuilder::learn_into`]).
    learn_into: Option<LearnedSkill>,
}

/// A look at the final page after the last step, before the browser closes
/// (a batch scores the run on it). It is not called when the run never had a
/// page, or was interrupted.
pub type LastLook =
    Box<dyn for<'a> FnOnce(&'a Session) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> + Send>;

/// A signal that ends a run early (Ctrl-C, SIGTERM or SIGHUP in the CLI):
/// when it resolves, the step under way is dropped, the browser closed, and
/// the run ends as [`RunStatus::Interrupted`] with its end record and report
/// written. It resolves with what ended the run ("Ctrl-C", "SIGTERM"), which
/// the run's reason names.
pub type Interrupt = Pin<Box<dyn Future<Output = String> + Send>>;

/// Writes a run's end record and then, when asked, its report; the result
/// says where the report is. A report that cannot be written loses the run
/// nothing: the journal has it all, and `seamark report` writes it again.
pub(crate) fn write_end(
    journal: &mut Journal,
    mut result: RunResult,
    report: bool,
) -> Result<RunResult, JournalError> {
    journal.write(&serde_json::json!({ "kind": "end", "result": result }))?;
    if report {
        match crate::report::write(journal.dir()) {
            Ok(written) => result.report = Some(written.html),
            Err(e) => tracing::warn!("the report was not written: {e}"),
        }
    }
    Ok(result)
}

/// The folder of a run's directory that keeps its downloads.
pub const DOWNLOADS: &str = "downloads";

/// Downloads are results of a run (or an MCP session): kept in its
/// directory `dir` unless the person said where.
pub(crate) fn keep_downloads_in(act: &mut ActOptions, dir: &std::path::Path) {
    if act.download_dir.is_none() {
        act.download_dir = Some(dir.join(DOWNLOADS));
    }
}

/// At the end of a run in `dir`: one that downloaded nothing keeps no
/// empty folder for it.
pub(crate) fn drop_empty_downloads(dir: &std::path::Path) {
    let _ = std::fs::remove_dir(dir.join(DOWNLOADS));
}

/// Starts the domain guard for the executor's policy, and routes the
/// browser and the executor (its record of refusals) through it: a browser
/// seamark launches sends its requests through the guard's proxy; in one it
/// attached to, seamark's tabs check theirs with the guard's filter.
pub(crate) async fn start_guard(
    act: &mut ActOptions,
    browser: &mut BrowserOptions,
    attached: bool,
) -> Result<DomainGuard, SetupError> {
    let guard = DomainGuard::start(act.domains.clone())
        .await
        .map_err(SetupError::Guard)?;
    if attached {
        browser.request_filter = Some(guard.request_filter());
    } else {
        browser.proxy = Some(guard.addr.clone());
    }
    act.blocked = Some(guard.record());
    Ok(guard)
}

/// Records the site or answers it from a recording, as `site` says: the
/// browser's traffic and, when `fixed_clock` asks, its clock. A replay in a
/// browser seamark launches reaches no network: what the recording does not
/// answer fails.
pub(crate) fn hold_site(
    site: &SiteUse,
    fixed_clock: Option<ClockStart>,
    secrets: &Secrets,
    browser: &mut BrowserOptions,
    dir: &std::path::Path,
) -> Result<Option<SiteHold>, SetupError> {
    let hold = SiteHold::open(site, secrets, dir).map_err(SetupError::Site)?;
    if let Some(hold) = &hold {
        browser.traffic = Some(hold.traffic());
        if matches!(hold, SiteHold::Replaying(_)) && browser.cdp.is_none() {
            browser.proxy = Some(crate::browser::NO_NETWORK.to_string());
        }
    }
    if let Some(start) = fixed_clock {
        browser.place.clock = Some(SiteHold::clock(hold.as_ref(), start));
    }
    Ok(hold)
}

/// Runs `work` unless the signal comes first (then what it resolved with).
async fn until<T>(
    signal: &mut Option<Interrupt>,
    work: impl Future<Output = T>,
) -> Result<T, String> {
    match signal {
        Some(s) => tokio::select! {
            out = work => Ok(out),
            cause = s.as_mut() => Err(cause),
        },
        None => Ok(work.await),
    }
}

/// Builds an [`Agent`].
#[derive(Default)]
pub struct AgentBuilder {
    task: Option<String>,
    url: Option<String>,
    brain: Option<Box<dyn Brain>>,
    options: AgentOptions,
    progress: Option<Box<dyn Progress>>,
    http: HttpPolicy,
    interrupt: Option<Interrupt>,
    pool: Option<Arc<Pool>>,
    setup: Option<String>,
    last_look: Option<LastLook>,
    asker: Option<Arc<dyn Asker>>,
    resume: Option<Resume>,
    answer: Option<String>,
    judge: Option<Judge>,
    learn_into: Option<LearnedSkill>,
}

impl AgentBuilder {
    /// The task, in plain words.
    pub fn task(mut self, task: impl Into<String>) -> Self {
        self.task = Some(task.into());
        self
    }

    /// The start URL.
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// The model by name (`openai/<model>`, `anthropic/<model>`), keys from the environment.
    pub fn model(mut self, name: &str) -> Result<Self, AgentError> {
        self.brain = Some(brain::from_model_name(name, self.http)?);
        Ok(self)
    }

    /// Any brain.
    pub fn brain(mut self, brain: Box<dyn Brain>) -> Self {
        self.brain = Some(brain);
        self
    }

    /// A second model that judges the run when the agent says it is done,
    /// after the checks (see [`crate::judge`]): its `fail` refuses COMPLETE
    /// with its reason, as a check that fails does.
    pub fn judge(mut self, judge: Judge) -> Self {
        self.judge = Some(judge);
        self
    }

    /// Timeouts and retries of model calls (set before [`AgentBuilder::model`]).
    pub fn http(mut self, policy: HttpPolicy) -> Self {
        self.http = policy;
        self
    }

    /// Most steps.
    pub fn max_steps(mut self, n: usize) -> Self {
        self.options.max_steps = n;
        self
    }

    /// The JSON Schema the answer must follow: the result's `data` is the
    /// validated value (set after [`AgentBuilder::options`], which replaces it).
    pub fn schema(mut self, schema: crate::schema::AnswerSchema) -> Self {
        self.options.act.answer_schema = Some(std::sync::Arc::new(schema));
        self
    }

    /// All options at once.
    pub fn options(mut self, options: AgentOptions) -> Self {
        self.options = options;
        self
    }

    /// Where progress goes.
    pub fn progress(mut self, progress: Box<dyn Progress>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// A signal that interrupts the run (see [`Interrupt`]).
    pub fn interrupt(mut self, signal: impl Future<Output = String> + Send + 'static) -> Self {
        self.interrupt = Some(Box::pin(signal));
        self
    }

    /// Runs in a browser context of its own in one of the pool's browsers,
    /// instead of launching a browser (a batch's runs share browsers so).
    pub fn pool(mut self, pool: Arc<Pool>) -> Self {
        self.pool = Some(pool);
        self
    }

    /// JavaScript evaluated in the start page once it has loaded, before the
    /// first step (promises awaited): to put the page in the state the task
    /// starts from. An exception fails the run.
    pub fn setup(mut self, js: impl Into<String>) -> Self {
        self.setup = Some(js.into());
        self
    }

    /// Leave a skill the run learns in `slot` instead of saving it (see
    /// [`LearnedSkill`]).
    pub fn learn_into(mut self, slot: LearnedSkill) -> Self {
        self.learn_into = Some(slot);
        self
    }

    /// A look at the final page before the browser closes (see [`LastLook`]).
    pub fn last_look(mut self, look: LastLook) -> Self {
        self.last_look = Some(look);
        self
    }

    /// Who the model's questions (ASK) are put to, and, with
    /// [`AgentOptions::hand_over`], who is handed a CAPTCHA. Without one, a
    /// question ends the run as [`RunStatus::NeedsInput`].
    pub fn asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.asker = Some(asker);
        self
    }

    /// Goes on with a run that was cut off (see [`Resume`]): its task, URL
    /// and journal, from the step it reached. Set the options (its rules:
    /// [`RunPolicy::apply`]) before.
    pub fn resume(mut self, resume: Resume) -> Self {
        self.task = Some(resume.task.clone());
        self.url = Some(resume.url.clone());
        self.resume = Some(resume);
        self
    }

    /// The person's answer to the question a resumed run ended with (a
    /// leading `!` makes it a secret).
    pub fn answer(mut self, answer: impl Into<String>) -> Self {
        self.answer = Some(answer.into());
        self
    }

    /// Checks that task, URL and model are there.
    pub fn build(self) -> Result<Agent, AgentError> {
        let task = self
            .task
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| AgentError::Config("the task is empty".into()))?;
        let url = self
            .url
            .filter(|u| !u.trim().is_empty())
            .ok_or_else(|| AgentError::Config("no start URL".into()))?;
        let brain = self
            .brain
            .ok_or_else(|| AgentError::Brain(BrainError::NotConfigured(brain::NO_MODEL.into())))?;
        Ok(Agent {
            task,
            url,
            brain,
            options: self.options,
            progress: self.progress.unwrap_or_else(|| Box::new(Silent)),
            interrupt: self.interrupt,
            pool: self.pool,
            setup: self.setup,
            last_look: self.last_look,
            asker: self.asker,
            resume: self.resume,
            answer: self.answer,
            open_url: None,
            judge: self.judge,
            learn_into: self.learn_into,
        })
    }
}

/// The state of a run between steps.
struct Run {
    /// The system prompt, the same every step.
    system: String,
    plan: Option<String>,
    history: history::History,
    images: VecDeque<Image>,
    /// Whether the last step's changes are not all told in words (a command
    /// at a point, or one with no effect on the page's elements): then the
    /// screenshots before the current one are sent too.
    shows_before: bool,
    feedback: Option<String>,
    failures: usize,
    spend: Spend,
    answer: Option<String>,
    /// How often each (page signature, commands, outcome) came up.
    repeats: HashMap<(String, String, String), usize>,
    /// Whether the last step's commands changed anything on the page.
    progressed: bool,
    /// Whether the last batch was a skill's, settled briskly (see
    /// [`crate::act::Executor::set_brisk`]).
    settled_briskly: bool,
    divergences: Vec<String>,
    /// The impasse of the last steps, and for how many steps in a row.
    impasse: Option<(safety::Impasse, usize)>,
    /// Refusals of the domain guard already told.
    blocked_told: usize,
    /// Cookie banners answered by rule already told.
    consent_told: usize,
    /// What the last step's READ commands gave, for the next prompt.
    readings: Vec<String>,
    /// The region the last step's ZOOM asked to see closer.
    zoom: Option<crate::records::ZoomRequest>,
    /// The date and time this step's prompt tells, in the page's zone.
    now: String,
    /// A downloaded image the last step's READ asked to see.
    shown: Option<crate::records::ShownFile>,
    /// This step's extra images (a close look, a downloaded image), sent
    /// just before its screenshot only.
    close_look: Vec<Image>,
    /// The last answer that followed the schema.
    data: Option<serde_json::Value>,
    /// Each step's prompt in tokens.
    prompt_tokens: Vec<brain::PromptTokens>,
    /// The step under way (`before` until the first).
    step: usize,
    /// Steps taken before this process went on with the run (resumed).
    before: usize,
    /// Each origin's localStorage, as the looks after each step found it.
    local_storage: BTreeMap<String, Vec<crate::storage::Item>>,
    /// The skills folder's part in the run, when it has one.
    skills: Option<skill_use::Skills>,
    /// COMPLETEs the run's checks refused so far.
    refusals: usize,
    /// The checkpoints kept, as the prompt shows them: name, URL, step.
    checkpoints: Vec<(String, String, usize)>,
    /// The files downloads saved.
    downloads: Vec<crate::files::DownloadedFile>,
    /// What the judge said so far, and what it cost.
    judge: Option<crate::records::JudgeReport>,
    /// What was done with the site's traffic, at the end.
    site: Option<crate::site::SiteReport>,
}

impl Run {
    /// A run about to take its first step, with this system prompt.
    fn new(system: String) -> Run {
        Run {
            system,
            plan: None,
            history: history::History::default(),
            images: VecDeque::new(),
            shows_before: false,
            feedback: None,
            failures: 0,
            spend: Spend::default(),
            answer: None,
            repeats: HashMap::new(),
            progressed: false,
            settled_briskly: false,
            divergences: Vec::new(),
            impasse: None,
            blocked_told: 0,
            consent_told: 0,
            readings: Vec::new(),
            zoom: None,
            now: String::new(),
            shown: None,
            close_look: Vec::new(),
            data: None,
            prompt_tokens: Vec::new(),
            step: 0,
            before: 0,
            local_storage: BTreeMap::new(),
            skills: None,
            refusals: 0,
            checkpoints: Vec::new(),
            downloads: Vec::new(),
            judge: None,
            site: None,
        }
    }

    /// The screenshots the next prompt sends: every one kept when the last
    /// step's changes are not all told in words, else the current one.
    fn images_to_send(&self) -> impl Iterator<Item = &Image> {
        let skip = if self.shows_before {
            0
        } else {
            self.images.len().saturating_sub(1)
        };
        self.images.iter().skip(skip)
    }

    /// Counts what a model call cost.
    fn add_spend(&mut self, spend: Spend) {
        self.spend += spend;
    }

    /// A run going on from where `r` left it.
    fn resumed(system: String, r: &Resume) -> Run {
        let mut run = Run::new(system);
        run.plan = r.plan.clone();
        run.history = r.history.clone();
        run.spend = r.spend;
        run.answer = r.answer.clone();
        run.data = r.data.clone();
        run.prompt_tokens = r.prompt_tokens.clone();
        run.before = r.first_step.saturating_sub(1);
        run.step = run.before;
        run.downloads = r.downloads.clone();
        run
    }

    /// The ending of a run that `cause` interrupted now, and the steps it
    /// finished.
    fn interrupted(&self, cause: &str) -> (Ending, usize) {
        let reason = if self.step == self.before {
            format!("interrupted ({cause}) before step {}", self.before + 1)
        } else {
            format!(
                "interrupted ({cause}) during step {}, whose record was not written",
                self.step
            )
        };
        (
            Ending::new(RunStatus::Interrupted, reason),
            self.step.saturating_sub(1).max(self.before),
        )
    }

    /// The ending of a run whose time budget `limit` ran out now, in the
    /// middle of whatever it was doing, and the steps it finished.
    fn out_of_time(&self, limit: Duration) -> (Ending, usize) {
        let during = if self.step == self.before {
            "while the start page was opened".to_string()
        } else {
            format!("during step {}", self.step)
        };
        (
            Ending::new(
                RunStatus::Budget,
                format!("the time budget of {} s ran out {during}", limit.as_secs()),
            ),
            self.step.saturating_sub(1).max(self.before),
        )
    }
}

/// How the loop ended.
struct Ending {
    status: RunStatus,
    reason: String,
}

impl Ending {
    fn new(status: RunStatus, reason: String) -> Self {
        Self { status, reason }
    }

    fn failed(reason: String) -> Self {
        Self::new(RunStatus::Failed, reason)
    }

    /// This ending with what else went wrong after the loop (`also`): a
    /// run done is failed by it, any other ending says it too.
    fn and(self, also: Option<String>) -> Self {
        match also {
            Some(why) if self.status == RunStatus::Done => {
                Ending::failed(format!("{}; but {why}", self.reason))
            }
            Some(why) => Ending::new(self.status, format!("{}; and {why}", self.reason)),
            None => self,
        }
    }
}

impl Agent {
    /// Builds an agent.
    pub fn builder() -> AgentBuilder {
        AgentBuilder::default()
    }

    /// Runs the task to its end (or, resumed, from where it was cut off):
    /// a trace's span of its own (see [`crate::traces`]), its steps below.
    pub async fn run(self) -> Result<RunResult, AgentError> {
        let secrets = self.options.act.secrets.clone();
        let span = crate::traces::run_span(&self.task, &self.url, &self.brain.name(), &secrets);
        let out = self.run_traced().instrument(span.clone()).await;
        if let Ok(result) = &out {
            crate::traces::end_run(&span, result, &secrets);
        }
        out
    }

    async fn run_traced(mut self) -> Result<RunResult, AgentError> {
        let started = Instant::now();
        let mut journal = self.open_journal()?;
        keep_downloads_in(&mut self.options.act, journal.dir());
        let model = self.brain.name();
        let mut run = match self.resume.take() {
            None => self.begin(&mut journal, &model).await?,
            Some(r) => self.go_on(&r, &mut journal)?,
        };
        // Domain limits: every request of the browser goes through the guard.
        let guard = match self.domain_guard().await {
            Ok(g) => g,
            Err(reason) => {
                let before = run.before;
                let ending = Ending::failed(reason.to_string());
                return self.end(journal, run, started, model, ending, before);
            }
        };
        let site = match hold_site(
            &self.options.site,
            self.options.fixed_clock,
            &self.options.act.secrets,
            &mut self.options.browser,
            journal.dir(),
        ) {
            Ok(site) => site,
            Err(reason) => {
                let before = run.before;
                let ending = Ending::failed(reason.to_string());
                return self.end(journal, run, started, model, ending, before);
            }
        };
        let mut interrupt = self.interrupt.take();
        let opened = match self.pool.clone() {
            Some(pool) => until(&mut interrupt, pool.open(&self.options.browser)).await,
            None => until(&mut interrupt, Session::start(&self.options.browser)).await,
        };
        let (ending, steps) = match opened {
            Ok(Ok(mut session)) => {
                // --max-time holds inside a step too: a load, a batch of
                // commands, a check or a model call is cut at the deadline.
                let limit = self.options.max_time;
                let driven = until(&mut interrupt, async {
                    let drive = self.drive(&mut session, &mut journal, &mut run, started);
                    match limit {
                        Some(limit) => tokio::time::timeout_at((started + limit).into(), drive)
                            .await
                            .ok(),
                        None => Some(drive.await),
                    }
                })
                .await;
                let mut out = match (driven, limit) {
                    (Ok(Some(out)), _) => Ok(out),
                    (Ok(None), limit) => Ok(run.out_of_time(limit.unwrap_or_default())),
                    (Err(cause), _) => Err(cause),
                };
                if let (Ok(_), Some(look)) = (&out, self.last_look.take()) {
                    if let Err(cause) = until(&mut interrupt, look(&session)).await {
                        out = Err(cause);
                    }
                }
                let saving = self.save_storage_state(&session, &mut run).await;
                session.close().await;
                let kept = site.as_ref().and_then(|s| match s.finish(journal.dir()) {
                    Ok(report) => {
                        run.site = Some(report);
                        None
                    }
                    Err(e) => Some(e.to_string()),
                });
                let (ending, steps) = out.unwrap_or_else(|cause| run.interrupted(&cause));
                (ending.and(saving).and(kept), steps)
            }
            Ok(Err(e)) => (
                Ending::failed(format!("the browser could not start: {e}")),
                run.before,
            ),
            Err(cause) => run.interrupted(&cause),
        };
        drop(guard);
        self.end(journal, run, started, model, ending, steps)
    }

    /// The run's directory: the one resumed, `--out`, or a new one under the
    /// runs folder.
    fn open_journal(&self) -> Result<Journal, AgentError> {
        Ok(match (&self.resume, &self.options.out) {
            (Some(r), _) => Journal::create(&r.dir)?,
            (None, Some(dir)) => Journal::create(dir)?,
            (None, None) => Journal::create_in(&self.options.runs_root, &self.task)?,
        })
    }

    /// Begins a new run: its start record, and the skill it follows, if one
    /// fits.
    async fn begin(&mut self, journal: &mut Journal, model: &str) -> Result<Run, AgentError> {
        journal.redact(self.options.act.secrets.clone());
        journal.write(&StartRecord {
            kind: "start",
            task: self.task.clone(),
            url: self.url.clone(),
            model: model.to_string(),
            started: utc_rfc3339(SystemTime::now()),
            seamark: env!("CARGO_PKG_VERSION").to_string(),
            max_steps: self.options.max_steps,
            policy: Some(RunPolicy::of(&self.options)),
        })?;
        let mut run = Run::new(self.system_prompt());
        if let Some(dir) = self.options.skills.clone() {
            let (skills, usage) = skill_use::Skills::choose(
                crate::skill::SkillStore::new(dir),
                self.learn_into.clone(),
                &self.task,
                &self.url,
                self.brain.as_mut(),
                journal,
                self.progress.as_ref(),
            )
            .await;
            run.add_spend(self.spend_of(usage));
            run.skills = Some(skills);
        }
        Ok(run)
    }

    /// Saves the browser's storage state where `--save-storage-state` asked:
    /// why it could not be, if it could not.
    // `&mut self`: a shared `&Agent` is not `Send` (the agent is not `Sync`),
    // and a batch runs this future on another task.
    async fn save_storage_state(&mut self, session: &Session, run: &mut Run) -> Option<String> {
        let path = self.options.save_storage_state.as_ref()?;
        let saved = match StorageState::capture(session, &mut run.local_storage).await {
            Ok(state) => state.write(path, &self.options.act.secrets),
            Err(e) => Err(e),
        };
        // Asked for and not given: the run did not do all it was told.
        saved
            .err()
            .map(|e| format!("the storage state was not saved to {}: {e}", path.display()))
    }

    /// Takes up a resumed run: its state, the person's answer to its
    /// question, the note on what is unknown, and a `resume` record.
    fn go_on(&mut self, r: &Resume, journal: &mut Journal) -> Result<Run, AgentError> {
        let mut run = Run::resumed(self.system_prompt(), r);
        let mut feedback = vec![r.note()];
        let answer = match (&r.question, self.answer.take()) {
            (Some(q), Some(text)) => {
                let answer = Answer::take(&text, &mut self.options.act.secrets)
                    .map_err(|e| AgentError::Config(format!("the answer: {e}")))?;
                feedback.push(answer.feedback(q));
                Some(answer.recorded())
            }
            (None, Some(_)) => {
                return Err(AgentError::Config(format!(
                    "the run did not end with a question ({}): there is nothing to answer",
                    r.after
                )))
            }
            (Some(q), None) => {
                feedback.push(format!(
                    "Your question \"{q}\" was not answered: find another way, or ASK again"
                ));
                None
            }
            (None, None) => None,
        };
        journal.redact(self.options.act.secrets.clone());
        journal.write(&ResumeRecord {
            kind: "resume",
            started: utc_rfc3339(SystemTime::now()),
            from_step: r.first_step,
            after: r.after.clone(),
            answer,
            unknown: r.unknown.clone(),
        })?;
        // What may have happened already is not done again without a person.
        if !r.unknown.is_empty() {
            self.options.act.confirm = self
                .options
                .act
                .confirm
                .clone()
                .strict("the run was resumed after commands whose outcome is unknown");
        }
        run.feedback = Some(feedback.join("\n"));
        self.open_url = Some(r.open_url.clone());
        let kept = r.dir.join(crate::storage::RUN_STATE);
        if kept.is_file() {
            self.options.storage_state = Some(kept);
        }
        Ok(run)
    }

    /// Starts the domain guard when domains are limited, and routes the
    /// browser and the executor through it.
    async fn domain_guard(&mut self) -> Result<Option<DomainGuard>, SetupError> {
        let policy = self.options.act.domains.clone();
        if !policy.is_active() {
            return Ok(None);
        }
        let attached =
            self.options.browser.cdp.is_some() || self.pool.as_ref().is_some_and(|p| !p.launches());
        let start = crate::start_url::to_url(&self.url).unwrap_or_else(|_| self.url.clone());
        if let Some(why) = policy.url_refusal(&start) {
            return Err(SetupError::StartRefused(why));
        }
        start_guard(&mut self.options.act, &mut self.options.browser, attached)
            .await
            .map(Some)
    }

    /// Learns the run into a skill when it ended done, writes the end
    /// record and returns the result.
    fn end(
        &self,
        mut journal: Journal,
        mut run: Run,
        started: Instant,
        model: String,
        ending: Ending,
        steps: usize,
    ) -> Result<RunResult, AgentError> {
        drop_empty_downloads(journal.dir());
        // Learned only from a run that was verified, when a judge was asked.
        let unverified_by = run
            .judge
            .as_ref()
            .filter(|j| j.verdict != Some(crate::judge::Verdict::Pass))
            .map(|j| format!("the judge ({}) did not pass the run: {}", j.model, j.reason));
        if let Some(skills) = run.skills.as_mut() {
            skills.learn(
                ending.status,
                unverified_by,
                &mut journal,
                &self.options.act.secrets,
                self.progress.as_ref(),
            );
        }
        let result = RunResult {
            success: ending.status == RunStatus::Done,
            status: ending.status,
            answer: run.answer,
            reason: ending.reason,
            steps,
            tokens: run.spend.tokens,
            // A run done from a skill with no model call cost nothing, priced or not.
            cost_usd: match (&run.skills, run.spend.tokens == Usage::default()) {
                (Some(s), true) if s.report.steps > 0 => Some(0.0),
                _ => run.spend.cost_usd,
            },
            run_dir: journal.dir().to_path_buf(),
            wall_time_s: started.elapsed().as_secs_f64(),
            model,
            divergences: run.divergences,
            data: run.data,
            prompt_tokens: run.prompt_tokens,
            report: None,
            skill: run.skills.map(|s| s.report),
            downloads: run.downloads,
            judge: run.judge,
            site: run.site,
        };
        Ok(write_end(&mut journal, result, self.options.report)?)
    }

    /// Opens the start page and loops; returns the ending and the steps taken.
    async fn drive(
        &mut self,
        session: &mut Session,
        journal: &mut Journal,
        run: &mut Run,
        started: Instant,
    ) -> (Ending, usize) {
        let fail = Ending::failed;
        let budget = |reason: String| Ending::new(RunStatus::Budget, reason);
        let before = run.before;
        let target = self.open_url.clone().unwrap_or_else(|| self.url.clone());
        let url = match crate::start_url::to_url(&target) {
            Ok(u) => u,
            Err(e) => return (fail(format!("bad start URL: {e}")), before),
        };
        if let Some(path) = &self.options.storage_state {
            let loaded = match StorageState::read(path) {
                Ok(state) => state.apply(session).await,
                Err(e) => Err(e),
            };
            if let Err(e) = loaded {
                return (
                    fail(format!("the storage state could not be loaded: {e}")),
                    before,
                );
            }
        }
        if let Err(e) = session
            .navigate(&url, self.options.act.navigation_timeout)
            .await
        {
            return (fail(e.to_string()), before);
        }
        if let Some(js) = &self.setup {
            if let Err(e) = crate::browser::evaluate(session.page(), js).await {
                return (fail(format!("the setup script failed: {e}")), before);
            }
        }
        let mut exec = Executor::new(session, self.options.act.clone()).await;
        let max = self.options.max_steps;
        if before >= max {
            return (
                budget(format!(
                    "the step budget of {max} was used up before this part of the run: give a \
                     higher one"
                )),
                before,
            );
        }
        for step in before + 1..=max {
            if let Some(limit) = self.options.max_time {
                if started.elapsed() >= limit {
                    return (
                        budget(format!("the time budget of {} s ran out", limit.as_secs())),
                        step - 1,
                    );
                }
            }
            if let (Some(limit), Some(cost)) = (self.options.max_cost, run.spend.cost_usd) {
                if cost >= limit {
                    return (
                        budget(format!(
                            "the cost budget of ${limit:.2} ran out (${cost:.4} spent)"
                        )),
                        step - 1,
                    );
                }
            }
            let out = self
                .step(step, session, &mut exec, journal, run)
                .instrument(crate::traces::step_span(step))
                .await;
            Self::keep_state(session, journal, run, &self.options.act.secrets).await;
            match out {
                Ok(Some(ending)) => return (ending, step),
                Ok(None) => {}
                Err(ending) => return (ending, step),
            }
        }
        (
            budget(format!(
                "the step budget of {max} ran out before the task was done"
            )),
            max,
        )
    }

    /// Keeps the browser's state in the run directory after a step (what a
    /// resumed run starts from). A state that cannot be kept costs the run
    /// nothing but that.
    async fn keep_state(session: &Session, journal: &Journal, run: &mut Run, secrets: &Secrets) {
        if !session.is_alive() {
            return;
        }
        let path = journal.dir().join(crate::storage::RUN_STATE);
        let kept = match StorageState::capture(session, &mut run.local_storage).await {
            Ok(state) => state.write(&path, secrets),
            Err(e) => Err(e),
        };
        if let Err(e) = kept {
            tracing::debug!("the browser's state was not kept: {e}");
        }
    }

    /// The system prompt, with the answer's schema when there is one.
    fn system_prompt(&self) -> String {
        match &self.options.act.answer_schema {
            Some(schema) => format!(
                "{SYSTEM}\n# The answer's form\n\nThe person wants the answer as data. End with \
                 `ANSWER:` followed by one JSON value (on one line, or over several) that follows \
                 this JSON Schema, then COMPLETE. An answer that does not follow it comes back with \
                 the validator's messages: correct it and answer again.\n\n```json\n{}\n```\n",
                serde_json::to_string_pretty(schema.schema()).unwrap_or_default()
            ),
            None => SYSTEM.to_string(),
        }
    }

    fn spend_of(&self, usage: Usage) -> Spend {
        Spend {
            tokens: usage,
            cost_usd: self
                .options
                .prices
                .of(&self.brain.name())
                .map(|p| p.cost(usage)),
        }
    }
}
