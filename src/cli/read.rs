//! `seamark read`: a page in, its content as Markdown out.

use clap::Args;
use seamark::browser::Session;
use seamark::read::{self, Marks, Scope, Values};

use super::{BrowserArgs, UsageError};

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The page: a URL, or a local HTML file.
    #[arg(value_name = "URL_OR_FILE")]
    target: String,
    /// Print the blocks as JSON (kind, Markdown, box, frame, mark ids) instead
    /// of the Markdown.
    #[arg(long)]
    json: bool,
    /// Print at most this many characters (cut at a block boundary, with a
    /// line saying how much is left); 0 prints everything.
    #[arg(long, value_name = "N", default_value_t = 0)]
    max_chars: usize,
    /// Read only the region of this element (its mark id, as `seamark mark`
    /// numbers it): the table, dialog, list, form, section or card around it.
    #[arg(long, value_name = "ID", conflicts_with = "section")]
    id: Option<u32>,
    /// Read only the smallest section whose heading or text holds TEXT.
    #[arg(long, value_name = "TEXT")]
    section: Option<String>,
    /// Extra time to wait after the page loaded, for late scripts.
    #[arg(long, value_name = "N", default_value_t = 300)]
    wait_ms: u64,
    /// Longest wait for the page's load event; after it, what is there is read.
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    timeout: u64,
    #[command(flatten)]
    browser: BrowserArgs,
}

pub async fn run(args: ReadArgs) -> anyhow::Result<()> {
    let url = seamark::start_url::to_url(&args.target).map_err(super::UsageError::of)?;
    if args.section.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err(UsageError("--section needs some text to look for".into()).into());
    }
    let session = Session::start(&args.browser.options().await?).await?;
    let result = read_page(&session, &url, &args).await;
    session.close().await;
    let (reading, part, notes) = result?;
    for note in notes {
        tell!("note: {note}");
    }
    if args.json {
        show!("{}", serde_json::to_string_pretty(&reading)?);
    } else if reading.markdown.is_empty() {
        tell!("note: the page has no readable text");
    } else {
        print!("{}", super::terminal::inert(&part.text));
        if let Some(trailer) = part.trailer() {
            show!("{trailer}");
        }
    }
    tell!(
        "read {} characters ({} words) of {} in {:.0} ms{}",
        reading.markdown.chars().count(),
        reading.words,
        reading.url,
        reading.ms,
        if reading.cut && !part.more {
            format!(
                "; the page holds more than the {} characters read at most",
                read::MAX_COLLECTED
            )
        } else {
            String::new()
        }
    );
    Ok(())
}

async fn read_page(
    session: &Session,
    url: &str,
    args: &ReadArgs,
) -> anyhow::Result<(read::Reading, read::Part, Vec<String>)> {
    let (mut obs, nav) =
        super::mark::open_and_perceive(session, url, args.timeout, args.wait_ms).await?;
    if let Some(i) = args
        .id
        .and_then(|id| obs.table.elements.iter().position(|e| e.id == id))
    {
        seamark::perceive::identify(session.page(), &mut obs.table.elements[i..=i]).await?;
    }
    let element = match args.id {
        Some(id) => Some(obs.table.get(id).ok_or_else(|| {
            UsageError(format!(
                "there is no element {id} on the page (it has {})",
                obs.table.len()
            ))
        })?),
        None => None,
    };
    let scope = match (element, args.section.as_deref()) {
        (Some(e), _) => Scope::Region {
            frame: e.frame.clone(),
            node: e.backend_node_id,
        },
        (None, Some(text)) => Scope::Text(text.to_string()),
        (None, None) => Scope::Page,
    };
    let marks = Marks {
        table: Some(&obs.table),
        values: Values::All,
    };
    // All of it, unless only a first part is to be printed.
    let max = if args.json || args.max_chars == 0 {
        usize::MAX
    } else {
        args.max_chars
    };
    let (page, viewport) = (session.page(), session.viewport());
    // A PDF the tab shows is read as a PDF: its text page by page.
    if let Some((_, pdf)) = read::pdf::shown_pdf(page, max).await {
        let pdf =
            pdf.map_err(|why| anyhow::anyhow!("{url} is a PDF that cannot be read: {why}"))?;
        let mut notes = super::mark::notes(&obs, &nav);
        notes.retain(|n| !n.contains("not an HTML page"));
        notes.push(format!(
            "{url} is a PDF of {} pages, read page by page",
            pdf.pages
        ));
        return Ok((
            read::Reading::of_text(url, &pdf.text),
            read::Part::whole(&pdf.text),
            notes,
        ));
    }
    let mut reader = read::Reader::start(page, viewport, scope, &marks, max).await?;
    let part = reader.next_part(page, viewport, &marks, max).await?;
    Ok((
        reader.reading().clone(),
        part,
        super::mark::notes(&obs, &nav),
    ))
}
