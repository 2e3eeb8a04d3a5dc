//! The live view's cost to the run it shows: the same run of 8 steps (a
//! click each, on a page that repaints every frame, so that the
//! screencast never runs dry) with no live view, with one nobody watches,
//! with a viewer on a slow link (it asks for frames and never reads them:
//! its requests stay open, so the screencast runs, and its frames wait in
//! its socket), and with an eager viewer (it takes every frame as it
//! comes). Criterion times whole runs; a table of medians and the frames
//! the eager viewer got is printed at the end.
//!
//! `cargo bench --bench live`.

// criterion's macros write public functions with no doc comment; the docs
// lint is for the library.
// A benchmark fails by panicking, as a test does, and its scenario is told
// in order, however long.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines
)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::model_server::{ModelServer, Received, Reply};
use criterion::Criterion;
use seamark::agent::{Agent, AgentOptions};
use seamark::live::{Live, LiveServer};
use seamark::serve::StaticServer;
use tokio::io::AsyncWriteExt;

/// Steps of each run.
const STEPS: usize = 8;

/// Clicks Next a step, and is done at the last step.
fn clicker(r: &Received) -> Reply {
    Reply::Text(if r.step() >= STEPS {
        "COMPLETE:clicked".into()
    } else {
        format!("CLICK:{}", r.id_of("Next"))
    })
}

/// Who looks at the run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Watch {
    /// No live view at all.
    NoView,
    /// A live view nobody looks at.
    Unwatched,
    /// A viewer whose frames are never read.
    SlowLink,
    /// A viewer that takes every frame.
    Eager,
}

/// A viewer of `base` as `watch` says, until `stop`; counts the frames it
/// read into `frames`.
async fn look(base: String, watch: Watch, stop: Arc<AtomicBool>, frames: Arc<AtomicU64>) {
    let addr = base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    match watch {
        Watch::SlowLink => {
            // Each request asks for the next frame and is never read: the
            // socket fills, the viewer never says it has a frame.
            let mut held = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                if let Ok(mut s) = tokio::net::TcpStream::connect(&addr).await {
                    let head = format!(
                        "GET /frame?after={} HTTP/1.1\r\nHost: {addr}\r\n\r\n",
                        held.len()
                    );
                    let _ = s.write_all(head.as_bytes()).await;
                    held.push(s);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        Watch::Eager => {
            let client = reqwest::Client::new();
            let mut seq = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let Ok(r) = client
                    .get(format!("{base}frame?after={seq}"))
                    .timeout(Duration::from_secs(2))
                    .send()
                    .await
                else {
                    continue;
                };
                if let Some(n) = r.headers().get("x-seq").and_then(|v| v.to_str().ok()) {
                    seq = n.parse().unwrap_or(seq);
                }
                if r.bytes().await.is_ok() {
                    frames.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
        Watch::NoView | Watch::Unwatched => {}
    }
}

/// One run of the task, watched as `watch` says; its time.
async fn run(model: &str, site: &StaticServer, watch: Watch, frames: Arc<AtomicU64>) -> Duration {
    let out = tempfile::tempdir().unwrap();
    let options = AgentOptions {
        max_steps: STEPS + 2,
        out: Some(out.path().join("run")),
        report: false,
        ..AgentOptions::default()
    };
    let brain = common::model_server::scripted_brain(model).expect("brain");
    let mut builder = Agent::builder()
        .task("Click Next until it says 7")
        .url(site.url("animated.html"))
        .brain(brain)
        .options(options);
    let mut server = None;
    let stop = Arc::new(AtomicBool::new(false));
    let mut viewer = None;
    if watch != Watch::NoView {
        let live = Live::new(Duration::from_secs(60));
        let s = LiveServer::start(live.clone(), "127.0.0.1:0".parse().unwrap(), None, &[])
            .await
            .unwrap();
        let base = format!("http://{}/", s.address());
        viewer = Some(tokio::spawn(look(base, watch, stop.clone(), frames)));
        server = Some(s);
        builder = builder.live(live);
    }
    let t = Instant::now();
    let result = builder.build().unwrap().run().await.unwrap();
    let took = t.elapsed();
    assert!(result.success, "{}", result.reason);
    stop.store(true, Ordering::SeqCst);
    if let Some(v) = viewer {
        let _ = v.await;
    }
    drop(server);
    took
}

fn live(c: &mut Criterion) {
    let rt = common::runtime();
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sites");
    let (site, model) = rt.block_on(async {
        (
            StaticServer::start(root).await.unwrap(),
            ModelServer::answering(clicker).await,
        )
    });
    let times: Arc<Mutex<Vec<(Watch, Duration, u64)>>> = Arc::default();
    let mut group = c.benchmark_group("live");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(60));
    for watch in [
        Watch::NoView,
        Watch::Unwatched,
        Watch::SlowLink,
        Watch::Eager,
    ] {
        group.bench_function(format!("{watch:?}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let frames = Arc::new(AtomicU64::new(0));
                    let took = rt.block_on(run(&model.base, &site, watch, frames.clone()));
                    times
                        .lock()
                        .unwrap()
                        .push((watch, took, frames.load(Ordering::SeqCst)));
                    total += took;
                }
                total
            });
        });
    }
    group.finish();
    let times = times.lock().unwrap();
    println!("\n| viewer | runs | median run of {STEPS} steps | per step | frames the viewer read (median) |");
    println!("|---|---|---|---|---|");
    let base = median(&times, Watch::NoView).0;
    for watch in [
        Watch::NoView,
        Watch::Unwatched,
        Watch::SlowLink,
        Watch::Eager,
    ] {
        let (m, frames, n) = median(&times, watch);
        println!(
            "| {watch:?} | {n} | {:.2} s ({:+.1} %) | {:.0} ms | {frames} |",
            m.as_secs_f64(),
            (m.as_secs_f64() / base.as_secs_f64() - 1.0) * 100.0,
            m.as_secs_f64() * 1000.0 / STEPS as f64
        );
    }
}

/// The median time and frames of the runs watched as `watch`, and how many.
fn median(times: &[(Watch, Duration, u64)], watch: Watch) -> (Duration, u64, usize) {
    let mut t: Vec<Duration> = times.iter().filter(|r| r.0 == watch).map(|r| r.1).collect();
    let mut f: Vec<u64> = times.iter().filter(|r| r.0 == watch).map(|r| r.2).collect();
    t.sort();
    f.sort_unstable();
    let n = t.len();
    (
        t.get(n / 2).copied().unwrap_or_default(),
        f.get(n / 2).copied().unwrap_or_default(),
        n,
    )
}

criterion::criterion_group!(benches, live);
criterion::criterion_main!(benches);
