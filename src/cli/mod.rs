//! Command-line interface: one file per subcommand, each thin over the library.

// First: its macros are for every file below.
#[macro_use]
pub(crate) mod terminal;
mod batch;
mod bench;
mod browser;
mod completions;
mod demo;
mod devices;
mod doctor;
mod fixture;
mod live;
mod man;
mod mark;
mod mcp;
mod person;
mod read;
mod replay;
mod report;
mod resume;
mod run;
mod serve;
mod sessions;
mod signals;
mod skill;

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use seamark::browser::{BrowserOptions, DevTools, DeviceScale, Viewport};
use seamark::coworker::worker::ARGS_ON_STDIN;

/// seamark: a Set-of-Mark web agent driving a real Chromium.
#[derive(Debug, Parser)]
#[command(name = "seamark", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Send OpenTelemetry traces (OTLP/HTTP) to this collector, e.g.
    /// http://localhost:4318: a span for each run, step, stage, model call
    /// and command. Else where OTEL_EXPORTER_OTLP_ENDPOINT says, when set;
    /// the other OTEL_* variables hold either way.
    #[arg(long, global = true, value_name = "URL")]
    otlp: Option<String>,
}

/// The most standard input [`ARGS_ON_STDIN`] reads.
const MOST_STDIN_ARGS: u64 = 16 << 20;

