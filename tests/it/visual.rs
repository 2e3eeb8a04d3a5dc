//! The visual MiniWoB++ tasks (vendor/miniwob): shapes to drag, lines
//! to draw, centres and angles to find on an SVG that no mark names. They
//! run through `seamark batch --miniwob`, and the page scores each episode.
//! The scripted model sees only what a model sees: the task, the element
//! list and the marked image it was sent, which it decodes and searches for
//! the shapes (by their CSS colours, or their black strokes away from the
//! marks' colours), answering with points of that image.

use base64::Engine;
use image::RgbImage;

use crate::model_server::{ModelServer, Received, Reply};
use crate::support::Workdir;

/// A connected group of pixels of the image.
#[derive(Debug, Clone, Copy)]
struct Blob {
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
    pixels: u32,
    /// Sums of the pixels' coordinates, for the centroid.
    sx: u64,
    sy: u64,
}

impl Blob {
    fn centre(&self) -> (u32, u32) {
        ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)
    }
    fn width(&self) -> u32 {
        self.x1 - self.x0 + 1
    }
    fn height(&self) -> u32 {
        self.y1 - self.y0 + 1
    }
    /// How much of its bounding box it fills: a square 1, a disc 0.79, a
    /// triangle 0.5, a ring little.
    fn fill(&self) -> f64 {
        f64::from(self.pixels) / f64::from(self.width() * self.height())
    }
    /// The mean of its pixels, to a fraction of a pixel.
    fn centroid(&self) -> (f64, f64) {
        let n = f64::from(self.pixels.max(1));
        (self.sx as f64 / n, self.sy as f64 / n)
    }
    fn holds(&self, (x, y): (u32, u32)) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.y0..=self.y1).contains(&y)
    }
}

/// The viewport the tasks run in, in CSS pixels: the task area is 160×210
/// at its top left, and a device scale of 4 draws it large, as the docs
/// advise (shapes 14 CSS px across are 34 px across in the image sent).
const VIEWPORT: (&str, &str) = ("640x400", "2");
const VIEWPORT_WIDTH: f64 = 640.0;

/// The image the model was sent with this request (the last: the page now),
/// and its pixels per CSS pixel.
struct Sight {
    img: RgbImage,
    k: f64,
}

impl Sight {
    fn of(r: &Received) -> Sight {
        let png = base64::engine::general_purpose::STANDARD
            .decode(r.images().last().expect("an image was sent"))
            .expect("base64");
        let img = image::load_from_memory(&png).expect("a PNG").to_rgb8();
        let k = f64::from(img.width()) / VIEWPORT_WIDTH;
        Sight { img, k }
    }

    /// A length in CSS pixels, in the image's.
    fn px(&self, css: f64) -> u32 {
        (css * self.k).round() as u32
    }

    /// The task area below the instruction, in the image's pixels.
    fn area(&self) -> (u32, u32, u32, u32) {
        (0, self.px(51.0), self.px(160.0), self.px(210.0))
    }
}

/// The groups of touching pixels of the task area that `keep` accepts,
/// largest first.
fn blobs(sight: &Sight, keep: impl Fn(u32, u32) -> bool) -> Vec<Blob> {
    let img = &sight.img;
    let (x0, y0, x1, y1) = sight.area();
    let w = x1 - x0;
    let mut seen = vec![false; (w * (y1 - y0)) as usize];
    let index = |x: u32, y: u32| ((y - y0) * w + (x - x0)) as usize;
    let mut found = Vec::new();
    for y in y0..y1.min(img.height()) {
        for x in x0..x1.min(img.width()) {
            if seen[index(x, y)] || !keep(x, y) {
                continue;
            }
            let mut blob = Blob {
                x0: x,
                y0: y,
                x1: x,
                y1: y,
                pixels: 0,
                sx: 0,
                sy: 0,
            };
            let mut stack = vec![(x, y)];
            seen[index(x, y)] = true;
            while let Some((px, py)) = stack.pop() {
                blob.pixels += 1;
                blob.sx += u64::from(px);
                blob.sy += u64::from(py);
                blob.x0 = blob.x0.min(px);
                blob.x1 = blob.x1.max(px);
                blob.y0 = blob.y0.min(py);
                blob.y1 = blob.y1.max(py);
                let next = [
                    (px.wrapping_sub(1), py),
                    (px + 1, py),
                    (px, py.wrapping_sub(1)),
                    (px, py + 1),
                ];
                for (nx, ny) in next {
                    if (x0..x1.min(img.width())).contains(&nx)
                        && (y0..y1.min(img.height())).contains(&ny)
                        && !seen[index(nx, ny)]
                        && keep(nx, ny)
                    {
                        seen[index(nx, ny)] = true;
                        stack.push((nx, ny));
                    }
                }
            }
            found.push(blob);
        }
    }
    found.sort_by_key(|b| std::cmp::Reverse(b.pixels));
    found
}

