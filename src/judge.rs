//! The judge: a second model that looks at a run the agent says is done
//! (`--judge MODEL`). It gets the task, the answer, the COMPLETE summary,
//! the plan, the steps' commands with what each did, and the last
//! screenshots, and answers a verdict as JSON, validated against a schema.
//! An answer that cannot be read is asked for once more. The agent's loop
//! decides what a verdict does (see agent/step.rs): `fail` refuses COMPLETE
//! with the judge's reason, `pass` ends the run done and verified.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::brain::{Brain, BrainError, Image, Prompt, Usage};
use crate::schema::AnswerSchema;

/// The judge's instructions (`prompts/judge.md`).
pub const JUDGE_PROMPT: &str = include_str!("../prompts/judge.md");

/// Screenshots the judge gets by default: the last two.
pub const DEFAULT_IMAGES: usize = 2;

/// What the judge decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The evidence shows the task done.
    Pass,
    /// Something is missing, wrong or undone.
    Fail,
    /// The evidence cannot tell.
    Unsure,
}

impl Verdict {
    /// The verdict as the judge writes it: `pass`, `fail` or `unsure`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Unsure => "unsure",
        }
    }
}

/// The judge's answer, as the run keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Pass, fail or unsure.
    pub verdict: Verdict,
    /// Why, in the judge's words.
    pub reason: String,
}

/// Why the judge gave no verdict.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// Its answer could not be read, twice; the last answer is kept.
    #[error("the judge's answer could not be read ({why}); it answered: {answer}")]
    Unreadable {
        /// What was wrong with it.
        why: String,
        /// The last answer, raw.
        answer: String,
    },
    /// The judge model could not be asked.
    #[error("the judge could not be asked: {0}")]
    Brain(BrainError),
}

// Written out, not `#[from]`: the message says the cause, so it is not the source too.
impl From<BrainError> for JudgeError {
    fn from(e: BrainError) -> Self {
        JudgeError::Brain(e)
    }
}

/// What the judge is shown of a run.
#[derive(Debug, Clone)]
pub struct Case<'a> {
    /// The task as the person gave it.
    pub task: &'a str,
    /// The answer (ANSWER), or the data given for a schema.
    pub answer: Option<String>,
    /// The COMPLETE summary.
    pub summary: &'a str,
    /// The agent's plan.
    pub plan: Option<&'a str>,
    /// One line per step: its commands and what each did.
    pub steps: Vec<String>,
    /// The last screenshots, the page as it is now last.
    pub images: Vec<Image>,
}

impl Case<'_> {
    fn text(&self) -> String {
        format!(
            "# Task\n\n{}\n\n# The agent's answer\n\n{}\n\n# The agent's summary (its COMPLETE)\n\n{}\n\n\
             # The agent's plan\n\n{}\n\n# The steps: commands, and what each did\n\n{}\n\n\
             # Screenshots\n\n{} attached, the page as it is now last.",
            self.task,
            self.answer.as_deref().unwrap_or("(none)"),
            self.summary,
            self.plan.unwrap_or("(none)"),
            if self.steps.is_empty() {
                "(none)".to_string()
            } else {
                self.steps.join("\n")
            },
            self.images.len()
        )
    }
}

/// A model that judges runs.
pub struct Judge {
    brain: Box<dyn Brain>,
    images: usize,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("model", &self.brain.name())
            .field("images", &self.images)
            .finish()
    }
}

/// The verdict's schema: what a judge's answer must be.
static VERDICT_SCHEMA: LazyLock<Result<AnswerSchema, String>> = LazyLock::new(|| {
    AnswerSchema::new(json!({
        "type": "object",
        "properties": {
            "verdict": { "enum": ["pass", "fail", "unsure"] },
            "reason": { "type": "string", "minLength": 1 }
        },
        "required": ["verdict", "reason"]
    }))
    .map_err(|e| e.to_string())
});

/// Reads a verdict out of an answer (code fences and words around it
/// tolerated), validated against its schema.
fn read(answer: &str) -> Result<Judgement, String> {
    let schema = VERDICT_SCHEMA.as_ref().map_err(Clone::clone)?;
    let value = schema.check(answer).map_err(|e| match e {
        crate::schema::AnswerError::NotJson => "the answer is not JSON".to_string(),
        crate::schema::AnswerError::Breaks(how) => {
            format!("the verdict is not one: {}", how.join("; "))
        }
    })?;
    let mut judgement: Judgement =
        serde_json::from_value(value).map_err(|e| format!("the verdict is not one: {e}"))?;
    // A reason of megabytes is kept, told and reported as far as any text
    // from a model is.
    judgement.reason = crate::commands::kept_text(&judgement.reason, "judge's reason");
    Ok(judgement)
}

impl Judge {
    /// A judge asking `brain`, shown the last `images` screenshots.
    pub fn new(brain: Box<dyn Brain>, images: usize) -> Judge {
        Judge { brain, images }
    }

    /// The judge model's name, e.g. `openai/gpt-4o`.
    pub fn name(&self) -> String {
        self.brain.name()
    }

    /// How many of the last screenshots the judge is shown.
    pub fn images(&self) -> usize {
        self.images
    }

    /// Asks for a verdict on `case`: the verdict and the tokens it cost
    /// (both asks), or why there is none (with the tokens spent).
    pub async fn judge(&mut self, case: &Case<'_>) -> (Result<Judgement, JudgeError>, Usage) {
        let mut usage = Usage::default();
        let mut prompt = Prompt {
            system: JUDGE_PROMPT.to_string(),
            text: case.text(),
            images: case.images.clone(),
            step: 1,
            signature: String::new(),
        };
        let mut last = None;
        for _ in 0..2 {
            let reply = match self.brain.answer(&prompt).await {
                Ok(r) => r,
                Err(e) => return (Err(e.into()), usage),
            };
            usage += reply.usage;
            match read(&reply.text) {
                Ok(judgement) => return (Ok(judgement), usage),
                Err(why) => {
                    prompt.text = format!(
                        "{}\n\n# Your last answer could not be read\n\n{why}. Answer with the one \
                         JSON object only.",
                        case.text()
                    );
                    last = Some((
                        why,
                        crate::commands::kept_text(&reply.text, "judge's answer"),
                    ));
                }
            }
        }
        let (why, answer) = last.unwrap_or_default();
        (Err(JudgeError::Unreadable { why, answer }), usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdicts_word_is_its_json() {
        for v in [Verdict::Pass, Verdict::Fail, Verdict::Unsure] {
            assert_eq!(serde_json::to_value(v).ok(), Some(json!(v.word())));
        }
    }

    #[test]
    fn a_verdict_is_read_from_its_json_and_anything_else_is_not() {
        assert_eq!(
            read("```json\n{\"verdict\": \"fail\", \"reason\": \"two boxes of three\"}\n```"),
            Ok(Judgement {
                verdict: Verdict::Fail,
                reason: "two boxes of three".into()
            })
        );
        assert_eq!(
            read("It looks done to me."),
            Err("the answer is not JSON".into())
        );
        assert!(read("{\"verdict\": \"maybe\", \"reason\": \"x\"}").is_err());
        assert!(read("{\"verdict\": \"pass\"}").is_err());
    }
}
