//! One step of the loop, each stage a function named for it: look, notes,
//! the record, plan (a skill's commands or the model's), act, the outcome
//! taken in, the person asked, and how the step ends the run.
use crate::records::{BatchReport, CheckpointEvent, CheckpointRecord, Finish};

use std::time::Instant;
use tracing::Instrument;

use super::state::{Ending, Run};
use super::{ask, prompt, skill_use, view, Agent};
use crate::act::Executor;
use crate::brain::{self, Image, Prompt};
use crate::browser::{self, ConsentRecord, Session};
use crate::commands;
use crate::journal::Journal;
use crate::perceive;
use crate::records::{ActRecord, Asked, RunStatus, Shown, StepRecord, StepTimings};
use crate::safety;
use ask::Answer;

/// What a COMPLETE is checked against: the person's checks and the task's
/// count.
struct Checks<'a> {
    expect: &'a [crate::check::Check],
    task: &'a str,
    /// The run holds secrets: a script's value is not told to the model.
    sealed: bool,
    /// The model that judges the run after the checks, if any.
    judge: Option<&'a mut crate::judge::Judge>,
    /// Prices, for what the judge costs.
    prices: &'a crate::brain::Prices,
    /// The step under way, as its line of history will read.
    now: String,
}

/// Past steps the judge reads in full (older ones folded as the model's).
const JUDGE_STEPS_IN_FULL: usize = 20;

/// COMPLETEs refused by the run's checks before the run ends unverified.
const REFUSALS: usize = 2;

/// How often the same commands on the same page count as a loop: warned at
/// the first number, stopped at the second.
const LOOP_WARN: usize = 2;
const LOOP_STOP: usize = 3;
/// Steps in a row the same impasse may last, the model making no progress
/// against it, before the run ends.
const IMPASSE_STEPS: usize = 3;

/// What a step works with: the browser, the executor and the run's journal.
struct Stage<'a> {
    session: &'a mut Session,
    exec: &'a mut Executor,
    journal: &'a mut Journal,
}

/// A step's look at the page, before the model or a skill plans on it.
struct Look {
    obs: perceive::Observation,
    view: view::ModelView,
    /// The screenshot's file in the run directory.
    screenshot: String,
    impasse: Option<safety::Impasse>,
    /// The person was handed the browser to solve a CAPTCHA.
    handed_over: bool,
    /// Every cookie banner answered by rule in the session so far.
    consent: Vec<ConsentRecord>,
    timings: StepTimings,
}

/// What the model is told beside the page, and the requests the domain
/// policy blocked since the last step.
struct StepNotes {
    notes: Vec<String>,
    blocked: Vec<safety::Blocked>,
    /// Cookie banners answered by rule since the last step.
    consent: Vec<ConsentRecord>,
}

/// A close look taken for this step: what the model is told of it, its
/// file in the run directory, the image sent.
struct CloseLook {
    note: String,
    file: Option<String>,
    image: Option<brain::Image>,
}

/// A step's commands, and whether they came from a skill.
struct Planned {
    steps: Vec<commands::Step>,
    from_skill: bool,
}

/// What planning a step comes to.
enum Decision {
    /// Commands to run.
    Commands(Planned),
    /// The step is over without commands: `Some` ends the run.
    Ends(Option<Ending>),
}

/// How long a page after a skill's step may take to show the next step's
/// targets before the model takes over (see `Agent::look_for_targets`): a
/// model's call costs seconds too.
const SKILL_PATIENCE: std::time::Duration = std::time::Duration::from_secs(3);

impl Agent {
    /// The time now: a fixed page clock is the clock the model is told too.
    fn now(&self) -> std::time::SystemTime {
        match &self.options.browser.place.clock {
            Some(clock) => clock.now(),
            None => crate::clock::now(),
        }
    }

