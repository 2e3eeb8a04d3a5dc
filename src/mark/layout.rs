//! Label placement: for each mark, candidate positions around and inside its
//! box; the first that stays on the image and overlaps neither a placed label
//! nor another interactable box wins, else the least-overlapping one. Pure and
//! serial, so it is deterministic whatever the thread count.

use super::palette::PALETTE;

/// An integer rectangle in image pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IRect {
    /// Left.
    pub x: i32,
    /// Top.
    pub y: i32,
    /// Width (> 0).
    pub w: i32,
    /// Height (> 0).
    pub h: i32,
}

impl IRect {
    /// Right edge (exclusive).
    pub fn right(&self) -> i32 {
        self.x + self.w
    }

    /// Bottom edge (exclusive).
    pub fn bottom(&self) -> i32 {
        self.y + self.h
    }

    /// Overlapping area with another rectangle.
    pub fn overlap(&self, o: &IRect) -> i64 {
        let w = (self.right().min(o.right()) - self.x.max(o.x)).max(0);
        let h = (self.bottom().min(o.bottom()) - self.y.max(o.y)).max(0);
        i64::from(w) * i64::from(h)
    }

    /// Whether the point is inside.
    pub fn contains_point(&self, x: i32, y: i32) -> bool {
        x >= self.x && x < self.right() && y >= self.y && y < self.bottom()
    }

    /// Whether `o` lies entirely inside.
    pub fn contains(&self, o: &IRect) -> bool {
        o.x >= self.x && o.y >= self.y && o.right() <= self.right() && o.bottom() <= self.bottom()
    }

    /// Whether it lies entirely inside a `width`×`height` image.
    pub fn inside(&self, width: u32, height: u32) -> bool {
        self.x >= 0 && self.y >= 0 && self.right() <= width as i32 && self.bottom() <= height as i32
    }

    /// The center point.
    pub fn center(&self) -> (i32, i32) {
        (self.x + self.w / 2, self.y + self.h / 2)
    }
}

/// What a mark stands for, which decides how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkKind {
    /// Can be acted on now: drawn solid, always.
    Interactable,
    /// Outside the visible area: drawn dashed, debug style only.
    Offscreen,
    /// Covered by something: drawn dashed, debug style only.
    Occluded,
    /// Disabled: drawn dashed, debug style only.
    Disabled,
}

/// A box to mark, in image pixels.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MarkBox {
    /// The number shown.
    pub id: u32,
    /// The element's box (clipped to the visible part).
    pub rect: IRect,
    /// What kind of mark.
    pub kind: MarkKind,
}

/// What a label position covers, worst first: compared in this order, so a
/// position that overlaps no label always beats one that does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cost {
    /// Area shared with labels placed before.
    pub label_overlap: i64,
    /// Centers of other interactable boxes it covers.
    pub centers_covered: i64,
    /// Area shared with other interactable boxes (not those enclosing its own).
    pub box_overlap: i64,
    /// It had to be pulled back inside the image.
    pub clamped: bool,
}

/// A placed label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label {
    /// The number shown.
    pub id: u32,
    /// The chip.
    pub rect: IRect,
    /// Palette index of the box and chip.
    pub color: usize,
    /// A thin line from the chip to its box, when the chip sits away from it.
    pub leader: Option<((i32, i32), (i32, i32))>,
    /// What the placement had to accept; all zero when nothing is covered.
    pub cost: Cost,
}

const CELL: i32 = 32;

/// A uniform grid over the image: which rectangles touch which cell. Rectangles
/// and queries are inside the image (callers clip and clamp), so cells are a
/// flat vector.
struct Grid {
    cols: i32,
    rows: i32,
    cells: Vec<Vec<u32>>,
}

impl Grid {
    fn new(width: u32, height: u32) -> Self {
        let cols = (width.div_ceil(CELL as u32) as i32).max(1);
        let rows = (height.div_ceil(CELL as u32) as i32).max(1);
        Self {
            cols,
            rows,
            cells: vec![Vec::new(); (cols * rows) as usize],
        }
    }

