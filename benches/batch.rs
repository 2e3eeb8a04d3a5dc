//! Many runs at once: the throughput of `seamark::batch` (the library under
//! `seamark batch`) with a scripted model that answers at once, on a fixture
//! task of two steps (type a city and look it up, then answer what the page
//! says), at concurrency 1, 2 and 4 on one launched browser; and the memory
//! of the browser (every process of it, proportional set size) and of this
//! process, at their peak during each batch, and what each more browser
//! context holding the task's page costs.
//!
//! `cargo bench --bench batch`. Criterion times one batch of 8 runs per
//! iteration; the memory table is printed at the end.

// A benchmark fails by panicking, as a test does, and its scenario is told
// in order, however long.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

mod common;

use common::{model_server, server};

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use model_server::{ModelServer, Received, Reply};
use seamark::agent::AgentOptions;
use seamark::batch::{Batch, BatchOptions, TaskSpec};
use seamark::browser::{BrowserOptions, Pool};

/// Runs per batch.
const RUNS: usize = 8;
const LEVELS: [usize; 3] = [1, 2, 4];

/// The scripted model: types the city and looks it up, then answers.
fn weather(r: &Received) -> Reply {
    Reply::Text(if r.url().contains("/lookup.html") {
        format!(
            "TYPE:{}:Paris\nCLICK:{}",
            r.id_of("City"),
            r.id_of("Look up")
        )
    } else {
        let said = r.first_named("link", "Back: ");
        format!(
            "ANSWER:{}\nCOMPLETE:answered",
            said.trim_start_matches("Back: ")
        )
    })
}

fn tasks(sites: &server::Server) -> Vec<TaskSpec> {
    (0..RUNS)
        .map(|i| TaskSpec {
            id: format!("t{i}"),
            task: "Look up the weather in Paris and answer".into(),
            url: sites.url("lookup.html"),
            check: Some(seamark::batch::Check::AnswerContains("21°C".into())),
            ..TaskSpec::default()
        })
        .collect()
}

/// One batch of the tasks at `concurrency`, in a fresh directory; its wall time.
async fn batch(model: &str, sites: &server::Server, concurrency: usize) -> Duration {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = model.to_string();
    let brains: seamark::batch::BrainMaker =
        Arc::new(move |_: &TaskSpec| model_server::scripted_brain(&base));
    let options = BatchOptions {
        concurrency,
        agent: AgentOptions {
            max_steps: 4,
            ..AgentOptions::default()
        },
        ..BatchOptions::new(dir.path().join("b"))
    };
    let t = Instant::now();
    let outcome = Batch::new(options, brains)
        .run(tasks(sites))
        .await
        .expect("batch");
    let took = t.elapsed();
    assert_eq!(outcome.summary.passed, RUNS, "every run passes");
    took
}

/// Proportional set size of a process, in MiB (0 when it is gone).
fn pss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The Chromium processes launched under `tmp` (a profile there), their
/// helpers included: every descendant of the browser's main process.
fn browser_processes(tmp: &Path) -> Vec<u32> {
    let marker = format!("--user-data-dir={}/seamark-profile-", tmp.display());
    let mut parent: HashMap<u32, u32> = HashMap::new();
    let mut roots = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) {
            if let Some(ppid) = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok())
            {
                parent.insert(pid, ppid);
            }
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline);
        if text.contains(&marker) && !text.contains("--type=") {
            roots.push(pid);
        }
    }
    parent
        .keys()
        .copied()
        .filter(|&p| {
            let mut at = p;
            for _ in 0..16 {
                if roots.contains(&at) {
                    return true;
                }
                match parent.get(&at) {
                    Some(&up) if up > 1 => at = up,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Peaks of memory while `work` runs: the browser's (all its processes) and
/// this process's, in MiB.
async fn peaks<T>(tmp: &Path, work: impl std::future::Future<Output = T>) -> (T, f64, f64) {
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, tmp) = (stop.clone(), tmp.to_path_buf());
    let sampler = std::thread::spawn(move || {
        let (mut browser, mut own) = (0f64, 0f64);
        while !flag.load(Ordering::SeqCst) {
            let b: f64 = browser_processes(&tmp).into_iter().map(pss_mib).sum();
            browser = browser.max(b);
            own = own.max(pss_mib(std::process::id()));
            std::thread::sleep(Duration::from_millis(50));
        }
        (browser, own)
    });
    let out = work.await;
    stop.store(true, Ordering::SeqCst);
    let (browser, own) = sampler.join().expect("sampler");
    (out, browser, own)
}

fn main() {
    // The browsers this benchmark launches are told apart by their profile,
    // made under a TMPDIR of its own.
    let tmp = tempfile::tempdir().expect("tempdir");
    std::env::set_var("TMPDIR", tmp.path());
    let rt = common::runtime();
    let (sites, model) = rt.block_on(async {
        (
            server::Server::start(None).await,
            ModelServer::answering(weather).await,
        )
    });
    let model_url = model.base.clone();

    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20))
        .configure_from_args();
    let mut group = c.benchmark_group("batch_8_runs");
    for level in LEVELS {
        group.bench_function(format!("concurrency_{level}"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| rt.block_on(batch(&model_url, &sites, level)))
                    .sum()
            })
        });
    }
    group.finish();

    // Memory: one batch per level, sampled; then idle contexts with the page.
    let mut rows = Vec::new();
    for level in LEVELS {
        let (took, browser, own) = rt.block_on(peaks(tmp.path(), batch(&model_url, &sites, level)));
        rows.push((level, took, browser, own));
    }
    let per_context = rt.block_on(async {
        let pool = Arc::new(
            Pool::start(&BrowserOptions::default(), &[])
                .await
                .expect("launch Chromium"),
        );
        let mut sessions = Vec::new();
        let mut sizes = Vec::new();
        for _ in 0..=4 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            sizes.push(
                browser_processes(tmp.path())
                    .into_iter()
                    .map(pss_mib)
                    .sum::<f64>(),
            );
            let s = pool
                .open(&BrowserOptions::default())
                .await
                .expect("context");
            s.navigate(&sites.url("lookup.html"), Duration::from_secs(20))
                .await
                .expect("open");
            sessions.push(s);
        }
        for s in sessions {
            s.close().await;
        }
        pool.close().await;
        sizes
    });
    println!("\n| concurrency | 8 runs took | runs per minute | browser peak (PSS) | seamark peak (PSS) |");
    println!("|---:|---:|---:|---:|---:|");
    for (level, took, browser, own) in &rows {
        println!(
            "| {level} | {:.1} s | {:.1} | {browser:.0} MiB | {own:.0} MiB |",
            took.as_secs_f64(),
            RUNS as f64 * 60.0 / took.as_secs_f64()
        );
    }
    let steps: Vec<String> = per_context
        .windows(2)
        .map(|w| format!("{:+.0}", w[1] - w[0]))
        .collect();
    println!(
        "\nthe browser with 0..=4 contexts holding the page: {} MiB; each more context: {} MiB",
        per_context
            .iter()
            .map(|m| format!("{m:.0}"))
            .collect::<Vec<_>>()
            .join(", "),
        steps.join(", ")
    );
    c.final_summary();
}
