//! Mark rendering against golden images, compared to the pixel, and the
//! label-quality measures on every golden input.
//!
//! Each case lives in `golden/<case>/`: `screenshot.png` and `table.json` (the
//! inputs) and `expected.png`. Re-bless after an intended rendering change with
//! `SEAMARK_BLESS=1 cargo test --test it golden` (re-renders `expected.png`);
//! `SEAMARK_BLESS=inputs` also re-captures the inputs of the page cases in a
//! real browser and regenerates the synthetic ones.

use std::path::{Path, PathBuf};

use image::RgbImage;
use seamark::browser::Viewport;
use seamark::mark::{self, IRect, MarkBox, MarkKind, MarkStyle};
use seamark::perceive::{Element, ElementState, Rect};

use crate::support::Fixture;

/// Where one case's inputs come from.
enum Source {
    /// A page served by the test server, perceived in a real browser.
    Page(&'static str),
    /// Generated here: a plain background (1280×800 CSS pixels) and a table.
    Synthetic(fn() -> (RgbImage, Vec<Element>)),
}

struct Case {
    name: &'static str,
    source: Source,
    debug: bool,
    /// Device pixels per CSS pixel of the screenshot (`--scale`).
    scale: f64,
}

const CASES: &[Case] = &[
    Case {
        name: "form",
        source: Source::Page("form.html"),
        debug: false,
        scale: 1.0,
    },
    Case {
        name: "checkbox_grid",
        source: Source::Page("checkboxes.html"),
        debug: false,
        scale: 1.0,
    },
    Case {
        name: "crowded_1000",
        source: Source::Synthetic(crowded),
        debug: false,
        scale: 1.0,
    },
    Case {
        name: "edges",
        source: Source::Synthetic(edges),
        debug: false,
        scale: 1.0,
    },
    Case {
        name: "tiny_and_full",
        source: Source::Synthetic(tiny_and_full),
        debug: false,
        scale: 1.0,
    },
    Case {
        name: "debug_states",
        source: Source::Page("states.html"),
        debug: true,
        scale: 1.0,
    },
    Case {
        name: "corpus_wikipedia",
        source: Source::Page("corpus/06-en-wikipedia-org/index.html"),
        debug: false,
        scale: 1.0,
    },
    // At device scale 2 the screenshot has twice the pixels each way and the
    // table stays in CSS pixels: the boxes must still frame their elements.
    Case {
        name: "form_scale2",
        source: Source::Page("form.html"),
        debug: false,
        scale: 2.0,
    },
    Case {
        name: "edges_scale2",
        source: Source::Synthetic(edges),
        debug: false,
        scale: 2.0,
    },
];

fn golden_dir(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(case)
}

fn bless_mode() -> Option<String> {
    std::env::var("SEAMARK_BLESS")
        .ok()
        .filter(|v| !v.is_empty() && v != "0")
}

/// A synthetic element: a box, an id, a state.
fn element(id: u32, x: f64, y: f64, w: f64, h: f64, state: ElementState) -> Element {
    Element::new(id, "button", &format!("E{id}"), Rect { x, y, w, h }, state)
}

/// A quiet page-like background: light stripes and a few blocks.
fn background(w: u32, h: u32) -> RgbImage {
    RgbImage::from_fn(w, h, |x, y| {
        let band = (y / 40) % 2 == 0;
        let block = (x / 160 + y / 100) % 5 == 0;
        match (band, block) {
            (_, true) => image::Rgb([215, 225, 240]),
            (true, false) => image::Rgb([250, 250, 250]),
            (false, false) => image::Rgb([238, 238, 238]),
        }
    })
}

/// 1,000 marks on a crowded 1280×800 page: a deterministic pseudo-random layout.
fn crowded() -> (RgbImage, Vec<Element>) {
    let elements = mark::crowded_marks(1000, 1280, 800, 0x5eed_0001)
        .into_iter()
        .map(|m| {
            let r = m.rect;
            element(
                m.id,
                r.x.into(),
                r.y.into(),
                r.w.into(),
                r.h.into(),
                ElementState::Interactable,
            )
        })
        .collect();
    (background(1280, 800), elements)
}

/// Boxes touching every edge and corner of the image.
fn edges() -> (RgbImage, Vec<Element>) {
    let (w, h) = (1280.0, 800.0);
    let spots = [
        (0.0, 0.0, 120.0, 30.0),
        (600.0, 0.0, 100.0, 24.0),
        (w - 90.0, 0.0, 90.0, 30.0),
        (0.0, 380.0, 60.0, 40.0),
        (w - 70.0, 380.0, 70.0, 40.0),
        (0.0, h - 28.0, 140.0, 28.0),
        (640.0, h - 22.0, 80.0, 22.0),
        (w - 100.0, h - 30.0, 100.0, 30.0),
        (-30.0, 200.0, 80.0, 30.0),
        (w - 40.0, 250.0, 90.0, 30.0),
    ];
    let elements = spots
        .iter()
        .enumerate()
        .map(|(i, &(x, y, bw, bh))| element(i as u32 + 1, x, y, bw, bh, ElementState::Interactable))
        .collect();
    (background(1280, 800), elements)
}

/// Tiny 4×4 boxes, some in a cluster, inside one full-viewport box.
fn tiny_and_full() -> (RgbImage, Vec<Element>) {
    let mut elements = vec![element(
        1,
        0.0,
        0.0,
        1280.0,
        800.0,
        ElementState::Interactable,
    )];
    let spots = [
        (100.0, 100.0),
        (104.0, 100.0),
        (100.0, 104.0),
        (640.0, 400.0),
        (1270.0, 790.0),
        (0.0, 0.0),
    ];
    for (id, (x, y)) in (2..).zip(spots) {
        elements.push(element(id, x, y, 4.0, 4.0, ElementState::Interactable));
    }
    (background(1280, 800), elements)
}

async fn capture_page(page: &str, scale: f64, dir: &Path) {
    let viewport = Viewport {
        scale: scale.try_into().unwrap(),
        ..Viewport::default()
    };
    let fx = Fixture::open_with(page, viewport).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let seen = fx.perceive().await;
    std::fs::write(dir.join("screenshot.png"), &seen.obs.screenshot_png).unwrap();
    let json = serde_json::json!({ "elements": seen.obs.table.elements });
    std::fs::write(
        dir.join("table.json"),
        serde_json::to_vec_pretty(&json).unwrap(),
    )
    .unwrap();
    fx.close().await;
}

fn write_inputs(dir: &Path, img: &RgbImage, elements: &[Element]) {
    img.save(dir.join("screenshot.png")).unwrap();
    let json = serde_json::json!({ "elements": elements });
    std::fs::write(
        dir.join("table.json"),
        serde_json::to_vec_pretty(&json).unwrap(),
    )
    .unwrap();
}

/// The inputs of a case, captured or generated first when blessing asks for it.
async fn inputs(case: &Case) -> (RgbImage, Vec<Element>) {
    let dir = golden_dir(case.name);
    let recapture = bless_mode().as_deref() == Some("inputs");
    if recapture || !dir.join("table.json").is_file() {
        assert!(
            bless_mode().is_some(),
            "{}: golden inputs missing; run with SEAMARK_BLESS=inputs",
            case.name
        );
        std::fs::create_dir_all(&dir).unwrap();
        match case.source {
            Source::Page(page) => capture_page(page, case.scale, &dir).await,
            Source::Synthetic(make) => {
                let (img, elements) = make();
                let (w, h) = (
                    img.width() as f64 * case.scale,
                    img.height() as f64 * case.scale,
                );
                let img = image::imageops::resize(
                    &img,
                    w as u32,
                    h as u32,
                    image::imageops::FilterType::Nearest,
                );
                write_inputs(&dir, &img, &elements);
            }
        }
    }
    let img = mark::decode(&std::fs::read(dir.join("screenshot.png")).unwrap()).unwrap();
    let table: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("table.json")).unwrap()).unwrap();
    let elements: Vec<Element> = serde_json::from_value(table["elements"].clone()).unwrap();
    (img, elements)
}

