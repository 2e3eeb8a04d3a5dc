//! Writing the walk's blocks as Markdown, folding boilerplate, and cutting
//! the result into parts.

use std::collections::HashMap;

use serde::Serialize;

use super::{Block, BlockKind, FrameRead, Marks, Placed, RawBlock, RawRow};
use crate::perceive::Rect;

/// Longest line a folded region becomes.
const FOLDED_CHARS: usize = 160;

/// One bounded part of a reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    /// The Markdown of this part.
    pub text: String,
    /// Byte offset in the whole Markdown where it starts.
    pub from: usize,
    /// Byte offset where the next part starts.
    pub to: usize,
    /// Bytes of the whole Markdown.
    pub total: usize,
    /// The page holds more than was read: more parts follow the Markdown's end.
    pub more: bool,
}

impl Part {
    /// All of `text` as one part.
    pub fn whole(text: &str) -> Part {
        Part {
            text: text.to_string(),
            from: 0,
            to: text.len(),
            total: text.len(),
            more: false,
        }
    }

    /// Characters left after this part.
    pub fn left(&self) -> usize {
        self.total.saturating_sub(self.to)
    }

    /// The line that says how much is left, if anything is.
    pub fn trailer(&self) -> Option<String> {
        if self.more {
            Some(format!(
                "[… at least {} more characters: READ:more continues]",
                self.left().max(1)
            ))
        } else {
            (self.left() > 0).then(|| {
                format!(
                    "[… {} more characters of {}: READ:more continues]",
                    self.left(),
                    self.total
                )
            })
        }
    }
}

/// Turns the marked inline text (`\u{1}N\u{2}text\u{3}`, N a registry number)
/// into Markdown: `[text][id]` for a control in the table, the text alone
/// otherwise. Returns the text and the ids met.
fn inline(text: &str, ids: &HashMap<usize, u32>, met: &mut Vec<u32>) -> String {
    let mut out = String::with_capacity(text.len());
    // (where the marked text starts in `out`, its mark id)
    let mut open: Vec<(usize, Option<u32>)> = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\u{1}' => {
                let mut n = String::new();
                for d in chars.by_ref() {
                    if d == '\u{2}' {
                        break;
                    }
                    n.push(d);
                }
                let id = n.parse::<usize>().ok().and_then(|n| ids.get(&n).copied());
                open.push((out.len(), id));
            }
            '\u{3}' => {
                if let Some((at, Some(id))) = open.pop() {
                    let inner = out[at..].trim().to_string();
                    out.truncate(at);
                    // A citation or an edit link (`[1]`, `[edit]`) keeps its
                    // text only: an id on each costs more than it gives.
                    let aside = inner.starts_with('[') && inner.ends_with(']');
                    if !inner.is_empty() && !aside {
                        // A control inside a control: the outer one's id only.
                        let inner = strip_ids(&inner);
                        // Links side by side with nothing between are
                        // separate words.
                        if out.ends_with(|c: char| !c.is_whitespace() && c != '(') {
                            out.push(' ');
                        }
                        out.push_str(&format!("[{inner}][{id}]"));
                        met.push(id);
                    } else {
                        out.push_str(&inner);
                    }
                }
            }
            '\u{2}' => {}
            c => out.push(c),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A block's text without the mark ids of its controls.
pub(super) fn plain(s: &str) -> String {
    strip_ids(s)
}

/// `[text][12]` back to `text`.
fn strip_ids(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("][") else {
            break;
        };
        let Some(close) = rest[open + mid + 2..].find(']') else {
            break;
        };
        let id = &rest[open + mid + 2..open + mid + 2 + close];
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&rest[..open + 1]);
            rest = &rest[open + 1..];
            continue;
        }
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + 2 + close + 1..];
    }
    out.push_str(rest);
    out
}

