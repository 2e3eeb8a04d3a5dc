//! `seamark bench`: perception latency on any page, each stage beside a bare
//! screenshot of the same page, as ratios measured in one run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use seamark::browser::Session;
use seamark::measure::{self, BenchOptions, BenchReport, PageTokens, TokensError, FORMAT};

use super::{BrowserArgs, UsageError};

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The pages: URLs or local HTML files.
    #[arg(value_name = "URL_OR_FILE", required = true)]
    targets: Vec<String>,
    /// Samples of each stage per page.
    #[arg(long, value_name = "N", default_value_t = 20)]
    runs: usize,
    /// Samples taken first and left out (the page and the enumerator warm up).
    #[arg(long, value_name = "K", default_value_t = 2)]
    warmup: usize,
    /// The quiet pause before each timed look, as an agent perceives after
    /// acting (not counted).
    #[arg(long, value_name = "MS", default_value_t = 70)]
    pause: u64,
    /// Time after each load before a look (not counted).
    #[arg(long, value_name = "MS", default_value_t = 300)]
    wait_ms: u64,
    /// Longest wait for a page's load.
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    timeout: u64,
    /// Write every sample and figure as JSON (what --compare reads).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Compare with an earlier --json: print each stage's change, and exit 1
    /// when a stage's median ratio to its floor got worse than --threshold.
    #[arg(long, value_name = "BASELINE.json")]
    compare: Option<PathBuf>,
    /// Instead of timing: what each page costs a step in tokens, per
    /// provider (the element list, READ's first part, the screenshot).
    #[arg(long, conflicts_with_all = ["json", "compare"])]
    tokens: bool,
    /// The worsening --compare allows, in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0)]
    threshold: f64,
    #[command(flatten)]
    browser: BrowserArgs,
}

pub async fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        return Err(UsageError("--runs must be 1 or more".into()).into());
    }
    if !(args.threshold >= 0.0 && args.threshold.is_finite()) {
        return Err(UsageError("--threshold must be a percentage of 0 or more".into()).into());
    }
    // A baseline that cannot be compared is told before anything is measured.
    let baseline = match &args.compare {
        Some(path) => Some(BenchReport::read(path).map_err(UsageError::of)?),
        None => None,
    };
    let pages: Vec<_> = (args.targets.iter())
        .map(|target| {
            (
                target.clone(),
                seamark::start_url::to_url(target).map_err(|e| e.to_string()),
            )
        })
        .collect();
    let options = BenchOptions {
        runs: args.runs,
        warmup: args.warmup,
        pause: Duration::from_millis(args.pause),
        settle: Duration::from_millis(args.wait_ms),
        load_timeout: Duration::from_secs(args.timeout.max(1)),
    };
    let browser = args.browser.options().await?;
    let session = Session::start(&browser).await?;
    if args.tokens {
        return tokens(session, pages, &args).await;
    }
    let mut report = BenchReport {
        format: FORMAT,
        seamark: env!("CARGO_PKG_VERSION").into(),
        runs: args.runs,
        warmup: args.warmup,
        pause_ms: args.pause as f64,
        viewport: viewport_text(&browser),
        pages: Vec::new(),
    };
    for (target, url) in pages {
        tell!("seamark: measuring {target}");
        let figures = match url {
            Ok(url) => measure::bench_page(&session, &target, &url, &options).await,
            Err(e) => measure::PageFigures::unmeasured(&target, "", Some(e)),
        };
        if let Some(e) = &figures.error {
            tell!("seamark: {target} could not be measured: {e}");
        }
        report.pages.push(figures);
    }
    session.close().await;
    print!("{}", super::terminal::inert(&report.table()));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let mut failed = report.pages.iter().any(|p| p.error.is_some());
    if let Some(baseline) = &baseline {
        let comparison = report.compare(baseline, args.threshold / 100.0);
        show!("\n{}", comparison.table());
        failed |= !comparison.worse().is_empty();
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The window the pages are measured in, as the report names it: its size,
/// its scale, and the device it stands for.
fn viewport_text(browser: &seamark::browser::BrowserOptions) -> String {
    let size = match browser.viewport.scale.get() {
        1.0 => browser.viewport.to_string(),
        s => format!("{} at scale {s}", browser.viewport),
    };
    match browser.device {
        Some(device) => format!("{} ({size})", device.name),
        None => size,
    }
}

/// `--tokens`: a page's token figures, each page in turn; exit 1 when one
/// could not be measured.
async fn tokens(
    session: Session,
    pages: Vec<(String, Result<String, String>)>,
    args: &BenchArgs,
) -> anyhow::Result<ExitCode> {
    let mut figures = Vec::new();
    for (target, url) in pages {
        tell!("seamark: counting {target}");
        let page = match url {
            Ok(url) => {
                measure::page_tokens(
                    &session,
                    &target,
                    &url,
                    Duration::from_secs(args.timeout.max(1)),
                    Duration::from_millis(args.wait_ms),
                    seamark::read::DEFAULT_READ_CHARS,
                )
                .await
            }
            Err(e) => PageTokens {
                target: target.clone(),
                rows: Err(TokensError::Target(e)),
            },
        };
        if let Err(e) = &page.rows {
            tell!("seamark: {target} could not be measured: {e}");
        }
        figures.push(page);
    }
    session.close().await;
    print!(
        "{}",
        super::terminal::inert(&measure::tokens_table(&figures))
    );
    Ok(if figures.iter().any(|p| p.rows.is_err()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
