//! `seamark serve`'s own costs, apart from the runs: how many sessions a
//! minute its workers take, run and end with 1, 2 and 4 workers, on SQLite
//! and on PostgreSQL (a server of the bench's own, as the tests start one);
//! and the time from a person's answer to the session being active again.
//!
//! Each session's run is a stub program that prints a result at once, so
//! what is measured is the queue, the leases, a process started per session
//! and the ending written, not a browser (a real one-step run costs about
//! 1.5 s here: see the closing note of the issue).
//!
//! `cargo bench --bench serve`.

// A benchmark fails by panicking, as a test does, and its scenario is told
// in order, however long.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

mod common;

#[path = "../tests/it/postgres.rs"]
#[allow(dead_code)]
mod postgres;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use seamark::coworker::store::{Ending, NewSession};
use seamark::coworker::{OptionKind, OptionSpec, SessionState, Store, Worker, WorkerConfig};
use tokio::sync::watch;

/// Sessions per drain.
const SESSIONS: usize = 20;
const LEVELS: [usize; 3] = [1, 2, 4];

/// A run that ends done at once.
fn stub(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("stub-run");
    std::fs::write(
        &path,
        "#!/bin/sh\necho '{\"status\":\"done\",\"reason\":\"stub\",\"steps\":1}'\n",
    )
    .expect("the stub");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn config(program: &Path, n: usize) -> WorkerConfig {
    WorkerConfig {
        program: program.to_path_buf(),
        name: format!("bench-{n}"),
        lease: Duration::from_secs(30),
        poll: Duration::from_millis(250),
        notify: None,
        page: None,
        spec: Arc::new(vec![OptionSpec {
            name: "confirm".into(),
            kind: OptionKind::Value,
        }]),
        secrets: program.with_file_name("secrets"),
        runs: program.with_file_name("runs"),
        browser: None,
        // The stub run takes no live view.
        live: None,
        hands_timeout: Duration::from_secs(60),
    }
}

async fn submit(store: &Store, runs: &Path, n: usize) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let id = format!("s{}-{n}", NEXT.fetch_add(1, Ordering::Relaxed));
    let new = NewSession {
        task: "a task",
        url: "http://127.0.0.1/",
        account: None,
        options: &serde_json::Map::new(),
        run_dir: &runs.join(&id).display().to_string(),
    };
    store.submit(&id, &new).await.expect("submitted");
    id
}

/// Queues `SESSIONS` sessions and times `workers` workers draining them.
async fn drain(store: &Store, program: &Path, runs: &Path, workers: usize) -> Duration {
    let mut ids = Vec::new();
    for n in 0..SESSIONS {
        ids.push(submit(store, runs, n).await);
    }
    let configs = (0..workers).map(|n| config(program, n)).collect();
    common::drained(store, &ids, configs, Duration::from_millis(2)).await
}

/// A session made to wait, an idle worker, and the time from the answer
/// to the worker holding the session again.
async fn answer_to_active(store: &Store, program: &Path, runs: &Path, phase: u64) -> Duration {
    let id = submit(store, runs, 0).await;
    let holder = "bench-holder";
    let taken = store
        .take(holder, Duration::from_secs(30))
        .await
        .expect("take")
        .expect("the session");
    assert_eq!(taken.session.id, id);
    let waiting = Ending {
        state: SessionState::Waiting,
        reason: "asked".into(),
        question: Some("Which city?".into()),
        hold: None,
        result: None,
        steps: None,
        cost_usd: None,
    };
    store.finish(&id, holder, &waiting).await.expect("parked");
    let (stop, shutdown) = watch::channel(false);
    let worker = tokio::spawn(Worker::new(store.clone(), config(program, 0)).run(shutdown));
    // The answer comes at any moment of the worker's wait.
    tokio::time::sleep(Duration::from_millis(300 + phase % 250)).await;
    let answered = Instant::now();
    store.answer(&id, "Rome").await.expect("answered");
    let took = loop {
        let s = store.get(&id).await.expect("the session");
        if s.status != SessionState::Queued {
            break answered.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    // The stub's run ends before the worker stops.
    while !store.get(&id).await.expect("the session").status.ended() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let _ = stop.send(true);
    let _ = worker.await;
    took
}

fn main() {
    let rt = common::runtime();
    let dir = tempfile::tempdir().expect("a temp dir");
    let program = stub(dir.path());
    let runs = dir.path().join("runs");
    let pg = rt.block_on(postgres::Postgres::start());
    let stores = [
        (
            "sqlite",
            rt.block_on(Store::open(
                &dir.path().join("sessions.db").display().to_string(),
            ))
            .expect("SQLite"),
        ),
        (
            "postgres",
            rt.block_on(Store::open(&pg.url)).expect("PostgreSQL"),
        ),
    ];
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    let mut group = c.benchmark_group(format!("serve_{SESSIONS}_sessions"));
    group.throughput(Throughput::Elements(SESSIONS as u64));
    for (name, store) in &stores {
        for workers in LEVELS {
            group.bench_function(format!("{name}_workers_{workers}"), |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| rt.block_on(drain(store, &program, &runs, workers)))
                        .sum()
                })
            });
        }
    }
    group.finish();
    let mut group = c.benchmark_group("serve_answer_to_active");
    for (name, store) in &stores {
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|i| rt.block_on(answer_to_active(store, &program, &runs, i * 37)))
                    .sum()
            })
        });
    }
    group.finish();
    c.final_summary();
}
