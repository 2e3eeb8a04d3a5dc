//! Reports a person can read: `report.html` (one card per step) and
//! `run.gif` (one frame per step), both made from a run directory alone, so
//! a run that was killed mid-step is reported as well as one that ended.
//!
//! ```no_run
//! # fn demo() -> Result<(), seamark::report::ReportError> {
//! let written = seamark::report::write(std::path::Path::new("runs/20261201-120000-find-the-price"))?;
//! println!("{}", written.html.display());
//! # Ok(())
//! # }
//! ```
//!
//! Everything in a report that came from a page or a model is escaped by the
//! template engine (askama), and the page carries a Content-Security-Policy
//! that lets only its own inline style and script run (by their hashes): a
//! hostile element name is shown as text and runs nothing.

pub mod animation;
mod chart;
mod html;

use std::path::{Path, PathBuf};

use image::RgbImage;
use rayon::prelude::*;

use crate::journal::JOURNAL;
use crate::records::{ActRecord, ResumeRecord, RunResult, StartRecord, StepRecord};
use animation::{CaptionLine, IndexedFrame, Tone};

/// The report's file name in a run directory.
pub const REPORT: &str = "report.html";
/// The animation's file name in a run directory.
pub const ANIMATION: &str = "run.gif";

/// Errors of a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The run directory is not there.
    #[error("no run directory at {0}")]
    NoDirectory(PathBuf),
    /// The directory holds no journal.
    #[error("{0} holds no {JOURNAL}: is it a run directory?")]
    NoJournal(PathBuf),
    /// The journal could not be read, or holds no record at all.
    #[error("cannot read the journal {path}: {why}")]
    Journal {
        /// The journal.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The report or the animation could not be written.
    #[error("cannot write {path}: {cause}")]
    Write {
        /// What was written.
        path: PathBuf,
        /// Why it failed.
        cause: std::io::Error,
    },
    /// The template failed to render (never expected; kept for honesty).
    #[error("cannot render the report: {0}")]
    Render(askama::Error),
}

// Written out, not `#[from]`: the message says the cause, so it is not the source too.
impl From<askama::Error> for ReportError {
    fn from(e: askama::Error) -> Self {
        ReportError::Render(e)
    }
}

/// A run directory as read back: what a report shows.
#[derive(Debug, Clone)]
pub struct RunLog {
    /// The run directory.
    pub dir: PathBuf,
    /// The start record, when the journal has one.
    pub start: Option<StartRecord>,
    /// The steps, in order.
    pub steps: Vec<StepRecord>,
    /// The end record's result; `None` when the run never ended (killed, or
    /// crashed, mid-step). A run resumed after it ended has ended only when
    /// an end record follows the resume.
    pub end: Option<RunResult>,
    /// The commands each step was about to run (the last one's outcome may
    /// never have been recorded).
    pub acts: Vec<ActRecord>,
    /// Where the run went on after it was cut off.
    pub resumes: Vec<ResumeRecord>,
    /// What the run did with skills: followed, ignored, learned.
    pub skills: Vec<crate::records::SkillRecord>,
    /// The checks run when the model said COMPLETE (`--expect-*`).
    pub checks: Vec<crate::records::CheckRecord>,
    /// The checkpoints kept and gone back to.
    pub checkpoints: Vec<crate::records::CheckpointRecord>,
    /// The files downloads saved.
    pub downloads: Vec<crate::records::DownloadRecord>,
    /// The times a person had the browser.
    pub hands: Vec<crate::records::HandsRecord>,
    /// What could not be read, line by line.
    pub problems: Vec<String>,
}

impl RunLog {
    /// Reads a run directory's journal. Lines that are not records (garbage,
    /// a line cut by a crash) are skipped and listed in `problems`.
    pub fn read(dir: &Path) -> Result<RunLog, ReportError> {
        if !dir.is_dir() {
            return Err(ReportError::NoDirectory(dir.to_path_buf()));
        }
        let path = dir.join(JOURNAL);
        if !path.is_file() {
            return Err(ReportError::NoJournal(dir.to_path_buf()));
        }
        let bytes = std::fs::read(&path).map_err(|e| ReportError::Journal {
            path: path.clone(),
            why: e.to_string(),
        })?;
        let log = RunLog::parse(dir, &String::from_utf8_lossy(&bytes));
        if log.start.is_none() && log.steps.is_empty() && log.end.is_none() {
            // What was wrong with the first line that was there, if any.
            let first = log
                .problems
                .first()
                .map(|p| format!(": {p}"))
                .unwrap_or_default();
            return Err(ReportError::Journal {
                path,
                why: format!("it holds no record seamark can read{first}"),
            });
        }
        Ok(log)
    }

