//! `seamark report RUN_DIR`: writes a run's report.html and run.gif again.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use seamark::report::{self, ReportError, ReportOptions};

use super::UsageError;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run directory (it holds journal.jsonl).
    #[arg(value_name = "RUN_DIR")]
    run_dir: PathBuf,
    /// Where to write the report (default: RUN_DIR/report.html). Outside the
    /// run directory the images go inside the file.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Put the images inside the report even in the run directory.
    #[arg(long)]
    embed: bool,
    /// Leave out the animation (run.gif).
    #[arg(long)]
    no_animation: bool,
}

pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let options = ReportOptions {
        out: args.output,
        embed: args.embed,
        no_animation: args.no_animation,
    };
    let written = report::write_with(&args.run_dir, &options).map_err(|e| match e {
        // What was named is not a run: the caller's mistake.
        ReportError::NoDirectory(_) | ReportError::NoJournal(_) | ReportError::Journal { .. } => {
            anyhow::Error::new(UsageError(e.to_string()))
        }
        other => anyhow::Error::new(other),
    })?;
    for p in &written.problems {
        tell!("seamark: note: {p}");
    }
    if let Some(gif) = &written.animation {
        show!("animation: {}", gif.display());
    }
    show!("report: {}", written.html.display());
    Ok(ExitCode::SUCCESS)
}
