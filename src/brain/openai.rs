//! OpenAI-compatible chat completions: OpenAI itself, and by base URL Ollama,
//! vLLM, llama.cpp's server, LM Studio and OpenRouter. The image goes as a
//! base64 data URL.

use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::http::{Dialect, Endpoint, HttpPolicy};
use super::{Brain, BrainError, Prompt, Reply};

/// The default endpoint.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// Chat completions' HTTP: a bearer token, usage as prompt and completion
/// tokens.
static CHAT_COMPLETIONS: Dialect = Dialect {
    default_base: OPENAI_BASE_URL,
    path: "/chat/completions",
    key_header: "authorization",
    key_prefix: "Bearer ",
    key_var: "OPENAI_API_KEY",
    headers: &[],
    input_tokens: "/usage/prompt_tokens",
    output_tokens: "/usage/completion_tokens",
};

/// A chat-completions model.
pub struct OpenAi {
    endpoint: Endpoint,
}

impl OpenAi {
    /// `model` at `base_url` (default [`OPENAI_BASE_URL`]); `key` is sent as a
    /// bearer token when given (local servers need none).
    pub fn new(
        model: &str,
        key: Option<String>,
        base_url: Option<String>,
        policy: HttpPolicy,
    ) -> Result<Self, BrainError> {
        Ok(Self {
            endpoint: Endpoint::new(&CHAT_COMPLETIONS, model, key, base_url, policy)?,
        })
    }

    /// The request body for a prompt.
    pub fn body(&self, prompt: &Prompt) -> Value {
        let mut content = vec![json!({ "type": "text", "text": prompt.text })];
        for image in &prompt.images {
            content.push(json!({
                "type": "image_url",
                "image_url": { "url": format!("data:{};base64,{}", image.media_type, image.base64) }
            }));
        }
        json!({
            "model": self.endpoint.model,
            "messages": [
                { "role": "system", "content": prompt.system },
                { "role": "user", "content": content }
            ]
        })
    }
}

/// The answer text of a chat-completions response.
fn text_of(answer: &Value) -> Result<String, BrainError> {
    answer
        .pointer("/choices/0/message/content")
        .and_then(|c| match c {
            Value::String(s) => Some(s.clone()),
            // Some servers answer with content parts.
            Value::Array(parts) => Some(
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(""),
            ),
            _ => None,
        })
        .ok_or_else(|| BrainError::Malformed {
            reason: "no choices[0].message.content".into(),
            body: answer.to_string(),
        })
}

impl Brain for OpenAi {
    fn name(&self) -> String {
        format!("openai/{}", self.endpoint.model)
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
        reply(&CHAT_COMPLETIONS, &answer, text_of)
    }

    #[test]
    fn answers_and_usage_are_read_and_odd_bodies_are_errors() {
        let r = read(json!({
            "choices": [{ "message": { "role": "assistant", "content": "CLICK:3" } }],
            "usage": { "prompt_tokens": 1200, "completion_tokens": 7 }
        }))
        .unwrap();
        assert_eq!(
            (r.text.as_str(), r.usage.input, r.usage.output),
            ("CLICK:3", 1200, 7)
        );
        let err = read(json!({ "choices": [] })).unwrap_err();
        assert!(err.to_string().contains("choices"), "{err}");
    }
}