impl Cli {
    /// The command line as given; or, when it is only [`ARGS_ON_STDIN`],
    /// the arguments as a JSON array of strings on standard input. A
    /// worker hands a session's run its task, answer and options so: never
    /// on a command line that any user's `ps` shows.
    pub fn arguments() -> Result<Vec<std::ffi::OsString>, UsageError> {
        let given: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if given.len() != 2 || given[1] != ARGS_ON_STDIN {
            return Ok(given);
        }
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(std::io::stdin(), MOST_STDIN_ARGS),
            &mut text,
        )
        .map_err(|e| UsageError(format!("{ARGS_ON_STDIN}: standard input: {e}")))?;
        let args: Vec<String> = serde_json::from_str(&text).map_err(|e| {
            UsageError(format!(
                "{ARGS_ON_STDIN}: standard input is not a JSON array of strings: {e}"
            ))
        })?;
        Ok(std::iter::once(given[0].clone())
            .chain(args.into_iter().map(Into::into))
            .collect())
    }

    /// `--otlp`, when given.
    pub fn otlp(&self) -> Option<&str> {
        self.otlp.as_deref()
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Turn a page into a marked screenshot and an element list.
    ///
    /// Prints the element list the model would read, writes the screenshot with
    /// numbered boxes, and optionally the full element table as JSON.
    Mark(mark::MarkArgs),
    /// Read a page's content as compact Markdown (a reader view).
    ///
    /// Headings, paragraphs, lists, tables, definition lists, quotes, code,
    /// image alt text and form fields, from the live page and its frames;
    /// what nobody can see is left out; navigation, header, footer and
    /// cookie notices are folded to one line each. Links and buttons carry
    /// the mark ids `seamark mark` gives them: `[Pricing][12]`.
    Read(read::ReadArgs),
    /// Do a task on the web: perceive, mark, ask the model, act, until done.
    ///
    /// Progress goes to stderr; the result to stdout (one JSON object with
    /// --json). Every step is recorded in the run directory. Exit status: 0 when
    /// the task was completed, 1 when it was not (stopped, failed, out of
    /// budget), 2 for a configuration error such as no model, 3 when the run
    /// waits for an answer (seamark resume), 4 when the model said it was done
    /// but the --expect checks did not hold (unverified), 130 when
    /// interrupted.
    Run(run::RunArgs),
    /// Run a recorded run again against the live site, with the recorded
    /// answers, and report where the pages differ from the recording.
    Replay(replay::ReplayArgs),
    /// Go on with a run that was cut off: killed, crashed, out of budget
    /// (give higher limits), or waiting for an answer (give --answer).
    ///
    /// The task, plan, history, spend and rules come from its journal, the
    /// browser's cookies and storage from the state kept after every step,
    /// the page from the last URL; the journal grows. Commands whose outcome
    /// was never recorded are not repeated blindly: the model is told to check
    /// the page first, and a destructive action waits for a person's yes.
    Resume(resume::ResumeArgs),
    /// Write a run's report.html and run.gif again from its run directory.
    ///
    /// A run writes both when it ends; this writes them for a run that was
    /// killed (its journal ends mid-step), or elsewhere: a report written
    /// outside the run directory holds its images inside it, so it is one
    /// file that opens anywhere.
    Report(report::ReportArgs),
    /// Run many tasks: a JSONL file of tasks (or a MiniWoB++ suite), each
    /// scored by its check, several at once in browser contexts of their own.
    ///
    /// Writes a batch directory: each run's directory under runs/<id>/<k>/,
    /// results.jsonl (a line per finished run, as it ends), summary.json and
    /// summary.md (the table printed at the end). Exit status: 0 when every
    /// run passed, 1 when one did not, 2 for bad input (every bad line of the
    /// tasks file is listed), 130 when interrupted.
    Batch(batch::BatchArgs),
    /// Watch the whole loop on a bundled job board: the site served on
    /// 127.0.0.1, the task done with recorded answers (no model, no key), or
    /// with a real model (--model); a report of the run at the end.
    Demo(demo::DemoArgs),
    /// Make a run recorded with --record-site a fixture: its task, start
    /// page and checks as a line of a tasks file, beside its site.har.
    ///
    /// `seamark batch` runs the tasks file offline, each run answered from
    /// its recording with the clock fixed where it began; with --repeat K it
    /// reports pass^K. A run that failed in production becomes a regression
    /// test a fix must pass. See docs/fixtures.md.
    Fixture(fixture::FixtureArgs),
    /// Measure perception on any pages: each stage beside a bare screenshot
    /// of the same page, taken in turn, as ratios measured in one run.
    ///
    /// Stages: the floor (a bare screenshot), the element table, the whole
    /// perception and the screenshot within it, mark drawing, encoding for
    /// the model, a whole-page READ; and a first look after a fresh load, cold
    /// and with the document primed while the page settled.
    /// Each as min / median / p95 / max, with the median's ratio to its
    /// floor. Exit status 1 when a page could not be measured, or (with
    /// --compare) when a stage got worse than the threshold.
    Bench(bench::BenchArgs),
    /// Serve seamark's perception and executor to any MCP client.
    ///
    /// Tools: open, observe, act, read, tabs, and skill (with --skills). Over
    /// stdio by default (stdout carries only the protocol; logs go to
    /// stderr), or streamable HTTP with --http. The browser starts at the
    /// first call that needs it; the session is journaled in its run
    /// directory, with its report at the end.
    Mcp(mcp::McpArgs),
    /// See and remove the skills runs learned: tasks done once, done again
    /// without the model.
    ///
    /// A run that ends done is learned into the skills folder (default
    /// skills/, beside runs/); a later task on the same site, worded the same
    /// but for its values, is done from the skill while the pages fit, and
    /// the model takes over where they do not.
    Skill(skill::SkillArgs),
    /// Start a browser of your own for seamark to work in: Chromium with a
    /// profile folder seamark keeps for you and remote debugging on.
    ///
    /// Log in there once; then `--cdp DIR` (the line it prints) or `--cdp
    /// auto` lets `run`, `mcp` and the others work in it as you, in a tab of
    /// their own. Your everyday profile cannot be driven (Chrome 136 ignores
    /// remote debugging there): see docs/sessions.md to copy it.
    Browser(browser::BrowserCmdArgs),
    /// Keep tasks as sessions that outlast a process: an HTTP API, a page
    /// for the person, and workers that run them.
    ///
    /// A session asks, and waits with its browser closed until the answer
    /// comes (on the page, the API or `seamark sessions answer`); a
    /// destructive action waits for Approve or Refuse the same way. A worker
    /// that dies lets another go on from the journal after its lease lapses,
    /// without repeating the step it cut off blindly. SQLite by default;
    /// with --db postgres://… more machines run `seamark worker` on the same
    /// queue. Runs until Ctrl-C or SIGTERM (the runs under way are queued
    /// again). See docs/serve.md.
    Serve(serve::ServeArgs),
    /// Run sessions of a `seamark serve` queue on this machine: workers only,
    /// on the same --db (PostgreSQL, for more than one machine).
    Worker(serve::WorkerArgs),
    /// The sessions of a `seamark serve`: list, show, submit, answer, stop,
    /// wait.
    Sessions(sessions::SessionsArgs),
    /// Check what a run needs, each with what was found and what to do:
    /// Chromium and its version, the sandbox, that a browser starts, the
    /// bundled font, the model and its key (one tiny request), `seamark
    /// browser`'s profile, what `--cdp auto` finds, room on the disk.
    ///
    /// Exit status 1 when a run would fail. Nothing is changed unless --fix
    /// is given, and then only folders are made.
    Doctor(doctor::DoctorArgs),
    /// List the phones and tablets `--device` can be: each screen's size
    /// and scale, phone or tablet, its system, touch.
    Devices(devices::DevicesArgs),
    /// Print the shell's completion script: bash, zsh, fish, powershell or
    /// elvish (see the README for where each shell looks for it).
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff): `seamark man | man -l -`; a
    /// subcommand's with its name (`seamark man run`), every page into a
    /// folder with --dir.
    Man(man::ManArgs),
}

