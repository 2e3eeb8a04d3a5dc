//! `seamark run`: a task and a start URL in; the agent loop until the task is
//! done or stopped; progress on stderr, the result on stdout.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use seamark::act::{ActOptions, DialogPolicy};
use seamark::agent::{Agent, AgentBuilder, AgentOptions, RunResult, RunStatus};
use seamark::brain::{self, HttpPolicy, Prices};
use seamark::browser::BrowserOptions;
use seamark::check::Check;
use seamark::files::UploadFolder;
use seamark::safety::{
    ConfirmGuard, ConfirmPolicy, Confirmer, DomainPattern, DomainPolicy, Secrets, DEFAULT_WORDS,
};
use seamark::schema::AnswerSchema;

use super::person::{TermProgress, TerminalAsker, TerminalConfirmer};
use super::{BrowserArgs, SiteArgs, StorageArgs, UsageError};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What to do, in plain words.
    #[arg(long)]
    task: String,
    /// Where to start: a URL, or a local HTML file.
    #[arg(long)]
    url: String,
    /// The model: openai/<model> or anthropic/<model> (else env SEAMARK_MODEL).
    /// Keys from OPENAI_API_KEY / ANTHROPIC_API_KEY; OPENAI_BASE_URL points at
    /// any OpenAI-compatible server (Ollama, vLLM, LM Studio, OpenRouter).
    #[arg(long, value_name = "PROVIDER/MODEL")]
    model: Option<String>,
    /// The skills folder: a task done before on the same site, worded the
    /// same but for its values, is done again from its skill without the
    /// model while the pages fit; a run that ends done is learned into it.
    #[arg(long, value_name = "DIR", default_value = seamark::skill::DEFAULT_DIR)]
    skills: PathBuf,
    /// Neither follow nor learn skills: the model does every step.
    #[arg(long)]
    no_skills: bool,
    /// What this run learns is proposed, in the skills folder's proposed/,
    /// and followed only once a person approves it (`seamark skill
    /// approve NAME`).
    #[arg(long)]
    review_skills: bool,
    #[command(flatten)]
    expect: ExpectArgs,
    #[command(flatten)]
    judging: JudgeArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// What must hold before a run is done (repeatable; each checked when the
/// model says COMPLETE, on the live page or the answer).
#[derive(Debug, Args)]
pub struct ExpectArgs {
    /// The page's URL contains this.
    #[arg(long, value_name = "TEXT")]
    expect_url: Vec<String>,
    /// The page's text contains this (case and spacing aside).
    #[arg(long, value_name = "TEXT")]
    expect_text: Vec<String>,
    /// The answer contains this (case and spacing aside).
    #[arg(long, value_name = "TEXT")]
    expect_answer: Vec<String>,
    /// The answer matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    expect_regex: Vec<String>,
    /// This JavaScript expression, evaluated in the page (a promise awaited,
    /// 10 s at most), is truthy.
    #[arg(long, value_name = "EXPR")]
    expect_js: Vec<String>,
}

impl ExpectArgs {
    /// The checks, each regular expression compiled first.
    pub fn checks(&self) -> Result<Vec<Check>, UsageError> {
        if let Some((re, e)) = self
            .expect_regex
            .iter()
            .find_map(|r| regex::Regex::new(r).err().map(|e| (r, e)))
        {
            return Err(UsageError(format!(
                "--expect-regex {re:?} is not a regular expression: {e}"
            )));
        }
        let all = [
            (&self.expect_url, Check::UrlContains as fn(String) -> Check),
            (&self.expect_text, Check::TextContains),
            (&self.expect_answer, Check::AnswerContains),
            (&self.expect_regex, Check::AnswerRegex),
            (&self.expect_js, Check::Js),
        ];
        Ok(all
            .into_iter()
            .flat_map(|(values, make)| values.iter().cloned().map(make))
            .collect())
    }
}

