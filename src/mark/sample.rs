//! A deterministic crowded layout of marks, for benchmarks and golden tests.

use super::layout::{IRect, MarkBox, MarkKind};

/// `n` interactable marks scattered over a `width`×`height` image by a fixed
/// pseudo-random sequence (boxes 12–101 px wide, 10–33 px tall): the same
/// marks for the same arguments, on every machine.
pub fn crowded_marks(n: u32, width: u32, height: u32, seed: u64) -> Vec<MarkBox> {
    let mut state = seed;
    let mut next = |bound: u32| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % u64::from(bound.max(1))) as u32
    };
    (1..=n)
        .map(|id| {
            let w = (12 + next(90)).min(width);
            let h = (10 + next(24)).min(height);
            let x = next(width - w + 1);
            let y = next(height - h + 1);
            MarkBox {
                id,
                rect: IRect {
                    x: x as i32,
                    y: y as i32,
                    w: w as i32,
                    h: h as i32,
                },
                kind: MarkKind::Interactable,
            }
        })
        .collect()
}
