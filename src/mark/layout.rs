//! Label placement: for each mark, candidate positions around and inside its
//! box; the first that stays on the image and overlaps neither a placed label
//! nor another interactable box wins, else the least-overlapping one. Greedy
//! in reading order; a large layout is cut into two halves that share no
//! label, so they can be placed on two threads. Pure: the same labels
//! whatever the thread count.

use super::palette::PALETTE;

/// An integer rectangle in image pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

    /// The rectangle grown by `d` pixels on every side.
    pub fn grown(&self, d: i32) -> IRect {
        IRect {
            x: self.x - d,
            y: self.y - d,
            w: self.w + 2 * d,
            h: self.h + 2 * d,
        }
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

/// Whether a target is small for its chip: under three chips wide and two
/// tall (a checkbox, a radio, an icon, a short link). A chip inside it would
/// hide what the model must see (whether the box is checked), so a chip
/// never covers a small target, its own or another.
pub fn is_small_target(b: &IRect, chip: (i32, i32)) -> bool {
    b.w < 3 * chip.0 && b.h < 2 * chip.1
}

/// What a label position covers, worst first: compared in this order, so a
/// position that overlaps no label always beats one that does; then come the
/// centers of other boxes, then small targets (the crowded fallback looks
/// further out for a spot that hides none and touches no label).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cost {
    /// Area shared with labels placed before.
    pub label_overlap: i64,
    /// Centers of other interactable boxes it covers.
    pub centers_covered: i64,
    /// Area of other small targets it covers.
    pub small_overlap: i64,
    /// Area of its own target it covers, when that is small. Where small
    /// targets are packed tight, a chip inside its own box hides less than one
    /// on a neighbor's, which would take the neighbor's own spot too.
    pub own_overlap: i64,
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
    /// Cell `c` holds `items[starts[c]..starts[c + 1]]`: one allocation for all
    /// cells, where a vector per cell cost about 2,000 allocations to make and
    /// free for a 1920×1080 image, on the path before either half can start.
    starts: Vec<u32>,
    items: Vec<u32>,
    /// Rectangles inserted after the grid was built, by cell; made on the first.
    later: Vec<Vec<u32>>,
}

impl Grid {
    /// The grid of `rects`, each given with its index; empty ones are left out.
    fn build(width: u32, height: u32, rects: impl Iterator<Item = (usize, IRect)> + Clone) -> Self {
        let cols = (width.div_ceil(CELL as u32) as i32).max(1);
        let rows = (height.div_ceil(CELL as u32) as i32).max(1);
        let mut grid = Self {
            cols,
            rows,
            starts: vec![0; (cols * rows) as usize + 1],
            items: Vec::new(),
            later: Vec::new(),
        };
        for (_, r) in rects.clone() {
            for (c, _) in grid.cells(&r) {
                grid.starts[c + 1] += 1;
            }
        }
        for c in 1..grid.starts.len() {
            grid.starts[c] += grid.starts[c - 1];
        }
        let mut next = grid.starts.clone();
        grid.items = vec![0; next[next.len() - 1] as usize];
        for (i, r) in rects {
            for (c, _) in grid.cells(&r) {
                grid.items[next[c] as usize] = i as u32;
                next[c] += 1;
            }
        }
        grid
    }

    /// The cells a non-empty rectangle touches, clamped to the grid: each
    /// cell's index and position (in cells).
    fn cells(&self, r: &IRect) -> impl Iterator<Item = (usize, (i32, i32))> {
        let cols = self.cols;
        let (x0, y0, x1, y1) = if r.w > 0 && r.h > 0 {
            self.span(r)
        } else {
            (0, 0, -1, -1)
        };
        (y0..=y1).flat_map(move |y| (x0..=x1).map(move |x| ((y * cols + x) as usize, (x, y))))
    }

    fn insert(&mut self, r: &IRect, i: usize) {
        let mut later = std::mem::take(&mut self.later);
        if later.is_empty() {
            later = vec![Vec::new(); self.starts.len() - 1];
        }
        for (c, _) in self.cells(r) {
            later[c].push(i as u32);
        }
        self.later = later;
    }

