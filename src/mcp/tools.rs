//! The MCP tools over a [`Desk`]: `open`, `observe` (and a closer look),
//! `act`, `skill`, `read` and `tabs`, each giving what a run's model gets.

use std::path::Path;
use std::time::Instant;

use crate::act::Executor;
use crate::agent::view::{self, ModelView};
use crate::check::Check;
use crate::commands::{self, Command, ReadTarget, Step};
use crate::perceive::Observation;
use crate::records::{BatchReport, CheckRecord, Finish, Shown, StepMark, ZoomRequest};
use crate::skill::{Follow, Found, Params, Skill, SkillStore};
use crate::storage::StorageState;

use super::desk::Desk;
use super::options::ToolOutput;

impl Desk {
    /// `open`: navigates and shows the page.
    pub async fn open(&mut self, target: &str, image: bool) -> ToolOutput {
        let url = match crate::start_url::to_url(target) {
            Ok(u) => u,
            Err(e) => return ToolOutput::error(format!("bad URL: {e}")),
        };
        if let Some(why) = self.options.act.domains.url_refusal(&url) {
            return ToolOutput::error(format!("refused by the domain policy: {why}"));
        }
        if let Err(why) = self.ensure().await {
            return ToolOutput::error(why.to_string());
        }
        let Some(session) = self.session.as_mut() else {
            return ToolOutput::error("no browser");
        };
        if let Err(e) = session
            .navigate(&url, self.options.act.navigation_timeout)
            .await
        {
            if session.page().url().await.is_err() {
                return self
                    .lose_browser(&format!("the page could not be opened: {e}"))
                    .await;
            }
            return ToolOutput::error(format!("the page could not be opened: {e}"));
        }
        // A fresh executor: the ids and typed fields of the page before are gone.
        let exec = Executor::new(session, self.options.act.clone()).await;
        self.exec = Some(exec);
        self.observe(image).await
    }
    /// `observe`: the marked screenshot and the list of the page as it is.
    pub async fn observe(&mut self, image: bool) -> ToolOutput {
        if let Err(why) = self.alive() {
            return ToolOutput::error(why.to_string());
        }
        let (Some(session), Some(exec)) = (self.session.as_ref(), self.exec.as_mut()) else {
            return ToolOutput::error("no page is open: call open with a URL first");
        };
        // A cookie banner being answered by rule is not shown.
        session.consent_settled().await;
        let obs = match exec.observe(session).await {
            Ok(o) => {
                let mut o = o.clone();
                let handled = session.consent_handled();
                let new = handled.get(self.consent_told..).unwrap_or_default();
                o.notes.extend(crate::browser::consent_note(new));
                self.consent_told = handled.len();
                o
            }
            Err(e) => {
                return self
                    .lose_browser(&format!("the page could not be read: {e}"))
                    .await
            }
        };
        // Each origin's localStorage is read while its page is open: the
        // state saved at the end holds every origin the session went to.
        if self.options.save_storage_state.is_some() {
            if let Err(e) = StorageState::capture(session, &mut self.local_storage).await {
                tracing::debug!("the page's storage was not read: {e}");
            }
        }
        let mut out = self.show(&obs, image);
        if let (Some(zoom), true, false) = (self.zoom.take(), image, out.is_error) {
            self.add_close_look(&obs, zoom, &mut out).await;
        }
        out
    }
    /// `observe` with a region to see closer (an id, or two corners of the
    /// last image), as `ZOOM` asks for it.
    pub async fn observe_closer(&mut self, region: &str) -> ToolOutput {
        let steps = match commands::parse(&format!("ZOOM:{region}")) {
            Ok(steps) => steps,
            Err(e) => {
                return ToolOutput::error(format!(
                    "the zoom region could not be read ({e}): give an id, as \"12\", or two \
                     corners of the last image, as \"@400,200:@600,320\""
                ))
            }
        };
        let report = match self.run(&steps).await {
            Ok(r) => r,
            Err(why) => return ToolOutput::error(why.to_string()),
        };
        if report.failed() {
            return ToolOutput::error(batch_text(&report));
        }
        self.zoom = report.zoom;
        self.observe(true).await
    }
    /// Takes the close look asked for on the page just observed, keeps it in
    /// the session's directory, and adds it (and what it shows) to `out`.
    async fn add_close_look(&mut self, obs: &Observation, zoom: ZoomRequest, out: &mut ToolOutput) {
        let (Some(session), Some(exec)) = (self.session.as_ref(), self.exec.as_ref()) else {
            return;
        };
        let secrets = &self.options.act.secrets;
        match view::close_look(session, exec, secrets, obs, zoom).await {
            Ok(look) => {
                let _ = self.journal.save_close_look(self.looks, &look.full_png);
                out.text.push_str("\n\n");
                out.text
                    .push_str(&look.note("the second image is", "the first (the screenshot)"));
                out.close_look = Some(look.sent);
            }
            Err(why) => {
                out.text
                    .push_str(&format!("\n\nthe close look could not be taken: {why}"));
            }
        }
    }
    fn show(&mut self, obs: &Observation, image: bool) -> ToolOutput {
        let Some(exec) = self.exec.as_mut() else {
            return ToolOutput::error("no page is open: call open with a URL first");
        };
        let secrets = &self.options.act.secrets;
        let view = match view::model_view(
            obs,
            exec,
            secrets,
            self.options.scrub,
            self.options.list_cap,
        ) {
            Ok(v) => v,
            Err(why) => return ToolOutput::error(why.to_string()),
        };
        self.looks += 1;
        let screenshot = match self.journal.save_image(self.looks, "png", &view.full_png) {
            Ok(name) => name,
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        exec.set_screenshot(Some(self.journal.dir().join(&screenshot)));
        let mut notes = obs.notes.clone();
        notes.extend(view.secrets_note());
        notes.extend(view::files_note(obs, self.options.act.files.as_ref()));
        let text = page_text(obs, &view, &notes);
        self.shown = Some(Shown {
            url: obs.url.clone(),
            title: view.title.clone(),
            signature: obs.signature.clone(),
            elements: view.elements.clone(),
            notes,
            screenshot,
        });
        ToolOutput {
            text: self.options.act.secrets.redact(&text),
            image: image.then_some(view.sent),
            close_look: None,
            is_error: false,
        }
    }
    /// `act`: a batch of commands, run by the executor with its rules.
    pub async fn act(&mut self, commands: &str, expect: &[Check], image: bool) -> ToolOutput {
        let steps = match commands::parse(commands) {
            Ok(s) if s.is_empty() => return ToolOutput::error("no command given"),
            // Through MCP the client's model talks to the person itself.
            Ok(s) if s.iter().any(|s| matches!(s.command, Command::Ask { .. })) => {
                return ToolOutput::error(
                    "ASK is for seamark's own runs: here, ask the person yourself; nothing was done",
                )
            }
            Ok(s) => s,
            Err(e) => {
                return ToolOutput::error(format!(
                    "the commands could not be read: {e}. One command per line, as CLICK:3 or \
                     TYPE:5:John Smith"
                ))
            }
        };
        let t = Instant::now();
        let report = match self.run(&steps).await {
            Ok(r) => r,
            Err(why) => return ToolOutput::error(why.to_string()),
        };
        let act_ms = t.elapsed().as_secs_f64() * 1e3;
        self.zoom = report.zoom;
        let mut failed = report.failed();
        let mut text = batch_text(&report);
        self.journal_step(commands, &steps, &report, act_ms, None);
        if !expect.is_empty() {
            let (held, lines) = self.expect(expect).await;
            failed |= !held;
            text.push_str("\n\nexpected:\n");
            text.push_str(&lines);
        }
        let after = self.observe(image).await;
        text.push_str("\n\n");
        text.push_str(&after.text);
        ToolOutput {
            text: self.options.act.secrets.redact(&text),
            image: after.image,
            close_look: after.close_look,
            is_error: failed || after.is_error,
        }
    }
    /// Checks the page after `act`: whether every check held, and a line
    /// for each, journaled as the step's checks.
    async fn expect(&mut self, checks: &[Check]) -> (bool, String) {
        let mut lines = Vec::new();
        let mut held = true;
        for check in checks {
            let look = match self.session.as_ref() {
                Some(session) => Some(crate::check::look(session, check).await),
                None => None,
            };
            let (passed, detail) = crate::check::judge(check, None, look, "no page is open");
            // The session's journal is the client's to read too: sealed alike.
            let detail = crate::check::told(check, &detail, !self.options.act.secrets.is_empty());
            held &= passed;
            lines.push(format!(
                "{} {:?} {}: {detail}",
                check.kind(),
                check.wanted(),
                if passed { "held" } else { "did NOT hold" }
            ));
            let record = CheckRecord::new(self.steps, check.kind(), check.wanted(), passed, detail);
            if let Err(e) = self.journal.write(&record) {
                tracing::warn!("the session's journal could not be written: {e}");
            }
        }
        (held, lines.join("\n"))
    }
    /// `skill`: opens `url` and does `task` from the skill that fits it,
    /// with no model, while each page fits; says where it stopped and why,
    /// and shows the page. No skill fits: says which tasks the site's skills
    /// do, and nothing runs.
    pub async fn skill(&mut self, task: &str, url: &str, image: bool) -> ToolOutput {
        let Some(dir) = self.options.skills.clone() else {
            return ToolOutput::error(
                "seamark mcp was started without --skills DIR: no skill can be followed",
            );
        };
        let mut told = Vec::new();
        let Some((skill, params)) = skill_for(&dir, task, url, &mut told) else {
            return ToolOutput::error(told.join("\n"));
        };
        let opened = self.open(url, false).await;
        if opened.is_error {
            return opened;
        }
        let mut follow = Follow::new(skill, params);
        let name = follow.name().to_string();
        let mut ending = None;
        for _ in 0..=follow.skill().steps.len() {
            let obs = match self.observe(false).await {
                out if out.is_error => return out,
                _ => match self.exec.as_ref().and_then(Executor::observation) {
                    Some(obs) => obs.clone(),
                    None => return ToolOutput::error("no page is open"),
                },
            };
            let planned = match follow.plan(&obs) {
                Ok(p) => p,
                Err(why) => {
                    ending = Some(format!("it stops here: {why}. Go on with observe and act"));
                    break;
                }
            };
            let t = Instant::now();
            let report = match self.run(&planned.steps).await {
                Ok(r) => r,
                Err(why) => return ToolOutput::error(why.to_string()),
            };
            let answer: Vec<String> = planned.steps.iter().map(|s| s.to_string()).collect();
            let mark = StepMark {
                name: name.clone(),
                step: Some(planned.step),
                took_over: None,
            };
            let ms = t.elapsed().as_secs_f64() * 1e3;
            self.journal_step(&answer.join("\n"), &planned.steps, &report, ms, Some(mark));
            told.push(format!("step {}:\n{}", planned.step, batch_text(&report)));
            if let Some(Finish::Complete { summary }) = &report.finish {
                ending = Some(format!("the task is done: {summary}"));
                break;
            }
            if report.failed() || !report.dropped.is_empty() {
                follow.stop_with("a step did not run as learned".into());
            }
        }
        let failed = ending
            .as_deref()
            .is_none_or(|e| !e.starts_with("the task is done"));
        let after = self.observe(image).await;
        let text = format!(
            "skill {name}: {} steps with no model call; {}\n{}\n\n{}",
            follow.done(),
            ending.unwrap_or_else(|| "its steps ran out".into()),
            told.join("\n"),
            after.text
        );
        ToolOutput {
            text: self.options.act.secrets.redact(&text),
            image: after.image,
            close_look: after.close_look,
            is_error: failed || after.is_error,
        }
    }
    /// `read`: the page's content as Markdown, or a part of it.
    pub async fn read(&mut self, of: ReadTarget) -> ToolOutput {
        let step = Step {
            command: Command::Read { of },
            echo: None,
        };
        let report = match self.run(std::slice::from_ref(&step)).await {
            Ok(r) => r,
            Err(why) => return ToolOutput::error(why.to_string()),
        };
        let failed = report.failed();
        let text = if failed {
            batch_text(&report)
        } else {
            report.readings.join("\n\n")
        };
        let text = match &self.exec {
            Some(exec) => {
                view::privacy(exec, &self.options.act.secrets, self.options.scrub).reading(&text)
            }
            None => text,
        };
        ToolOutput {
            text,
            image: None,
            close_look: None,
            is_error: failed,
        }
    }
    /// `tabs`: the open tabs; with `select` a switch to one, with `close`
    /// the tab shown closed (back to the one before it). A switch or a
    /// close observes the tab shown then.
    pub async fn tabs(&mut self, select: Option<usize>, close: bool) -> ToolOutput {
        if let Err(why) = self.alive() {
            return ToolOutput::error(why.to_string());
        }
        let (Some(session), Some(exec)) = (self.session.as_mut(), self.exec.as_mut()) else {
            return ToolOutput::error("no browser yet: call open with a URL first");
        };
        let changed = match (select, close) {
            (Some(_), true) => {
                return ToolOutput::error("give select or close, not both: nothing was done")
            }
            (Some(n), false) => Some(exec.switch_tab(session, n).await),
            (None, true) => Some(exec.close_tab(session).await),
            (None, false) => None,
        };
        match changed {
            Some(Ok(message)) => {
                let mut out = self.observe(false).await;
                out.text = format!("{message}\n\n{}", out.text);
                out
            }
            Some(Err(why)) => ToolOutput::error(why.to_string()),
            None => match exec.tabs(session).await {
                Ok(tabs) => ToolOutput {
                    text: self
                        .options
                        .act
                        .secrets
                        .redact(&tabs.iter().map(|t| t.line()).collect::<Vec<_>>().join("\n")),
                    image: None,
                    close_look: None,
                    is_error: false,
                },
                Err(why) => self.lose_browser(&why.to_string()).await,
            },
        }
    }
}

/// The page as the client's model reads it: URL, title, viewport, notes,
/// then the element list.
fn page_text(obs: &Observation, view: &ModelView, notes: &[String]) -> String {
    let mut text = format!(
        "URL: {}\nTitle: {}\nViewport: {}x{} at scroll {},{}\n",
        obs.url, view.title, obs.viewport.width, obs.viewport.height, obs.scroll.x, obs.scroll.y
    );
    for n in notes {
        text.push_str(&format!("Note: {n}\n"));
    }
    text.push_str("Elements ([id] role \"name\" state; the ids match the marks on the image):\n");
    text.push_str(&view.elements);
    text
}

/// Each command's outcome, and what was not run and why.
fn batch_text(report: &BatchReport) -> String {
    let mut text = report.feedback();
    for a in &report.answers {
        text.push_str(&format!("\nanswer recorded: {a}"));
    }
    // The client reads the file where it is: it runs on this machine.
    for f in report.downloads.iter().filter_map(|d| d.saved.as_ref()) {
        text.push_str(&format!(
            "\ndownloaded file: {} ({} bytes, {}, sha256 {}) from {}",
            f.path.display(),
            f.size,
            f.mime,
            f.sha256,
            f.url
        ));
    }
    text
}

/// The skill of `dir` that does `task` from `url`, with its values. What
/// is told on the way goes into `told` (files ignored, and when none is
/// followed, why: skills that fit alike, the site's skills).
fn skill_for(dir: &Path, task: &str, url: &str, told: &mut Vec<String>) -> Option<(Skill, Params)> {
    let listed = SkillStore::new(dir).list();
    told.extend(listed.iter().filter_map(|l| {
        let why = l.skill.as_ref().err()?;
        Some(format!("skill file {} is ignored: {why}", l.path.display()))
    }));
    match SkillStore::find(&listed, task, url) {
        Found::One(skill, params) => Some((*skill, params)),
        Found::Several(names) => {
            told.push(format!(
                "skills {} all fit this task: none is followed (remove all but one with \
                 seamark skill rm)",
                names.join(", ")
            ));
            None
        }
        Found::SameSite(same) => {
            told.push(format!(
                "no skill does this task as worded; this site's skills do: {}. Call skill \
                 again in those words with your values, or do the task with observe and act",
                same.iter()
                    .map(|s| format!("\"{}\"", s.task))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
            None
        }
        Found::Nothing => {
            told.push(
                "no skill of this site does this task: do it with open, observe and act".into(),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_tells_what_was_not_run_and_the_answers_recorded() {
        let report = BatchReport {
            dropped: vec!["CLICK:4".into()],
            dropped_because: Some("the page changed".into()),
            answers: vec!["42 kg".into()],
            ..BatchReport::default()
        };
        let text = batch_text(&report);
        assert!(
            text.contains("not run: CLICK:4 (the page changed)"),
            "{text}"
        );
        assert!(text.contains("answer recorded: 42 kg"), "{text}");
    }

    #[test]
    fn no_skill_is_followed_from_a_folder_without_one_and_a_broken_file_is_told() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("broken.json"), "{").unwrap();
        let mut told = Vec::new();
        let found = skill_for(dir.path(), "buy milk", "https://shop.test/", &mut told);
        assert!(found.is_none());
        assert!(told[0].contains("broken.json is ignored"), "{told:?}");
        assert!(
            told.last()
                .unwrap()
                .starts_with("no skill of this site does this task"),
            "{told:?}"
        );
    }
}
