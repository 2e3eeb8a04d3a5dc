//! Skills: the demo's job search (4 steps) on the bundled job board, done
//! the first time with the model (run 1: the skill is learned) and again with
//! other words from the skill (run 2), the model's latency simulated at a
//! fixed delay. Criterion times one whole run of each; a table of model
//! calls and time per step (median over the runs) is printed at the end:
//! a skill's step costs perception plus the command, a model's step that
//! plus the model.
//!
//! Then the same task from the skill is taken in turn with the skill
//! exported as a Playwright script (`seamark skill export --lang python`,
//! run with PyPI's `playwright` on the system Chromium), each as a whole
//! process, [`ROUNDS`] times: the time of the process, and the time in the
//! browser from the start page's request to the filtered results' request
//! (from the board's own log of requests).
//!
//! `cargo bench --bench skills`.

// A benchmark fails by panicking, as a test does, and its scenario is told
// in order, however long.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

mod common;

use common::model_server::{job_seeker, ModelServer, Reply};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::Criterion;
use seamark::agent::AgentOptions;
use seamark::serve::StaticServer;

/// The model's simulated latency.
const MODEL_DELAY: Duration = Duration::from_secs(1);

/// Rounds of the skill beside its Playwright script.
const ROUNDS: usize = 7;

/// One round: (the whole process, in the browser) in seconds, of seamark
/// from the skill and of the Playwright script.
type Round = [(f64, f64); 2];

fn task(role: &str, place: &str) -> String {
    format!(
        "Search jobs for the role of {role} in {place} with a salary between 50 LPA and 100 LPA"
    )
}

/// One run of the task into `out`, with the skills in `skills`.
async fn run(model: &str, board: &StaticServer, task: &str, skills: &Path, out: PathBuf) {
    let options = AgentOptions {
        max_steps: 8,
        out: Some(out),
        report: false,
        skills: Some(skills.to_path_buf()),
        ..AgentOptions::default()
    };
    common::successful_run(model, task, board.url("index.html"), options).await;
}

/// One step of a run: whether the model was called, and its stages in ms
/// (perception, marks, model, commands).
struct StepCost {
    model: bool,
    stages: [f64; 4],
}

const STAGES: [&str; 4] = ["perceive_ms", "mark_ms", "model_ms", "act_ms"];

/// The steps of a run directory.
fn steps_of(dir: &Path) -> Vec<StepCost> {
    seamark::journal::read_records(dir)
        .expect("journal")
        .into_iter()
        .filter(|r| r["kind"] == "step")
        .map(|r| StepCost {
            model: r["skill"]["step"].is_null(),
            stages: STAGES.map(|k| r["timings"][k].as_f64().unwrap_or(0.0)),
        })
        .collect()
}

fn main() {
    let rt = common::runtime();
    let site = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/site");
    let board = rt
        .block_on(StaticServer::start(site))
        .expect("serve the board");
    let model = rt.block_on(ModelServer::answering(|r| {
        let asked = Instant::now();
        let ready = Arc::new(move || asked.elapsed() >= MODEL_DELAY);
        Reply::When(ready, Box::new(job_seeker(r)))
    }));
    let work = tempfile::tempdir().expect("tempdir");
    let runs: Arc<Mutex<Vec<(&'static str, PathBuf)>>> = Arc::default();
    let mut n = 0usize;
    let mut next_dir = |kind: &'static str| {
        n += 1;
        let dir = work.path().join(format!("{kind}-{n}"));
        runs.lock().expect("runs").push((kind, dir.clone()));
        dir
    };
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = c.benchmark_group("skill");
    group.bench_function("run1_model", |b| {
        b.iter(|| {
            // A fresh folder: the model does every step, and it is learned.
            let skills = tempfile::tempdir().expect("skills");
            let out = next_dir("model");
            rt.block_on(run(
                &model.base,
                &board,
                &task("Data Scientist", "India"),
                skills.path(),
                out,
            ));
        })
    });
    let skills = work.path().join("skills");
    rt.block_on(run(
        &model.base,
        &board,
        &task("Data Scientist", "India"),
        &skills,
        work.path().join("learn"),
    ));
    group.bench_function("run2_skill", |b| {
        b.iter(|| {
            let out = next_dir("skill");
            rt.block_on(run(
                &model.base,
                &board,
                &task("Data Engineer", "Pune"),
                &skills,
                out,
            ));
        })
    });
    group.finish();
    c.final_summary();

    let runs = runs.lock().expect("runs").clone();
    println!(
        "\nmodel latency simulated at {} ms\n",
        MODEL_DELAY.as_millis()
    );
    println!(
        "| run | runs | model calls per run | steps per run | step (median) | perceive | mark | model | act | run (median) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for kind in ["model", "skill"] {
        let dirs: Vec<&PathBuf> = runs
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, d)| d)
            .collect();
        let steps: Vec<Vec<StepCost>> = dirs.iter().map(|d| steps_of(d)).collect();
        let median = |f: &dyn Fn(&StepCost) -> f64| {
            seamark::figures::median(steps.iter().flatten().map(f).collect())
        };
        let calls = steps
            .iter()
            .map(|s| s.iter().filter(|c| c.model).count() as f64);
        let per_run = steps
            .iter()
            .map(|s| s.iter().flat_map(|c| c.stages).sum::<f64>());
        let stages: Vec<String> = (0..4)
            .map(|i| format!("{:.0} ms", median(&|c| c.stages[i])))
            .collect();
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} ms | {} | {:.0} ms |",
            if kind == "model" {
                "1: the model (learned)"
            } else {
                "2: from the skill"
            },
            dirs.len(),
            seamark::figures::median(calls.collect()),
            seamark::figures::median(steps.iter().map(|s| s.len() as f64).collect()),
            median(&|c| c.stages.iter().sum()),
            stages.join(" | "),
            seamark::figures::median(per_run.collect()),
        );
    }
    beside_playwright(&board, &model.base, &skills, work.path());
}