    /// The cell range a rectangle touches, clamped to the grid.
    fn span(&self, r: &IRect) -> (i32, i32, i32, i32) {
        let x0 = r.x.div_euclid(CELL).clamp(0, self.cols - 1);
        let y0 = r.y.div_euclid(CELL).clamp(0, self.rows - 1);
        let x1 = (r.right() - 1).div_euclid(CELL).clamp(0, self.cols - 1);
        let y1 = (r.bottom() - 1).div_euclid(CELL).clamp(0, self.rows - 1);
        (x0, y0, x1, y1)
    }

    fn insert(&mut self, r: &IRect, i: usize) {
        if r.w <= 0 || r.h <= 0 {
            return;
        }
        let (x0, y0, x1, y1) = self.span(r);
        for y in y0..=y1 {
            for x in x0..=x1 {
                self.cells[(y * self.cols + x) as usize].push(i as u32);
            }
        }
    }

    /// Calls `f(i, cell)` for every rectangle sharing a cell with `r`; a
    /// rectangle spanning several such cells comes once per cell, and `cell`
    /// (its left, top in pixels) lets the caller count it in one of them only.
    fn visit(&self, r: &IRect, mut f: impl FnMut(usize, (i32, i32))) {
        let (x0, y0, x1, y1) = self.span(r);
        for y in y0..=y1 {
            for x in x0..=x1 {
                for &i in &self.cells[(y * self.cols + x) as usize] {
                    f(i as usize, (x, y));
                }
            }
        }
    }
}

/// Which pixels the placed labels cover, one bit each. A crowded layout tries
/// tens of positions per label; counting a chip's bits takes a few word
/// operations per row, where summing overlaps through the grid visits every
/// label in the cells around it.
struct Occupancy {
    width: i32,
    height: i32,
    /// `u64` words per row.
    stride: usize,
    bits: Vec<u64>,
    /// Every label recorded lies inside the image and shares no pixel with
    /// another: then the bits a rectangle covers are exactly the sum of its
    /// overlaps with each label.
    disjoint: bool,
}

impl Occupancy {
    fn new(width: u32, height: u32) -> Self {
        let stride = (width as usize).div_ceil(64);
        Self {
            width: width as i32,
            height: height as i32,
            stride,
            bits: vec![0; stride * height as usize],
            disjoint: true,
        }
    }

    /// Folds `f` over `word & mask` for the words of every row the rectangle
    /// covers inside the image, `mask` keeping the rectangle's columns.
    fn fold_words<T>(&self, r: &IRect, init: T, f: impl Fn(T, u64) -> T) -> T {
        let (x0, x1) = (r.x.clamp(0, self.width), r.right().clamp(0, self.width));
        let (y0, y1) = (r.y.clamp(0, self.height), r.bottom().clamp(0, self.height));
        if x0 >= x1 || y0 >= y1 {
            return init;
        }
        let mut acc = init;
        for k in x0 as usize / 64..=(x1 - 1) as usize / 64 {
            let mask = word_mask(k, x0, x1);
            let column = self.bits[y0 as usize * self.stride + k..].iter();
            for &word in column.step_by(self.stride).take((y1 - y0) as usize) {
                acc = f(acc, word & mask);
            }
        }
        acc
    }

    /// Records a placed label; `overlapping` when it shares area with another.
    fn insert(&mut self, r: &IRect, overlapping: bool) {
        self.disjoint &= !overlapping && r.inside(self.width as u32, self.height as u32);
        let (x0, x1) = (r.x.clamp(0, self.width), r.right().clamp(0, self.width));
        let (y0, y1) = (r.y.clamp(0, self.height), r.bottom().clamp(0, self.height));
        if x0 >= x1 || y0 >= y1 {
            return;
        }
        for k in x0 as usize / 64..=(x1 - 1) as usize / 64 {
            let mask = word_mask(k, x0, x1);
            for y in y0 as usize..y1 as usize {
                self.bits[y * self.stride + k] |= mask;
            }
        }
    }

