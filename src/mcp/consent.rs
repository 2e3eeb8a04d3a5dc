//! Confirmation through the MCP client: a destructive action is put to the
//! person with MCP elicitation, when the client supports it; else it is
//! refused, as with no terminal.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::{Peer, RoleServer};
use rmcp::{elicit_safe, schemars};

use crate::safety::{Confirmer, Hold};

/// How long a person has to answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(300);

/// What the person is asked for.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[schemars(description = "Whether seamark may go ahead with the action")]
pub struct Consent {
    /// true to go ahead, false to refuse.
    #[schemars(description = "Go ahead with the action")]
    pub go_ahead: bool,
}

elicit_safe!(Consent);

/// The client of the call under way, to ask through.
pub type PeerSlot = Arc<Mutex<Option<Peer<RoleServer>>>>;

/// Asks the person at the MCP client (elicitation).
pub struct ElicitConfirmer {
    peer: PeerSlot,
    runtime: tokio::runtime::Handle,
}

impl ElicitConfirmer {
    /// Asks through the client in `peer`, on this runtime.
    pub fn new(peer: PeerSlot, runtime: tokio::runtime::Handle) -> Self {
        Self { peer, runtime }
    }

    fn peer(&self) -> Option<Peer<RoleServer>> {
        self.peer.lock().ok().and_then(|p| p.clone())
    }
}

impl Confirmer for ElicitConfirmer {
    fn unavailable(&self) -> Option<String> {
        let supports = self
            .peer()
            .and_then(|p| p.peer_info())
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        (!supports).then(|| "no one to ask (the MCP client does not support elicitation)".into())
    }

    fn confirm(&self, hold: &Hold) -> bool {
        let Some(peer) = self.peer() else {
            return false;
        };
        let message = format!(
            "seamark wants to {} on {} at {}, held because {}. Go ahead?",
            hold.command, hold.element, hold.url, hold.why
        );
        // Called off the async threads (the executor asks in spawn_blocking).
        let answer = self.runtime.block_on(async {
            tokio::time::timeout(ANSWER_WITHIN, peer.elicit::<Consent>(message)).await
        });
        matches!(answer, Ok(Ok(Some(Consent { go_ahead: true }))))
    }
}
