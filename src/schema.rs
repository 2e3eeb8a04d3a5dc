//! Answers that follow a JSON Schema (`--schema`): the schema checked once
//! before a run, and each `ANSWER` read as one JSON value (code fences and
//! prose around it tolerated) and validated with the `jsonschema` crate
//! (draft 2020-12 unless the schema's `$schema` names another).

use std::path::Path;

use serde_json::Value;

/// Most validator messages told to the model for one answer.
const MAX_MESSAGES: usize = 8;

/// Why a schema cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The file could not be read.
    #[error("cannot read the schema {path}: {cause}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        cause: std::io::Error,
    },
    /// The file is not JSON.
    #[error("the schema {path} is not JSON: {cause}")]
    Json {
        /// The file.
        path: String,
        /// Why.
        cause: serde_json::Error,
    },
    /// The JSON is not a valid JSON Schema.
    #[error("not a valid JSON Schema: {0}")]
    Invalid(String),
}

/// Why an answer does not do for a schema; told to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// No JSON value in it.
    #[error(
        "the answer is not JSON: give ANSWER: followed by one JSON value that follows the \
         schema in the system prompt"
    )]
    NotJson,
    /// JSON that breaks the schema: where and how, the first few.
    #[error("the answer does not follow the schema: {}", .0.join("; "))]
    Breaks(Vec<String>),
}

/// A JSON Schema the run's answer must follow.
pub struct AnswerSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for AnswerSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerSchema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl AnswerSchema {
    /// Checks `schema` against its meta-schema and builds its validator.
    pub fn new(schema: Value) -> Result<Self, SchemaError> {
        if !schema.is_object() && !schema.is_boolean() {
            return Err(SchemaError::Invalid(
                "a schema is a JSON object (or true or false)".into(),
            ));
        }
        if let Err(e) = jsonschema::meta::validate(&schema) {
            return Err(SchemaError::Invalid(describe(
                &e.instance_path().to_string(),
                &e.to_string(),
            )));
        }
        let validator = jsonschema::draft202012::options()
            .build(&schema)
            .map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Self { schema, validator })
    }

    /// Reads a schema from a JSON file.
    pub fn from_file(path: &Path) -> Result<Self, SchemaError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| SchemaError::Read {
            path: name.clone(),
            cause: source,
        })?;
        let schema =
            serde_json::from_str(&text).map_err(|cause| SchemaError::Json { path: name, cause })?;
        Self::new(schema)
    }

    /// The schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Reads an answer as one JSON value and validates it: the value, or
    /// what is wrong, written for the model (each failing path and why).
    pub fn check(&self, answer: &str) -> Result<Value, AnswerError> {
        let value = json_in(answer).ok_or(AnswerError::NotJson)?;
        let messages: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(MAX_MESSAGES)
            .map(|e| describe(&e.instance_path().to_string(), &e.to_string()))
            .collect();
        if messages.is_empty() {
            Ok(value)
        } else {
            Err(AnswerError::Breaks(messages))
        }
    }
}

fn describe(path: &str, message: &str) -> String {
    let at = if path.is_empty() { "/" } else { path };
    format!("at {at}: {message}")
}

/// The JSON value in an answer: the whole of it, or the first object or
/// array in it (inside a code fence, or after some words).
pub fn json_in(answer: &str) -> Option<Value> {
    let t = answer.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .map(|r| r.trim_end().trim_end_matches("```"))
        .unwrap_or(t)
        .trim();
    if let Ok(v) = serde_json::from_str(t) {
        return Some(v);
    }
    t.char_indices()
        .filter(|(_, c)| *c == '{' || *c == '[')
        .take(16)
        .find_map(|(i, _)| {
            serde_json::Deserializer::from_str(&t[i..])
                .into_iter::<Value>()
                .next()?
                .ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plans() -> AnswerSchema {
        AnswerSchema::new(json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"plan": {"type": "string"}, "price_usd_month": {"type": "number"}},
                "required": ["plan", "price_usd_month"]
            }
        }))
        .unwrap()
    }

    #[test]
    fn json_is_found_in_fences_and_prose() {
        assert_eq!(json_in("```json\n[1, 2]\n```"), Some(json!([1, 2])));
        assert_eq!(
            json_in("Here it is: {\"a\": 1} as asked"),
            Some(json!({"a": 1}))
        );
        assert_eq!(json_in("\"just text\""), Some(json!("just text")));
        assert_eq!(json_in("the price is $7"), None);
    }

    #[test]
    fn answers_are_validated_with_paths_and_reasons() {
        let s = plans();
        assert_eq!(
            s.check(r#"[{"plan": "Free", "price_usd_month": 0}]"#),
            Ok(json!([{"plan": "Free", "price_usd_month": 0}]))
        );
        let err = s
            .check(r#"[{"plan": "Pro", "price_usd_month": "$7"}]"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("/0/price_usd_month"), "{err}");
        assert!(err.contains("not of type"), "{err}");
        assert!(s
            .check("seven dollars")
            .unwrap_err()
            .to_string()
            .contains("not JSON"));
    }

    #[test]
    fn a_schema_that_is_not_json_schema_is_refused() {
        assert!(AnswerSchema::new(json!({"type": 12})).is_err());
        assert!(AnswerSchema::new(json!({"properties": []})).is_err());
        assert!(AnswerSchema::new(json!([1])).is_err());
        assert!(AnswerSchema::new(json!(true)).is_ok());
    }
}
