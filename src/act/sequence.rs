//! A sequence of commands (one reply, or one MCP `act`), in order: each
//! command dispatched to what runs it (the orchestrator's own: ANSWER, READ,
//! checkpoints, COMPLETE, ASK, STOP; the page's: through `execute`), the
//! sequence cut at the first failure or change of the page, and what it
//! brought gathered in its report.

use crate::records::{BatchReport, Finish, Outcome, Status};
use tracing::Instrument;

use super::{failed_stop, stop_after, watch, Executor};
use crate::browser::Session;
use crate::commands::{Command, Step};

/// Most commands one reply (or one MCP `act`) runs: enough for any form,
/// and a bound on what a runaway or hostile reply can make the browser do
/// in one step (a reply of 1,000 commands once ran whole).
pub const MAX_COMMANDS: usize = 50;

/// How many dialogs, downloads and blocked requests the executor had heard
/// of at a moment, to tell what came after it.
pub(super) struct Heard {
    pub(super) dialogs: usize,
    pub(super) downloads: usize,
    pub(super) blocked: usize,
}

impl Executor {
    /// What the executor has heard of so far.
    pub(super) fn heard(&self) -> Heard {
        let ev = watch::lock(&self.watch.events);
        Heard {
            dialogs: ev.dialogs.len(),
            downloads: ev.downloads.len(),
            blocked: self.blocked_len(),
        }
    }

    /// Runs a batch in order, stopping at the first failure, at the first
    /// change of the page, or at `COMPLETE`/`STOP`; at most
    /// [`MAX_COMMANDS`] of it, the rest reported as not run.
    pub async fn run(&mut self, session: &mut Session, steps: &[Step]) -> BatchReport {
        let (steps, over) = steps.split_at(steps.len().min(MAX_COMMANDS));
        let page = session.page().clone();
        let (mut report, stopped) =
            super::stuck::watched(&page, self.run_all(session, steps)).await;
        if let (Some(stopped), Some(last)) = (stopped, report.outcomes.last_mut()) {
            last.changes.push(stopped);
        }
        if !over.is_empty() {
            report.dropped.push(format!(
                "{} more commands past the first {MAX_COMMANDS}",
                over.len()
            ));
            report.dropped_because.get_or_insert_with(|| {
                format!(
                    "a reply runs at most {MAX_COMMANDS} commands: give the rest in the next \
                     reply, if they are still needed"
                )
            });
        }
        report
    }

    /// Runs every command of a batch, as [`Executor::run`] says.
    async fn run_all(&mut self, session: &mut Session, steps: &[Step]) -> BatchReport {
        let before = self.heard();
        self.book.decisions.clear();
        let mut report = BatchReport::default();
        let ends = steps
            .iter()
            .any(|s| matches!(s.command, Command::Complete { .. } | Command::Stop { .. }));
        if steps.iter().any(|s| s.command.touches_page()) {
            self.look_before_acting(session).await;
        }
        // The command after which the page changed, while the batch goes on.
        let mut changed: Option<String> = None;
        for (i, step) in steps.iter().enumerate() {
            if let Some(after) = &changed {
                if let Err(why) = self.carries(step) {
                    report.dropped = steps[i..].iter().map(Step::to_string).collect();
                    report.dropped_because = Some(format!(
                        "the page changed after {after}; look at the new page before going on \
                         ({why})"
                    ));
                    break;
                }
            }
            let span = crate::traces::command_span(&step.command.to_string());
            let stop = self
                .dispatch(session, step, ends, &mut report)
                .instrument(span.clone())
                .await;
            if let Some(outcome) = report.outcomes.last() {
                crate::traces::end_command(&span, outcome, &self.options.secrets);
            }
            let Some(why) = stop else {
                continue;
            };
            let rest = &steps[i + 1..];
            // A page command (or a pause) after which the page changed (not
            // one that failed, nor one that goes to another page or tab): the
            // next commands go on while their elements are as they were seen.
            let goes_on = matches!(report.outcomes.last(), Some(o) if o.page_changed
                && !o.status.is_failure())
                && (step.command.touches_page() || matches!(step.command, Command::Wait { .. }))
                && !matches!(
                    step.command,
                    Command::Tab { .. }
                        | Command::BackToCheckpoint { .. }
                        | Command::Back
                        | Command::Fetch { .. }
                );
            if goes_on && !rest.is_empty() {
                changed = Some(step.command.to_string());
                continue;
            }
            if !rest.is_empty() {
                report.dropped = rest.iter().map(Step::to_string).collect();
                report.dropped_because = Some(why);
            }
            break;
        }
        self.gather(session, &before, &mut report).await;
        report
    }

