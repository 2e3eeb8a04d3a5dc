//! One page command, in stages: prepared (its element checked, its guard
//! passed), performed, the page settled and followed (new tabs, a lost
//! page), what it brought told (dialogs, downloads, blocked requests, a
//! page outside the policy left), and the page compared with the look
//! before it.
use crate::records::{Outcome, Status};

use std::time::{Duration, Instant, SystemTime};

use super::sequence::Heard;
use super::{actions, effects, gone, tab_ids, Executor};
use crate::browser::Session;
use crate::commands::{Command, Spot, Step};
use crate::perceive::{self, Element};

/// Longest a command's look waits for lines of a ticking page to tick again
/// (each look is taken at the page's next change, not on a clock: a loaded
/// machine runs the page's timers late, 600 ms was once too short).
const TICK_WATCH: Duration = Duration::from_millis(1500);

/// A command ready to perform: as the guard let it through, its element,
/// and the signature of the page it was planned on.
struct Prepared {
    command: Command,
    target: Option<Element>,
    /// The element a DRAG drops on, when it names one.
    drop_on: Option<Element>,
    base_signature: String,
}

impl Executor {
    /// Runs one page command: prepare, perform, settle, tell, compare.
    pub(super) async fn execute(&mut self, session: &mut Session, step: &Step) -> Outcome {
        let start = Instant::now();
        let prepared = match self.prepare(session, step).await {
            Ok(p) => p,
            Err(mut outcome) => {
                // A page that crashed or closed cannot tell which node an
                // element is: that is what to say.
                if let Some(lost) = self.recover_lost_page(session).await {
                    self.lost(&mut outcome, lost, start);
                }
                return outcome;
            }
        };
        let before = self.heard();
        let tabs_before = tab_ids(session).await;
        let acted_at = SystemTime::now();
        let (mut outcome, confirmed) = self.perform(session, step, &prepared).await;
        let settled = self
            .settle_with(
                session,
                self.quiet(),
                self.options.settle_timeout,
                acted_at,
                true,
            )
            .await;
        // Tabs, crashes and closed pages first: they decide which page to look at.
        if let Some(note) = self.follow_tabs(session, &tabs_before).await {
            outcome.changes.push(note);
        }
        if let Some(lost) = self.recover_lost_page(session).await {
            self.lost(&mut outcome, lost, start);
            return outcome;
        }
        self.tell_events(session, &before, &mut outcome).await;
        self.leave_refused_page(session, &mut outcome).await;
        if settled.timed_out {
            outcome.changes.push(format!(
                "the page was still busy after {:.1} s",
                settled.waited.as_secs_f64()
            ));
        }
        self.compare(session, &prepared, &mut outcome).await;
        let changed = !outcome.changes.is_empty() || outcome.page_changed;
        if outcome.status == Status::NoEffect && changed {
            outcome.status = Status::Done;
        }
        // Whether "nothing changed" means "no effect" depends on the action.
        if outcome.status == Status::Done && !confirmed && !changed {
            outcome.status = Status::NoEffect;
        }
        outcome.ms = start.elapsed().as_secs_f64() * 1e3;
        outcome
    }

    /// The outcome of a command whose page was lost (`why`, and what was
    /// done about it): failed, and the ids seen are stale.
    fn lost(&mut self, outcome: &mut Outcome, why: String, start: Instant) {
        outcome.status = Status::Failed;
        outcome.message = why;
        outcome.page_changed = true;
        self.stale = Some("the page was lost".into());
        outcome.ms = start.elapsed().as_secs_f64() * 1e3;
    }

    /// The command checked before it runs: something was observed, its
    /// element is in the current table, and the guard lets it through.
    async fn prepare(&mut self, session: &Session, step: &Step) -> Result<Prepared, Outcome> {
        let fail = |status, why| Outcome::new(step, status, why);
        let Some(seen) = self.seen.as_ref() else {
            return Err(fail(Status::Failed, "nothing was observed yet".into()));
        };
        // "The page changed" means: this command changed it, compared with the
        // latest look (within a batch, the page the batch was planned for).
        let base_signature = self.last.as_ref().unwrap_or(seen).signature.clone();
        let target = match (step.command.target(), step.command.point()) {
            (Some(id), _) => Some(
                self.element(session.page(), id, step)
                    .await
                    .map_err(|why| fail(Status::Failed, why.to_string()))?,
            ),
            // A point is guarded as the element it falls on.
            (None, Some(at)) => {
                let p = super::points::to_css(at, session.viewport())
                    .map_err(|why| fail(Status::Failed, why.to_string()))?;
                match super::points::element_at(&seen.table.elements, p).map(|e| e.id) {
                    // Asked as for its id: that tells its node.
                    Some(id) => self.element(session.page(), id, step).await.ok(),
                    None => None,
                }
            }
            _ => None,
        };
        let drop_on = match &step.command {
            Command::Drag {
                to: Spot::Id(id), ..
            } => Some(
                self.element(session.page(), *id, step)
                    .await
                    .map_err(|why| fail(Status::Failed, why.to_string()))?,
            ),
            _ => None,
        };
        let command = self
            .guard(session, step, target.as_ref())
            .await
            .map_err(|(status, why)| fail(status, why))?;
        Ok(Prepared {
            command,
            target,
            drop_on,
            base_signature,
        })
    }

