//! The signals that end a command early. SIGINT (Ctrl-C), SIGTERM (what
//! `docker stop`, systemd, Kubernetes and CI time-outs send) and SIGHUP (a
//! terminal that closed) all end it the same way: a run writes its end and
//! its report, a batch its summary, an MCP server its sessions' reports, and
//! the browser seamark launched is closed. The exit status says which came:
//! 128 + its number (130, 143, 129).

use std::process::ExitCode;
use std::sync::OnceLock;

/// A signal that ends a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM: a service manager, a container runtime or a time-out.
    Terminate,
    /// SIGHUP: the terminal went away.
    HangUp,
}

impl Stop {
    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
            Stop::HangUp => "SIGHUP",
        }
    }

    /// What a run's reason says ended it: "interrupted (Ctrl-C) during step 2".
    pub fn cause(self) -> &'static str {
        match self {
            Stop::Interrupt => "Ctrl-C",
            other => other.name(),
        }
    }

    /// 128 + the signal's number, as a shell reports a command it ended.
    pub fn exit_code(self) -> u8 {
        128 + match self {
            Stop::HangUp => 1,
            Stop::Interrupt => 2,
            Stop::Terminate => 15,
        }
    }
}

/// The first signal that came, kept for the exit status.
static RECEIVED: OnceLock<Stop> = OnceLock::new();

/// The exit status of a command that ended early: the signal's (130 for a
/// run interrupted when no signal is known to have come).
pub fn interrupted() -> ExitCode {
    ExitCode::from(
        RECEIVED
            .get()
            .copied()
            .unwrap_or(Stop::Interrupt)
            .exit_code(),
    )
}

/// Handlers for the three signals, installed when this is made: from then on
/// a signal is caught and waited for, never left to its default action
/// (which would end seamark at once, with no report).
pub struct Signals {
    #[cfg(unix)]
    streams: Vec<(Stop, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Installs the handlers now. One that cannot be installed is logged,
    /// and its signal keeps its default action.
    pub fn listen() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let kinds = [
                (Stop::Interrupt, SignalKind::interrupt()),
                (Stop::Terminate, SignalKind::terminate()),
                (Stop::HangUp, SignalKind::hangup()),
            ];
            let streams = kinds
                .into_iter()
                .filter_map(|(stop, kind)| match signal(kind) {
                    Ok(stream) => Some((stop, stream)),
                    Err(e) => {
                        tracing::warn!("{} cannot be caught: {e}", stop.name());
                        None
                    }
                })
                .collect();
            Signals { streams }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// Waits for the first of the signals, and keeps it for the exit status.
    /// Never resolves when none could be caught.
    pub async fn first(self) -> Stop {
        let stop = self.wait().await;
        let _ = RECEIVED.set(stop);
        stop
    }

    #[cfg(unix)]
    async fn wait(mut self) -> Stop {
        if self.streams.is_empty() {
            std::future::pending::<()>().await;
        }
        let waits = self.streams.iter_mut().map(|(stop, stream)| {
            let stop = *stop;
            Box::pin(async move {
                if stream.recv().await.is_none() {
                    std::future::pending::<()>().await;
                }
                stop
            })
        });
        futures::future::select_all(waits).await.0
    }

    #[cfg(not(unix))]
    async fn wait(self) -> Stop {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        Stop::Interrupt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_exits_as_a_shell_reports_it() {
        assert_eq!(Stop::Interrupt.exit_code(), 130);
        assert_eq!(Stop::Terminate.exit_code(), 143);
        assert_eq!(Stop::HangUp.exit_code(), 129);
    }
}
