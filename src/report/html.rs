//! `report.html`: the run log as one page. The page is rendered by askama,
//! which escapes every value it inserts; the style and the script are the
//! only inline code, allowed by their hashes in the page's
//! Content-Security-Policy.
use crate::records::{BatchReport, CheckpointEvent, Status};

use askama::Template;
use base64::Engine;
use ring::digest;

use super::{RunLog, ANIMATION};
use crate::records::StepRecord;

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// How the page holds its images.
pub enum Images {
    /// Referred to by name, beside the report in the run directory.
    Beside {
        /// Whether `run.gif` was written.
        gif: bool,
    },
    /// Inside the page as `data:` URLs.
    Embedded {
        /// The animation's bytes, when there is one.
        gif: Option<Vec<u8>>,
    },
}

/// The word a report shows for a command's outcome.
pub fn status_word(status: Status) -> &'static str {
    match status {
        Status::Done => "done",
        Status::NoEffect => "no visible effect",
        Status::Failed => "failed",
        Status::Held => "held for confirmation",
        Status::Refused => "refused by the domain policy",
        Status::NotAccepted => "not accepted: the checks did not hold",
    }
}

#[derive(Template)]
#[template(path = "report.html")]
struct Page {
    csp: String,
    style: &'static str,
    script: &'static str,
    task: String,
    url: String,
    model: String,
    started: String,
    status_class: &'static str,
    status_word: String,
    reason: String,
    answer: Option<String>,
    data: Option<String>,
    facts: Vec<(&'static str, String)>,
    stages: Vec<Stage>,
    /// The prompt tokens per step, as an SVG of numbers only.
    tokens_chart: Option<String>,
    problems: Vec<String>,
    failed: Vec<usize>,
    diverged: Vec<usize>,
    /// Which steps the animation shows, in words.
    frames: String,
    replay: bool,
    skills: Vec<String>,
    /// The files downloads saved: a link (for one in the run directory)
    /// and what it is.
    downloads: Vec<(Option<String>, String)>,
    /// The checks' verdict at the last COMPLETE: its step, whether every
    /// check held, and in words.
    verdict: Option<(usize, bool, String)>,
    animation: Option<String>,
    steps: Vec<Card>,
}

struct Stage {
    name: &'static str,
    ms: String,
    share: String,
}

struct Card {
    n: usize,
    classes: String,
    image: Option<String>,
    url: String,
    title: String,
    answer: Option<String>,
    plan: Option<String>,
    commands: Vec<CommandRow>,
    dropped: Option<String>,
    lists: Vec<Listed>,
    problems: Vec<String>,
    divergence: Option<String>,
    cost: String,
    /// What the screenshot was to the step.
    caption: &'static str,
    /// The points the step's commands named, drawn over its screenshot (an
    /// SVG of numbers and fixed words only).
    pins: Option<String>,
    /// The close look (`ZOOM`) the model got beside the screenshot.
    close_look: Option<String>,
    /// The summary of the steps folded before this one, in a long run.
    folded_before: Option<String>,
}

/// A named list of a card (dialogs, downloads, …).
struct Listed {
    name: &'static str,
    class: String,
    items: Vec<String>,
}

struct CommandRow {
    command: String,
    class: &'static str,
    word: &'static str,
    message: String,
    changes: Vec<String>,
    ms: String,
}

/// The page for a run log.
/// Steps of a long run shown as cards, first and last: a run of 44,811
/// steps made a report of a card each, hundreds of megabytes. The steps
/// between are summed up in one line.
const CARDS_FIRST: usize = 50;
const CARDS_LAST: usize = 150;

/// The summary of folded steps: how many, how they went, their pages.
fn folded(steps: &[StepRecord]) -> String {
    let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
        return String::new();
    };
    let failed = steps.iter().filter(|s| step_failed(s)).count();
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for s in steps {
        *counts.entry(s.url.as_str()).or_default() += 1;
    }
    let mut pages: Vec<(&str, usize)> = counts.into_iter().collect();
    // Most first; among equals, by address, so the line is the same each time.
    pages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = pages
        .iter()
        .take(5)
        .map(|(u, n)| format!("{u} ({n})"))
        .collect();
    format!(
        "Steps {}–{} ({} steps) are folded to keep this page small: {} failed; the pages they \
         were on, most first: {}. The journal holds each in full.",
        first.step,
        last.step,
        crate::figures::thousands(steps.len() as u64),
        crate::figures::thousands(failed as u64),
        top.join(", ")
    )
}

