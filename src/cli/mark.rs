//! `seamark mark`: a page in, a marked screenshot and an element list out.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use seamark::brain::tokens;
use seamark::browser::{Navigation, Session};
use seamark::mark::{self, Encoding, MarkStyle};
use seamark::perceive::{self, Observation, PerceiveOptions};

use super::BrowserArgs;

#[derive(Debug, Args)]
pub struct MarkArgs {
    /// The page: a URL, or a local HTML file.
    #[arg(value_name = "URL_OR_FILE")]
    target: String,
    /// Where to write the marked screenshot (.png, .jpg or .webp).
    #[arg(short, long, value_name = "FILE", default_value = "marked.png")]
    output: PathBuf,
    /// Also write the full element table (and the observation's facts) as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write the marked image as a model would get it: downscaled to a
    /// 1568 px long edge when larger (.png, .jpg or .webp).
    #[arg(long, value_name = "FILE")]
    model_image: Option<PathBuf>,
    /// Also write the screenshot as taken, without marks (PNG).
    #[arg(long, value_name = "FILE")]
    screenshot: Option<PathBuf>,
    /// Extra time to wait after the page loaded, for late scripts.
    #[arg(long, value_name = "N", default_value_t = 300)]
    wait_ms: u64,
    /// Longest wait for the page's load event; after it, what is there is perceived.
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    timeout: u64,
    /// Draw offscreen, occluded and disabled elements too (dashed), as traces do.
    #[arg(long)]
    debug_marks: bool,
    /// Print the stage timings of this perception on stderr (they are in the
    /// JSON always): enumeration, screenshot, perception, marking, encoding.
    #[arg(long)]
    timings: bool,
    /// Most elements in the printed list (interactable and in-viewport first).
    #[arg(long, value_name = "N", default_value_t = perceive::DEFAULT_LIST_CAP)]
    max_list: usize,
    #[command(flatten)]
    browser: BrowserArgs,
}