/// Options `run` and `replay` share.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Most steps (model calls).
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = super::at_least_one)]
    max_steps: usize,
    /// Most steps in a row that fail (unreadable answer or a failed command).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = super::at_least_one)]
    max_failures: usize,
    /// Stop once the run has cost this many US dollars (when the model's price is known).
    #[arg(long, value_name = "USD", value_parser = super::dollars)]
    max_cost: Option<f64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    max_time: Option<u64>,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// The run directory (default: runs/<time>-<task>; for batch, the batch
    /// directory, default batches/<time>-<name>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Let --out name a directory that already holds a run: that run is
    /// removed first (without this, such a directory is refused).
    #[arg(long)]
    pub overwrite: bool,
    #[command(flatten)]
    pub model_calls: ModelCallArgs,
    /// Destructive clicks and keys (delete, pay, send, a form with a password…):
    /// ask a person at the terminal (without a terminal: deny), deny, allow, or
    /// park: end the run waiting for a person's yes or no (`seamark resume
    /// --answer yes`), as `seamark serve` does.
    #[arg(long, value_name = "ask|deny|allow|park", default_value = "ask")]
    pub confirm: ConfirmPolicy,
    #[command(flatten)]
    policy: PolicyArgs,
    /// A JSON Schema (a file) the answer must follow: the model ends with
    /// ANSWER: and one JSON value, which is validated (draft 2020-12) and
    /// given as "data" in the result.
    #[arg(long, value_name = "FILE")]
    schema: Option<PathBuf>,
    #[command(flatten)]
    pub storage: StorageArgs,
    #[command(flatten)]
    pub site: SiteArgs,
    /// Screenshots a step may send: the current one, and the ones before it
    /// when the last step's changes are not told in words (a command at a
    /// point of the image, or one with no effect on the page's elements).
    /// Each costs about 1,100 tokens at 1280x800 with OpenAI, 1,370 with
    /// Anthropic.
    #[arg(long, value_name = "N", default_value_t = 2)]
    images: usize,
    #[command(flatten)]
    pub browser: BrowserArgs,
    #[command(flatten)]
    pub live: super::live::LiveArgs,
}

/// A second model that judges the run when the agent says it is done.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// Judge the run with this model (`provider/model`, as for --model) when
    /// the agent says COMPLETE, after the --expect checks: it sees the task,
    /// the answer, the summary, the plan, the steps and the last screenshots,
    /// and answers pass, fail or unsure. A fail refuses COMPLETE with its
    /// reason; a second refusal ends the run unverified (exit 4).
    #[arg(long, value_name = "MODEL")]
    pub judge: Option<String>,
    /// Screenshots the judge sees: the last N the agent was sent.
    #[arg(long, value_name = "N", default_value_t = seamark::judge::DEFAULT_IMAGES)]
    pub judge_images: usize,
}

impl JudgeArgs {
    /// The judge asked for, with keys and base URLs from the environment.
    pub fn judge(
        &self,
        http: brain::HttpPolicy,
    ) -> Result<Option<seamark::judge::Judge>, UsageError> {
        let Some(spec) = &self.judge else {
            return Ok(None);
        };
        let brain =
            brain::from_model_name(spec, http).map_err(|e| UsageError(format!("--judge: {e}")))?;
        Ok(Some(seamark::judge::Judge::new(brain, self.judge_images)))
    }

    /// For a batch: what makes each run's judge model, and how many
    /// screenshots it sees. A model that cannot be made is told now.
    pub fn judges(
        &self,
        http: brain::HttpPolicy,
    ) -> Result<Option<(seamark::batch::BrainMaker, usize)>, UsageError> {
        let (Some(spec), Some(_)) = (self.judge.clone(), self.judge(http)?) else {
            return Ok(None);
        };
        let maker: seamark::batch::BrainMaker =
            Arc::new(move |_: &seamark::batch::TaskSpec| brain::from_model_name(&spec, http));
        Ok(Some((maker, self.judge_images)))
    }
}