    /// One step: look, note what the model must know, plan (from a skill
    /// or the model), act, take in the outcome, and end the step.
    /// `Ok(Some)` ends the run, `Ok(None)` goes on, `Err` ends it on an error.
    pub(super) async fn step(
        &mut self,
        step: usize,
        session: &mut Session,
        exec: &mut Executor,
        journal: &mut Journal,
        run: &mut Run,
    ) -> Result<Option<Ending>, Ending> {
        run.step = step;
        let mut stage = Stage {
            session,
            exec,
            journal,
        };
        let mut look = self.look(step, &mut stage).await?;
        if std::mem::take(&mut run.settled_briskly) {
            look = self.look_for_targets(step, &mut stage, run, look).await?;
        }
        self.show_live(step, stage.session, &look.obs, &look.view);
        run.now = page_time(stage.session.page(), self.now()).await;
        let tabs = (stage.exec.tabs(stage.session).await)
            .ok()
            .and_then(|tabs| crate::act::tabs_note(&tabs));
        let mut notes = self.notes(run, &look, tabs)?;
        let (zoom, secrets) = (run.zoom.take(), &self.options.act.secrets);
        let close_look = close_look(step, &mut stage, &look.obs, zoom, secrets, &mut notes).await;
        let shown = run
            .shown
            .take()
            .and_then(|file| shown_download(&file, &mut notes.notes));
        let (obs, mut record, reading) = self.record(step, &mut stage, run, look, notes);
        if let Some(look) = close_look {
            record.close_look = look.file;
            run.close_look.extend(look.image);
        }
        run.close_look.extend(shown);
        let planned = match self
            .plan(&mut record, run, stage.journal, &obs, reading.as_deref())
            .await?
        {
            Decision::Commands(planned) => planned,
            Decision::Ends(ending) => return Ok(ending),
        };
        record.commands = planned
            .steps
            .iter()
            .take(crate::act::MAX_COMMANDS)
            .map(|s| s.to_string())
            .collect();
        if let Some(ending) = self.answered_again(&planned.steps, run, stage.journal, &record)? {
            return Ok(Some(ending));
        }
        let mut report = self
            .act(&mut stage, run, &obs, &planned, &mut record)
            .instrument(crate::traces::stage_span("act"))
            .await?;
        let finish = report.finish.clone();
        // COMPLETE is checked before the step goes into the history and the
        // journal: one that was not accepted is shown so there, with why.
        let verdict = match &finish {
            Some(Finish::Complete { summary }) => {
                let summary = summary.clone();
                self.check_complete(summary, &mut stage, run, &obs, &record, &mut report)
                    .await
            }
            _ => None,
        };
        if let Some(ending) = self.take_outcome(stage.journal, run, &obs, &mut record, report)? {
            return Ok(Some(ending));
        }
        match &finish {
            Some(Finish::Ask { question }) => {
                let asked = self.ask_person(question, &mut stage, run, &mut record);
                if let Some(ending) = asked.await? {
                    return Ok(Some(ending));
                }
            }
            // Journaled there, before the hand-over's own record.
            Some(Finish::Hands { reason }) => {
                return self
                    .lend_hands(reason, stage.journal, run, &mut record)
                    .await
            }
            _ => {}
        }
        self.finish_step(stage.journal, &record)?;
        Ok(self.ending(finish, verdict, run, &record))
    }

    /// After a skill's brisk batch, a page that does not show the next
    /// step's targets yet is given the usual wait and looked at again, for
    /// up to [`SKILL_PATIENCE`], before the model is asked to take over: as
    /// a script waits for its next element.
    async fn look_for_targets(
        &mut self,
        step: usize,
        stage: &mut Stage<'_>,
        run: &Run,
        mut look: Look,
    ) -> Result<Look, Ending> {
        let until = Instant::now() + SKILL_PATIENCE;
        while Instant::now() < until
            && run
                .skills
                .as_ref()
                .is_some_and(|s| s.misses_targets(&look.obs))
        {
            let before = look.timings;
            stage.exec.settle_fully(stage.session).await;
            // Boxed: the step's future would otherwise hold a second look's.
            look = Box::pin(self.look(step, stage)).await?;
            look.timings.perceive_ms += before.perceive_ms;
            look.timings.mark_ms += before.mark_ms;
        }
        Ok(look)
    }

    /// Checks a COMPLETE against the person's checks, the counts and the
    /// judge: the run's end when it holds (or cannot be checked), none when
    /// it was refused, which the report then says.
    async fn check_complete(
        &mut self,
        summary: String,
        stage: &mut Stage<'_>,
        run: &mut Run,
        obs: &perceive::Observation,
        record: &StepRecord,
        report: &mut BatchReport,
    ) -> Option<Ending> {
        let checks = Checks {
            expect: &self.options.expect,
            task: &self.task,
            sealed: !self.options.act.secrets.is_empty(),
            judge: self.extras.judge.as_mut(),
            prices: &self.options.prices,
            now: super::history::in_full(record.step, &obs.url, report),
        };
        let verdict = Self::verify(checks, stage, run, record.step, summary).await;
        let refusal = match &verdict {
            Err(told) => Some(told.clone()),
            Ok(e) if e.status == RunStatus::Unverified => Some(e.reason.clone()),
            Ok(_) => None,
        };
        if let Some(why) = refusal {
            refuse_complete(report, &why);
        }
        verdict.ok()
    }

