//! The model side of the loop: a [`Brain`](crate::brain::Brain) takes one rendered prompt (text and
//! the marked screenshots) and answers with raw text and token usage. The
//! providers speak their real wire formats over HTTP; the replay brain answers
//! from a recorded run.

mod anthropic;
mod http;
mod openai;
mod prices;
mod replay;
pub mod tokens;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

pub use anthropic::{Anthropic, ANTHROPIC_BASE_URL};
pub use http::HttpPolicy;
pub use openai::{OpenAi, OPENAI_BASE_URL};
pub use prices::{Price, Prices};
pub use replay::{cost_text, is_replay, Replay};
pub use tokens::PromptTokens;

/// An image for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// MIME type, e.g. `image/png`.
    pub media_type: String,
    /// The encoded bytes, base64.
    pub base64: String,
}

/// One request to the model, already rendered by the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// The system prompt.
    pub system: String,
    /// The step's text: task, plan, history, feedback, the element list.
    pub text: String,
    /// Marked screenshots, oldest first; the last is the current page.
    pub images: Vec<Image>,
    /// 1-based step number.
    pub step: usize,
    /// Signature of the page the prompt shows (the replay brain checks it).
    pub signature: String,
}

/// Tokens one answer cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input: u64,
    /// Answer tokens.
    pub output: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input += other.input;
        self.output += other.output;
    }
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The raw text.
    pub text: String,
    /// Tokens, as the provider counted them.
    pub usage: Usage,
    /// For a replay: how the live page differs from the recording at this step.
    pub divergence: Option<String>,
}

/// Errors of a model call. None of them holds an API key.
#[derive(Debug, thiserror::Error)]
pub enum BrainError {
    /// No model, or an incomplete configuration.
    #[error("{0}")]
    NotConfigured(String),
    /// The provider refused the key (401/403).
    #[error("the model provider refused the API key (HTTP {status}): {message}")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The model or endpoint does not exist (404).
    #[error("the model or endpoint was not found (HTTP 404 at {url}): {message}")]
    NotFound {
        /// The URL asked.
        url: String,
        /// The provider's message.
        message: String,
    },
    /// Another error answer that retrying will not fix.
    #[error("the model provider answered HTTP {status}: {message}")]
    Http {
        /// Status code.
        status: u16,
        /// The provider's message, or the body.
        message: String,
    },
    /// Retries ran out on 429, 5xx or timeouts.
    #[error("the model provider kept failing ({attempts} attempts); last: {last}")]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// A success status with a body that is not the provider's format.
    #[error("the model provider's answer could not be read ({reason}); body: {body}")]
    Malformed {
        /// What was wrong.
        reason: String,
        /// The raw body.
        body: String,
    },
    /// The recording a replay reads from is missing, unreadable or used up.
    #[error("replay: {0}")]
    Replay(String),
}

impl BrainError {
    /// The error's kind in a word (a trace's `error.type`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotConfigured(_) => "not_configured",
            Self::Unauthorized { .. } => "unauthorized",
            Self::NotFound { .. } => "not_found",
            Self::Http { .. } => "http",
            Self::Exhausted { .. } => "exhausted",
            Self::Malformed { .. } => "malformed",
            Self::Replay(_) => "replay",
        }
    }
}

/// A model that answers prompts.
pub trait Brain: Send {
    /// A name for logs and the journal, e.g. `openai/gpt-4o`.
    fn name(&self) -> String;
    /// Answers one prompt.
    fn answer<'a>(&'a mut self, prompt: &'a Prompt) -> BoxFuture<'a, Result<Reply, BrainError>>;
}

/// What to set when no model is configured.
pub const NO_MODEL: &str = "no model configured: pass --model openai/<model> or \
     --model anthropic/<model>, or set SEAMARK_MODEL; with OPENAI_API_KEY or \
     ANTHROPIC_API_KEY for the hosted APIs, and OPENAI_BASE_URL for a local server \
     (Ollama: OPENAI_BASE_URL=http://localhost:11434/v1 --model openai/llama3.2-vision)";

/// Builds the brain a model name asks for (`openai/<model>`, `anthropic/<model>`),
/// with keys and base URLs from the environment.
pub fn from_model_name(spec: &str, policy: HttpPolicy) -> Result<Box<dyn Brain>, BrainError> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    // A base URL that is not one fails here, before a browser starts, not
    // after five retries of a request that can never be sent.
    let base_url = |k: &str| match env(k) {
        Some(v) => match url::Url::parse(v.trim()) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(Some(v)),
            _ => Err(BrainError::NotConfigured(format!(
                "{k}={v:?} is not an http(s) URL (e.g. http://localhost:11434/v1)"
            ))),
        },
        None => Ok(None),
    };
    let (provider, model) = spec.split_once('/').ok_or_else(|| {
        BrainError::NotConfigured(format!(
            "model {spec:?} names no provider; write openai/<model> or anthropic/<model>"
        ))
    })?;
    if model.trim().is_empty() {
        return Err(BrainError::NotConfigured(format!(
            "model {spec:?} names no model after the provider"
        )));
    }
    match provider {
        "openai" => {
            let base = base_url("OPENAI_BASE_URL")?;
            let key = env("OPENAI_API_KEY");
            if key.is_none() && base.is_none() {
                return Err(BrainError::NotConfigured(
                    "OPENAI_API_KEY is not set (a local server needs OPENAI_BASE_URL instead)"
                        .into(),
                ));
            }
            Ok(Box::new(OpenAi::new(model, key, base, policy)?))
        }
        "anthropic" => {
            let base = base_url("ANTHROPIC_BASE_URL")?;
            let key = env("ANTHROPIC_API_KEY");
            if key.is_none() && base.is_none() {
                return Err(BrainError::NotConfigured(
                    "ANTHROPIC_API_KEY is not set".into(),
                ));
            }
            Ok(Box::new(Anthropic::new(model, key, base, policy)?))
        }
        other => Err(BrainError::NotConfigured(format!(
            "unknown model provider {other:?}; seamark speaks openai/<model> (and every \
             OpenAI-compatible server) and anthropic/<model>"
        ))),
    }
}
