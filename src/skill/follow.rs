//! Following a skill: each step's commands for the page as it is now, while
//! every target is found and unambiguous.

use super::error::SkillError;
use crate::commands::Step;
use crate::perceive::Observation;

use super::{Params, Skill, SkillStep};

/// Why the model takes over from a skill here, as the journal tells it: not
/// a failure, the end of what the skill can do on this page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TakeOver(pub String);

/// A skill being followed in a run.
#[derive(Debug, Clone)]
pub struct Follow {
    skill: Skill,
    params: Params,
    /// The skill's next step, 0-based.
    next: usize,
    /// Why the model goes on after the step that just ran: the skill says
    /// so (its step ends with the model's READ or ANSWER), or the step did
    /// not run as learned.
    stop: Option<String>,
    /// Whether the model goes on where the skill itself hands over.
    as_learned: bool,
}

/// A skill's step, ready to run on the page as it is now.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The skill's step, 1-based.
    pub step: usize,
    /// Its commands with this page's ids.
    pub steps: Vec<Step>,
}

impl Follow {
    /// Follows `skill` with these parameters' values from its first step.
    pub fn new(skill: Skill, params: Params) -> Follow {
        Follow {
            skill,
            params,
            next: 0,
            stop: None,
            as_learned: false,
        }
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.skill.name
    }

    /// The skill followed.
    pub fn skill(&self) -> &Skill {
        &self.skill
    }

    /// The parameters' values.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The skill's steps planned so far.
    pub fn done(&self) -> usize {
        self.next
    }

    /// Whether the model goes on where the skill hands over to it (READ,
    /// ANSWER), rather than where a page did not fit.
    pub fn as_learned(&self) -> bool {
        self.as_learned
    }

    /// The model takes over at the next step, for this reason (the skill's
    /// step did not run as learned).
    pub fn stop_with(&mut self, why: String) {
        self.as_learned = false;
        self.stop = Some(why);
    }

    /// Whether the next step's targets are missing from this look, while
    /// the skill would otherwise go on: a page looked at before it was
    /// through changing may show them on a second look.
    pub fn misses_targets(&self, obs: &Observation) -> bool {
        self.stop.is_none()
            && self
                .skill
                .steps
                .get(self.next)
                .is_some_and(|step| self.commands(step, obs).is_err())
    }

    /// A step's commands with this look's ids, or why the page does not fit.
    fn commands(&self, step: &SkillStep, obs: &Observation) -> Result<Vec<Step>, SkillError> {
        let mut steps = Vec::with_capacity(step.actions.len());
        for action in &step.actions {
            let id = match &action.target {
                Some(t) => t.find(obs)?,
                None => 0,
            };
            let mut command = action.command(id, &self.params)?;
            if let (Some(within), Some(e)) = (&action.within, obs.table.get(id)) {
                let p = within.point_in(e)?;
                command = command.at_point(crate::act::to_image(p, obs.viewport));
            }
            steps.push(Step {
                command,
                echo: None,
            });
        }
        Ok(steps)
    }

    /// The next step's commands for this look at the page, or why the model
    /// must take over here. The step is counted as done once planned.
    pub fn plan(&mut self, obs: &Observation) -> Result<Planned, TakeOver> {
        if let Some(why) = self.stop.take() {
            return Err(TakeOver(why));
        }
        let n = self.next + 1;
        let Some(step) = self.skill.steps.get(self.next) else {
            return Err(TakeOver(format!(
                "the skill's {} steps are done and the task is not marked complete",
                self.skill.steps.len()
            )));
        };
        let steps = self
            .commands(step, obs)
            .map_err(|why| TakeOver(format!("step {n} of the skill: {why}")))?;
        if let Some(verb) = &step.then_model {
            let why =
                format!("step {n} of the skill goes on with {verb}, which is the model's to do");
            self.as_learned = true;
            if steps.is_empty() {
                return Err(TakeOver(why));
            }
            self.stop = Some(why);
        }
        self.next += 1;
        Ok(Planned { step: n, steps })
    }
}
