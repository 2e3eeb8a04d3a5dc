//! The guard before a command touches the page, and its books: secrets
//! filled in only on their hosts (by the field's own document), FETCH within
//! the domain policy, destructive actions held for a person (the reasoning is
//! [`crate::safety::ConfirmGuard::hold_reason`]'s), secret values kept out of
//! what the batch reports, and which fields hold a secret typed by seamark.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::{actions, fetch_target, host_of, Executor};
use crate::browser::Session;
use crate::commands::{Command, Step};
use crate::perceive::Element;
use crate::records::{BatchReport, Status};
use crate::safety::{is_reversible, Blocked, Decision, Hold, HoldReason, Secrets};

/// A secret typed into a field: the value as typed (never shown), the host it
/// was typed on, and the secrets' names.
struct SecretField {
    value: String,
    host: String,
    names: Vec<String>,
}

/// What the guard keeps between commands.
pub(super) struct GuardBook {
    /// Requests refused by the domain policy (the proxy's and the
    /// executor's own).
    pub(super) blocked: Arc<Mutex<Vec<Blocked>>>,
    /// Decisions on held actions, for the batch report.
    pub(super) decisions: Vec<Decision>,
    /// Nodes the executor typed into, and those that got a secret.
    pub(super) typed: HashSet<i64>,
    pub(super) secret_nodes: HashSet<i64>,
    /// Fields holding a secret, by frame and node: what was typed there,
    /// and on which host.
    secret_fields: HashMap<(String, i64), SecretField>,
    /// The step's marked screenshot, shown to the person asked to confirm.
    screenshot: Option<PathBuf>,
}

impl GuardBook {
    /// Empty books, adding refusals to `blocked`.
    pub(super) fn new(blocked: Arc<Mutex<Vec<Blocked>>>) -> GuardBook {
        GuardBook {
            blocked,
            decisions: Vec::new(),
            typed: HashSet::new(),
            secret_nodes: HashSet::new(),
            secret_fields: HashMap::new(),
            screenshot: None,
        }
    }
}

impl Executor {
    /// Nodes TYPE wrote into (their values may go to the model), and those
    /// that got a secret (their values and pixels never do).
    pub fn typed_nodes(&self) -> (&HashSet<i64>, &HashSet<i64>) {
        (&self.book.typed, &self.book.secret_nodes)
    }

    /// The marked screenshot of the current step, for confirmation prompts.
    pub fn set_screenshot(&mut self, path: Option<PathBuf>) {
        self.book.screenshot = path;
    }

    pub(super) fn blocked_len(&self) -> usize {
        self.book.blocked.lock().map(|b| b.len()).unwrap_or(0)
    }

    pub(super) fn blocked_since(&self, n: usize) -> Vec<Blocked> {
        self.book
            .blocked
            .lock()
            .map(|b| b.get(n..).unwrap_or_default().to_vec())
            .unwrap_or_default()
    }

    /// Secret values out of everything the report says (a page may echo them).
    pub(super) fn redact(&self, report: &mut BatchReport) {
        let secrets = &self.options.secrets;
        if secrets.is_empty() {
            return;
        }
        for o in &mut report.outcomes {
            o.message = secrets.redact(&o.message);
            for c in &mut o.changes {
                *c = secrets.redact(c);
            }
        }
        for d in &mut report.dialogs {
            d.message = secrets.redact(&d.message);
        }
        for r in &mut report.readings {
            *r = secrets.redact(r);
        }
    }

    /// The checks before a command touches the page: secrets filled in (only
    /// on their domains), FETCH within the domain policy, destructive actions
    /// confirmed. Returns the command to perform.
    pub(super) async fn guard(
        &mut self,
        session: &Session,
        step: &Step,
        target: Option<&Element>,
    ) -> Result<Command, (Status, String)> {
        match &step.command {
            Command::Type { id, text } if Secrets::has_placeholder(text) => {
                // The host of the field's own document: in a frame of
                // another site, that site gets what is typed. Unknown (the
                // field is gone): no host, and no secret is filled in.
                let host = match target {
                    Some(e) => actions::document_url(session.page(), &e.frame, e.backend_node_id)
                        .await
                        .map(|u| host_of(&u))
                        .unwrap_or_default(),
                    None => page_host(session).await,
                };
                let filled = self
                    .options
                    .secrets
                    .fill(text, &host)
                    .map_err(|why| (Status::Failed, why.to_string()))?;
                if let Some(e) = target {
                    self.book.secret_nodes.insert(e.backend_node_id);
                    self.book.secret_fields.insert(
                        (e.frame.clone(), e.backend_node_id),
                        SecretField {
                            value: filled.clone(),
                            host,
                            names: Secrets::placeholder_names(text),
                        },
                    );
                }
                Ok(Command::Type {
                    id: *id,
                    text: filled,
                })
            }
            // Seamark knows where a secret may go by the field's id and page;
            // a bare point names no field.
            Command::TypeAt { text, .. } if Secrets::has_placeholder(text) => Err((
                Status::Refused,
                "a secret is typed only into a field by its id (TYPE:id:{{secret:NAME}}), \
                 never at a point"
                    .into(),
            )),
            Command::Fetch { url } => {
                let current = actions::page_url(session.page()).await;
                let resolved = fetch_target(url, &current, &self.options.fetch_schemes)
                    .map_err(|why| (Status::Failed, why.to_string()))?;
                if let Some(why) = self.refuse_url(resolved.as_str()) {
                    return Err((Status::Refused, why));
                }
                Ok(Command::Fetch {
                    url: resolved.to_string(),
                })
            }
            Command::Click { .. }
            | Command::ClickAt { .. }
            | Command::TypeAt { .. }
            | Command::DoubleClick { .. }
            | Command::Hold { .. }
            | Command::Press { .. } => {
                self.confirm(session, step, target).await?;
                Ok(step.command.clone())
            }
            Command::Type { .. } | Command::Clear { .. } => {
                // What the field holds now is not the secret typed before.
                if let Some(e) = target {
                    self.book
                        .secret_fields
                        .remove(&(e.frame.clone(), e.backend_node_id));
                }
                Ok(step.command.clone())
            }
            other => Ok(other.clone()),
        }
    }

