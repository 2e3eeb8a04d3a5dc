//! Perception latency on any page, in the form seamark's own benchmarks use:
//! each stage timed beside a bare screenshot of the same page, the two taken
//! in turn after a quiet pause each, so that a noisy machine slows both
//! alike; the figures compared as ratios to that floor, not as milliseconds.
//!
//! Stages of a quiet look (as an agent perceives after acting): the floor
//! (`screenshot`: one bare `Page.captureScreenshot`), `enumerate` (the
//! element table alone), `perceive` (the whole perception) and, within it,
//! `perceive_screenshot` (the screenshot it took), `mark` (labels laid out
//! and drawn), `encode` (the images for the run and the model), `read` (a
//! whole-page READ). A first look after a fresh load: `first_screenshot`
//! (its floor), `first_perceive` (cold, as the first look of a run) and
//! `first_primed` (the document primed while it settled, as the look after
//! a command that loaded it: see `perceive::prime`).

mod tokens;

pub use tokens::{page_tokens, tokens_table, PageTokens, TokenRow, TokensError};

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::browser::{evaluate, Session};
use crate::mark::{self, MarkStyle};
use crate::perceive::{self, Observation, PerceiveOptions};
use crate::read::{self, Marks, ReadOptions, Scope, Values};

/// The version of the JSON a bench writes; `--compare` takes only its own.
pub const FORMAT: u32 = 1;

/// How a bench runs.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Samples of each stage per page.
    pub runs: usize,
    /// Samples taken first and left out.
    pub warmup: usize,
    /// The quiet pause before each timed look (not counted).
    pub pause: Duration,
    /// Time after a load before the first look (not counted).
    pub settle: Duration,
    /// Longest wait for a page's load.
    pub load_timeout: Duration,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            runs: 20,
            warmup: 2,
            pause: Duration::from_millis(70),
            settle: Duration::from_millis(300),
            load_timeout: Duration::from_secs(20),
        }
    }
}

/// A stage of perception, and the floor it is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The bare screenshot: the floor of a quiet look.
    Screenshot,
    /// The element table alone.
    Enumerate,
    /// The screenshot perception took.
    PerceiveScreenshot,
    /// Mark layout and drawing.
    Mark,
    /// The images for the run and for the model.
    Encode,
    /// The whole perception.
    Perceive,
    /// A whole-page READ.
    Read,
    /// The bare screenshot right after a load: the floor of a first look.
    FirstScreenshot,
    /// The whole perception right after a load.
    FirstPerceive,
    /// The whole perception right after a load, the document primed while
    /// the page settled.
    FirstPrimed,
}

impl Stage {
    /// Every stage, in the order the table shows them.
    pub const ALL: [Stage; 10] = [
        Stage::Screenshot,
        Stage::Enumerate,
        Stage::PerceiveScreenshot,
        Stage::Mark,
        Stage::Encode,
        Stage::Perceive,
        Stage::Read,
        Stage::FirstScreenshot,
        Stage::FirstPerceive,
        Stage::FirstPrimed,
    ];

    /// Its name in the table and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Screenshot => "screenshot",
            Stage::Enumerate => "enumerate",
            Stage::PerceiveScreenshot => "perceive_screenshot",
            Stage::Mark => "mark",
            Stage::Encode => "encode",
            Stage::Perceive => "perceive",
            Stage::Read => "read",
            Stage::FirstScreenshot => "first_screenshot",
            Stage::FirstPerceive => "first_perceive",
            Stage::FirstPrimed => "first_primed",
        }
    }

    /// The floor it is compared with.
    pub fn floor(self) -> Stage {
        match self {
            Stage::FirstScreenshot | Stage::FirstPerceive | Stage::FirstPrimed => {
                Stage::FirstScreenshot
            }
            _ => Stage::Screenshot,
        }
    }
}

/// One stage's samples and their figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageFigures {
    /// The stage's name.
    pub stage: String,
    /// The floor it is compared with.
    pub floor: String,
    /// Every sample, milliseconds, in the order taken.
    pub samples_ms: Vec<f64>,
    /// Fastest.
    pub min_ms: f64,
    /// Median.
    pub median_ms: f64,
    /// 95th percentile (nearest rank).
    pub p95_ms: f64,
    /// Slowest.
    pub max_ms: f64,
    /// Its median over its floor's median, in this run.
    pub ratio: f64,
}

