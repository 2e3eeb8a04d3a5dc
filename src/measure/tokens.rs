//! What a page costs a step in tokens, per provider: the element list, the
//! first part a `READ` gives, and the marked screenshot as it is sent. Text
//! is counted with OpenAI's tokenizer (`o200k_base`); Anthropic publishes no
//! tokenizer, so its text figure is that same count, an estimate (its own
//! count is in the usage a run records). Images follow each provider's
//! published formula.

use std::time::Duration;

use crate::brain::tokens::{image_tokens, text_tokens, Provider};
use crate::browser::{BrowserError, Session};
use crate::figures::thousands;
use crate::mark::{self, MarkStyle};
use crate::perceive::{self, PerceiveError, PerceiveOptions};
use crate::read::{self, Marks, ReadError, Scope, Values};

/// The model whose tokenizer counts text (`o200k_base`).
const COUNTED_AS: &str = "openai/gpt-4o";

/// One part of what a step sends, in tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenRow {
    /// What it is: "element list", "READ, first part", "screenshot".
    pub part: &'static str,
    /// Its characters (`None` for the image: its size is given instead).
    pub chars: Option<usize>,
    /// What the image is sent at, width × height.
    pub size: Option<(u32, u32)>,
    /// Tokens with OpenAI.
    pub openai: usize,
    /// Tokens with Anthropic (text: estimated, see the module's doc).
    pub anthropic: usize,
}

/// A page's token figures, or why it could not be measured.
#[derive(Debug)]
pub struct PageTokens {
    /// The page as given.
    pub target: String,
    /// Its rows, in the order a step sends them.
    pub rows: Result<Vec<TokenRow>, TokensError>,
}

/// Why a page's tokens could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum TokensError {
    /// The page as given names nothing seamark opens: why, as the caller
    /// found it.
    #[error("{0}")]
    Target(String),
    /// It did not open.
    #[error(transparent)]
    Open(#[from] BrowserError),
    /// It could not be looked at.
    #[error(transparent)]
    Perceive(#[from] PerceiveError),
    /// Its text could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Its screenshot could not be decoded.
    #[error("the screenshot cannot be read: {0}")]
    Screenshot(#[from] image::ImageError),
}

/// Opens `url`, waits `settle`, looks once and reads the first part of
/// `read_chars` characters: the figures of what a step would send.
pub async fn page_tokens(
    session: &Session,
    target: &str,
    url: &str,
    load_timeout: Duration,
    settle: Duration,
    read_chars: usize,
) -> PageTokens {
    PageTokens {
        target: target.to_string(),
        rows: rows(session, url, load_timeout, settle, read_chars).await,
    }
}

async fn rows(
    session: &Session,
    url: &str,
    load_timeout: Duration,
    settle: Duration,
    read_chars: usize,
) -> Result<Vec<TokenRow>, TokensError> {
    session.navigate(url, load_timeout).await?;
    tokio::time::sleep(settle).await;
    let obs = perceive::perceive(session, &PerceiveOptions::default()).await?;
    let list = perceive::element_list(&obs.table, perceive::DEFAULT_LIST_CAP);
    let marks = Marks {
        table: Some(&obs.table),
        values: Values::All,
    };
    let (page, viewport) = (session.page(), session.viewport());
    let mut reader = read::Reader::start(page, viewport, Scope::Page, &marks, read_chars).await?;
    let part = reader.next_part(page, viewport, &marks, read_chars).await?;
    let (w, h) = image::ImageReader::new(std::io::Cursor::new(&obs.screenshot_png))
        .with_guessed_format()
        .map_err(image::ImageError::IoError)?
        .into_dimensions()?;
    let (w, h) = mark::sent_size(
        w,
        h,
        MarkStyle::default()
            .send_long_edge
            .unwrap_or(mark::DEFAULT_LONG_EDGE),
    );
    Ok(vec![
        text_row("element list", &list),
        text_row("READ, first part", &part.text),
        TokenRow {
            part: "screenshot",
            chars: None,
            size: Some((w, h)),
            openai: image_tokens(Provider::OpenAi, w, h),
            anthropic: image_tokens(Provider::Anthropic, w, h),
        },
    ])
}

fn text_row(part: &'static str, text: &str) -> TokenRow {
    let tokens = text_tokens(COUNTED_AS, text);
    TokenRow {
        part,
        chars: Some(text.chars().count()),
        size: None,
        openai: tokens,
        anthropic: tokens,
    }
}

/// The table people paste: a row per page and part, and each page's total.
pub fn tokens_table(pages: &[PageTokens]) -> String {
    let mut out = String::from(
        "| page | part | size | OpenAI tokens | Anthropic tokens |\n|---|---|---:|---:|---:|\n",
    );
    let n = |v: usize| thousands(v as u64);
    for p in pages {
        let rows = match &p.rows {
            Ok(rows) => rows,
            Err(e) => {
                out.push_str(&format!("| {} | not measured: {e} | | | |\n", p.target));
                continue;
            }
        };
        for (i, r) in rows.iter().enumerate() {
            let page = if i == 0 { p.target.as_str() } else { "" };
            let size = match (r.chars, r.size) {
                (Some(c), _) => format!("{} characters", n(c)),
                (None, Some((w, h))) => format!("{w}×{h}"),
                (None, None) => String::new(),
            };
            out.push_str(&format!(
                "| {page} | {} | {size} | {} | {} |\n",
                r.part,
                n(r.openai),
                n(r.anthropic)
            ));
        }
        let (o, a) = rows
            .iter()
            .fold((0, 0), |(o, a), r| (o + r.openai, a + r.anthropic));
        out.push_str(&format!(
            "| | **in all** | | **{}** | **{}** |\n",
            n(o),
            n(a)
        ));
    }
    out.push_str(
        "\nText in o200k_base; Anthropic's text figures are that count (an estimate), its \
         image figures its own formula.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_each_part_and_the_pages_total() {
        let pages = [
            PageTokens {
                target: "form.html".into(),
                rows: Ok(vec![
                    text_row("element list", "[1] textbox \"Name\"\n[2] button \"Send\""),
                    TokenRow {
                        part: "screenshot",
                        chars: None,
                        size: Some((1280, 800)),
                        openai: 1105,
                        anthropic: 1366,
                    },
                ]),
            },
            PageTokens {
                target: "gone.html".into(),
                rows: Err(TokensError::Target("net::ERR_CONNECTION_REFUSED".into())),
            },
        ];
        let table = tokens_table(&pages);
        let text = "[1] textbox \"Name\"\n[2] button \"Send\"";
        let (list, chars) = (text_tokens(COUNTED_AS, text), text.chars().count());
        assert!(
            table.contains(&format!(
                "| form.html | element list | {chars} characters | {list} | {list} |"
            )),
            "{table}"
        );
        assert!(
            table.contains("| screenshot | 1280×800 | 1,105 | 1,366 |"),
            "{table}"
        );
        assert!(
            table.contains(&format!(
                "| | **in all** | | **{}** | **{}** |",
                thousands((1105 + list) as u64),
                thousands((1366 + list) as u64)
            )),
            "{table}"
        );
        assert!(
            table.contains("| gone.html | not measured: net::ERR_CONNECTION_REFUSED |"),
            "{table}"
        );
    }
}
