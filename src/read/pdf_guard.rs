//! Bounds a PDF must keep before its parser is given it: how deep its
//! arrays and dictionaries nest, and how large its streams grow once
//! decoded. The parser (lopdf, under pdf-extract) recurses once per level
//! of nesting and decodes a stream whole: a page's 400 KB of `[[[[…` would
//! overflow its thread's stack (an abort no `catch_unwind` can catch), and a
//! 3.6 MB stream that inflates to a gigabyte would take all the memory there
//! is. So the file is walked first, as a lexer walks it, without recursion:
//! strings, hex strings and comments skipped, every stream the parser would
//! decode (Flate, LZW, ASCII85, in their order) decoded here under a cap and
//! walked too, since an object stream holds objects of its own.

use std::io::Read;

/// The deepest nesting of arrays and dictionaries read.
pub const MAX_DEPTH: usize = 256;

/// The most bytes all of a PDF's streams may decode to, together.
pub const MAX_DECODED: usize = 128 << 20;

/// Why a PDF is not given to the parser.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unbounded {
    /// Arrays or dictionaries nested deeper than [`MAX_DEPTH`].
    #[error("its arrays and dictionaries nest deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// Streams that decode to more than [`MAX_DECODED`] bytes.
    #[error("its streams decode to more than {} MB", MAX_DECODED >> 20)]
    TooLarge,
}

/// Checks the PDF in `bytes` against the bounds.
pub fn check(bytes: &[u8]) -> Result<(), Unbounded> {
    let mut budget = MAX_DECODED;
    walk(bytes, &mut budget, true)
}

/// Walks `bytes` (a file, or a decoded stream when `streams` is false),
/// tracking the nesting depth; each stream of a file is decoded (charged to
/// `budget`) and walked in turn.
fn walk(bytes: &[u8], budget: &mut usize, streams: bool) -> Result<(), Unbounded> {
    let mut depth = 0usize;
    let mut i = 0;
    // Where the dictionary that is open at each depth began: the one a
    // stream follows says its filters.
    let mut last_dict = 0..0;
    let mut opened: Vec<usize> = Vec::new();
    while i < bytes.len() {
        match bytes[i] {
            b'%' => i = skip_to_line_end(bytes, i),
            b'(' => i = skip_string(bytes, i),
            b'<' if bytes.get(i + 1) == Some(&b'<') => {
                depth += 1;
                opened.push(i);
                i += 2;
            }
            b'<' => i = skip_past(bytes, i, b'>'),
            b'>' if bytes.get(i + 1) == Some(&b'>') => {
                depth = depth.saturating_sub(1);
                if let Some(start) = opened.pop() {
                    last_dict = start..i + 2;
                }
                i += 2;
            }
            b'[' => {
                depth += 1;
                i += 1;
            }
            b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b's' if streams && bytes[i..].starts_with(b"stream") && keyword_at(bytes, i, 6) => {
                let (body, after) = stream_body(bytes, i + 6);
                let dict = &bytes[last_dict.clone()];
                if let Some(decoded) = decode(dict, body, budget)? {
                    walk(&decoded, budget, false)?;
                }
                i = after;
            }
            _ => i += 1,
        }
        if depth > MAX_DEPTH {
            return Err(Unbounded::TooDeep);
        }
    }
    Ok(())
}

/// Whether the keyword of `len` bytes at `i` stands alone (no letter
/// before or after it).
fn keyword_at(bytes: &[u8], i: usize, len: usize) -> bool {
    let before = i.checked_sub(1).map(|b| bytes[b]);
    let after = bytes.get(i + len).copied();
    !before.is_some_and(|b| b.is_ascii_alphanumeric())
        && !after.is_some_and(|b| b.is_ascii_alphanumeric())
}

fn skip_to_line_end(bytes: &[u8], i: usize) -> usize {
    bytes[i..]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map_or(bytes.len(), |p| i + p + 1)
}

fn skip_past(bytes: &[u8], i: usize, end: u8) -> usize {
    bytes[i + 1..]
        .iter()
        .position(|&b| b == end)
        .map_or(bytes.len(), |p| i + 1 + p + 1)
}