/// The policies of the executor that `run`, `replay` and `mcp` share.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Answer confirm and prompt dialogs with Cancel instead of OK.
    #[arg(long)]
    dismiss_dialogs: bool,
    /// Save downloads here (else in the run directory's downloads/; a
    /// batch keeps each run's apart, an MCP session in its own).
    #[arg(long, value_name = "DIR")]
    download_dir: Option<PathBuf>,
    /// Largest download kept, in MB: one that passes it is stopped, what
    /// came of it removed, and the model told.
    #[arg(long, value_name = "MB", default_value_t = seamark::act::DEFAULT_MAX_DOWNLOAD_MB,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_download_mb: u64,
    /// The only folder UPLOAD takes files from: the model names a file in it
    /// (UPLOAD:9:cv.pdf) and is shown what is there. Without it every
    /// UPLOAD is refused.
    #[arg(long, value_name = "DIR")]
    files: Option<PathBuf>,
    /// Only these hosts may be reached (repeatable): example.com, *.example.com.
    /// Every request of the browser is checked, not just navigations.
    #[arg(long, value_name = "PATTERN")]
    allow_domain: Vec<DomainPattern>,
    /// These hosts are never reached (repeatable), whatever the allow list says.
    #[arg(long, value_name = "PATTERN")]
    block_domain: Vec<DomainPattern>,
    /// Another word that makes a click destructive (repeatable).
    #[arg(long, value_name = "WORD")]
    confirm_word: Vec<String>,
    /// A secret the model types as {{secret:NAME}} but never sees:
    /// NAME=VALUE, NAME=@FILE or NAME=env:VAR; NAME@example.com=… limits it to
    /// domains (repeatable).
    #[arg(long, value_name = "NAME=SOURCE")]
    secret: Vec<String>,
    /// Send page text to the model as it is: no tagging of emails, phone
    /// numbers, card numbers and tokens.
    #[arg(long)]
    pub no_scrub: bool,
    /// Longest wait for a page to load (the start page, a link followed, a
    /// form sent): past it the load is stopped and the page taken as it is;
    /// a page from which nothing came at all is an error that says so.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = super::at_least_one)]
    load_timeout: usize,
    /// Most characters one READ gives the model (READ:more gives the next part).
    #[arg(long, value_name = "N", default_value_t = seamark::read::DEFAULT_READ_CHARS)]
    read_chars: usize,
}

impl PolicyArgs {
    /// The executor's options under these policies, with this confirmation
    /// policy and, for `ask`, who is asked.
    pub fn act_options(
        &self,
        confirm: ConfirmPolicy,
        confirmer: Option<Arc<dyn Confirmer>>,
    ) -> anyhow::Result<ActOptions> {
        // Parsed here rather than by clap, whose errors would echo the value.
        let secrets = Secrets::parse_all(&self.secret).map_err(UsageError::of)?;
        if self.read_chars < 500 {
            return Err(UsageError("--read-chars must be 500 or more".into()).into());
        }
        if let Some(dir) = &self.download_dir {
            super::writable_folder("--download-dir", dir)?;
        }
        let mut words: Vec<String> = DEFAULT_WORDS.iter().map(|w| w.to_string()).collect();
        words.extend(self.confirm_word.iter().cloned());
        Ok(ActOptions {
            dialogs: if self.dismiss_dialogs {
                DialogPolicy::Dismiss
            } else {
                DialogPolicy::Accept
            },
            download_dir: self.download_dir.clone(),
            max_download_bytes: self.max_download_mb * 1_000_000,
            files: self
                .files
                .as_deref()
                .map(UploadFolder::new)
                .transpose()
                .map_err(UsageError::of)?,
            domains: DomainPolicy {
                allow: self.allow_domain.clone(),
                block: self.block_domain.clone(),
            },
            secrets,
            confirm: ConfirmGuard::new(confirm, words, confirmer),
            read_chars: self.read_chars,
            navigation_timeout: Duration::from_secs(self.load_timeout as u64),
            ..ActOptions::default()
        })
    }
}

