//! Latency from a command to the settled page, as the executor runs it: the
//! input events, the wait for the page to be quiet, and the look afterwards.
//! `click` toggles a checkbox (grid.html), and `click at a point` does so
//! at the middle of its box (`CLICK:@x,y`, at 1280×800 a pixel of the image
//! is a CSS pixel); `type` replaces a text field's
//! content with ten characters (inputs.html); the same beside a ticker that
//! rewrites two lines every 100 ms (ticker.html), and into a search box that
//! asks the server 150 ms after the last key (debounce.html). Each runs with the default quiet
//! window (200 ms) and a short one (50 ms), beside a bare screenshot of the
//! same page for scale. `navigation` times a step that loads a saved real
//! page (a click on a link of pages.html, the settle, the look after the
//! command and the next step's look), with and without the prime of the new
//! document while it settles (`ActOptions::prime`), taken in turn.
//!
//! `sequence` turns on 14 lamps (lamps.html: each click adds a line, so the
//! page changes after every one while the lamps stay as they were): in one
//! batch that goes on after each change (one model call), against 14
//! steps of a look and one click each (14 model calls, whose time is not
//! counted here: each is seconds with a real model).
//!
//! `cargo bench --bench actions`; `scripts/bench-table.py` prints the table.
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
use seamark::records::Status;

use common::server;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use seamark::act::{ActOptions, Executor, AMBIENT_GAP};
use seamark::browser::{BrowserOptions, Session};
use seamark::commands::parse;

/// (page, element name, command template with `{id}` or `{at}`, benchmark name).
const CASES: &[(&str, &str, &str, &str)] = &[
    ("grid.html", "Option 1", "CLICK:{id}", "click"),
    ("grid.html", "Option 1", "CLICK:{at}", "click at a point"),
    ("inputs.html", "Query", "TYPE:{id}:0123456789", "type"),
    (
        "ticker.html",
        "Agree",
        "CLICK:{id}",
        "click beside a 100 ms ticker",
    ),
    (
        "debounce.html",
        "City",
        "TYPE:{id}:Pa",
        "type into a 150 ms debounce",
    ),
];

fn bench(c: &mut Criterion) {
    let rt = common::runtime();
    let (mut session, main) = rt.block_on(async {
        let main = server::Server::start(None).await;
        let session = Session::start(&BrowserOptions::default())
            .await
            .expect("launch Chromium");
        (session, main)
    });
    for (page, name, template, bench_name) in CASES {
        // The point's group is the page's own too, measured in the same run.
        let suffix = if template.contains("{at}") {
            " (point)"
        } else {
            ""
        };
        let mut group = c.benchmark_group(format!(
            "actions/{}{suffix}",
            page.trim_end_matches(".html")
        ));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(4));
        rt.block_on(async {
            session
                .navigate(&main.url(page), Duration::from_secs(20))
                .await
                .expect("open page");
        });
        group.bench_function("screenshot", |b| {
            b.iter(|| {
                rt.block_on(seamark::browser::screenshot(session.page()))
                    .expect("screenshot")
            })
        });
        for quiet_ms in [200u64, 50] {
            let options = ActOptions {
                quiet: Duration::from_millis(quiet_ms),
                ..ActOptions::default()
            };
            let (mut exec, steps) = rt.block_on(async {
                let mut exec = Executor::new(&session, options).await;
                let obs = exec.observe(&session).await.expect("observe");
                let e = obs
                    .table
                    .elements
                    .iter()
                    .find(|e| e.name == *name)
                    .expect("the element is on the page");
                let r = e.visible.unwrap_or(e.bbox);
                let at = format!("@{},{}", (r.x + r.w / 2.0) as u32, (r.y + r.h / 2.0) as u32);
                let command = template
                    .replace("{id}", &e.id.to_string())
                    .replace("{at}", &at);
                let steps = parse(&command).expect("command");
                (exec, steps)
            });
            group.bench_function(format!("{bench_name} quiet {quiet_ms} ms"), |b| {
                b.iter_custom(|iters| {
                    let mut acting = Duration::ZERO;
                    for _ in 0..iters {
                        let t = Instant::now();
                        let report = rt.block_on(exec.run(&mut session, &steps));
                        acting += t.elapsed();
                        assert!(
                            report.outcomes.iter().all(|o| o.status != Status::Failed),
                            "{}",
                            report.feedback()
                        );
                        // A command that changed the page (the suggestions
                        // appeared) needs a new look for its ids, untimed.
                        if report.outcomes.iter().any(|o| o.page_changed) {
                            rt.block_on(async {
                                exec.observe(&session).await.expect("observe");
                                tokio::time::sleep(AMBIENT_GAP).await;
                            });
                        }
                    }
                    acting
                })
            });
        }
        group.finish();
    }
    navigations(c, &rt, &mut session, &main);
    sequence(c, &rt, &mut session, &main);
    rt.block_on(session.close());
}