/// Past a literal string `(…)`: parentheses nest, a backslash escapes.
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    let mut open = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'(' => open += 1,
            b')' => {
                open -= 1;
                if open == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// A stream's body, from just after `stream` to `endstream`, and where the
/// walk goes on.
fn stream_body(bytes: &[u8], mut start: usize) -> (&[u8], usize) {
    if bytes.get(start) == Some(&b'\r') {
        start += 1;
    }
    if bytes.get(start) == Some(&b'\n') {
        start += 1;
    }
    let start = start.min(bytes.len());
    let end = find(&bytes[start..], b"endstream").map_or(bytes.len(), |p| start + p);
    (&bytes[start..end], (end + 9).min(bytes.len()))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A stream decoded as the parser would decode it, at most what is left of
/// `budget`; `None` for one the parser does not decode (an image, a filter
/// it lacks), whose body it never reads as objects.
fn decode(dict: &[u8], body: &[u8], budget: &mut usize) -> Result<Option<Vec<u8>>, Unbounded> {
    let text = String::from_utf8_lossy(dict);
    let squeezed: String = text.split_whitespace().collect();
    if squeezed.contains("/Subtype/Image") {
        return Ok(None);
    }
    let mut filters: Vec<(usize, &str)> = ["FlateDecode", "LZWDecode", "ASCII85Decode"]
        .into_iter()
        .flat_map(|f| {
            text.match_indices(&format!("/{f}"))
                .map(|(at, _)| (at, f))
                .collect::<Vec<_>>()
        })
        .collect();
    if filters.is_empty() {
        return Ok(Some(body.to_vec()));
    }
    filters.sort();
    let mut data = body.to_vec();
    for (_, filter) in filters {
        let limit = *budget as u64 + 1;
        data = match filter {
            "FlateDecode" => {
                let mut out = Vec::new();
                let _ = flate2::read::ZlibDecoder::new(data.as_slice())
                    .take(limit)
                    .read_to_end(&mut out);
                out
            }
            "LZWDecode" => lzw(&data, *budget)?,
            // Four bytes for one at the most (`z`): charged as decoded.
            _ => data,
        };
        if data.len() > *budget {
            return Err(Unbounded::TooLarge);
        }
    }
    *budget -= data.len();
    Ok(Some(data))
}

/// LZW as PDF writes it (most significant bit first, 8-bit symbols), at
/// most `most` bytes.
fn lzw(data: &[u8], most: usize) -> Result<Vec<u8>, Unbounded> {
    let mut decoder = weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
    let mut out = Vec::new();
    let mut input = data;
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let r = decoder.decode_bytes(input, &mut chunk);
        out.extend_from_slice(&chunk[..r.consumed_out]);
        input = &input[r.consumed_in..];
        if out.len() > most {
            return Err(Unbounded::TooLarge);
        }
        if r.status.is_err()
            || matches!(r.status, Ok(weezl::LzwStatus::Done))
            || (r.consumed_in == 0 && r.consumed_out == 0)
        {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn nesting_past_the_bound_is_refused_wherever_it_hides() {
        let deep = |n: usize| format!("1 0 obj {}{} endobj", "[".repeat(n), "]".repeat(n));
        assert_eq!(check(deep(200).as_bytes()), Ok(()));
        assert_eq!(check(deep(100_000).as_bytes()), Err(Unbounded::TooDeep));
        let dicts = format!("{}{}", "<</A ".repeat(5_000), ">>".repeat(5_000));
        assert_eq!(check(dicts.as_bytes()), Err(Unbounded::TooDeep));
        // Brackets in strings, hex strings and comments are no nesting.
        let quiet = format!(
            "({}) <{}> %{}\n",
            "[".repeat(1_000),
            "5b".repeat(1_000),
            "[".repeat(1_000)
        );
        assert_eq!(check(quiet.as_bytes()), Ok(()));
        // In a compressed object stream too.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(deep(10_000).as_bytes()).unwrap();
        let packed = z.finish().unwrap();
        let mut file = b"2 0 obj << /Type /ObjStm /Filter /FlateDecode >> stream\n".to_vec();
        file.extend_from_slice(&packed);
        file.extend_from_slice(b"\nendstream endobj");
        assert_eq!(check(&file), Err(Unbounded::TooDeep));
    }

    #[test]
    fn a_stream_that_inflates_past_the_cap_is_refused_before_it_is_held() {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![b' '; 1 << 20];
        for _ in 0..(MAX_DECODED >> 20) + 1 {
            z.write_all(&zeros).unwrap();
        }
        let packed = z.finish().unwrap();
        let mut file = b"3 0 obj << /Length 9 /Filter /FlateDecode >> stream\r\n".to_vec();
        file.extend_from_slice(&packed);
        file.extend_from_slice(b"\r\nendstream endobj");
        assert!(file.len() < 1 << 20, "{} bytes", file.len());
        assert_eq!(check(&file), Err(Unbounded::TooLarge));
    }
}