    /// Runs one command of a batch into its report; why the batch stops
    /// after it, if it does.
    async fn dispatch(
        &mut self,
        session: &mut Session,
        step: &Step,
        ends: bool,
        report: &mut BatchReport,
    ) -> Option<String> {
        let (outcome, stop) = match &step.command {
            Command::Answer { text } => return self.answer(step, text, ends, report),
            Command::Complete { .. }
            | Command::Ask { .. }
            | Command::Hands { .. }
            | Command::Stop { .. } => return self.conclude(step, report),
            Command::Checkpoint { name } => {
                let (outcome, record) = self.keep_checkpoint(session, step, name).await;
                report.checkpoints.extend(record);
                let stop = outcome.status.is_failure().then(|| failed_stop(&outcome));
                (outcome, stop)
            }
            Command::BackToCheckpoint { name } => {
                let (outcome, record) = self
                    .back_to_checkpoint(session, step, name.as_deref())
                    .await;
                report.checkpoints.extend(record);
                report.progress |= outcome.status == Status::Done;
                let stop = stop_after(&outcome);
                (outcome, stop)
            }
            Command::Tab { to } => {
                let outcome = self.tab(session, step, to).await;
                report.progress |= outcome.page_changed;
                let stop = stop_after(&outcome);
                (outcome, stop)
            }
            // One close look a step: the first ZOOM's. A later one is
            // said not to be shown, not answered "done" and dropped.
            Command::Zoom { .. } if report.zoom.is_some() => (
                Outcome::new(
                    step,
                    Status::NoEffect,
                    "not shown: a step shows one close look, the one the first ZOOM of this \
                     reply asked for; ask for this one in a later step",
                ),
                None,
            ),
            Command::Zoom { region } => {
                let (outcome, zoom) = self.zoom(session.viewport(), step, region);
                report.zoom = zoom;
                let stop = (outcome.status == Status::Failed).then(|| failed_stop(&outcome));
                (outcome, stop)
            }
            Command::Read { of } => {
                let (outcome, text, shown) = self.read(session, step, of).await;
                report.readings.extend(text);
                if shown.is_some() {
                    report.shown = shown;
                }
                let stop = (outcome.status == Status::Failed).then(|| failed_stop(&outcome));
                (outcome, stop)
            }
            _ => {
                let outcome = self.execute(session, step).await;
                report.progress |= outcome.status == Status::Done && step.command.touches_page();
                let stop = stop_after(&outcome);
                (outcome, stop)
            }
        };
        report.outcomes.push(outcome);
        stop
    }

    /// `ANSWER`: recorded, after its schema's check when the task wants
    /// data.
    fn answer(
        &mut self,
        step: &Step,
        text: &str,
        ends: bool,
        report: &mut BatchReport,
    ) -> Option<String> {
        if let Some(schema) = &self.options.answer_schema {
            match schema.check(text) {
                Ok(value) => {
                    report.data = Some(value);
                    self.data_given = true;
                }
                Err(why) => {
                    let message = format!("{why}; answer again, corrected");
                    let outcome = Outcome::new(step, Status::Failed, message);
                    let stop = failed_stop(&outcome);
                    report.outcomes.push(outcome);
                    return Some(stop);
                }
            }
        }
        report.answers.push(text.to_string());
        // Models often answer again and again instead of ending: say plainly
        // what ends the task.
        let message = if ends {
            "answer recorded"
        } else {
            "answer recorded. If it is what the task asked for, end with COMPLETE:summary (an \
             answer-only step that gives the same answer again also ends the task with it)"
        };
        report
            .outcomes
            .push(Outcome::new(step, Status::Done, message));
        None
    }

    /// `COMPLETE`, `ASK` and `STOP`: how the batch finishes the step. A
    /// task that wants its answer as data is not complete without it.
    fn conclude(&mut self, step: &Step, report: &mut BatchReport) -> Option<String> {
        let (finish, message, stop) = match &step.command {
            Command::Complete { .. }
                if self.options.answer_schema.is_some() && !self.data_given =>
            {
                report.outcomes.push(Outcome::new(
                    step,
                    Status::Failed,
                    "the task wants its answer as data: give ANSWER: with one JSON value that \
                     follows the schema first",
                ));
                return Some("the task is not answered yet".into());
            }
            Command::Complete { summary } => (
                Finish::Complete {
                    summary: summary.clone(),
                },
                "task marked complete",
                "the task was marked complete",
            ),
            Command::Ask { question } => (
                Finish::Ask {
                    question: question.clone(),
                },
                "the question is put to the person",
                "the answer is needed first",
            ),
            Command::Hands { reason } => (
                Finish::Hands {
                    reason: reason.clone(),
                },
                "a person's hands are asked for",
                "a person must act first",
            ),
            Command::Stop { reason } => (
                Finish::Stop {
                    reason: reason.clone(),
                },
                "run stopped",
                "the run was stopped",
            ),
            _ => return None,
        };
        report.finish = Some(finish);
        report
            .outcomes
            .push(Outcome::new(step, Status::Done, message));
        Some(stop.into())
    }

    /// What the batch brought besides its outcomes: dialogs, downloads,
    /// blocked requests and confirmations; the report redacted.
    async fn gather(&mut self, session: &Session, before: &Heard, report: &mut BatchReport) {
        report.dialogs = watch::lock(&self.watch.events)
            .dialogs
            .get(before.dialogs..)
            .unwrap_or_default()
            .to_vec();
        report.downloads = self.downloads_since(session, before.downloads).await;
        report.blocked = self.blocked_since(before.blocked);
        report.confirmations = std::mem::take(&mut self.book.decisions);
        self.redact(report);
    }
}
