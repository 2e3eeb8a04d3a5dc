//! A batch whose runs are sessions of a `seamark serve` (`seamark batch
//! --serve URL`): each task is submitted as a session, so the suite runs on
//! every worker of the queue, and each session that ends is scored and
//! written to `results.jsonl` as a run of the batch is; `summary.md` comes
//! out as it does for a batch run here. A task's check goes with its session
//! as the run's own `--expect-*`: a page is checked live when the run says
//! COMPLETE (the page is gone by the time the session has ended).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::results::{self, RunRecord};
use super::score::{self, Score};
use super::summary::Summary;
use super::task::TaskSpec;
use super::{BatchError, BatchOutcome, BatchProgress, Shard, Tally};
use crate::agent::{Interrupt, RunResult, RunStatus};
use crate::check::Check;
use crate::coworker::{Client, Session, SessionState};

/// How a served batch runs.
#[derive(Debug, Clone)]
pub struct ServedOptions {
    /// The batch directory (results, summary).
    pub dir: PathBuf,
    /// Each task this many times.
    pub repeat: usize,
    /// Only this shard of the tasks.
    pub shard: Option<Shard>,
    /// Run options every session gets, as `seamark run`'s flags in snake
    /// case (`model`, `max_steps`…); a task's own `max_steps`, `max_time`,
    /// secrets and check are added to its session.
    pub options: Map<String, Value>,
    /// How often the sessions are looked at.
    pub poll: Duration,
}

/// A submitted run of the batch.
struct Pending {
    spec: Arc<TaskSpec>,
    position: usize,
    attempt: usize,
    told_waiting: bool,
}

/// Why a task cannot go to a server as it is, if it cannot.
pub fn unservable(task: &TaskSpec) -> Option<String> {
    if task.setup.is_some() {
        return Some("its setup script runs in the batch's own browser".into());
    }
    if task.schema.is_some() {
        return Some("its schema would be a file on the worker's disk".into());
    }
    if !(task.url.starts_with("http://") || task.url.starts_with("https://")) {
        return Some(format!("its url {:?} is not http or https", task.url));
    }
    None
}

/// A task's session: the batch's options, the task's own, and its check
/// as the run's `--expect-*`.
fn session_of(spec: &TaskSpec, options: &Map<String, Value>) -> Value {
    let mut body = options.clone();
    body.insert("task".into(), spec.task.clone().into());
    body.insert("url".into(), spec.url.clone().into());
    if let Some(n) = spec.max_steps {
        body.insert("max_steps".into(), n.into());
    }
    if let Some(t) = spec.max_time {
        body.insert("max_time".into(), (t.ceil().max(1.0) as u64).into());
    }
    if !spec.secrets.is_empty() {
        body.insert("secret".into(), spec.secrets.clone().into());
    }
    if let Some(check) = &spec.check {
        let (flag, value) = match check {
            Check::UrlContains(v) => ("expect_url", v),
            Check::TextContains(v) => ("expect_text", v),
            Check::AnswerContains(v) => ("expect_answer", v),
            Check::AnswerRegex(v) => ("expect_regex", v),
            Check::Js(v) => ("expect_js", v),
        };
        body.insert(flag.into(), vec![value.clone()].into());
    }
    Value::Object(body)
}

/// Runs the tasks as sessions of the server `client` speaks to, until each
/// has ended (a session that waits for a person is told once, and waited
/// for), or until `interrupt`: the sessions not ended then are stopped.
pub async fn run(
    client: &Client,
    tasks: Vec<TaskSpec>,
    options: ServedOptions,
    progress: Arc<dyn BatchProgress>,
    interrupt: Option<Interrupt>,
) -> Result<BatchOutcome, BatchError> {
    let started = Instant::now();
    let dir = options.dir.clone();
    let mut file = open_results(&dir)?;
    let mut tally = Tally::default();
    let mut pending = submit(client, tasks, &options, &*progress, &mut tally).await?;
    progress.planned(Some(tally.planned), 0);
    let mut records = Vec::new();
    let mut interrupt = interrupt;
    let mut stopped_by = None;
    while !pending.is_empty() {
        let ids: Vec<String> = pending.keys().cloned().collect();
        for id in ids {
            let Some(record) = look_at(client, &id, &mut pending, &*progress).await else {
                continue;
            };
            write_record(&mut file, &record, &*progress);
            tally.running -= 1;
            tally.count(&record);
            progress.finished(&record, &tally);
            records.push(record);
        }
        if pending.is_empty() {
            break;
        }
        let wait = tokio::time::sleep(options.poll);
        match interrupt.as_mut() {
            Some(signal) => tokio::select! {
                _ = wait => {}
                cause = signal.as_mut() => {
                    stopped_by = Some(cause);
                    break;
                }
            },
            None => wait.await,
        }
    }
    let interrupted = pending.len();
    for id in pending.keys() {
        if let Err(e) = client.stop(id).await {
            progress.note(&format!("session {id} was not stopped: {e}"));
        }
    }
    let summary = Summary::of(
        &records,
        interrupted,
        0,
        Some(started.elapsed().as_secs_f64()),
    );
    BatchOutcome::written(dir, records, summary, stopped_by.is_some())
}