    /// Whether a rectangle on the image touches a placed label; `None` for one
    /// reaching outside the image, where the bits cannot tell.
    fn touches(&self, r: &IRect) -> Option<bool> {
        r.inside(self.width as u32, self.height as u32)
            .then(|| self.fold_words(r, 0, |any, w| any | w) != 0)
    }

    /// The area a rectangle shares with placed labels, when the bits can tell
    /// it exactly (see `disjoint`).
    fn shared_area(&self, r: &IRect) -> Option<i64> {
        match self.touches(r)? {
            false => Some(0),
            true if self.disjoint => {
                Some(self.fold_words(r, 0, |n, w| n + i64::from(w.count_ones())))
            }
            true => None,
        }
    }
}

/// Bits `x0..x1` of the `k`th 64-pixel word of a row.
fn word_mask(k: usize, x0: i32, x1: i32) -> u64 {
    let base = (k * 64) as i32;
    let lo = (x0 - base).clamp(0, 64) as u32;
    let hi = (x1 - base).clamp(0, 64) as u32;
    if hi <= lo {
        return 0;
    }
    (u64::MAX >> (64 - (hi - lo))) << lo
}

/// Whether the point falls in the grid cell (in cell units), clamped to the grid.
fn in_cell(grid: &Grid, (px, py): (i32, i32), (cx, cy): (i32, i32)) -> bool {
    px.div_euclid(CELL).clamp(0, grid.cols - 1) == cx
        && py.div_euclid(CELL).clamp(0, grid.rows - 1) == cy
}

/// Area that `cand` shares with placed labels, each counted once.
fn label_overlap(occupied: &Occupancy, placed: &Grid, labels: &[Label], cand: &IRect) -> i64 {
    if let Some(area) = occupied.shared_area(cand) {
        return area;
    }
    let mut total = 0;
    placed.visit(cand, |j, cell| {
        let other = &labels[j].rect;
        let (ix, iy) = (cand.x.max(other.x), cand.y.max(other.y));
        let area = other.overlap(cand);
        // Count the pair in the cell holding the top-left of the overlap only.
        if area > 0 && in_cell(placed, (ix, iy), cell) {
            total += area;
        }
    });
    total
}

/// How many rings of positions further out are tried before giving up on a
/// position that covers nothing.
const RINGS: i32 = 2;

/// Fallback positions allowed per mark, on average over a layout.
const SCAN_BUDGET_PER_MARK: i64 = 40;

/// How many chip-sized rings the crowded fallback scans for a spot no label touches.
const FAR_RINGS: i32 = 30;

/// Candidate chip positions for a box, in order of preference: touching the
/// box (outside, then inside corners), then rings further out, which get a
/// leader line.
fn candidates(b: &IRect, cw: i32, ch: i32) -> Vec<(IRect, bool)> {
    let at = |x: i32, y: i32| IRect { x, y, w: cw, h: ch };
    let mut out = vec![
        (at(b.x, b.y - ch), false),                   // above, left-aligned
        (at(b.x, b.y), false),                        // inside top-left
        (at(b.right() - cw, b.y - ch), false),        // above, right-aligned
        (at(b.x, b.bottom()), false),                 // below, left-aligned
        (at(b.right() - cw, b.bottom()), false),      // below, right-aligned
        (at(b.right() - cw, b.y), false),             // inside top-right
        (at(b.x, b.bottom() - ch), false),            // inside bottom-left
        (at(b.right() - cw, b.bottom() - ch), false), // inside bottom-right
        (at(b.x - cw, b.y), false),                   // left of the box
        (at(b.right(), b.y), false),                  // right of the box
    ];
    for step in 1..=RINGS {
        let d = step * ch;
        let (left, right) = (b.x - cw - d, b.right() + d);
        let (top, bottom) = (b.y - ch - d, b.bottom() + d);
        for (x, y) in [
            (b.x, top),
            (b.x, bottom),
            (left, b.y),
            (right, b.y),
            (left, top),
            (right, top),
            (left, bottom),
            (right, bottom),
        ] {
            out.push((at(x, y), true));
        }
    }
    out
}