/// A mistake in how seamark was called or configured (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    /// A library error that says how seamark was called wrong.
    pub fn of(e: impl std::fmt::Display) -> UsageError {
        UsageError(e.to_string())
    }
}

/// How to get a browser; shared by every subcommand that drives one.
#[derive(Debug, Args)]
pub struct BrowserArgs {
    /// Chromium binary to launch (else env SEAMARK_CHROME, else the usual places).
    #[arg(long, value_name = "PATH")]
    chrome: Option<PathBuf>,
    /// Work in a running browser instead of launching one: its DevTools
    /// websocket (ws://…), its address (http://host:port) or bare port, its
    /// profile folder (read for its DevToolsActivePort), or `auto` (the
    /// usual folders of Chrome, Chromium, Edge and Brave, and `seamark
    /// browser`'s). seamark is a guest there: it opens a tab of its own,
    /// leaves the others alone, and closes only its tab at the end.
    /// `batch` takes it more than once, to spread its runs over browsers.
    #[arg(long, value_name = "TARGET")]
    cdp: Vec<String>,
    /// A worker's browser (its DevTools websocket): the run opens in a
    /// browser context of its own there, which Chromium drops when the run
    /// ends. Set by `seamark serve`'s and `seamark worker`'s workers.
    #[arg(long, value_name = "WS", hide = true, conflicts_with_all = ["cdp", "profile", "chrome"])]
    worker_browser: Option<String>,
    /// With --cdp: leave seamark's tab open at the end.
    #[arg(long, requires = "cdp")]
    keep_tab: bool,
    /// Show the browser window.
    #[arg(long)]
    headful: bool,
    /// Be a phone or a tablet (`seamark devices` lists them, e.g. "iPhone
    /// 15", pixel-8): its screen's size and scale, its user agent, touch.
    /// On a touch screen CLICK is a tap and SCROLL a swipe.
    #[arg(long, value_name = "NAME", value_parser = device, conflicts_with_all = ["viewport", "scale"])]
    device: Option<&'static seamark::browser::Device>,
    /// A browser profile that lasts between runs (cookies, storage, cache):
    /// created when missing; one another browser is using is refused.
    #[arg(long, value_name = "DIR", conflicts_with = "cdp")]
    profile: Option<PathBuf>,
    /// Viewport size in CSS pixels.
    #[arg(long, value_name = "WxH", default_value = "1280x800")]
    viewport: Viewport,
    /// Device scale factor, 0.5 to 4: at 2 the page renders and screenshots
    /// as on a high-density screen (twice the pixels). Marks and `@x,y`
    /// points stay right at any scale.
    #[arg(long, value_name = "N", default_value = "1")]
    scale: DeviceScale,
    /// The browser's time zone (IANA, e.g. Europe/Paris): the page's dates
    /// and the clock the model is told follow it. Else the machine's.
    #[arg(long, value_name = "ZONE", value_parser = zone)]
    timezone: Option<String>,
    /// The browser's locale (BCP 47, e.g. de-DE): how the page formats
    /// dates and numbers. Else the machine's.
    #[arg(long, value_name = "LOCALE", value_parser = locale)]
    locale: Option<String>,
    /// How cookie banners are answered, before the model sees them, by the
    /// rules of some 200 consent platforms (DuckDuckGo's autoconsent):
    /// `reject` refuses every cookie that is not needed (a banner with no
    /// refusal is hidden), `accept` accepts, `ask` leaves banners to the
    /// model. A banner no rule knows is the model's.
    #[arg(long, value_name = "CHOICE", default_value = "reject")]
    consent: seamark::browser::Consent,
}