/// The batch directory's results file, new: a directory that holds results
/// already is refused (a served batch does not resume).
fn open_results(dir: &Path) -> Result<results::ResultsFile, BatchError> {
    if std::fs::read_to_string(dir.join(results::RESULTS)).is_ok_and(|t| !t.trim().is_empty()) {
        return Err(BatchError::Dir(format!(
            "{} holds the results of a batch already: choose another directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| BatchError::Dir(format!("cannot create {}: {e}", dir.display())))?;
    results::ResultsFile::open(dir).map_err(|e| {
        BatchError::Dir(format!(
            "cannot write {}: {e}",
            dir.join(results::RESULTS).display()
        ))
    })
}

/// Submits each of the shard's tasks `repeat` times, counting them in
/// `tally`: the sessions, by id.
async fn submit(
    client: &Client,
    tasks: Vec<TaskSpec>,
    options: &ServedOptions,
    progress: &dyn BatchProgress,
    tally: &mut Tally,
) -> Result<HashMap<String, Pending>, BatchError> {
    let mut pending = HashMap::new();
    for (position, task) in tasks.into_iter().enumerate() {
        if options.shard.is_some_and(|s| !s.holds(position)) {
            continue;
        }
        let spec = Arc::new(task);
        for attempt in 1..=options.repeat {
            let id = client
                .submit(session_of(&spec, &options.options))
                .await
                .map_err(|e| BatchError::Config(format!("task {}: {e}", spec.id)))?;
            tally.planned += 1;
            tally.running += 1;
            progress.started(&spec.id, attempt, tally);
            pending.insert(
                id,
                Pending {
                    spec: spec.clone(),
                    position,
                    attempt,
                    told_waiting: false,
                },
            );
        }
    }
    Ok(pending)
}

/// Looks at session `id` once: tells a question it waits on (once), and
/// gives its record when it has ended, taking it out of `pending`.
async fn look_at(
    client: &Client,
    id: &str,
    pending: &mut HashMap<String, Pending>,
    progress: &dyn BatchProgress,
) -> Option<RunRecord> {
    let session = client
        .get(id)
        .await
        .map_err(|e| progress.note(&format!("session {id}: {e}")))
        .ok()?;
    let p = pending.get_mut(id)?;
    if session.status == SessionState::Waiting && !p.told_waiting {
        p.told_waiting = true;
        progress.note(&format!(
            "{}#{} waits for a person: {} (answer it on the page, or `seamark \
             sessions answer {id} …`)",
            p.spec.id,
            p.attempt,
            session.question.as_deref().unwrap_or_default()
        ));
    }
    if !session.status.ended() {
        return None;
    }
    let p = pending.remove(id)?;
    Some(record_of(&p, &session))
}

/// Appends `record` to the results, telling `progress` when it cannot.
fn write_record(file: &mut results::ResultsFile, record: &RunRecord, progress: &dyn BatchProgress) {
    let written = serde_json::to_string(record)
        .map_err(std::io::Error::from)
        .and_then(|line| file.append(&line));
    if let Err(e) = written {
        progress.note(&format!(
            "the result of {} was not written: {e}",
            record.name()
        ));
    }
}

/// A session that ended, as a run of the batch.
fn record_of(p: &Pending, session: &Session) -> RunRecord {
    let result = session.result.clone().unwrap_or(Value::Null);
    let status = serde_json::from_value::<RunStatus>(result["status"].clone()).unwrap_or(
        match session.status {
            SessionState::Done => RunStatus::Done,
            SessionState::Stopped => RunStatus::Stopped,
            _ => RunStatus::Failed,
        },
    );
    let answer = result["answer"].as_str().map(str::to_string);
    let reason = result["reason"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| format!("the session ended {}: {}", session.status, session.reason));
    let scored = RunResult {
        success: status == RunStatus::Done,
        status,
        answer: answer.clone(),
        ..RunResult::failed_to_start(reason.clone(), PathBuf::from(&session.run_dir), 0.0)
    };
    let verdict = match &p.spec.check {
        // The run checked its page when it said COMPLETE: done means it held.
        Some(check @ (Check::UrlContains(_) | Check::TextContains(_) | Check::Js(_))) => Score {
            check: check.kind().into(),
            passed: status == RunStatus::Done,
            detail: if status == RunStatus::Done {
                "held on the live page when the run said COMPLETE".into()
            } else {
                format!("the run ended {}: {reason}", status.word())
            },
        },
        check => score::verdict(check.as_ref(), &scored, None),
    };
    let tokens = serde_json::from_value(result["tokens"].clone()).unwrap_or_default();
    RunRecord {
        id: p.spec.id.clone(),
        attempt: p.attempt,
        position: p.position,
        task: p.spec.task.clone(),
        passed: verdict.passed,
        verdict,
        status,
        reason,
        answer,
        data: result.get("data").cloned().filter(|d| !d.is_null()),
        steps: session.steps.max(0) as usize,
        tokens,
        cost_usd: session.cost_usd,
        wall_time_s: result["wall_time_s"].as_f64().unwrap_or(0.0),
        model: result["model"].as_str().unwrap_or_default().to_string(),
        run_dir: PathBuf::from(&session.run_dir),
        report: result["report"].as_str().map(PathBuf::from),
        browser: None,
        downloads: Vec::new(),
        judge: None,
        finished: session.updated.clone(),
        model_calls: result["steps"].as_u64().map(|steps| {
            steps.saturating_sub(result["skill"]["steps"].as_u64().unwrap_or(0)) as usize
        }),
    }
}
