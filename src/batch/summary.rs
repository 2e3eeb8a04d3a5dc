//! The summary of a batch: per task, passes k/K and pass^K (all K passed),
//! median steps, tokens, cost and wall time; totals; failures grouped by
//! reason. Written as `summary.json` and `summary.md` (the table printed at
//! the end).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::results::RunRecord;
use crate::agent::RunStatus;
use crate::brain::Usage;
pub use crate::figures::{median, thousands};

/// The summary's file names in a batch directory.
pub const SUMMARY_JSON: &str = "summary.json";
/// The table, as Markdown.
pub const SUMMARY_MD: &str = "summary.md";

/// What a batch did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Runs that finished (each task × each of its repetitions).
    pub runs: usize,
    /// Runs that passed.
    pub passed: usize,
    /// Runs that did not.
    pub failed: usize,
    /// `passed / runs` (0 when nothing ran).
    pub pass_rate: f64,
    /// K: the most runs of one task (`--repeat`).
    pub repeat: usize,
    /// Tasks with a finished run.
    pub tasks: usize,
    /// Tasks whose K runs all finished and all passed (pass^K).
    pub tasks_passing_all: usize,
    /// Steps of every run.
    pub steps: usize,
    /// Model calls of every run (steps less those a skill did).
    #[serde(default)]
    pub model_calls: usize,
    /// Tokens of every run.
    pub tokens: Usage,
    /// USD of the runs whose model has a price; `None` when none has.
    pub cost_usd: Option<f64>,
    /// Seconds of the runs, added up (with concurrency, more than the batch took).
    pub run_time_s: f64,
    /// Seconds the batch took, when one process ran it all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_time_s: Option<f64>,
    /// The models that ran.
    pub models: Vec<String>,
    /// Runs cut short by Ctrl-C: not counted above; `--resume` runs them again.
    pub interrupted: usize,
    /// Runs of the plan that never started (Ctrl-C came first).
    pub not_started: usize,
    /// Per task, in the suite's order.
    pub per_task: Vec<TaskSummary>,
    /// Failed runs grouped by why, the largest group first.
    pub failures: Vec<FailureGroup>,
}

/// One task's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSummary {
    /// The task's id.
    pub id: String,
    /// The task, in plain words.
    pub task: String,
    /// Its finished runs.
    pub runs: usize,
    /// Those that passed (k of k/K).
    pub passed: usize,
    /// All K runs finished and passed.
    pub all_passed: bool,
    /// Median steps of its runs.
    pub median_steps: f64,
    /// The model calls of each of its runs, by attempt.
    #[serde(default)]
    pub model_calls: Vec<usize>,
    /// Their mean.
    #[serde(default)]
    pub mean_model_calls: f64,
    /// Tokens of its runs.
    pub tokens: Usage,
    /// USD of its runs, when the price is known.
    pub cost_usd: Option<f64>,
    /// Median seconds of its runs.
    pub median_wall_s: f64,
    /// What scored its runs: its check's kind, `judge` (the judge model's
    /// verdict, for a task without a check) or `ending` (ended done).
    #[serde(default)]
    pub scored_by: String,
    /// Each run's report.html, relative to the batch directory, by attempt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<(usize, std::path::PathBuf)>,
}

/// Failed runs that failed for one reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureGroup {
    /// The reason, with its particulars (numbers, ids) left out.
    pub reason: String,
    /// The runs, as `id#attempt`.
    pub runs: Vec<String>,
}