    /// Why the domain policy refuses to open `url`, recorded with the
    /// guard's refusals; `None` when it may be opened.
    pub(super) fn refuse_url(&self, url: &str) -> Option<String> {
        let why = self.options.domains.url_refusal(url)?;
        if let Ok(mut b) = self.book.blocked.lock() {
            b.push(Blocked {
                target: url.to_string(),
                reason: why.clone(),
                at: crate::clock::utc_rfc3339(SystemTime::now()),
            });
        }
        Some(format!("refused by the domain policy: {why}"))
    }

    /// Holds a destructive click or Enter for a person's yes.
    async fn confirm(
        &mut self,
        session: &Session,
        step: &Step,
        target: Option<&Element>,
    ) -> Result<(), (Status, String)> {
        let role = target.map(|e| e.role.as_str());
        if role.is_some_and(is_reversible) {
            // Never held: the page need not be asked what it submits.
            return Ok(());
        }
        let danger = actions::danger(session.page(), &step.command, target).await;
        let guard = self.options.confirm.clone();
        let name = target.map(|e| e.name.as_str()).unwrap_or_default();
        let Some(reason) = guard.hold_reason(role, name, danger.as_ref()) else {
            return Ok(());
        };
        let why = reason.to_string();
        let element = match target {
            Some(e) => format!("{} \"{}\"", e.role, e.name),
            None => "the focused field".to_string(),
        };
        let hold = Hold {
            command: step.command.to_string(),
            element,
            why: why.clone(),
            url: actions::page_url(session.page()).await,
            screenshot: self.book.screenshot.clone(),
        };
        // The sign-in the person asked for: every filled password field of the
        // form holds a secret they gave for this host. Nothing else to consent to.
        if let (HoldReason::Password, Some(danger)) = (&reason, &danger) {
            if let Some(names) = self
                .signs_in_with_secrets(session, &step.command, target, danger.passwords_filled)
                .await
            {
                self.book.decisions.push(Decision {
                    hold,
                    allowed: true,
                    by: format!(
                        "a sign-in with the secret {} given for this host",
                        names.join(", ")
                    ),
                });
                return Ok(());
            }
        }
        // Asking may wait on a person at the terminal: off the async threads.
        let decision = tokio::task::spawn_blocking(move || guard.decide(hold))
            .await
            .map_err(|e| {
                (
                    Status::Failed,
                    format!("the confirmation could not be asked: {e}"),
                )
            })?;
        let (allowed, by) = (decision.allowed, decision.by.clone());
        self.book.decisions.push(decision);
        if allowed {
            Ok(())
        } else {
            Err((
                Status::Held,
                format!(
                    "held for a person's confirmation because {why}, and refused ({by}); nothing \
                     was done. Find another way, or STOP if the task needs it"
                ),
            ))
        }
    }

    /// Whether the form this command submits has `filled` password fields and
    /// each holds a secret typed on this very host, still as typed. Returns
    /// the secrets' names.
    async fn signs_in_with_secrets(
        &self,
        session: &Session,
        command: &Command,
        target: Option<&Element>,
        filled: u32,
    ) -> Option<Vec<String>> {
        if filled == 0 || self.book.secret_fields.is_empty() {
            return None;
        }
        let page = session.page();
        let (form_frame, form) = actions::form_of(page, command, target).await?;
        let host = host_of(&actions::document_url(page, &form_frame, form).await?);
        let mut names = Vec::new();
        let mut holding = 0;
        for ((frame, node), typed) in &self.book.secret_fields {
            if typed.host == host
                && *frame == form_frame
                && actions::password_form(page, frame, *node, &typed.value).await == Some(form)
            {
                holding += 1;
                names.extend(typed.names.iter().cloned());
            }
        }
        names.sort();
        names.dedup();
        (holding == filled).then_some(names)
    }
}

/// The host of the page being driven ("" when it has none).
async fn page_host(session: &Session) -> String {
    host_of(&actions::page_url(session.page()).await)
}