fn style(debug: bool) -> MarkStyle {
    MarkStyle {
        debug,
        ..MarkStyle::default()
    }
}

fn marks_of(img: &RgbImage, elements: &[Element], case: &Case, debug: bool) -> Vec<MarkBox> {
    mark::marks_for(elements, case.scale, debug, img.width(), img.height())
}

/// Red where the images differ, a faded copy of the expected image elsewhere.
fn diff_image(expected: &RgbImage, actual: &RgbImage) -> RgbImage {
    RgbImage::from_fn(expected.width(), expected.height(), |x, y| {
        let e = expected.get_pixel(x, y);
        if actual.get_pixel_checked(x, y) == Some(e) {
            image::Rgb(e.0.map(|c| 128 + c / 2))
        } else {
            image::Rgb([255, 0, 0])
        }
    })
}

#[tokio::test]
async fn every_golden_case_renders_to_the_pixel() {
    let mut failures = Vec::new();
    for case in CASES {
        let (img, elements) = inputs(case).await;
        let marks = marks_of(&img, &elements, case, case.debug);
        let actual = mark::render(img, &marks, &style(case.debug));
        let dir = golden_dir(case.name);
        let expected_path = dir.join("expected.png");
        if bless_mode().is_some() {
            actual.save(&expected_path).unwrap();
            continue;
        }
        let expected = image::open(&expected_path)
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; bless with SEAMARK_BLESS=1",
                    expected_path.display()
                )
            })
            .to_rgb8();
        if expected != actual {
            let out = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/golden-diff")
                .join(case.name);
            std::fs::create_dir_all(&out).unwrap();
            actual.save(out.join("actual.png")).unwrap();
            diff_image(&expected, &actual)
                .save(out.join("diff.png"))
                .unwrap();
            failures.push(format!(
                "{}: differs from {}; actual: {}, diff: {}",
                case.name,
                expected_path.display(),
                out.join("actual.png").display(),
                out.join("diff.png").display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches:\n{}",
        failures.join("\n")
    );
}

/// What a layout got wrong, counted.
#[derive(Debug, Default)]
pub struct Quality {
    pub label_overlaps: usize,
    pub centers_covered: usize,
    pub outside: usize,
    pub smallest_digit_sent_px: f32,
    /// Small targets (see `mark::is_small_target`: checkboxes, radios,
    /// icons, short links) that a chip covers any part of, their own included.
    pub small_covered: usize,
    /// Small targets, interactable.
    pub small: usize,
    /// For each large target, the share of its box chips cover.
    pub large_cover: Vec<f64>,
}

impl Quality {
    /// The shares of large targets' boxes covered: (median, 90th percentile, max).
    pub fn large_cover_summary(&self) -> (f64, f64, f64) {
        let mut v = self.large_cover.clone();
        v.sort_by(f64::total_cmp);
        let at = |q: f64| {
            v.get(((v.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        (at(0.5), at(0.9), at(1.0))
    }
}

/// Measures the label layout of marks on a `w`×`h` image as sent to the model.
pub fn quality(marks: &[MarkBox], w: u32, h: u32, style: &MarkStyle) -> Quality {
    let labels = mark::plan_labels(marks, w, h, style);
    let mut q = Quality::default();
    for (i, a) in labels.iter().enumerate() {
        if !a.rect.inside(w, h) {
            q.outside += 1;
        }
        q.label_overlaps += labels[i + 1..]
            .iter()
            .filter(|b| a.rect.overlap(&b.rect) > 0)
            .count();
        q.centers_covered += marks
            .iter()
            .filter(|m| m.id != a.id && m.kind == MarkKind::Interactable)
            .filter(|m| {
                let (cx, cy) = m.rect.center();
                a.rect.contains_point(cx, cy)
            })
            .count();
    }
    // Chips never overlap each other on these inputs, so the sum of their
    // overlaps with a box is the area they cover of it.
    for m in marks.iter().filter(|m| m.kind == MarkKind::Interactable) {
        let Some(own) = labels.iter().find(|l| l.id == m.id) else {
            continue;
        };
        let r = clipped(&m.rect, w, h);
        if r.w <= 0 || r.h <= 0 {
            continue;
        }
        let covered: i64 = labels.iter().map(|l| l.rect.overlap(&r)).sum();
        if mark::is_small_target(&r, (own.rect.w, own.rect.h)) {
            q.small += 1;
            if covered > 0 {
                q.small_covered += 1;
            }
        } else {
            let area = i64::from(r.w) * i64::from(r.h);
            q.large_cover.push((covered as f64 / area as f64).min(1.0));
        }
    }
    let long = w.max(h) as f32;
    let sent = style
        .send_long_edge
        .map_or(1.0, |e| (e as f32 / long).min(1.0));
    q.smallest_digit_sent_px = style.digit_height(w, h) * sent;
    q
}

/// The part of a box on a `w`×`h` image.
fn clipped(r: &IRect, w: u32, h: u32) -> IRect {
    let (x0, y0) = (r.x.max(0), r.y.max(0));
    let (x1, y1) = (r.right().min(w as i32), r.bottom().min(h as i32));
    IRect {
        x: x0,
        y: y0,
        w: x1 - x0,
        h: y1 - y0,
    }
}

#[tokio::test]
async fn labels_never_overlap_stay_on_the_image_and_stay_legible_on_golden_inputs() {
    for case in CASES {
        let (img, elements) = inputs(case).await;
        let marks = marks_of(&img, &elements, case, false);
        let q = quality(&marks, img.width(), img.height(), &style(false));
        println!(
            "{}: {} marks, {} small, {} small covered, large covered (median, p90, max) {:?}",
            case.name,
            marks.len(),
            q.small,
            q.small_covered,
            q.large_cover_summary()
        );
        assert_eq!(q.label_overlaps, 0, "{}: {q:?}", case.name);
        assert_eq!(q.outside, 0, "{}: {q:?}", case.name);
        assert!(q.smallest_digit_sent_px >= 11.0, "{}: {q:?}", case.name);
        if case.name == "crowded_1000" {
            // 1,000 boxes filling half of 1280×800 leave no room for every label
            // beside its box: the measured worst case is 80 labels that cover
            // another box's center (no label ever covers another label), and
            // every box is a small target with neighbors all around, so most
            // chips must cover one (its own where that hides least).
            assert!(q.centers_covered <= 80, "{}: {q:?}", case.name);
        } else {
            assert_eq!(q.centers_covered, 0, "{}: {q:?}", case.name);
            // A chip never covers a small target (a checkbox, a radio, an
            // icon, a short link): the model must see its state.
            assert_eq!(q.small_covered, 0, "{}: {q:?}", case.name);
        }
    }
}

#[test]
fn drawing_is_byte_identical_whatever_the_thread_count() {
    for (w, h) in [(1280, 800), (2560, 1600)] {
        let img = background(w, h);
        // Enough marks for a split layout, placed and drawn by halves.
        let marks = mark::crowded_marks(1000, w, h, 11);
        assert!(marks.len() >= mark::SPLIT_MIN);
        let serial_style = MarkStyle {
            parallel: false,
            ..style(false)
        };
        let serial = mark::render(img.clone(), &marks, &serial_style);
        let serial_labels = mark::plan_labels(&marks, w, h, &serial_style);
        assert!(serial != img);
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (parallel, labels) = pool.install(|| {
                (
                    mark::render(img.clone(), &marks, &style(false)),
                    mark::plan_labels(&marks, w, h, &style(false)),
                )
            });
            assert!(
                labels == serial_labels,
                "{w}x{h}: labels on {threads} threads differ"
            );
            assert!(
                parallel == serial,
                "{w}x{h}: {threads} threads differ from serial"
            );
        }
    }
}

#[test]
fn a_split_layout_keeps_each_label_in_the_half_of_its_box() {
    let (w, h) = (1280, 800);
    let marks = mark::crowded_marks(mark::SPLIT_MIN as u32, w, h, 3);
    let labels = mark::plan_labels(&marks, w, h, &style(false));
    let line = (h / 2) as i32;
    for (m, l) in marks.iter().zip(&labels) {
        let top = m.rect.center().1 < line;
        let inside = if top {
            l.rect.bottom() <= line
        } else {
            l.rect.y >= line
        };
        assert!(inside, "label {l:?} of {m:?} crosses the middle row");
        // Its leader line too: each half is drawn on its own.
        if let Some(((_, ay), (_, by))) = l.leader {
            assert_eq!(top, ay < line && by < line, "leader of {l:?} crosses");
            assert_eq!(!top, ay >= line && by >= line, "leader of {l:?} crosses");
        }
    }
    // One mark fewer is laid out whole: some label near the middle crosses it.
    let fewer = &marks[..marks.len() - 1];
    let whole = mark::plan_labels(fewer, w, h, &style(false));
    assert!(
        fewer
            .iter()
            .zip(&whole)
            .any(|(m, l)| (m.rect.center().1 < line) != (l.rect.y < line)),
        "expected a whole layout to use the other half somewhere"
    );
}

#[test]
fn neighbors_on_either_side_of_the_cut_get_different_colors() {
    // Twelve columns of boxes closer than a chip, one above the other: ids
    // twelve apart prefer the same color, so rows alternate between two.
    // Alone, the bottom half would start its first row on the color of the
    // top half's last row; only the rule at the cut keeps them apart.
    let (w, h) = (1280, 800);
    let marks: Vec<MarkBox> = (0..12 * 19)
        .map(|k| MarkBox {
            id: k + 1,
            rect: mark::IRect {
                x: 10 + (k % 12) as i32 * 106,
                y: 25 + (k / 12) as i32 * 40,
                w: 80,
                h: 30,
            },
            kind: MarkKind::Interactable,
        })
        .collect();
    assert!(marks.len() >= mark::SPLIT_MIN);
    let labels = mark::plan_labels(&marks, w, h, &style(false));
    let line = (h / 2) as i32;
    let mut across = 0;
    for (i, (a, la)) in marks.iter().zip(&labels).enumerate() {
        for (b, lb) in marks[i + 1..].iter().zip(&labels[i + 1..]) {
            // Within a chip's height of each other.
            if a.rect.grown(la.rect.h).overlap(&b.rect) > 0 {
                assert_ne!(la.color, lb.color, "neighbors {a:?} and {b:?}");
                across += usize::from((a.rect.center().1 < line) != (b.rect.center().1 < line));
            }
        }
    }
    assert!(
        across >= 12,
        "only {across} pairs of neighbors across the cut"
    );
}

#[tokio::test]
async fn the_model_image_marks_interactable_elements_only_and_debug_marks_the_rest() {
    let case = CASES.iter().find(|c| c.name == "debug_states").unwrap();
    let (img, elements) = inputs(case).await;
    let model = marks_of(&img, &elements, case, false);
    let debug = marks_of(&img, &elements, case, true);
    assert!(model.iter().all(|m| m.kind == MarkKind::Interactable));
    for kind in [MarkKind::Occluded, MarkKind::Disabled, MarkKind::Offscreen] {
        assert!(
            debug.iter().any(|m| m.kind == kind),
            "debug style lacks {kind:?}"
        );
    }
    assert!(debug.len() > model.len());
}
