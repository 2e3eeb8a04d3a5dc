//! A PDF's text, page by page, for `READ:download:NAME` and a PDF a tab
//! shows: what a person handed an invoice or a resume would read.
//!
//! pdf-extract does the reading: it lays the text out as the page does (a
//! line per line, with the breaks a wrapped paragraph or a list makes), where
//! lopdf's own text extraction runs a text block's lines together. A
//! malformed file is an error, never a panic: the parser is asked behind
//! `catch_unwind`, since a parser of hostile bytes is the one place a bug of
//! a dependency would otherwise take the run down.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use super::pdf_guard::{self, Unbounded};

/// The stack of the thread a PDF is read on: with nesting bounded by
/// [`pdf_guard::MAX_DEPTH`], far more than the parser needs.
const READER_STACK: usize = 64 << 20;

/// The longest a PDF is read for.
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a PDF's text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    /// The bytes are no PDF that can be opened (a locked one among them),
    /// or the parser gave up on them.
    #[error("not a PDF that can be read: {0}")]
    Unreadable(String),
    /// The file could not be read.
    #[error("{0}")]
    Unopened(#[from] std::io::Error),
    /// The document the tab shows came back garbled.
    #[error("the tab's document came back garbled: {0}")]
    Garbled(#[from] base64::DecodeError),
    /// It is past what is read: nested too deep, or streams that decode
    /// to too much.
    #[error("not read: {0}")]
    Unbounded(#[from] Unbounded),
    /// The reader's thread could not start, or ended before it answered.
    #[error("the reader stopped: {0}")]
    Stopped(String),
    /// Reading took longer than [`READ_TIMEOUT`].
    #[error("not read within {} s", READ_TIMEOUT.as_secs())]
    Slow,
}

/// A PDF's text as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfText {
    /// Every page read, `--- page N of M ---` before each, a line per line
    /// of the page (blank ones dropped).
    pub text: String,
    /// How many pages the PDF has.
    pub pages: usize,
    /// How many were read before `max_chars` was reached.
    pub pages_read: usize,
}

/// The text of the PDF in `bytes`, page by page, until `max_chars`.
pub fn pdf_text(bytes: &[u8], max_chars: usize) -> Result<PdfText, PdfError> {
    catch_unwind(AssertUnwindSafe(|| read(bytes, max_chars))).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the parser failed".into());
        Err(PdfError::Unreadable(why))
    })
}

fn read(bytes: &[u8], max_chars: usize) -> Result<PdfText, PdfError> {
    pdf_guard::check(bytes)?;
    let texts = pdf_extract::extract_text_from_mem_by_pages(bytes)
        .map_err(|e| PdfError::Unreadable(e.to_string()))?;
    let pages = texts.len();
    let mut text = String::new();
    let mut pages_read = 0;
    for (i, page) in texts.iter().enumerate() {
        if text.chars().count() >= max_chars {
            break;
        }
        let lines: Vec<&str> = page
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect();
        text.push_str(&format!("--- page {} of {pages} ---\n", i + 1));
        text.push_str(&lines.join("\n"));
        text.push('\n');
        pages_read += 1;
    }
    Ok(PdfText {
        text,
        pages,
        pages_read,
    })
}

/// Fetches the document when the tab shows a PDF (the browser's viewer):
/// its URL and its text, read as a downloaded PDF is. `None` for any other
/// document.
pub async fn shown_pdf(
    page: &chromiumoxide::Page,
    max: usize,
) -> Option<(String, Result<PdfText, PdfError>)> {
    const PDF_JS: &str = r#"(async () => {
  if (document.contentType !== 'application/pdf') return null;
  const bytes = new Uint8Array(await (await fetch(location.href)).arrayBuffer());
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
})()"#;
    let answer = page
        .evaluate_expression(
            chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::builder()
                .expression(PDF_JS)
                .await_promise(true)
                .return_by_value(true)
                .build()
                .ok()?,
        )
        .await
        .ok()?;
    let b64 = answer.value()?.as_str()?.to_string();
    let url = page.url().await.ok().flatten().unwrap_or_default();
    use base64::Engine;
    let read = match base64::engine::general_purpose::STANDARD.decode(b64) {
        Ok(bytes) => pdf_text_apart(bytes, max).await,
        Err(e) => Err(PdfError::Garbled(e)),
    };
    Some((url, read))
}

/// [`pdf_text`] on a thread of its own, with a stack of its own: a large
/// PDF takes a while, and one that takes longer than [`READ_TIMEOUT`] is
/// given up (its thread ends when the parser does).
pub async fn pdf_text_apart(bytes: Vec<u8>, max: usize) -> Result<PdfText, PdfError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("seamark-pdf".into())
        .stack_size(READER_STACK)
        .spawn(move || {
            let _ = tx.send(pdf_text(&bytes, max));
        })
        .map_err(|e| PdfError::Stopped(e.to_string()))?;
    match tokio::time::timeout(READ_TIMEOUT, rx).await {
        Ok(Ok(read)) => read,
        Ok(Err(_)) => Err(PdfError::Stopped(
            "its thread ended without an answer".into(),
        )),
        Err(_) => Err(PdfError::Slow),
    }
}

/// Whether a file is a PDF, by its MIME type or, failing that, its first
/// bytes.
pub fn is_pdf(mime: &str, head: &[u8]) -> bool {
    mime == "application/pdf" || head.starts_with(b"%PDF-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_no_pdf_are_an_error_not_a_panic() {
        for bad in [
            &b""[..],
            b"%PDF-1.4\n",
            b"%PDF-1.7\n1 0 obj << /Type /Pages /Kids [2 0 R",
            b"\xff\xfe\x00garbage",
        ] {
            assert!(pdf_text(bad, 1000).is_err(), "{bad:?}");
        }
    }
}
