//! A session as submitted: `{"task", "url"}` and run options named as
//! `seamark run`'s flags in snake case (`max_steps`, `allow_domain`…), turned
//! into the arguments of the `seamark run` a worker starts.
//!
//! A session is a guest on the worker: it sets only the options on
//! [`ALLOWED`] (budgets, checks, the domain policy, how the page is seen),
//! so that a flag added to `seamark run` later is refused until someone
//! decides otherwise. The browser, its profile, files and folders of the
//! worker, and where the run goes are the worker's own configuration.
//! Secrets come only from what the worker's operator put there for
//! sessions: variables named `SEAMARK_SECRET_*`, or files of the folder
//! given to `serve --secrets` and `worker --secrets`.
//! Every value reaches the run as `--flag=value`, so that no value (a task
//! `-5 degrees`, an answer `--help`) is ever read as a flag.

use std::path::Path;

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

/// The run options a session may set; every other is the worker's.
pub const ALLOWED: &[&str] = &[
    // The model and its budgets.
    "model",
    "judge",
    "judge_images",
    "retries",
    "model_timeout",
    "max_steps",
    "max_failures",
    "max_cost",
    "max_time",
    "images",
    "no_skills",
    // What must hold when it is done.
    "expect_url",
    "expect_text",
    "expect_answer",
    "expect_regex",
    "expect_js",
    // The safety policy (a session may narrow it, and is asked before a
    // destructive action under `ask` or `park`).
    "confirm",
    "confirm_word",
    "allow_domain",
    "block_domain",
    "secret",
    "no_scrub",
    "dismiss_dialogs",
    "max_download_mb",
    // How the page is loaded, read and seen.
    "load_timeout",
    "read_chars",
    "device",
    "viewport",
    "scale",
    "timezone",
    "locale",
    "consent",
    "record_site",
    "fixed_clock",
];

/// Why some options are the worker's, said when a session names one.
const WORKERS: &[(&str, &str)] = &[
    ("out", "the worker gives each session its run directory"),
    (
        "overwrite",
        "the worker gives each session its run directory",
    ),
    ("json", "the worker reads the run's result itself"),
    ("chrome", "the browser is the worker's own program"),
    ("cdp", "a worker launches its own browser"),
    ("keep_tab", "a worker launches its own browser"),
    ("worker_browser", "a worker's browser is its own"),
    ("headful", "a worker's browser has no screen"),
    ("profile", "it names a folder on the worker's disk"),
    ("site", "it names a file on the worker's disk"),
    ("storage_state", "it names a file on the worker's disk"),
    ("save_storage_state", "it names a file on the worker's disk"),
    ("schema", "it names a file on the worker's disk"),
    ("files", "it names a folder on the worker's disk"),
    ("download_dir", "it names a folder on the worker's disk"),
    ("prices", "it names a file on the worker's disk"),
    ("skills", "it names a folder on the worker's disk"),
    (
        "review_skills",
        "what a session learns is always proposed for a person's review",
    ),
];

/// The prefix of the environment variables a session may name as secrets.
pub const SECRET_ENV_PREFIX: &str = "SEAMARK_SECRET_";

/// The longest task, in characters.
pub const MAX_TASK: usize = 20_000;
/// The longest start URL, in bytes.
pub const MAX_URL: usize = 8_192;
/// The longest value of one option, and of an answer, in characters.
pub const MAX_VALUE: usize = 10_000;

/// A submitted session, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRequest {
    /// The task, in plain words.
    pub task: String,
    /// The start URL (http or https).
    pub url: String,
    /// The account it runs as: at most one session of an account is
    /// active at a time, and each starts with the account's login.
    pub account: Option<String>,
    /// The run options as given.
    pub options: Map<String, Value>,
}

fn bad(why: impl Into<String>) -> CoworkerError {
    CoworkerError::BadRequest(why.into())
}

