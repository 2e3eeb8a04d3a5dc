//! Checkpoints: when a phase of the plan is done, the model says
//! `CHECKPOINT:name` and the executor keeps the page: its URL, what it shows
//! (its structure and controls) and the site's state (cookies, localStorage,
//! sessionStorage). After a mistake (a wrong page, a step undone), the model
//! goes `BACK:checkpoint` to the last good phase instead of guessing its way
//! back: the state is put back, the URL opened again (within the domain
//! policy), and the page compared with what it was.
//!
//! The state stays in memory: it holds the site's session, so the journal
//! records only the checkpoint's name, URL, title and sizes.

use crate::records::{CheckpointEvent, CheckpointRecord, Outcome, Status};

use std::collections::HashSet;

use crate::browser::Session;
use crate::commands::{Command, Step};
use crate::perceive::Observation;
use crate::storage::PageState;

use super::{actions, host_of, Executor};

/// How many checkpoints a run keeps; the oldest goes first.
const KEPT: usize = 20;

/// A phase's page, kept to come back to.
#[derive(Debug, Clone)]
pub(super) struct Checkpoint {
    name: String,
    url: String,
    title: String,
    /// The page's structure ([`Observation::structure`]) and its controls
    /// (role and name), to tell whether the page came back as it was.
    structure: String,
    controls: HashSet<(String, String)>,
    state: PageState,
}

/// The controls of a look, as role and name.
fn controls(look: &Observation) -> HashSet<(String, String)> {
    look.table
        .elements
        .iter()
        .map(|e| (e.role.clone(), e.name.clone()))
        .collect()
}

/// Whether two checkpoint names name the same phase: case and spacing aside.
pub fn same_name(a: &str, b: &str) -> bool {
    let fold = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    fold(a) == fold(b)
}

impl Executor {
    /// `CHECKPOINT:name`: keeps the page as it is now (the latest look, the
    /// site's state). A name kept before is kept anew.
    pub(super) async fn keep_checkpoint(
        &mut self,
        session: &Session,
        step: &Step,
        name: &str,
    ) -> (Outcome, Option<CheckpointRecord>) {
        let Some(look) = self.last.as_ref().or(self.seen.as_ref()) else {
            return (
                Outcome::new(step, Status::Failed, "nothing was observed yet"),
                None,
            );
        };
        let url = actions::page_url(session.page()).await;
        let host = host_of(&url);
        if host.is_empty() {
            return (
                Outcome::new(
                    step,
                    Status::Failed,
                    format!(
                        "{url} is no web page to come back to; keep a checkpoint on a site's page"
                    ),
                ),
                None,
            );
        }
        let state = match PageState::capture(session, &host).await {
            Ok(s) => s,
            Err(e) => return (Outcome::new(step, Status::Failed, e.to_string()), None),
        };
        let (cookies, items) = state.size();
        let checkpoint = Checkpoint {
            name: name.to_string(),
            url: url.clone(),
            title: look.title.clone(),
            structure: look.structure.clone(),
            controls: controls(look),
            state,
        };
        let detail = format!(
            "{} controls, {cookies} cookies and {items} stored items",
            checkpoint.controls.len()
        );
        self.checkpoints.retain(|c| !same_name(&c.name, name));
        if self.checkpoints.len() >= KEPT {
            self.checkpoints.remove(0);
        }
        let record = self.checkpoint_record(&checkpoint, CheckpointEvent::Kept, detail.clone());
        self.checkpoints.push(checkpoint);
        let message = format!(
            "kept checkpoint \"{name}\" at {url} ({detail}); BACK:checkpoint comes back to it"
        );
        (Outcome::new(step, Status::Done, message), Some(record))
    }

    /// `BACK:checkpoint[:name]`: the site's state put back, the checkpoint's
    /// URL opened again (a page command like FETCH, within the domain
    /// policy), and the page compared with what it was.
    pub(super) async fn back_to_checkpoint(
        &mut self,
        session: &mut Session,
        step: &Step,
        name: Option<&str>,
    ) -> (Outcome, Option<CheckpointRecord>) {
        let found = match name {
            Some(n) => self.checkpoints.iter().rposition(|c| same_name(&c.name, n)),
            None => self.checkpoints.len().checked_sub(1),
        };
        let Some(index) = found else {
            let why = if self.checkpoints.is_empty() {
                "no checkpoint was kept yet: CHECKPOINT:name keeps the page when a phase of \
                 the plan is done"
                    .to_string()
            } else {
                format!(
                    "there is no checkpoint \"{}\"; kept: {}",
                    name.unwrap_or_default(),
                    self.checkpoints
                        .iter()
                        .map(|c| format!("\"{}\"", c.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return (Outcome::new(step, Status::Failed, why), None);
        };
        let checkpoint = self.checkpoints[index].clone();
        if let Some(why) = self.refuse_url(&checkpoint.url) {
            return (Outcome::new(step, Status::Refused, why), None);
        }
        let restored = checkpoint.state.restore(session).await;
        let open = Step {
            command: Command::Fetch {
                url: checkpoint.url.clone(),
            },
            echo: None,
        };
        let mut outcome = self.execute(session, &open).await;
        outcome.command = step.command.to_string();
        if outcome.status.is_failure() {
            return (outcome, None);
        }
        let mut detail = match self.last.as_ref() {
            Some(now) if now.structure == checkpoint.structure => {
                "the page is as it was at the checkpoint".to_string()
            }
            Some(now) => {
                let here = controls(now);
                let kept = checkpoint.controls.intersection(&here).count();
                format!(
                    "the page differs from the checkpoint's: {kept} of its {} controls are \
                     there, {} are new{}",
                    checkpoint.controls.len(),
                    here.len() - kept,
                    if now.title == checkpoint.title {
                        String::new()
                    } else {
                        format!("; its title was \"{}\"", checkpoint.title)
                    }
                )
            }
            None => "the page could not be compared with the checkpoint's".to_string(),
        };
        if let Err(e) = restored {
            detail.push_str(&format!("; the site's state was not put back: {e}"));
        }
        outcome.status = Status::Done;
        outcome.message = format!(
            "back at checkpoint \"{}\" ({}); {detail}",
            checkpoint.name, outcome.message
        );
        let record = self.checkpoint_record(&checkpoint, CheckpointEvent::Back, detail);
        (outcome, Some(record))
    }

    fn checkpoint_record(
        &self,
        c: &Checkpoint,
        event: CheckpointEvent,
        detail: String,
    ) -> CheckpointRecord {
        let secrets = &self.options.secrets;
        CheckpointRecord {
            kind: "checkpoint",
            step: 0,
            event,
            name: secrets.redact(&c.name),
            url: secrets.redact(&c.url),
            title: secrets.redact(&c.title),
            detail,
        }
    }
}
