//! The runs a batch does, in order, started as places free up, their results
//! written by one writer as they end, and waited for at the end.

use std::collections::HashSet;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use tokio::sync::{mpsc, watch, Semaphore};
use tracing::Instrument;

use crate::agent::Interrupt;

use super::options::Shard;
use super::progress::BatchProgress;
use super::run_one::run_one;
use super::{lock, results, task, RunRecord, Shared, TaskSpec, Unit};

/// Waits for the runs under way to end, counting those that ended
/// interrupted. An interrupt that comes meanwhile (`signal`) stops them
/// and is kept in `stopped_by`.
pub(super) async fn wait_for_runs(
    progress: &dyn BatchProgress,
    running: &mut tokio::task::JoinSet<bool>,
    mut signal: Option<Interrupt>,
    stop_tx: &watch::Sender<Option<String>>,
    stopped_by: &mut Option<String>,
) -> usize {
    let mut interrupted_runs = 0;
    while !running.is_empty() {
        let joined = match signal.as_mut() {
            Some(s) => tokio::select! {
                j = running.join_next() => Ok(j),
                cause = s.as_mut() => Err(cause),
            },
            None => Ok(running.join_next().await),
        };
        let joined = match joined {
            Ok(joined) => joined,
            Err(cause) => {
                signal = None;
                let _ = stop_tx.send(Some(cause.clone()));
                *stopped_by = Some(cause);
                continue;
            }
        };
        match joined {
            Some(Ok(true)) => interrupted_runs += 1,
            Some(Err(e)) => progress.note(&format!("a run ended without a result: {e}")),
            _ => {}
        }
    }
    interrupted_runs
}

/// The runs started, and why starting stopped early, if it did.
pub(super) struct Started {
    /// How many were started.
    pub(super) planned: usize,
    /// The runs, each ending in whether it was interrupted.
    pub(super) running: tokio::task::JoinSet<bool>,
    /// What interrupted the batch while runs were being started.
    pub(super) stopped_by: Option<String>,
}

/// Starts each unit as a place among `concurrency` frees, until the units
/// end or the interrupt comes; each run's result goes to `tx`.
pub(super) async fn start_runs(
    shared: &Arc<Shared>,
    units: impl Stream<Item = Unit> + Send,
    concurrency: usize,
    interrupt: &mut Option<Interrupt>,
    tx: &mpsc::UnboundedSender<(RunRecord, String)>,
) -> Started {
    let mut units = Box::pin(units);
    let semaphore = Arc::new(Semaphore::new(concurrency));
    let mut started = Started {
        planned: 0,
        running: tokio::task::JoinSet::new(),
        stopped_by: None,
    };
    loop {
        // The next run, once a place is free, unless the interrupt comes first.
        let next = async {
            let permit = semaphore.clone().acquire_owned().await.ok()?;
            units.next().await.map(|u| (u, permit))
        };
        let got = match interrupt.as_mut() {
            Some(signal) => tokio::select! {
                n = next => n,
                cause = signal.as_mut() => { started.stopped_by = Some(cause); None }
            },
            None => next.await,
        };
        let Some((unit, permit)) = got else { break };
        started.planned += 1;
        {
            let mut t = lock(&shared.tally);
            t.planned = t.planned.max(started.planned);
            t.running += 1;
            shared.progress.started(&unit.spec.id, unit.attempt, &t);
        }
        let (shared, tx) = (shared.clone(), tx.clone());
        // Each run's span is the batch's child, on whichever thread it runs.
        let span = tracing::Span::current();
        started.running.spawn(async move {
            let out = run_one(&shared, &unit).instrument(span).await;
            drop(permit);
            lock(&shared.tally).running -= 1;
            match out {
                Some(done) => {
                    let _ = tx.send(done);
                    false
                }
                None => true,
            }
        });
    }
    started
}

