//! `seamark serve`'s workers running real sessions: the real `seamark`
//! binary per session, a real Chromium, a page served here and a scripted
//! model that answers at the first look. Two ways, each with 1, 2 and 4
//! workers in one process:
//!
//! - `launch_each`: every run launches its own browser (as before a worker
//!   kept one);
//! - `kept`: the process keeps one browser, and every run opens a browser
//!   context of its own in it.
//!
//! Criterion times a drain of [`SESSIONS`] sessions (sessions per minute is
//! 60 × SESSIONS ÷ the time). Printed at the end: the time from a session
//! taken by a worker to its first step under way (its browser up and its
//! page loaded), the median and the slowest tenth, from the sessions' own
//! events.
//!
//! `cargo bench --bench workers`.

// A benchmark fails by panicking, as a test does, and its scenario is told
// in order, however long.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::model_server::{ModelServer, Received, Reply};
use common::server::Server;
use criterion::{Criterion, Throughput};
use seamark::coworker::kept_browser::KeptBrowser;
use seamark::coworker::store::NewSession;
use seamark::coworker::{OptionKind, OptionSpec, Store, WorkerConfig};

/// Sessions per drain.
const SESSIONS: usize = 8;
const LEVELS: [usize; 3] = [1, 2, 4];

/// Answers with the page's title at the first look: one step a session.
fn titles(_r: &Received) -> Reply {
    Reply::Text("ANSWER:seen\nCOMPLETE:read the page".into())
}

fn config(dir: &Path, n: usize, browser: Option<Arc<KeptBrowser>>) -> WorkerConfig {
    WorkerConfig {
        program: env!("CARGO_BIN_EXE_seamark").into(),
        name: format!("bench-{n}"),
        lease: Duration::from_secs(30),
        poll: Duration::from_millis(100),
        notify: None,
        page: None,
        // What these sessions set, and the `confirm` a worker sets itself.
        spec: Arc::new(
            [
                ("no_skills", OptionKind::Flag),
                ("max_steps", OptionKind::Value),
                ("confirm", OptionKind::Value),
            ]
            .into_iter()
            .map(|(name, kind)| OptionSpec {
                name: name.into(),
                kind,
            })
            .collect(),
        ),
        secrets: dir.join("secrets"),
        runs: dir.join("runs"),
        browser,
        // As `seamark serve` runs them: each with its live view.
        live: Some("127.0.0.1:0".parse().unwrap()),
        hands_timeout: Duration::from_secs(60),
    }
}

/// Queues the sessions and times `workers` workers draining them; keeps
/// each session's time from taken to its first step.
async fn drain(
    store: &Store,
    dir: &Path,
    url: &str,
    workers: usize,
    kept: bool,
    first_looks: &Mutex<Vec<i64>>,
) -> Duration {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let mut options = serde_json::Map::new();
    options.insert("no_skills".into(), true.into());
    options.insert("max_steps".into(), 3.into());
    let mut ids = Vec::new();
    for _ in 0..SESSIONS {
        let id = format!("s{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let new = NewSession {
            task: "Say what the page is",
            url,
            account: None,
            options: &options,
            run_dir: "",
        };
        store.submit(&id, &new).await.expect("submitted");
        ids.push(id);
    }
    let browser = kept.then(|| Arc::new(KeptBrowser::new()));
    if let Some(b) = &browser {
        // Launched before the clock starts: a kept browser is paid once a
        // process, not once a drain.
        b.websocket().await.expect("the kept browser");
    }
    let configs = (0..workers)
        .map(|n| config(dir, n, browser.clone()))
        .collect();
    let took = common::drained(store, &ids, configs, Duration::from_millis(20)).await;
    for id in &ids {
        let session = store.get(id).await.expect("a session");
        assert_eq!(session.status.word(), "done", "{session:#?}");
        let events = store.events(id, 0).await.expect("events");
        let taken = events.iter().find(|e| e.state == "active").map(|e| e.at_ms);
        let stepped = events.iter().find(|e| e.state == "step").map(|e| e.at_ms);
        if let (Some(taken), Some(stepped)) = (taken, stepped) {
            first_looks.lock().unwrap().push(stepped - taken);
        }
    }
    took
}

fn main() {
    let rt = common::runtime();
    let dir = tempfile::tempdir().expect("a temp dir");
    let (sites, model) = rt.block_on(async {
        (
            Server::start(None).await,
            ModelServer::answering(titles).await,
        )
    });
    // The runs the workers start find the scripted model here.
    std::env::set_var("OPENAI_BASE_URL", format!("{}/v1", model.base));
    std::env::set_var("SEAMARK_MODEL", "openai/scripted");
    std::env::remove_var("OPENAI_API_KEY");
    let url = sites.url("form.html?k=1");
    let store = rt
        .block_on(Store::open(
            &dir.path().join("sessions.db").display().to_string(),
        ))
        .expect("SQLite");
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20));
    let mut group = c.benchmark_group(format!("workers_{SESSIONS}_sessions"));
    group.throughput(Throughput::Elements(SESSIONS as u64));
    let mut table = Vec::new();
    for (name, kept) in [("launch_each", false), ("kept", true)] {
        for workers in LEVELS {
            let looks = Mutex::new(Vec::new());
            group.bench_function(format!("{name}_workers_{workers}"), |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| {
                            rt.block_on(drain(&store, dir.path(), &url, workers, kept, &looks))
                        })
                        .sum()
                })
            });
            let mut looks = looks.into_inner().unwrap();
            looks.sort_unstable();
            if !looks.is_empty() {
                let at = |q: f64| looks[((looks.len() - 1) as f64 * q) as usize];
                table.push(format!(
                    "{name:<12} {workers} workers: taken → first step median {} ms, p90 {} ms ({} sessions)",
                    at(0.5),
                    at(0.9),
                    looks.len()
                ));
            }
        }
    }
    group.finish();
    c.final_summary();
    println!("\nfrom a session taken to its first step under way:");
    for line in table {
        println!("  {line}");
    }
}
