//! Evidence for counted work. A task that names a count seamark can count
//! itself ("tick all 13 boxes", "list the 5 cheapest flights") is done only
//! when seamark's own count agrees: the boxes checked on the page, or the
//! items of the answer. The model is told so from the first prompt
//! ([`told_up_front`](crate::evidence::told_up_front)); its COMPLETE need not name the count, but a count it
//! names must be the task's. Counts of anything else (nights, passengers)
//! are the model's word alone.

use std::sync::LazyLock;

use regex::Regex;

/// What a task counts, that seamark can count too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counted {
    /// At least this many boxes checked on the page.
    Ticked(usize),
    /// This many items in the answer.
    Listed(usize),
}

const NUMBER: &str = r"(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)";

static TICKED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(?:tick|check|select|mark)\b[^.]*?\b{NUMBER}\s+(?:\w+\s+)?(?:check\s*)?(?:boxes|checkboxes|options)\b"
    ))
    .ok()
});

static LISTED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(?:the|top|first|list|name|give|find)\s+{NUMBER}\s+(?:\w+\s+)?\w+s\b"
    ))
    .ok()
});

/// A number as the task writes it.
fn number(word: &str) -> Option<usize> {
    const WORDS: [&str; 20] = [
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    word.parse().ok().or_else(|| {
        let w = word.to_lowercase();
        WORDS.iter().position(|n| *n == w).map(|i| i + 1)
    })
}

/// What the task counts, when seamark can count it too.
pub fn counted(task: &str) -> Option<Counted> {
    let find = |re: &LazyLock<Option<Regex>>| -> Option<usize> {
        let caps = re.as_ref()?.captures(task)?;
        number(caps.get(1)?.as_str()).filter(|n| *n > 0)
    };
    find(&TICKED)
        .map(Counted::Ticked)
        .or_else(|| find(&LISTED).map(Counted::Listed))
}

/// The numbers a summary names, as digits or words.
fn numbers_named(summary: &str) -> Vec<usize> {
    summary
        .split(|c: char| !c.is_alphanumeric())
        .filter_map(number)
        .collect()
}

/// What the model is told with the task, from its first prompt: what
/// seamark will count when it says COMPLETE.
pub fn told_up_front(counted: Counted) -> String {
    match counted {
        Counted::Ticked(n) => format!(
            "When you say COMPLETE, seamark counts the boxes checked on the page itself: at least \
             {n} must be. Say what you saw done, with the count (COMPLETE: ticked {n} boxes)."
        ),
        Counted::Listed(n) => format!(
            "When you say COMPLETE, seamark counts the items of your ANSWER itself: it must hold \
             {n}, one per line or separated by \";\". Say what you saw done, with the count \
             (COMPLETE: listed {n} …)."
        ),
    }
}

/// The items of an answer: its lines, else its `;`-separated parts, else
/// its `,`-separated parts; list markers and empty parts left out.
pub fn answer_items(answer: &str) -> usize {
    let parts = |sep: &str| -> Vec<String> {
        answer
            .split(sep)
            .map(|p| {
                p.trim()
                    .trim_start_matches(|c: char| c.is_ascii_digit() || "-*•.) ".contains(c))
                    .trim()
                    .to_string()
            })
            .filter(|p| !p.is_empty())
            .collect()
    };
    let lines = parts("\n");
    // A line that introduces the list ("The 3 cheapest:") is no item.
    let lines: Vec<&String> = lines.iter().filter(|l| !l.ends_with(':')).collect();
    if lines.len() > 1 {
        return lines.len();
    }
    let text = answer.rsplit(':').next().unwrap_or(answer);
    for sep in [";", ","] {
        let n = text.split(sep).filter(|p| !p.trim().is_empty()).count();
        if n > 1 {
            return n;
        }
    }
    usize::from(!answer.trim().is_empty())
}

/// The boxes checked on the page (native and ARIA), counted by seamark.
pub const CHECKED_JS: &str = "document.querySelectorAll('input[type=checkbox]:checked, \
     [role=checkbox][aria-checked=true]').length";

/// Judges the evidence for counted work: the COMPLETE names the count, and
/// seamark's own count (boxes checked, the answer's items) agrees. Gives
/// what was wanted, whether it held, and what was found.
pub async fn judge(
    counted: Counted,
    summary: &str,
    answer: Option<&str>,
    session: &crate::browser::Session,
) -> (String, bool, String) {
    let (n, wanted) = match counted {
        Counted::Ticked(n) => (n, format!("at least {n} boxes checked")),
        Counted::Listed(n) => (n, format!("{n} items in the answer")),
    };
    // The model's wording is no reason to refuse; a count it gives that is
    // not the task's is.
    let named = numbers_named(summary);
    if !named.is_empty() && !named.contains(&n) {
        let said: Vec<String> = named.iter().map(ToString::to_string).collect();
        let detail = format!(
            "the task counts {n}, and COMPLETE says {}: do what is missing, or say what you saw done",
            said.join(", ")
        );
        return (wanted, false, detail);
    }
    let (passed, detail) = match counted {
        Counted::Ticked(_) => match crate::check::page_value(session, CHECKED_JS).await {
            Ok(v) => {
                let checked = v.as_u64().unwrap_or(0);
                (
                    checked >= n as u64,
                    format!("seamark counts {checked} boxes checked on the page"),
                )
            }
            Err(why) => (
                false,
                format!("the page's boxes could not be counted: {why}"),
            ),
        },
        Counted::Listed(_) => match answer {
            Some(a) => {
                let items = answer_items(a);
                (
                    items == n,
                    format!("seamark counts {items} items in the answer"),
                )
            }
            None => (false, "there is no answer".to_string()),
        },
    };
    (wanted, passed, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_that_seamark_can_check_are_found_and_others_are_not() {
        assert_eq!(counted("Tick all 13 boxes"), Some(Counted::Ticked(13)));
        assert_eq!(
            counted("select three options in the list"),
            Some(Counted::Ticked(3))
        );
        assert_eq!(
            counted("List the 5 cheapest flights to Rome"),
            Some(Counted::Listed(5))
        );
        assert_eq!(
            counted("find the top three hotels"),
            Some(Counted::Listed(3))
        );
        // Numbers that count nothing seamark sees.
        assert_eq!(
            counted("Search jobs for Data Scientist with a salary between 50 LPA and 100 LPA"),
            None
        );
        assert_eq!(counted("Book a table for 4 at 8 pm"), None);
    }

    #[test]
    fn the_numbers_a_summary_names_are_read_and_an_answer_is_counted_by_its_items() {
        assert_eq!(numbers_named("ticked all 13 boxes"), vec![13]);
        assert_eq!(numbers_named("I ticked thirteen boxes."), vec![13]);
        assert!(numbers_named("ticked the boxes").is_empty());
        assert_eq!(numbers_named("ticked 130 boxes"), vec![130]);
        assert_eq!(
            answer_items("The 3 cheapest:\n1. A $10\n2. B $12\n3. C $15"),
            3
        );
        assert_eq!(answer_items("A ($10); B ($12); C ($15)"), 3);
        assert_eq!(answer_items("Cheapest: A, B, C, D"), 4);
        assert_eq!(answer_items("A at $10"), 1);
        assert_eq!(answer_items("  "), 0);
    }
}