/// How the model is called and priced: the flags `run`, `replay`, `batch`
/// and `resume` share.
#[derive(Debug, Args)]
pub struct ModelCallArgs {
    /// Extra model prices, JSON like data/prices.json (else env SEAMARK_PRICES).
    #[arg(long, value_name = "FILE")]
    prices: Option<PathBuf>,
    /// Retries of a model call on 429, 5xx and timeouts.
    #[arg(long, value_name = "N", default_value_t = 4)]
    retries: u32,
    /// Longest wait for one model answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    model_timeout: u64,
}

impl ModelCallArgs {
    /// Timeouts and retries of the model's calls.
    pub fn http(&self) -> HttpPolicy {
        HttpPolicy {
            retries: self.retries,
            timeout: Duration::from_secs(self.model_timeout.max(1)),
            ..HttpPolicy::default()
        }
    }

    /// The model prices: the built-in ones and `--prices FILE` (else env
    /// SEAMARK_PRICES).
    pub fn prices(&self) -> Result<Prices, UsageError> {
        match self
            .prices
            .clone()
            .or_else(|| std::env::var_os("SEAMARK_PRICES").map(PathBuf::from))
        {
            Some(f) => Prices::with_file(&f).map_err(UsageError::of),
            None => Ok(Prices::built_in()),
        }
    }
}

impl CommonArgs {
    /// The run's budgets and confirmation as a session's options (`seamark
    /// batch --serve`): the budgets every session of the batch gets.
    pub fn session_options(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut options = serde_json::Map::new();
        options.insert("max_steps".into(), self.max_steps.into());
        options.insert("max_failures".into(), self.max_failures.into());
        if let Some(usd) = self.max_cost {
            options.insert("max_cost".into(), usd.into());
        }
        if let Some(s) = self.max_time {
            options.insert("max_time".into(), s.into());
        }
        let confirm = serde_json::to_value(self.confirm).unwrap_or_default();
        options.insert("confirm".into(), confirm);
        options
    }

    pub fn http(&self) -> HttpPolicy {
        self.model_calls.http()
    }

    /// Makes `--out` the new run's own: a directory that already holds a
    /// run is refused (its journal would be appended to, its report and
    /// screenshots overwritten), unless `--overwrite` says to remove it.
    pub fn claim_out(&self) -> Result<(), UsageError> {
        let Some(dir) = &self.out else {
            return Ok(());
        };
        super::writable_folder("--out", dir)?;
        if !dir.join(seamark::journal::JOURNAL).exists() {
            return Ok(());
        }
        if !self.overwrite {
            return Err(UsageError(format!(
                "--out {0} already holds a run: go on with it with `seamark resume {0}`, give \
                 another --out, or add --overwrite to replace it",
                dir.display()
            )));
        }
        std::fs::remove_dir_all(dir).map_err(|e| {
            UsageError(format!(
                "--overwrite: the run in {} could not be removed: {e}",
                dir.display()
            ))
        })
    }

    pub async fn options(&self) -> anyhow::Result<AgentOptions> {
        let confirmer = (self.confirm == ConfirmPolicy::Ask && std::io::stdin().is_terminal())
            .then(|| Arc::new(TerminalConfirmer) as Arc<dyn Confirmer>);
        self.options_with(self.browser.options().await?, confirmer)
    }