/// One page's figures, or why it could not be measured.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PageFigures {
    /// The page as given.
    pub target: String,
    /// The URL opened.
    pub url: String,
    /// Why it could not be measured.
    #[serde(default)]
    pub error: Option<String>,
    /// Elements in its table.
    #[serde(default)]
    pub elements: usize,
    /// Characters of the list the model reads.
    #[serde(default)]
    pub list_chars: usize,
    /// The list in tokens (`o200k_base`).
    #[serde(default)]
    pub list_tokens: usize,
    /// Elements in its main document.
    #[serde(default)]
    pub dom_nodes: usize,
    /// Each stage.
    #[serde(default)]
    pub stages: Vec<StageFigures>,
}

impl PageFigures {
    /// A page's figures before any are taken; `error` says why none will be.
    pub fn unmeasured(target: &str, url: &str, error: Option<String>) -> PageFigures {
        PageFigures {
            target: target.to_string(),
            url: url.to_string(),
            error,
            ..PageFigures::default()
        }
    }
}

/// A whole bench: what `--json` writes and `--compare` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// The version of this format ([`FORMAT`]).
    pub format: u32,
    /// The seamark that measured it.
    pub seamark: String,
    /// Samples per stage.
    pub runs: usize,
    /// Samples left out first.
    pub warmup: usize,
    /// The quiet pause before each look, ms.
    pub pause_ms: f64,
    /// The viewport (`1280x800`, and its device scale when not 1).
    pub viewport: String,
    /// Each page.
    pub pages: Vec<PageFigures>,
}

/// Measures one page in `session`: opened, then looked at quietly and after
/// fresh loads, `warmup + runs` times.
pub async fn bench_page(
    session: &Session,
    target: &str,
    url: &str,
    options: &BenchOptions,
) -> PageFigures {
    let mut figures = PageFigures::unmeasured(target, url, None);
    match measure(session, url, options).await {
        Ok((samples, obs)) => {
            let list = perceive::element_list(&obs.table, perceive::DEFAULT_LIST_CAP);
            figures.elements = obs.table.len();
            figures.list_chars = list.chars().count();
            figures.list_tokens = crate::brain::tokens::text_tokens("openai/gpt-4o", &list);
            figures.dom_nodes =
                evaluate(session.page(), "document.getElementsByTagName('*').length")
                    .await
                    .ok()
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0) as usize;
            figures.stages = stage_figures(&samples);
        }
        Err(why) => figures.error = Some(why),
    }
    figures
}

/// Samples per stage, in [`Stage::ALL`]'s order.
type Samples = Vec<(Stage, Vec<f64>)>;

fn push(samples: &mut Samples, stage: Stage, ms: f64) {
    match samples.iter_mut().find(|(s, _)| *s == stage) {
        Some((_, v)) => v.push(ms),
        None => samples.push((stage, vec![ms])),
    }
}

