//! `READ`: the page, a region, the section holding a text, the next part
//! of the last reading, or a text file a download saved, as page data for
//! the model. Values typed by seamark are shown; secrets never are.

use std::collections::HashSet;

use super::Executor;
use crate::browser::Session;
use crate::commands::{ReadTarget, Step};
use crate::read;
use crate::records::{Outcome, ShownFile, Status};

impl Executor {
    /// Runs a `READ`: the outcome, the part read, and a downloaded image to
    /// show the model.
    pub(super) async fn read(
        &mut self,
        session: &Session,
        step: &Step,
        of: &ReadTarget,
    ) -> (Outcome, Option<String>, Option<ShownFile>) {
        let max = self.options.read_chars;
        if let ReadTarget::Download(name) = of {
            let (outcome, read) = self.read_download(session, step, name, max).await;
            return match read {
                Some(Read::Text(text)) => (outcome, Some(text), None),
                Some(Read::Image(shown)) => (outcome, None, Some(shown)),
                None => (outcome, None, None),
            };
        }
        let (outcome, text) = self.read_page(session, step, of).await;
        (outcome, text, None)
    }

    /// A `READ` of the page: all of it, a region, a section, the next part,
    /// or the page as printed. A PDF the tab shows is read as a PDF.
    async fn read_page(
        &mut self,
        session: &Session,
        step: &Step,
        of: &ReadTarget,
    ) -> (Outcome, Option<String>) {
        let max = self.options.read_chars;
        if matches!(of, ReadTarget::Page | ReadTarget::Print) {
            if let Some(pdf) = crate::read::pdf::shown_pdf(session.page(), max).await {
                return pdf_reading(step, &pdf.0, &pdf.0, pdf.1, max);
            }
        }
        if *of == ReadTarget::Print {
            return self.read_printed(session, step).await;
        }
        let (page, viewport) = (session.page(), session.viewport());
        // Asked first: telling the element's node may teach the table.
        let region = match of {
            ReadTarget::Element(id) => Some(self.element(page, *id, step).await),
            _ => None,
        };
        let shown: HashSet<i64> = self
            .book
            .typed
            .difference(&self.book.secret_nodes)
            .copied()
            .collect();
        let marks = read::Marks {
            table: self.seen.as_ref().map(|o| &o.table),
            values: read::Values::Only(&shown),
        };
        if *of == ReadTarget::More {
            let max = self.options.read_chars;
            return read_more(self.reader.as_mut(), session, step, &marks, max).await;
        }
        let scope = match (of, region) {
            (_, Some(Ok(e))) => read::Scope::Region {
                frame: e.frame,
                node: e.backend_node_id,
            },
            (_, Some(Err(why))) => {
                return (Outcome::new(step, Status::Failed, why.to_string()), None)
            }
            (ReadTarget::Text(t), None) => read::Scope::Text(t.clone()),
            _ => read::Scope::Page,
        };
        self.reader = None;
        let started = read::Reader::start(page, viewport, scope, &marks, max).await;
        let mut reader = match started {
            Ok(r) => r,
            Err(e) => return (Outcome::new(step, Status::Failed, e.to_string()), None),
        };
        let part = match reader.next_part(page, viewport, &marks, max).await {
            Ok(p) => p,
            Err(e) => return (Outcome::new(step, Status::Failed, e.to_string()), None),
        };
        if part.text.trim().is_empty() {
            return (
                Outcome::new(
                    step,
                    Status::NoEffect,
                    "the page has no readable text (an empty page, an image, a PDF or a canvas); look at the screenshot",
                ),
                None,
            );
        }
        let what = match of {
            ReadTarget::Element(id) => format!("read the region of [{id}]"),
            ReadTarget::Text(t) => format!("read the section holding {t:?}"),
            _ => "read the page".to_string(),
        };
        let mut message = part_message(&part, &what);
        if reader.reading().cut && !part.more && part.left() == 0 {
            message.push_str(&format!(
                "; the page holds more than the {} characters read at most: READ:\"text\" reaches a part further down",
                read::MAX_COLLECTED
            ));
        }
        let text = part_text(&part);
        self.reader = Some(reader);
        (Outcome::new(step, Status::Done, message), Some(text))
    }

