//! Reading: the page's content as compact Markdown, from the live page.
//!
//! A walk in the page (`read.js`, one round trip per frame) lists the blocks a
//! person sees (headings, paragraphs, lists, tables, definition lists,
//! quotes, code, image alt text, form fields, closed `<details>`), leaving out
//! what nobody can see; the Markdown is written here. Child frames, of any
//! origin, are read in place, and open shadow roots as the page composes
//! them. Links and buttons that are in the element table carry their mark id
//! (`[Pricing][12]`), so what was read can be clicked. Navigation, header,
//! footer and cookie notices are folded to one line each, so the first part is
//! the content. A [`Reading`](crate::read::Reading) is cut into [`Part`](crate::read::Part)s of a bounded size at block
//! boundaries: `READ:more` gives the next.

mod markdown;
pub mod pdf;
pub mod pdf_guard;
mod sections;

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use chromiumoxide::Page;
use serde::{Deserialize, Serialize};

use crate::browser::Viewport;
use crate::perceive::{self, ElementTable, PerceiveError, Rect};

pub use markdown::Part;

/// Characters a read gives at once, by default.
pub const DEFAULT_READ_CHARS: usize = 6000;

/// Characters of text the walk collects per frame at most: past this it stops
/// (a page of a million words is read up to here; READ:"text" reaches parts
/// further down only when they fall within it).
pub const MAX_COLLECTED: usize = 400_000;

/// The call that reads a frame: the walk (`read.js`) is left on the
/// document's node registry (perceive/registry.rs) at its first read and
/// called from there on, so that the engine keeps what it learned running
/// it, as it does for the enumerator. The registry itself knows nothing of it.
const READ_CALL: &str = concat!(
    "function (o, target) { if (!this.read) this.read = (",
    include_str!("read.js"),
    "); o.target = target; return this.read(o); }"
);

/// Errors of reading.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The page could not be reached.
    #[error(transparent)]
    Perceive(#[from] PerceiveError),
    /// The walk answered something unreadable.
    #[error("the page's text could not be read: {0}")]
    Unreadable(String),
    /// `READ:"text"`: nothing on the page holds the text.
    #[error("no text {0:?} on the page (READ with no argument reads it all)")]
    NotFound(String),
}

/// What to read.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// The whole document, frames included.
    Page,
    /// The region around one node (a table, dialog, list, form, section or
    /// card): the node's frame and backendNodeId.
    Region {
        /// CDP frame id.
        frame: String,
        /// backendNodeId.
        node: i64,
    },
    /// The smallest section whose heading or text contains this text.
    Text(String),
}

/// Whose form values a reading shows (a password's never).
#[derive(Debug, Clone, Copy)]
pub enum Values<'a> {
    /// Every field's (a person reading the page).
    All,
    /// Only these nodes' (the fields the agent typed into, without secrets).
    Only(&'a HashSet<i64>),
}

/// What a reading refers to: the element table whose mark ids links carry,
/// and whose form values it may show.
#[derive(Debug, Clone, Copy)]
pub struct Marks<'a> {
    /// The table of the last observation.
    pub table: Option<&'a ElementTable>,
    /// Which fields' values are shown.
    pub values: Values<'a>,
}

impl Marks<'_> {
    /// Registry number → mark id, for the nodes a registry (`document`)
    /// numbered: the table's elements of that document by their numbers, and
    /// any other whose backendNodeId the registry knows (`numbers`).
    fn ids_in(&self, document: u64, numbers: &[i64]) -> HashMap<usize, u32> {
        let Some(table) = self.table else {
            return HashMap::new();
        };
        let by_node: HashMap<i64, u32> = table
            .elements
            .iter()
            .flat_map(|e| {
                std::iter::once((e.backend_node_id, e.id))
                    .chain(e.control_node_id.map(|c| (c, e.id)))
            })
            .filter(|(b, _)| *b > 0)
            .collect();
        let mut ids: HashMap<usize, u32> = numbers
            .iter()
            .enumerate()
            .filter_map(|(n, b)| Some((n, *by_node.get(b)?)))
            .collect();
        for e in table
            .elements
            .iter()
            .filter(|e| e.node.document == document)
        {
            for n in std::iter::once(e.node.number).chain(e.node.control) {
                ids.insert(n as usize, e.id);
            }
        }
        ids
    }

    fn shows_value(&self, node: Option<i64>) -> bool {
        match self.values {
            Values::All => true,
            Values::Only(nodes) => node.is_some_and(|n| nodes.contains(&n)),
        }
    }
}