/// The one writer of results, in the order runs end: a run counts as
/// finished once its line is written. Gives the sender runs' results go to,
/// and the writer, which ends with the records it wrote once every sender
/// is dropped.
pub(super) fn write_results(
    shared: Arc<Shared>,
    mut file: results::ResultsFile,
) -> (
    mpsc::UnboundedSender<(RunRecord, String)>,
    tokio::task::JoinHandle<Vec<RunRecord>>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(RunRecord, String)>();
    let writer = tokio::spawn(async move {
        let mut new = Vec::new();
        while let Some((record, line)) = rx.recv().await {
            if let Err(e) = file.append(&line) {
                shared.progress.note(&format!(
                    "the result of {} could not be written to {}: {e}",
                    record.name(),
                    file.path().display()
                ));
            }
            let mut t = lock(&shared.tally);
            t.count(&record);
            shared.progress.finished(&record, &t);
            drop(t);
            new.push(record);
        }
        new
    });
    (tx, writer)
}

/// The runs to do, in order: each of the shard's tasks K times, less those
/// finished before. A task whose id cannot name a directory, or came before
/// in the stream, is left out and told to `progress`.
pub(super) fn plan(
    tasks: impl Stream<Item = TaskSpec> + Send,
    repeat: usize,
    shard: Option<Shard>,
    done: HashSet<(String, usize)>,
    progress: Arc<dyn BatchProgress>,
) -> impl Stream<Item = Unit> + Send {
    let mut seen = HashSet::new();
    tasks
        .enumerate()
        .filter(move |(i, _)| std::future::ready(shard.is_none_or(|s| s.holds(*i))))
        .filter(move |(_, spec)| {
            let why = match task::valid_id(&spec.id) {
                Err(e) => Some(e.to_string()),
                Ok(()) if !seen.insert(spec.id.clone()) => {
                    Some(format!("id {:?} came before", spec.id))
                }
                Ok(()) => None,
            };
            if let Some(why) = &why {
                progress.note(&format!("a task was left out: {why}"));
            }
            std::future::ready(why.is_none())
        })
        .flat_map(move |(position, spec)| {
            let spec = Arc::new(spec);
            let units: Vec<Unit> = (1..=repeat)
                .filter(|k| !done.contains(&(spec.id.clone(), *k)))
                .map(|attempt| Unit {
                    spec: spec.clone(),
                    position,
                    attempt,
                })
                .collect();
            futures::stream::iter(units)
        })
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Keeps the notes a batch tells.
    #[derive(Default)]
    struct Notes(Mutex<Vec<String>>);

    impl BatchProgress for Notes {
        fn note(&self, message: &str) {
            self.0.lock().unwrap().push(message.to_string());
        }
    }

    fn task(id: &str) -> TaskSpec {
        TaskSpec {
            id: id.into(),
            ..TaskSpec::default()
        }
    }

    #[tokio::test]
    async fn the_plan_is_the_shards_tasks_k_times_less_those_done_and_those_left_out() {
        let notes = Arc::new(Notes::default());
        let tasks = futures::stream::iter(["a", "b", "../x", "a", "c", "d"].map(task));
        let done = HashSet::from([("c".to_string(), 2)]);
        let shard = Some(Shard { index: 1, count: 2 });
        let units: Vec<Unit> = plan(tasks, 2, shard, done, notes.clone()).collect().await;
        let planned: Vec<(String, usize, usize)> = units
            .iter()
            .map(|u| (u.spec.id.clone(), u.position, u.attempt))
            .collect();
        // Positions 0, 2 and 4 are the shard's: a, ../x (no directory name) and c.
        assert_eq!(
            planned,
            [("a".into(), 0, 1), ("a".into(), 0, 2), ("c".into(), 4, 1)]
        );
        let notes = notes.0.lock().unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("a task was left out"), "{notes:?}");
    }

    #[tokio::test]
    async fn a_task_id_that_came_before_in_the_stream_is_left_out_with_a_note() {
        let notes = Arc::new(Notes::default());
        let tasks = futures::stream::iter(["a", "a"].map(task));
        let units: Vec<Unit> = plan(tasks, 1, None, HashSet::new(), notes.clone())
            .collect()
            .await;
        assert_eq!(units.len(), 1);
        assert!(notes.0.lock().unwrap()[0].contains("came before"));
    }
}