/// The CSS colours MiniWoB++ fills its shapes with (white aside).
const FILLS: [[u8; 3]; 12] = [
    [255, 0, 0],     // red
    [0, 128, 0],     // green
    [0, 0, 255],     // blue
    [0, 255, 255],   // aqua
    [255, 0, 255],   // magenta
    [255, 255, 0],   // yellow
    [255, 165, 0],   // orange
    [128, 0, 128],   // purple
    [165, 42, 42],   // brown
    [0, 0, 0],       // black
    [0, 255, 255],   // cyan
    [128, 128, 128], // gray
];

fn near(p: &image::Rgb<u8>, c: [u8; 3], by: u8) -> bool {
    (0..3).all(|i| p[i].abs_diff(c[i]) <= by)
}

/// Black, or the grey of a thin black stroke's antialiased edge.
fn dark(p: &image::Rgb<u8>) -> bool {
    let (lo, hi) = (p.0.iter().min().copied(), p.0.iter().max().copied());
    matches!((lo, hi), (Some(lo), Some(hi)) if hi <= 170 && hi - lo <= 24)
}

/// Whether a pixel lies inside a mark's chip (a digit): a mark colour
/// close on both sides of it, across or down. A shape's edge beside its
/// mark's box has that colour on one side only.
fn in_a_chip(img: &RgbImage, x: u32, y: u32) -> bool {
    let (w, h) = img.dimensions();
    let mark = |xx: u32, yy: u32| PALETTE.iter().any(|c| near(img.get_pixel(xx, yy), *c, 6));
    let left = (x.saturating_sub(4)..x).any(|xx| mark(xx, y));
    let right = (x + 1..(x + 5).min(w)).any(|xx| mark(xx, y));
    let up = (y.saturating_sub(4)..y).any(|yy| mark(x, yy));
    let down = (y + 1..(y + 5).min(h)).any(|yy| mark(x, yy));
    (left && right) || (up && down)
}

use seamark::mark::PALETTE;

/// Pixels of this CSS colour.
fn colour_blobs(sight: &Sight, colour: [u8; 3]) -> Vec<Blob> {
    blobs(sight, |x, y| near(sight.img.get_pixel(x, y), colour, 12))
}

/// Dark pixels that are no mark's (no chip's digits): strokes and black
/// fills of the page's drawing.
fn ink_blobs(sight: &Sight) -> Vec<Blob> {
    let img = &sight.img;
    blobs(sight, |x, y| {
        dark(img.get_pixel(x, y)) && !in_a_chip(img, x, y)
    })
}

/// What a shape of MiniWoB++ is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Rectangle,
    Circle,
    Triangle,
}

/// The shapes of the drawing, at least `min` CSS px across: blobs of a
/// fill colour, or of ink (a black shape), each with its kind, told by the
/// widths of its rows near the top, in the middle and near the bottom (a
/// rectangle's are equal, a circle's narrow at both ends, an upright
/// triangle's grow downwards).
fn shapes(sight: &Sight, min: f64) -> Vec<(Blob, Kind)> {
    let img = &sight.img;
    let min = sight.px(min);
    let fills = FILLS[..9].iter().map(|c| {
        let c = *c;
        Box::new(move |x: u32, y: u32| near(img.get_pixel(x, y), c, 12))
            as Box<dyn Fn(u32, u32) -> bool>
    });
    let ink = std::iter::once(Box::new(|x: u32, y: u32| {
        dark(img.get_pixel(x, y)) && !in_a_chip(img, x, y)
    }) as Box<dyn Fn(u32, u32) -> bool>);
    let mut all = Vec::new();
    for keep in fills.chain(ink) {
        for b in blobs(sight, &keep) {
            if b.width() < min || b.height() < min {
                continue;
            }
            let row = |at: f64| {
                let y = b.y0 + (f64::from(b.height() - 1) * at).round() as u32;
                (b.x0..=b.x1).filter(|&x| keep(x, y)).count() as f64
            };
            let (top, middle, bottom) = (row(0.15), row(0.5), row(0.85));
            let kind = if top >= 0.92 * middle && bottom >= 0.92 * middle {
                Kind::Rectangle
            } else if bottom >= 2.0 * top {
                Kind::Triangle
            } else {
                Kind::Circle
            };
            all.push((b, kind));
        }
    }
    all.sort_by_key(|(b, _)| std::cmp::Reverse(b.pixels));
    all
}

