//! Perception cost beside the bare screenshot, per page, in the same run:
//! `screenshot` (one raw `Page.captureScreenshot`, the floor), `enumerate` (the
//! element table alone) and `perceive` (table, signature, screenshot and the
//! consistency check), one after another on the same page. Target: perceive ≤
//! 1.3 × screenshot. The `perception_paced` groups time screenshot and perceive
//! after a quiet pause each, as an agent perceives, taken in turn in both
//! benchmarks; the `perception_first`
//! groups time a first look: screenshot and perceive right after the page
//! loads, also taken in turn, each on a page loaded anew.
//!
//! `cargo bench --bench perception`; `scripts/bench-table.py` prints the ratios.
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

use common::paced::{beside_the_floor, timed_after};
use common::server;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
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
    let rt = common::runtime();
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
                rt.block_on(seamark::browser::screenshot(session.page()))
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

        // Paced, as an agent perceives: after a quiet moment (acting, waiting
        // for the page to settle), not right after the last screenshot. Back
        // to back, each screenshot waits for the browser's frame after the
        // last one, which rounds both sides to steps of about 4 ms.
        let mut paced = c.benchmark_group(format!("perception_paced/{}", name_of(page)));
        paced
            .sample_size(20)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        // The two alternate in both benchmarks, each timing its own side:
        // each screenshot and each perception comes after the other, so
        // neither inherits different after-effects, and a machine whose speed
        // drifts from second to second slows both alike.
        let shot = || async {
            seamark::browser::screenshot(session.page())
                .await
                .expect("screenshot")
        };
        let look = || async {
            perceive::perceive(&session, &options)
                .await
                .expect("perceive")
        };
        beside_the_floor(&mut paced, &rt, shot, "perceive", look);
        paced.finish();

        // A first look, as after a navigation: the page just loaded and idle,
        // nothing learned about its document yet (node identities, the
        // enumerator compiled for it). The load is not timed.
        let url = main.url(page);
        let mut first = c.benchmark_group(format!("perception_first/{}", name_of(page)));
        first
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
        // The floor and the look in turn, each on a page loaded anew, as
        // `beside_the_floor` does for quiet looks: a machine whose speed
        // drifts slows both alike.
        first.bench_function("screenshot", |b| {
            b.iter_custom(|iters| after_load(&rt, &session, &url, iters, shot, look))
        });
        first.bench_function("perceive", |b| {
            b.iter_custom(|iters| after_load(&rt, &session, &url, iters, look, shot))
        });
        // As the executor looks after a command that loaded the page: the
        // document primed while the page settles (in the same moment after
        // the load as the others), in turn with the floor.
        first.bench_function("perceive, primed", |b| {
            b.iter_custom(|iters| {
                timed_after(&rt, iters, look, || async {
                    load(&session, &url, None).await;
                    std::hint::black_box(shot().await);
                    load(&session, &url, Some(&options)).await;
                })
            })
        });
        first.finish();
    }
    rt.block_on(session.close());
}

/// The time `iters` runs of `look` take, each on the page loaded anew,
/// after a run of `other` on a page loaded anew too (the loads, a short
/// settle after each and `other` are not counted).
fn after_load<T, U, F: std::future::Future<Output = T>, G: std::future::Future<Output = U>>(
    rt: &tokio::runtime::Runtime,
    session: &Session,
    url: &str,
    iters: u64,
    look: impl Fn() -> F,
    other: impl Fn() -> G,
) -> Duration {
    timed_after(rt, iters, look, || async {
        load(session, url, None).await;
        std::hint::black_box(other().await);
        load(session, url, None).await;
    })
}

/// Loads `url` anew, primes it with `prime` if given, and lets the page be
/// a moment.
async fn load(session: &Session, url: &str, prime: Option<&PerceiveOptions>) {
    session
        .navigate(url, Duration::from_secs(20))
        .await
        .expect("reload page");
    if let Some(options) = prime {
        perceive::prime(session.page(), session.viewport(), options).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
}

criterion_group!(benches, bench);
criterion_main!(benches);
