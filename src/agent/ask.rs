//! Asking the person: `ASK:question` for what only they know (which account,
//! a code sent by SMS), and handing the browser over for a CAPTCHA when they
//! can see it (`--headful` at a terminal). Without anyone to ask, the run
//! ends as `needs_input` with the question, and `seamark resume --answer`
//! goes on with the answer.

use std::sync::Arc;

use crate::safety::{Secret, Secrets};

/// Someone the run can put a question to.
pub trait Asker: Send + Sync {
    /// Asks `question` and gives the answer, or `None` when none came (the
    /// input ended). An answer that starts with `!` is a secret.
    fn ask(&self, question: &str) -> Option<String>;

    /// Hands the browser over (a CAPTCHA to solve in its window); true once
    /// the person says they are done, false when they will not.
    fn hand_over(&self, what: &str) -> bool;
}

/// A person's answer, as the run keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Told to the model, and recorded.
    Plain(String),
    /// Kept as a secret of this name: the model types `{{secret:NAME}}`.
    Secret(String),
}

impl Answer {
    /// Reads an answer: a leading `!` makes it a secret, added to `secrets`
    /// under the next free name `answer1`, `answer2`, ….
    pub(crate) fn take(
        text: &str,
        secrets: &mut Secrets,
    ) -> Result<Answer, crate::safety::SecretError> {
        let Some(value) = text.strip_prefix('!') else {
            return Ok(Answer::Plain(text.trim().to_string()));
        };
        let name = (1..)
            .map(|n| format!("answer{n}"))
            .find(|n| !secrets.names().contains(&n.as_str()))
            .unwrap_or_else(|| "answer".into());
        // The value as given: an answer that reads `@FILE` or `env:VAR` is
        // the person's text, never a file or a variable of this machine.
        let secret = Secret::plain(&name, value)
            .ok_or_else(|| crate::safety::SecretError::Short(name.clone()))?;
        *secrets = secrets.and(vec![secret])?;
        Ok(Answer::Secret(name))
    }

    /// What the model is told.
    pub(crate) fn feedback(&self, question: &str) -> String {
        match self {
            Answer::Plain(a) => format!("The person answered your question \"{question}\": {a}"),
            Answer::Secret(name) => format!(
                "The person answered your question \"{question}\" with a secret: type it as \
                 {{{{secret:{name}}}}} (you will not see it)"
            ),
        }
    }

    /// What the journal keeps: the answer, or the secret's placeholder.
    pub(crate) fn recorded(&self) -> String {
        match self {
            Answer::Plain(a) => a.clone(),
            Answer::Secret(name) => format!("{{{{secret:{name}}}}}"),
        }
    }
}

/// Asks on a blocking thread (a person at a terminal may take minutes).
pub(crate) async fn ask(asker: &Arc<dyn Asker>, question: &str) -> Option<String> {
    let (asker, question) = (asker.clone(), question.to_string());
    tokio::task::spawn_blocking(move || asker.ask(&question))
        .await
        .ok()
        .flatten()
}

/// Hands the browser over on a blocking thread.
pub(crate) async fn hand_over(asker: &Arc<dyn Asker>, what: &str) -> bool {
    let (asker, what) = (asker.clone(), what.to_string());
    tokio::task::spawn_blocking(move || asker.hand_over(&what))
        .await
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_bang_makes_the_answer_a_secret_with_a_fresh_name() {
        let mut secrets = Secrets::default();
        assert_eq!(
            Answer::take(" the work account ", &mut secrets).unwrap(),
            Answer::Plain("the work account".into())
        );
        let a = Answer::take("!482913", &mut secrets).unwrap();
        assert_eq!(a, Answer::Secret("answer1".into()));
        assert!(secrets.redact("code 482913").contains("{{secret:answer1}}"));
        assert_eq!(
            Answer::take("!771204", &mut secrets).unwrap(),
            Answer::Secret("answer2".into())
        );
        assert!(a.feedback("The SMS code?").contains("{{secret:answer1}}"));
        assert!(!a.feedback("The SMS code?").contains("482913"));
        assert!(Answer::take("!12", &mut secrets)
            .unwrap_err()
            .to_string()
            .contains("too short"));
    }

    #[test]
    fn a_secret_answer_naming_a_file_or_a_variable_is_that_text_not_what_it_names() {
        let path = std::env::var("PATH").unwrap_or_default();
        let mut secrets = Secrets::default();
        for text in ["!env:PATH", "!@/etc/hostname"] {
            Answer::take(text, &mut secrets).unwrap();
        }
        let said = format!("env:PATH and @/etc/hostname and {path}");
        let redacted = secrets.redact(&said);
        assert!(redacted.contains("{{secret:answer1}}"), "{redacted}");
        assert!(redacted.contains("{{secret:answer2}}"), "{redacted}");
        assert!(redacted.ends_with(&path), "{redacted}");
    }
}
