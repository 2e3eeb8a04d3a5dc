//! The run's prompt tokens per step as a small bar chart: an inline SVG of
//! numbers and fixed words only (nothing from the page), each bar the step's
//! text below and its images above, its exact figures in its tooltip.

use std::fmt::Write;

use crate::records::StepRecord;

/// The chart's drawing area, in SVG units.
const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 90.0;
/// Room on the left for the scale, and below for the step numbers.
const LEFT: f64 = 44.0;
const BELOW: f64 = 14.0;

/// Most bars drawn: a longer run's steps share bars, each the largest of
/// its steps (a bar a step made a chart of 8 MB for 44,811 steps, in 600
/// units of width).
const MAX_BARS: usize = 300;

/// The chart of the steps' prompt tokens, when some step sent a prompt.
pub(crate) fn tokens(steps: &[StepRecord]) -> Option<String> {
    let most = steps.iter().map(|s| s.prompt_tokens.total).max()?;
    if most == 0 {
        return None;
    }
    let scale = HEIGHT / most as f64;
    let per_bar = steps.len().div_ceil(MAX_BARS);
    let bars = steps.len().div_ceil(per_bar);
    let slot = WIDTH / bars as f64;
    let bar = (slot * 0.8).max(1.0);
    let mut svg = String::new();
    for (i, group) in steps.chunks(per_bar).enumerate() {
        let (Some(s), Some(first), Some(last)) = (
            group.iter().max_by_key(|s| s.prompt_tokens.total),
            group.first(),
            group.last(),
        ) else {
            continue;
        };
        let t = &s.prompt_tokens;
        let which = if group.len() == 1 {
            format!("step {}", s.step)
        } else {
            format!(
                "steps {}–{}, the most at step {}",
                first.step, last.step, s.step
            )
        };
        let x = LEFT + i as f64 * slot;
        let text_h = t.text as f64 * scale;
        let image_h = t.images as f64 * scale;
        let _ = write!(
            svg,
            r#"<g><title>{which}: {} text + {} image tokens</title><rect class="text" x="{x:.1}" y="{:.1}" width="{bar:.1}" height="{text_h:.1}"/><rect class="images" x="{x:.1}" y="{:.1}" width="{bar:.1}" height="{image_h:.1}"/></g>"#,
            t.text,
            t.images,
            HEIGHT - text_h,
            HEIGHT - text_h - image_h,
        );
    }
    let (first, last) = (steps.first()?.step, steps.last()?.step);
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="10" text-anchor="end">{most}</text><text x="{:.1}" y="{HEIGHT}" text-anchor="end">0</text><text x="{LEFT}" y="{:.1}">step {first}</text><text x="{:.1}" y="{:.1}" text-anchor="end">step {last}</text>"#,
        LEFT - 4.0,
        LEFT - 4.0,
        HEIGHT + BELOW - 2.0,
        LEFT + WIDTH,
        HEIGHT + BELOW - 2.0,
    );
    Some(format!(
        r#"<svg class="tokens" viewBox="0 0 {} {}" role="img" aria-label="prompt tokens per step">{svg}</svg>"#,
        LEFT + WIDTH,
        HEIGHT + BELOW
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_is_a_bar_of_its_text_under_its_images() {
        let mut steps = Vec::new();
        for (n, (text, images)) in [(1000, 1105), (1500, 0), (2000, 2210)]
            .into_iter()
            .enumerate()
        {
            let mut s = StepRecord::new(n + 1, crate::records::Shown::default());
            s.prompt_tokens = crate::brain::PromptTokens {
                text,
                images,
                total: text + images,
            };
            steps.push(s);
        }
        let svg = tokens(&steps).expect("a chart");
        assert_eq!(svg.matches("<rect class=\"text\"").count(), 3);
        assert!(svg.contains("<title>step 3: 2000 text + 2210 image tokens</title>"));
        // The tallest bar fills the height: 4210 tokens is 90 units.
        assert!(
            svg.contains(r#"y="0.0" width="160.0" height="47.2""#),
            "{svg}"
        );
        assert!(svg.contains(">4210</text>"));
        assert_eq!(tokens(&[]), None);
    }
}