/// The part of a rectangle inside the image; a zero-size rectangle on the
/// nearest edge when there is none.
pub(crate) fn clip_to(r: IRect, width: u32, height: u32) -> IRect {
    let (w, h) = (width as i32, height as i32);
    let x0 = r.x.clamp(0, w);
    let y0 = r.y.clamp(0, h);
    let x1 = r.right().clamp(0, w);
    let y1 = r.bottom().clamp(0, h);
    IRect {
        x: x0,
        y: y0,
        w: (x1 - x0).max(0),
        h: (y1 - y0).max(0),
    }
}

/// Pulls a rectangle inside the image (keeping its size when it fits).
fn clamp_into(r: IRect, width: u32, height: u32) -> IRect {
    let (w, h) = (width as i32, height as i32);
    IRect {
        x: r.x.clamp(0, (w - r.w).max(0)),
        y: r.y.clamp(0, (h - r.h).max(0)),
        ..r
    }
}

/// The closest points between a chip and its box, for the leader line.
fn leader(chip: &IRect, b: &IRect) -> ((i32, i32), (i32, i32)) {
    let (cx, cy) = chip.center();
    let bx = cx.clamp(b.x, b.right() - 1);
    let by = cy.clamp(b.y, b.bottom() - 1);
    let lx = bx.clamp(chip.x, chip.right() - 1);
    let ly = by.clamp(chip.y, chip.bottom() - 1);
    ((lx, ly), (bx, by))
}

