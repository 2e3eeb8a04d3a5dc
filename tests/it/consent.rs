//! Cookie banners answered by rule, through `seamark run` as a user runs
//! it, on pages in the markup of three consent platforms (OneTrust,
//! Cookiebot through its API, CookieYes by a declarative rule): by default
//! each banner is refused before the model's first look, the choice reaches
//! the site in its cookie, the model spends no call on it and is told, and
//! the journal and the report keep it; `--consent accept` accepts;
//! `--consent ask` leaves the banner to the model.

use crate::support::Seamark;
use std::path::PathBuf;

use crate::model_server::{reply, ModelServer, Received, Turn};
use crate::server::Server;
use crate::support::{records, Run};

/// What the banners' buttons are called, on any of the three.
const BANNER_BUTTONS: [&str; 5] = [
    "Reject All",
    "Accept All",
    "Allow all cookies",
    "Use necessary cookies only",
    "Cookie Settings",
];

/// The start pages' links to the next page.
const LINKS: [&str; 3] = [
    "See this week's picks",
    "Read the full story",
    "Open the recipe",
];

/// A reader: follows the page's one link, then is done. It says when it
/// was shown a banner (it would have had to answer it).
fn reader() -> Turn {
    reply(|r: &Received| {
        let text = r.text();
        if r.url().ends_with("/consent-next.html") {
            return "COMPLETE:read the page after the banner".into();
        }
        let link = LINKS
            .into_iter()
            .find(|l| text.contains(&format!("\"{l}\"")))
            .unwrap_or_else(|| panic!("no link in:\n{text}"));
        format!("CLICK:{}", r.id_of(link))
    })
}

/// The model's first prompt of a run: the start page.
fn first_prompt(model: &ModelServer) -> String {
    model
        .received()
        .first()
        .map(Received::text)
        .unwrap_or_default()
}

/// The run's directory (`--out rec`, in the run's own folder).
fn run_dir(run: &Run) -> PathBuf {
    run.path(run.json()["run_dir"].as_str().unwrap_or_default())
}

/// `seamark run` of the reader on `page`, with `more` arguments.
async fn read_past_banner(server: &Server, page: &str, more: &[&str]) -> (Run, ModelServer) {
    let model = ModelServer::start(Vec::new(), reader).await;
    let url = server.url(page);
    let mut args = vec![
        "--task",
        "Open the page the start page links to",
        "--url",
        &url,
        "--max-steps",
        "5",
    ];
    args.extend_from_slice(more);
    let run = Seamark::task(&args).model(&model).output().await;
    (run, model)
}

#[tokio::test]
async fn three_platforms_banners_are_refused_by_rule_before_the_model_looks() {
    let server = Server::start(None).await;
    let platforms = [
        (
            "consent-onetrust.html",
            "Onetrust",
            "OptanonConsent=isGpcEnabled=0&groups=C0001%3A1%2CC0002%3A0%2CC0004%3A0",
        ),
        (
            "consent-cookiebot.html",
            "Cybotcookiebot",
            "CookieConsent={stamp:%27-1%27%2Cnecessary:true%2Cpreferences:false",
        ),
        (
            "consent-cookieyes.html",
            "cookieyes",
            "cookieyes-consent=consent:no,action:yes",
        ),
    ];
    for (page, cmp, cookie) in platforms {
        let (run, model) = read_past_banner(&server, page, &[]).await;
        let v = run.json();
        assert_eq!(v["success"], true, "{page}: {v}\n{}", run.stderr());
        // The site got the refusal, in the platform's own cookie.
        let sent = server.cookies("/consent-next.html");
        assert!(
            sent.iter().any(|c| c.contains(cookie)),
            "{page}: the next page came with {sent:?}"
        );
        // Two model calls (the link, the end): none for the banner, which
        // the model never saw, and was told of.
        let first = first_prompt(&model);
        assert_eq!(model.received().len(), 2, "{page}");
        for button in BANNER_BUTTONS {
            assert!(!first.contains(&format!("\"{button}\"")), "{page}: {first}");
        }
        let told = format!("cookie banner of {cmp}: rejected");
        assert!(first.contains(&told), "{page}: {first}");
        // The journal keeps it with the step, and the report shows it.
        let dir = run_dir(&run);
        let steps = records(&dir, "step");
        assert_eq!(steps[0]["consent"][0]["cmp"], cmp, "{page}: {}", steps[0]);
        assert_eq!(steps[0]["consent"][0]["outcome"], "rejected");
        let report = std::fs::read_to_string(dir.join("report.html")).unwrap_or_default();
        assert!(report.contains(&told), "{page}: the report");
    }
}

#[tokio::test]
async fn consent_accept_accepts_and_consent_ask_leaves_the_banner_to_the_model() {
    let server = Server::start(None).await;
    let (run, model) =
        read_past_banner(&server, "consent-cookieyes.html", &["--consent", "accept"]).await;
    assert_eq!(run.json()["success"], true, "{}", run.stderr());
    let sent = server.cookies("/consent-next.html");
    assert!(
        sent.iter()
            .any(|c| c.contains("cookieyes-consent=consent:yes")),
        "{sent:?}"
    );
    assert!(first_prompt(&model).contains("cookie banner of cookieyes: accepted"));

    let (run, model) =
        read_past_banner(&server, "consent-onetrust.html", &["--consent", "ask"]).await;
    assert_eq!(run.json()["success"], true, "{}", run.stderr());
    // The banner was the model's to see, and nothing answered it.
    let first = first_prompt(&model);
    assert!(first.contains("\"Reject All\""), "{first}");
    assert!(!first.contains("cookie banner of"), "{first}");
    let onetrust: Vec<String> = server
        .cookies("/consent-next.html")
        .into_iter()
        .filter(|c| c.contains("Optanon"))
        .collect();
    assert!(onetrust.is_empty(), "{onetrust:?}");
}
