//! Colors: a palette of clearly distinguishable box colors, and label text
//! colors chosen for contrast (WCAG 2 contrast ratio).

/// An sRGB color.
pub type Rgb = [u8; 3];

/// Box and chip colors: saturated, far apart in hue and lightness.
pub const PALETTE: [Rgb; 12] = [
    [230, 25, 75],  // red
    [60, 180, 75],  // green
    [0, 130, 200],  // blue
    [245, 130, 48], // orange
    [145, 30, 180], // purple
    [0, 160, 160],  // teal
    [240, 50, 230], // magenta
    [128, 128, 0],  // olive
    [170, 110, 40], // brown
    [0, 0, 128],    // navy
    [128, 0, 0],    // maroon
    [255, 200, 0],  // gold
];

/// Relative luminance per WCAG 2.
pub fn luminance(c: Rgb) -> f64 {
    let lin = |v: u8| {
        let s = f64::from(v) / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])
}

/// WCAG 2 contrast ratio between two colors, 1 to 21.
pub fn contrast(a: Rgb, b: Rgb) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

/// Black or white, whichever contrasts more with the chip color.
pub fn text_color(chip: Rgb) -> Rgb {
    let (black, white) = ([0, 0, 0], [255, 255, 255]);
    if contrast(chip, black) >= contrast(chip, white) {
        black
    } else {
        white
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chip_color_has_a_text_color_of_contrast_at_least_4_5() {
        for c in PALETTE {
            let ratio = contrast(c, text_color(c));
            assert!(ratio >= 4.5, "{c:?}: {ratio:.2}");
        }
    }

    #[test]
    fn contrast_matches_wcag_extremes() {
        assert!((contrast([0, 0, 0], [255, 255, 255]) - 21.0).abs() < 1e-9);
        assert!((contrast([10, 20, 30], [10, 20, 30]) - 1.0).abs() < 1e-9);
    }
}
