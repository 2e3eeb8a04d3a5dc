//! A session as submitted: `{"task", "url"}` and run options named as
//! `seamark run`'s flags in snake case (`max_steps`, `allow_domain`…), turned
//! into the arguments of the `seamark run` a worker starts. The options a
//! session may not set are refused by name: where its run goes and how it
//! prints (the worker's), and files on the server's disk beyond the secrets
//! it names.

use serde_json::{Map, Value};

use super::CoworkerError;

/// How a run option takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// A flag: `true` or `false`.
    Flag,
    /// One value.
    Value,
    /// A list of values (the flag repeated).
    Values,
}

/// A run option a session may set: its name in snake case and its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSpec {
    /// `max_steps` for `--max-steps`.
    pub name: String,
    /// How it takes its value.
    pub kind: OptionKind,
}

/// The options a session may not set, and why.
const REFUSED: &[(&str, &str)] = &[
    ("out", "the worker gives each session its run directory"),
    (
        "overwrite",
        "the worker gives each session its run directory",
    ),
    ("json", "the worker reads the run's result itself"),
    ("cdp", "a worker launches its own browser"),
    ("headful", "a worker's browser has no screen"),
    ("storage_state", "it names a file on the worker's disk"),
    ("save_storage_state", "it names a file on the worker's disk"),
    ("schema", "it names a file on the worker's disk"),
    ("files", "it names a folder on the worker's disk"),
    ("download_dir", "it names a folder on the worker's disk"),
    ("prices", "it names a file on the worker's disk"),
    ("skills", "it names a folder on the worker's disk"),
];

/// A submitted session, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRequest {
    /// The task, in plain words.
    pub task: String,
    /// The start URL (http or https).
    pub url: String,
    /// The run options as given.
    pub options: Map<String, Value>,
}

fn bad(why: impl Into<String>) -> CoworkerError {
    CoworkerError::BadRequest(why.into())
}

impl SessionRequest {
    /// Reads a submission: a JSON object with `task`, `url` and run options
    /// from `spec`. Unknown fields, wrong types, an empty task, a URL that is
    /// not http(s) and secrets given by value are refused, each with its
    /// reason.
    pub fn from_value(value: Value, spec: &[OptionSpec]) -> Result<SessionRequest, CoworkerError> {
        let Value::Object(mut fields) = value else {
            return Err(bad(
                "the body must be a JSON object with \"task\" and \"url\"",
            ));
        };
        let mut text = |name: &str| match fields.remove(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
            Some(Value::String(_)) => Err(bad(format!("\"{name}\" is empty"))),
            Some(other) => Err(bad(format!("\"{name}\" must be a string, not {other}"))),
            None => Err(bad(format!("\"{name}\" is missing"))),
        };
        let task = text("task")?;
        let url = text("url")?;
        let parsed =
            url::Url::parse(&url).map_err(|e| bad(format!("\"url\" {url:?} is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad(format!(
                "\"url\" {url:?}: a session starts at an http or https URL"
            )));
        }
        let request = SessionRequest {
            task,
            url,
            options: fields,
        };
        request.args(spec)?;
        Ok(request)
    }

    /// The options as `seamark run` arguments (the task and URL not among
    /// them).
    pub fn args(&self, spec: &[OptionSpec]) -> Result<Vec<String>, CoworkerError> {
        let mut args = Vec::new();
        for (name, value) in &self.options {
            if let Some((_, why)) = REFUSED.iter().find(|(n, _)| n == name) {
                return Err(bad(format!(
                    "\"{name}\" cannot be set for a session: {why}"
                )));
            }
            let Some(option) = spec.iter().find(|o| &o.name == name) else {
                return Err(bad(format!(
                    "unknown field \"{name}\": a session takes \"task\", \"url\" and seamark \
                     run's options in snake case"
                )));
            };
            let flag = format!("--{}", name.replace('_', "-"));
            match (option.kind, value) {
                (_, Value::Null) | (OptionKind::Flag, Value::Bool(false)) => {}
                (OptionKind::Flag, Value::Bool(true)) => args.push(flag),
                (OptionKind::Value, v) => {
                    args.push(flag);
                    args.push(scalar(name, v)?);
                }
                (OptionKind::Values, Value::Array(items)) => {
                    for v in items {
                        args.push(flag.clone());
                        args.push(scalar(name, v)?);
                    }
                }
                (OptionKind::Values, v) => {
                    args.push(flag);
                    args.push(scalar(name, v)?);
                }
                (OptionKind::Flag, v) => {
                    return Err(bad(format!("\"{name}\" is true or false, not {v}")))
                }
            }
        }
        if let Some(secrets) = self.options.get("secret") {
            for secret in secrets
                .as_array()
                .into_iter()
                .flatten()
                .chain(Some(secrets).filter(|s| s.is_string()))
            {
                named_secret(secret.as_str().unwrap_or_default())?;
            }
        }
        Ok(args)
    }

    /// The secrets the session names (`NAME=env:VAR`, `NAME=@FILE`), given
    /// again to a run that goes on.
    pub fn secrets(&self) -> Vec<String> {
        match self.options.get("secret") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        }
    }
}

/// One value of an option, as its flag takes it.
fn scalar(name: &str, value: &Value) -> Result<String, CoworkerError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(bad(format!(
            "\"{name}\" takes a string or a number, not {other}"
        ))),
    }
}

/// A secret a session names: by an environment variable or a file of the
/// worker, never by its value (the store would keep it).
fn named_secret(spec: &str) -> Result<(), CoworkerError> {
    let source = spec.split_once('=').map(|(_, s)| s).unwrap_or_default();
    if source.starts_with("env:") || source.starts_with('@') {
        return Ok(());
    }
    Err(bad(format!(
        "secret {:?}: a session names its secrets as NAME=env:VAR or NAME=@FILE (resolved by \
         the worker); a value would be stored",
        spec.split_once('=').map(|(n, _)| n).unwrap_or(spec)
    )))
}