    /// Calls `f(i, cell)` for every rectangle sharing a cell with `r`; a
    /// rectangle spanning several such cells comes once per cell, and `cell`
    /// (its left, top in pixels) lets the caller count it in one of them only.
    fn visit(&self, r: &IRect, mut f: impl FnMut(usize, (i32, i32))) {
        let (x0, y0, x1, y1) = self.span(r);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let c = (y * self.cols + x) as usize;
                let built = &self.items[self.starts[c] as usize..self.starts[c + 1] as usize];
                let later = self.later.get(c).map_or(&[][..], |l| &l[..]);
                for &i in built.iter().chain(later) {
                    f(i as usize, (x, y));
                }
            }
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
}

/// Which pixels the placed labels cover, one bit each. A crowded layout tries
/// tens of positions per label; counting a chip's bits takes a few word
/// operations per row, where summing overlaps through the grid visits every
/// label in the cells around it.
struct Occupancy {
    width: i32,
    height: i32,
    /// The rows with bits: those of the region being laid out (a half's labels
    /// stay in its half, and a bitmap of the whole image per half cost more
    /// to allocate and fault in than the half's placing saved).
    top: i32,
    bottom: i32,
    /// `u64` words per row.
    stride: usize,
    bits: Vec<u64>,
    /// Every label recorded lies inside the region's rows: rows outside hold
    /// no label, so the bits tell whether a rectangle touches one.
    complete: bool,
    /// Moreover no two labels share a pixel: then the bits a rectangle covers
    /// are exactly the sum of its overlaps with each label.
    disjoint: bool,
}

impl Occupancy {
    fn new(width: u32, height: u32, region: &IRect) -> Self {
        let stride = (width as usize).div_ceil(64);
        let top = region.y.clamp(0, height as i32);
        let bottom = region.bottom().clamp(top, height as i32);
        Self {
            width: width as i32,
            height: height as i32,
            top,
            bottom,
            stride,
            bits: vec![0; stride * (bottom - top) as usize],
            complete: true,
            disjoint: true,
        }
    }

    /// The columns `x0..x1` and rows `y0..y1` (counted from `top`) of the
    /// rectangle inside the region's rows; `None` when none are.
    #[inline(always)]
    fn span(&self, r: &IRect) -> Option<(i32, i32, i32, i32)> {
        let (x0, x1) = (r.x.clamp(0, self.width), r.right().clamp(0, self.width));
        let (y0, y1) = (
            r.y.clamp(self.top, self.bottom),
            r.bottom().clamp(self.top, self.bottom),
        );
        (x0 < x1 && y0 < y1).then_some((x0, x1, y0 - self.top, y1 - self.top))
    }

    /// Folds `f` over `word & mask` for the words of every row the rectangle
    /// covers inside the image, `mask` keeping the rectangle's columns.
    #[inline(always)]
    fn fold_words<T>(&self, r: &IRect, init: T, f: impl Fn(T, u64) -> T) -> T {
        let Some((x0, x1, y0, y1)) = self.span(r) else {
            return init;
        };
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
        self.complete &= r.y >= self.top && r.bottom() <= self.bottom;
        self.disjoint &=
            self.complete && !overlapping && r.inside(self.width as u32, self.height as u32);
        let Some((x0, x1, y0, y1)) = self.span(r) else {
            return;
        };
        for k in x0 as usize / 64..=(x1 - 1) as usize / 64 {
            let mask = word_mask(k, x0, x1);
            for y in y0 as usize..y1 as usize {
                self.bits[y * self.stride + k] |= mask;
            }
        }
    }

