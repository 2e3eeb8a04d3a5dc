//! [`AgentBuilder`]: a task, its start URL and model, and what else it runs with.

use std::future::Future;
use std::sync::Arc;

use crate::brain::{self, Brain, BrainError, HttpPolicy};
use crate::browser::Pool;
use crate::judge::Judge;

use super::error::AgentError;
use super::options::{AgentOptions, Interrupt, LastLook, Progress, Silent};
use super::{Agent, Asker, LearnedSkill, Resume};

/// Builds an [`Agent`].
#[derive(Default)]
pub struct AgentBuilder {
    task: Option<String>,
    url: Option<String>,
    brain: Option<Box<dyn Brain>>,
    options: AgentOptions,
    progress: Option<Box<dyn Progress>>,
    http: HttpPolicy,
    extras: Extras,
}

/// What a run may be given beside its task, model, options and progress:
/// the builder fills it, and the [`Agent`] owns it whole.
#[derive(Default)]
pub(super) struct Extras {
    /// What cuts the run short.
    pub(super) interrupt: Option<Interrupt>,
    /// The browsers it borrows from instead of launching its own.
    pub(super) pool: Option<Arc<Pool>>,
    /// Script run on the start page before the first step.
    pub(super) setup: Option<String>,
    /// Where the last look at the page is left.
    pub(super) last_look: Option<LastLook>,
    /// Who answers the model's questions.
    pub(super) asker: Option<Arc<dyn Asker>>,
    /// The run this one goes on with.
    pub(super) resume: Option<Resume>,
    /// The answer to the question a resumed run stopped at.
    pub(super) answer: Option<String>,
    /// The model that judges the run at COMPLETE.
    pub(super) judge: Option<Judge>,
    /// Where a learned skill is left unsaved.
    pub(super) learn_into: Option<LearnedSkill>,
    /// The live view the run is watched in, and a person's hands lent.
    pub(super) live: Option<crate::live::Live>,
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
        self.extras.judge = Some(judge);
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
        self.extras.interrupt = Some(Box::pin(signal));
        self
    }

    /// Runs in a browser context of its own in one of the pool's browsers,
    /// instead of launching a browser (a batch's runs share browsers so).
    pub fn pool(mut self, pool: Arc<Pool>) -> Self {
        self.extras.pool = Some(pool);
        self
    }

    /// JavaScript evaluated in the start page once it has loaded, before the
    /// first step (promises awaited): to put the page in the state the task
    /// starts from. An exception fails the run.
    pub fn setup(mut self, js: impl Into<String>) -> Self {
        self.extras.setup = Some(js.into());
        self
    }

    /// Leave a skill the run learns in `slot` instead of saving it (see
    /// [`LearnedSkill`]).
    pub fn learn_into(mut self, slot: LearnedSkill) -> Self {
        self.extras.learn_into = Some(slot);
        self
    }

    /// A look at the final page before the browser closes (see [`LastLook`]).
    pub fn last_look(mut self, look: LastLook) -> Self {
        self.extras.last_look = Some(look);
        self
    }

    /// Who the model's questions (ASK) are put to, and, with
    /// [`AgentOptions::hand_over`], who is handed a CAPTCHA. Without one, a
    /// question ends the run as [`RunStatus::NeedsInput`](super::RunStatus::NeedsInput).
    pub fn asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.extras.asker = Some(asker);
        self
    }

    /// Shows the run in `live` as it goes (its page, its step, what it
    /// does), stops it at a step boundary when a person takes the browser
    /// over there, and lends the browser when the model asks for hands
    /// (`HANDS`); without one, `HANDS` ends the run as
    /// [`RunStatus::NeedsInput`](super::RunStatus::NeedsInput).
    pub fn live(mut self, live: crate::live::Live) -> Self {
        self.extras.live = Some(live);
        self
    }

    /// Goes on with a run that was cut off (see [`Resume`]): its task, URL
    /// and journal, from the step it reached. Set the options (its rules:
    /// [`RunPolicy::apply`](super::RunPolicy::apply)) before.
    pub fn resume(mut self, resume: Resume) -> Self {
        self.task = Some(resume.task.clone());
        self.url = Some(resume.url.clone());
        self.extras.resume = Some(resume);
        self
    }

    /// The person's answer to the question a resumed run ended with (a
    /// leading `!` makes it a secret).
    pub fn answer(mut self, answer: impl Into<String>) -> Self {
        self.extras.answer = Some(answer.into());
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
            extras: self.extras,
            open_url: None,
        })
    }
}