    /// Performs the command with real input (a renderer that crashed
    /// answers nothing: the wait on it ends at once): its outcome, and
    /// whether the action confirmed its own effect.
    async fn perform(
        &mut self,
        session: &mut Session,
        step: &Step,
        prepared: &Prepared,
    ) -> (Outcome, bool) {
        let Prepared {
            command,
            target,
            drop_on,
            ..
        } = prepared;
        self.acted = true;
        let acted = tokio::select! {
            r = actions::perform(
                session,
                &self.watch.events,
                &self.options,
                command,
                target.as_ref(),
                drop_on.as_ref(),
            ) => r,
            why = gone(&self.watch.events) => Err(why.to_string()),
        };
        let (outcome, confirmed) = match acted {
            Ok(actions::Acted::Confirmed(m)) => (Outcome::new(step, Status::Done, m), true),
            Ok(actions::Acted::Unconfirmed(m)) => (Outcome::new(step, Status::Done, m), false),
            Ok(actions::Acted::NoEffect(m)) => (Outcome::new(step, Status::NoEffect, m), false),
            Err(why) => (Outcome::new(step, Status::Failed, why), false),
        };
        let writes = matches!(
            command,
            Command::Type { .. }
                | Command::Clear { .. }
                | Command::Select { .. }
                | Command::Deselect { .. }
        );
        if let (true, false, Some(e)) = (writes, outcome.status.is_failure(), target) {
            self.book.typed.insert(e.backend_node_id);
        }
        (outcome, confirmed)
    }

    /// Tells what the command brought: dialogs, downloads, and requests the
    /// domain guard blocked (but the browser's own background ones).
    async fn tell_events(&self, session: &Session, before: &Heard, outcome: &mut Outcome) {
        {
            let ev = super::watch::lock(&self.watch.events);
            for d in ev.dialogs.get(before.dialogs..).unwrap_or_default() {
                outcome.changes.push(format!(
                    "{} dialog said {} ({})",
                    article(&d.kind),
                    crate::quote::quoted(&d.message),
                    if d.accepted { "accepted" } else { "dismissed" }
                ));
            }
        }
        for d in self.finished_downloads(session, before.downloads).await {
            outcome.changes.push(d.describe());
        }
        for b in self.blocked_since(before.blocked) {
            if !b.is_browser_background() {
                outcome.changes.push(format!(
                    "a request to {} was blocked: {}",
                    b.target, b.reason
                ));
            }
        }
    }

    /// On a page that ticks, lines that changed across a command and are
    /// not known to tick yet may tick too: the two looks that taught the
    /// page's ticking lines can fall between two ticks of one of them (a
    /// loaded machine runs the page's timers late), and that line's next tick
    /// then read as the command's effect and cut the batch. A page whose looks
    /// all fell between ticks has taught no line at all, so its watcher's word
    /// that something on it moves on its own counts too. Such lines are
    /// watched up to [`TICK_WATCH`], as each change of the page comes, with nothing done:
    /// those that change again change on their own. An effect of the command
    /// (a total shown) does not change again, and stays an effect.
    async fn watch_ticks(&mut self, session: &Session, after: &perceive::Observation) {
        let Some(before) = self.last.as_ref().or(self.seen.as_ref()) else {
            return;
        };
        let Some(mut open) = self.ambient.unexplained(before, after) else {
            return;
        };
        let page = session.page();
        if open.is_empty()
            || !(self.ambient.ticks(&after.url) || perceive::moves_on_its_own(page).await)
        {
            return;
        }
        let until = Instant::now() + TICK_WATCH;
        let mut last = after.clone();
        let mut seen = perceive::mutation_count(page).await;
        while !open.is_empty() && Instant::now() < until {
            // The next change of the page, then a look at it (a page that
            // cannot count its changes is looked at as often).
            let now = perceive::mutation_count(page).await;
            if now.is_none() || now == seen {
                tokio::time::sleep(Duration::from_millis(25)).await;
                if now.is_some() {
                    continue;
                }
            }
            seen = now;
            let Ok(again) =
                perceive::glance(page, session.viewport(), &self.options.perceive).await
            else {
                return;
            };
            self.ambient.learn(&last, &again);
            open.retain(|l| !self.ambient.knows_line(l));
            last = again;
        }
    }

