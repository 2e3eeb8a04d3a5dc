//! `seamark replay RUN_DIR`: runs a recorded run again against the live site,
//! with the recorded answers as the model, and says where the pages differ.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use seamark::agent::Agent;
use seamark::brain::Replay;

use super::run::{run_agent, CommonArgs};
use super::UsageError;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recorded run directory (it holds journal.jsonl).
    #[arg(value_name = "RUN_DIR")]
    run_dir: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
}

pub async fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let replay = Replay::open(&args.run_dir).map_err(|e| UsageError(e.to_string()))?;
    let (task, url) = (replay.task.clone(), replay.url.clone());
    let builder = Agent::builder()
        .task(task)
        .url(url)
        .brain(Box::new(replay))
        .options(args.common.options().await?);
    args.common.claim_out()?;
    run_agent(builder, args.common.json, Some(&args.common.live)).await
}