    /// The options with this browser and, for `--confirm ask`, this person
    /// to ask (none: deny).
    pub fn options_with(
        &self,
        browser: BrowserOptions,
        confirmer: Option<Arc<dyn Confirmer>>,
    ) -> anyhow::Result<AgentOptions> {
        let prices = self.model_calls.prices()?;
        if self.images == 0 {
            return Err(UsageError("--images must be 1 or more".into()).into());
        }
        let answer_schema = match &self.schema {
            Some(path) => Some(Arc::new(
                AnswerSchema::from_file(path).map_err(|e| UsageError(e.to_string()))?,
            )),
            None => None,
        };
        self.storage.check()?;
        let (site, fixed_clock) = self.site.site_use()?;
        Ok(AgentOptions {
            site,
            fixed_clock,
            storage_state: self.storage.storage_state.clone(),
            save_storage_state: self.storage.save_storage_state.clone(),
            hand_over: self.browser.headful && std::io::stdin().is_terminal(),
            scrub: !self.policy.no_scrub,
            max_steps: self.max_steps,
            max_failures: self.max_failures,
            max_cost: self.max_cost,
            max_time: self.max_time.map(Duration::from_secs),
            out: self.out.clone(),
            browser,
            act: ActOptions {
                answer_schema,
                ..self.policy.act_options(self.confirm, confirmer)?
            },
            images: self.images,
            prices,
            ..AgentOptions::default()
        })
    }
}

/// The model asked for: `--model`, else env SEAMARK_MODEL.
pub fn model_name(flag: Option<&String>) -> Result<String, UsageError> {
    flag.cloned()
        .or_else(|| std::env::var("SEAMARK_MODEL").ok())
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| UsageError(brain::NO_MODEL.into()))
}

pub async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.task.trim().is_empty() {
        return Err(UsageError("--task is empty: say what to do, in plain words".into()).into());
    }
    seamark::start_url::to_url(&args.url).map_err(|e| UsageError(format!("--url: {e}")))?;
    let model = model_name(args.model.as_ref())?;
    let brain = brain::from_model_name(&model, args.common.http())
        .map_err(|e| UsageError(e.to_string()))?;
    let options = AgentOptions {
        skills: (!args.no_skills).then_some(args.skills),
        review_skills: args.review_skills,
        expect: args.expect.checks()?,
        ..args.common.options().await?
    };
    if let Some(why) = options.act.domains.url_refusal(
        &seamark::start_url::to_url(&args.url).map_err(|e| UsageError(format!("--url: {e}")))?,
    ) {
        return Err(UsageError(format!("--url is refused by the domain policy: {why}")).into());
    }
    let judge = args.judging.judge(args.common.http())?;
    args.common.claim_out()?;
    let pool = args.common.browser.worker_pool(&options.browser).await?;
    let mut builder = Agent::builder()
        .task(&args.task)
        .url(&args.url)
        .brain(brain)
        .options(options);
    if let Some(pool) = pool {
        builder = builder.pool(pool);
    }
    if let Some(judge) = judge {
        builder = builder.judge(judge);
    }
    run_agent(builder, args.common.json, Some(&args.common.live)).await
}

/// Runs an agent with terminal progress, signals (Ctrl-C, SIGTERM, SIGHUP),
/// and the person at the terminal (when there is one) to answer its
/// questions, and its live view when asked for; prints the result.
pub async fn run_agent(
    builder: AgentBuilder,
    json: bool,
    live: Option<&super::live::LiveArgs>,
) -> anyhow::Result<ExitCode> {
    let result = run_agent_result(builder, json, live).await?;
    Ok(exit_code(&result))
}

/// The exit status of a run's result.
pub fn exit_code(result: &RunResult) -> ExitCode {
    match result.status {
        RunStatus::Done => ExitCode::SUCCESS,
        RunStatus::Interrupted => super::signals::interrupted(),
        RunStatus::NeedsInput => ExitCode::from(super::NEEDS_INPUT),
        RunStatus::Unverified => ExitCode::from(super::UNVERIFIED),
        _ => ExitCode::from(1),
    }
}

/// [`run_agent`], giving back the result it printed.
pub async fn run_agent_result(
    builder: AgentBuilder,
    json: bool,
    live: Option<&super::live::LiveArgs>,
) -> anyhow::Result<RunResult> {
    let served = match live {
        Some(live) => live.start().await?,
        None => None,
    };
    let builder = match &served {
        Some(served) => builder.live(served.live.clone()),
        None => builder,
    };
    let mut builder = builder.progress(Box::new(TermProgress::new())).interrupt({
        // Installed now, before the browser starts: a signal from here on
        // ends the run with its end and report written.
        let signals = super::signals::Signals::listen();
        async move {
            let stop = signals.first().await;
            tell!(
                "\nseamark: ended by {}; writing the run's end and its report",
                stop.name()
            );
            stop.cause().to_string()
        }
    });
    if std::io::stdin().is_terminal() {
        builder = builder.asker(Arc::new(TerminalAsker));
    }
    let result = builder.build()?.run().await?;
    if let Some(served) = &served {
        served.live.ended();
    }
    print_result(&result, json)?;
    Ok(result)
}

