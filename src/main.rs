//! The `seamark` command.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

fn main() -> ExitCode {
    // First: the descriptors a worker gave this run are closed on exec
    // before any program (a browser) is started.
    seamark::mirror::take_from_env();
    let args = match cli::Cli::arguments() {
        Ok(given) => cli::Cli::parse_from(given),
        Err(e) => return fail(e.into()),
    };
    if let Some(url) = args.otlp() {
        // For the processes it starts too (a serve's or a worker's runs):
        // set while this process has one thread, before anything reads it.
        std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", url);
    }
    // Before any runtime: the traces' HTTP client runs one of its own.
    let traces = match seamark::traces::Traces::start(args.otlp()) {
        Ok(traces) => traces,
        Err(e) => return fail(anyhow::Error::new(e).context(cli::UsageError("--otlp".into()))),
    };
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Colours for a person at a terminal, never into a file or a pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_env("SEAMARK_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,chromiumoxide=off")),
        );
    // Only seamark's spans become the trace's: the log's events stay in the log.
    let spans = traces.as_ref().map(|t| {
        tracing_opentelemetry::layer()
            .with_tracer(t.tracer())
            .with_filter(tracing_subscriber::filter::filter_fn(|m| {
                m.is_span() && m.target() == "seamark"
            }))
    });
    tracing_subscriber::registry().with(log).with(spans).init();
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
    if let Some(traces) = traces {
        traces.shutdown();
    }
    match outcome {
        Ok(code) => code,
        Err(err) => fail(err),
    }
}

/// Prints the whole chain once, outermost first, on one line; exit status
/// 2 for a usage error, else 1.
fn fail(err: anyhow::Error) -> ExitCode {
    let line = seamark::errors::chain(err.as_ref());
    eprintln!("seamark: {}", cli::terminal::inert(&line));
    if err.downcast_ref::<cli::UsageError>().is_some() {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}