    /// A run's journal given as its text (a run kept elsewhere than a
    /// folder: a session's, in its database); `dir` is where its files
    /// are said to be. Lines that are not records are listed in `problems`.
    pub fn parse(dir: &Path, text: &str) -> RunLog {
        let mut log = RunLog {
            dir: dir.to_path_buf(),
            start: None,
            steps: Vec::new(),
            end: None,
            acts: Vec::new(),
            resumes: Vec::new(),
            skills: Vec::new(),
            checks: Vec::new(),
            checkpoints: Vec::new(),
            downloads: Vec::new(),
            hands: Vec::new(),
            problems: Vec::new(),
        };
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let n = i + 1;
            let cut_last = i + 1 == lines.len() && !text.ends_with('\n');
            if let Err(why) = log.take(line) {
                log.problems.push(if cut_last {
                    format!("line {n} of the journal was cut off as it was written")
                } else {
                    format!("line {n} of the journal could not be read ({why}); it was skipped")
                });
            }
        }
        log
    }

    fn take(&mut self, line: &str) -> Result<(), String> {
        let value: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let kind = value["kind"].as_str().unwrap_or_default().to_string();
        let parse_err = |e: serde_json::Error| format!("a {kind} record: {e}");
        match kind.as_str() {
            "start" => self.start = Some(serde_json::from_value(value).map_err(parse_err)?),
            "step" => self
                .steps
                .push(serde_json::from_value(value).map_err(parse_err)?),
            "end" => {
                self.end = Some(serde_json::from_value(value["result"].clone()).map_err(parse_err)?)
            }
            "act" => self
                .acts
                .push(serde_json::from_value(value).map_err(parse_err)?),
            "resume" => {
                self.resumes
                    .push(serde_json::from_value(value).map_err(parse_err)?);
                self.end = None;
            }
            "check" => self
                .checks
                .push(serde_json::from_value(value).map_err(parse_err)?),
            "checkpoint" => self
                .checkpoints
                .push(serde_json::from_value(value).map_err(parse_err)?),
            "skill" => self
                .skills
                .push(serde_json::from_value(value).map_err(parse_err)?),
            "hands" => self
                .hands
                .push(serde_json::from_value(value).map_err(parse_err)?),
            "download" => self
                .downloads
                .push(serde_json::from_value(value).map_err(parse_err)?),
            "" => return Err("a record with no kind".into()),
            // A kind a newer seamark writes: what this one knows still reads.
            _ => {}
        }
        Ok(())
    }

    /// The run's model, as its end (or else its start) names it.
    pub fn model(&self) -> &str {
        let model = self.end.as_ref().map(|e| e.model.as_str());
        model
            .or(self.start.as_ref().map(|s| s.model.as_str()))
            .unwrap_or_default()
    }

    /// Whether the run was a replay of a recording.
    pub fn is_replay(&self) -> bool {
        crate::brain::is_replay(self.model())
    }

    /// The screenshot file of a step, when it is a plain file name of this
    /// directory that is there (a journal is data too: no paths out of it).
    pub fn screenshot(&self, step: &StepRecord) -> Option<PathBuf> {
        self.file(&step.screenshot)
    }

    /// The close look (`ZOOM`) a step showed the model, on the same terms.
    pub fn close_look(&self, step: &StepRecord) -> Option<PathBuf> {
        self.file(step.close_look.as_deref()?)
    }

    fn file(&self, name: &str) -> Option<PathBuf> {
        let plain = !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        let path = self.dir.join(name);
        (plain && path.is_file()).then_some(path)
    }
}

/// Where a report goes and how it holds its images.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// The report file; else `report.html` in the run directory.
    pub out: Option<PathBuf>,
    /// Put the images inside the file (`data:` URLs) instead of referring to
    /// them beside it. Always so when the report goes outside the run
    /// directory, where the run's files are not beside it.
    pub embed: bool,
    /// Leave the animation out.
    pub no_animation: bool,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct Written {
    /// The report.
    pub html: PathBuf,
    /// The animation, when there was a screenshot to animate and it was not
    /// embedded in the report.
    pub animation: Option<PathBuf>,
    /// The journal's lines that could not be read, and images that could not
    /// be (also shown in the report).
    pub problems: Vec<String>,
}

/// Writes `report.html` and `run.gif` into the run directory.
pub fn write(dir: &Path) -> Result<Written, ReportError> {
    write_with(dir, &ReportOptions::default())
}