/// `--timezone`: a zone of IANA's database, checked before a browser starts.
fn zone(text: &str) -> Result<String, String> {
    seamark::browser::Place::checked_zone(text).map_err(|e| e.to_string())
}

/// `--locale`: a BCP 47 locale, checked before a browser starts.
fn locale(text: &str) -> Result<String, String> {
    seamark::browser::Place::checked_locale(text).map_err(|e| e.to_string())
}

impl BrowserArgs {
    /// The options of one browser: `--cdp` at most once, found where it
    /// points.
    async fn options(&self) -> Result<BrowserOptions, UsageError> {
        if self.cdp.len() > 1 {
            return Err(UsageError(
                "--cdp is given more than once: only `seamark batch` spreads runs over browsers"
                    .into(),
            ));
        }
        if let Some(holder) = self
            .profile
            .as_deref()
            .and_then(seamark::browser::profile_holder)
        {
            return Err(UsageError(format!(
                "the profile {} is in use by another browser ({holder}): close that browser, or \
                 use another --profile",
                self.profile
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            )));
        }
        let launch = self.launch_options()?;
        Ok(BrowserOptions {
            cdp: self.remotes().await?.into_iter().next(),
            profile: self.profile.clone(),
            ..launch
        })
    }

    /// The DevTools websocket of each `--cdp` browser, found where it points
    /// (see [`DevTools`]): one that cannot be found is a usage error, told
    /// before anything starts.
    /// The worker's browser a run opens in, as a pool of one, when a
    /// worker gave one.
    pub async fn worker_pool(
        &self,
        options: &BrowserOptions,
    ) -> anyhow::Result<Option<std::sync::Arc<seamark::browser::Pool>>> {
        let Some(ws) = &self.worker_browser else {
            return Ok(None);
        };
        let pool = seamark::browser::Pool::start(options, std::slice::from_ref(ws)).await?;
        Ok(Some(std::sync::Arc::new(pool)))
    }

    async fn remotes(&self) -> Result<Vec<String>, UsageError> {
        // Loopback and the person's own network: never through a proxy
        // from the environment.
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| UsageError(format!("--cdp: {e}")))?;
        let mut out = Vec::new();
        for target in &self.cdp {
            let Ok(devtools) = target.parse::<DevTools>();
            out.push(
                devtools
                    .websocket(&http)
                    .await
                    .map_err(|e| UsageError(e.to_string()))?,
            );
        }
        Ok(out)
    }

    /// How a browser seamark launches starts (whatever `--cdp` says); a
    /// viewport and scale whose screenshots could not be decoded are refused.
    fn launch_options(&self) -> Result<BrowserOptions, UsageError> {
        let viewport = match self.device {
            Some(device) => device.viewport(),
            None => Viewport {
                scale: self.scale,
                ..self.viewport
            },
        }
        .check_device_size()
        .map_err(UsageError::of)?;
        Ok(BrowserOptions {
            chrome: self.chrome.clone(),
            headful: self.headful,
            keep_tab: self.keep_tab,
            viewport,
            place: seamark::browser::Place {
                timezone: self.timezone.clone(),
                locale: self.locale.clone(),
                clock: None,
            },
            consent: self.consent,
            device: self.device,
            ..BrowserOptions::default()
        })
    }
}

