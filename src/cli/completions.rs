//! `seamark completions SHELL`: the shell's completion script, from the same
//! clap definitions as `--help`, so it never falls behind a flag.

use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in: bash, zsh, fish, powershell or elvish.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = super::Cli::command();
    clap_complete::generate(args.shell, &mut command, "seamark", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
