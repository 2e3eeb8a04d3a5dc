//! What the agent waits for at the end of a run: `report.html` and `run.gif`
//! of a 30-step run, written from its run directory. The run is made of real
//! marked screenshots (ten saved pages, perceived and marked as a run does,
//! each used three times, so every frame differs from the one before: the
//! animation's worst case) and step records with commands and outcomes.
//!
//! Beside them, in the same run, the floor: reading and decoding the 30
//! screenshots, which any report of the images must do at least once.
//!
//! `cargo bench --bench report`.
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
use seamark::records::{BatchReport, Outcome, Shown, Status};

use common::server;

use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use rayon::prelude::*;
use seamark::agent::{StartRecord, StepRecord};
use seamark::browser::{BrowserOptions, Session};
use seamark::journal::Journal;
use seamark::mark::{self, Encoding, MarkStyle};
use seamark::perceive::{self, PerceiveOptions};
use seamark::report::{self, ReportOptions};

const PAGES: &[&str] = &[
    "corpus/00-old-reddit-com/index.html",
    "corpus/06-en-wikipedia-org/index.html",
    "corpus/10-github-com/index.html",
    "corpus/12-engadget-com/index.html",
    "corpus/16-teepublic-com/index.html",
    "corpus/18-pubmed-ncbi-nlm-nih-gov/index.html",
    "corpus/24-ft-com/index.html",
    "corpus/46-figma-com/index.html",
    "corpus/54-autotrader-co-uk/index.html",
    "corpus/58-wired-com/index.html",
];
const STEPS: usize = 30;

/// Marked screenshots of the pages, as PNG, as the agent saves them.
fn screenshots(rt: &tokio::runtime::Runtime) -> Vec<Vec<u8>> {
    rt.block_on(async {
        let server = server::Server::start(None).await;
        let session = Session::start(&BrowserOptions::default())
            .await
            .expect("launch Chromium");
        let mut shots = Vec::new();
        for page in PAGES {
            session
                .navigate(&server.url(page), Duration::from_secs(30))
                .await
                .expect("open page");
            tokio::time::sleep(Duration::from_millis(300)).await;
            let obs = perceive::perceive(&session, &PerceiveOptions::default())
                .await
                .expect("perceive");
            let image = mark::mark_observation(&obs, &MarkStyle::default(), &[]).expect("mark");
            shots.push(mark::encode(&image, Encoding::Png).expect("encode"));
        }
        session.close().await;
        shots
    })
}

/// A 30-step run directory: a start record, 30 steps with a screenshot and
/// two commands each (one failed every seventh step), no end record (as the
/// agent writes the report right after it, the end changes nothing here).
fn run_dir(dir: &Path, shots: &[Vec<u8>]) {
    let mut journal = Journal::create(dir).expect("journal");
    journal
        .write(&StartRecord {
            kind: "start",
            task: "Find the pricing of each plan".into(),
            url: "https://example.com/".into(),
            model: "openai/gpt-4o".into(),
            started: "2026-12-02T00:00:00Z".into(),
            seamark: env!("CARGO_PKG_VERSION").into(),
            max_steps: STEPS,
            policy: None,
        })
        .expect("start");
    for step in 1..=STEPS {
        let screenshot = journal
            .save_image(step, "png", &shots[(step - 1) % shots.len()])
            .expect("image");
        let outcome = |command: &str, status| Outcome {
            command: command.into(),
            status,
            message: "clicked link \"Pricing\"".into(),
            changes: vec!["navigated to https://example.com/pricing".into()],
            page_changed: false,
            ms: 120.0,
        };
        let failed = if step % 7 == 0 {
            Status::Failed
        } else {
            Status::Done
        };
        let shown = Shown {
            url: format!("https://example.com/page/{step}"),
            title: format!("Page {step}"),
            signature: format!("{step:016x}"),
            elements: "[1] link \"Pricing\"\n[2] button \"Sign in\"\n".repeat(40),
            notes: Vec::new(),
            screenshot,
        };
        let record = StepRecord {
            prompt_chars: 6000,
            images: 2,
            answer: Some("PLAN: look at the pricing\nSCROLL:down\nCLICK:2".into()),
            plan: Some("look at the pricing".into()),
            commands: vec!["SCROLL:down".into(), "CLICK:2".into()],
            report: Some(BatchReport {
                outcomes: vec![
                    outcome("SCROLL:down", Status::Done),
                    outcome("CLICK:2", failed),
                ],
                ..BatchReport::default()
            }),
            ..StepRecord::new(step, shown)
        };
        journal.write(&record).expect("step");
    }
}

fn bench(c: &mut Criterion) {
    let rt = common::runtime();
    let shots = screenshots(&rt);
    let dir = tempfile::tempdir().expect("temp dir");
    run_dir(dir.path(), &shots);
    let written = report::write(dir.path()).expect("report");
    assert!(written.problems.is_empty(), "{:?}", written.problems);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let pngs: u64 = (1..=STEPS)
        .map(|s| size(&dir.path().join(format!("step-{s:03}.png"))))
        .sum();
    eprintln!(
        "report-size: report.html {} bytes, run.gif {} bytes for {STEPS} steps ({} bytes of PNG screenshots)",
        size(&written.html),
        written.animation.as_deref().map(size).unwrap_or(0),
        pngs
    );
    let mut group = c.benchmark_group(format!("report/{STEPS}-steps"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("decode_screenshots", |b| {
        b.iter(|| {
            (1..=STEPS)
                .into_par_iter()
                .map(|s| {
                    let bytes =
                        std::fs::read(dir.path().join(format!("step-{s:03}.png"))).expect("read");
                    image::load_from_memory(&bytes).expect("decode").to_rgb8()
                })
                .count()
        })
    });
    group.bench_function("report_html", |b| {
        let options = ReportOptions {
            no_animation: true,
            ..ReportOptions::default()
        };
        b.iter(|| report::write_with(dir.path(), &options).expect("report"))
    });
    group.bench_function("report_and_animation", |b| {
        b.iter(|| report::write(dir.path()).expect("report"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