/// The result as `--json` prints it: one object.
fn result_json(r: &RunResult) -> serde_json::Value {
    serde_json::json!({
        "success": r.success,
        "status": r.status,
        "answer": r.answer,
        "reason": r.reason,
        "steps": r.steps,
        "tokens": { "input": r.tokens.input, "output": r.tokens.output },
        "cost_usd": r.cost_usd,
        "run_dir": r.run_dir,
        "wall_time_s": r.wall_time_s,
        "model": r.model,
        "divergences": r.divergences,
        "data": r.data,
        "prompt_tokens": r.prompt_tokens,
        "report": r.report,
        "skill": r.skill,
        "downloads": r.downloads,
        "judge": r.judge,
        "site": r.site,
    })
}

fn print_result(r: &RunResult, json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", result_json(r))?;
        return Ok(());
    }
    let mark = r.status.word();
    writeln!(
        out,
        "{mark} after {} steps in {:.1} s: {}",
        r.steps, r.wall_time_s, r.reason
    )?;
    match (&r.data, &r.answer) {
        (Some(d), _) => writeln!(out, "data: {d}")?,
        (None, Some(a)) => writeln!(out, "answer: {a}")?,
        _ => {}
    }
    let cost = seamark::brain::cost_text(r.cost_usd, &r.model);
    writeln!(
        out,
        "tokens: {} in, {} out · cost: {cost}",
        r.tokens.input, r.tokens.output
    )?;
    if let Some(j) = &r.judge {
        let verdict = j
            .verdict
            .map_or("no verdict", seamark::judge::Verdict::word);
        let cost = seamark::brain::cost_text(j.spend.cost_usd, &j.model);
        writeln!(
            out,
            "judge {}: {verdict} ({}) · tokens: {} in, {} out · cost: {cost}",
            j.model, j.reason, j.spend.tokens.input, j.spend.tokens.output
        )?;
    }
    for d in &r.divergences {
        writeln!(out, "diverged: {d}")?;
    }
    for f in &r.downloads {
        writeln!(out, "downloaded: {} ({})", f.path.display(), f.describe())?;
    }
    if let Some(site) = &r.site {
        write_site(&mut out, site)?;
    }
    writeln!(out, "run directory: {}", r.run_dir.display())?;
    if r.status == RunStatus::NeedsInput {
        writeln!(
            out,
            "answer it with: seamark resume {} --answer '…' (a leading ! keeps it secret)",
            r.run_dir.display()
        )?;
    }
    if let Some(s) = &r.skill {
        if let Some(name) = &s.followed {
            writeln!(
                out,
                "skill: {} steps from {name} without the model",
                s.steps
            )?;
        }
        if let Some(why) = &s.took_over {
            writeln!(out, "the model took over: {why}")?;
        }
        if let Some(path) = &s.learned {
            writeln!(out, "skill learned: {}", path.display())?;
        }
    }
    if let Some(report) = &r.report {
        writeln!(out, "report: {}", report.display())?;
    }
    Ok(())
}

/// What a run did with `--site`: lines of the plain result.
fn write_site(out: &mut impl Write, site: &seamark::site::SiteReport) -> std::io::Result<()> {
    writeln!(
        out,
        "site: {} {} requests {} {}",
        site.mode,
        site.requests,
        if site.mode == "recorded" {
            "into"
        } else {
            "from"
        },
        site.har.display()
    )?;
    if let Some(line) = site.unmatched_line() {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