    /// A `READ:print`: the page read with the print stylesheet.
    async fn read_printed(&mut self, session: &Session, step: &Step) -> (Outcome, Option<String>) {
        let printed = set_media(session.page(), "print").await;
        if let Err(why) = printed {
            let why = format!("the page could not be shown as printed: {why}");
            return (Outcome::new(step, Status::Failed, why), None);
        }
        let read = Box::pin(self.read_page(session, step, &ReadTarget::Page)).await;
        let _ = set_media(session.page(), "").await;
        let (mut outcome, text) = read;
        outcome.message = outcome
            .message
            .replacen("read the page", "read the page as printed", 1);
        (outcome, text)
    }

    /// Runs a `READ:download:NAME`: the text of a text file a download of
    /// this session saved, at most `max` characters.
    async fn read_download(
        &self,
        session: &Session,
        step: &Step,
        name: &str,
        max: usize,
    ) -> (Outcome, Option<Read>) {
        let saved: Vec<crate::files::DownloadedFile> = self
            .downloads_since(session, 0)
            .await
            .into_iter()
            .filter_map(|d| d.saved)
            .collect();
        let Some(file) = saved.iter().find(|f| f.name == name) else {
            let names: Vec<&str> = saved.iter().map(|f| f.name.as_str()).collect();
            let known = if names.is_empty() {
                "nothing was downloaded".to_string()
            } else {
                format!("the files downloaded are: {}", names.join(", "))
            };
            return (
                Outcome::new(
                    step,
                    Status::Failed,
                    format!("no download is named {name}: {known}"),
                ),
                None,
            );
        };
        if file.is_image() {
            let shown = ShownFile {
                name: file.name.clone(),
                path: file.path.clone(),
                mime: file.mime.clone(),
            };
            let message = format!(
                "{} is an image: it is shown to you in the next step, before the screenshot",
                file.describe()
            );
            return (
                Outcome::new(step, Status::Done, message),
                Some(Read::Image(shown)),
            );
        }
        let head = read_start(&file.path, 8).unwrap_or_default();
        if crate::read::pdf::is_pdf(&file.mime, &head) {
            let (outcome, text) = read_pdf_file(step, file, max).await;
            return (outcome, text.map(Read::Text));
        }
        if !file.is_text() {
            return (
                Outcome::new(
                    step,
                    Status::Failed,
                    format!(
                        "{} is not text ({}): its text cannot be read",
                        file.name, file.mime
                    ),
                ),
                None,
            );
        }
        let (outcome, text) = read_text_file(step, file, max);
        (outcome, text.map(Read::Text))
    }
}

/// What a download reads as: text, or an image to show.
enum Read {
    Text(String),
    Image(ShownFile),
}

