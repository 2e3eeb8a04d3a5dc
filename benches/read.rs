//! READ beside the enumeration of the same page, in the same run:
//! `screenshot` (one bare screenshot, the floor), `read` (what a READ does:
//! as much of the page as its first part of 6,000 characters needs; the two
//! alternate, each after a 70 ms pause, as perception's paced groups do),
//! `enumerate` (the element table alone) and `read_all` (the whole page as
//! blocks and Markdown, frames included). Before the timings, one line per page gives
//! what a read yields: Markdown characters, words read, the words a person
//! sees (`innerText`), and characters per visible word.
//!
//! `cargo bench --bench read`.
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

use common::paced::beside_the_floor;
use common::server;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use seamark::browser::{BrowserOptions, Session};
use seamark::perceive::{self, PerceiveOptions};
use seamark::read::{self, Marks, ReadOptions, Scope, Values};

/// The dense page, saved real pages, a 50,000-node page and a 10,000-row table.
const PAGES: &[&str] = &[
    "dense",
    "corpus/06-en-wikipedia-org/index.html",
    "corpus/00-old-reddit-com/index.html",
    "corpus/10-github-com/index.html",
    "big",
    "table",
];

fn name_of(page: &str) -> String {
    page.trim_start_matches("corpus/")
        .trim_end_matches("/index.html")
        .to_string()
}

async fn visible_words(session: &Session) -> usize {
    let mut params = chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::new(
        "(document.body.innerText.match(/[\\p{L}\\p{N}]+/gu) || []).length",
    );
    params.return_by_value = Some(true);
    session
        .page()
        .execute(params)
        .await
        .ok()
        .and_then(|r| r.result.result.value.clone())
        .and_then(|v| v.as_u64())
        .unwrap_or(0) as usize
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
    let read_options = ReadOptions::default();
    for page in PAGES {
        let table = rt.block_on(async {
            session
                .navigate(&main.url(page), Duration::from_secs(30))
                .await
                .expect("open page");
            tokio::time::sleep(Duration::from_millis(300)).await;
            perceive::element_table(session.page(), session.viewport(), &options)
                .await
                .expect("enumerate")
        });
        let marks = Marks {
            table: Some(&table),
            values: Values::All,
        };
        let read_once = || async {
            read::read(
                session.page(),
                session.viewport(),
                &Scope::Page,
                &marks,
                &read_options,
            )
            .await
            .expect("read")
        };
        // As READ reads: only as far as its first part needs.
        let first_part = || async {
            let (page, viewport) = (session.page(), session.viewport());
            let max = read::DEFAULT_READ_CHARS;
            let mut reader = read::Reader::start(page, viewport, Scope::Page, &marks, max)
                .await
                .expect("read");
            reader
                .next_part(page, viewport, &marks, max)
                .await
                .expect("part")
        };
        let (reading, seen) =
            rt.block_on(async { (read_once().await, visible_words(&session).await) });
        let chars = reading.markdown.chars().count();
        eprintln!(
            "read-size {}: {chars} chars, {} words read, {seen} visible words, {:.2} chars per visible word, first part {} chars{}",
            name_of(page),
            reading.words,
            chars as f64 / seen.max(1) as f64,
            reading.part(0, read::DEFAULT_READ_CHARS).text.chars().count(),
            if reading.cut { " (cut at the collection bound)" } else { "" }
        );
        let mut group = c.benchmark_group(format!("read/{}", name_of(page)));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
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
        let shot = || async {
            seamark::browser::screenshot(session.page())
                .await
                .expect("screenshot")
        };
        beside_the_floor(&mut group, &rt, shot, "read", first_part);
        group.bench_function("read_all", |b| b.iter(|| rt.block_on(read_once())));
        group.finish();
    }
    rt.block_on(session.close());
}

criterion_group!(benches, bench);
criterion_main!(benches);
