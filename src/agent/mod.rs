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
mod builder;
mod error;
mod hands;
mod harness;
mod history;
mod options;
pub mod policy;
pub(crate) mod prompt;
pub mod resume;
mod skill_use;
mod state;
mod step;
pub(crate) mod view;

use std::future::Future;
use std::time::{Instant, SystemTime};
use tracing::Instrument;

use crate::act::Executor;
use crate::brain::{Brain, Usage};
use crate::browser::Session;
use crate::clock::utc_rfc3339;
use crate::journal::Journal;
use crate::safety::{DomainGuard, Secrets};
use crate::storage::StorageState;

pub use crate::records::{
    ActRecord, Asked, ResumeRecord, RunPolicy, RunResult, RunStatus, SkillReport, Spend,
    StartRecord, StepRecord, StepTimings,
};
use ask::Answer;
pub use ask::Asker;
pub use builder::AgentBuilder;
pub use error::{AgentError, SetupError};
pub use hands::hands_question;
pub use harness::DOWNLOADS;
pub(crate) use harness::{
    drop_empty_downloads, hold_site, keep_downloads_in, start_guard, write_end,
};
pub use options::{AgentOptions, Interrupt, LastLook, Progress};
pub use prompt::{instruction_like, SYSTEM};
pub use resume::{Resume, ResumeError};
pub use skill_use::LearnedSkill;
use state::{Ending, Run};

/// A task to run.
pub struct Agent {
    task: String,
    url: String,
    brain: Box<dyn Brain>,
    options: AgentOptions,
    progress: Box<dyn Progress>,
    /// What else it was given (see [`AgentBuilder`]).
    extras: builder::Extras,
    /// The page a resumed run opens (the start URL otherwise).
    open_url: Option<String>,
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
        let mut run = match self.extras.resume.take() {
            None => self.begin(&mut journal, &model).await?,
            Some(r) => self.go_on(&r, &mut journal)?,
        };
        let (guard, site) = match self.hold_traffic(journal.dir()).await {
            Ok(held) => held,
            Err(reason) => {
                let before = run.before;
                let ending = Ending::failed(reason.to_string());
                return self.end(journal, run, started, model, ending, before);
            }
        };
        let mut interrupt = self.extras.interrupt.take();
        let opened = match self.extras.pool.clone() {
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
                if let (Ok(_), Some(look)) = (&out, self.extras.last_look.take()) {
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
        Ok(match (&self.extras.resume, &self.options.out) {
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
                crate::skill::SkillStore::new(dir).reviewed(self.options.review_skills),
                self.extras.learn_into.clone(),
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
        let answer = match (&r.question, self.extras.answer.take()) {
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
        let attached = self.options.browser.cdp.is_some()
            || self.extras.pool.as_ref().is_some_and(|p| !p.launches());
        let start = crate::start_url::to_url(&self.url).unwrap_or_else(|_| self.url.clone());
        if let Some(why) = policy.url_refusal(&start) {
            return Err(SetupError::StartRefused(why));
        }
        start_guard(&mut self.options.act, &mut self.options.browser, attached)
            .await
            .map(Some)
    }

    /// The domain guard every request of the browser goes through, and
    /// the site recorded or answered from a recording (under the guard's
    /// policy too).
    async fn hold_traffic(
        &mut self,
        dir: &std::path::Path,
    ) -> Result<(Option<DomainGuard>, Option<crate::site::SiteHold>), SetupError> {
        let guard = self.domain_guard().await?;
        let site = hold_site(
            &self.options.site,
            self.options.fixed_clock,
            &self.options.act.secrets,
            &mut self.options.browser,
            dir,
            guard.as_ref(),
        )?;
        Ok((guard, site))
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
        if let Some(live) = &self.extras.live {
            live.watch(session);
        }
        if let Err(e) = session
            .navigate(&url, self.options.act.navigation_timeout)
            .await
        {
            return (fail(e.to_string()), before);
        }
        if let Some(js) = &self.extras.setup {
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
            if let Some(ending) = self.out_of_budget(started, run) {
                return (ending, step - 1);
            }
            if let Err(ending) = self.hands_at_boundary(step - 1, journal, run).await {
                return (ending, step - 1);
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

    /// The time or cost budget, when it ran out before a step.
    fn out_of_budget(&self, started: Instant, run: &Run) -> Option<Ending> {
        let budget = |reason: String| Ending::new(RunStatus::Budget, reason);
        if let Some(limit) = self.options.max_time {
            if started.elapsed() >= limit {
                return Some(budget(format!(
                    "the time budget of {} s ran out",
                    limit.as_secs()
                )));
            }
        }
        if let (Some(limit), Some(cost)) = (self.options.max_cost, run.spend.cost_usd) {
            if cost >= limit {
                return Some(budget(format!(
                    "the cost budget of ${limit:.2} ran out (${cost:.4} spent)"
                )));
            }
        }
        None
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
