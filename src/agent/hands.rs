//! A person's hands in the run's browser: the live view told of each step,
//! the browser lent at a step boundary when a person took it over, or when
//! the model asked for hands (`HANDS`). What they did is a journal record
//! of its own and goes to the model in its next prompt; what they typed
//! goes nowhere.

use super::state::{Ending, Run};
use super::view::ModelView;
use super::Agent;
use crate::browser::Session;
use crate::journal::Journal;
use crate::live::Hide;
use crate::perceive::Observation;
use crate::records::{Asked, HandsEnd, HandsRecord, RunStatus, StepRecord};

/// The question a run that asked for a person's hands ends with when
/// nobody came, and a waiting session is told by.
pub fn hands_question(reason: &str) -> String {
    format!("a person's hands are needed in the browser: {reason}")
}

impl Agent {
    /// Shows the step's look in the live view, if the run has one: the page,
    /// where it is, and the boxes its frames must hide.
    pub(super) fn show_live(
        &self,
        step: usize,
        session: &Session,
        obs: &Observation,
        view: &ModelView,
    ) {
        if let Some(live) = &self.extras.live {
            let url = self.options.act.secrets.redact(&obs.url);
            let hide = Hide {
                rects: view.hidden.clone(),
                scroll: obs.scroll,
            };
            live.show(session, step, &url, &view.title, hide);
        }
    }

    /// Tells the live view what the agent is doing now.
    pub(super) fn live_doing(&self, what: impl FnOnce() -> String) {
        if let Some(live) = &self.extras.live {
            live.doing(what());
        }
    }

    /// At the boundary after step `step`: when a person asked for the
    /// browser, lends it to them until they hand it back.
    pub(super) async fn hands_at_boundary(
        &mut self,
        step: usize,
        journal: &mut Journal,
        run: &mut Run,
    ) -> Result<(), Ending> {
        let Some(live) = self.extras.live.clone() else {
            return Ok(());
        };
        if !live.wanted() {
            return Ok(());
        }
        let record = live.lend_hands(step, None).await;
        self.handed_back(&record, journal, run)
    }

    /// `HANDS:reason` at step `record.step`: lends the browser as the model
    /// asked and goes on when the person hands it back; with no live view,
    /// or nobody in time, the run ends needing a person.
    pub(super) async fn lend_hands(
        &mut self,
        reason: &str,
        journal: &mut Journal,
        run: &mut Run,
        record: &mut StepRecord,
    ) -> Result<Option<Ending>, Ending> {
        let question = hands_question(reason);
        let needs_person = |record: &mut StepRecord| {
            record.asked = Some(Asked {
                question: question.clone(),
                answer: None,
            });
            Ending::new(RunStatus::NeedsInput, question.clone())
        };
        let Some(live) = self.extras.live.clone() else {
            let ending = needs_person(record);
            self.finish_step(journal, record)?;
            return Ok(Some(ending));
        };
        // The step is journaled first: the hand-over follows it.
        let lent = live.lend_hands(record.step, Some(reason)).await;
        if lent.ended == HandsEnd::NobodyCame {
            let ending = needs_person(record);
            self.finish_step(journal, record)?;
            journal
                .write(&lent)
                .map_err(|e| Ending::failed(e.to_string()))?;
            return Ok(Some(ending));
        }
        self.finish_step(journal, record)?;
        self.handed_back(&lent, journal, run)?;
        Ok(None)
    }

    /// A hand-over ended: journaled, and told to the model next step.
    fn handed_back(
        &mut self,
        record: &HandsRecord,
        journal: &mut Journal,
        run: &mut Run,
    ) -> Result<(), Ending> {
        journal
            .write(record)
            .map_err(|e| Ending::failed(e.to_string()))?;
        let told = self.options.act.secrets.redact(&record.told());
        run.feedback = Some(match run.feedback.take() {
            Some(f) => format!("{f}\n{told}"),
            None => told,
        });
        // The page may be anywhere now: the next look is a fresh one.
        run.progressed = true;
        Ok(())
    }
}