    /// The step's look: the page perceived, the model's view of it drawn
    /// and its screenshot saved, and the impasse it shows. A CAPTCHA is the
    /// person's to solve when they can see the browser: handed over once,
    /// then looked at again.
    async fn look(&mut self, step: usize, stage: &mut Stage<'_>) -> Result<Look, Ending> {
        let fail = Ending::failed;
        let mut timings = StepTimings::default();
        let mut handed_over = false;
        loop {
            let t = Instant::now();
            // A tab that went to a refused host since the last command
            // (a popup navigated after it opened) is left first.
            let left = stage.exec.leave_refused(stage.session).await;
            let obs = match observe_past_banners(stage.exec, stage.session)
                .instrument(crate::traces::stage_span("perceive"))
                .await
            {
                Ok(mut obs) => {
                    obs.notes.extend(left);
                    obs
                }
                Err(e) => {
                    let session = &stage.session;
                    let why = if !session.is_alive() {
                        "the browser was lost (it crashed, or was killed or closed)"
                    } else if !session.has_page().await {
                        "the page was lost (its tab or its browser context closed)"
                    } else {
                        "the page could not be read"
                    };
                    return Err(fail(format!("{why}: {e}")));
                }
            };
            timings.perceive_ms = ms(t);
            let t = Instant::now();
            let (view, screenshot) = crate::traces::stage_span("mark").in_scope(|| {
                let view = view::model_view(
                    &obs,
                    stage.exec,
                    &self.options.act.secrets,
                    self.options.scrub,
                    self.options.list_cap,
                )
                .map_err(|e| fail(e.to_string()))?;
                let screenshot = stage
                    .journal
                    .save_image(step, "png", &view.full_png)
                    .map_err(|e| fail(e.to_string()))?;
                Ok::<_, Ending>((view, screenshot))
            })?;
            timings.mark_ms = ms(t);
            // A sign-in page is no impasse when the person gave a secret for
            // its host: the model is told which names it may type there.
            let impasse = safety::detect_impasse(stage.session.page())
                .await
                .filter(|i| *i != safety::Impasse::LoginWall || view.usable_secrets.is_empty());
            let look = Look {
                obs,
                view,
                screenshot,
                impasse,
                handed_over,
                consent: stage.session.consent_handled(),
                timings,
            };
            let Some(asker) = &self.extras.asker else {
                return Ok(look);
            };
            let captcha = match &look.impasse {
                Some(safety::Impasse::Captcha { which }) => which,
                _ => return Ok(look),
            };
            if !self.options.hand_over || handed_over {
                return Ok(look);
            }
            handed_over = ask::hand_over(
                asker,
                &format!(
                    "The page shows a CAPTCHA ({captcha}). Solve it in the browser window, then \
                     press Enter"
                ),
            )
            .await;
            if !handed_over {
                return Ok(look);
            }
        }
    }

    /// What the model is told beside the page: the look's notes, a CAPTCHA
    /// solved by the person, the secrets it may type, the files it may
    /// upload, the tabs open, requests the domain
    /// policy blocked, and the impasse, counted over the steps that made no
    /// progress against it (a model that closes a popup over a sign-in form
    /// and fills it is not stuck); one that lasts ends the run.
    fn notes(&self, run: &mut Run, look: &Look, tabs: Option<String>) -> Result<StepNotes, Ending> {
        run.impasse = match (run.impasse.take(), look.impasse.clone()) {
            (Some((old, n)), Some(new)) if old == new => {
                Some((new, if run.progressed { n } else { n + 1 }))
            }
            (_, Some(new)) => Some((new, 1)),
            (_, None) => None,
        };
        let mut notes = look.obs.notes.clone();
        if look.handed_over {
            notes.push(
                "the person was handed the browser to solve a CAPTCHA, and says it is done".into(),
            );
        }
        notes.extend(look.view.secrets_note());
        notes.extend(view::files_note(&look.obs, self.options.act.files.as_ref()));
        notes.extend(tabs);
        let blocked = self.blocked_since(&mut run.blocked_told);
        let told: Vec<String> = blocked
            .iter()
            .filter(|b| !b.is_browser_background())
            .map(|b| format!("{} ({})", b.target, b.reason))
            .collect();
        if !told.is_empty() {
            notes.push(format!(
                "the domain policy blocked requests of this page: {}",
                told.join("; ")
            ));
        }
        let consent = look
            .consent
            .get(run.consent_told..)
            .unwrap_or_default()
            .to_vec();
        run.consent_told = look.consent.len();
        notes.extend(browser::consent_note(&consent));
        if let Some((imp, n)) = &run.impasse {
            if *n >= IMPASSE_STEPS {
                return Err(Ending::new(
                    RunStatus::Stopped,
                    format!("impasse: {} (for {n} steps in a row)", imp.describe()),
                ));
            }
            notes.push(format!("IMPASSE: {}", imp.describe()));
        }
        Ok(StepNotes {
            notes,
            blocked,
            consent,
        })
    }

    /// The step's record as the look and its notes make it, before the
    /// plan; the reading the last READ left for the prompt; the look's
    /// image kept among the ones the model is sent.
    fn record(
        &self,
        step: usize,
        stage: &mut Stage<'_>,
        run: &mut Run,
        look: Look,
        notes: StepNotes,
    ) -> (perceive::Observation, StepRecord, Option<String>) {
        let Look {
            obs,
            view,
            screenshot,
            timings,
            ..
        } = look;
        let StepNotes {
            mut notes,
            blocked,
            consent,
        } = notes;
        let privacy = view::privacy(stage.exec, &self.options.act.secrets, self.options.scrub);
        let reading = prompt::model_reading(&std::mem::take(&mut run.readings), &privacy);
        let view::ModelView {
            elements,
            title,
            sent: image,
            ..
        } = view;
        if reading.is_none() {
            notes.extend(prompt::reading_note(obs.text_chars, elements.len()));
        }
        stage
            .exec
            .set_screenshot(Some(stage.journal.dir().join(&screenshot)));
        run.images.push_back(image);
        while run.images.len() > self.options.images.max(1) {
            run.images.pop_front();
        }
        if run.shows_before && run.images.len() > 1 {
            notes.push(
                "the first image is the page before your last commands, the last one the page now"
                    .into(),
            );
        }
        let shown = Shown {
            url: obs.url.clone(),
            title,
            signature: obs.signature.clone(),
            elements,
            notes,
            screenshot,
        };
        let record = StepRecord {
            blocked,
            consent,
            timings,
            ..StepRecord::new(step, shown)
        };
        (obs, record, reading)
    }

