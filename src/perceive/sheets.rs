//! Stylesheets the page may not read.
//!
//! Far parts of a long page are skipped only when every style rule that could
//! place something out of them is known (`positionRules` in enumerate/walk.js). A
//! stylesheet from another origin loaded without CORS, as most sites serve
//! their CSS from a CDN, cannot be read from the page: the enumerator reports
//! it, seamark takes its text from the browser's own copy
//! (`Page.getResourceContent`: no new request), and the document's registry
//! parses it into a stylesheet of its own that nothing adopts. This runs
//! after the perception that found the sheet, off its path; from the next
//! perception on (which waits for it), its rules count.

use crate::browser::Link;
use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::page::{FrameId, GetResourceContentParams};
use chromiumoxide::cdp::js_protocol::runtime::{
    CallArgument, CallFunctionOnParams, RemoteObjectId,
};

/// Longest stylesheet text read; a longer one stays unread.
const MAX_SHEET_BYTES: usize = 4 << 20;

/// How deep at-rules inside at-rules are filtered; deeper ones are kept whole.
const MAX_NESTING: usize = 16;

/// Parses each `[url, text]` into the registry's `sheets` (null where there is
/// no text), and makes the enumerator read the rules again. A constructed
/// sheet drops `@import` rules, so a text with one stays unknown.
const GIVE_JS: &str = "function (given) { \
    for (const [url, text] of given) { \
      let rules = null; \
      if (typeof text === 'string' && !/@import/i.test(text)) { \
        try { const sheet = new CSSStyleSheet(); sheet.replaceSync(text); rules = sheet.cssRules; } \
        catch (e) { rules = null; } \
      } \
      this.sheets.set(url, rules); \
    } \
    this.rules = null; \
  }";

/// The text of the stylesheet at `url` as frame `frame` loaded it.
async fn sheet_text(link: &Link, frame: &FrameId, url: &str) -> Option<String> {
    let reply = link
        .execute(GetResourceContentParams::new(frame.clone(), url))
        .await
        .ok()?
        .result;
    let text = if reply.base64_encoded {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&reply.content)
            .ok()?;
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        reply.content
    };
    (text.len() <= MAX_SHEET_BYTES).then(|| position_rules(&text))
}

/// The part of a stylesheet's text the enumerator reads: the style rules that
/// may set `position` (see [`sets_position`]), inside the at-rules that hold them, and
/// every at-rule statement (`@import`, which makes the sheet unknown, and
/// `@namespace`, without which prefixed selectors do not parse). The page then
/// parses a few kilobytes instead of the whole sheet: github's 200 KB of CSS
/// took 4-10 ms to parse there, and as long again to send.
fn position_rules(css: &str) -> String {
    let mut out = String::new();
    filter_rules(css, 0, css.len(), 0, &mut out);
    out
}

/// Appends to `out` what [`position_rules`] keeps of the rules in `css[from..to]`.
fn filter_rules(css: &str, from: usize, to: usize, depth: usize, out: &mut String) {
    let bytes = css.as_bytes();
    let mut i = from;
    while i < to {
        i = skip_space(bytes, i, to);
        if i >= to {
            break;
        }
        let stop = find_at_top(bytes, i, to, |c| matches!(c, b'{' | b';' | b'}'));
        if stop >= to {
            break;
        }
        let prelude = &css[i..stop];
        match bytes[stop] {
            b';' => {
                if prelude.starts_with('@') {
                    out.push_str(&css[i..=stop]);
                }
                i = stop + 1;
            }
            b'{' => {
                let close = find_at_top(bytes, stop + 1, to, |c| c == b'}');
                let body = &css[stop + 1..close];
                if prelude.starts_with('@') && depth < MAX_NESTING {
                    let mut inner = String::new();
                    filter_rules(css, stop + 1, close, depth + 1, &mut inner);
                    if !inner.is_empty() {
                        out.push_str(prelude);
                        out.push('{');
                        out.push_str(&inner);
                        out.push('}');
                    }
                } else if prelude.starts_with('@') || sets_position(body) {
                    out.push_str(prelude);
                    out.push('{');
                    out.push_str(body);
                    out.push('}');
                }
                i = close + 1;
            }
            // A stray closing brace: skipped, as the browser does.
            _ => i = stop + 1,
        }
    }
}

/// Whether declarations may set `position` to anything that takes an element
/// out of its box: not `static`, `relative` or `sticky` (which the enumerator
/// also passes over), so most rules that mention it are dropped.
fn sets_position(body: &str) -> bool {
    let bytes = body.as_bytes();
    let name_char = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    (0..bytes.len().saturating_sub(7)).any(|k| {
        if !bytes[k..k + 8].eq_ignore_ascii_case(b"position") {
            return false;
        }
        // `background-position`, `--position`: other properties.
        if k > 0 && name_char(bytes[k - 1]) {
            return false;
        }
        let rest = body[k + 8..].trim_start();
        let Some(value) = rest.strip_prefix(':') else {
            return false;
        };
        let value = value
            .split([';', '}', '!'])
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        !matches!(
            value.as_str(),
            "static" | "relative" | "sticky" | "-webkit-sticky"
        )
    })
}

