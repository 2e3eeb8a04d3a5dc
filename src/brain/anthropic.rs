//! Anthropic Messages: the image as a base64 source block.

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{json, Value};

use super::http::{Endpoint, HttpPolicy};
use super::{Brain, BrainError, Prompt, Reply, Usage};

/// The default endpoint.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The API version seamark speaks.
const VERSION: &str = "2023-06-01";
/// Longest answer asked for: commands are short.
const MAX_TOKENS: u32 = 1024;

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
            endpoint: Endpoint::new(
                model,
                key,
                base_url,
                ANTHROPIC_BASE_URL,
                "/v1/messages",
                policy,
            )?,
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

fn read(answer: Value) -> Result<Reply, BrainError> {
    let blocks = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| BrainError::Malformed {
            reason: "no content array".into(),
            body: answer.to_string(),
        })?;
    let text: String = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    let n = |p: &str| answer.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    Ok(Reply {
        text,
        usage: Usage {
            input: n("/usage/input_tokens"),
            output: n("/usage/output_tokens"),
        },
        divergence: None,
    })
}

impl Brain for Anthropic {
    fn name(&self) -> String {
        format!("anthropic/{}", self.endpoint.model)
    }

    fn answer<'a>(&'a mut self, prompt: &'a Prompt) -> BoxFuture<'a, Result<Reply, BrainError>> {
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            headers.insert("anthropic-version", HeaderValue::from_static(VERSION));
            if let Some(key) = &self.endpoint.key {
                let mut v = HeaderValue::from_str(key).map_err(|_| {
                    BrainError::NotConfigured(
                        "ANTHROPIC_API_KEY holds characters a header cannot".into(),
                    )
                })?;
                v.set_sensitive(true);
                headers.insert("x-api-key", v);
            }
            let answer = self.endpoint.post(headers, &self.body(prompt)).await?;
            read(answer)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