/// The direction word of an instruction, as a unit step.
fn direction(task: &str) -> (i32, i32) {
    for (word, d) in [
        ("left", (-1, 0)),
        ("right", (1, 0)),
        ("up", (0, -1)),
        ("down", (0, 1)),
    ] {
        if task.contains(&format!(" {word} ")) {
            return d;
        }
    }
    panic!("no direction in {task:?}")
}

/// `by` CSS px from a point, in a direction.
fn shifted(sight: &Sight, (x, y): (u32, u32), (dx, dy): (i32, i32), by: f64) -> (u32, u32) {
    let by = sight.px(by) as i32;
    (
        (x as i32 + dx * by).max(2) as u32,
        (y as i32 + dy * by).max(2) as u32,
    )
}

/// Each step, the next command of the task's plan, from the image and the
/// list of that step; then the episode is over.
fn visual(r: &Received) -> Reply {
    let task = r.task();
    let step = r.step();
    let sight = Sight::of(r);
    let submit = || format!("CLICK:{}", r.id_of("Submit"));
    let done = || "COMPLETE:the episode is over".to_string();
    let text = if task.starts_with("Drag the smaller box") {
        match step {
            1 => {
                let small = colour_blobs(&sight, [255, 0, 0])[0].centre();
                let large = colour_blobs(&sight, [0, 0, 255])[0].centre();
                format!("DRAG:@{},{}:@{},{}", small.0, small.1, large.0, large.1)
            }
            2 => submit(),
            _ => done(),
        }
    } else if task.starts_with("Drag the circle") || task.starts_with("Drag the item") {
        match step {
            1 => {
                // The shape lies above 160 CSS px; the Submit button below.
                match drawing_centre(&sight, 160.0) {
                    Some(at) => {
                        let to = shifted(&sight, at, direction(&task), 30.0);
                        format!("DRAG:@{},{}:@{},{}", at.0, at.1, to.0, to.1)
                    }
                    None => "STOP:no shape to drag".into(),
                }
            }
            2 => submit(),
            _ => done(),
        }
    } else if task.starts_with("Find and click on the center") {
        match step {
            1 => {
                // The circle is a black ring; the largest ink on the area.
                let ring = ink_blobs(&sight)[0];
                let (x, y) = ring.centre();
                format!("CLICK:@{x},{y}")
            }
            2 => submit(),
            _ => done(),
        }
    } else if task.starts_with("Draw a") {
        match step {
            1 => {
                let dot = colour_blobs(&sight, [128, 0, 128])[0].centre();
                let d = if task.contains("horizontal") {
                    (1, 0)
                } else {
                    (0, 1)
                };
                let from = shifted(&sight, dot, (-d.0, -d.1), 25.0);
                let to = shifted(&sight, dot, d, 25.0);
                let from = (from.0, from.1.max(sight.area().1 + sight.px(4.0)));
                format!("DRAG:@{},{}:@{},{}", from.0, from.1, to.0, to.1)
            }
            2 => submit(),
            _ => done(),
        }
    } else if task.starts_with("Create a line that bisects") {
        match step {
            1 => bisect(&sight),
            2 => submit(),
            _ => done(),
        }
    } else if task.starts_with("Click on the grid coordinate") {
        match step {
            1 => grid_point(&sight, &task),
            _ => done(),
        }
    } else if task.starts_with("Drag all") {
        // Only the Submit is clicked: once it was, the episode is over.
        let history = r.text();
        let history = history
            .split("# Result of your last answer")
            .next()
            .unwrap_or_default();
        if history.contains("CLICK:") {
            done()
        } else {
            drag_into_the_box(&sight, &task).unwrap_or_else(submit)
        }
    } else if task.starts_with("Expand the pie menu") {
        let label = task.split('"').nth(1).unwrap_or_default();
        let item = |name: &str| {
            clickable(r, name).map_or_else(
                || format!("STOP:no {name:?} listed"),
                |id| format!("CLICK:{id}"),
            )
        };
        match step {
            1 => item("+"),
            2 => item(label),
            _ => done(),
        }
    } else {
        format!("STOP:no script for {task:?}")
    };
    Reply::Text(text)
}