/// A text a session carries, refused when the run could not take it as
/// data: a NUL (no argument or database text holds one), or over `most`
/// characters.
fn plain_text(what: &str, text: &str, most: usize) -> Result<(), CoworkerError> {
    if text.contains('\0') {
        return Err(bad(format!("{what} holds a NUL character")));
    }
    let length = text.chars().count();
    if length > most {
        return Err(bad(format!(
            "{what} is {length} characters long: at most {most}"
        )));
    }
    Ok(())
}

impl SessionRequest {
    /// Reads a submission: a JSON object with `task`, `url` and run options
    /// from `spec`. Unknown fields, options a session may not set, wrong
    /// types, an empty or overlong task, a URL that is not http(s), a NUL
    /// anywhere, and secrets given by value or from anything but what the
    /// worker keeps for sessions are refused, each with its reason.
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
        plain_text("\"task\"", &task, MAX_TASK)?;
        if url.len() > MAX_URL {
            return Err(bad(format!(
                "\"url\" is {} bytes long: at most {MAX_URL}",
                url.len()
            )));
        }
        let parsed =
            url::Url::parse(&url).map_err(|e| bad(format!("\"url\" {url:?} is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad(format!(
                "\"url\" {url:?}: a session starts at an http or https URL"
            )));
        }
        let account = match fields.remove("account") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(account_name(&name)?),
            Some(other) => return Err(bad(format!("\"account\" must be a string, not {other}"))),
        };
        let request = SessionRequest {
            task,
            url,
            account,
            options: fields,
        };
        request.run_args(spec, None)?;
        Ok(request)
    }

    /// The session as `seamark run` arguments after `run`: its task, its
    /// start URL and its options, each `--flag=value` (see
    /// [`SessionRequest::args`] for `secrets`).
    pub fn run_args(
        &self,
        spec: &[OptionSpec],
        secrets: Option<&Path>,
    ) -> Result<Vec<String>, CoworkerError> {
        let mut args = vec![
            format!("--task={}", self.task),
            format!("--url={}", self.url),
        ];
        args.extend(self.args(spec, secrets)?);
        Ok(args)
    }

    /// The options as `seamark run` arguments, each `--flag=value` (the
    /// task and URL not among them). `secrets` is the worker's folder of
    /// secrets, which a `NAME=@FILE` secret is read from; without one such
    /// a secret is left as named (the server checks a submission with
    /// none; a worker with none refuses it).
    pub fn args(
        &self,
        spec: &[OptionSpec],
        secrets: Option<&Path>,
    ) -> Result<Vec<String>, CoworkerError> {
        let mut args = Vec::new();
        for (name, value) in &self.options {
            let option = allowed(name, spec)?;
            if name == "secret" {
                args.extend(self.secret_args(secrets)?);
                continue;
            }
            let flag = format!("--{}", name.replace('_', "-"));
            match (option.kind, value) {
                (_, Value::Null) | (OptionKind::Flag, Value::Bool(false)) => {}
                (OptionKind::Flag, Value::Bool(true)) => args.push(flag),
                (OptionKind::Flag, v) => {
                    return Err(bad(format!("\"{name}\" is true or false, not {v}")))
                }
                (OptionKind::Value, v) => args.push(format!("{flag}={}", scalar(name, v)?)),
                (OptionKind::Values, Value::Array(items)) => {
                    for v in items {
                        args.push(format!("{flag}={}", scalar(name, v)?));
                    }
                }
                (OptionKind::Values, v) => args.push(format!("{flag}={}", scalar(name, v)?)),
            }
        }
        Ok(args)
    }

    /// The session's secrets as `--secret=…` arguments, each checked: a
    /// name and either `env:SEAMARK_SECRET_…` or `@FILE`, a plain file
    /// name in the worker's secrets folder (read from `folder` when given).
    pub fn secret_args(&self, folder: Option<&Path>) -> Result<Vec<String>, CoworkerError> {
        let specs: Vec<&Value> = match self.options.get("secret") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(Value::Null) | None => Vec::new(),
            Some(one) => vec![one],
        };
        specs
            .into_iter()
            .map(|spec| {
                let spec = spec
                    .as_str()
                    .ok_or_else(|| bad(format!("\"secret\" takes strings, not {spec}")))?;
                session_secret(spec, folder).map(|s| format!("--secret={s}"))
            })
            .collect()
    }
}