/// Limits of a read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Characters of text collected per frame at most.
    pub max_collected: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            max_collected: MAX_COLLECTED,
        }
    }
}

/// What kind of block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// `#`… heading.
    Heading,
    /// A paragraph.
    Paragraph,
    /// A list item (or a paragraph inside one).
    ListItem,
    /// A definition list's term.
    Term,
    /// A definition list's definition.
    Definition,
    /// A quote.
    Quote,
    /// Preformatted code.
    Code,
    /// A table, as a Markdown table.
    Table,
    /// A form field, `label: value`.
    Field,
    /// A closed `<details>`: its summary.
    Collapsed,
    /// Navigation, a header, a footer or a cookie notice, folded to one line.
    Folded,
}

/// One block of a reading.
#[derive(Debug, Clone, Serialize)]
pub struct Block {
    /// What kind.
    pub kind: BlockKind,
    /// Its Markdown.
    pub text: String,
    /// The box of the element it comes from, in top-level viewport CSS pixels.
    pub bbox: Rect,
    /// CDP frame id.
    pub frame: String,
    /// Mark ids of the controls in it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<u32>,
    /// For a folded block: `navigation`, `header`, `footer` or `cookie notice`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<&'static str>,
    /// Index of the container it sits in (see [`Reading`]), internal.
    #[serde(skip)]
    container: i64,
    /// A heading's level.
    #[serde(skip)]
    level: u8,
    /// The folded region it belongs to: (frame, instance).
    #[serde(skip)]
    instance: Option<(usize, u64)>,
}

/// The page's content, whole, as blocks and as Markdown.
#[derive(Debug, Clone, Serialize)]
pub struct Reading {
    /// URL of the top-level document.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The blocks, in reading order.
    pub blocks: Vec<Block>,
    /// The blocks' Markdown, whole.
    pub markdown: String,
    /// Where each block starts in `markdown`.
    #[serde(skip)]
    starts: Vec<usize>,
    /// Words of visible text read.
    pub words: usize,
    /// The walk stopped at [`ReadOptions::max_collected`]: the page holds
    /// more. The Markdown then ends before the block the walk stopped in (a
    /// table, before the rows not read), so that a longer read begins with
    /// exactly this Markdown.
    pub cut: bool,
    /// Milliseconds the read took.
    pub ms: f64,
}

impl Reading {
    /// A reading of plain text that is no page's walk (a PDF's text): one
    /// block of Markdown, whole.
    pub fn of_text(url: &str, text: &str) -> Reading {
        Reading {
            url: url.to_string(),
            title: String::new(),
            blocks: Vec::new(),
            markdown: text.to_string(),
            starts: vec![0],
            words: text.split_whitespace().count(),
            cut: false,
            ms: 0.0,
        }
    }
}

#[derive(Debug, Deserialize)]
struct RawFrame {
    url: String,
    title: String,
    blocks: Vec<RawBlock>,
    parents: Vec<i64>,
    sections: Vec<u8>,
    cut: bool,
    words: usize,
}

#[derive(Debug, Deserialize, Clone)]
struct RawCell {
    t: String,
    #[serde(default)]
    cs: Option<usize>,
    #[serde(default)]
    rs: Option<usize>,
    #[serde(default)]
    th: Option<u8>,
}

#[derive(Debug, Deserialize, Clone)]
struct RawRow {
    cells: Vec<RawCell>,
    #[serde(default)]
    head: Option<u8>,
}

