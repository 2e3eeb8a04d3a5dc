//! `--live`: a run's browser watched, taken over and handed back from a
//! page (`run`, `resume`, `replay`).

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;
use seamark::live::{Live, LiveServer, ANNOUNCE_ENV, TOKEN_ENV};

use super::UsageError;

/// The live view and a person's hands.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// Serve a live view of the run's browser at ADDR (default
    /// 127.0.0.1:0, any free port; the URL is printed): watch it, take it
    /// over, hand it back with a note; HANDS waits there for a person. Off
    /// loopback it wants a token (SEAMARK_LIVE_TOKEN, else a new one, in
    /// the printed URL).
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:0"
    )]
    pub live: Option<SocketAddr>,
    /// How long HANDS waits for a person to take the browser, and how long
    /// a person may leave it untouched before the agent takes it back, in
    /// seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = seamark::live::HANDS_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub hands_timeout: u64,
}

/// A live view being served, for as long as the run lasts.
pub struct Served {
    /// The view the run shows itself in.
    pub live: Live,
    _server: LiveServer,
}

impl LiveArgs {
    /// Serves the live view when `--live` was given, and says where.
    pub async fn start(&self) -> anyhow::Result<Option<Served>> {
        let Some(address) = self.live else {
            return Ok(None);
        };
        let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
        let live = Live::new(Duration::from_secs(self.hands_timeout));
        let server = LiveServer::start(live.clone(), address, token, &[])
            .await
            .map_err(UsageError::of)?;
        let base = format!("http://{}/", server.address());
        tell!(
            "seamark: live view (watch, take over, hand back): {}",
            server.url()
        );
        if let Some(path) = std::env::var_os(ANNOUNCE_ENV) {
            if let Err(e) = std::fs::write(&path, &base) {
                tell!("seamark: warning: the live view's address was not written down: {e}");
            }
        }
        Ok(Some(Served {
            live,
            _server: server,
        }))
    }
}
