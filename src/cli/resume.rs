//! `seamark resume RUN_DIR`: goes on with a run that was killed, crashed,
//! ran out of budget, or ended needing the person's answer.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use seamark::act::ActOptions;
use seamark::agent::resume::yes_or_no;
use seamark::agent::{Agent, AgentOptions, Resume};
use seamark::brain;
use seamark::files::UploadFolder;
use seamark::safety::{ConfirmGuard, ConfirmPolicy, Confirmer, Secrets, DEFAULT_WORDS};

use super::person::TerminalConfirmer;
use super::run::{run_agent, ModelCallArgs};
use super::{BrowserArgs, UsageError};

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run directory (it holds journal.jsonl).
    #[arg(value_name = "RUN_DIR")]
    run_dir: PathBuf,
    /// The answer to the question the run ended with (status needs_input);
    /// a leading ! keeps it secret.
    #[arg(long, value_name = "TEXT")]
    answer: Option<String>,
    /// Most steps, counted from the run's start (raise it for a run that
    /// ran out of steps; else the run's own budget).
    #[arg(long, value_name = "N", value_parser = super::at_least_one)]
    max_steps: Option<usize>,
    /// Stop this part of the run after this many seconds (else the run's
    /// own budget).
    #[arg(long, value_name = "SECONDS")]
    max_time: Option<u64>,
    /// Stop once the whole run has cost this many US dollars (else the run's
    /// own budget).
    #[arg(long, value_name = "USD", value_parser = super::dollars)]
    max_cost: Option<f64>,
    /// The model (else the one the run had).
    #[arg(long, value_name = "PROVIDER/MODEL")]
    model: Option<String>,
    /// The run's secrets, given again (their values are never recorded):
    /// NAME=VALUE, NAME=@FILE, NAME=env:VAR, NAME=totp:BASE32.
    #[arg(long, value_name = "NAME=SOURCE")]
    secret: Vec<String>,
    /// The folder UPLOAD takes files from (else the run's own, if it had
    /// one; see run --files).
    #[arg(long, value_name = "DIR")]
    files: Option<PathBuf>,
    #[command(flatten)]
    model_calls: ModelCallArgs,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Nobody answers at this terminal: what would be asked of a person (a
    /// destructive action, one after commands whose outcome is unknown)
    /// ends the run waiting for their yes or no, as `--confirm park`
    /// (`seamark serve`'s workers resume so).
    #[arg(long)]
    park: bool,
    #[command(flatten)]
    browser: BrowserArgs,
    #[command(flatten)]
    live: super::live::LiveArgs,
}

pub async fn run(args: ResumeArgs) -> anyhow::Result<ExitCode> {
    let resume = Resume::read(&args.run_dir).map_err(UsageError::of)?;
    answer_fits(&resume, args.answer.as_deref())?;
    let secrets = Secrets::parse_all(&args.secret).map_err(UsageError::of)?;
    let confirmer = std::io::stdin()
        .is_terminal()
        .then(|| Arc::new(TerminalConfirmer) as Arc<dyn Confirmer>);
    let words = DEFAULT_WORDS.iter().map(|w| w.to_string()).collect();
    let mut options = AgentOptions {
        browser: args.browser.options().await?,
        act: ActOptions {
            secrets,
            confirm: ConfirmGuard::new(ConfirmPolicy::Ask, words, confirmer),
            files: args
                .files
                .as_deref()
                .map(UploadFolder::new)
                .transpose()
                .map_err(UsageError::of)?,
            ..ActOptions::default()
        },
        prices: args.model_calls.prices()?,
        hand_over: args.browser.headful && std::io::stdin().is_terminal(),
        ..AgentOptions::default()
    };
    match &resume.policy {
        Some(policy) => policy.apply(&mut options).map_err(UsageError::of)?,
        None => tell!(
            "seamark: note: this run's journal does not hold its rules (an older seamark \
             wrote it): the defaults apply"
        ),
    }
    if args.park {
        options.act.confirm = options.act.confirm.clone().parking();
    }
    if let (Some(hold), Some(answer)) = (&resume.parked, &args.answer) {
        let allowed = yes_or_no(answer).ok_or_else(|| {
            UsageError(format!(
                "the run waits for a yes or a no to \"{}\": --answer {answer:?} is neither",
                hold.question()
            ))
        })?;
        options.act.confirm = options.act.confirm.clone().answered(hold, allowed);
    }
    budgets(&args, &resume, &mut options)?;
    let model = args.model.clone().unwrap_or_else(|| resume.model.clone());
    let brain = brain::from_model_name(&model, args.model_calls.http()).map_err(UsageError::of)?;
    tell!(
        "seamark: going on with {} from step {} ({})",
        resume.dir.display(),
        resume.first_step,
        resume.after
    );
    let pool = args.browser.worker_pool(&options.browser).await?;
    let mut builder = Agent::builder()
        .brain(brain)
        .options(options)
        .resume(resume);
    if let Some(pool) = pool {
        builder = builder.pool(pool);
    }
    if let Some(answer) = &args.answer {
        builder = builder.answer(answer.clone());
    }
    run_agent(builder, args.json, Some(&args.live)).await
}

/// An answer is given when the run asked a question, and only then.
fn answer_fits(resume: &Resume, answer: Option<&str>) -> Result<(), UsageError> {
    match (&resume.question, answer) {
        (None, Some(_)) => Err(UsageError(format!(
            "the run did not end with a question ({}): --answer has nothing to answer",
            resume.after
        ))),
        (Some(q), None) => Err(UsageError(format!(
            "the run is waiting for the answer to \"{q}\": give it with --answer '…' (a \
             leading ! keeps it secret)"
        ))),
        _ => Ok(()),
    }
}

/// The budgets the resumed run goes on with: the flags given, else its own;
/// steps left to take, or a usage error.
fn budgets(
    args: &ResumeArgs,
    resume: &Resume,
    options: &mut AgentOptions,
) -> Result<(), UsageError> {
    options.max_steps = args.max_steps.unwrap_or(resume.max_steps);
    if let Some(t) = args.max_time {
        options.max_time = Some(Duration::from_secs(t));
    }
    if args.max_cost.is_some() {
        options.max_cost = args.max_cost;
    }
    if options.max_steps < resume.first_step {
        return Err(UsageError(format!(
            "the run has taken {} steps of its budget of {}: give --max-steps above {0}",
            resume.first_step - 1,
            options.max_steps
        )));
    }
    Ok(())
}
