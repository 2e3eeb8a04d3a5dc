//! Scoring a run: its check against the final page or the answer, or, without
//! one, its own ending.

use serde::{Deserialize, Serialize};

use crate::agent::{RunResult, RunStatus};
use crate::check::{self, Check};
pub use crate::check::{look, PageLook};

/// How a run was scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// The check's kind (`url_contains`, …), or `ending` for a task without one.
    pub check: String,
    /// Whether the run passed.
    pub passed: bool,
    /// What was found: the URL, the answer, the value of the expression, or
    /// why it could not be looked at.
    pub detail: String,
}

/// Scores a run: by its check (the final page's look, or the answer), or
/// without one by its ending. A check judges the final state, whatever the
/// ending: the record keeps both.
pub fn verdict(check: Option<&Check>, result: &RunResult, page: Option<PageLook>) -> Score {
    let Some(check) = check else {
        // Without a check, the judge's verdict scores the run when it was asked.
        if let Some(judge) = &result.judge {
            let said = judge.verdict.map_or("nothing", crate::judge::Verdict::word);
            return Score {
                check: "judge".into(),
                passed: result.status == RunStatus::Done
                    && judge.verdict == Some(crate::judge::Verdict::Pass),
                detail: format!("the judge ({}) said {said}: {}", judge.model, judge.reason),
            };
        }
        return Score {
            check: "ending".into(),
            passed: result.status == RunStatus::Done,
            detail: format!("the run ended {}", result.status.word()),
        };
    };
    let no_page = format!("there was no page to check ({})", result.reason);
    let (passed, detail) = check::judge(check, result.answer.as_deref(), page, &no_page);
    Score {
        check: check.kind().into(),
        passed,
        detail,
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
            steps: 1,
            model: "m".into(),
            ..RunResult::failed_to_start("because".into(), PathBuf::new(), 0.0)
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