pub fn render(log: &RunLog, images: &Images) -> Result<String, askama::Error> {
    let start = log.start.as_ref();
    let end = log.end.as_ref();
    let shown = super::shown_steps(log.steps.len(), CARDS_FIRST, CARDS_LAST);
    // The failures a card shows (a folded one is counted in its summary).
    let failed = shown
        .iter()
        .map(|&i| &log.steps[i])
        .filter(|s| step_failed(s))
        .map(|s| s.step)
        .collect();
    let mut steps: Vec<Card> = Vec::with_capacity(shown.len());
    let mut next = 0;
    for i in shown {
        let mut c = card(log, &log.steps[i], images);
        if i > next {
            c.folded_before = Some(folded(&log.steps[next..i]));
        }
        next = i + 1;
        steps.push(c);
    }

    let diverged = log
        .steps
        .iter()
        .filter(|s| s.divergence.is_some())
        .map(|s| s.step)
        .collect();
    let (status_class, status_word, reason) = ending(log);
    let animation = match images {
        Images::Beside { gif: true } => Some(ANIMATION.to_string()),
        Images::Beside { gif: false } => None,
        Images::Embedded { gif } => gif.as_deref().map(|b| data_url("image/gif", b)),
    };
    let page = Page {
        csp: csp(),
        style: STYLE,
        script: SCRIPT,
        task: start.map(|s| s.task.clone()).unwrap_or_default(),
        url: start.map(|s| s.url.clone()).unwrap_or_default(),
        model: log.model().to_string(),
        started: start.map(|s| s.started.clone()).unwrap_or_default(),
        status_class,
        status_word,
        reason,
        answer: end.and_then(|e| e.answer.clone()),
        data: end
            .and_then(|e| e.data.as_ref())
            .map(|d| serde_json::to_string_pretty(d).unwrap_or_default()),
        facts: facts(log),
        stages: stages(log),
        tokens_chart: super::chart::tokens(&log.steps),
        problems: log.problems.clone(),
        failed,
        diverged,
        replay: log.is_replay(),
        skills: log.skills.iter().map(|r| r.detail.clone()).collect(),
        downloads: log
            .downloads
            .iter()
            .map(|d| {
                (
                    link_in(&log.dir, &d.file.path),
                    format!("{} from {}", d.file.describe(), d.file.url),
                )
            })
            .collect(),
        verdict: verdict(log),
        animation,
        frames: super::animated(log.steps.len()),
        steps,
    };
    page.render()
}

/// How the run ended: the status's class and word, and why; a journal
/// with no end is a run that was killed or crashed.
fn ending(log: &RunLog) -> (&'static str, String, String) {
    match log.end.as_ref() {
        Some(e) => (
            if e.success { "good" } else { "bad" },
            e.status.word().to_string(),
            e.reason.clone(),
        ),
        None => (
            "bad",
            "interrupted".to_string(),
            match log.steps.last() {
                Some(s) => format!(
                    "the run did not end: its journal stops after step {} (the process was killed \
                     or crashed during the next step)",
                    s.step
                ),
                None => "the run did not end: its journal stops before the first step".into(),
            },
        ),
    }
}