#[derive(Debug, Deserialize, Clone)]
struct RawBlock {
    k: String,
    #[serde(default)]
    t: String,
    #[serde(default)]
    l: Option<u8>,
    #[serde(default)]
    d: Option<usize>,
    #[serde(default)]
    o: Option<i64>,
    #[serde(default)]
    cont: Option<u8>,
    #[serde(default)]
    b: Vec<f64>,
    #[serde(default)]
    c: i64,
    #[serde(default)]
    r: Option<String>,
    #[serde(default)]
    ri: Option<u64>,
    #[serde(default)]
    rows: Vec<RawRow>,
    #[serde(default)]
    left: usize,
    #[serde(default)]
    label: String,
    #[serde(default)]
    value: Option<String>,
    #[serde(default, rename = "type")]
    field_type: Option<String>,
    #[serde(default)]
    on: Option<bool>,
    #[serde(default)]
    n: Option<usize>,
    #[serde(default)]
    fx: f64,
    #[serde(default)]
    fy: f64,
}

/// One frame's walk, with what places and names its blocks.
struct FrameRead {
    spot: perceive::FrameSpot,
    raw: RawFrame,
    /// Registry number → backendNodeId (0 where not asked for yet).
    numbers: Vec<i64>,
    /// The registry that numbered the frame's nodes.
    document: u64,
}

/// A raw block with the frame it came from, its container renumbered over
/// the whole page.
struct Placed<'a> {
    raw: &'a RawBlock,
    frame: usize,
    container: i64,
}

async fn read_frame(
    page: &Page,
    spot: perceive::FrameSpot,
    options: &ReadOptions,
    target: Option<i64>,
) -> Result<FrameRead, ReadError> {
    let args = serde_json::json!({ "maxChars": options.max_collected });
    let (value, numbers, document) =
        perceive::call_on_registry(page, &spot.id, READ_CALL, args, target).await?;
    let text = value
        .as_str()
        .ok_or_else(|| ReadError::Unreadable(format!("unexpected answer: {value}")))?;
    let raw: RawFrame =
        serde_json::from_str(text).map_err(|e| ReadError::Unreadable(e.to_string()))?;
    Ok(FrameRead {
        spot,
        raw,
        numbers,
        document,
    })
}

/// Reads the page (see the module's documentation).
pub async fn read(
    page: &Page,
    viewport: Viewport,
    scope: &Scope,
    marks: &Marks<'_>,
    options: &ReadOptions,
) -> Result<Reading, ReadError> {
    let start = Instant::now();
    let spots = perceive::frame_spots(page, perceive::view_rect(viewport)).await?;
    let first = match scope {
        Scope::Region { frame, .. } => spots
            .iter()
            .position(|s| s.id == *frame)
            .ok_or_else(|| ReadError::Unreadable("the element's frame is gone".into()))?,
        _ => 0,
    };
    let target = match scope {
        Scope::Region { node, .. } => Some(*node),
        _ => None,
    };
    let runs = spots.iter().enumerate().map(|(i, spot)| {
        read_frame(
            page,
            spot.clone(),
            options,
            (i == first).then_some(target).flatten(),
        )
    });
    let results = futures::future::join_all(runs).await;
    perceive::release_handles(&crate::browser::Link::Page(page.clone())).await;
    let mut frames = Vec::new();
    let mut first_index = None;
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Ok(f) => {
                if i == first {
                    first_index = Some(frames.len());
                }
                frames.push(f);
            }
            Err(e) if i == first => return Err(e),
            Err(e) => tracing::debug!("frame {} not read: {e}", spots[i].id),
        }
    }
    let first = first_index.unwrap_or(0);
    let mut parents: Vec<(i64, bool)> = Vec::new();
    let mut used = vec![false; frames.len()];
    used[first] = true;
    let placed = splice(&frames, first, -1, &mut used, &mut parents);
    let ids: Vec<HashMap<usize, u32>> = frames
        .iter()
        .map(|f| marks.ids_in(f.document, &f.numbers))
        .collect();
    let mut blocks = markdown::blocks(&placed, &frames, &ids, marks);
    let cut = frames.iter().any(|f| f.raw.cut);
    if cut {
        markdown::drop_unfinished(&mut blocks);
    }
    if let Scope::Text(needle) = scope {
        blocks = sections::section_of(blocks, &parents, needle)
            .ok_or_else(|| ReadError::NotFound(needle.clone()))?;
    }
    if matches!(scope, Scope::Page) {
        blocks = markdown::fold(blocks);
    }
    let (markdown, starts) = markdown::join(&blocks);
    let main = &frames[first].raw;
    Ok(Reading {
        url: main.url.clone(),
        title: main.title.clone(),
        words: frames.iter().map(|f| f.raw.words).sum(),
        cut,
        blocks,
        markdown,
        starts,
        ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

/// A frame's blocks with its child frames' blocks in place of their frame
/// elements, containers renumbered into `parents` (parent, is a section).
fn splice<'a>(
    frames: &'a [FrameRead],
    index: usize,
    parent: i64,
    used: &mut [bool],
    parents: &mut Vec<(i64, bool)>,
) -> Vec<Placed<'a>> {
    let frame = &frames[index];
    let base = parents.len() as i64;
    for (i, p) in frame.raw.parents.iter().enumerate() {
        let up = if *p < 0 { parent } else { base + p };
        parents.push((up, frame.raw.sections.get(i).copied().unwrap_or(0) == 1));
    }
    let container = |c: i64| if c < 0 { parent } else { base + c };
    let mut out = Vec::new();
    for raw in &frame.raw.blocks {
        if raw.k != "fr" {
            out.push(Placed {
                raw,
                frame: index,
                container: container(raw.c),
            });
            continue;
        }
        let (x, y) = (raw.fx + frame.spot.offset.x, raw.fy + frame.spot.offset.y);
        let child = frames.iter().enumerate().position(|(j, f)| {
            !used[j]
                && !f.spot.is_main
                && (f.spot.offset.x - x).abs() < 2.0
                && (f.spot.offset.y - y).abs() < 2.0
        });
        if let Some(j) = child {
            used[j] = true;
            out.extend(splice(frames, j, container(raw.c), used, parents));
        }
    }
    out
}