/// Writes the report (and the animation) as the options say.
pub fn write_with(dir: &Path, options: &ReportOptions) -> Result<Written, ReportError> {
    let mut log = RunLog::read(dir)?;
    let out = options.out.clone().unwrap_or_else(|| dir.join(REPORT));
    let embed = options.embed || !same_dir(out.parent(), dir);
    let (gif, gif_problem) = if options.no_animation {
        (None, None)
    } else {
        match animate(&log) {
            Ok(bytes) => (Some(bytes), None),
            // A run that took no step has nothing to animate, and that is no news.
            Err(animation::AnimationError::NoFrames) => (None, None),
            Err(e) => (None, Some(format!("no animation: {e}"))),
        }
    };
    log.problems.extend(gif_problem);
    let animation = match (&gif, embed) {
        (Some(bytes), false) => {
            let path = dir.join(ANIMATION);
            std::fs::write(&path, bytes).map_err(|source| ReportError::Write {
                path: path.clone(),
                cause: source,
            })?;
            Some(path)
        }
        _ => None,
    };
    let images = if embed {
        html::Images::Embedded { gif }
    } else {
        html::Images::Beside {
            gif: animation.is_some(),
        }
    };
    let page = html::render(&log, &images)?;
    std::fs::write(&out, page).map_err(|source| ReportError::Write {
        path: out.clone(),
        cause: source,
    })?;
    Ok(Written {
        html: out,
        animation,
        problems: log.problems,
    })
}

/// Whether `parent` (of the report file) is the run directory itself.
fn same_dir(parent: Option<&Path>, dir: &Path) -> bool {
    let parent = match parent {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return false,
    };
    match (parent.canonicalize(), dir.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Most steps an animation shows: the first [`FRAMES_FIRST`] and the last
/// [`FRAMES_LAST`]. Every frame is held decoded until the GIF is written: a
/// run of 44,811 steps never got its report.
const FRAMES_FIRST: usize = 20;
const FRAMES_LAST: usize = 100;

/// The indexes of `len` steps shown: all of them, or the first `first` and
/// the last `last` when there are more.
pub(crate) fn shown_steps(len: usize, first: usize, last: usize) -> Vec<usize> {
    if len <= first + last {
        return (0..len).collect();
    }
    (0..first).chain(len - last..len).collect()
}

/// Which steps the animation of a run of `steps` shows, in words.
pub(crate) fn animated(steps: usize) -> String {
    if steps <= FRAMES_FIRST + FRAMES_LAST {
        "every step".into()
    } else {
        format!(
            "the first {FRAMES_FIRST} and the last {FRAMES_LAST} of {} steps",
            crate::figures::thousands(steps as u64)
        )
    }
}

/// The run's animation: one frame per step that has a screenshot, of the
/// steps `shown_steps` keeps.
pub fn animate(log: &RunLog) -> Result<Vec<u8>, animation::AnimationError> {
    let last = log.steps.len().saturating_sub(1);
    let shown = shown_steps(log.steps.len(), FRAMES_FIRST, FRAMES_LAST);
    let frames: Vec<IndexedFrame> = shown
        .par_iter()
        .map(|&i| (i, &log.steps[i]))
        .filter_map(|(i, step)| {
            let shot = load(&log.screenshot(step)?)?;
            let ending = (i == last).then_some(log.end.as_ref()).flatten();
            Some(animation::frame(&shot, &caption(step, ending)))
        })
        .collect();
    animation::encode(&frames)
}

fn load(path: &Path) -> Option<RgbImage> {
    let bytes = std::fs::read(path).ok()?;
    image::load_from_memory(&bytes).ok().map(|i| i.to_rgb8())
}

/// A frame's caption: the step and its page, then each command with its
/// outcome (and, under the last step, how the run ended).
fn caption(step: &StepRecord, ending: Option<&RunResult>) -> Vec<CaptionLine> {
    let mut lines = vec![CaptionLine::new(
        format!("step {} · {}", step.step, step.url),
        Tone::Plain,
    )];
    // Under the last frame, the ending comes first: it is never cut.
    if let Some(end) = ending {
        let tone = if end.success { Tone::Good } else { Tone::Bad };
        lines.push(CaptionLine::new(
            format!("{}: {}", end.status.word(), end.reason),
            tone,
        ));
    }
    if let Some(e) = &step.parse_error {
        lines.push(CaptionLine::new(
            format!("unreadable answer: {e}"),
            Tone::Bad,
        ));
    }
    if let Some(report) = &step.report {
        for o in &report.outcomes {
            let word = html::status_word(o.status);
            let tone = match o.status {
                crate::records::Status::Done => Tone::Plain,
                crate::records::Status::NoEffect => Tone::Muted,
                _ => Tone::Bad,
            };
            lines.push(CaptionLine::new(format!("{} → {word}", o.command), tone));
        }
        if !report.dropped.is_empty() {
            lines.push(CaptionLine::new(
                format!("not run: {}", report.dropped.join("; ")),
                Tone::Muted,
            ));
        }
    } else {
        lines.extend(
            step.commands
                .iter()
                .map(|c| CaptionLine::new(c.clone(), Tone::Plain)),
        );
    }
    if let Some(e) = &step.error {
        lines.push(CaptionLine::new(e.clone(), Tone::Bad));
    }
    lines
}