/// What failed, and why, as the bench tells it.
fn bad(what: &str, e: &dyn std::fmt::Display) -> String {
    format!("{what} failed: {e}")
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// One round of the stages on the page as it is, each after a quiet pause:
/// each stage's time, and the perception taken.
async fn one_round(
    session: &Session,
    o: &BenchOptions,
    look: &PerceiveOptions,
    style: &MarkStyle,
    long_edge: u32,
) -> Result<(Vec<(Stage, f64)>, Observation), String> {
    let page = session.page();
    let mut timed = Vec::new();
    // The floor and each stage in turn, each after a quiet pause.
    tokio::time::sleep(o.pause).await;
    let t = Instant::now();
    crate::browser::screenshot(page)
        .await
        .map_err(|e| bad("the screenshot", &e))?;
    timed.push((Stage::Screenshot, ms_since(t)));
    tokio::time::sleep(o.pause).await;
    let t = Instant::now();
    perceive::element_table(page, session.viewport(), look)
        .await
        .map_err(|e| bad("the enumeration", &e))?;
    timed.push((Stage::Enumerate, ms_since(t)));
    tokio::time::sleep(o.pause).await;
    let t = Instant::now();
    let obs = perceive::perceive(session, look)
        .await
        .map_err(|e| bad("the perception", &e))?;
    timed.push((Stage::Perceive, ms_since(t)));
    timed.push((Stage::PerceiveScreenshot, obs.timings.screenshot_ms));
    let t = Instant::now();
    let image = mark::mark_observation(&obs, style, &[]).map_err(|e| bad("marking", &e))?;
    timed.push((Stage::Mark, ms_since(t)));
    let t = Instant::now();
    mark::for_model(&image, long_edge).map_err(|e| bad("encoding", &e))?;
    timed.push((Stage::Encode, ms_since(t)));
    tokio::time::sleep(o.pause).await;
    let marks = Marks {
        table: Some(&obs.table),
        values: Values::All,
    };
    let t = Instant::now();
    read::read(
        page,
        session.viewport(),
        &Scope::Page,
        &marks,
        &ReadOptions::default(),
    )
    .await
    .map_err(|e| bad("the READ", &e))?;
    timed.push((Stage::Read, ms_since(t)));
    Ok((timed, obs))
}

async fn measure(
    session: &Session,
    url: &str,
    o: &BenchOptions,
) -> Result<(Samples, Observation), String> {
    let page = session.page();
    let look = PerceiveOptions::default();
    // With `prime`, the document is primed as soon as it has loaded, inside
    // the settle time, as the executor primes it while a page settles.
    let open = |prime: bool| {
        let look = &look;
        async move {
            session
                .navigate(url, o.load_timeout)
                .await
                .map_err(|e| e.to_string())?;
            if prime {
                perceive::prime(page, session.viewport(), look).await;
            }
            tokio::time::sleep(o.settle).await;
            Ok::<(), String>(())
        }
    };
    open(false).await?;
    let style = MarkStyle::default();
    let long_edge = style.send_long_edge.unwrap_or(mark::DEFAULT_LONG_EDGE);
    let mut samples: Samples = Vec::new();
    let mut last = None;
    for i in 0..o.warmup + o.runs {
        let (timed, obs) = one_round(session, o, &look, &style, long_edge).await?;
        if i >= o.warmup {
            for (stage, ms) in timed {
                push(&mut samples, stage, ms);
            }
        }
        last = Some(obs);
    }
    // A first look: the page loaded anew before each (not counted), the
    // three taken in turn.
    for i in 0..o.warmup + o.runs {
        let keep = i >= o.warmup;
        for stage in [
            Stage::FirstScreenshot,
            Stage::FirstPerceive,
            Stage::FirstPrimed,
        ] {
            open(stage == Stage::FirstPrimed).await?;
            let t = Instant::now();
            if stage == Stage::FirstScreenshot {
                crate::browser::screenshot(page)
                    .await
                    .map_err(|e| bad("the screenshot", &e))?;
            } else {
                perceive::perceive(session, &look)
                    .await
                    .map_err(|e| bad("the perception", &e))?;
            }
            if keep {
                push(&mut samples, stage, ms_since(t));
            }
        }
    }
    let obs = last.ok_or("no sample was taken")?;
    Ok((samples, obs))
}

/// Each stage's figures, its ratio to its floor's median in the same run.
fn stage_figures(samples: &Samples) -> Vec<StageFigures> {
    let median_of = |stage: Stage| {
        samples
            .iter()
            .find(|(s, _)| *s == stage)
            .map(|(_, v)| crate::figures::median(v.clone()))
    };
    Stage::ALL
        .iter()
        .filter_map(|&stage| {
            let (_, v) = samples.iter().find(|(s, _)| *s == stage)?;
            let mut sorted = v.clone();
            sorted.sort_by(|a, b| a.total_cmp(b));
            let median = crate::figures::median(v.clone());
            let floor = median_of(stage.floor()).filter(|f| *f > 0.0);
            let rank = ((0.95 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            Some(StageFigures {
                stage: stage.name().into(),
                floor: stage.floor().name().into(),
                samples_ms: v.clone(),
                min_ms: sorted[0],
                median_ms: median,
                p95_ms: sorted[rank - 1],
                max_ms: sorted[sorted.len() - 1],
                ratio: floor.map_or(0.0, |f| median / f),
            })
        })
        .collect()
}

/// Why a bench file cannot be compared with.
#[derive(Debug, thiserror::Error)]
pub enum BenchFileError {
    /// It cannot be read.
    #[error("{}: {cause}", .path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// It is not one.
    #[error("{} is not a seamark bench file ({why})", .path.display())]
    Invalid {
        /// The file.
        path: std::path::PathBuf,
        /// What it lacks, or the parser's words.
        why: String,
    },
    /// It is one of another format.
    #[error(
        "{} is a seamark bench file of format {format}; this seamark reads format {FORMAT}: \
         measure the baseline again with this version",
        .path.display()
    )]
    Format {
        /// The file.
        path: std::path::PathBuf,
        /// Its format.
        format: u64,
    },
}

impl BenchReport {
    /// Reads a report `--json` wrote: the format's version first, so that a
    /// file of another version is told as such.
    pub fn read(path: &std::path::Path) -> Result<BenchReport, BenchFileError> {
        let fault = |why: String| BenchFileError::Invalid {
            path: path.to_path_buf(),
            why,
        };
        let text = std::fs::read_to_string(path).map_err(|cause| BenchFileError::Read {
            path: path.to_path_buf(),
            cause,
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| fault(format!("not JSON: {e}")))?;
        match value.get("format").and_then(|f| f.as_u64()) {
            Some(v) if v == u64::from(FORMAT) => {}
            Some(v) => {
                return Err(BenchFileError::Format {
                    path: path.to_path_buf(),
                    format: v,
                })
            }
            None => return Err(fault("no format".into())),
        }
        serde_json::from_value(value).map_err(|e| fault(e.to_string()))
    }

    /// The table people paste: a row per page and stage, then each page's
    /// size.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| page | stage | min ms | median ms | p95 ms | max ms | median × floor |\n\
             |---|---|---:|---:|---:|---:|---:|\n",
        );
        for p in &self.pages {
            if let Some(e) = &p.error {
                out.push_str(&format!("| {} | not measured: {e} | | | | | |\n", p.target));
                continue;
            }
            for (i, s) in p.stages.iter().enumerate() {
                let page = if i == 0 { p.target.as_str() } else { "" };
                let ratio = if s.stage == s.floor {
                    "floor".to_string()
                } else {
                    format!("{:.2}×", s.ratio)
                };
                out.push_str(&format!(
                    "| {page} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {ratio} |\n",
                    s.stage, s.min_ms, s.median_ms, s.p95_ms, s.max_ms
                ));
            }
        }
        out.push('\n');
        let n = |v: usize| crate::figures::thousands(v as u64);
        for p in self.pages.iter().filter(|p| p.error.is_none()) {
            out.push_str(&format!(
                "{}: {} elements, list {} characters ({} tokens), DOM {} elements\n",
                p.target,
                n(p.elements),
                n(p.list_chars),
                n(p.list_tokens),
                n(p.dom_nodes)
            ));
        }
        out
    }

    /// Each stage's median ratio beside `baseline`'s, and the stages worse
    /// by more than `threshold` (0.10 for 10%).
    pub fn compare(&self, baseline: &BenchReport, threshold: f64) -> Comparison {
        let mut rows = Vec::new();
        let mut missing = Vec::new();
        for p in &self.pages {
            let Some(base) = baseline.pages.iter().find(|b| b.target == p.target) else {
                missing.push(format!("{} is not in the baseline", p.target));
                continue;
            };
            for s in p.stages.iter().filter(|s| s.stage != s.floor) {
                let Some(b) = base.stages.iter().find(|b| b.stage == s.stage) else {
                    continue;
                };
                if b.ratio <= 0.0 || s.ratio <= 0.0 {
                    continue;
                }
                let change = s.ratio / b.ratio - 1.0;
                rows.push(Change {
                    page: p.target.clone(),
                    stage: s.stage.clone(),
                    baseline: b.ratio,
                    now: s.ratio,
                    change,
                    worse: change > threshold,
                });
            }
        }
        Comparison {
            rows,
            missing,
            threshold,
        }
    }
}