/// The first index from `i` past whitespace and comments.
fn skip_space(css: &[u8], mut i: usize, to: usize) -> usize {
    while i < to {
        if css[i].is_ascii_whitespace() {
            i += 1;
        } else if css[i] == b'/' && css.get(i + 1) == Some(&b'*') {
            i = comment_end(css, i, to);
        } else {
            break;
        }
    }
    i
}

fn comment_end(css: &[u8], i: usize, to: usize) -> usize {
    css[(i + 2).min(to)..to]
        .windows(2)
        .position(|w| w == b"*/")
        .map_or(to, |k| i + 2 + k + 2)
}

/// The index of the first byte in `css[i..to]` for which `stop` holds,
/// outside comments, strings, escapes and `{}` blocks; `to` when none.
fn find_at_top(css: &[u8], mut i: usize, to: usize, stop: impl Fn(u8) -> bool) -> usize {
    let mut depth = 0usize;
    while i < to {
        let c = css[i];
        if depth == 0 && stop(c) {
            return i;
        }
        match c {
            b'/' if css.get(i + 1) == Some(&b'*') => i = comment_end(css, i, to),
            b'"' | b'\'' => i = string_end(css, i, to),
            b'\\' => i += 2,
            b'{' => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    to
}

/// Past the string opening at `i`; a string ends at its quote, or unclosed at
/// the end of its line.
fn string_end(css: &[u8], i: usize, to: usize) -> usize {
    let quote = css[i];
    let mut j = i + 1;
    while j < to {
        match css[j] {
            b'\\' => j += 2,
            b'\n' => return j,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    to
}

/// Fetches the stylesheets at `urls`, which the enumerator could not read in
/// frame `frame`'s document, and gives their texts to its registry. A sheet
/// that cannot be had is given as none, so it is not asked for again: that
/// document is then walked whole.
pub(crate) async fn give_unread(
    link: Link,
    frame: FrameId,
    registry: RemoteObjectId,
    urls: Vec<String>,
) {
    let texts =
        futures::future::join_all(urls.iter().map(|url| sheet_text(&link, &frame, url))).await;
    let given: Vec<serde_json::Value> = urls
        .iter()
        .zip(texts)
        .map(|(url, text)| serde_json::json!([url, text]))
        .collect();
    let mut params = CallFunctionOnParams::new(GIVE_JS);
    params.object_id = Some(registry);
    params.arguments = Some(vec![CallArgument {
        value: Some(given.into()),
        unserializable_value: None,
        object_id: None,
    }]);
    params.silent = Some(true);
    if let Err(e) = link.execute(params).await {
        tracing::debug!("stylesheet texts not given to the page: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::position_rules;

    #[test]
    fn only_rules_that_set_position_are_kept_inside_their_at_rules() {
        let css = "@charset \"utf-8\"; @namespace svg url(http://www.w3.org/2000/svg);\n\
            body { margin: 0 } .chat { position: fixed; bottom: 0 }\n\
            .card { position: relative; background-position: center } .t { Position : sticky }\n\
            .bg { background-position: top } .v { --position: fixed; position: var(--p) }\n\
            @media (min-width: 600px) { .a { color: red } .pin { POSITION: absolute } }\n\
            @media print { .b { color: blue } }\n\
            @font-face { font-family: x; src: url(x.woff) }\n\
            @import url(other.css);";
        assert_eq!(
            position_rules(css),
            "@charset \"utf-8\";@namespace svg url(http://www.w3.org/2000/svg);\
             .chat { position: fixed; bottom: 0 }\
             .v { --position: fixed; position: var(--p) }\
             @media (min-width: 600px) {.pin { POSITION: absolute }}\
             @import url(other.css);"
        );
    }

    #[test]
    fn braces_in_strings_comments_and_escapes_do_not_end_a_rule() {
        let css = ".q::after { content: \"}\" } /* { */ .c\\{ { position: absolute }\n\
            .s { content: '{'; color: red } .f { position: fixed }";
        assert_eq!(
            position_rules(css),
            ".c\\{ { position: absolute }.f { position: fixed }"
        );
    }

    #[test]
    fn a_broken_or_hostile_sheet_is_bounded() {
        // Unclosed blocks, strings and comments end with the text.
        assert_eq!(
            position_rules(".a { position: fixed"),
            ".a { position: fixed}"
        );
        assert_eq!(position_rules(".a { content: \"x"), "");
        assert_eq!(position_rules("/* never closed"), "");
        assert_eq!(
            position_rules("} .a { position: fixed }"),
            ".a { position: fixed }"
        );
        // At-rules nested past the bound are kept whole, not recursed into.
        let deep = format!(
            "{}.a {{ position: fixed }}{}",
            "@media all {".repeat(100_000),
            "}".repeat(100_000)
        );
        let kept = position_rules(&deep);
        assert!(kept.contains(".a { position: fixed }"), "{}", kept.len());
        assert_eq!(position_rules("\\"), "");
        assert_eq!(
            position_rules("é\\é{position:fixed}"),
            "é\\é{position:fixed}"
        );
    }
}