/// Places the label of every mark. `chip(id)` gives each chip's size.
pub fn layout(
    marks: &[MarkBox],
    width: u32,
    height: u32,
    chip: impl Fn(u32) -> (i32, i32),
) -> Vec<Label> {
    // Work on the part of each box inside the image: a box far outside (bad
    // input, a debug offscreen mark) must not cost a grid cell per pixel.
    let marks: Vec<MarkBox> = marks
        .iter()
        .map(|m| MarkBox {
            rect: clip_to(m.rect, width, height),
            ..*m
        })
        .collect();
    let mut boxes = Grid::new(width, height);
    for (i, m) in marks.iter().enumerate() {
        if m.kind == MarkKind::Interactable && m.rect.w > 0 && m.rect.h > 0 {
            boxes.insert(&m.rect, i);
        }
    }
    let mut labels: Vec<Label> = Vec::with_capacity(marks.len());
    let mut placed = Grid::new(width, height);
    let mut occupied = Occupancy::new(width, height);
    let mut placed_area: i64 = 0;
    // Positions the crowded fallback may try over the whole layout: bounds the
    // time on a saturated image, where no free spot is left to find.
    let mut scan_budget: i64 = SCAN_BUDGET_PER_MARK * marks.len() as i64;
    let image_area = i64::from(width) * i64::from(height);
    let mut colors = vec![0usize; marks.len()];
    for (i, m) in marks.iter().enumerate() {
        let (cw, ch) = chip(m.id);
        // What a chip at `cand` would cover, once pulled inside the image;
        // `None` as soon as it covers more label area than `bound`: such a
        // position loses to one already found, whatever else it covers.
        let cost_at = |cand: IRect, bound: i64| {
            let on_image = cand.inside(width, height);
            let cand = if on_image {
                cand
            } else {
                clamp_into(cand, width, height)
            };
            let label_overlap = label_overlap(&occupied, &placed, &labels, &cand);
            if label_overlap > bound {
                return None;
            }
            let mut cost = Cost {
                clamped: !on_image,
                label_overlap,
                ..Cost::default()
            };
            boxes.visit(&cand, |j, cell| {
                if j == i {
                    return;
                }
                let other = &marks[j].rect;
                let center = other.center();
                if cand.contains_point(center.0, center.1) {
                    if in_cell(&boxes, center, cell) {
                        cost.centers_covered += 1;
                    }
                } else if !other.contains(&m.rect) {
                    // A box that encloses ours (a card around a button) can't be avoided.
                    let area = other.overlap(&cand);
                    let corner = (cand.x.max(other.x), cand.y.max(other.y));
                    if area > 0 && in_cell(&boxes, corner, cell) {
                        cost.box_overlap += area;
                    }
                }
            });
            Some((cost, cand))
        };
        let mut best: Option<(Cost, IRect, bool)> = None;
        for (cand, away) in candidates(&m.rect, cw, ch) {
            let bound = best.as_ref().map_or(i64::MAX, |(c, _, _)| c.label_overlap);
            let Some((cost, cand)) = cost_at(cand, bound) else {
                continue;
            };
            let free = cost == Cost::default();
            if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                best = Some((cost, cand, away));
            }
            if free {
                break;
            }
        }
        // Crowded: every nearby position touches a label. Scan further out, in
        // growing square rings, for the nearest spot no label touches.
        // Once labels cover as much area as the image there is no free spot
        // left, and the scan would cost more than it finds.
        if placed_area < image_area
            && scan_budget > 0
            && best.as_ref().is_some_and(|(c, _, _)| c.label_overlap > 0)
        {
            let (sx, sy) = (cw.max(1), ch.max(1));
            'rings: for r in 1..=FAR_RINGS {
                for k in -r..=r {
                    for (dx, dy) in [(k, -r), (k, r), (-r, k), (r, k)] {
                        let cand = IRect {
                            x: m.rect.x + dx * sx,
                            y: m.rect.y + dy * sy,
                            w: cw,
                            h: ch,
                        };
                        scan_budget -= 1;
                        if scan_budget == 0 {
                            break 'rings;
                        }
                        let cand = clamp_into(cand, width, height);
                        // Exact for a position on the image, so the sum can wait.
                        if occupied.touches(&cand) == Some(true) {
                            continue;
                        }
                        if let Some((cost, cand)) = cost_at(cand, 0) {
                            best = Some((cost, cand, true));
                            break 'rings;
                        }
                    }
                }
            }
        }
        let Some((cost, rect, away)) = best else {
            continue;
        };
        // Neighbors get different colors: skip colors of nearby marks already colored.
        let reach = IRect {
            x: m.rect.x - ch,
            y: m.rect.y - ch,
            w: m.rect.w + 2 * ch,
            h: m.rect.h + 2 * ch,
        };
        let mut used = [false; PALETTE.len()];
        // Every mark gets a label, so label indices are mark indices.
        let mut mark_used = |j: usize, _| {
            if j < i && marks[j].rect.overlap(&reach) > 0 {
                used[colors[j]] = true;
            }
        };
        boxes.visit(&reach, &mut mark_used);
        placed.visit(&reach, &mut mark_used);
        let start = (m.id as usize) % PALETTE.len();
        let color = (0..PALETTE.len())
            .map(|k| (start + k) % PALETTE.len())
            .find(|&c| !used[c])
            .unwrap_or(start);
        colors[i] = color;
        let touches = rect.overlap(&IRect {
            x: m.rect.x - 1,
            y: m.rect.y - 1,
            w: m.rect.w + 2,
            h: m.rect.h + 2,
        }) > 0;
        let leader = (away || !touches).then(|| leader(&rect, &m.rect));
        placed.insert(&rect, labels.len());
        occupied.insert(&rect, cost.label_overlap > 0);
        placed_area += i64::from(rect.w) * i64::from(rect.h);
        labels.push(Label {
            id: m.id,
            rect,
            color,
            leader,
            cost,
        });
    }
    labels
}