/// The time of a process, and of its browser's way from the start page's
/// request to the filtered results' request, as the board saw them.
fn timed(board: &StaticServer, mut process: std::process::Command) -> Option<(f64, f64)> {
    let started = Instant::now();
    let status = process.status().ok()?;
    let whole = started.elapsed().as_secs_f64();
    if !status.success() {
        eprintln!("{process:?} failed: {status}");
        return None;
    }
    let served: Vec<(Instant, String)> = board
        .served()
        .into_iter()
        .filter(|(at, _)| *at >= started)
        .collect();
    let first = served.iter().find(|(_, p)| p.ends_with("/index.html"))?.0;
    let last = served.iter().find(|(_, p)| p.contains("salary="))?.0;
    Some((whole, last.duration_since(first).as_secs_f64()))
}

/// The skill's task by `seamark run` and by the skill's Playwright script,
/// in turn, as whole processes; a table of each round and the medians.
fn beside_playwright(board: &StaticServer, model: &str, skills: &Path, work: &Path) {
    let has_playwright = std::process::Command::new("python3")
        .args(["-c", "import playwright"])
        .status()
        .is_ok_and(|s| s.success());
    let Ok(chrome) = seamark::browser::find_chromium(None) else {
        println!("\nno Chromium: the comparison with Playwright is left out");
        return;
    };
    if !has_playwright {
        println!(
            "\nno Playwright for Python (scripts/setup.sh installs it): the comparison is left out"
        );
        return;
    }
    let seamark = env!("CARGO_BIN_EXE_seamark");
    let name = std::fs::read_dir(skills)
        .expect("skills")
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(str::to_string)
        })
        .next()
        .expect("a skill was learned");
    let script = work.join("skill.py");
    let exported = std::process::Command::new(seamark)
        .args(["skill", "export", &name, "--lang", "python", "--out"])
        .arg(&script)
        .arg("--skills")
        .arg(skills)
        .status()
        .expect("seamark skill export");
    assert!(exported.success(), "the skill was exported");
    let task = task("Data Engineer", "Pune");
    let url = board.url("index.html");
    let mut rows: Vec<Round> = Vec::new();
    for round in 0..ROUNDS {
        let mut by_skill = std::process::Command::new(seamark);
        by_skill
            .args([
                "run",
                "--task",
                &task,
                "--url",
                &url,
                "--max-steps",
                "8",
                "--out",
            ])
            .arg(work.join(format!("process-{round}")))
            .arg("--skills")
            .arg(skills)
            .env("OPENAI_BASE_URL", format!("{model}/v1"))
            .env("SEAMARK_MODEL", "openai/scripted")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut by_script = std::process::Command::new("python3");
        by_script
            .arg(&script)
            .args([
                "--url",
                &url,
                "--keywords",
                "Data Engineer",
                "--location",
                "Pune",
            ])
            .env("CHROME_PATH", &chrome);
        let (Some(skill), Some(playwright)) = (timed(board, by_skill), timed(board, by_script))
        else {
            println!("\na round failed: the comparison is left out");
            return;
        };
        rows.push([skill, playwright]);
    }
    println!(
        "\nthe task from its skill beside the skill's Playwright script, {ROUNDS} rounds in turn\n"
    );
    println!("| round | seamark, process | Playwright, process | ratio | seamark, in the browser | Playwright, in the browser | ratio |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (i, [(sw, sb), (pw, pb)]) in rows.iter().enumerate() {
        println!(
            "| {} | {sw:.2} s | {pw:.2} s | {:.2} | {sb:.2} s | {pb:.2} s | {:.2} |",
            i + 1,
            sw / pw,
            sb / pb
        );
    }
    let median = |f: &dyn Fn(&Round) -> f64| seamark::figures::median(rows.iter().map(f).collect());
    println!(
        "| **median** | {:.2} s | {:.2} s | {:.2} | {:.2} s | {:.2} s | {:.2} |",
        median(&|r| r[0].0),
        median(&|r| r[1].0),
        median(&|r| r[0].0 / r[1].0),
        median(&|r| r[0].1),
        median(&|r| r[1].1),
        median(&|r| r[0].1 / r[1].1),
    );
}