pub async fn run(args: MarkArgs) -> anyhow::Result<()> {
    let url = seamark::start_url::to_url(&args.target).map_err(super::UsageError::of)?;
    // Check the output names before the browser starts.
    encoding_for(&args.output)?;
    if let Some(path) = &args.model_image {
        encoding_for(path)?;
    }
    let session = Session::start(&args.browser.options().await?).await?;
    let result = mark_page(&session, &url, &args).await;
    session.close().await;
    let (obs, nav) = result?;
    let style = MarkStyle {
        debug: args.debug_marks,
        ..MarkStyle::default()
    };
    // Password fields are painted over in every image seamark writes.
    let hide: Vec<_> = obs
        .table
        .elements
        .iter()
        .filter(|e| e.input_type.as_deref() == Some("password"))
        .filter_map(|e| e.visible)
        .collect();
    let t = std::time::Instant::now();
    let image = mark::mark_observation(&obs, &style, &hide)?;
    let mark_ms = ms_since(t);
    // What a run does with it next: the images for the run and the model.
    let edge = style.send_long_edge.unwrap_or(mark::DEFAULT_LONG_EDGE);
    let t = std::time::Instant::now();
    mark::for_model(&image, edge)?;
    let encode_ms = ms_since(t);
    if args.timings {
        tell_timings(&obs.timings, mark_ms, encode_ms);
    }
    write_image(&args.output, &image)?;
    let downscaled = mark::downscale(&image, edge);
    let sent = downscaled.as_ref().unwrap_or(&image);
    if let Some(path) = &args.model_image {
        write_image(path, sent)?;
    }
    if let Some(path) = &args.screenshot {
        std::fs::write(path, &obs.screenshot_png)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.json {
        let mut table = table_json(&obs, &nav);
        table["timings"]["mark_ms"] = mark_ms.into();
        table["timings"]["encode_ms"] = encode_ms.into();
        let json = serde_json::to_vec_pretty(&table)?;
        std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let list = perceive::element_list(&obs.table, args.max_list);
    print!("{}", super::terminal::inert(&list));
    if obs.table.is_empty() {
        tell!("note: no interactive element found");
    }
    for note in notes(&obs, &nav) {
        tell!("note: {note}");
    }
    // What the page costs a step: the list's tokens, and the image's.
    let (w, h) = sent.dimensions();
    tell!(
        "list: {} characters, {} tokens (o200k_base); image: {} tokens for OpenAI, {} for Anthropic",
        list.chars().count(),
        tokens::text_tokens("openai/gpt-4o", &list),
        tokens::image_tokens(tokens::Provider::OpenAi, w, h),
        tokens::image_tokens(tokens::Provider::Anthropic, w, h),
    );
    tell!(
        "{} elements ({} interactable) on {} — marked image: {}",
        obs.table.len(),
        obs.table
            .elements
            .iter()
            .filter(|e| e.is_interactable())
            .count(),
        obs.url,
        args.output.display()
    );
    Ok(())
}

/// `--timings`: what each stage took.
fn tell_timings(t: &perceive::PerceiveTimings, mark_ms: f64, encode_ms: f64) {
    tell!(
        "timings: perception {:.1} ms (enumerate {:.1} ms, screenshot {:.1} ms, {} attempt{}), \
         mark {mark_ms:.1} ms, encode for the model {encode_ms:.1} ms",
        t.total_ms,
        t.enumerate_ms,
        t.screenshot_ms,
        t.attempts,
        if t.attempts == 1 { "" } else { "s" }
    );
}

async fn mark_page(
    session: &Session,
    url: &str,
    args: &MarkArgs,
) -> anyhow::Result<(Observation, Navigation)> {
    let (mut obs, nav) = open_and_perceive(session, url, args.timeout, args.wait_ms).await?;
    // The table written out tells each element's node (a look alone reports
    // node numbers; see docs/perception.md).
    perceive::identify(session.page(), &mut obs.table.elements).await?;
    Ok((obs, nav))
}

/// Opens `url`, waits `wait_ms` after the load (at most `timeout` seconds
/// for it) and for a cookie banner being answered by rule, and perceives
/// the page.
pub(super) async fn open_and_perceive(
    session: &Session,
    url: &str,
    timeout: u64,
    wait_ms: u64,
) -> anyhow::Result<(Observation, Navigation)> {
    let nav = session
        .navigate(url, Duration::from_secs(timeout.max(1)))
        .await?;
    tokio::time::sleep(Duration::from_millis(wait_ms.min(60_000))).await;
    session.consent_settled().await;
    for handled in session.consent_handled() {
        tell!("{}", handled.describe());
    }
    let obs = perceive::perceive(session, &PerceiveOptions::default()).await?;
    Ok((obs, nav))
}

fn ms_since(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn write_image(path: &std::path::Path, image: &image::RgbImage) -> anyhow::Result<()> {
    let bytes = mark::encode(image, encoding_for(path)?)?;
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

fn encoding_for(path: &std::path::Path) -> anyhow::Result<Encoding> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("png")
        .to_ascii_lowercase();
    ext.parse::<Encoding>().map_err(|_| {
        anyhow::anyhow!(
            "cannot write {}: the marked image must end in .png, .jpg or .webp",
            path.display()
        )
    })
}

/// What the user should know beyond the list: HTTP errors, non-HTML answers,
/// a load that timed out, and perception's own notes.
pub(super) fn notes(obs: &Observation, nav: &Navigation) -> Vec<String> {
    let mut out = Vec::new();
    if nav.load_timed_out {
        out.push("the page had not finished loading; perceived what was there".into());
    }
    if let Some(status) = nav.status.filter(|s| *s >= 400) {
        out.push(format!("the server answered HTTP {status}"));
    }
    if let Some(mime) = nav.mime_type.as_deref() {
        if !mime.contains("html") && !mime.contains("xml") {
            out.push(format!("the URL is not an HTML page but {mime}"));
        }
    }
    out.extend(obs.notes.iter().cloned());
    out
}

fn table_json(obs: &Observation, nav: &Navigation) -> serde_json::Value {
    serde_json::json!({
        "url": obs.url,
        "title": obs.title,
        "viewport": obs.viewport,
        "scroll": obs.scroll,
        "signature": obs.signature,
        "stable": obs.stable,
        "http_status": nav.status,
        "mime_type": nav.mime_type,
        "notes": notes(obs, nav),
        "timings": obs.timings,
        "elements": obs.table.elements,
    })
}
