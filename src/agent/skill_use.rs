//! The loop's use of a skills folder in one run: the skill it follows, its
//! steps while the pages fit, where the model takes over, and the skill
//! learned when the run ends done.
use crate::records::{SkillEvent, SkillRecord, StepMark};

use crate::brain::{Brain, Usage};
use crate::commands::Step;
use crate::journal::Journal;
use crate::perceive::Observation;
use crate::records::BatchReport;
use crate::safety::Secrets;
use crate::skill::{self, Follow, Found, Planned, SkillStore, Trail};

use super::options::Progress;
use super::{RunStatus, SkillReport};

/// Where a run leaves the skill it learned, unsaved, for its caller to save
/// once it has judged the run (a batch saves it when the run passes its
/// check).
pub type LearnedSkill = std::sync::Arc<std::sync::Mutex<Option<skill::Skill>>>;

/// A run's skills: what it follows, and what it did for learning.
pub(crate) struct Skills {
    store: SkillStore,
    /// The run's task and start URL, for learning.
    task: String,
    url: String,
    /// Where what is learned is left unsaved, instead of the folder.
    later: Option<LearnedSkill>,
    follow: Option<Follow>,
    trail: Trail,
    /// Why nothing is learned from this run whatever its ending.
    no_learning: Option<String>,
    /// The model took over where the skill hands over to it.
    as_learned: bool,
    pub(crate) report: SkillReport,
}

/// What the skill says of one step.
pub(crate) enum Turn {
    /// Its commands for this page.
    Commands(Planned, StepMark),
    /// The model takes over here, and why.
    TakeOver(StepMark),
}

impl Skills {
    /// Skills of `store` for `task` from `url`, following none yet.
    fn new(store: SkillStore, task: &str, url: &str, later: Option<LearnedSkill>) -> Skills {
        Skills {
            store,
            task: task.to_string(),
            url: url.to_string(),
            later,
            follow: None,
            trail: Trail::default(),
            no_learning: None,
            as_learned: false,
            report: SkillReport::default(),
        }
    }

    /// Reads the folder and finds the skill for `task` from `url`: broken
    /// files and skills that fit alike are told and left alone; a skill of
    /// the same site worded otherwise is put to the model in one small
    /// call. Gives the tokens that call took.
    pub(crate) async fn choose(
        store: SkillStore,
        later: Option<LearnedSkill>,
        task: &str,
        url: &str,
        brain: &mut dyn Brain,
        journal: &mut Journal,
        progress: &dyn Progress,
    ) -> (Skills, Usage) {
        let mut tell = |event, name: Option<&str>, detail: String| {
            tell(journal, progress, SkillRecord::new(event, name, detail));
        };
        let listed = store.list();
        for l in &listed {
            if let Err(why) = &l.skill {
                tell(
                    SkillEvent::Ignored,
                    None,
                    format!("skill file {} is ignored: {why}", l.path.display()),
                );
            }
        }
        let mut skills = Skills::new(store, task, url, later);
        let mut usage = Usage::default();
        let mut found = SkillStore::find(&listed, task, url);
        // One skill of this site, worded otherwise: the model says whether
        // the task is its task with other values.
        let same_site = match &found {
            Found::SameSite(same) if same.len() == 1 => same.first().cloned(),
            _ => None,
        };
        if let Some(skill) = same_site {
            let (filled, used) = skill::fill_with_model(brain, &skill, task).await;
            usage = used;
            found = match filled {
                Ok(Some(params)) => Found::One(Box::new(skill), params),
                Ok(None) => Found::Nothing,
                Err(why) => {
                    let detail = format!(
                        "skill {} may fit the task, but the model's values could not be used: \
                         {why}",
                        skill.name
                    );
                    tell(SkillEvent::Ignored, Some(&skill.name), detail);
                    Found::Nothing
                }
            };
        }
        match found {
            Found::One(skill, params) => {
                let values: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                tell(
                    SkillEvent::Follow,
                    Some(&skill.name),
                    format!(
                        "following skill {} ({} steps{}{})",
                        skill.name,
                        skill.steps.len(),
                        if values.is_empty() { "" } else { "; " },
                        values.join(", ")
                    ),
                );
                skills.report.followed = Some(skill.name.clone());
                skills.follow = Some(Follow::new(*skill, params));
            }
            Found::Several(names) => {
                let detail = format!(
                    "skills {} all fit this task: none is followed, and the run is not learned \
                     (remove all but one with seamark skill rm)",
                    names.join(", ")
                );
                tell(SkillEvent::Ignored, None, detail.clone());
                skills.no_learning = Some(detail);
            }
            Found::Nothing | Found::SameSite(_) => {}
        }
        (skills, usage)
    }

