//! Mark rendering: layout plus drawing for 30, 300, 1,000 and 3,000 marks at
//! 1280×800 and 1920×1080, serial and parallel in the same run; and each
//! encoder on a marked 1280×800 image. Targets: 1,000 marks at 1280×800 in
//! ≤ 3 ms median, parallel ≥ 1.5× faster than serial at 1,000 marks.
//!
//! `control/two_halves` measures, in the same run, how much two threads gain
//! on pure arithmetic: on this shared machine that swings from 1.0× to 1.9×.
//!
//! `cargo bench --bench marks`; `scripts/bench-table.py` prints the ratios.
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

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use image::RgbImage;
use seamark::mark::{self, Encoding, MarkStyle};

fn page_like(w: u32, h: u32) -> RgbImage {
    RgbImage::from_fn(w, h, |x, y| {
        if (x / 160 + y / 100) % 5 == 0 {
            image::Rgb([215, 225, 240])
        } else {
            image::Rgb([250, 250, 250])
        }
    })
}

fn render(c: &mut Criterion) {
    for (w, h) in [(1280, 800), (1920, 1080), (2560, 1600)] {
        let img = page_like(w, h);
        let mut group = c.benchmark_group(format!("marks/{w}x{h}"));
        group.sample_size(30);
        for n in [30, 300, 1000, 3000] {
            if w > 1920 && n != 1000 {
                continue;
            }
            let marks = mark::crowded_marks(n, w, h, 7);
            for (label, parallel) in [("serial", false), ("parallel", true)] {
                let style = MarkStyle {
                    parallel,
                    ..MarkStyle::default()
                };
                group.bench_with_input(BenchmarkId::new(label, n), &marks, |b, marks| {
                    // The caller owns the decoded screenshot: its copy is not
                    // part of rendering (it is `copy_only`, for scale).
                    b.iter_batched(
                        || img.clone(),
                        |img| mark::render(img, marks, &style),
                        BatchSize::LargeInput,
                    )
                });
            }
        }
        let marks = mark::crowded_marks(1000, w, h, 7);
        for (label, parallel) in [("layout_serial", false), ("layout_parallel", true)] {
            let style = MarkStyle {
                parallel,
                ..MarkStyle::default()
            };
            group.bench_function(format!("{label}/1000"), |b| {
                b.iter(|| mark::plan_labels(&marks, w, h, &style))
            });
        }
        group.bench_function("copy_only", |b| b.iter(|| img.clone()));
        group.finish();
    }
}

fn encode(c: &mut Criterion) {
    let img = page_like(1280, 800);
    let marked = mark::render(
        img.clone(),
        &mark::crowded_marks(300, 1280, 800, 7),
        &MarkStyle::default(),
    );
    let mut group = c.benchmark_group("encode/1280x800");
    group.sample_size(20);
    for enc in [Encoding::Png, Encoding::Jpeg(80), Encoding::Webp] {
        group.bench_function(enc.extension(), |b| {
            b.iter(|| mark::encode(&marked, enc).expect("encode"))
        });
    }
    group.bench_function("downscale_to_1000", |b| {
        b.iter(|| mark::downscale(&marked, 1000))
    });
    // What the model's image was shrunk with before: `image`'s thumbnail.
    group.bench_function("downscale_to_1000 (image thumbnail)", |b| {
        b.iter(|| image::imageops::thumbnail(&marked, 1000, 625))
    });
    group.finish();
}

/// Arithmetic that takes about a millisecond and cannot be optimized away.
fn busy(n: u64) -> u64 {
    (0..n).fold(1u64, |x, i| {
        x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i)
    })
}

/// What two cores give right now: two equal halves of pure arithmetic, one
/// after the other and then with `rayon::join`. This machine is shared; read
/// the serial/parallel ratios of the marks against this one.
fn control(c: &mut Criterion) {
    let mut group = c.benchmark_group("control/two_halves");
    group.sample_size(30);
    let n = 5_000_000;
    group.bench_function("serial", |b| b.iter(|| (busy(n), busy(n))));
    group.bench_function("parallel", |b| {
        b.iter(|| rayon::join(|| busy(n), || busy(n)))
    });
    group.finish();
}

criterion_group!(benches, render, control, encode);
criterion_main!(benches);
