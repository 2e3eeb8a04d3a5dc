//! Scoring a run: its check against the final page or the answer, or, without
//! one, its own ending.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::task::Check;
use crate::agent::{RunResult, RunStatus};
use crate::browser::{evaluate, Session};

/// How a run was scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The check's kind (`url_contains`, …), or `ending` for a task without one.
    pub check: String,
    /// Whether the run passed.
    pub passed: bool,
    /// What was found: the URL, the answer, the value of the expression, or
    /// why it could not be looked at.
    pub detail: String,
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
    let value = match tokio::time::timeout(LOOK_TIMEOUT, evaluate(session.page(), &js)).await {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return PageLook::Unreadable(e),
        Err(_) => {
            return PageLook::Unreadable(format!("no answer within {} s", LOOK_TIMEOUT.as_secs()))
        }
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

/// Scores a run: by its check (the final page's look, or the answer), or
/// without one by its ending. A check judges the final state, whatever the
/// ending: the record keeps both.
pub fn verdict(check: Option<&Check>, result: &RunResult, page: Option<PageLook>) -> Verdict {
    let Some(check) = check else {
        return Verdict {
            check: "ending".into(),
            passed: result.status == RunStatus::Done,
            detail: format!("the run ended {}", result.status.word()),
        };
    };
    let (passed, detail) = match check {
        Check::AnswerContains(want) => match &result.answer {
            Some(a) if contains_loosely(a, want) => (true, format!("the answer is {}", clip(a))),
            Some(a) => (false, format!("the answer is {}", clip(a))),
            None => (false, "there is no answer".to_string()),
        },
        Check::AnswerRegex(pattern) => match (&result.answer, regex::Regex::new(pattern)) {
            (_, Err(e)) => (false, format!("not a regular expression: {e}")),
            (Some(a), Ok(re)) => (re.is_match(a), format!("the answer is {}", clip(a))),
            (None, Ok(_)) => (false, "there is no answer".to_string()),
        },
        _ => match page {
            Some(PageLook::Seen { passed, detail }) => (passed, detail),
            Some(PageLook::Unreadable(why)) => {
                (false, format!("the final page could not be read: {why}"))
            }
            None => (
                false,
                format!("there was no page to check ({})", result.reason),
            ),
        },
    };
    Verdict {
        check: check.kind().into(),
        passed,
        detail,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn result(status: RunStatus, answer: Option<&str>) -> RunResult {
        RunResult {
            success: status == RunStatus::Done,
            status,
            answer: answer.map(str::to_string),
            reason: "because".into(),
            steps: 1,
            tokens: Default::default(),
            cost_usd: None,
            run_dir: PathBuf::new(),
            wall_time_s: 0.0,
            model: "m".into(),
            divergences: Vec::new(),
            data: None,
            prompt_tokens: Vec::new(),
            report: None,
            skill: None,
        }
    }

    #[test]
    fn answers_are_matched_loosely_or_by_regex() {
        let r = result(RunStatus::Done, Some("The Pro plan costs  $7 per month"));
        let contains = Check::AnswerContains("pro PLAN costs $7".into());
        assert!(verdict(Some(&contains), &r, None).passed);
        let miss = Check::AnswerContains("$9".into());
        assert!(!verdict(Some(&miss), &r, None).passed);
        let re = Check::AnswerRegex(r"\$\d+ per month$".into());
        assert!(verdict(Some(&re), &r, None).passed);
        let none = result(RunStatus::Stopped, None);
        let v = verdict(Some(&contains), &none, None);
        assert!(!v.passed);
        assert_eq!(v.detail, "there is no answer");
    }

    #[test]
    fn a_check_judges_the_final_state_whatever_the_ending() {
        let stopped = result(RunStatus::Stopped, Some("42"));
        assert!(verdict(Some(&Check::AnswerContains("42".into())), &stopped, None).passed);
        let v = verdict(None, &stopped, None);
        assert_eq!((v.check.as_str(), v.passed), ("ending", false));
        assert!(verdict(None, &result(RunStatus::Done, None), None).passed);
    }

    #[test]
    fn a_page_check_without_a_page_fails_and_says_why() {
        let r = result(RunStatus::Failed, None);
        let url = Check::UrlContains("/done".into());
        let v = verdict(Some(&url), &r, None);
        assert!(!v.passed);
        assert!(
            v.detail.contains("no page to check (because)"),
            "{}",
            v.detail
        );
        let v = verdict(Some(&url), &r, Some(PageLook::Unreadable("gone".into())));
        assert_eq!(v.detail, "the final page could not be read: gone");
    }
}