/// The site as it is, recorded, or answered from a recording; `run`,
/// `replay`, `batch` and `mcp` take it.
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// Keep every response the browser receives (pages, scripts, styles,
    /// images, XHR and fetch, fonts) in the run directory as site.har
    /// (HAR 1.2, bodies included). Cookie and authorization values and every
    /// --secret are sealed. Run it again offline with --site.
    #[arg(long, conflicts_with = "site")]
    pub record_site: bool,
    /// Answer every request from this recording (a run's site.har) instead
    /// of the network: nothing is fetched live, and a request it has no
    /// answer for fails as a refused connection and is listed in the result.
    /// Not with --cdp.
    #[arg(long, value_name = "FILE.har", conflicts_with = "cdp")]
    pub site: Option<PathBuf>,
    /// Fix the pages' clock (Date) and Math.random so that a recorded app
    /// runs the same way again: from where the --site recording began, or
    /// from TIME (2026-03-14T09:26:53Z). The model is told the same clock.
    #[arg(long, value_name = "TIME", num_args = 0..=1, default_missing_value = "recording")]
    pub fixed_clock: Option<String>,
}

impl SiteArgs {
    /// What the run does with the site and its clock; a recording that
    /// cannot be read, or a time that is none, is told now.
    pub fn site_use(
        &self,
    ) -> Result<(seamark::site::SiteUse, Option<seamark::site::ClockStart>), UsageError> {
        use seamark::site::{ClockStart, SiteUse};
        let site = match (&self.site, self.record_site) {
            (Some(har), _) => {
                let entries =
                    seamark::site::read_har(har).map_err(|e| UsageError(format!("--site: {e}")))?;
                if entries.is_empty() {
                    return Err(UsageError(format!(
                        "--site {}: the recording holds no request",
                        har.display()
                    )));
                }
                SiteUse::Replay(har.clone())
            }
            (None, true) => SiteUse::Record,
            (None, false) => SiteUse::Live,
        };
        let clock = self
            .fixed_clock
            .as_deref()
            .map(|text| ClockStart::parse(text, self.site.is_some()))
            .transpose()
            .map_err(|e| UsageError(format!("--fixed-clock: {e}")))?;
        Ok((site, clock))
    }
}

/// A browser's state in Playwright's storageState format, to start with and
/// to keep at the end; `run` and `mcp` take it.
#[derive(Debug, Args)]
pub struct StorageArgs {
    /// Cookies and each origin's localStorage to start with: a JSON file in
    /// Playwright's storageState format (a credential: keep it private).
    /// Not with --cdp: a person's browser keeps its own cookies.
    #[arg(long, value_name = "FILE", conflicts_with = "cdp")]
    pub storage_state: Option<PathBuf>,
    /// Write the browser's cookies and localStorage here at the end (of the
    /// run, or of the MCP session), in Playwright's storageState format,
    /// readable by you only (0600). Not with --cdp: seamark does not copy a
    /// person's cookies out of their browser.
    #[arg(long, value_name = "FILE", conflicts_with = "cdp")]
    pub save_storage_state: Option<PathBuf>,
}

impl StorageArgs {
    /// Told before the browser starts: a state file that cannot be loaded or
    /// holds nothing to load, and a place to save to that cannot be written.
    fn check(&self) -> Result<(), UsageError> {
        if let Some(path) = &self.storage_state {
            let state = seamark::storage::StorageState::read(path)
                .map_err(|e| UsageError(e.to_string()))?;
            if state.cookies.is_empty() && state.origins.is_empty() {
                return Err(UsageError(format!(
                    "--storage-state {}: it holds no cookies and no origins, so there is \
                     nothing to start with",
                    path.display()
                )));
            }
        }
        if let Some(path) = &self.save_storage_state {
            seamark::storage::StorageState::check_writable(path)
                .map_err(|e| UsageError(format!("--save-storage-state cannot be written: {e}")))?;
        }
        Ok(())
    }
}

