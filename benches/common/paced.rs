//! Timings taken one run at a time, each after work that is not counted.

use std::time::{Duration, Instant};

/// The time `iters` runs of `timed` take, each after a 70 ms pause and a run
/// of `other` (neither counted).
pub fn alternating<T, U, F: std::future::Future<Output = T>, G: std::future::Future<Output = U>>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    timed: impl Fn() -> F,
    other: impl Fn() -> G,
) -> Duration {
    let pause = || tokio::time::sleep(Duration::from_millis(70));
    // An async block: the sleeps must be made inside the runtime.
    timed_after(rt, iters, timed, || async {
        pause().await;
        std::hint::black_box(other().await);
        pause().await;
    })
}

/// The time `iters` runs of `look` take, each after `prepare` (not counted).
pub fn timed_after<T, F: std::future::Future<Output = T>, P: std::future::Future<Output = ()>>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    look: impl Fn() -> F,
    prepare: impl Fn() -> P,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        rt.block_on(prepare());
        let start = Instant::now();
        std::hint::black_box(rt.block_on(look()));
        total += start.elapsed();
    }
    total
}

/// Benchmarks `floor` (a bare screenshot) and `name` in one group, taken in
/// turn (see [`alternating`]): each timing its own side, so that neither
/// inherits different after-effects, and a machine whose speed drifts slows
/// both alike.
pub fn beside_the_floor<
    T,
    U,
    F: std::future::Future<Output = T>,
    G: std::future::Future<Output = U>,
>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rt: &tokio::runtime::Runtime,
    floor: impl Fn() -> F + Copy,
    name: &str,
    look: impl Fn() -> G + Copy,
) {
    group.bench_function("screenshot", |b| {
        b.iter_custom(|iters| alternating(rt, iters, floor, look))
    });
    group.bench_function(name, |b| {
        b.iter_custom(|iters| alternating(rt, iters, look, floor))
    });
}