/// The id of the clickable element named `name` (not one that a `name`
/// covers: `[1] clickable occluded by tspan "+"`).
fn clickable(r: &Received, name: &str) -> Option<u32> {
    let needle = format!("] clickable \"{name}\"");
    r.text()
        .lines()
        .filter(|l| l.starts_with('[') && l.contains(&needle))
        .find_map(|l| l[1..].split(']').next()?.parse().ok())
}

/// The middle of what is drawn on the task area above `bottom` (CSS px):
/// colour and ink together, what the marks leave of them (a white circle's
/// thin outline, broken where its mark's box touches it, is one shape).
fn drawing_centre(sight: &Sight, bottom: f64) -> Option<(u32, u32)> {
    let img = &sight.img;
    let limit = sight.px(bottom);
    let parts: Vec<Blob> = blobs(sight, |x, y| {
        let p = img.get_pixel(x, y);
        y < limit
            && (dark(p) || FILLS[..9].iter().any(|c| near(p, *c, 12)))
            && !in_a_chip(img, x, y)
    })
    .into_iter()
    .filter(|b| b.pixels >= 4)
    .collect();
    let Some(first) = parts.first() else {
        // A white shape whose thin outline runs along its mark's box: its
        // outline is the largest ink there, marks or not.
        return blobs(sight, |x, y| y < limit && dark(img.get_pixel(x, y)))
            .first()
            .map(Blob::centre);
    };
    let all = parts.iter().fold(*first, |a, b| Blob {
        x0: a.x0.min(b.x0),
        y0: a.y0.min(b.y0),
        x1: a.x1.max(b.x1),
        y1: a.y1.max(b.y1),
        pixels: a.pixels + b.pixels,
        sx: a.sx + b.sx,
        sy: a.sy + b.sy,
    });
    Some(all.centre())
}

/// bisect-angle: a blue vertex joined to two black dots; a click along the
/// bisector draws the line.
fn bisect(sight: &Sight) -> String {
    let img = &sight.img;
    let vertex = colour_blobs(sight, [0, 0, 255])[0].centroid();
    // The dots are discs of ink; the lines are one pixel wide.
    let dense = |x: u32, y: u32| {
        let ink = (x.saturating_sub(2)..=x + 2)
            .flat_map(|xx| (y.saturating_sub(2)..=y + 2).map(move |yy| (xx, yy)))
            .filter(|&(xx, yy)| {
                xx < img.width() && yy < img.height() && dark(img.get_pixel(xx, yy))
            })
            .count();
        ink >= 20 && !in_a_chip(img, x, y)
    };
    let dots = blobs(sight, dense);
    assert!(dots.len() >= 2, "two black dots: {dots:?}");
    let unit = |(x, y): (f64, f64)| {
        let (dx, dy) = (x - vertex.0, y - vertex.1);
        let n = dx.hypot(dy);
        (dx / n, dy / n)
    };
    let (a, b) = (unit(dots[0].centroid()), unit(dots[1].centroid()));
    let (bx, by) = (a.0 + b.0, a.1 + b.1);
    let n = bx.hypot(by);
    // The drawing is the box of its mark, 150×130 CSS px from (2,52): a
    // click stays well inside it.
    let (left, top, right, bottom) = (
        sight.px(8.0),
        sight.px(58.0),
        sight.px(146.0),
        sight.px(176.0),
    );
    let inside = |x: f64, y: f64| {
        (f64::from(left)..=f64::from(right)).contains(&x)
            && (f64::from(top)..=f64::from(bottom)).contains(&y)
    };
    // As far along the bisector as the drawing goes: a narrow angle leaves
    // little room on either side of it near the vertex.
    let mut length = f64::from(sight.px(120.0));
    loop {
        let (x, y) = (vertex.0 + bx / n * length, vertex.1 + by / n * length);
        if inside(x, y) || length <= f64::from(sight.px(6.0)) {
            return format!("CLICK:@{},{}", x.round(), y.round());
        }
        length -= sight.k;
    }
}