    /// The step's commands: the skill's, while the page fits it (no model
    /// call), else the model's, told first where the skill stopped.
    async fn plan(
        &mut self,
        record: &mut StepRecord,
        run: &mut Run,
        journal: &mut Journal,
        obs: &perceive::Observation,
        reading: Option<&str>,
    ) -> Result<Decision, Ending> {
        match run.skills.as_mut().and_then(|s| s.turn(obs)) {
            Some(skill_use::Turn::Commands(planned, mark)) => {
                let url = self.options.act.secrets.redact(&obs.url);
                self.progress
                    .following(record.step, self.options.max_steps, &url, &mark.name);
                let answer: Vec<String> = planned.steps.iter().map(|s| s.to_string()).collect();
                record.answer = Some(answer.join("\n"));
                record.skill = Some(mark);
                run.prompt_tokens.push(record.prompt_tokens);
                Ok(Decision::Commands(Planned {
                    steps: planned.steps,
                    from_skill: true,
                }))
            }
            turn => {
                if let Some(skill_use::Turn::TakeOver(mark)) = turn {
                    let done = run.skills.as_ref().map_or(0, |s| s.report.steps);
                    let told = format!(
                        "seamark did {done} steps of this task from a skill it learned before \
                         ({}), without you; it stops following it here: {}. Go on from this page.",
                        mark.name,
                        mark.took_over.as_deref().unwrap_or_default()
                    );
                    run.feedback = Some(match run.feedback.take() {
                        Some(f) => format!("{told}\n{f}"),
                        None => told,
                    });
                    record.skill = Some(mark);
                }
                self.decide(record, run, journal, obs, reading).await
            }
        }
    }

    /// An answer-only step that gives the recorded answer again ends the
    /// run as done: the model has what the task asked for and forgot
    /// COMPLETE, as models do. With checks, or a count to check, an answer
    /// given again is no COMPLETE: the task is checked only when COMPLETE
    /// comes.
    fn answered_again(
        &self,
        steps: &[commands::Step],
        run: &Run,
        journal: &mut Journal,
        record: &StepRecord,
    ) -> Result<Option<Ending>, Ending> {
        let checked =
            !self.options.expect.is_empty() || crate::evidence::counted(&self.task).is_some();
        let Some(answer) = repeated_answer(steps, run.answer.as_deref()).filter(|_| !checked)
        else {
            return Ok(None);
        };
        let reason = format!("answered: {answer} (given again without COMPLETE)");
        self.finish_step(journal, record)?;
        Ok(Some(Ending::new(RunStatus::Done, reason)))
    }

    /// Runs the planned commands through the executor, journaled before
    /// they run (a run that dies before their outcome is recorded knows,
    /// when it goes on, that they may have run), and keeps what they gave:
    /// answers, readings, data, checkpoints, failures and progress.
    async fn act(
        &mut self,
        stage: &mut Stage<'_>,
        run: &mut Run,
        obs: &perceive::Observation,
        planned: &Planned,
        record: &mut StepRecord,
    ) -> Result<BatchReport, Ending> {
        self.live_doing(|| format!("acting: {}", record.commands.join(" · ")));
        stage
            .journal
            .write(&ActRecord {
                kind: "act",
                step: record.step,
                commands: record.commands.clone(),
            })
            .map_err(|e| Ending::failed(e.to_string()))?;
        let t = Instant::now();
        stage.exec.set_brisk(planned.from_skill);
        let report = stage.exec.run(stage.session, &planned.steps).await;
        stage.exec.set_brisk(false);
        run.settled_briskly = planned.from_skill;
        if let Some(skills) = run.skills.as_mut() {
            skills.after(planned.from_skill, obs, &planned.steps, &report);
        }
        record.url_after = stage.session.page().url().await.ok().flatten();
        Self::keep_checkpoints(stage.journal, run, record.step, &report);
        // The batch report told these already.
        let _ = self.blocked_since(&mut run.blocked_told);
        record.timings.act_ms = ms(t);
        if let Some(a) = report.answers.last() {
            run.answer = Some(a.clone());
        }
        run.readings = report.readings.clone();
        run.zoom = report.zoom;
        run.shown = report.shown.clone();
        for d in &report.downloads {
            if let Some(file) = &d.saved {
                stage
                    .journal
                    .write(&crate::records::DownloadRecord {
                        kind: "download",
                        step: record.step,
                        file: file.clone(),
                    })
                    .map_err(|e| Ending::failed(e.to_string()))?;
                run.downloads.push(file.clone());
            }
        }
        if report.data.is_some() {
            run.data = report.data.clone();
        }
        run.failures = if report.failed() { run.failures + 1 } else { 0 };
        run.progressed = report.progress;
        Ok(report)
    }

