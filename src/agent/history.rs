//! The run's steps as the model is told them, at a size that does not grow
//! with the run: the last few steps in full (every command's outcome), the
//! older ones folded to a line each, and the oldest plain ones merged into
//! ranges that name their first and last step. What the loop's rules need
//! is never merged away: a command refused, held or not accepted, an answer
//! the person gave, a secret typed by its placeholder.

use crate::records::{BatchReport, Status};

/// Folded steps shown one line each, besides the pinned ones; older plain
/// steps are merged into ranges.
const FOLDED_LINES: usize = 6;

/// A folded step's account of one command, cut to this many characters.
const FOLD_CHARS: usize = 90;

/// Every step of the run so far, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    entries: Vec<Entry>,
}

/// One step as the history keeps it.
#[derive(Debug, Clone)]
struct Entry {
    step: usize,
    /// The step in full: its page and each command's outcome line.
    full: String,
    /// The step in one line: what each command did, in short.
    folded: String,
    /// Stays on a line of its own however old (see the module's doc).
    pinned: bool,
}

impl History {
    /// Adds a step whose commands ran.
    pub(crate) fn push(&mut self, step: usize, url: &str, report: &BatchReport) {
        let mut folds = Vec::new();
        let mut pinned = false;
        for o in &report.outcomes {
            let line = o.line();
            let kept = matches!(
                o.status,
                Status::Held | Status::Refused | Status::NotAccepted
            ) || o.command.contains("{{secret:");
            pinned |= kept;
            folds.push(if kept {
                line
            } else {
                fold(&o.command, &o.message, o.status)
            });
        }
        if !report.dropped.is_empty() {
            folds.push(format!("{} not run", report.dropped.len()));
        }
        if folds.is_empty() {
            folds.push("(no command)".into());
        }
        self.entries.push(Entry {
            step,
            full: in_full(step, url, report),
            folded: format!("step {step}: {}", folds.join("; ")),
            pinned,
        });
    }

    /// Adds a step whose answer could not be read.
    pub(crate) fn push_unreadable(&mut self, step: usize, url: &str) {
        self.entries.push(Entry {
            step,
            full: format!("step {step} · {url} · (unreadable answer)"),
            folded: format!("step {step}: (unreadable answer)"),
            pinned: false,
        });
    }

    /// Adds the person's answer to the last step (the one that asked):
    /// `recorded` is the answer, or a secret's placeholder.
    pub(crate) fn answered(&mut self, question: &str, recorded: &str) {
        if let Some(last) = self.entries.last_mut() {
            let told = format!("the person answered \"{question}\": {recorded}");
            last.full.push_str(&format!("\n  {told}"));
            last.folded.push_str(&format!("; {told}"));
            last.pinned = true;
        }
    }

    /// The lines the model is shown: the last `full` steps in full, the
    /// [`FOLDED_LINES`] steps before them and every pinned step a line each,
    /// and the plain steps older still as ranges ("steps 1–9: … … …").
    pub(crate) fn shown(&self, full: usize) -> Vec<String> {
        let split = self.entries.len().saturating_sub(full);
        let (older, recent) = self.entries.split_at(split);
        let lined_from = older.len().saturating_sub(FOLDED_LINES);
        let mut lines = Vec::new();
        let mut range: Vec<&Entry> = Vec::new();
        for (i, e) in older.iter().enumerate() {
            if i < lined_from && !e.pinned {
                range.push(e);
                continue;
            }
            lines.extend(merged(&range));
            range.clear();
            lines.push(e.folded.clone());
        }
        lines.extend(merged(&range));
        lines.extend(recent.iter().map(|e| e.full.clone()));
        lines
    }
}

/// One step in full: the step, the page, and what each command did.
pub(super) fn in_full(step: usize, url: &str, report: &BatchReport) -> String {
    let mut line = format!("step {step} · {url}");
    for o in &report.outcomes {
        line.push_str(&format!("\n  {}", o.line()));
    }
    if !report.dropped.is_empty() {
        line.push_str(&format!("\n  not run: {}", report.dropped.join("; ")));
    }
    line
}

/// One command in short: what it did, and how it ended when not done.
fn fold(command: &str, message: &str, status: Status) -> String {
    let what = if message.is_empty() { command } else { message };
    let mut what = cut(what, FOLD_CHARS);
    match status {
        Status::Done => {}
        Status::NoEffect => what.push_str(" (no visible effect)"),
        _ => what = format!("{command} FAILED: {what}"),
    }
    what
}

