//! Learning a skill: what a run did, step by step, with each command's
//! target described, and the task's values found in what was typed.

use super::error::SkillError;
use crate::records::BatchReport;

use std::time::SystemTime;

use crate::act::same_checkpoint_name;
use crate::commands::{Command, ImagePoint, Step};
use crate::perceive::Observation;
use crate::safety::Secrets;

use super::template::{self, Params};
use super::{model_only, site_of, Action, Skill, SkillStep, Target, Within, FORMAT, ID};

/// One command that ran, and the element it acted on.
#[derive(Debug, Clone)]
struct Done {
    command: Command,
    target: Option<Target>,
    /// Where a point was in its target.
    within: Option<Within>,
}

/// One step of a run, as a skill would do it again.
#[derive(Debug, Clone)]
struct TrailStep {
    page: String,
    done: Vec<Done>,
    then_model: Option<String>,
}

/// What a run did that a skill can do again: kept step by step while the
/// run goes, turned into a [`Skill`] when it ends done.
#[derive(Debug, Clone, Default)]
pub struct Trail {
    steps: Vec<TrailStep>,
}

impl Trail {
    /// Keeps what one step did: the commands that ran as asked (a command
    /// that failed, was held or refused is no part of the way), each with its
    /// target as the step's look showed it; the model's own commands end
    /// what a skill can do.
    pub fn record(&mut self, obs: &Observation, steps: &[Step], report: &BatchReport) {
        if self.steps.last().is_some_and(|s| s.then_model.is_some()) {
            return;
        }
        let mut step = TrailStep {
            page: site_of(&obs.url).unwrap_or_else(|| obs.url.clone()),
            done: Vec::new(),
            then_model: None,
        };
        for (s, outcome) in steps.iter().zip(&report.outcomes) {
            if let Some(verb) = model_only(&s.command) {
                step.then_model = Some(verb.to_string());
                break;
            }
            if outcome.status.is_failure() {
                continue;
            }
            // Going back to a checkpoint undoes the detour: the way is the
            // one up to the checkpoint, and what follows.
            if let Command::BackToCheckpoint { name } = &s.command {
                self.rewind(&mut step, name.as_deref());
                continue;
            }
            if let Some(at) = s.command.point() {
                // A point is kept as a place in the element it fell on; on
                // no element, it is the model's to aim again.
                match point_in_element(obs, at) {
                    Some((target, within)) => step.done.push(Done {
                        command: s.command.clone(),
                        target: Some(target),
                        within: Some(within),
                    }),
                    None => {
                        step.then_model = Some("a point on no element".into());
                        break;
                    }
                }
                continue;
            }
            let target = match s.command.target() {
                Some(id) => match Target::describe(obs, id) {
                    Some(t) => Some(t),
                    None => continue,
                },
                None => None,
            };
            step.done.push(Done {
                command: chosen(obs, &s.command),
                target,
                within: None,
            });
        }
        if !step.done.is_empty() || step.then_model.is_some() {
            self.steps.push(step);
        }
    }

    /// Drops what was done after the checkpoint `name` (the last one when
    /// `None`) was kept: the current step's commands, then whole steps.
    fn rewind(&mut self, current: &mut TrailStep, name: Option<&str>) {
        let kept = |d: &Done| match (&d.command, name) {
            (Command::Checkpoint { .. }, None) => true,
            (Command::Checkpoint { name: kept }, Some(n)) => same_checkpoint_name(kept, n),
            _ => false,
        };
        if let Some(i) = current.done.iter().rposition(kept) {
            current.done.truncate(i + 1);
            return;
        }
        let found = self
            .steps
            .iter()
            .enumerate()
            .rev()
            .find_map(|(k, s)| s.done.iter().rposition(kept).map(|i| (k, i)));
        if let Some((k, i)) = found {
            self.steps.truncate(k + 1);
            self.steps[k].done.truncate(i + 1);
            self.steps[k].then_model = None;
            current.done.clear();
        }
    }