impl Summary {
    /// Sums up finished runs. `interrupted` and `not_started` count the runs
    /// of the plan that did not finish; `wall_time_s` is the batch's own time
    /// when known.
    pub fn of(
        records: &[RunRecord],
        interrupted: usize,
        not_started: usize,
        wall_time_s: Option<f64>,
    ) -> Summary {
        let repeat = records.iter().map(|r| r.attempt).max().unwrap_or(0);
        let mut by_task: BTreeMap<(usize, &str), Vec<&RunRecord>> = BTreeMap::new();
        for r in records {
            by_task.entry((r.position, &r.id)).or_default().push(r);
        }
        let per_task: Vec<TaskSummary> = by_task
            .values()
            .map(|runs| task_summary(runs, repeat))
            .collect();
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in records.iter().filter(|r| !r.passed) {
            groups.entry(failure_reason(r)).or_default().push(r.name());
        }
        let mut failures: Vec<FailureGroup> = groups
            .into_iter()
            .map(|(reason, runs)| FailureGroup { reason, runs })
            .collect();
        failures.sort_by_key(|g| std::cmp::Reverse(g.runs.len()));
        let mut models: Vec<String> = records.iter().map(|r| r.model.clone()).collect();
        models.sort();
        models.dedup();
        let passed = records.iter().filter(|r| r.passed).count();
        Summary {
            runs: records.len(),
            passed,
            failed: records.len() - passed,
            pass_rate: ratio(passed, records.len()),
            repeat,
            tasks: per_task.len(),
            tasks_passing_all: per_task.iter().filter(|t| t.all_passed).count(),
            steps: records.iter().map(|r| r.steps).sum(),
            model_calls: records.iter().map(RunRecord::calls).sum(),
            tokens: total_tokens(records.iter()),
            cost_usd: total_cost(records.iter()),
            run_time_s: records.iter().map(|r| r.wall_time_s).sum(),
            wall_time_s,
            models,
            interrupted,
            not_started,
            per_task,
            failures,
        }
    }

