//! Where a batch stands as it goes, and who hears of it.

use crate::brain::Usage;

use super::RunRecord;

/// Where a batch stands, as progress shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Runs planned in this process (finished earlier ones not counted);
    /// for a stream of tasks, those started so far.
    pub planned: usize,
    /// Runs finished so far.
    pub done: usize,
    /// Of those, passed.
    pub passed: usize,
    /// Of those, failed.
    pub failed: usize,
    /// Runs under way.
    pub running: usize,
    /// Tokens spent so far.
    pub tokens: Usage,
    /// USD spent so far, when the model's price is known.
    pub cost_usd: Option<f64>,
}

impl Tally {
    /// Counts a finished run.
    pub fn count(&mut self, record: &RunRecord) {
        self.done += 1;
        if record.passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        self.tokens += record.tokens;
        if let Some(c) = record.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }
}

/// Hears about a batch as it goes (the CLI draws its progress bar from it).
pub trait BatchProgress: Send + Sync {
    /// The plan: runs to do (unknown for a stream of tasks), and runs a
    /// resumed batch had finished already.
    fn planned(&self, _runs: Option<usize>, _finished_before: usize) {}
    /// A run started.
    fn started(&self, _id: &str, _attempt: usize, _tally: &Tally) {}
    /// A run finished (and is in `results.jsonl`).
    fn finished(&self, _record: &RunRecord, _tally: &Tally) {}
    /// Something worth telling that is no run's result (a results line that
    /// could not be read, a run that could not be recorded).
    fn note(&self, _message: &str) {}
}

pub(super) struct Silent;
impl BatchProgress for Silent {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_counts_passes_failures_tokens_and_the_known_cost() {
        let line = |passed: bool, cost: Option<f64>| {
            let mut record: RunRecord = serde_json::from_value(serde_json::json!({
                "id": "t", "attempt": 1, "position": 0, "task": "x", "passed": passed,
                "verdict": {"passed": passed, "check": "done", "detail": ""},
                "status": "done", "reason": "", "steps": 1,
                "tokens": {"input": 10, "output": 2},
                "wall_time_s": 1.0, "model": "m", "run_dir": "runs/t/1",
                "finished": "2026-12-07T00:00:00Z"
            }))
            .unwrap();
            record.cost_usd = cost;
            record
        };
        let mut tally = Tally::default();
        tally.count(&line(true, None));
        assert_eq!(tally.cost_usd, None);
        tally.count(&line(false, Some(0.25)));
        tally.count(&line(true, Some(0.5)));
        assert_eq!((tally.done, tally.passed, tally.failed), (3, 2, 1));
        assert_eq!(tally.tokens.input, 30);
        assert_eq!(tally.cost_usd, Some(0.75));
    }
}