    /// A page outside the domain policy is never left open (see
    /// [`Executor::leave_refused`]): what was done, as a change of the command.
    async fn leave_refused_page(&mut self, session: &mut Session, outcome: &mut Outcome) {
        let shown = session.page().target_id().clone();
        if let Some(left) = self.leave_refused(session).await {
            outcome.page_changed |= *session.page().target_id() != shown;
            outcome.changes.push(left);
        }
    }

    /// Leaves the page shown when the domain policy refuses it: back to the
    /// last one, and a tab with nothing before it but a blank page (a popup
    /// that opened blank, then went to a refused host) is closed for the
    /// tab it came from. What was done, in words; `None` when the page may
    /// be shown.
    pub async fn leave_refused(&mut self, session: &mut Session) -> Option<String> {
        let closed = self.close_refused_tabs(session).await;
        let here = actions::page_url(session.page()).await;
        let Some(why) = self.options.domains.url_refusal(&here) else {
            return closed;
        };
        let _ = actions::back(session.page()).await;
        self.settle(session, self.options.settle_timeout).await;
        let still = actions::page_url(session.page()).await;
        if self.options.domains.url_refusal(&still).is_none() && still != "about:blank" {
            return Some(format!("the page {here} was left at once: {why}"));
        }
        Some(match self.close_tab(session).await {
            Ok(closed) => format!("the tab of {here} was left at once: {why}; {closed}"),
            Err(e) => format!(
                "the page {here} is outside the domain policy ({why}), and could not be left: {e}"
            ),
        })
    }

    /// Closes every other tab of the session the domain policy refuses,
    /// or whose load it cut (an error page): a popup a page opened on its
    /// own, on load or on a timer, which no command's outcome saw. Left
    /// open in front of the page shown, such a tab kept its screenshot
    /// waiting 30 s at every look. What was closed, in words.
    async fn close_refused_tabs(&mut self, session: &Session) -> Option<String> {
        if !self.options.domains.is_active() {
            return None;
        }
        let shown = session.page().target_id().clone();
        let tabs = tokio::time::timeout(Duration::from_secs(2), session.tabs())
            .await
            .ok()?
            .ok()?;
        let mut closed = Vec::new();
        for tab in tabs.into_iter().filter(|t| *t.target_id() != shown) {
            let url = actions::page_url(&tab).await;
            let cut = url.starts_with("chrome-error://");
            let refused = self.options.domains.url_refusal(&url);
            if cut || refused.is_some() {
                let _ = tokio::time::timeout(Duration::from_secs(2), tab.close()).await;
                closed.push(url);
            }
        }
        if closed.is_empty() {
            return None;
        }
        // The page shown is in front again, drawn, and so photographed.
        let _ = tokio::time::timeout(Duration::from_secs(2), session.page().bring_to_front()).await;
        Some(format!(
            "tabs the page opened on its own to refused hosts were closed: {}",
            closed.join(", ")
        ))
    }

    /// Looks at the page after the command and tells what changed from the
    /// look before; a changed page makes the rest of the batch stale. A
    /// line that changes on its own (a clock) is neither the command's
    /// effect nor a new page.
    async fn compare(&mut self, session: &Session, prepared: &Prepared, outcome: &mut Outcome) {
        match perceive::glance(session.page(), session.viewport(), &self.options.perceive).await {
            Ok(after) => {
                self.watch_ticks(session, &after).await;
                let before = self.last.as_ref().or(self.seen.as_ref());
                let same_page = before.is_some_and(|b| self.ambient.only_ambient(b, &after));
                if let Some(before) = before {
                    let node = prepared.target.as_ref().map(|e| e.node);
                    let text_changed = before.signature != after.signature && !same_page;
                    outcome
                        .changes
                        .extend(effects::changes(before, &after, node, text_changed));
                }
                if after.signature != prepared.base_signature && !same_page {
                    outcome.page_changed = true;
                    self.stale = Some(format!("the page changed after {}", outcome.command));
                }
                self.last = Some(after);
            }
            Err(e) => {
                outcome.page_changed = true;
                outcome
                    .changes
                    .push(format!("the page could not be read afterwards: {e}"));
                self.stale = Some("the page could not be read".into());
            }
        }
    }
}

fn article(word: &str) -> String {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {word}")
    } else {
        format!("a {word}")
    }
}
