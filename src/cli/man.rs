//! `seamark man [COMMAND…] [--dir DIR]`: the manual page in roff, from the
//! same clap definitions as `--help`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory};

use super::UsageError;

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The page of a subcommand (`seamark man run`, `seamark man sessions
    /// list`) instead of seamark's own, which lists them all.
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
    /// Write every page (seamark.1, seamark-run.1, …) into this folder
    /// instead of printing one, e.g. ~/.local/share/man/man1.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    dir: Option<PathBuf>,
}

pub fn run(args: ManArgs) -> anyhow::Result<ExitCode> {
    let mut command = super::Cli::command().disable_help_subcommand(true);
    // Built, each subcommand knows its full name (`seamark-run`): its page's
    // title and file name.
    command.build();
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot make the folder {}", dir.display()))?;
        clap_mangen::generate_to(command, dir)
            .with_context(|| format!("cannot write the pages into {}", dir.display()))?;
        show!("{}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut page = &command;
    for name in &args.command {
        page = page.find_subcommand(name).ok_or_else(|| {
            let known: Vec<&str> = page.get_subcommands().map(|c| c.get_name()).collect();
            UsageError(format!(
                "`{}` has no subcommand {name:?}: it has {}",
                page.get_display_name().unwrap_or("seamark"),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ))
        })?;
    }
    let mut roff = Vec::new();
    clap_mangen::Man::new(page.clone()).render(&mut roff)?;
    let mut out = std::io::stdout().lock();
    // A reader that stops early (`| head`) is no failure.
    match out.write_all(&roff).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
