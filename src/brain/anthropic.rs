//! Anthropic Messages: the image as a base64 source block.

use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::http::{Dialect, Endpoint, HttpPolicy};
use super::{Brain, BrainError, Prompt, Reply};

/// The default endpoint.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The API version seamark speaks.
const VERSION: &str = "2023-06-01";
/// Longest answer asked for: commands are short.
const MAX_TOKENS: u32 = 1024;

/// Messages' HTTP: the key in `x-api-key`, the API version in a header,
/// usage as input and output tokens.
static MESSAGES: Dialect = Dialect {
    default_base: ANTHROPIC_BASE_URL,
    path: "/v1/messages",
    key_header: "x-api-key",
    key_prefix: "",
    key_var: "ANTHROPIC_API_KEY",
    headers: &[("anthropic-version", VERSION)],
    input_tokens: "/usage/input_tokens",
    output_tokens: "/usage/output_tokens",
};

/// A Messages model.
pub struct Anthropic {
    endpoint: Endpoint,
}

impl Anthropic {
    /// `model` at `base_url` (default [`ANTHROPIC_BASE_URL`]).
    pub fn new(
        model: &str,
        key: Option<String>,
        base_url: Option<String>,
        policy: HttpPolicy,
    ) -> Result<Self, BrainError> {
        Ok(Self {
            endpoint: Endpoint::new(&MESSAGES, model, key, base_url, policy)?,
        })
    }

    /// The request body for a prompt.
    pub fn body(&self, prompt: &Prompt) -> Value {
        let mut content: Vec<Value> = prompt
            .images
            .iter()
            .map(|image| {
                json!({
                    "type": "image",
                    "source": { "type": "base64", "media_type": image.media_type, "data": image.base64 }
                })
            })
            .collect();
        content.push(json!({ "type": "text", "text": prompt.text }));
        json!({
            "model": self.endpoint.model,
            "max_tokens": MAX_TOKENS,
            "system": prompt.system,
            "messages": [{ "role": "user", "content": content }]
        })
    }
}

/// The answer text of a Messages response: its text blocks, joined.
fn text_of(answer: &Value) -> Result<String, BrainError> {
    let blocks = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| BrainError::Malformed {
            reason: "no content array".into(),
            body: answer.to_string(),
        })?;
    Ok(blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n"))
}

impl Brain for Anthropic {
    fn name(&self) -> String {
        format!("anthropic/{}", self.endpoint.model)
    }

    fn answer<'a>(&'a mut self, prompt: &'a Prompt) -> BoxFuture<'a, Result<Reply, BrainError>> {
        Box::pin(async move { self.endpoint.ask(&self.body(prompt), text_of).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::http::reply;

    fn read(answer: Value) -> Result<Reply, BrainError> {
        reply(&MESSAGES, &answer, text_of)
    }

    #[test]
    fn text_blocks_and_usage_are_read() {
        let r = read(json!({
            "type": "message",
            "content": [{ "type": "text", "text": "SCROLL:down" }],
            "usage": { "input_tokens": 900, "output_tokens": 4 }
        }))
        .unwrap();
        assert_eq!(
            (r.text.as_str(), r.usage.input, r.usage.output),
            ("SCROLL:down", 900, 4)
        );
        assert!(read(json!({ "type": "error" })).is_err());
    }
}