/// The longest account name.
pub const MAX_ACCOUNT: usize = 64;

/// An account's name as given, when it is one: letters, digits and `.`,
/// `_`, `-`, `@`, starting with a letter or a digit (it is shown on the
/// page and in the CLI, and names the login a session starts with).
pub fn account_name(name: &str) -> Result<String, CoworkerError> {
    let ok = (1..=MAX_ACCOUNT).contains(&name.len())
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
    if ok {
        Ok(name.to_string())
    } else {
        Err(bad(format!(
            "account {:?}: a name of letters, digits, '.', '_', '-' and '@', starting with a \
             letter or a digit, at most {MAX_ACCOUNT} characters",
            name.chars().take(80).collect::<String>()
        )))
    }
}

/// The option `name` when a session may set it; else why not.
fn allowed<'a>(name: &str, spec: &'a [OptionSpec]) -> Result<&'a OptionSpec, CoworkerError> {
    let known = spec.iter().find(|o| o.name == name);
    match known {
        Some(option) if ALLOWED.contains(&name) => Ok(option),
        Some(_) => {
            let why = WORKERS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, why)| *why)
                .unwrap_or("it is the worker's to set, not on the list of what a session may set");
            Err(bad(format!(
                "\"{name}\" cannot be set for a session: {why}"
            )))
        }
        None => Err(bad(format!(
            "unknown field \"{name}\": a session takes \"task\", \"url\" and seamark run's \
             options in snake case"
        ))),
    }
}

/// One value of an option, as its flag takes it.
fn scalar(name: &str, value: &Value) -> Result<String, CoworkerError> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => {
            return Err(bad(format!(
                "\"{name}\" takes a string or a number, not {other}"
            )))
        }
    };
    plain_text(&format!("\"{name}\""), &text, MAX_VALUE)?;
    Ok(text)
}

/// A secret a session names, as the run takes it: by a variable
/// `SEAMARK_SECRET_…` or a file of the worker's secrets folder, never by
/// its value (the store would keep it) nor by any other variable or file
/// (they are the worker's).
fn session_secret(spec: &str, folder: Option<&Path>) -> Result<String, CoworkerError> {
    plain_text("a secret", spec, MAX_VALUE)?;
    let (head, source) = spec.split_once('=').unwrap_or((spec, ""));
    let refused = |why: &str| {
        bad(format!(
            "secret {head:?}: {why}; a session names its secrets as \
             NAME=env:{SECRET_ENV_PREFIX}… or NAME=@FILE, a file of the worker's secrets folder \
             (docs/serve.md)"
        ))
    };
    if let Some(var) = source.strip_prefix("env:") {
        let ok = var.len() > SECRET_ENV_PREFIX.len() && var.starts_with(SECRET_ENV_PREFIX);
        return if ok {
            Ok(spec.to_string())
        } else {
            Err(refused(&format!(
                "env:{var} is not a variable kept for sessions"
            )))
        };
    }
    let Some(file) = source.strip_prefix('@') else {
        return Err(refused("a value would be stored"));
    };
    let plain_name = !file.is_empty()
        && !file.starts_with('.')
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !plain_name {
        return Err(refused(&format!(
            "@{file} is not a plain file name (letters, digits, _, - and .)"
        )));
    }
    Ok(match folder {
        Some(folder) => format!("{head}=@{}", folder.join(file).display()),
        None => spec.to_string(),
    })
}