/// `text` cut to `n` characters, with an ellipsis when it was longer.
fn cut(text: &str, n: usize) -> String {
    let text = text.lines().next().unwrap_or_default();
    if text.chars().count() <= n {
        return text.to_string();
    }
    let mut s: String = text.chars().take(n).collect();
    s.push('…');
    s
}

/// Consecutive plain steps as one line: the first and the last in short.
fn merged(range: &[&Entry]) -> Option<String> {
    let (first, last) = (range.first()?, range.last()?);
    if range.len() == 1 {
        return Some(first.folded.clone());
    }
    let body = |e: &Entry| {
        let prefix = format!("step {}: ", e.step);
        e.folded
            .strip_prefix(&prefix)
            .unwrap_or(&e.folded)
            .to_string()
    };
    Some(format!(
        "steps {}–{} ({} steps): {} … {}",
        first.step,
        last.step,
        range.len(),
        body(first),
        body(last)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Outcome;

    fn report(command: &str, message: &str, status: Status) -> BatchReport {
        BatchReport {
            outcomes: vec![Outcome {
                command: command.into(),
                status,
                message: message.into(),
                changes: Vec::new(),
                page_changed: false,
                ms: 0.0,
            }],
            ..BatchReport::default()
        }
    }

    fn clicks(n: usize) -> History {
        let mut h = History::default();
        for step in 1..=n {
            h.push(
                step,
                "http://127.0.0.1/marks.html",
                &report(
                    "CLICK:3",
                    &format!("clicked element 3 (button \"Mark {step}\")"),
                    Status::Done,
                ),
            );
        }
        h
    }

    #[test]
    fn a_short_run_is_shown_in_full() {
        let shown = clicks(4).shown(5);
        assert_eq!(shown.len(), 4);
        assert!(shown[0].starts_with("step 1 · http://127.0.0.1/marks.html\n  CLICK:3 → done"));
    }

    #[test]
    fn old_steps_fold_to_a_line_and_the_oldest_to_a_range_that_counts_them_right() {
        let shown = clicks(29).shown(5);
        // 29 steps: 18 in a range, 6 a line each, 5 in full.
        assert_eq!(shown.len(), 1 + 6 + 5, "{shown:#?}");
        assert_eq!(
            shown[0],
            "steps 1–18 (18 steps): clicked element 3 (button \"Mark 1\") … clicked element 3 \
             (button \"Mark 18\")"
        );
        assert_eq!(shown[1], "step 19: clicked element 3 (button \"Mark 19\")");
        assert!(shown[7].starts_with("step 25 · "), "{}", shown[7]);
    }

    #[test]
    fn the_shown_history_stops_growing() {
        let size = |n| clicks(n).shown(5).join("\n").len();
        assert_eq!(size(40) - size(30), 0);
    }

    #[test]
    fn refusals_answers_and_secrets_stay_on_their_own_line_however_old() {
        let mut h = clicks(3);
        h.push(
            4,
            "http://127.0.0.1/pay",
            &report(
                "CLICK:7",
                "the domain policy refuses evil.example",
                Status::Refused,
            ),
        );
        h.push(
            5,
            "http://127.0.0.1/login",
            &report(
                "TYPE:2:{{secret:password}}",
                "typed 9 characters into element 2",
                Status::Done,
            ),
        );
        h.push(
            6,
            "http://127.0.0.1/ask",
            &report("ASK:Which size?", "asked", Status::Done),
        );
        h.answered("Which size?", "large");
        for step in 7..=40 {
            h.push(
                step,
                "http://127.0.0.1/",
                &report("SCROLL:down", "scrolled", Status::Done),
            );
        }
        let shown = h.shown(5).join("\n");
        assert!(
            shown.contains("CLICK:7 → REFUSED: the domain policy refuses evil.example"),
            "{shown}"
        );
        assert!(
            shown.contains("TYPE:2:{{secret:password}} → done"),
            "{shown}"
        );
        assert!(
            shown.contains("the person answered \"Which size?\": large"),
            "{shown}"
        );
        assert!(shown.contains("steps 1–3 (3 steps)"), "{shown}");
        assert!(shown.contains("steps 7–29 (23 steps)"), "{shown}");
    }

    #[test]
    fn a_failed_command_is_named_in_its_fold() {
        let mut h = History::default();
        h.push(
            1,
            "u",
            &report("CLICK:9", "no element 9 on the page", Status::Failed),
        );
        h.push(2, "u", &report("CLICK:1", "clicked", Status::NoEffect));
        let shown = h.shown(0);
        assert_eq!(shown[0], "step 1: CLICK:9 FAILED: no element 9 on the page");
        assert_eq!(shown[1], "step 2: clicked (no visible effect)");
    }
}