    /// Whether nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The skill of a run of `task` from `start` that ended done, named
    /// after its template: what was typed or chosen that the task says becomes a
    /// parameter named after its field; secrets stay placeholders, and the
    /// whole is kept clear of their values.
    pub fn learn(
        &self,
        task: &str,
        start: &str,
        run_dir: &str,
        secrets: &Secrets,
    ) -> Result<Skill, SkillError> {
        if self.steps.is_empty() {
            return Err(SkillError::NothingToLearn(
                "the run did nothing a skill can do again",
            ));
        }
        // Up to where it hands over to the model (the whole run when it never does).
        let before_handing_over = self
            .steps
            .iter()
            .position(|s| s.then_model.is_some())
            .map_or(self.steps.len(), |i| i + 1);
        if self.steps[..before_handing_over]
            .iter()
            .all(|s| s.done.is_empty())
        {
            return Err(SkillError::NothingToLearn(
                "the skill would do nothing before it hands over to the model",
            ));
        }
        let site = site_of(start).ok_or_else(|| SkillError::NoUrl(start.to_string()))?;
        let (template, params) = template::parameterize(task, &self.values());
        let steps = self
            .steps
            .iter()
            .map(|s| SkillStep {
                page: s.page.clone(),
                actions: s.done.iter().map(|d| action(d, &params)).collect(),
                then_model: s.then_model.clone(),
            })
            .collect();
        let skill = Skill {
            format: FORMAT,
            name: crate::journal::slug(&template),
            task: template,
            site,
            params: params.keys().cloned().collect(),
            learned_from: run_dir.to_string(),
            learned: crate::clock::utc_rfc3339(SystemTime::now()),
            updated: None,
            steps,
        };
        // Nothing of a secret's value is kept, whatever it came in.
        let clean = secrets.redacted(&skill).map_err(|e| {
            SkillError::Invalid(format!("the skill could not be kept clear of secrets: {e}"))
        })?;
        clean.check()?;
        Ok(clean)
    }

    /// What was typed or chosen, by the name of its field (a name taken
    /// twice for other values gets a number).
    fn values(&self) -> Params {
        let mut values = Params::new();
        for d in self.steps.iter().flat_map(|s| &s.done) {
            let value = match &d.command {
                Command::Type { text, .. } | Command::TypeAt { text, .. } => text,
                Command::Select { option, .. } => option,
                _ => continue,
            };
            if value.contains("{{") || values.values().any(|v| v == value) {
                continue;
            }
            let label = d.target.as_ref().map_or("value", |t| t.name.as_str());
            let base = template::name_for(label);
            let mut name = base.clone();
            for n in 2.. {
                if !values.contains_key(&name) {
                    break;
                }
                name = format!("{base}_{n}");
            }
            values.insert(name, value.clone());
        }
        values
    }
}

/// A SELECT as seamark did it: the option it chose, whole, where the model
/// named it by a prefix or in another case (`SELECT:4:lar` chose "Large"),
/// so that the skill and its scripts choose the same one.
fn chosen(obs: &Observation, command: &Command) -> Command {
    let Command::Select { id, option } = command else {
        return command.clone();
    };
    let options = obs
        .table
        .get(*id)
        .map(|e| e.options.as_slice())
        .unwrap_or_default();
    match crate::act::match_option(options, option) {
        Some(i) => Command::Select {
            id: *id,
            option: options[i].clone(),
        },
        None => command.clone(),
    }
}

/// The element a point of the sent image fell on, described, and where in
/// its box the point was.
fn point_in_element(obs: &Observation, at: ImagePoint) -> Option<(Target, Within)> {
    let p = crate::act::to_css(at, obs.viewport).ok()?;
    let e = crate::act::element_at(&obs.table.elements, p)?;
    Some((Target::describe(obs, e.id)?, Within::of(e, p)))
}

/// A command as a skill keeps it: `@` for its id, `{{name}}` for a value
/// the task gave.
fn action(done: &Done, params: &Params) -> Action {
    let param = |value: &str| {
        params
            .iter()
            .find(|(_, v)| v.as_str() == value)
            .map(|(name, _)| format!("{{{{{name}}}}}"))
            .unwrap_or_else(|| value.to_string())
    };
    let command = match &done.command {
        Command::Type { id, text } => Command::Type {
            id: *id,
            text: param(text),
        },
        Command::Select { id, option } => Command::Select {
            id: *id,
            option: param(option),
        },
        Command::Complete { summary } => Command::Complete {
            summary: template::parameterize(summary, params).0,
        },
        Command::TypeAt { at, text } => Command::TypeAt {
            at: *at,
            text: param(text),
        },
        other => other.clone(),
    };
    // Where a point goes is found again with its target: `@0,0` holds its place.
    let command = match done.within {
        Some(_) => command.at_point(ImagePoint { x: 0, y: 0 }),
        None => command,
    };
    let mut text = command.to_string();
    if let (Some(id), Some((verb, rest))) = (command.target(), text.clone().split_once(':')) {
        let id = id.to_string();
        if let Some(after) = rest.strip_prefix(&id) {
            text = format!("{verb}:{ID}{after}");
        }
    }
    Action {
        command: text,
        target: done.target.clone(),
        within: done.within,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_that_would_do_nothing_before_it_hands_over_is_not_learned() {
        let step = |then_model: Option<&str>| TrailStep {
            page: "example.com".into(),
            done: Vec::new(),
            then_model: then_model.map(str::to_string),
        };
        let trail = Trail {
            steps: vec![step(None), step(Some("ANSWER"))],
        };
        let refused = trail.learn(
            "Find the price",
            "https://example.com/",
            "runs/x",
            &Secrets::default(),
        );
        assert_eq!(
            refused.err().map(|e| e.to_string()).as_deref(),
            Some("the skill would do nothing before it hands over to the model")
        );
    }
}
