//! Checks of what a run did: the page's URL, its text or a script's value,
//! or the answer. `seamark batch` scores its runs with them, and `seamark
//! run --expect-*` does not take COMPLETE until they hold. A check reads the
//! page from seamark's side (a script's value, never the page's words about
//! itself), bounded in time.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::browser::{evaluate, EvalError, Session};

/// A check: what must hold of the final page, or of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// The final page's URL contains this.
    UrlContains(String),
    /// The final page's rendered text contains this (case and spacing aside).
    TextContains(String),
    /// The answer contains this (case and spacing aside).
    AnswerContains(String),
    /// The answer matches this regular expression.
    AnswerRegex(String),
    /// This JavaScript expression, evaluated in the final page (a promise
    /// awaited), is truthy.
    Js(String),
}

impl Check {
    /// The kind's name, as written in the tasks file.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::UrlContains(_) => "url_contains",
            Check::TextContains(_) => "text_contains",
            Check::AnswerContains(_) => "answer_contains",
            Check::AnswerRegex(_) => "answer_regex",
            Check::Js(_) => "js",
        }
    }

    /// What it asks for, as written.
    pub fn wanted(&self) -> &str {
        match self {
            Check::UrlContains(s)
            | Check::TextContains(s)
            | Check::AnswerContains(s)
            | Check::AnswerRegex(s)
            | Check::Js(s) => s,
        }
    }

    /// Whether it looks at the final page (rather than at the answer).
    pub fn needs_page(&self) -> bool {
        matches!(
            self,
            Check::UrlContains(_) | Check::TextContains(_) | Check::Js(_)
        )
    }
}

/// What the final page showed, read after the last step.
#[derive(Debug, Clone, PartialEq)]
pub enum PageLook {
    /// What the check asked of it: the URL, the text, or the value of the
    /// expression (its truth and how it reads).
    Seen {
        /// The check passed on it.
        passed: bool,
        /// What was found, shortened.
        detail: String,
    },
    /// The page could not be read.
    Unreadable(String),
}

/// Most characters of what was found that a verdict keeps.
const DETAIL_CHARS: usize = 200;

/// How long a look at the final page may take.
const LOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Looks at the final page for a check that needs it (URL, text, script).
pub async fn look(session: &Session, check: &Check) -> PageLook {
    let js = match check {
        Check::UrlContains(_) => "location.href".to_string(),
        Check::TextContains(_) => "document.body ? document.body.innerText : ''".to_string(),
        // Truth and a readable form of the value, from the page's own
        // JavaScript: `!!v` is what "truthy" means there.
        Check::Js(expr) => format!(
            "(async () => {{ let v; try {{ v = await ({expr}\n); }} \
             catch (e) {{ return [false, 'threw ' + e]; }} \
             let shown; try {{ shown = typeof v === 'object' ? JSON.stringify(v) : String(v); }} \
             catch (e) {{ shown = String(v); }} return [!!v, 'gave ' + shown]; }})()"
        ),
        Check::AnswerContains(_) | Check::AnswerRegex(_) => {
            return PageLook::Unreadable("this check reads the answer, not the page".into())
        }
    };
    let value = match page_value(session, &js).await {
        Ok(v) => v,
        Err(why) => return PageLook::Unreadable(why.to_string()),
    };
    match check {
        Check::Js(_) => {
            let passed = value.get(0).and_then(|v| v.as_bool()).unwrap_or(false);
            let shown = value.get(1).and_then(|v| v.as_str()).unwrap_or_default();
            PageLook::Seen {
                passed,
                detail: format!("the expression {}", clip(shown)),
            }
        }
        _ => {
            let text = value.as_str().unwrap_or_default();
            let passed = match check {
                Check::UrlContains(want) => text.contains(want.as_str()),
                _ => contains_loosely(text, check.wanted()),
            };
            let detail = match check {
                Check::UrlContains(_) => format!("the final URL is {}", clip(text)),
                _ if passed => format!("the page shows {:?}", check.wanted()),
                _ => format!(
                    "the page does not show it; it begins {:?}",
                    clip(&squash(text))
                ),
            };
            PageLook::Seen { passed, detail }
        }
    }
}

/// What a verdict may tell the model or an MCP client. A script's value can
/// carry back what was typed into the page (a password field read, reversed,
/// encoded in ways no redaction knows), so when the run or session holds
/// secrets a `js` check says only whether it held; the person's own record
/// of it (the journal, redacted) keeps the value.
pub fn told(check: &Check, detail: &str, sealed: bool) -> String {
    match check {
        Check::Js(_) if sealed => {
            "its value is not shown, since secrets were given (only whether it held)".into()
        }
        _ => detail.to_string(),
    }
}

/// The value of a script in the page (a promise awaited), from seamark's
/// side, within `LOOK_TIMEOUT`; or why there is none.
pub async fn page_value(session: &Session, js: &str) -> Result<serde_json::Value, EvalError> {
    match tokio::time::timeout(LOOK_TIMEOUT, evaluate(session.page(), js)).await {
        Ok(result) => result,
        Err(_) => Err(EvalError::Timeout(LOOK_TIMEOUT)),
    }
}

/// Judges a check: against the answer, or against what a look at the page
/// found (`no_page` says why there was none).
pub fn judge(
    check: &Check,
    answer: Option<&str>,
    page: Option<PageLook>,
    no_page: &str,
) -> (bool, String) {
    match check {
        Check::AnswerContains(want) => match answer {
            Some(a) if contains_loosely(a, want) => (true, format!("the answer is {}", clip(a))),
            Some(a) => (false, format!("the answer is {}", clip(a))),
            None => (false, "there is no answer".to_string()),
        },
        Check::AnswerRegex(pattern) => match (answer, regex::Regex::new(pattern)) {
            (_, Err(e)) => (false, format!("not a regular expression: {e}")),
            (Some(a), Ok(re)) => (re.is_match(a), format!("the answer is {}", clip(a))),
            (None, Ok(_)) => (false, "there is no answer".to_string()),
        },
        _ => match page {
            Some(PageLook::Seen { passed, detail }) => (passed, detail),
            Some(PageLook::Unreadable(why)) => {
                (false, format!("the final page could not be read: {why}"))
            }
            None => (false, no_page.to_string()),
        },
    }
}

/// Whether `text` holds `want`, ignoring case and how the spaces run.
fn contains_loosely(text: &str, want: &str) -> bool {
    squash(text)
        .to_lowercase()
        .contains(&squash(want).to_lowercase())
}

/// Runs of white space as one space.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The start of a long text.
fn clip(text: &str) -> String {
    match text.char_indices().nth(DETAIL_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