    /// Takes the batch's outcome into the next prompt (its feedback and a
    /// line of history) and the record. The same commands on the same page
    /// with the same outcome, again and again, are a loop: warned, then
    /// the run ends. A command that made progress (scrolled further, set
    /// another value) has another outcome, so it is no repetition.
    fn take_outcome(
        &self,
        journal: &mut Journal,
        run: &mut Run,
        obs: &perceive::Observation,
        record: &mut StepRecord,
        report: BatchReport,
    ) -> Result<Option<Ending>, Ending> {
        let mut feedback = report.feedback();
        let key = (
            obs.signature.clone(),
            record.commands.join("; "),
            feedback.clone(),
        );
        let seen = {
            let n = run.repeats.entry(key).or_default();
            *n += 1;
            *n
        };
        if seen >= LOOP_STOP {
            let reason = format!(
                "stuck: the same commands ({}) on the same page {seen} times, with the same outcome",
                record.commands.join("; ")
            );
            record.error = Some(reason.clone());
            record.report = Some(report);
            self.finish_step(journal, record)?;
            return Ok(Some(Ending::failed(reason)));
        }
        if seen >= LOOP_WARN {
            feedback.push_str(&format!(
                "\nWarning: you sent these same commands on this same page {seen} times, with the \
                 same outcome; they do not get the task further. Try something else, or STOP with \
                 the reason."
            ));
        }
        run.feedback = Some(feedback);
        run.history.push(record.step, &obs.url, &report);
        // A destructive action parked for a person (`--confirm park`) ends
        // the run as a question: their yes or no comes with `resume`.
        if let Some(parked) = report.confirmations.iter().find(|d| d.parked()) {
            let question = parked.hold.question();
            record.asked = Some(Asked {
                question: question.clone(),
                answer: None,
            });
            record.report = Some(report);
            self.finish_step(journal, record)?;
            return Ok(Some(Ending::new(RunStatus::NeedsInput, question)));
        }
        // A command at a point of the image says where it acted, not what it
        // changed (ZOOM's box only shows).
        let at_a_point = |command: &str| {
            crate::commands::parse(command)
                .ok()
                .and_then(|steps| steps.into_iter().next())
                .is_some_and(|s| s.command.acts_at_a_point())
        };
        run.shows_before = report
            .outcomes
            .iter()
            .any(|o| o.status == crate::records::Status::NoEffect || at_a_point(&o.command));
        record.report = Some(report);
        Ok(None)
    }

    /// The model's ASK put to the person: their answer goes to the model
    /// next step (kept as a secret when it is one); with no one to ask, the
    /// run ends needing their answer.
    async fn ask_person(
        &mut self,
        question: &str,
        stage: &mut Stage<'_>,
        run: &mut Run,
        record: &mut StepRecord,
    ) -> Result<Option<Ending>, Ending> {
        let answer = match &self.extras.asker {
            Some(asker) => ask::ask(asker, question).await,
            None => None,
        };
        let Some(text) = answer else {
            record.asked = Some(Asked {
                question: question.to_string(),
                answer: None,
            });
            self.finish_step(stage.journal, record)?;
            return Ok(Some(Ending::new(
                RunStatus::NeedsInput,
                question.to_string(),
            )));
        };
        let told = match Answer::take(&text, &mut self.options.act.secrets) {
            Ok(answer) => {
                // The answer's secret is kept out of text from now on.
                stage.exec.set_secrets(self.options.act.secrets.clone());
                stage.journal.redact(self.options.act.secrets.clone());
                run.history.answered(question, &answer.recorded());
                record.asked = Some(Asked {
                    question: question.to_string(),
                    answer: Some(answer.recorded()),
                });
                answer.feedback(question)
            }
            Err(why) => format!(
                "The person's answer to \"{question}\" could not be kept as a secret ({why}); ASK \
                 again"
            ),
        };
        run.feedback = Some(match run.feedback.take() {
            Some(f) => format!("{f}\n{told}"),
            None => told,
        });
        Ok(None)
    }

    /// How the step ends the run, if it does: COMPLETE checked (`verdict`:
    /// the run's end when its checks held, or at the last refusal), STOP,
    /// or too many failed steps in a row.
    fn ending(
        &mut self,
        finish: Option<Finish>,
        verdict: Option<Ending>,
        run: &mut Run,
        record: &StepRecord,
    ) -> Option<Ending> {
        match finish {
            Some(Finish::Ask { .. } | Finish::Hands { .. }) => None,
            Some(Finish::Complete { .. }) => verdict,
            Some(Finish::Stop { reason }) => Some(Ending::new(
                RunStatus::Stopped,
                format!("stopped: {reason}"),
            )),
            None if run.failures >= self.options.max_failures => {
                let last = record.report.as_ref().and_then(|r| {
                    let failed = r.outcomes.iter().rfind(|o| o.status.is_failure());
                    failed.map(|o| o.line())
                });
                Some(Ending::failed(format!(
                    "{} steps in a row failed; last: {}",
                    run.failures,
                    last.unwrap_or_default()
                )))
            }
            None => None,
        }
    }