/// Told before anything starts: a folder (`flag`'s) that names a file, lies
/// under one, or where nothing can be written (`/proc/…`, a read-only
/// place). Nothing is left behind by the check.
fn writable_folder(flag: &str, dir: &std::path::Path) -> Result<(), UsageError> {
    let refused = |why: String| UsageError(format!("{flag} {}: {why}", dir.display()));
    let existing = seamark::files::nearest_existing(dir);
    if !existing.is_dir() {
        return Err(refused(if existing == dir {
            "it is a file, not a folder".into()
        } else {
            format!("{} is a file, not a folder", existing.display())
        }));
    }
    tempfile::Builder::new()
        .prefix(".seamark-check")
        .tempdir_in(existing)
        .map(drop)
        .map_err(|e| {
            refused(format!(
                "nothing can be written in {}: {e}",
                existing.display()
            ))
        })
}

/// A `--device` name: one of the table's.
fn device(name: &str) -> Result<&'static seamark::browser::Device, String> {
    seamark::browser::Device::named(name).map_err(|e| e.to_string())
}

/// A count that must be 1 or more (`--max-steps`, `--max-failures`).
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be 1 or more".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// An amount of US dollars: a finite number, 0 or more (`--max-cost`).
fn dollars(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        Ok(_) => Err("must be a finite number of US dollars, 0 or more".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The exit status of a run that ended with a question for the person
/// (`needs_input`): `seamark resume RUN_DIR --answer …` goes on.
pub const NEEDS_INPUT: u8 = 3;

/// The exit status of a run whose COMPLETE its checks (`--expect-*`)
/// refused twice (`unverified`).
pub const UNVERIFIED: u8 = 4;

/// The runtime a command runs on. `seamark mcp` runs on one thread: the MCP
/// service starts a task per call as the calls arrive, and on one thread they
/// start in that order and so take the desk in that order (its lock is
/// fair). On several threads a `read` sent right behind an `open` could take
/// it first and find no page open. The browser does the heavy work in its own
/// processes, and drawing marks runs on rayon's threads.
pub fn runtime(cli: &Cli) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match cli.command {
        Command::Mcp(_) => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    builder.enable_all().build()
}

/// Runs the parsed command.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Mark(args) => or_signal(mark::run(args)).await,
        Command::Read(args) => or_signal(read::run(args)).await,
        // These end the run themselves on a signal, to write its end and report.
        Command::Run(args) => run::run(args).await,
        Command::Replay(args) => replay::run(args).await,
        Command::Resume(args) => resume::run(args).await,
        Command::Report(args) => report::run(args),
        Command::Batch(args) => batch::run(args).await,
        Command::Bench(args) => or_signal_code(bench::run(args)).await,
        Command::Demo(args) => demo::run(args).await,
        Command::Fixture(args) => fixture::run(args),
        Command::Mcp(args) => mcp::run(args).await,
        Command::Skill(args) => skill::run(args).await,
        Command::Browser(args) => browser::run(args).await,
        Command::Serve(args) => serve::serve(args).await,
        Command::Worker(args) => serve::worker(args).await,
        Command::Sessions(args) => sessions::run(args).await,
        Command::Doctor(args) => doctor::run(args).await,
        Command::Devices(args) => devices::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    }
}

/// Runs a command that has nothing to save: a signal (Ctrl-C, SIGTERM,
/// SIGHUP) drops it, and the browser session it holds kills the browser it
/// launched and removes its profile.
async fn or_signal(work: impl Future<Output = anyhow::Result<()>>) -> anyhow::Result<ExitCode> {
    or_signal_code(async { work.await.map(|()| ExitCode::SUCCESS) }).await
}

/// The same, for a command that says its own exit status.
async fn or_signal_code(
    work: impl Future<Output = anyhow::Result<ExitCode>>,
) -> anyhow::Result<ExitCode> {
    let signals = signals::Signals::listen();
    tokio::select! {
        r = work => r,
        stop = signals.first() => {
            tell!("seamark: ended by {}", stop.name());
            Ok(signals::interrupted())
        }
    }
}
