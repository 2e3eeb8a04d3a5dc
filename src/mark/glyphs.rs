//! The digit atlas: the ten digits of the bundled font rasterized once at the
//! label size, then blitted. Text rasterization is most of the drawing cost
//! (docs/notes.md), and an atlas makes every label the same pixels.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};

/// The one font seamark draws with (DejaVu Sans Mono Bold, license beside it).
pub const FONT_BYTES: &[u8] = include_bytes!("../../fonts/DejaVuSansMono-Bold.ttf");

/// Coverage bitmaps of the digits 0–9 at one size.
#[derive(Debug, Clone)]
pub struct DigitAtlas {
    /// Horizontal advance of one digit (monospace), in pixels.
    pub advance: u32,
    /// Height of the digit cell (from the digits' top to their baseline), in pixels.
    pub height: u32,
    /// Per digit: width, and `height` rows of coverage 0–255.
    cells: Vec<(u32, Vec<u8>)>,
}

impl DigitAtlas {
    /// Rasterizes the digits so that they stand `digit_height` pixels tall.
    pub fn new(digit_height: f32) -> Self {
        let font = FontRef::try_from_slice(FONT_BYTES).ok();
        let digit_height = digit_height.clamp(4.0, 400.0);
        let Some(font) = font else {
            // The font is compiled in; this cannot fail unless the file is corrupt,
            // which the tests would show. Keep a blank atlas rather than panic.
            return Self::blank(digit_height);
        };
        // Digit height of DejaVu Sans Mono is 0.729 em.
        let scale = PxScale::from(digit_height / 0.729);
        let scaled = font.as_scaled(scale);
        let advance = scaled.h_advance(font.glyph_id('0')).ceil().max(1.0) as u32;
        let height = digit_height.ceil() as u32;
        let baseline = height as f32;
        let cells = ('0'..='9')
            .map(|c| {
                let mut cov = vec![0u8; (advance * height) as usize];
                let glyph = font
                    .glyph_id(c)
                    .with_scale_and_position(scale, ab_glyph::point(0.0, baseline));
                if let Some(outline) = font.outline_glyph(glyph) {
                    let b = outline.px_bounds();
                    outline.draw(|x, y, v| {
                        let px = x as i64 + b.min.x as i64;
                        let py = y as i64 + b.min.y as i64;
                        if px >= 0 && py >= 0 && (px as u32) < advance && (py as u32) < height {
                            let i = (py as u32 * advance + px as u32) as usize;
                            cov[i] = cov[i].max((v.clamp(0.0, 1.0) * 255.0).round() as u8);
                        }
                    });
                }
                (advance, cov)
            })
            .collect();
        Self {
            advance,
            height,
            cells,
        }
    }

    fn blank(digit_height: f32) -> Self {
        let height = digit_height.ceil() as u32;
        let advance = (height * 6 / 10).max(1);
        Self {
            advance,
            height,
            cells: vec![(advance, vec![0; (advance * height) as usize]); 10],
        }
    }

    /// Every digit left ink: the font was read and draws (a damaged font
    /// leaves a blank atlas).
    pub fn inked(&self) -> bool {
        self.cells.iter().all(|(_, cov)| cov.iter().any(|&v| v > 0))
    }

    /// Width in pixels of a number's digits.
    pub fn text_width(&self, n: u32) -> u32 {
        digit_count(n) * self.advance
    }

    /// Coverage of row `y` of digit `d`'s cell, `advance` values (empty past
    /// the last row).
    pub fn row(&self, d: u8, y: u32) -> &[u8] {
        let (w, cov) = &self.cells[usize::from(d.min(9))];
        let start = (y * w) as usize;
        cov.get(start..start + *w as usize).unwrap_or(&[])
    }
}

/// How many decimal digits `n` has.
fn digit_count(n: u32) -> u32 {
    n.checked_ilog10().map_or(1, |l| l + 1)
}

/// The decimal digits of `n`, most significant first (no allocation: this
/// runs for every chip sized and every chip drawn).
pub fn digits(n: u32) -> impl Iterator<Item = u8> {
    (0..digit_count(n))
        .rev()
        .map(move |k| (n / 10u32.pow(k) % 10) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_of_numbers() {
        let all = |n| digits(n).collect::<Vec<u8>>();
        assert_eq!(all(0), [0]);
        assert_eq!(all(907), [9, 0, 7]);
        assert_eq!(all(1000), [1, 0, 0, 0]);
        assert_eq!(all(u32::MAX), [4, 2, 9, 4, 9, 6, 7, 2, 9, 5]);
    }

    #[test]
    fn atlas_has_ink_for_every_digit() {
        let atlas = DigitAtlas::new(12.0);
        assert_eq!(atlas.height, 12);
        for d in 0..10u8 {
            let ink: u32 = (0..atlas.height)
                .flat_map(|y| atlas.row(d, y))
                .map(|&a| u32::from(a))
                .sum();
            assert!(ink > 255 * 5, "digit {d} has almost no ink: {ink}");
        }
    }
}