    /// Asks the model for this step's commands: the prompt, the call, its
    /// cost, the plan, and the answer parsed. An answer that cannot be read
    /// ends the step (and, too often in a row, the run).
    async fn decide(
        &mut self,
        record: &mut StepRecord,
        run: &mut Run,
        journal: &mut Journal,
        obs: &perceive::Observation,
        reading: Option<&str>,
    ) -> Result<Decision, Ending> {
        let fail = Ending::failed;
        let (step, max) = (record.step, self.options.max_steps);
        let text = prompt::step_text(&prompt::StepView {
            task: &self.task,
            plan: run.plan.as_deref(),
            checkpoints: &run.checkpoints,
            history: &run.history.shown(self.options.history),
            feedback: run.feedback.as_deref(),
            step,
            max_steps: max,
            url: &obs.url,
            title: &record.title,
            notes: &record.notes,
            elements: &record.elements,
            reading,
            now: &run.now,
        });
        let look = std::mem::take(&mut run.close_look);
        let request = Prompt {
            system: run.system.clone(),
            // Secrets the model itself wrote back (it never saw them) stay out too.
            text: self.options.act.secrets.redact(&text),
            images: with_close_look(run.images_to_send(), look),
            step,
            signature: obs.signature.clone(),
        };
        record.prompt_chars = request.system.len() + request.text.len();
        record.prompt_tokens = brain::tokens::count(&self.brain.name(), &request);
        record.images = request.images.len();
        run.prompt_tokens.push(record.prompt_tokens);
        self.progress
            .thinking(step, max, &self.options.act.secrets.redact(&obs.url));
        self.live_doing(|| "asking the model".into());
        let t = Instant::now();
        let chat = crate::traces::chat_span(&self.brain.name());
        let reply = self.brain.answer(&request).instrument(chat.clone()).await;
        crate::traces::end_chat(
            &chat,
            match &reply {
                Ok(r) => Ok(r.usage),
                Err(e) => Err(e.kind()),
            },
        );
        record.timings.model_ms = ms(t);
        self.progress.answered(step);
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                let reason = format!("the model failed: {e}");
                record.error = Some(reason.clone());
                self.finish_step(journal, record)?;
                return Err(fail(reason));
            }
        };
        record.answer = Some(crate::records::kept_answer(&reply.text));
        record.spend = self.spend_of(reply.usage);
        run.add_spend(record.spend);
        if let Some(d) = reply.divergence {
            run.divergences.push(d.clone());
            record.divergence = Some(d);
        }
        let (plan, commands_text) = prompt::split_plan(&reply.text);
        if plan.is_some() {
            run.plan = plan;
        }
        record.plan = run.plan.clone();
        let steps = match commands::parse(&commands_text) {
            Ok(steps) => steps,
            Err(e) => return self.unreadable(&e.to_string(), record, run, journal, &obs.url),
        };
        Ok(Decision::Commands(Planned {
            steps,
            from_skill: false,
        }))
    }

    /// An answer that could not be read: the model is told why, and too
    /// many in a row end the run.
    fn unreadable(
        &self,
        err: &str,
        record: &mut StepRecord,
        run: &mut Run,
        journal: &mut Journal,
        url: &str,
    ) -> Result<Decision, Ending> {
        run.failures += 1;
        run.progressed = false;
        record.parse_error = Some(err.to_string());
        run.feedback = Some(format!(
            "Your answer could not be read: {err}. Answer with commands only, one per line."
        ));
        run.history.push_unreadable(record.step, url);
        self.finish_step(journal, record)?;
        if run.failures >= self.options.max_failures {
            return Ok(Decision::Ends(Some(Ending::failed(format!(
                "the model's answers could not be read {} times in a row; last: {err}",
                run.failures
            )))));
        }
        Ok(Decision::Ends(None))
    }

    /// Journals the checkpoints the batch kept or went back to, and keeps
    /// the list the prompt shows.
    fn keep_checkpoints(journal: &mut Journal, run: &mut Run, step: usize, report: &BatchReport) {
        for record in &report.checkpoints {
            let record = CheckpointRecord {
                step,
                ..record.clone()
            };
            if let Err(e) = journal.write(&record) {
                tracing::warn!("a checkpoint's record was not written: {e}");
            }
            if record.event == CheckpointEvent::Kept {
                run.checkpoints.retain(|(name, ..)| *name != record.name);
                run.checkpoints.push((record.name, record.url, step));
            }
        }
    }

    /// Runs the run's checks when the model says the task is done: all hold
    /// (or there are none), the run is done; one fails, COMPLETE is refused
    /// (`Err`, what the model is told: what the page shows instead), and at
    /// the second refusal the run ends unverified.
    async fn verify(
        checks: Checks<'_>,
        stage: &mut Stage<'_>,
        run: &mut Run,
        step: usize,
        summary: String,
    ) -> Result<Ending, String> {
        let (session, journal) = (&*stage.session, &mut *stage.journal);
        let mut failed = Vec::new();
        let mut keep = |record: crate::records::CheckRecord, told: String| {
            if !record.passed {
                failed.push(format!("{} {:?}: {told}", record.check, record.wanted));
            }
            if let Err(e) = journal.write(&record) {
                tracing::warn!("a check's record was not written: {e}");
            }
        };
        for check in checks.expect {
            let page = match check.needs_page() {
                true => Some(crate::check::look(session, check).await),
                false => None,
            };
            let (passed, detail) = crate::check::judge(
                check,
                run.answer.as_deref(),
                page,
                "there was no page to check",
            );
            let told = crate::check::told(check, &detail, checks.sealed);
            keep(
                crate::records::CheckRecord::new(
                    step,
                    check.kind(),
                    check.wanted(),
                    passed,
                    detail,
                ),
                told,
            );
        }
        if let Some(counted) = crate::evidence::counted(checks.task) {
            let (wanted, passed, detail) =
                crate::evidence::judge(counted, &summary, run.answer.as_deref(), session).await;
            let told = detail.clone();
            keep(
                crate::records::CheckRecord::new(step, "count", &wanted, passed, detail),
                told,
            );
        }
        // The judge, once the checks hold: its fail is one more that does not.
        if let (true, Some(judge)) = (failed.is_empty(), checks.judge) {
            let case = judge_case(judge, run, checks.task, &summary, checks.now.clone());
            let (answer, usage) = judge.judge(&case).await;
            let model = judge.name();
            match keep_verdict(model, answer, usage, checks.prices, run, journal, step) {
                Ok(None) => {}
                Ok(Some(fail)) => failed.push(fail),
                Err(ending) => return Ok(ending),
            }
        }
        if failed.is_empty() {
            return Ok(Ending::new(RunStatus::Done, summary));
        }
        run.refusals += 1;
        let failed = failed.join("; ");
        if run.refusals >= REFUSALS {
            return Ok(Ending::new(
                RunStatus::Unverified,
                format!(
                    "the model said the task was done ({summary}) {} times, but the checks did \
                     not hold: {failed}",
                    run.refusals
                ),
            ));
        }
        let told = format!(
            "COMPLETE was not accepted: the person's checks of the task do not hold yet: {failed}. \
             Look at the page, do what is missing, then COMPLETE again."
        );
        Err(told)
    }

    /// The guard's refusals after the first `told`, and `told` moved past them.
    fn blocked_since(&self, told: &mut usize) -> Vec<safety::Blocked> {
        let Some(record) = &self.options.act.blocked else {
            return Vec::new();
        };
        let all = record.lock().map(|b| b.clone()).unwrap_or_default();
        let new = all.get(*told..).unwrap_or_default().to_vec();
        *told = all.len();
        new
    }

    pub(super) fn finish_step(
        &self,
        journal: &mut Journal,
        record: &StepRecord,
    ) -> Result<(), Ending> {
        // Progress is shown as the journal keeps it: a secret typed into a
        // form sent by GET is in the next page's URL.
        match self.options.act.secrets.redacted(record) {
            Ok(shown) => {
                crate::traces::end_step(&shown);
                self.progress.step(&shown, self.options.max_steps);
            }
            Err(e) => tracing::warn!("step {} is not shown: {e}", record.step),
        }
        journal
            .write(record)
            .map_err(|e| Ending::failed(e.to_string()))
    }
}