/// One line of text per line of the block, trimmed.
fn lines_of(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Longest text a span repeats into every cell it covers; a longer one is
/// written once (a header cell is always repeated).
const SPAN_REPEATED: usize = 40;

/// A table as Markdown: short spans repeated into every cell they cover (so
/// each row reads on its own), header rows merged into one.
fn table(rows: &[RawRow], mut text: impl FnMut(&str) -> String) -> Vec<String> {
    let mut grid: Vec<(Vec<String>, bool)> = Vec::new();
    // Per column: rows still covered by a span from above, and its text.
    let mut down: Vec<(usize, String)> = Vec::new();
    for row in rows {
        let mut out = Vec::new();
        let mut col = 0;
        let covered = |col: usize, down: &mut Vec<(usize, String)>, out: &mut Vec<String>| {
            if let Some((n, t)) = down.get_mut(col).filter(|(n, _)| *n > 0) {
                *n -= 1;
                out.push(t.clone());
                true
            } else {
                false
            }
        };
        let head = row.head == Some(1) || row.cells.iter().all(|c| c.th == Some(1));
        for c in &row.cells {
            while covered(col, &mut down, &mut out) {
                col += 1;
            }
            let t = cell(&text(&c.t));
            let repeat = head || t.chars().count() <= SPAN_REPEATED;
            for k in 0..c.cs.unwrap_or(1).max(1) {
                if down.len() <= col {
                    down.resize(col + 1, (0, String::new()));
                }
                let t = if k == 0 || repeat {
                    t.clone()
                } else {
                    String::new()
                };
                if let Some(rs) = c.rs.filter(|r| *r > 1) {
                    down[col] = (rs - 1, if repeat { t.clone() } else { String::new() });
                }
                out.push(t);
                col += 1;
            }
        }
        while col < down.len() {
            if !covered(col, &mut down, &mut out) {
                out.push(String::new());
            }
            col += 1;
        }
        grid.push((out, head));
    }
    let width = grid.iter().map(|(r, _)| r.len()).max().unwrap_or(0);
    if width == 0 {
        return Vec::new();
    }
    let heads = grid.iter().take_while(|(_, h)| *h).count().max(1);
    let mut header = vec![String::new(); width];
    for (row, _) in grid.iter().take(heads) {
        for (i, t) in row.iter().enumerate() {
            let h = &mut header[i];
            if !t.is_empty() && !h.split(" / ").any(|p| p == t) {
                if !h.is_empty() {
                    h.push_str(" / ");
                }
                h.push_str(t);
            }
        }
    }
    let line = |r: &[String]| {
        let mut cells: Vec<&str> = r.iter().map(String::as_str).collect();
        cells.resize(width, "");
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![line(&header), format!("|{}", "---|".repeat(width))];
    out.extend(grid.iter().skip(heads).map(|(r, _)| line(r)));
    out
}

/// The Markdown of each block, with its box and the ids in it.
pub(super) fn blocks(
    placed: &[Placed<'_>],
    frames: &[FrameRead],
    ids: &[HashMap<usize, u32>],
    marks: &Marks<'_>,
) -> Vec<Block> {
    let mut out = Vec::with_capacity(placed.len());
    for p in placed {
        let frame = &frames[p.frame];
        let (numbers, ids) = (&frame.numbers, &ids[p.frame]);
        let mut met = Vec::new();
        let raw: &RawBlock = p.raw;
        let (kind, md) = markdown_of(raw, numbers, ids, marks, &mut met);
        if md.trim().is_empty() {
            continue;
        }
        let b = &raw.b;
        let bbox = Rect {
            x: b.first().copied().unwrap_or(0.0) + frame.spot.offset.x,
            y: b.get(1).copied().unwrap_or(0.0) + frame.spot.offset.y,
            w: b.get(2).copied().unwrap_or(0.0),
            h: b.get(3).copied().unwrap_or(0.0),
        };
        let region = raw.r.as_deref().map(|r| match r {
            "nav" => "navigation",
            "header" => "header",
            "footer" => "footer",
            _ => "cookie notice",
        });
        out.push(Block {
            kind,
            text: md,
            bbox,
            frame: frame.spot.id.clone(),
            ids: met,
            region,
            container: p.container,
            level: raw.l.unwrap_or(0),
            instance: raw.ri.map(|ri| (p.frame, ri)),
        });
    }
    out
}

/// A block's kind and its Markdown: a heading, a list item, a term or its
/// definition, a quote, code, a table, a field, a collapsed part or a
/// paragraph. The mark ids its text names go into `met`.
fn markdown_of(
    raw: &RawBlock,
    numbers: &[i64],
    ids: &HashMap<usize, u32>,
    marks: &Marks<'_>,
    met: &mut Vec<u32>,
) -> (BlockKind, String) {
    let mut text = |s: &str| inline(s, ids, &mut *met);
    match raw.k.as_str() {
        "h" => {
            let level = raw.l.unwrap_or(2).clamp(1, 6) as usize;
            (
                BlockKind::Heading,
                format!("{} {}", "#".repeat(level), text(&raw.t)),
            )
        }
        "li" => {
            let indent = "  ".repeat(raw.d.unwrap_or(0).min(8));
            let bullet = match (raw.cont, raw.o) {
                (Some(1), _) => "  ".to_string(),
                (_, Some(n)) if n > 0 => format!("{n}. "),
                _ => "- ".to_string(),
            };
            let lines: Vec<String> = lines_of(&raw.t).into_iter().map(&mut text).collect();
            (
                BlockKind::ListItem,
                format!("{indent}{bullet}{}", lines.join(&format!("\n{indent}  "))),
            )
        }
        "dt" => (BlockKind::Term, text(&raw.t)),
        "dd" => (BlockKind::Definition, format!(": {}", text(&raw.t))),
        "q" => {
            let lines: Vec<String> = lines_of(&raw.t)
                .into_iter()
                .map(|l| format!("> {}", text(l)))
                .collect();
            (BlockKind::Quote, lines.join("\n"))
        }
        "pre" => (
            BlockKind::Code,
            format!("```\n{}\n```", raw.t.replace("```", "``\u{200b}`")),
        ),
        "tbl" => {
            let mut lines = Vec::new();
            if !raw.t.is_empty() {
                lines.push(format!("Table: {}", text(&raw.t)));
            }
            lines.extend(table(&raw.rows, &mut text));
            if raw.left > 0 {
                lines.push(format!("({} more rows not read)", raw.left));
            }
            (BlockKind::Table, lines.join("\n"))
        }
        "f" => (BlockKind::Field, field_line(raw, numbers, ids, marks, met)),
        "det" => (
            BlockKind::Collapsed,
            format!("▸ {} (collapsed)", text(&raw.t)),
        ),
        _ => {
            let lines: Vec<String> = lines_of(&raw.t).into_iter().map(&mut text).collect();
            (BlockKind::Paragraph, lines.join("\n"))
        }
    }
}

/// A form field as a line: its label and mark id, and its value when the
/// marks show it (a box ticked or not, a value seamark typed, else only
/// whether it is filled; a password never).
fn field_line(
    raw: &RawBlock,
    numbers: &[i64],
    ids: &HashMap<usize, u32>,
    marks: &Marks<'_>,
    met: &mut Vec<u32>,
) -> String {
    let node = raw
        .n
        .and_then(|n| numbers.get(n).copied())
        .filter(|b| *b > 0);
    let id = raw.n.and_then(|n| ids.get(&n));
    if let Some(id) = id {
        met.push(*id);
    }
    let label = if raw.label.is_empty() {
        "field".to_string()
    } else {
        raw.label.clone()
    };
    let label = match id {
        Some(id) => format!("{label} [{id}]"),
        None => label,
    };
    let shown = marks.shows_value(node) && raw.field_type.as_deref() != Some("password");
    let value = match (raw.on, raw.value.as_deref()) {
        (Some(true), _) => "[x]".to_string(),
        (Some(false), _) => "[ ]".to_string(),
        (None, Some(v)) if !v.is_empty() && shown => v.replace('\n', " "),
        (None, Some(v)) if !v.is_empty() => "(filled)".to_string(),
        _ => "(empty)".to_string(),
    };
    format!("{label}: {value}")
}

/// Folds each run of blocks of one navigation, header, footer or cookie
/// notice into one line: what it holds, cut short.
pub(super) fn fold(blocks: Vec<Block>) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
    for b in blocks {
        let same = match (out.last(), b.instance) {
            (Some(last), Some(i)) => last.kind == BlockKind::Folded && last.instance == Some(i),
            _ => false,
        };
        let plain = || {
            b.text
                .lines()
                .map(|l| l.trim_start_matches(['#', '-', '|', ' ', ':', '>']).trim())
                .filter(|l| !l.is_empty() && !l.starts_with("---"))
                .collect::<Vec<_>>()
                .join(" · ")
        };
        if let Some(last) = out.last_mut().filter(|_| same) {
            if last.text.chars().count() < FOLDED_CHARS {
                last.text.push_str(" · ");
                last.text.push_str(&plain());
                last.ids.extend(b.ids.iter().copied());
            }
            continue;
        }
        if let Some(last) = out.last_mut() {
            close_fold(last);
        }
        match b.region {
            Some(region) => {
                let text = format!("({region}) {}", plain());
                out.push(Block {
                    kind: BlockKind::Folded,
                    text,
                    ..b
                });
            }
            None => out.push(b),
        }
    }
    if let Some(last) = out.last_mut() {
        close_fold(last);
    }
    out
}

/// Cuts a folded line at [`FOLDED_CHARS`] and keeps only the ids still in it.
fn close_fold(b: &mut Block) {
    if b.kind != BlockKind::Folded || b.text.chars().count() <= FOLDED_CHARS {
        return;
    }
    let mut cut: String = b.text.chars().take(FOLDED_CHARS).collect();
    // Not inside a `[text][id]`.
    if let Some(open) = cut.rfind('[') {
        if !cut[open..].contains("][") || !cut[open..].ends_with(']') {
            cut.truncate(open);
        }
    }
    if let Some(space) = cut.rfind(' ') {
        cut.truncate(space);
    }
    cut.push_str(" …");
    b.ids.retain(|id| cut.contains(&format!("][{id}]")));
    b.text = cut;
}

/// The blocks' Markdown, whole, and where each block starts: a blank line
/// before a heading and around a table, a line break between other blocks.
pub(super) fn join(blocks: &[Block]) -> (String, Vec<usize>) {
    let mut out = String::new();
    let mut starts = Vec::with_capacity(blocks.len());
    let mut last: Option<BlockKind> = None;
    for b in blocks {
        if let Some(prev) = last {
            let gap = matches!(
                b.kind,
                BlockKind::Heading | BlockKind::Table | BlockKind::Code
            ) || matches!(prev, BlockKind::Table | BlockKind::Code);
            out.push_str(if gap { "\n\n" } else { "\n" });
        }
        starts.push(out.len());
        out.push_str(&b.text);
        last = Some(b.kind);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    (out, starts)
}

/// The part of `text` from `from`, at most `max` bytes: cut before the last
/// block that starts within the bound (when that keeps at least a quarter of
/// it), else after the last whole line, else at a space.
pub(super) fn part(text: &str, starts: &[usize], from: usize, max: usize) -> Part {
    let total = text.len();
    let from = floor_boundary(text, from.min(total));
    let end = from.saturating_add(max);
    let to = if end >= total {
        total
    } else {
        let end = floor_boundary(text, end);
        let window = &text[from..end];
        let quarter = from + max / 4;
        let block = starts
            .iter()
            .rev()
            .find(|&&s| s > from && s <= end)
            .copied()
            .filter(|&s| s >= quarter);
        block
            .or_else(|| {
                window
                    .rfind('\n')
                    .map(|i| from + i + 1)
                    .filter(|&s| s > from)
            })
            .or_else(|| {
                window
                    .rfind(' ')
                    .map(|i| from + i + 1)
                    .filter(|&s| s > from)
            })
            .unwrap_or(end.max(from + 1).min(total))
    };
    let to = ceil_boundary(text, to);
    Part {
        text: text[from..to].to_string(),
        from,
        to,
        total,
        more: false,
    }
}

/// The blocks a walk that stopped at its bound may have left unfinished, out:
/// the last one (a table keeps the rows it has, without the line saying how
/// many were not read), and with it the rest of a folded region it ends in.
pub(super) fn drop_unfinished(blocks: &mut Vec<Block>) {
    let Some(last) = blocks.last_mut() else {
        return;
    };
    if last.kind == BlockKind::Table {
        if let Some(at) = last.text.rfind("\n(") {
            if last.text.ends_with(" more rows not read)") {
                last.text.truncate(at);
            }
        }
        return;
    }
    let instance = last.instance;
    blocks.pop();
    if instance.is_some() {
        while blocks.last().is_some_and(|b| b.instance == instance) {
            blocks.pop();
        }
    }
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::RawCell;

    fn row(cells: &[(&str, usize, usize)], head: bool) -> RawRow {
        RawRow {
            cells: cells
                .iter()
                .map(|(t, cs, rs)| RawCell {
                    t: t.to_string(),
                    cs: Some(*cs),
                    rs: Some(*rs),
                    th: head.then_some(1),
                })
                .collect(),
            head: head.then_some(1),
        }
    }

    #[test]
    fn spans_are_repeated_and_header_rows_merged() {
        let rows = vec![
            row(&[("Feature", 1, 2), ("Plans", 2, 1)], true),
            row(&[("Free", 1, 1), ("Pro", 1, 1)], true),
            row(&[("Seats", 1, 1), ("1", 1, 1), ("10", 1, 1)], false),
            row(
                &[("Support", 1, 2), ("email", 1, 1), ("phone", 1, 1)],
                false,
            ),
            row(&[("chat", 1, 1), ("chat", 1, 1)], false),
        ];
        let out = table(&rows, |s| s.to_string());
        assert_eq!(
            out,
            vec![
                "| Feature | Plans / Free | Plans / Pro |",
                "|---|---|---|",
                "| Seats | 1 | 10 |",
                "| Support | email | phone |",
                "| Support | chat | chat |",
            ]
        );
    }

    #[test]
    fn marked_controls_carry_their_ids_and_others_only_their_text() {
        let ids: HashMap<usize, u32> = [(1, 7)].into_iter().collect();
        let mut met = Vec::new();
        let s = inline(
            "See \u{1}1\u{2} the  plans \u{3} or \u{1}2\u{2}docs\u{3}.",
            &ids,
            &mut met,
        );
        assert_eq!(s, "See [the plans][7] or docs.");
        assert_eq!(met, vec![7]);
        assert_eq!(strip_ids("[a][3] and [b] [c][x]"), "a and [b] [c][x]");
    }

    #[test]
    fn parts_cut_at_blocks_and_add_up_to_the_whole() {
        let blocks: Vec<String> = (0..50)
            .map(|i| format!("paragraph {i} {}", "word ".repeat(i % 7 * 5)))
            .collect();
        let mut text = String::new();
        let mut starts = Vec::new();
        for b in &blocks {
            starts.push(text.len());
            text.push_str(b);
            text.push('\n');
        }
        let mut from = 0;
        let mut whole = String::new();
        let mut n = 0;
        while from < text.len() {
            let p = part(&text, &starts, from, 300);
            assert!(p.text.len() <= 300, "{}", p.text.len());
            assert!(p.to > from);
            // Every part starts at a block.
            assert!(starts.contains(&p.from), "{}", p.from);
            whole.push_str(&p.text);
            from = p.to;
            n += 1;
        }
        assert_eq!(whole, text);
        assert!(n > 3);
        // A block longer than a part is cut at a space.
        let long = "x ".repeat(400);
        let p = part(&long, &[0], 0, 301);
        assert_eq!(p.text.len(), 300);
        assert!(p.text.ends_with(' '));
        assert!(part("é".repeat(10).as_str(), &[0], 0, 3)
            .text
            .chars()
            .all(|c| c == 'é'));
    }
}