/// A person's answer, refused when the run could not take it: empty, a
/// NUL, overlong, a secret (`!…`) too short to keep out of text, or, for
/// a held action (`hold`), neither a yes nor a no.
pub fn check_answer(answer: &str, hold: bool) -> Result<(), CoworkerError> {
    if answer.trim().is_empty() {
        return Err(bad("the answer is empty"));
    }
    plain_text("the answer", answer, MAX_VALUE)?;
    if let Some(secret) = answer.strip_prefix('!') {
        if crate::safety::Secret::plain("answer", secret).is_none() {
            return Err(bad(
                crate::safety::SecretError::Short("answer".into()).to_string()
            ));
        }
    }
    if hold && crate::agent::resume::yes_or_no(answer).is_none() {
        return Err(bad(format!(
            "the session waits for a yes or a no to a held action: {answer:?} is neither"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Vec<OptionSpec> {
        let of = |name: &str, kind| OptionSpec {
            name: name.into(),
            kind,
        };
        vec![
            of("max_steps", OptionKind::Value),
            of("allow_domain", OptionKind::Values),
            of("no_skills", OptionKind::Flag),
            of("secret", OptionKind::Values),
            of("chrome", OptionKind::Value),
            of("some_new_flag", OptionKind::Flag),
        ]
    }

    fn request(options: Value) -> Result<SessionRequest, CoworkerError> {
        let mut body = options.as_object().cloned().unwrap_or_default();
        body.insert("task".into(), "-5 degrees: is it cold?".into());
        body.insert("url".into(), "http://a.test/".into());
        SessionRequest::from_value(Value::Object(body), &spec())
    }

    #[test]
    fn every_value_reaches_the_run_joined_to_its_flag() {
        let r = request(serde_json::json!({
            "max_steps": 5, "allow_domain": ["a.test", "-b.test"], "no_skills": true
        }))
        .unwrap();
        assert_eq!(
            r.args(&spec(), None).unwrap(),
            [
                "--allow-domain=a.test",
                "--allow-domain=-b.test",
                "--max-steps=5",
                "--no-skills"
            ]
        );
    }

    #[test]
    fn an_option_not_on_the_allow_list_is_refused_even_when_run_takes_it() {
        for (name, says) in [
            ("chrome", "the worker's own program"),
            ("some_new_flag", "not on the list"),
        ] {
            let e = request(serde_json::json!({ name: true })).unwrap_err();
            assert!(e.to_string().contains(says), "{name}: {e}");
        }
    }

    #[test]
    fn a_session_names_only_the_secrets_kept_for_sessions() {
        for spec in [
            "k=env:OPENAI_API_KEY",
            "k=env:SEAMARK_SECRET_",
            "pw=@/etc/shadow",
            "pw=@../x",
            "pw=@.hidden",
            "pw=hunter22",
        ] {
            let e = request(serde_json::json!({ "secret": spec })).unwrap_err();
            assert!(e.to_string().contains("docs/serve.md"), "{spec}: {e}");
            assert!(!e.to_string().contains("hunter22"), "{e}");
        }
        let r = request(serde_json::json!({
            "secret": ["pw=env:SEAMARK_SECRET_PW", "card@shop.test=@card.txt"]
        }))
        .unwrap();
        assert_eq!(
            r.args(&spec(), Some(Path::new("/srv/secrets"))).unwrap(),
            [
                "--secret=pw=env:SEAMARK_SECRET_PW",
                "--secret=card@shop.test=@/srv/secrets/card.txt"
            ]
        );
    }

    #[test]
    fn what_the_run_could_not_take_is_refused_at_submission() {
        let mut body = serde_json::Map::new();
        body.insert("task".into(), "a\0b".into());
        body.insert("url".into(), "http://a.test/".into());
        let e = SessionRequest::from_value(Value::Object(body.clone()), &spec()).unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
        body.insert("task".into(), "x".into());
        body.insert(
            "url".into(),
            format!("http://a.test/{}", "a".repeat(MAX_URL)).into(),
        );
        let e = SessionRequest::from_value(Value::Object(body), &spec()).unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
        let e = request(serde_json::json!({ "allow_domain": ["a\0"] })).unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
        for (answer, hold, says) in [
            ("!123", false, "shorter than"),
            ("a\0", false, "NUL"),
            ("-5", true, "neither"),
            (" ", false, "empty"),
        ] {
            let e = check_answer(answer, hold).unwrap_err();
            assert!(e.to_string().contains(says), "{answer:?}: {e}");
        }
        for (answer, hold) in [
            ("-5", false),
            ("--help", false),
            ("yes", true),
            ("!1234", false),
        ] {
            check_answer(answer, hold).unwrap();
        }
    }
}