/// The answer of an answer-only step (only ANSWER commands) that repeats
/// the recorded one, ignoring case and spacing.
fn repeated_answer(steps: &[commands::Step], recorded: Option<&str>) -> Option<String> {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let recorded = norm(recorded?);
    let answers: Vec<&str> = steps
        .iter()
        .map(|s| match &s.command {
            commands::Command::Answer { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let last = *answers.last()?;
    (!recorded.is_empty() && answers.iter().all(|a| norm(a) == recorded)).then(|| last.to_string())
}

/// Keeps the judge's answer (`model`'s) in the run and the journal: what
/// failed in its words (none when it passes), or the run's end when its
/// answer could not be had.
fn keep_verdict(
    model: String,
    answer: Result<crate::judge::Judgement, crate::judge::JudgeError>,
    usage: brain::Usage,
    prices: &crate::brain::Prices,
    run: &mut Run,
    journal: &mut Journal,
    step: usize,
) -> Result<Option<String>, Ending> {
    let report = run
        .judge
        .get_or_insert_with(|| crate::records::JudgeReport {
            model: model.clone(),
            verdict: None,
            reason: String::new(),
            judged: 0,
            spend: crate::records::Spend::default(),
        });
    report.judged += 1;
    report.spend += crate::records::Spend {
        tokens: usage,
        cost_usd: prices.of(&model).map(|p| p.cost(usage)),
    };
    // What the journal keeps, and the run's end when there is no verdict.
    let (passed, detail, outcome) = match answer {
        Ok(j) => {
            report.verdict = Some(j.verdict);
            report.reason = j.reason.clone();
            let passed = j.verdict != crate::judge::Verdict::Fail;
            let fail = (!passed).then(|| {
                format!(
                    "the judge ({model}) says: {}",
                    crate::quote::quoted(&j.reason)
                )
            });
            let detail = format!("{}: {}", j.verdict.word(), j.reason);
            (passed, detail, Ok(fail))
        }
        Err(e) => {
            report.verdict = None;
            report.reason = e.to_string();
            let reason = match &e {
                crate::judge::JudgeError::Unreadable { .. } => {
                    "the judge's answer could not be read".to_string()
                }
                crate::judge::JudgeError::Brain(b) => {
                    format!("the judge could not be asked: {b}")
                }
            };
            (
                false,
                e.to_string(),
                Err(Ending::new(RunStatus::Unverified, reason)),
            )
        }
    };
    let record = crate::records::CheckRecord::new(step, "judge", &model, passed, detail);
    if let Err(e) = journal.write(&record) {
        tracing::warn!("the judge's record was not written: {e}");
    }
    outcome
}

/// Looks at the page while the cookie banners being answered by rule
/// settle, so that a banner about to go is not shown to the model. Most
/// pages show none, and the look costs no wait for them; a banner found or
/// answered meanwhile makes it look again once the banners are done.
async fn observe_past_banners(
    exec: &mut Executor,
    session: &Session,
) -> Result<perceive::Observation, crate::act::ActError> {
    let stirred = session.consent_stirred();
    // Boxed: a look's future is large, and a step's holds this one.
    let (obs, ()) = tokio::join!(Box::pin(exec.observe(session)), session.consent_settled());
    let obs = obs?.clone();
    if session.consent_stirred() == stirred {
        return Ok(obs);
    }
    Ok(Box::pin(exec.observe(session)).await?.clone())
}

/// What the judge is shown: the task, the answer (or data), the summary,
/// the plan, every step's line of history with the one under way, and the
/// last screenshots the agent was sent (marked, with password and secret
/// fields painted over), the last one the page it said COMPLETE on.
fn judge_case<'a>(
    judge: &crate::judge::Judge,
    run: &'a Run,
    task: &'a str,
    summary: &'a str,
    now: String,
) -> crate::judge::Case<'a> {
    let kept = run.images.len();
    let images = run
        .images
        .iter()
        .skip(kept.saturating_sub(judge.images()))
        .cloned()
        .collect();
    let mut steps = run.history.shown(JUDGE_STEPS_IN_FULL);
    steps.push(now);
    crate::judge::Case {
        task,
        answer: run
            .data
            .as_ref()
            .map(ToString::to_string)
            .or_else(|| run.answer.clone()),
        summary,
        plan: run.plan.as_deref(),
        steps,
        images,
    }
}

/// Marks the batch's COMPLETE as not accepted, and why: the history, the
/// journal and the report show it so.
fn refuse_complete(report: &mut BatchReport, why: &str) {
    if let Some(o) = report
        .outcomes
        .iter_mut()
        .rfind(|o| o.command.starts_with("COMPLETE"))
    {
        o.status = crate::records::Status::NotAccepted;
        o.message = why.to_string();
    }
}

/// A downloaded image the model asked to see, with a note of what it is (or
/// why it cannot be shown).
fn shown_download(file: &crate::records::ShownFile, notes: &mut Vec<String>) -> Option<Image> {
    match view::shown_file(&file.path) {
        Ok(image) => {
            notes.push(format!(
                "DOWNLOADED IMAGE: the image just before the screenshot is the downloaded file \
                 {}; points (@x,y) always refer to the screenshot, never to it",
                crate::quote::quoted(&file.name)
            ));
            Some(image)
        }
        Err(why) => {
            notes.push(format!(
                "the downloaded image {} could not be shown: {why}",
                crate::quote::quoted(&file.name)
            ));
            None
        }
    }
}

/// `now` in the page's time zone, as the model is told the time.
async fn page_time(page: &chromiumoxide::Page, now: std::time::SystemTime) -> String {
    crate::browser::local_time(page, now)
        .await
        .unwrap_or_else(|| format!("{} (UTC)", crate::clock::utc_rfc3339(now)))
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The close look the last step's ZOOM asked for, captured now that the
/// page was looked at again (so it shows what the screenshot shows), kept
/// in the run directory. A capture that fails is told to the model instead.
async fn close_look(
    step: usize,
    stage: &mut Stage<'_>,
    obs: &perceive::Observation,
    zoom: Option<crate::records::ZoomRequest>,
    secrets: &crate::safety::Secrets,
    notes: &mut StepNotes,
) -> Option<CloseLook> {
    let zoom = zoom?;
    let look = match view::close_look(stage.session, stage.exec, secrets, obs, zoom).await {
        Ok(look) => CloseLook {
            note: look.note(
                "the image before the last is",
                "the screenshot (the last image)",
            ),
            file: stage.journal.save_close_look(step, &look.full_png).ok(),
            image: Some(look.sent),
        },
        Err(why) => CloseLook {
            note: format!("the close look you asked for could not be taken: {why}"),
            file: None,
            image: None,
        },
    };
    notes.notes.push(look.note.clone());
    Some(look)
}

/// The images of a prompt: the screenshots kept, the current one last,
/// and this step's extra images (a close look, a downloaded image) just
/// before it.
fn with_close_look<'a>(
    kept: impl Iterator<Item = &'a brain::Image>,
    extra: Vec<brain::Image>,
) -> Vec<brain::Image> {
    let mut images: Vec<brain::Image> = kept.cloned().collect();
    let at = images.len().saturating_sub(1);
    images.splice(at..at, extra);
    images
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(text: &str) -> Vec<commands::Step> {
        commands::parse(text).unwrap()
    }

    #[test]
    fn an_answer_only_step_repeating_the_recorded_answer_ends_the_run() {
        let recorded = Some("The cheapest flight costs $289");
        assert_eq!(
            repeated_answer(&steps("ANSWER:the cheapest  flight costs $289"), recorded),
            Some("the cheapest  flight costs $289".into())
        );
        // Not when it differs, comes with other commands, or nothing was answered yet.
        assert_eq!(repeated_answer(&steps("ANSWER:$356"), recorded), None);
        assert_eq!(
            repeated_answer(
                &steps("ANSWER:The cheapest flight costs $289\nSCROLL:down"),
                recorded
            ),
            None
        );
        assert_eq!(
            repeated_answer(&steps("ANSWER:The cheapest flight costs $289"), None),
            None
        );
    }
}