impl Reading {
    /// The part of the Markdown from byte `from`, at most `max` characters,
    /// cut at a block boundary (a line, a space, as a last resort).
    pub fn part(&self, from: usize, max: usize) -> Part {
        markdown::part(&self.markdown, &self.starts, from, max.max(200))
    }
}

/// A reading that goes only as far as the parts asked for need: the first
/// walk collects twice a part's size, and when a part reaches past what it
/// collected, the page is read again without that bound (it begins with the
/// same Markdown, see [`Reading::cut`]) and the part goes on from there. A
/// first part of a page of 50,000 nodes then costs a walk of its first part,
/// not of the whole page.
#[derive(Debug)]
pub struct Reader {
    scope: Scope,
    reading: Reading,
    collected: usize,
    next: usize,
}

impl Reader {
    /// Reads enough of `scope` for a first part of `max` characters. A
    /// section asked for by its text is looked for in the whole page.
    pub async fn start(
        page: &Page,
        viewport: Viewport,
        scope: Scope,
        marks: &Marks<'_>,
        max: usize,
    ) -> Result<Reader, ReadError> {
        let collected = match scope {
            Scope::Text(_) => MAX_COLLECTED,
            _ => max.saturating_mul(2).clamp(4000, MAX_COLLECTED),
        };
        let options = ReadOptions {
            max_collected: collected,
        };
        let reading = read(page, viewport, &scope, marks, &options).await?;
        Ok(Reader {
            scope,
            reading,
            collected,
            next: 0,
        })
    }

    /// What was read so far.
    pub fn reading(&self) -> &Reading {
        &self.reading
    }

    /// Whether every part was given (of what can be read at most).
    pub fn done(&self) -> bool {
        self.next >= self.reading.markdown.len() && !self.can_read_further()
    }

    /// Whether the walk stopped at a bound below [`MAX_COLLECTED`].
    fn can_read_further(&self) -> bool {
        self.reading.cut && self.collected < MAX_COLLECTED
    }

    /// The next part, at most `max` characters, reading further first when
    /// it reaches past what was collected.
    pub async fn next_part(
        &mut self,
        page: &Page,
        viewport: Viewport,
        marks: &Marks<'_>,
        max: usize,
    ) -> Result<Part, ReadError> {
        let mut part = self.reading.part(self.next, max);
        if part.left() == 0 && self.can_read_further() {
            self.collected = MAX_COLLECTED;
            let options = ReadOptions {
                max_collected: self.collected,
            };
            self.reading = read(page, viewport, &self.scope, marks, &options).await?;
            part = self.reading.part(self.next, max);
        }
        part.more = self.can_read_further();
        self.next = part.to;
        Ok(part)
    }
}