/// grid-coordinate: 25 blue points on axes from -2 to 2.
fn grid_point(sight: &Sight, task: &str) -> String {
    let coords = task
        .split('(')
        .nth(1)
        .and_then(|t| t.split(')').next())
        .expect("a coordinate");
    let (x, y) = coords.split_once(',').expect("x,y");
    let (x, y): (i32, i32) = (x.trim().parse().unwrap(), y.trim().parse().unwrap());
    let mut points: Vec<(u32, u32)> = colour_blobs(sight, [0, 0, 255])
        .into_iter()
        .filter(|b| b.width() >= sight.px(3.0))
        .map(|b| b.centre())
        .collect();
    assert_eq!(points.len(), 25, "the grid's points: {points:?}");
    // Rows top to bottom (y from 2 to -2), each left to right (x from -2 to 2).
    let row = sight.px(15.0);
    points.sort_by_key(|p| (p.1 / row, p.0));
    let (col, row) = ((x + 2) as usize, (2 - y) as usize);
    let (px, py) = points[row * 5 + col];
    format!("CLICK:@{px},{py}")
}

/// drag-shapes: the next shape of the kind asked for that is not in the
/// black box yet, dragged to its middle; `None` when none is left.
fn drag_into_the_box(sight: &Sight, task: &str) -> Option<String> {
    let ink = ink_blobs(sight);
    let container = ink
        .iter()
        .filter(|b| b.width() >= sight.px(60.0) && b.height() >= sight.px(30.0) && b.fill() < 0.3)
        .max_by_key(|b| b.width() * b.height())
        .copied()?;
    let wanted = if task.contains("rectangles") {
        Kind::Rectangle
    } else if task.contains("circles") {
        Kind::Circle
    } else {
        Kind::Triangle
    };
    let (small, large) = (sight.px(10.0), sight.px(30.0));
    let (next, _) = shapes(sight, 10.0)
        .into_iter()
        // Shapes are 14 CSS px across; the button's letters are narrower.
        .filter(|(b, _)| {
            (small..large).contains(&b.width()) && (small..large).contains(&b.height())
        })
        .filter(|(b, _)| !container.holds(b.centre()))
        .find(|(_, kind)| *kind == wanted)?;
    let (x, y) = next.centre();
    let (cx, cy) = container.centre();
    Some(format!("DRAG:@{x},{y}:@{cx},{cy}"))
}

/// Episodes per task: seeds 0 to 2 (seed 2 of drag-shapes is the first
/// with shapes of the kind asked for). Measured over seeds 0 to 11, this
/// script solved 95 of 96 episodes (bisect-angle.10 is an angle of 0.3°:
/// half a CSS pixel of tolerance at the far edge of the drawing, finer than
/// a pixel of the image at this scale).
const SEEDS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visual_miniwob_tasks_are_solved_at_points_of_the_image() {
    let model = ModelServer::answering(visual).await;
    let dir = Workdir::new(&model);
    let checkout = crate::server::miniwob_dir();
    let tasks = [
        "drag-box",
        "drag-circle",
        "drag-single-shape",
        "drag-shapes",
        "draw-line",
        "circle-center",
        "bisect-angle",
        "grid-coordinate",
    ];
    let ran = dir
        .run(&[
            "batch",
            "--miniwob",
            checkout.to_str().unwrap(),
            "--tasks",
            &tasks.join(","),
            "--seeds",
            &SEEDS.to_string(),
            "--episode-time",
            "120",
            "--viewport",
            VIEWPORT.0,
            "--scale",
            VIEWPORT.1,
            "--concurrency",
            "3",
            "--out",
            "wob",
        ])
        .await;
    let results: Vec<serde_json::Value> = std::fs::read_to_string(dir.path("wob/results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a results line is JSON"))
        .collect();
    let failed: Vec<String> = results
        .iter()
        .filter(|r| r["passed"] != true)
        .map(|r| format!("{}: {}", r["id"], r["verdict"]))
        .collect();
    assert!(
        failed.is_empty() && results.len() == tasks.len() * SEEDS,
        "{} of {} passed; failed: {failed:#?}\n{}",
        results.len() - failed.len(),
        tasks.len() * SEEDS,
        ran.stderr()
    );
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    // Each task was done at points of the image, not by ids (an episode of
    // drag-shapes with no shape of the kind asked for is only a Submit).
    for task in tasks {
        let pointed = (0..SEEDS).any(|seed| {
            std::fs::read_to_string(dir.path(&format!("wob/runs/{task}.{seed}/1/journal.jsonl")))
                .is_ok_and(|j| j.contains(":@"))
        });
        assert!(pointed, "{task} acted at no point");
    }
}
