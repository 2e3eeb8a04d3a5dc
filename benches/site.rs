//! A recorded run replayed from its HAR against the same run live: the
//! demo's job search (4 steps) on the bundled job board, with a scripted
//! model that answers at once, recorded once with the site's traffic
//! (`SiteUse::Record`), then timed live and answered from the recording
//! (`SiteUse::Replay`, no network). Criterion times one whole run of each;
//! a table of the median run and the replay's ratio to live is printed at
//! the end.
//!
//! `cargo bench --bench site`.

// A benchmark fails by panicking, as a test does, and its scenario is told
// in order, however long.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

mod common;

use common::model_server::{job_seeker, ModelServer};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use seamark::agent::AgentOptions;
use seamark::serve::StaticServer;
use seamark::site::SiteUse;

const TASK: &str =
    "Search jobs for the role of Data Scientist in India with a salary between 50 LPA and 100 LPA";

/// One run of the task into `out`, with the site as `site` says; its time.
async fn run(model: &str, board: &StaticServer, site: SiteUse, out: PathBuf) -> Duration {
    let options = AgentOptions {
        max_steps: 8,
        out: Some(out),
        report: false,
        site,
        ..AgentOptions::default()
    };
    let started = Instant::now();
    common::successful_run(model, TASK, board.url("index.html"), options).await;
    started.elapsed()
}

fn main() {
    let rt = common::runtime();
    let site = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/site");
    let board = rt
        .block_on(StaticServer::start(site))
        .expect("serve the board");
    let model = rt.block_on(ModelServer::answering(job_seeker));
    let work = tempfile::tempdir().expect("tempdir");
    let recorded = work.path().join("recorded");
    rt.block_on(run(&model.base, &board, SiteUse::Record, recorded.clone()));
    let har = recorded.join(seamark::site::HAR_FILE);
    let mut n = 0usize;
    let mut times: Vec<(&'static str, Duration)> = Vec::new();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = c.benchmark_group("site");
    for (name, use_) in [
        ("live", SiteUse::Live),
        ("replayed", SiteUse::Replay(har.clone())),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                let out = work.path().join(format!("{name}-{n}"));
                let took = rt.block_on(run(&model.base, &board, use_.clone(), out));
                times.push((name, took));
            })
        });
    }
    group.finish();
    c.final_summary();
    let median = |kind: &str| {
        seamark::figures::median(
            times
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, t)| t.as_secs_f64())
                .collect(),
        )
    };
    let (live, replayed) = (median("live"), median("replayed"));
    println!("\n| run | runs | median | ratio to live |");
    println!("|---|---:|---:|---:|");
    for (kind, t) in [("live", live), ("replayed from site.har", replayed)] {
        let runs = times.iter().filter(|(k, _)| kind.starts_with(k)).count();
        println!("| {kind} | {runs} | {t:.2} s | {:.2} |", t / live);
    }
}