/// The time each stage took over the run, and its share.
fn stages(log: &RunLog) -> Vec<Stage> {
    let mut stage = [0.0f64; 4];
    for s in &log.steps {
        let t = &s.timings;
        for (sum, v) in stage
            .iter_mut()
            .zip([t.perceive_ms, t.mark_ms, t.model_ms, t.act_ms])
        {
            *sum += v;
        }
    }
    let total: f64 = stage.iter().sum();
    ["perceive", "mark", "model", "act"]
        .into_iter()
        .zip(stage)
        .map(|(name, ms)| Stage {
            name,
            ms: format!("{:.1} s", ms / 1e3),
            share: if total > 0.0 {
                format!("{:.0}%", ms / total * 100.0)
            } else {
                "–".into()
            },
        })
        .collect()
}

/// The run's facts: steps, tokens, cost and wall time (the end's own
/// figures, else the steps' sum).
fn facts(log: &RunLog) -> Vec<(&'static str, String)> {
    let spend = match &log.end {
        Some(e) => crate::records::Spend {
            tokens: e.tokens,
            cost_usd: e.cost_usd,
        },
        None => log.steps.iter().fold(Default::default(), |mut sum, s| {
            sum += s.spend;
            sum
        }),
    };
    let steps = match &log.start {
        Some(s) => format!("{} of {}", log.steps.len(), s.max_steps),
        None => log.steps.len().to_string(),
    };
    let tokens = spend.tokens;
    let mut facts = vec![
        ("steps", steps),
        (
            "tokens",
            format!("{} in, {} out", tokens.input, tokens.output),
        ),
        ("cost", crate::brain::cost_text(spend.cost_usd, log.model())),
    ];
    if let Some(e) = &log.end {
        facts.push(("wall time", format!("{:.1} s", e.wall_time_s)));
    }
    facts
}

/// A check as a step's card lists it.
fn check_line(c: &crate::records::CheckRecord) -> String {
    let held = if c.passed { "held" } else { "did not hold" };
    format!("{} {:?} {held}: {}", c.check, c.wanted, c.detail)
}

