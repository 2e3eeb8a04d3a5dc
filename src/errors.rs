//! How an error is told to a person: its message, then each cause once.
//!
//! seamark's own errors say their cause in their message and do not give
//! it as their source, so the chain does not repeat itself. Errors of other
//! crates give theirs as a source (reqwest's "error sending request" has the
//! refused connection below it): this walks them. A cause told in the same
//! words as the one above it (a crate's transparent wrapper) is told once.

use std::error::Error;

/// A word that is none of those a setting takes (`--consent maybe`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?}: {setting} takes {expected}")]
pub struct UnknownWord {
    /// What was given.
    pub given: String,
    /// The setting, as a person names it (`--consent`).
    pub setting: &'static str,
    /// The words it takes, as a person reads them (`reject, accept or ask`).
    pub expected: &'static str,
}

impl UnknownWord {
    /// `given` is not a word `setting` takes.
    pub fn new(given: &str, setting: &'static str, expected: &'static str) -> UnknownWord {
        UnknownWord {
            given: given.to_string(),
            setting,
            expected,
        }
    }
}

/// `e` and its causes, joined by ": ".
pub fn chain(e: &(dyn Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut last = out.clone();
    let mut source = e.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if part != last {
            out.push_str(": ");
            out.push_str(&part);
        }
        last = part;
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot reach the browser")]
    struct Outer(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Same(#[source] std::io::Error);

    #[test]
    fn each_cause_is_told_once_in_order() {
        let e = Outer(std::io::Error::other("connection refused"));
        assert_eq!(chain(&e), "cannot reach the browser: connection refused");
    }

    #[test]
    fn a_transparent_wrapper_does_not_repeat_its_cause() {
        let e = Same(std::io::Error::other("connection refused"));
        assert_eq!(chain(&e), "connection refused");
    }
}