/// The media the page is shown for: `print` (its print style sheet
/// applies) or `""` (back to the screen).
async fn set_media(page: &chromiumoxide::Page, media: &str) -> Result<(), String> {
    use chromiumoxide::cdp::browser_protocol::emulation::SetEmulatedMediaParams;
    let params = SetEmulatedMediaParams {
        media: Some(media.to_string()),
        ..Default::default()
    };
    page.execute(params)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The outcome and the page data of a PDF read (`what` names it for the
/// outcome, `name` in the page data), at most `max` characters shown.
pub(super) fn pdf_reading(
    step: &Step,
    what: &str,
    name: &str,
    read: Result<crate::read::pdf::PdfText, crate::read::pdf::PdfError>,
    max: usize,
) -> (Outcome, Option<String>) {
    let pdf = match read {
        Ok(pdf) => pdf,
        Err(why) => {
            let why = format!("{what} cannot be read: {why}");
            return (Outcome::new(step, Status::Failed, why), None);
        }
    };
    if pdf.text.lines().all(|l| l.starts_with("--- page ")) {
        let message = format!(
            "{what} is a PDF of {} pages with no text in it (scanned pages are images);              it cannot be read as text",
            pdf.pages
        );
        return (Outcome::new(step, Status::NoEffect, message), None);
    }
    let shown: String = pdf.text.chars().take(max).collect();
    let message = if shown.len() == pdf.text.len() && pdf.pages_read == pdf.pages {
        format!("read the PDF {what}: all {} pages", pdf.pages)
    } else {
        format!(
            "read the first {} characters of the PDF {what} ({} pages)",
            shown.chars().count(),
            pdf.pages
        )
    };
    let reading = format!("The PDF {name}, page by page:\n\n```\n{shown}\n```");
    (Outcome::new(step, Status::Done, message), Some(reading))
}

/// Runs a `READ:more`: the next part of the last reading.
async fn read_more(
    reader: Option<&mut read::Reader>,
    session: &Session,
    step: &Step,
    marks: &read::Marks<'_>,
    max: usize,
) -> (Outcome, Option<String>) {
    let (page, viewport) = (session.page(), session.viewport());
    let Some(reader) = reader else {
        return (
            Outcome::new(step, Status::Failed, "nothing to continue: READ first"),
            None,
        );
    };
    if reader.done() {
        return (
            Outcome::new(
                step,
                Status::NoEffect,
                "the whole reading was given already; READ again to read the page as it is now",
            ),
            None,
        );
    }
    match reader.next_part(page, viewport, marks, max).await {
        Ok(part) => (
            Outcome::new(
                step,
                Status::Done,
                part_message(&part, "continued the last reading"),
            ),
            Some(part_text(&part)),
        ),
        Err(e) => (Outcome::new(step, Status::Failed, e.to_string()), None),
    }
}

/// What an outcome of `READ` says of the part it gave.
fn part_message(part: &read::Part, what: &str) -> String {
    let shown = part.text.chars().count();
    if part.more {
        format!(
            "{what}: {shown} characters, in the page data below; the page holds more, READ:more gives the next part"
        )
    } else if part.left() == 0 && part.from == 0 {
        format!("{what}: {shown} characters, in the page data below")
    } else if part.left() == 0 {
        format!("{what}: the last {shown} characters, in the page data below")
    } else {
        format!(
            "{what}: {shown} characters, in the page data below; {} more, READ:more gives the next part",
            part.left()
        )
    }
}

/// A part with the line that says what is left.
fn part_text(part: &read::Part) -> String {
    match part.trailer() {
        Some(t) => format!("{}{t}", part.text),
        None => part.text.clone(),
    }
}

/// The first `n` bytes of a file (all of a smaller one).
fn read_start(path: &std::path::Path, n: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(n as u64)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The text of a downloaded PDF, at most `max` characters.
async fn read_pdf_file(
    step: &Step,
    file: &crate::files::DownloadedFile,
    max: usize,
) -> (Outcome, Option<String>) {
    let read = match tokio::fs::read(&file.path).await {
        Ok(bytes) => crate::read::pdf::pdf_text_apart(bytes, max).await,
        Err(e) => Err(e.into()),
    };
    pdf_reading(step, &file.describe(), &file.name, read, max)
}

/// The start of a downloaded text file, at most `max` characters.
fn read_text_file(
    step: &Step,
    file: &crate::files::DownloadedFile,
    max: usize,
) -> (Outcome, Option<String>) {
    let bytes = match read_start(&file.path, max * 4) {
        Ok(b) => b,
        Err(e) => {
            let why = format!("{} cannot be read: {e}", file.name);
            return (Outcome::new(step, Status::Failed, why), None);
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let shown: String = text.chars().take(max).collect();
    let whole = (shown.len() as u64) >= file.size;
    let message = if whole {
        format!("read {}: all of it", file.describe())
    } else {
        format!(
            "read the first {} characters of {}",
            shown.chars().count(),
            file.describe()
        )
    };
    let reading = format!("The downloaded file {}:\n\n```\n{shown}\n```", file.name);
    (Outcome::new(step, Status::Done, message), Some(reading))
}