/// The checks of the last COMPLETE they judged: its step, whether all
/// held, and what they found.
fn verdict(log: &RunLog) -> Option<(usize, bool, String)> {
    let step = log.checks.last()?.step;
    let last: Vec<&crate::records::CheckRecord> =
        log.checks.iter().filter(|c| c.step == step).collect();
    let held = last.iter().all(|c| c.passed);
    let words = match held {
        true => format!("verified: every check held ({} of them)", last.len()),
        false => format!(
            "not verified: {}",
            last.iter()
                .filter(|c| !c.passed)
                .map(|c| check_line(c))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    Some((step, held, words))
}

/// Whether a step is one a person should look at first: a command that did
/// not run as asked, an answer that could not be read, an error.
fn step_failed(s: &StepRecord) -> bool {
    s.parse_error.is_some()
        || s.error.is_some()
        || s.report.as_ref().is_some_and(BatchReport::failed)
}

/// The points a step's commands named (`CLICK:@x,y`, a DRAG's ends, a
/// ZOOM's box), as an SVG over its screenshot in the pixels of the image
/// the model was sent: a ring per point, an arrow per drag, a dashed box
/// per zoom, each numbered as its command.
fn pins(commands: &[String], screenshot: &std::path::Path) -> Option<String> {
    use crate::commands::{Command, Spot, ZoomRegion};
    use std::fmt::Write;
    let (w, h) = image::image_dimensions(screenshot).ok()?;
    let (w, h) = crate::mark::sent_size(w, h, crate::mark::DEFAULT_LONG_EDGE);
    let r = f64::from(w.max(h)) / 120.0;
    let mut svg = String::new();
    for (n, text) in (1..).zip(commands) {
        let Some(step) = crate::commands::parse(text)
            .ok()
            .and_then(|s| s.into_iter().next())
        else {
            continue;
        };
        let ring = |svg: &mut String, x: u32, y: u32| {
            let _ = write!(
                svg,
                r#"<circle cx="{x}.5" cy="{y}.5" r="{r:.1}"/><text x="{:.1}" y="{:.1}">{n}</text>"#,
                f64::from(x) + r * 1.3,
                f64::from(y) - r * 1.1
            );
        };
        match step.command {
            Command::Drag { from, to, .. } => {
                let ends: Vec<_> = [from, to]
                    .into_iter()
                    .filter_map(|s| match s {
                        Spot::At(at) => Some(at),
                        Spot::Id(_) => None,
                    })
                    .collect();
                for at in &ends {
                    ring(&mut svg, at.x, at.y);
                }
                if let [a, b] = ends[..] {
                    let _ = write!(
                        svg,
                        r#"<line x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
                        a.x, a.y, b.x, b.y
                    );
                }
            }
            Command::Zoom {
                region: ZoomRegion::Area(a, b),
            } => {
                let _ = write!(
                    svg,
                    r#"<rect class="zoom" x="{}" y="{}" width="{}" height="{}"/>"#,
                    a.x.min(b.x),
                    a.y.min(b.y),
                    a.x.abs_diff(b.x),
                    a.y.abs_diff(b.y)
                );
            }
            ref c => {
                if let Some(at) = c.point() {
                    ring(&mut svg, at.x, at.y);
                }
            }
        }
    }
    (!svg.is_empty()).then(|| {
        format!(
            r#"<svg class="pins" viewBox="0 0 {w} {h}" preserveAspectRatio="none" style="--r:{r:.1}">{svg}</svg>"#
        )
    })
}

/// How the page shows an image of the run directory: its name beside the
/// report, or the image itself in it.
fn image_src(path: &std::path::Path, images: &Images) -> Option<String> {
    match images {
        Images::Beside { .. } => Some(path.file_name()?.to_str()?.to_string()),
        Images::Embedded { .. } => {
            let bytes = std::fs::read(path).ok()?;
            let mime = match path.extension().and_then(|e| e.to_str()) {
                Some("jpg" | "jpeg") => "image/jpeg",
                Some("webp") => "image/webp",
                _ => "image/png",
            };
            Some(data_url(mime, &bytes))
        }
    }
}

fn card(log: &RunLog, s: &StepRecord, images: &Images) -> Card {
    let mut classes = vec!["step"];
    if step_failed(s) {
        classes.push("failed");
    }
    let from_skill = s.skill.as_ref().is_some_and(|m| m.step.is_some());
    if from_skill {
        classes.push("from-skill");
    }
    if s.divergence.is_some() {
        classes.push("diverged");
    }
    let empty = BatchReport::default();
    let report = s.report.as_ref().unwrap_or(&empty);
    let dropped = (!report.dropped.is_empty()).then(|| {
        format!(
            "{} ({})",
            report.dropped.join("; "),
            report.dropped_because.as_deref().unwrap_or("dropped")
        )
    });
    let problems = s
        .parse_error
        .iter()
        .map(|e| format!("the answer could not be read: {e}"))
        .chain(s.error.iter().cloned())
        .collect();
    let lists = run_lists(log, s)
        .into_iter()
        .chain(page_lists(s, report))
        .flatten()
        .collect();
    Card {
        n: s.step,
        classes: classes.join(" "),
        image: log.screenshot(s).and_then(|path| image_src(&path, images)),
        url: s.url.clone(),
        title: s.title.clone(),
        // A step done from a skill had no model to answer: its commands say it all.
        answer: s.answer.clone().filter(|_| !from_skill),
        caption: match from_skill {
            true => "the marked screenshot the skill's step was planned on",
            false => "the marked screenshot the model got",
        },
        plan: s.plan.clone(),
        pins: log.screenshot(s).and_then(|path| pins(&s.commands, &path)),
        close_look: log.close_look(s).and_then(|path| image_src(&path, images)),
        commands: command_rows(s, report),
        dropped,
        lists,
        problems,
        divergence: s.divergence.clone(),
        cost: cost_line(s, from_skill),
        folded_before: None,
    }
}

/// A card's commands: each outcome, or, when the run ended before they ran,
/// the commands parsed as not run.
fn command_rows(s: &StepRecord, report: &BatchReport) -> Vec<CommandRow> {
    let mut commands: Vec<CommandRow> = report
        .outcomes
        .iter()
        .map(|o| CommandRow {
            command: o.command.clone(),
            class: match o.status {
                Status::Done => "done",
                Status::NoEffect => "noeffect",
                _ => "bad",
            },
            word: status_word(o.status),
            message: o.message.clone(),
            changes: o.changes.clone(),
            ms: format!("{:.0} ms", o.ms),
        })
        .collect();
    if s.report.is_none() {
        // The commands were parsed but never ran (the run ended first).
        commands.extend(s.commands.iter().map(|c| CommandRow {
            command: c.clone(),
            class: "noeffect",
            word: "not run",
            message: String::new(),
            changes: Vec::new(),
            ms: String::new(),
        }));
    }
    commands
}

/// A named list of a card, when it has items.
fn listed(name: &'static str, items: Vec<String>) -> Option<Listed> {
    (!items.is_empty()).then(|| Listed {
        name,
        class: name.replace(' ', "-"),
        items,
    })
}

/// The lists of what the run did around a step: resumed here, checks,
/// checkpoints, the skill, the person asked, a person's hands, an impasse.
fn run_lists(log: &RunLog, s: &StepRecord) -> [Option<Listed>; 7] {
    let resumed = log
        .resumes
        .iter()
        .filter(|r| r.from_step == s.step)
        .map(|r| {
            let mut line = format!("{}, after {}", r.started, r.after);
            if let Some(answer) = &r.answer {
                line.push_str(&format!("; the person answered: {answer}"));
            }
            if !r.unknown.is_empty() {
                line.push_str(&format!(
                    "; commands whose outcome was never recorded: {}",
                    r.unknown.join("; ")
                ));
            }
            line
        })
        .collect();
    let checkpoints = log
        .checkpoints
        .iter()
        .filter(|c| c.step == s.step)
        .map(|c| match c.event {
            CheckpointEvent::Kept => format!("kept \"{}\" at {} ({})", c.name, c.url, c.detail),
            CheckpointEvent::Back => format!("back to \"{}\" at {}: {}", c.name, c.url, c.detail),
        })
        .collect();
    let skill = s
        .skill
        .iter()
        .map(|m| match (m.step, &m.took_over) {
            (Some(k), _) => format!(
                "done from skill {} (its step {k}) with no model call",
                m.name
            ),
            (None, Some(why)) => format!("the model took over from skill {}: {why}", m.name),
            (None, None) => format!("skill {}", m.name),
        })
        .collect();
    let asked = s
        .asked
        .iter()
        .map(|a| match &a.answer {
            Some(answer) => format!("{} → {answer}", a.question),
            None => format!("{} (no answer: the run waited for one)", a.question),
        })
        .collect();
    let hands = log
        .hands
        .iter()
        .filter(|h| h.step == s.step)
        .map(hands_line)
        .collect();
    let checks = log.checks.iter().filter(|c| c.step == s.step);
    let impasse = s.notes.iter().filter_map(|n| n.strip_prefix("IMPASSE: "));
    [
        listed("resumed", resumed),
        listed("checks", checks.map(check_line).collect()),
        listed("checkpoints", checkpoints),
        listed("skill", skill),
        listed("asked the person", asked),
        listed("a person's hands", hands),
        listed("impasse", impasse.map(str::to_string).collect()),
    ]
}

/// A time a person had the browser, as the report tells it: never what
/// they typed, only where.
fn hands_line(h: &crate::records::HandsRecord) -> String {
    use crate::records::HandsEnd;
    let asked = h
        .asked
        .as_ref()
        .map(|a| format!("asked for: {a}; "))
        .unwrap_or_default();
    let mut line = match h.ended {
        HandsEnd::NobodyCame => format!("{asked}nobody came in {:.0} s", h.seconds),
        HandsEnd::HandedBack | HandsEnd::TimedOut => format!(
            "{asked}a person had the browser for {:.0} s from {} ({} clicks, {} keys{}){}",
            h.seconds,
            h.started,
            h.clicks,
            h.keys,
            if h.typed_into.is_empty() {
                String::new()
            } else {
                format!("; typed into {}", h.typed_into.join(", "))
            },
            if h.ended == HandsEnd::TimedOut {
                ", then left it untouched"
            } else {
                ""
            }
        ),
    };
    if !h.pages.is_empty() {
        line.push_str(&format!(" on {}", h.pages.join(" → ")));
    }
    if let Some(note) = &h.note {
        line.push_str(&format!(". Their note: {note}"));
    }
    line
}

/// The lists of what the page and the commands brought: dialogs, downloads,
/// confirmations, blocked requests, answers, and what the model was told.
fn page_lists(s: &StepRecord, report: &BatchReport) -> [Option<Listed>; 7] {
    let dialogs = report
        .dialogs
        .iter()
        .map(|d| {
            let answered = if d.accepted { "accepted" } else { "dismissed" };
            format!("{} \"{}\" ({answered})", d.kind, d.message)
        })
        .collect();
    let downloads = report
        .downloads
        .iter()
        .map(|d| match &d.saved {
            Some(f) => format!("{} from {}", f.describe(), f.url),
            None => format!("{} from {}: {}", d.file_name, d.url, d.state),
        })
        .collect();
    let confirmations = report
        .confirmations
        .iter()
        .map(|c| {
            format!(
                "{} on {}: held because {}; {} ({})",
                c.hold.command,
                c.hold.element,
                c.hold.why,
                if c.allowed { "allowed" } else { "refused" },
                c.by
            )
        })
        .collect();
    let blocked = s.blocked.iter().chain(&report.blocked);
    let told = s.notes.iter().filter(|n| !n.starts_with("IMPASSE: "));
    [
        listed(
            "cookie banners",
            s.consent.iter().map(|c| c.describe()).collect(),
        ),
        listed("dialogs", dialogs),
        listed("downloads", downloads),
        listed("confirmations", confirmations),
        listed(
            "blocked requests",
            blocked
                .map(|b| format!("{} ({})", b.target, b.reason))
                .collect(),
        ),
        listed("answers", report.answers.clone()),
        listed("told the model", told.cloned().collect()),
    ]
}

/// What a step cost: tokens and the prompt's size (or no model call), and
/// the time of each stage.
fn cost_line(s: &StepRecord, from_skill: bool) -> String {
    let t = &s.timings;
    let spend = match from_skill {
        true => "no model call".to_string(),
        false => format!(
            "{} in, {} out{} · prompt ≈ {} tokens ({} text, {} images)",
            s.spend.tokens.input,
            s.spend.tokens.output,
            s.spend
                .cost_usd
                .map(|c| format!(" (${c:.4})"))
                .unwrap_or_default(),
            s.prompt_tokens.text + s.prompt_tokens.images,
            s.prompt_tokens.text,
            s.prompt_tokens.images,
        ),
    };
    format!(
        "{spend} · perceive {:.0} ms, mark {:.0} ms, model {:.0} ms, act {:.0} ms",
        t.perceive_ms, t.mark_ms, t.model_ms, t.act_ms,
    )
}

fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The policy: nothing from the network, images only from the report's own
/// place or `data:`, and only the report's own style and script, by hash.
fn csp() -> String {
    let hash = |code: &str| {
        let d = digest::digest(&digest::SHA256, code.as_bytes());
        format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(d.as_ref())
        )
    };
    format!(
        "default-src 'none'; img-src 'self' data: file:; style-src {}; script-src {}; \
         base-uri 'none'; form-action 'none'",
        hash(STYLE),
        hash(SCRIPT)
    )
}

/// A relative link to `path` when it is a file of the run directory `dir`
/// (a journal is data: no link leads out of its directory).
fn link_in(dir: &std::path::Path, path: &std::path::Path) -> Option<String> {
    use std::path::Component;
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let rel = path.strip_prefix(&dir).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| match c {
            Component::Normal(n) => Some(
                percent_encoding::utf8_percent_encode(
                    &n.to_string_lossy(),
                    percent_encoding::NON_ALPHANUMERIC,
                )
                .to_string(),
            ),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then(|| parts.join("/"))
}