/// 14 clicks on lamps.html, in one batch that goes on, and in 14 steps of
/// a look and a click (see the module's doc). Loading the page is not
/// counted; every lamp must be on at the end.
fn sequence(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    session: &mut Session,
    main: &server::Server,
) {
    let mut group = c.benchmark_group("sequence/14 clicks");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10));
    let lamps = main.url("lamps.html");
    for (name, one_batch) in [("one batch", true), ("14 steps", false)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    timed += rt.block_on(lamps_on(session, &lamps, one_batch));
                }
                timed
            })
        });
    }
    group.finish();
}

/// The time to turn on the 14 lamps from the first look: in one batch, or
/// a look and a click at a time.
async fn lamps_on(session: &mut Session, lamps: &str, one_batch: bool) -> Duration {
    session
        .navigate(lamps, Duration::from_secs(20))
        .await
        .expect("open lamps.html");
    let mut exec = Executor::new(session, ActOptions::default()).await;
    let obs = exec.observe(session).await.expect("observe");
    let ids: Vec<u32> = (1..=14)
        .map(|n| {
            obs.table
                .elements
                .iter()
                .find(|e| e.name == format!("Lamp {n}"))
                .expect("the lamp is on the page")
                .id
        })
        .collect();
    let start = Instant::now();
    if one_batch {
        let batch: Vec<String> = ids.iter().map(|id| format!("CLICK:{id}")).collect();
        let report = exec
            .run(session, &parse(&batch.join("\n")).expect("commands"))
            .await;
        assert!(report.dropped.is_empty(), "{}", report.feedback());
    } else {
        for (n, id) in ids.iter().enumerate() {
            if n > 0 {
                exec.observe(session).await.expect("observe");
            }
            exec.run(session, &parse(&format!("CLICK:{id}")).expect("command"))
                .await;
        }
    }
    let elapsed = start.elapsed();
    let on = session
        .page()
        .evaluate("document.querySelectorAll('#log li').length")
        .await
        .ok()
        .and_then(|v| v.into_value::<u64>().ok());
    assert_eq!(on, Some(14), "every lamp is on");
    elapsed
}

/// A step that loads a page: a click on a link of pages.html, the wait for
/// the page to settle, the look after the command and the next step's
/// look, with and without the prime of the new document while it settles,
/// taken in turn. Loading pages.html again is not counted.
fn navigations(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    session: &mut Session,
    main: &server::Server,
) {
    for link in ["github.com", "en.wikipedia.org", "old.reddit.com", "dense"] {
        let mut group = c.benchmark_group(format!("navigation/{link}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(4));
        let pages = main.url("pages.html");
        for (name, prime) in [("step, primed", true), ("step, not primed", false)] {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        // The other way first, untimed: the two take turns.
                        rt.block_on(navigation_step(session, &pages, link, !prime));
                        timed += rt.block_on(navigation_step(session, &pages, link, prime));
                    }
                    timed
                })
            });
        }
        group.finish();
    }
}

/// The time from a click on `link` of `pages` to the look after it, the
/// new page settled (see [`navigations`]).
async fn navigation_step(session: &mut Session, pages: &str, link: &str, prime: bool) -> Duration {
    session
        .navigate(pages, Duration::from_secs(20))
        .await
        .expect("open pages.html");
    let options = ActOptions {
        prime,
        ..ActOptions::default()
    };
    let mut exec = Executor::new(session, options).await;
    let obs = exec.observe(session).await.expect("observe");
    let id = obs
        .table
        .elements
        .iter()
        .find(|e| e.name == link)
        .expect("the link is on the page")
        .id;
    let steps = parse(&format!("CLICK:{id}")).expect("command");
    let start = Instant::now();
    let report = exec.run(session, &steps).await;
    assert!(
        report.outcomes.iter().all(|o| o.status != Status::Failed),
        "{}",
        report.feedback()
    );
    exec.observe(session).await.expect("observe");
    start.elapsed()
}

criterion_group!(benches, bench);
criterion_main!(benches);
