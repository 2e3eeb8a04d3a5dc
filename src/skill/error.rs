//! Why a skill cannot be read, kept, or followed on this page.

use std::path::PathBuf;

use crate::commands::ParseError;

/// Why a skill cannot be read, kept, or followed on this page.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// A name no skill file may have.
    #[error("{0:?} cannot name a skill")]
    BadName(String),
    /// No skill of that name.
    #[error("no skill {name:?} in {}", .dir.display())]
    NotFound {
        /// The name asked for.
        name: String,
        /// The skills folder.
        dir: PathBuf,
    },
    /// A file of the folder that cannot be read or written.
    #[error("{}: {cause}", .path.display())]
    File {
        /// The file (or the folder).
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// A file far larger than a skill, not read.
    #[error("it is {size} bytes, more than a skill file may be ({max}): not read")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The most a skill file may be.
        max: u64,
    },
    /// A file that is not a skill's JSON: the parser's words.
    #[error("{0}")]
    Json(String),
    /// A skill file whose content does not hold together: what is wrong,
    /// as a person reads it ("step 2: COMPLETE before the last step").
    #[error("{0}")]
    Invalid(String),
    /// A command of the skill that does not parse.
    #[error("{command:?}: {cause}")]
    Command {
        /// The command as the skill holds it.
        command: String,
        /// Why it does not parse.
        cause: ParseError,
    },
    /// A template with a `{{` left open.
    #[error("an unclosed {{{{ in the template {0:?}")]
    Unclosed(String),
    /// A parameter named with other characters.
    #[error("{{{{{0}}}}} is not a parameter's name")]
    ParamName(String),
    /// A template that makes no regular expression.
    #[error("the template does not compile: {0}")]
    Template(regex::Error),
    /// A target that is not on the page.
    #[error("{0} is not on the page")]
    Gone(String),
    /// Fewer of a target's kind than its rank.
    #[error("{what} has no rank {rank}")]
    NoRank {
        /// The target.
        what: String,
        /// Its rank when learned.
        rank: usize,
    },
    /// A target of which the page has another number than when learned.
    #[error(
        "{what} is ambiguous: the page has {found} of them where the skill knew {known}, and \
         their neighbours do not tell which"
    )]
    Ambiguous {
        /// The target.
        what: String,
        /// How many the page has.
        found: usize,
        /// How many there were.
        known: usize,
    },
    /// The element a point fell on is of another size now.
    #[error(
        "the element the point fell on changed size ({:.0}×{:.0} CSS px when learned, \
         {:.0}×{:.0} now): the same point may show something else",
        .then.0, .then.1, .now.0, .now.1
    )]
    Resized {
        /// Its width and height when learned.
        then: (f64, f64),
        /// Its width and height now.
        now: (f64, f64),
    },
    /// A run that leaves no skill.
    #[error("{0}")]
    NothingToLearn(&'static str),
    /// A start page that is no URL.
    #[error("{0:?} is no URL")]
    NoUrl(String),
}
