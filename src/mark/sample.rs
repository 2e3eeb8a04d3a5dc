//! A deterministic crowded layout of marks, for benchmarks and golden tests.

use super::layout::{IRect, MarkBox, MarkKind};

/// `n` interactable marks on a `width`×`height` image laid out like a dense page
/// of controls: a grid of cells just large enough for `n`, each holding one box
/// of 45–94 % of its cell's width and height at a jittered position. Boxes never
/// overlap; ids run in reading order. A fixed pseudo-random sequence makes the
/// same marks for the same arguments on every machine.
pub fn crowded_marks(n: u32, width: u32, height: u32, seed: u64) -> Vec<MarkBox> {
    let mut state = seed;
    let mut next = |bound: u32| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % u64::from(bound.max(1))) as u32
    };
    let aspect = f64::from(width.max(1)) / f64::from(height.max(1));
    let rows = ((f64::from(n) / aspect).sqrt().ceil() as u32).max(1);
    let cols = n.div_ceil(rows).max(1);
    let (cell_w, cell_h) = ((width / cols).max(1), (height / rows).max(1));
    (0..n)
        .map(|k| {
            let (col, row) = (k % cols, k / cols);
            let w = (cell_w * (45 + next(50)) / 100).max(1);
            let h = (cell_h * (45 + next(50)) / 100).max(1);
            let x = col * cell_w + next(cell_w - w + 1);
            let y = row * cell_h + next(cell_h - h + 1);
            MarkBox {
                id: k + 1,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowded_boxes_fit_the_image_and_never_overlap() {
        let marks = crowded_marks(1000, 1280, 800, 7);
        assert_eq!(marks.len(), 1000);
        for (i, a) in marks.iter().enumerate() {
            assert!(a.rect.inside(1280, 800), "{a:?}");
            assert!(marks[i + 1..].iter().all(|b| a.rect.overlap(&b.rect) == 0));
        }
        assert_eq!(marks, crowded_marks(1000, 1280, 800, 7), "deterministic");
    }
}