    /// How many set bits the rectangle covers.
    fn bits_in(&self, r: &IRect) -> i64 {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the popcnt instruction, checked just above.
            return unsafe { self.bits_in_with_popcnt(r) };
        }
        self.fold_words(r, 0, |n, w| n + i64::from(w.count_ones()))
    }

    /// [`Occupancy::bits_in`] compiled to the popcnt instruction, which the
    /// baseline x86-64 target lacks (its software count made this the hottest
    /// loop of a crowded layout).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn bits_in_with_popcnt(&self, r: &IRect) -> i64 {
        self.fold_words(r, 0, |n, w| n + i64::from(w.count_ones()))
    }

    /// Whether a rectangle on the image touches a placed label; `None` for one
    /// reaching outside the image, where the bits cannot tell.
    fn touches(&self, r: &IRect) -> Option<bool> {
        (self.complete && r.inside(self.width as u32, self.height as u32))
            .then(|| self.fold_words(r, 0, |any, w| any | w) != 0)
    }

    /// The area a rectangle shares with placed labels, when the bits can tell
    /// it exactly (see `disjoint`).
    fn shared_area(&self, r: &IRect) -> Option<i64> {
        if self.disjoint && r.inside(self.width as u32, self.height as u32) {
            return Some(self.bits_in(r));
        }
        match self.touches(r)? {
            false => Some(0),
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

/// The labels placed so far, by mark index, and what a chip at some position
/// would cover of them.
struct Placed {
    /// Chip of each mark; meaningful for those inserted.
    rects: Vec<IRect>,
    /// The marks inserted, in order.
    inserted: Vec<usize>,
    occupied: Occupancy,
    /// Labels by grid cell, built once labels overlap and the bits no longer
    /// tell the shared area (most layouts never need it).
    grid: Option<Grid>,
    width: u32,
    height: u32,
}

impl Placed {
    fn new(marks: usize, width: u32, height: u32, region: &IRect) -> Self {
        Self {
            rects: vec![IRect::default(); marks],
            inserted: Vec::new(),
            occupied: Occupancy::new(width, height, region),
            grid: None,
            width,
            height,
        }
    }

    fn insert(&mut self, i: usize, p: &Placement) {
        self.rects[i] = p.rect;
        self.inserted.push(i);
        self.occupied.insert(&p.rect, p.cost.label_overlap > 0);
        if let Some(grid) = &mut self.grid {
            grid.insert(&p.rect, i);
        } else if !self.occupied.disjoint {
            let rects = &self.rects;
            let placed = self.inserted.iter().map(|&j| (j, rects[j]));
            self.grid = Some(Grid::build(self.width, self.height, placed));
        }
    }

    /// Area that `cand` shares with placed labels, each counted once.
    fn overlap(&self, cand: &IRect) -> i64 {
        if let Some(area) = self.occupied.shared_area(cand) {
            return area;
        }
        let Some(grid) = &self.grid else {
            // Only a chip larger than the image gets here with disjoint labels.
            return self
                .inserted
                .iter()
                .map(|&j| self.rects[j].overlap(cand))
                .sum();
        };
        let mut total = 0;
        grid.visit(cand, |j, cell| {
            let other = &self.rects[j];
            let (ix, iy) = (cand.x.max(other.x), cand.y.max(other.y));
            let area = other.overlap(cand);
            // Count the pair in the cell holding the top-left of the overlap only.
            if area > 0 && in_cell(grid, (ix, iy), cell) {
                total += area;
            }
        });
        total
    }
}

/// How many rings of positions further out are tried before giving up on a
/// position that covers nothing.
const RINGS: i32 = 2;

/// Fallback positions allowed per mark, on average over a layout.
const SCAN_BUDGET_PER_MARK: i64 = 40;

/// Positions the crowded fallback tries for a spot that hides no small target,
/// past one that touches no label.
const SMALL_SEARCH: i64 = 24;

/// How many chip-sized rings the crowded fallback scans for a spot no label touches.
const FAR_RINGS: i32 = 30;

/// Marks from which a layout is split into two halves (see [`Layout::new`]),
/// which go to two threads when asked. Two threads gain from here on
/// (measured, one thread against two: 200 marks 0.28 and 0.23 ms at
/// 1280×800, 0.43 and 0.36 ms at 1920×1080; 300 marks 0.37 and 0.28 ms, 0.55
/// and 0.42 ms); with fewer, starting the second thread (about 0.05 ms) eats
/// most of what it saves.
pub const SPLIT_MIN: usize = 200;

/// Candidate chip positions for a box, in order of preference, then rings
/// further out, which get a leader line. A small target's chip goes beside
/// it (left, above, right, below), never inside. A larger target's goes
/// outside first, then inside a corner, the right ones before the left,
/// which hold the first characters of its text.
fn candidates(b: &IRect, cw: i32, ch: i32) -> Vec<(IRect, bool)> {
    let at = |x: i32, y: i32| IRect { x, y, w: cw, h: ch };
    let middle = b.y + (b.h - ch) / 2;
    let mut out = if is_small_target(b, (cw, ch)) {
        vec![
            (at(b.x - cw, middle), false),           // left of the box
            (at(b.x, b.y - ch), false),              // above, left-aligned
            (at(b.right(), middle), false),          // right of the box
            (at(b.x, b.bottom()), false),            // below, left-aligned
            (at(b.right() - cw, b.y - ch), false),   // above, right-aligned
            (at(b.right() - cw, b.bottom()), false), // below, right-aligned
            (at(b.x - cw, b.y - ch), false),         // above the left corner
            (at(b.right(), b.y - ch), false),        // above the right corner
        ]
    } else {
        vec![
            (at(b.x, b.y - ch), false),                   // above, left-aligned
            (at(b.right() - cw, b.y - ch), false),        // above, right-aligned
            (at(b.x, b.bottom()), false),                 // below, left-aligned
            (at(b.right() - cw, b.bottom()), false),      // below, right-aligned
            (at(b.x - cw, b.y), false),                   // left of the box
            (at(b.right(), b.y), false),                  // right of the box
            (at(b.right() - cw, b.y), false),             // inside top-right
            (at(b.right() - cw, b.bottom() - ch), false), // inside bottom-right
            (at(b.x, b.y), false),                        // inside top-left
            (at(b.x, b.bottom() - ch), false),            // inside bottom-left
        ]
    };
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
    // Where small targets are packed tight, its own box may be the one spot
    // that hides no other target and no label: the last resort.
    if is_small_target(b, (cw, ch)) {
        out.push((at(b.right() - cw, b.y), false));
        out.push((at(b.x, b.y), false));
    }
    out
}

/// The part of a mark inside the image; `None` when nothing of it is. Work
/// is done on that part only: a box far outside (bad input, a debug
/// offscreen mark) must not cost a grid cell per pixel.
fn shown(m: &MarkBox, width: u32, height: u32) -> Option<MarkBox> {
    let rect = clip_to(m.rect, width, height);
    (rect.w > 0 && rect.h > 0).then_some(MarkBox { rect, ..*m })
}

/// The part of a rectangle inside the image; a zero-size rectangle on the
/// nearest edge when there is none.
fn clip_to(r: IRect, width: u32, height: u32) -> IRect {
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

/// Pulls a rectangle inside `region` (keeping its size when it fits).
fn clamp_into(r: IRect, region: &IRect) -> IRect {
    IRect {
        x: r.x.clamp(region.x, (region.right() - r.w).max(region.x)),
        y: r.y.clamp(region.y, (region.bottom() - r.h).max(region.y)),
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

/// Where one mark's label goes.
struct Placement {
    rect: IRect,
    cost: Cost,
    /// Placed away from its box: a leader line joins them.
    away: bool,
    /// Positions the crowded fallback took from its group's budget.
    scanned: i64,
}

/// Label placement for one image: what placement reads and never changes
/// (the marks and their chips), asked for the labels of the whole image or
/// of one half.
pub struct Layout {
    /// The marks, clipped to the image.
    marks: Vec<MarkBox>,
    /// Chip size per mark.
    chips: Vec<(i32, i32)>,
    width: u32,
    height: u32,
    /// The tallest chip, which decides whether the image is cut in two.
    tallest: i32,
}

/// What placing and coloring one part read: its marks, where their labels
/// may go, and the boxes near it. Each half makes its own, so the halves
/// share nothing but the [`Layout`].
struct Scope {
    /// The part's marks, in order.
    group: Vec<usize>,
    /// Where their labels go.
    region: IRect,
    /// The marks near the cut, colored first (see [`Layout::colors`]).
    cut: Vec<usize>,
    /// The interactable boxes that reach the part's rows or the cut's, by
    /// mark index.
    boxes: Grid,
    /// The other such boxes (debug style only), likewise.
    others: Option<Grid>,
}

/// The marks a set of labels is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitPart {
    /// Every mark.
    All,
    /// The marks of the top half of a split layout.
    Top,
    /// The marks of the bottom half of a split layout.
    Bottom,
}

/// One part of a layout with its marks colored, ready to place their labels.
pub struct Colored<'a> {
    layout: &'a Layout,
    scope: Scope,
    colors: Vec<Option<usize>>,
}

impl Colored<'_> {
    /// A palette index per mark, for the marks whose boxes can cross the
    /// part's rows (its own and those near the cut); `None` for the others.
    pub fn colors(&self) -> &[Option<usize>] {
        &self.colors
    }

    /// The part's labels with their mark indices, in mark order.
    pub fn labels(&self) -> Vec<(usize, Label)> {
        let layout = self.layout;
        layout
            .place_group(&self.scope)
            .into_iter()
            // Coloring covers every mark of the part.
            .map(|(i, p)| (i, layout.label(i, p, self.colors[i].unwrap_or_default())))
            .collect()
    }
}

impl Layout {
    /// Prepares the layout of the marks on a `width`×`height` image (the
    /// part of each inside it; marks with none are left out); `chip(id)`
    /// gives each chip's size.
    ///
    /// From [`SPLIT_MIN`] marks on (on an image at least two chips tall), the
    /// image is cut at its middle row into two halves laid out independently:
    /// each mark belongs to the half holding its box's center, and its label,
    /// and its leader line, stay inside that half. The halves never share a
    /// label, and each colors its own marks (see [`Layout::colored`]), so
    /// they are placed (and drawn) on two threads; the labels are the same
    /// either way.
    pub fn new(
        marks: &[MarkBox],
        width: u32,
        height: u32,
        chip: impl Fn(u32) -> (i32, i32),
    ) -> Self {
        let marks: Vec<MarkBox> = marks
            .iter()
            .filter_map(|m| shown(m, width, height))
            .collect();
        let chips: Vec<(i32, i32)> = marks.iter().map(|m| chip(m.id)).collect();
        let tallest = chips.iter().map(|c| c.1).max().unwrap_or(0);
        Layout {
            marks,
            chips,
            width,
            height,
            tallest,
        }
    }

    /// The marks, clipped to the image.
    pub fn marks(&self) -> &[MarkBox] {
        &self.marks
    }

    /// The row the image is cut at, when it is (see [`Layout::new`]). Each
    /// half must hold a chip, or labels would leave the image.
    pub fn split(&self) -> Option<i32> {
        let line = (self.height / 2) as i32;
        (self.marks.len() >= SPLIT_MIN && line >= self.tallest).then_some(line)
    }

    /// The marks of `part` (and those near the cut, whose boxes cross its
    /// rows), colored. A half needs nothing from the other. A half of a
    /// layout that is not split has no marks; [`SplitPart::All`] is every mark as
    /// one part, even where the layout is split (whose labels are then
    /// asked for by halves, as [`Layout::all_labels`] does).
    pub fn colored(&self, part: SplitPart) -> Colored<'_> {
        let whole = IRect {
            x: 0,
            y: 0,
            w: self.width as i32,
            h: self.height as i32,
        };
        let scope = match (part, self.split()) {
            (SplitPart::All, _) => self.scope((0..self.marks.len()).collect(), whole, None),
            (_, None) => self.scope(Vec::new(), whole, None),
            (SplitPart::Top, Some(line)) => self.scope(
                self.in_rows(|y| y < line),
                IRect { h: line, ..whole },
                Some(line),
            ),
            (SplitPart::Bottom, Some(line)) => self.scope(
                self.in_rows(|y| y >= line),
                IRect {
                    y: line,
                    h: whole.h - line,
                    ..whole
                },
                Some(line),
            ),
        };
        Colored {
            colors: self.colors(&scope),
            layout: self,
            scope,
        }
    }

    /// The scope of the marks `group`, whose labels go in `region`, on an
    /// image cut at `line` (if it is).
    fn scope(&self, group: Vec<usize>, region: IRect, line: Option<i32>) -> Scope {
        // Every box the part's placing or coloring can meet: those reaching
        // its rows, or within a chip of the cut.
        let (top, bottom) = match line {
            Some(line) if region.y < line => (region.y, line + self.tallest),
            Some(line) => (line - self.tallest, region.bottom()),
            None => (region.y, region.bottom()),
        };
        let near = |interactable: bool| {
            self.marks
                .iter()
                .enumerate()
                .filter(move |(_, m)| {
                    (m.kind == MarkKind::Interactable) == interactable
                        && m.rect.y < bottom
                        && m.rect.bottom() > top
                })
                .map(|(i, m)| (i, m.rect))
        };
        let others = near(false)
            .next()
            .is_some()
            .then(|| Grid::build(self.width, self.height, near(false)));
        let cut = line.map_or_else(Vec::new, |line| {
            (0..self.marks.len())
                .filter(|&i| {
                    let reach = self.reach(i);
                    reach.y < line && reach.bottom() > line
                })
                .collect()
        });
        Scope {
            group,
            region,
            cut,
            boxes: Grid::build(self.width, self.height, near(true)),
            others,
        }
    }

    /// What mark `i`'s chip at `cand` would cover; `None` as soon as it covers
    /// more label area than `bound`: such a position loses to one already
    /// found, whatever else it covers.
    fn cost_at(
        &self,
        i: usize,
        boxes: &Grid,
        placed: &Placed,
        cand: IRect,
        bound: i64,
    ) -> Option<Cost> {
        let label_overlap = placed.overlap(&cand);
        if label_overlap > bound {
            return None;
        }
        let own = &self.marks[i].rect;
        let mut cost = Cost {
            label_overlap,
            ..Cost::default()
        };
        if is_small_target(own, self.chips[i]) {
            cost.own_overlap = own.overlap(&cand);
        }
        boxes.visit(&cand, |j, cell| {
            if j == i {
                return;
            }
            let other = &self.marks[j].rect;
            if is_small_target(other, self.chips[j]) {
                let area = other.overlap(&cand);
                let corner = (cand.x.max(other.x), cand.y.max(other.y));
                if area > 0 && in_cell(boxes, corner, cell) {
                    cost.small_overlap += area;
                }
            }
            let center = other.center();
            if cand.contains_point(center.0, center.1) {
                if in_cell(boxes, center, cell) {
                    cost.centers_covered += 1;
                }
            } else if !other.contains(own) {
                // A box that encloses ours (a card around a button) can't be avoided.
                let area = other.overlap(&cand);
                let corner = (cand.x.max(other.x), cand.y.max(other.y));
                if area > 0 && in_cell(boxes, corner, cell) {
                    cost.box_overlap += area;
                }
            }
        });
        Some(cost)
    }

    /// Chooses mark `i`'s label position inside the scope's region, among
    /// the labels `placed` so far. The crowded fallback runs while the
    /// labels placed cover less area than the region (`covered`) and
    /// `budget` is left.
    fn place(
        &self,
        i: usize,
        scope: &Scope,
        placed: &Placed,
        covered: i64,
        budget: i64,
    ) -> Placement {
        let (m, region, boxes) = (&self.marks[i], &scope.region, &scope.boxes);
        let (cw, ch) = self.chips[i];
        let mut best: Option<(Cost, IRect, bool)> = None;
        for (cand, away) in candidates(&m.rect, cw, ch) {
            let on_region = region.contains(&cand);
            let cand = clamp_into(cand, region);
            let bound = best.as_ref().map_or(i64::MAX, |(c, _, _)| c.label_overlap);
            let Some(mut cost) = self.cost_at(i, boxes, placed, cand, bound) else {
                continue;
            };
            cost.clamped = !on_region;
            let free = cost == Cost::default();
            if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                best = Some((cost, cand, away));
            }
            if free {
                break;
            }
        }
        // Crowded: every nearby position touches a label or hides a small
        // target. Scan further out, in growing square rings, for the nearest
        // spot that does neither; past the first spot no label touches, only
        // a few more positions are tried for one that also hides no small
        // target (on a page packed with small targets there is none, and the
        // scan budget must stay for the marks whose labels would overlap).
        // Once labels cover as much area as the region there is no free spot
        // left, and the scan would cost more than it finds.
        let mut scanned = 0;
        let region_area = i64::from(region.w) * i64::from(region.h);
        let crowded = best.as_ref().map(|(c, _, _)| c.label_overlap > 0);
        if covered < region_area
            && budget > 0
            && best.as_ref().is_some_and(|(c, _, _)| {
                c.label_overlap > 0 || c.small_overlap > 0 || c.own_overlap > 0
            })
        {
            let (sx, sy) = (cw.max(1), ch.max(1));
            // Positions left for a spot that hides no small target, once a
            // spot no label touches is in hand.
            let mut left = (crowded == Some(false)).then_some(SMALL_SEARCH);
            'rings: for r in 1..=FAR_RINGS {
                for k in -r..=r {
                    for (dx, dy) in [(k, -r), (k, r), (-r, k), (r, k)] {
                        // A search for a spot that hides no small target
                        // only is bounded by its own count, not the budget.
                        if crowded == Some(true) {
                            scanned += 1;
                        }
                        if scanned == budget || left == Some(0) {
                            break 'rings;
                        }
                        if let Some(n) = &mut left {
                            *n -= 1;
                        }
                        let cand = IRect {
                            x: m.rect.x + dx * sx,
                            y: m.rect.y + dy * sy,
                            w: cw,
                            h: ch,
                        };
                        let cand = clamp_into(cand, region);
                        // Exact for a position on the image, so the sum can wait.
                        if placed.occupied.touches(&cand) == Some(true) {
                            continue;
                        }
                        if let Some(mut cost) = self.cost_at(i, boxes, placed, cand, 0) {
                            cost.clamped = !region.contains(&cand);
                            if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                                best = Some((cost, cand, true));
                            }
                            if cost.small_overlap == 0 && cost.own_overlap == 0 {
                                break 'rings;
                            }
                            left.get_or_insert(SMALL_SEARCH);
                        }
                    }
                }
            }
        }
        // The first candidate always has a cost (its bound is unlimited).
        let (cost, rect, away) = best.unwrap_or_default();
        Placement {
            rect,
            cost,
            away,
            scanned,
        }
    }

    /// Places the labels of the scope's marks, in order, inside its region,
    /// seeing no other labels.
    fn place_group(&self, scope: &Scope) -> Vec<(usize, Placement)> {
        let mut placed = Placed::new(self.marks.len(), self.width, self.height, &scope.region);
        let mut budget = SCAN_BUDGET_PER_MARK * scope.group.len() as i64;
        let mut covered = 0;
        let mut out = Vec::with_capacity(scope.group.len());
        for &i in &scope.group {
            let p = self.place(i, scope, &placed, covered, budget);
            budget -= p.scanned;
            covered += i64::from(p.rect.w) * i64::from(p.rect.h);
            placed.insert(i, &p);
            out.push((i, p));
        }
        out
    }

    /// A palette index for each mark of the scope, skipping the colors of
    /// the marks already colored whose boxes come within a chip's height, so
    /// neighbors differ. Marks are colored in order, but on a cut image the
    /// marks within a chip of the cut come first, in both halves alike:
    /// every pair of neighbors on either side of the cut is among them, and
    /// each half then colors its own marks without waiting for the other.
    fn colors(&self, scope: &Scope) -> Vec<Option<usize>> {
        let mut colors: Vec<Option<usize>> = vec![None; self.marks.len()];
        for &i in scope.cut.iter().chain(&scope.group) {
            if colors[i].is_some() {
                continue;
            }
            let m = &self.marks[i];
            let reach = self.reach(i);
            let mut used = [false; PALETTE.len()];
            let mut mark_used = |j: usize, _| {
                if let Some(c) = colors[j] {
                    if self.marks[j].rect.overlap(&reach) > 0 {
                        used[c] = true;
                    }
                }
            };
            scope.boxes.visit(&reach, &mut mark_used);
            if let Some(others) = &scope.others {
                others.visit(&reach, &mut mark_used);
            }
            let start = (m.id as usize) % PALETTE.len();
            let color = (0..PALETTE.len())
                .map(|k| (start + k) % PALETTE.len())
                .find(|&c| !used[c])
                .unwrap_or(start);
            colors[i] = Some(color);
        }
        colors
    }

    /// Where mark `i`'s neighbors are: its box grown by its chip's height.
    /// Marks whose boxes meet each other's reach get different colors.
    fn reach(&self, i: usize) -> IRect {
        self.marks[i].rect.grown(self.chips[i].1)
    }

    /// The marks whose box center's row passes `keep`.
    fn in_rows(&self, keep: impl Fn(i32) -> bool) -> Vec<usize> {
        (0..self.marks.len())
            .filter(|&i| keep(self.marks[i].rect.center().1))
            .collect()
    }

    fn label(&self, i: usize, p: Placement, color: usize) -> Label {
        let m = &self.marks[i];
        let touches = p.rect.overlap(&m.rect.grown(1)) > 0;
        Label {
            id: m.id,
            rect: p.rect,
            color,
            leader: (p.away || !touches).then(|| leader(&p.rect, &m.rect)),
            cost: p.cost,
        }
    }

    /// Every label in mark order; the halves of a split layout on two
    /// threads when `parallel`.
    pub fn all_labels(&self, parallel: bool) -> Vec<Label> {
        let labels = |part| self.colored(part).labels();
        let mut all = match self.split() {
            None => labels(SplitPart::All),
            Some(_) => {
                let (mut top, bottom) = if parallel {
                    rayon::join(|| labels(SplitPart::Top), || labels(SplitPart::Bottom))
                } else {
                    (labels(SplitPart::Top), labels(SplitPart::Bottom))
                };
                top.extend(bottom);
                top
            }
        };
        all.sort_unstable_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, l)| l).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Grid::visit` must report: every rectangle sharing a cell with
    /// the query, once per shared cell, in the order the rectangles came.
    fn brute_force(rects: &[(usize, IRect)], q: &IRect, g: &Grid) -> Vec<(usize, (i32, i32))> {
        let (x0, y0, x1, y1) = g.span(q);
        let mut out = Vec::new();
        for y in y0..=y1 {
            for x in x0..=x1 {
                for &(i, r) in rects {
                    if g.cells(&r).any(|(_, c)| c == (x, y)) {
                        out.push((i, (x, y)));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn a_grid_built_at_once_then_added_to_finds_every_rectangle_in_order() {
        let rect = |x, y, w, h| IRect { x, y, w, h };
        let first = [
            (0, rect(0, 0, 40, 40)),
            (1, rect(30, 30, 70, 10)),
            (2, rect(200, 100, 5, 5)),
            (3, rect(-10, -10, 5, 5)),
            (4, rect(50, 50, 0, 10)),
        ];
        let later = [(5, rect(20, 20, 100, 100)), (6, rect(190, 90, 20, 20))];
        let mut g = Grid::build(256, 160, first.iter().copied());
        for &(i, r) in &later {
            g.insert(&r, i);
        }
        let all: Vec<(usize, IRect)> = first.iter().chain(&later).copied().collect();
        for q in [
            rect(0, 0, 256, 160),
            rect(35, 35, 2, 2),
            rect(195, 95, 30, 30),
            rect(300, 300, 10, 10),
        ] {
            let mut seen = Vec::new();
            g.visit(&q, |i, c| seen.push((i, c)));
            // Built ones come before added ones within a cell, as insertion order.
            assert_eq!(seen, brute_force(&all, &q, &g), "query {q:?}");
        }
    }
}
