//! The documents a task hands over, and the clock: a downloaded image shown
//! to the model in the next step, a PDF the page opens read page by page
//! with its lines where the page puts them, and the date and time of
//! seamark's clock in the zone `--timezone` gives the browser too.

use regex::Regex;

use crate::model_server::{ModelServer, Received, Reply};
use crate::server::Server;
use crate::support::{Ran, Workdir};

/// A model that gets the chart, looks at it, opens the invoice, reads it,
/// and answers its total as the PDF's text says it.
fn clerk(r: &Received) -> Reply {
    let text = r.text();
    let read = r.reading();
    let total = Regex::new(r"Total due: (EUR [\d,.]+)")
        .ok()
        .and_then(|re| Some(re.captures(&read)?[1].to_string()));
    Reply::Text(match total {
        Some(total) => format!("ANSWER:{total}\nCOMPLETE:read the invoice"),
        None if r.url().ends_with("/invoice.pdf") => "READ".into(),
        None if text.contains("DOWNLOADED IMAGE") => {
            format!("CLICK:{}", r.id_of("Open the invoice"))
        }
        None if text.contains("\"chart.png\"") => "READ:download:chart.png".into(),
        None => format!("CLICK:{}", r.id_of("Get the chart")),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downloaded_image_is_seen_and_an_opened_pdf_is_read_in_the_clock_of_the_zone_given() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(clerk).await;
    let work = Workdir::new(&model);
    let mut cmd = work.command(&[
        "run",
        "--task",
        "What is the total due on the invoice?",
        "--url",
        &server.url("documents.html"),
        "--timezone",
        "Asia/Tokyo",
        "--locale",
        "de-DE",
        "--max-steps",
        "8",
        "--json",
    ]);
    cmd.env(seamark::clock::NOW_ENV, "2026-03-14T09:26:53Z");
    let ran = Ran::of(cmd.output().await.expect("run seamark"));
    let out = ran.json();
    assert_eq!(out["answer"], "EUR 1,234.50", "{}", ran.stderr());
    let seen = model.received();
    // The page's own clock and formats follow the flags; the prompt tells
    // seamark's (fixed) time in that zone.
    assert!(
        seen[0]
            .text()
            .contains("Title: Documents, zone Asia/Tokyo, locale de-DE"),
        "{}",
        seen[0].text()
    );
    assert!(
        seen.iter().all(|r| r
            .text()
            .contains("Now: 2026-03-14 18:26 Saturday, Asia/Tokyo (GMT+9)")),
        "{}",
        seen[0].text()
    );
    // The image downloaded is sent just before the screenshot, as it is.
    let shown = seen
        .iter()
        .position(|r| r.text().contains("DOWNLOADED IMAGE"))
        .expect("the downloaded image was shown");
    let images = seen[shown].images();
    assert_eq!(images.len(), seen[shown - 1].images().len() + 1);
    use base64::Engine;
    let chart = base64::engine::general_purpose::STANDARD
        .decode(&images[images.len() - 2])
        .expect("base64");
    let chart = image::load_from_memory(&chart).expect("a PNG").to_rgb8();
    assert_eq!(chart.dimensions(), (64, 48));
    assert_eq!(chart.get_pixel(10, 10).0, [200, 30, 30]);
    // The PDF the tab shows: page by page, a line per line of the page.
    let read = seen.last().expect("a last prompt").reading();
    for line in [
        "--- page 1 of 2 ---",
        "Invoice 2041",
        "--- page 2 of 2 ---",
        "Items: 3 crates of apples",
        "Total due: EUR 1,234.50",
    ] {
        assert!(read.lines().any(|l| l.trim() == line), "{line:?} in {read}");
    }
}

/// Gets each report and reads it; answers with what the reading said.
fn reads_both_reports(r: &Received) -> Reply {
    let text = r.text();
    Reply::Text(if text.contains("more than 128 MB") {
        "ANSWER:neither report could be read\nCOMPLETE:tried both".into()
    } else if text.contains("\"inflating.pdf\"") {
        "READ:download:inflating.pdf".into()
    } else if text.contains("deeper than 256") {
        format!("CLICK:{}", r.id_of("Get the large report"))
    } else if text.contains("\"deep.pdf\"") {
        "READ:download:deep.pdf".into()
    } else {
        format!("CLICK:{}", r.id_of("Get the deep report"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_nested_200000_deep_or_inflating_to_200_mb_is_refused_with_its_reason() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(reads_both_reports).await;
    let work = Workdir::new(&model);
    // Before the bounds, the first aborted seamark (a thread's stack
    // overflowed) and the second grew it by the whole inflated stream.
    let ran = work
        .run(&[
            "run",
            "--task",
            "Read both reports",
            "--url",
            &server.url("hostile-pdfs.html"),
            "--max-steps",
            "8",
            "--json",
        ])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    assert_eq!(ran.json()["answer"], "neither report could be read");
    let told: Vec<String> = model.received().iter().map(|r| r.text()).collect();
    assert!(
        told.iter()
            .any(|t| t.contains("nest deeper than 256 levels")),
        "the deep one's reason"
    );
    assert!(
        told.iter()
            .any(|t| t.contains("decode to more than 128 MB")),
        "the inflating one's reason"
    );
}