    /// The summary as a Markdown table (what `seamark batch` prints at the end).
    pub fn markdown(&self, title: &str) -> String {
        let k = self.repeat.max(1);
        let mut out = format!("# {title}\n\n");
        let _ = writeln!(
            out,
            "{} run{} of {} task{} (×{k}) by {} · **passed {} of {} ({:.1}%)** · pass^{k}: {} of {} tasks · {} steps · {} model calls ({:.1} a run) · tokens {} in, {} out · cost {} · {}",
            self.runs,
            plural(self.runs),
            self.tasks,
            plural(self.tasks),
            if self.models.is_empty() { "no model".to_string() } else { self.models.join(", ") },
            self.passed,
            self.runs,
            self.pass_rate * 100.0,
            self.tasks_passing_all,
            self.tasks,
            self.steps,
            self.model_calls,
            self.model_calls as f64 / self.runs.max(1) as f64,
            thousands(self.tokens.input),
            thousands(self.tokens.output),
            cost(self.cost_usd),
            match self.wall_time_s {
                Some(w) => format!("wall time {w:.1} s"),
                None => format!("run time {:.1} s in all", self.run_time_s),
            },
        );
        if self.interrupted + self.not_started > 0 {
            let _ = writeln!(
                out,
                "\nInterrupted: {} run{} cut short and {} never started are not counted; `seamark batch … --resume DIR` runs them.",
                self.interrupted,
                plural(self.interrupted),
                self.not_started
            );
        }
        let _ = writeln!(
            out,
            "\n| task | scored by | passed | pass^{k} | median steps | model calls (mean; each run) | tokens in / out | cost | median time | reports |\n|---|---|---:|:---:|---:|---:|---:|---:|---:|---|"
        );
        for t in &self.per_task {
            let _ = writeln!(
                out,
                "| {} | {} | {}/{k} | {} | {} | {} | {} / {} | {} | {:.1} s | {} |",
                cell(&t.id),
                cell(&t.scored_by),
                t.passed,
                if t.all_passed { "yes" } else { "no" },
                t.median_steps,
                calls_cell(t),
                thousands(t.tokens.input),
                thousands(t.tokens.output),
                cost(t.cost_usd),
                t.median_wall_s,
                t.reports
                    .iter()
                    .map(|(k, path)| format!("[{k}]({})", path.display()))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        let _ = writeln!(
            out,
            "| **all** | | **{}/{}** | **{}/{}** | {} | {:.1} | {} / {} | {} | | |",
            self.passed,
            self.runs,
            self.tasks_passing_all,
            self.tasks,
            median(self.per_task.iter().map(|t| t.median_steps).collect()),
            self.model_calls as f64 / self.runs.max(1) as f64,
            thousands(self.tokens.input),
            thousands(self.tokens.output),
            cost(self.cost_usd),
        );
        self.failures_table(&mut out);
        out
    }

    /// The failures grouped by reason, as a table (nothing when none failed).
    fn failures_table(&self, out: &mut String) {
        if self.failures.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\n## Failures by reason\n\n| reason | runs | which |\n|---|---:|---|"
        );
        for g in &self.failures {
            let shown: Vec<&str> = g.runs.iter().take(10).map(String::as_str).collect();
            let more = g.runs.len().saturating_sub(shown.len());
            let _ = writeln!(
                out,
                "| {} | {} | {}{} |",
                cell(&g.reason),
                g.runs.len(),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
    }
}

/// A task's model calls: the mean, then each run's (`1.4; 1 2 1 2 1`), or
/// the one run's.
fn calls_cell(t: &TaskSummary) -> String {
    match t.model_calls.as_slice() {
        [one] => one.to_string(),
        each => format!(
            "{:.1}; {}",
            t.mean_model_calls,
            each.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

fn task_summary(runs: &[&RunRecord], repeat: usize) -> TaskSummary {
    let passed = runs.iter().filter(|r| r.passed).count();
    TaskSummary {
        id: runs[0].id.clone(),
        task: runs[0].task.clone(),
        runs: runs.len(),
        passed,
        all_passed: runs.len() >= repeat && passed == runs.len(),
        median_steps: median(runs.iter().map(|r| r.steps as f64).collect()),
        model_calls: {
            let mut by_attempt: Vec<(usize, usize)> =
                runs.iter().map(|r| (r.attempt, r.calls())).collect();
            by_attempt.sort();
            by_attempt.into_iter().map(|(_, c)| c).collect()
        },
        mean_model_calls: runs.iter().map(|r| r.calls()).sum::<usize>() as f64
            / runs.len().max(1) as f64,
        tokens: total_tokens(runs.iter().copied()),
        cost_usd: total_cost(runs.iter().copied()),
        median_wall_s: median(runs.iter().map(|r| r.wall_time_s).collect()),
        scored_by: {
            let mut by: Vec<&str> = runs.iter().map(|r| r.verdict.check.as_str()).collect();
            by.dedup();
            by.join(", ")
        },
        reports: runs
            .iter()
            .filter_map(|r| Some((r.attempt, r.report.clone()?)))
            .collect(),
    }
}

fn total_tokens<'a>(runs: impl Iterator<Item = &'a RunRecord>) -> Usage {
    let mut t = Usage::default();
    for r in runs {
        t += r.tokens;
    }
    t
}

fn total_cost<'a>(runs: impl Iterator<Item = &'a RunRecord>) -> Option<f64> {
    runs.filter_map(|r| r.cost_usd)
        .fold(None, |sum, c| Some(sum.unwrap_or(0.0) + c))
}

/// Why a run failed, as a group's name: a run that did not end done failed
/// for its own reason; one that ended done, by its check. The reason's
/// particulars after the first `:` and its numbers are left out, so that
/// like failures fall together.
pub fn failure_reason(r: &RunRecord) -> String {
    if r.status != RunStatus::Done {
        let head = numbers_as_n(r.reason.split(": ").next().unwrap_or_default());
        let word = r.status.word();
        if head.starts_with(word) {
            head
        } else {
            format!("{word}: {head}")
        }
    } else {
        format!("the {} check failed", r.verdict.check)
    }
}

/// Each number (a run of digits) as `N`.
fn numbers_as_n(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_number = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The plural ending of a count: "" for one, "s" otherwise.
pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn cost(c: Option<f64>) -> String {
    c.map_or_else(|| "unknown".to_string(), |c| format!("${c:.4}"))
}

/// Text fit for a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::score::Score;

    fn rec(id: &str, attempt: usize, passed: bool, status: RunStatus, reason: &str) -> RunRecord {
        RunRecord {
            judge: None,
            id: id.into(),
            attempt,
            position: id.as_bytes()[0] as usize,
            task: format!("task {id}"),
            passed,
            verdict: Score {
                check: "url_contains".into(),
                passed,
                detail: String::new(),
            },
            status,
            reason: reason.into(),
            answer: None,
            data: None,
            steps: attempt * 2,
            tokens: Usage {
                input: 1000,
                output: 20,
            },
            cost_usd: None,
            wall_time_s: attempt as f64,
            model: "openai/m".into(),
            run_dir: format!("runs/{id}/{attempt}").into(),
            report: None,
            browser: None,
            downloads: Vec::new(),
            finished: String::new(),
            model_calls: Some(attempt),
        }
    }

    #[test]
    fn passes_are_counted_per_task_with_pass_all_k() {
        let records = vec![
            rec("a", 1, true, RunStatus::Done, "done"),
            rec(
                "b",
                1,
                false,
                RunStatus::Budget,
                "the step budget of 10 ran out",
            ),
            rec("a", 2, true, RunStatus::Done, "done"),
            rec("b", 2, true, RunStatus::Done, "done"),
            rec("c", 1, true, RunStatus::Done, "done"),
        ];
        let s = Summary::of(&records, 1, 2, Some(9.5));
        assert_eq!((s.runs, s.passed, s.failed, s.repeat), (5, 4, 1, 2));
        assert_eq!(s.tasks, 3);
        // c ran once of twice: not all K.
        assert_eq!(s.tasks_passing_all, 1);
        let a = &s.per_task[0];
        assert_eq!((a.id.as_str(), a.passed, a.all_passed), ("a", 2, true));
        assert_eq!(a.median_steps, 3.0);
        assert_eq!(a.tokens.input, 2000);
        assert_eq!(s.per_task[1].passed, 1);
        assert_eq!(s.failures.len(), 1);
        assert_eq!(
            s.failures[0].reason,
            "out of budget: the step budget of N ran out"
        );
        assert_eq!(s.failures[0].runs, vec!["b#1".to_string()]);
        let md = s.markdown("batch");
        assert!(
            md.contains(
                "| a | url_contains | 2/2 | yes | 3 | 1.5; 1 2 | 2,000 / 40 | unknown | 1.5 s |"
            ),
            "{md}"
        );
        assert!(md.contains("| b | url_contains | 1/2 | no |"), "{md}");
        assert!(md.contains("**passed 4 of 5 (80.0%)**"), "{md}");
        // A model call a step, less a skill's: each run's, and the mean.
        assert_eq!(a.model_calls, vec![1, 2]);
        assert_eq!(s.model_calls, 7);
        assert!(md.contains("7 model calls (1.4 a run)"), "{md}");
        assert!(md.contains("1 run cut short and 2 never started"), "{md}");
    }

    #[test]
    fn like_failures_fall_together() {
        let a = rec(
            "a",
            1,
            false,
            RunStatus::Failed,
            "stuck: the same commands (CLICK:3) on the same page 3 times",
        );
        let b = rec(
            "b",
            1,
            false,
            RunStatus::Failed,
            "stuck: the same commands (CLICK:12) on the same page 3 times",
        );
        let c = rec("c", 1, false, RunStatus::Done, "done");
        assert_eq!(failure_reason(&a), "failed: stuck");
        assert_eq!(failure_reason(&a), failure_reason(&b));
        assert_eq!(failure_reason(&c), "the url_contains check failed");
    }
}