/// A stage's ratio now beside the baseline's.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The page.
    pub page: String,
    /// The stage.
    pub stage: String,
    /// The baseline's median ratio.
    pub baseline: f64,
    /// This run's.
    pub now: f64,
    /// `now / baseline - 1`.
    pub change: f64,
    /// Worse than the threshold allows.
    pub worse: bool,
}

/// A bench beside a baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Each stage of each page found in both.
    pub rows: Vec<Change>,
    /// Pages of this bench the baseline does not have.
    pub missing: Vec<String>,
    /// The worsening allowed.
    pub threshold: f64,
}

impl Comparison {
    /// The stages that got worse than the threshold allows.
    pub fn worse(&self) -> Vec<&Change> {
        self.rows.iter().filter(|r| r.worse).collect()
    }

    /// The comparison as a table, then what got worse.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| page | stage | baseline × floor | now × floor | change |\n|---|---|---:|---:|---:|\n",
        );
        for r in &self.rows {
            out.push_str(&format!(
                "| {} | {} | {:.2}× | {:.2}× | {:+.1}%{} |\n",
                r.page,
                r.stage,
                r.baseline,
                r.now,
                r.change * 100.0,
                if r.worse { " worse" } else { "" }
            ));
        }
        for m in &self.missing {
            out.push_str(&format!("\nnote: {m}"));
        }
        let worse = self.worse();
        if worse.is_empty() {
            out.push_str(&format!(
                "\nno stage got worse than the baseline by more than {:.0}%\n",
                self.threshold * 100.0
            ));
        } else {
            out.push_str(&format!(
                "\nworse than the baseline by more than {:.0}%: {}\n",
                self.threshold * 100.0,
                worse
                    .iter()
                    .map(|r| format!("{} {} ({:+.1}%)", r.page, r.stage, r.change * 100.0))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(stages: &[(Stage, &[f64])]) -> Samples {
        stages.iter().map(|(s, v)| (*s, v.to_vec())).collect()
    }

    #[test]
    fn figures_are_taken_from_the_samples_and_ratios_from_the_same_run() {
        let figures = stage_figures(&samples(&[
            (Stage::Screenshot, &[30.0, 40.0, 20.0]),
            (Stage::Perceive, &[33.0, 39.0, 36.0, 120.0]),
            (Stage::FirstScreenshot, &[50.0]),
            (Stage::FirstPerceive, &[75.0]),
        ]));
        let names: Vec<&str> = figures.iter().map(|f| f.stage.as_str()).collect();
        assert_eq!(
            names,
            [
                "screenshot",
                "perceive",
                "first_screenshot",
                "first_perceive"
            ]
        );
        let perceive = &figures[1];
        assert_eq!((perceive.min_ms, perceive.max_ms), (33.0, 120.0));
        assert_eq!(perceive.median_ms, 37.5);
        assert_eq!(perceive.p95_ms, 120.0);
        assert!((perceive.ratio - 37.5 / 30.0).abs() < 1e-9);
        assert_eq!(figures[0].ratio, 1.0);
        assert_eq!(figures[3].floor, "first_screenshot");
        assert_eq!(figures[3].ratio, 1.5);
    }

    #[test]
    fn a_stage_worse_than_the_threshold_is_named() {
        let page = |ratio: f64| PageFigures {
            target: "form.html".into(),
            url: "http://x/form.html".into(),
            error: None,
            elements: 1,
            list_chars: 1,
            list_tokens: 1,
            dom_nodes: 1,
            stages: vec![StageFigures {
                stage: "perceive".into(),
                floor: "screenshot".into(),
                samples_ms: vec![1.0],
                min_ms: 1.0,
                median_ms: 1.0,
                p95_ms: 1.0,
                max_ms: 1.0,
                ratio,
            }],
        };
        let report = |ratio| BenchReport {
            format: FORMAT,
            seamark: "0".into(),
            runs: 1,
            warmup: 0,
            pause_ms: 70.0,
            viewport: "1280x800".into(),
            pages: vec![page(ratio)],
        };
        let c = report(1.30).compare(&report(1.10), 0.10);
        assert_eq!(c.worse().len(), 1);
        assert!(
            c.table().contains("form.html perceive (+18.2%)"),
            "{}",
            c.table()
        );
        assert!(report(1.15).compare(&report(1.10), 0.10).worse().is_empty());
    }
}
