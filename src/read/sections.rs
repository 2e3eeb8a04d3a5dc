//! `READ:"text"`: the smallest section whose heading or text holds the text.

use super::{Block, BlockKind};

/// The containers a block sits in, innermost first.
fn chain(mut c: i64, parents: &[(i64, bool)]) -> Vec<i64> {
    let mut out = Vec::new();
    while c >= 0 && out.len() < 256 {
        out.push(c);
        c = parents.get(c as usize).map_or(-1, |p| p.0);
    }
    out
}

/// From a heading at `at`, up to the next heading of its level or above,
/// within `range`.
fn under_heading(blocks: &[Block], at: usize, range: (usize, usize)) -> (usize, usize) {
    let level = blocks[at].level;
    let end = (at + 1..=range.1)
        .find(|&i| blocks[i].kind == BlockKind::Heading && blocks[i].level <= level)
        .map_or(range.1, |i| i - 1);
    (at, end)
}

/// The blocks of the smallest section around the first heading holding
/// `needle` (case and spacing ignored), else the first block holding it (a
/// mention of "Shipping" above the Shipping section must not win over its
/// heading): the innermost container of more than
/// one block that is a section or holds a heading, narrowed to the heading
/// part the block is in; a matched heading gives its part. None when no block
/// holds the text.
pub(super) fn section_of(
    blocks: Vec<Block>,
    parents: &[(i64, bool)],
    needle: &str,
) -> Option<Vec<Block>> {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let needle = norm(needle);
    if needle.is_empty() {
        return None;
    }
    let holds = |b: &Block| norm(&super::markdown::plain(&b.text)).contains(&needle);
    let m = blocks
        .iter()
        .position(|b| b.kind == BlockKind::Heading && holds(b))
        .or_else(|| blocks.iter().position(holds))?;
    let chains: Vec<Vec<i64>> = blocks.iter().map(|b| chain(b.container, parents)).collect();
    let range_of = |c: i64| {
        let first = chains.iter().position(|ch| ch.contains(&c))?;
        let last = chains.iter().rposition(|ch| ch.contains(&c))?;
        Some((first, last))
    };
    let whole = (0, blocks.len() - 1);
    let mut range = None;
    for &c in &chains[m] {
        let Some((a, b)) = range_of(c) else { continue };
        let heading = (a..=b).any(|i| blocks[i].kind == BlockKind::Heading && i != m);
        let section = parents.get(c as usize).is_some_and(|p| p.1);
        if b > a && (section || heading || blocks[m].kind == BlockKind::Heading) {
            range = Some((a, b));
            break;
        }
    }
    let within = range.unwrap_or(whole);
    let (a, b) = if blocks[m].kind == BlockKind::Heading {
        under_heading(&blocks, m, within)
    } else {
        match (within.0..=m)
            .rev()
            .find(|&i| blocks[i].kind == BlockKind::Heading)
        {
            Some(h) => under_heading(&blocks, h, within),
            None if range.is_some() => within,
            None => (m, m),
        }
    };
    Some(blocks.into_iter().skip(a).take(b + 1 - a).collect())
}
