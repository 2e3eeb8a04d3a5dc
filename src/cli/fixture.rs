//! `seamark fixture RUN_DIR`: a recorded run as a fixture that `seamark
//! batch` runs offline.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use seamark::batch::fixture::{make_fixture, FixtureError};

use super::UsageError;

#[derive(Debug, Args)]
pub struct FixtureArgs {
    /// The run directory of a run made with --record-site.
    run_dir: PathBuf,
    /// The folder of fixtures: its tasks.jsonl gets the run's line, and
    /// <ID>/site.har its recording.
    #[arg(long, value_name = "DIR", default_value = "fixtures")]
    out: PathBuf,
    /// The fixture's id in the tasks file (else the run directory's name);
    /// a fixture of the same id is replaced.
    #[arg(long, value_name = "ID")]
    id: Option<String>,
}

pub fn run(args: FixtureArgs) -> anyhow::Result<ExitCode> {
    super::writable_folder("--out", &args.out)?;
    let fixture =
        make_fixture(&args.run_dir, &args.out, args.id.as_deref()).map_err(|e| match e {
            FixtureError::Write { .. } => anyhow::Error::new(e),
            e => UsageError(e.to_string()).into(),
        })?;
    let line = &fixture.line;
    show!(
        "fixture {}: a line of {}, the site in {}",
        line.id,
        fixture.tasks.display(),
        fixture.har.display()
    );
    for note in &fixture.notes {
        show!("note: {note}");
    }
    let secrets: Vec<String> = line
        .secrets
        .iter()
        .filter_map(|s| s.split_once("=env:").map(|(_, var)| var.to_string()))
        .collect();
    if !secrets.is_empty() {
        show!(
            "its secrets are read from {} when it runs",
            secrets.join(", ")
        );
    }
    show!(
        "run it offline: seamark batch {} --model MODEL --repeat 5",
        fixture.tasks.display()
    );
    Ok(ExitCode::SUCCESS)
}
