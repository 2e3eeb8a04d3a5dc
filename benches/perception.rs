//! Perception cost beside the bare screenshot, per page, in the same run:
//! `screenshot` (one raw `Page.captureScreenshot`, the floor), `enumerate` (the
//! element table alone) and `perceive` (table, signature, screenshot and the
//! consistency check). Target: perceive ≤ 1.3 × screenshot.
//!
//! `cargo bench --bench perception`; `scripts/bench-table.py` prints the ratios.

#[path = "../tests/it/server.rs"]
#[allow(dead_code)]
mod server;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use seamark::browser::{BrowserOptions, Session};
use seamark::perceive::{self, PerceiveOptions};

/// Fixture pages, a few saved real pages, and the generated dense page.
const PAGES: &[&str] = &[
    "form.html",
    "cookie.html",
    "frames.html",
    "shadow.html",
    "checkboxes.html",
    "corpus/06-en-wikipedia-org/index.html",
    "corpus/10-github-com/index.html",
    "corpus/58-wired-com/index.html",
    "corpus/00-old-reddit-com/index.html",
    "dense",
];

fn name_of(page: &str) -> String {
    page.trim_start_matches("corpus/")
        .trim_end_matches("/index.html")
        .trim_end_matches(".html")
        .to_string()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (session, main, _other) = rt.block_on(async {
        let other = server::Server::start(None).await;
        let main = server::Server::start(Some(other.base.clone())).await;
        let session = Session::start(&BrowserOptions::default())
            .await
            .expect("launch Chromium");
        (session, main, other)
    });
    let options = PerceiveOptions::default();
    for page in PAGES {
        rt.block_on(async {
            session
                .navigate(&main.url(page), Duration::from_secs(20))
                .await
                .expect("open page");
            tokio::time::sleep(Duration::from_millis(300)).await;
        });
        let mut group = c.benchmark_group(format!("perception/{}", name_of(page)));
        group
            .sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        group.bench_function("screenshot", |b| {
            b.iter(|| {
                rt.block_on(perceive::screenshot(session.page()))
                    .expect("screenshot")
            })
        });
        group.bench_function("enumerate", |b| {
            b.iter(|| {
                rt.block_on(perceive::element_table(
                    session.page(),
                    session.viewport(),
                    &options,
                ))
                .expect("enumerate")
            })
        });
        group.bench_function("perceive", |b| {
            b.iter(|| {
                rt.block_on(perceive::perceive(&session, &options))
                    .expect("perceive")
            })
        });
        group.finish();
    }
    rt.block_on(session.close());
}

criterion_group!(benches, bench);
criterion_main!(benches);
