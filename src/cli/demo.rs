//! `seamark demo`: the whole loop on a bundled job board, with recorded
//! answers (no model, no key), or with a real model (`--model`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use seamark::agent::{Agent, AgentOptions};
use seamark::brain::{self, Brain, Replay};
use seamark::demo::{DemoSite, PORT, RECORDING};

use super::run::{exit_code, run_agent_result, ModelCallArgs};
use super::{BrowserArgs, UsageError};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Run the task with this model instead of the recording:
    /// openai/<model> or anthropic/<model> (keys from the environment).
    #[arg(long, value_name = "PROVIDER/MODEL")]
    model: Option<String>,
    /// Serve the demo site on this port of 127.0.0.1 (the recording was
    /// made on 47813: another port works with --model only).
    #[arg(long, value_name = "PORT", default_value_t = PORT)]
    port: u16,
    /// The run directory (default: runs/<time>-<task>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Make the recording anew from its answers, with the pages as they are
    /// now, and write its journal here (for seamark's developers, on purpose
    /// when the site or seamark changed).
    #[arg(long, value_name = "JOURNAL", conflicts_with = "model")]
    record: Option<PathBuf>,
    /// Replay this recording of the demo task instead of the bundled one
    /// (for seamark's developers: to check a recording made with --record
    /// before it replaces demo/recording/journal.jsonl).
    #[arg(long, value_name = "JOURNAL", conflicts_with = "model")]
    recording: Option<PathBuf>,
    #[command(flatten)]
    model_calls: ModelCallArgs,
    #[command(flatten)]
    browser: BrowserArgs,
}

pub async fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let recording = match &args.recording {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                UsageError(format!("cannot read the recording {}: {e}", path.display()))
            })?;
            Replay::from_journal(&text, &path.display().to_string())
        }
        None => Replay::from_journal(RECORDING, "the demo's recording"),
    }
    .map_err(|e| UsageError(e.to_string()))?;
    if args.model.is_none() && args.port != PORT {
        return Err(UsageError(format!(
            "the recording was made on port {PORT}: another --port works with --model only"
        ))
        .into());
    }
    let site = DemoSite::serve(args.port).await.map_err(UsageError::of)?;
    let url = site.server.url("index.html");
    let (task, model) = (recording.task.clone(), recording.model.clone());
    let brain: Box<dyn Brain> = match (&args.model, &args.record) {
        (Some(name), _) => brain::from_model_name(name, args.model_calls.http())
            .map_err(|e| UsageError(e.to_string()))?,
        (None, Some(_)) => Box::new(recording.rerecording()),
        (None, None) => Box::new(recording),
    };
    let recorded = args.model.is_none() && args.record.is_none();
    if recorded {
        tell!(
            "seamark demo: a job board served on {}; the answers come from a recording \
             by {model}: no model is called\n",
            site.server.base
        );
    }
    let options = AgentOptions {
        out: args.out.clone(),
        max_steps: 10,
        browser: args.browser.options().await?,
        prices: args.model_calls.prices()?,
        ..AgentOptions::default()
    };
    let builder = Agent::builder()
        .task(task)
        .url(url)
        .brain(brain)
        .options(options);
    let result = run_agent_result(builder, args.json, None).await?;
    if let Some(path) = &args.record {
        std::fs::copy(result.run_dir.join(seamark::journal::JOURNAL), path)
            .with_context(|| format!("cannot write the recording to {}", path.display()))?;
        tell!("seamark demo: the recording is now {}", path.display());
    }
    if !result.divergences.is_empty() {
        tell!(
            "\nseamark demo: the pages no longer match the recording (see above): the site or \
             seamark changed. Check the answers in demo/recording/journal.jsonl, then make the \
             recording anew: seamark demo --record demo/recording/journal.jsonl"
        );
        return Ok(ExitCode::from(1));
    }
    if !args.json {
        let animation = result.run_dir.join(seamark::report::ANIMATION);
        if animation.is_file() {
            show!("animation: {}", animation.display());
        }
    }
    if recorded && !args.json {
        show!(
            "\nThat was a recording: answers written by a careful person, replayed step by step \
             against the live page (open the report to see each step).\nThe same task with a \
             real model:\n\n  \
             OPENAI_API_KEY=sk-… seamark demo --model openai/gpt-4o-mini\n  \
             ANTHROPIC_API_KEY=sk-ant-… seamark demo --model anthropic/claude-sonnet-4-5\n\n\
             and a task of your own on any site:\n\n  \
             seamark run --model openai/gpt-4o-mini --task \"…\" --url https://…"
        );
    }
    Ok(exit_code(&result))
}