    /// Whether a skill is followed and its next step's targets are missing
    /// from this look (see [`Follow::misses_targets`]).
    pub(crate) fn misses_targets(&self, obs: &Observation) -> bool {
        self.follow.as_ref().is_some_and(|f| f.misses_targets(obs))
    }

    /// What the skill does at this look, if a skill is followed.
    pub(crate) fn turn(&mut self, obs: &Observation) -> Option<Turn> {
        let follow = self.follow.as_mut()?;
        let name = follow.name().to_string();
        Some(match follow.plan(obs) {
            Ok(planned) => {
                self.report.steps += 1;
                let mark = StepMark {
                    name,
                    step: Some(planned.step),
                    took_over: None,
                };
                Turn::Commands(planned, mark)
            }
            Err(crate::skill::TakeOver(why)) => {
                self.as_learned = follow.as_learned();
                self.follow = None;
                self.report.took_over = Some(why.clone());
                Turn::TakeOver(StepMark {
                    name,
                    step: None,
                    took_over: Some(why),
                })
            }
        })
    }

    /// Keeps what a step did for learning; a skill's step that did not run
    /// as learned hands the next step to the model.
    pub(crate) fn after(
        &mut self,
        from_skill: bool,
        obs: &Observation,
        steps: &[Step],
        report: &BatchReport,
    ) {
        self.trail.record(obs, steps, report);
        if !from_skill {
            return;
        }
        let why = match (
            report.outcomes.iter().find(|o| o.status.is_failure()),
            report.dropped.is_empty(),
        ) {
            (Some(o), _) => Some(format!(
                "the skill's command did not run as learned: {}",
                o.line()
            )),
            (None, false) => Some(format!(
                "the page changed before the skill's step was through (not run: {})",
                report.dropped.join("; ")
            )),
            (None, true) => None,
        };
        if let (Some(why), Some(f)) = (why, self.follow.as_mut()) {
            f.stop_with(why);
        }
    }

    /// When the run ended done: learns it into a new skill, or learns the
    /// followed skill again when the model had to take over. Saved now, or
    /// left in the report when the caller saves it later. `unverified_by`:
    /// why a run that ended done was not verified (a judge that did not pass
    /// it), and is not learned.
    pub(crate) fn learn(
        &mut self,
        status: RunStatus,
        unverified_by: Option<String>,
        journal: &mut Journal,
        secrets: &Secrets,
        progress: &dyn Progress,
    ) {
        if status != RunStatus::Done {
            return;
        }
        let followed = match (&self.report.followed, &self.report.took_over) {
            // Followed to its end, or to where it hands over: nothing new.
            (Some(_), None) => return,
            (Some(_), Some(_)) if self.as_learned => return,
            (followed, _) => followed.clone(),
        };
        let run_dir = journal.dir().display().to_string();
        let mut tell = |event, name: Option<&str>, detail: String| {
            tell(journal, progress, SkillRecord::new(event, name, detail));
        };
        if let Some(why) = unverified_by.as_ref().or(self.no_learning.as_ref()) {
            tell(SkillEvent::NotLearned, None, format!("not learned: {why}"));
            return;
        }
        let mut skill = match self.trail.learn(&self.task, &self.url, &run_dir, secrets) {
            Ok(s) => s,
            Err(why) => {
                tell(SkillEvent::NotLearned, None, format!("not learned: {why}"));
                return;
            }
        };
        let event = match &followed {
            // The followed skill, learned again: its name and first date kept.
            Some(name) => {
                skill.name = name.clone();
                if let Ok(old) = self.store.get(name) {
                    skill.updated = Some(skill.learned.clone());
                    skill.learned = old.learned;
                }
                SkillEvent::Updated
            }
            None => {
                skill.name = self.store.free_name(&skill.task);
                SkillEvent::Learned
            }
        };
        if let Some(slot) = &self.later {
            *slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(skill);
            return;
        }
        let name = skill.name.clone();
        let into = self.store.learn_into();
        let proposed = into.dir() != self.store.dir();
        match into.save(&skill) {
            Ok(path) => {
                let verb = match event {
                    _ if proposed => "proposed for a person's review: learned",
                    SkillEvent::Updated => "updated",
                    _ => "learned",
                };
                tell(
                    event,
                    Some(&name),
                    format!("{verb} skill {name} ({})", path.display()),
                );
                self.report.learned = Some(path);
            }
            Err(why) => tell(
                SkillEvent::NotLearned,
                Some(&name),
                format!("not learned: {why}"),
            ),
        }
    }
}

/// Tells the person a skill event, and keeps it in the journal.
fn tell(journal: &mut Journal, progress: &dyn Progress, record: SkillRecord) {
    progress.skill_note(&record.detail);
    if let Err(e) = journal.write(&record) {
        tracing::warn!("a skill record was not written: {e}");
    }
}
