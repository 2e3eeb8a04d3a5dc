//! The `seamark` command.

// Outside input gets a clear error, never a panic: no unwrap() but in tests
// (Cargo.toml's [lints] holds the rest of the house rules).
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SEAMARK_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,chromiumoxide=off")),
        )
        .with_writer(std::io::stderr)
        // Colours for a person at a terminal, never into a file or a pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = match cli::runtime(&args) {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("seamark: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // Each command handles its signals itself (a run writes its end and
    // report). What is left when it returns is not waited for: a read of
    // stdin (`seamark mcp`) blocks a thread until the client closes it.
    let outcome = runtime.block_on(cli::run(args));
    runtime.shutdown_background();
    match outcome {
        Ok(code) => code,
        Err(err) => {
            // Print the whole chain once, outermost first, on one line.
            let chain: Vec<String> = err.chain().map(|e| e.to_string()).collect();
            let mut line = String::new();
            for part in chain {
                if !line.contains(&part) {
                    if !line.is_empty() {
                        line.push_str(": ");
                    }
                    line.push_str(&part);
                }
            }
            eprintln!("seamark: {}", cli::terminal::inert(&line));
            if err.downcast_ref::<cli::UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
