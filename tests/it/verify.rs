//! Done means done: `seamark run --expect-*` checks the live page (or the
//! answer) when the model says COMPLETE, refuses a COMPLETE said too early
//! and tells the model why, ends `unverified` (exit 4) after two refusals,
//! cannot be steered by what a page says about itself, and keeps every check
//! in the journal and the report; a batch's verdict is in each run's report.

use serde_json::Value;

use crate::model_server::{ModelServer, Received, Reply};
use crate::server::Server;
use crate::support::{records, Ran, Workdir};

const ALL_TICKED: &str = "document.querySelectorAll('input:checked').length === 3";

/// Clicks the first two boxes that are unchecked (all three once told its
/// COMPLETE was refused), then says COMPLETE with `summary`.
pub fn tick(r: &Received, summary: &str) -> String {
    let mut boxes = vec!["First box", "Second box"];
    if r.text().contains("COMPLETE was not accepted") {
        boxes.push("Third box");
    }
    let mut commands: Vec<String> = boxes
        .into_iter()
        .filter(|b| r.line_of(b).contains("unchecked"))
        .map(|b| format!("CLICK:{}", r.id_of(b)))
        .collect();
    commands.push(format!("COMPLETE:{summary}"));
    commands.join("\n")
}

/// Ticks the first two boxes and says it is done; told that it is not,
/// ticks the third too.
fn hasty_ticker(r: &Received) -> Reply {
    Reply::Text(tick(r, "ticked the boxes"))
}

fn always_done(_: &Received) -> Reply {
    Reply::Text("COMPLETE:it is done".into())
}

/// `seamark run` of `task` (no skills) into `rec`.
async fn run(work: &Workdir, task: &str, url: &str, more: &[&str]) -> Ran {
    let mut args = vec![
        "run",
        "--json",
        "--no-skills",
        "--out",
        "rec",
        "--task",
        task,
        "--url",
        url,
    ];
    args.extend_from_slice(more);
    work.run(&args).await
}

fn checks(work: &Workdir) -> Vec<Value> {
    records(&work.path("rec"), "check")
}

fn report(work: &Workdir) -> String {
    std::fs::read_to_string(work.path("rec/report.html")).expect("report.html")
}

#[tokio::test]
async fn a_complete_said_too_early_is_refused_and_the_run_goes_on_to_done() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(hasty_ticker).await;
    let work = Workdir::new(&model);
    let ran = run(
        &work,
        "Tick the boxes the person wants",
        &server.url("three-boxes.html"),
        &["--expect-js", ALL_TICKED],
    )
    .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    assert_eq!(ran.json()["status"], "done");
    let checks = checks(&work);
    assert_eq!(checks.len(), 2, "{checks:?}");
    assert_eq!(checks[0]["passed"], false);
    assert_eq!(checks[0]["detail"], "the expression gave false");
    assert_eq!(checks[1]["passed"], true);
    // The model was told which check failed and what the page shows.
    let told = model
        .received()
        .iter()
        .map(Received::text)
        .find(|t| t.contains("COMPLETE was not accepted"))
        .expect("the refusal reached the model");
    assert!(
        told.contains(ALL_TICKED) && told.contains("gave false"),
        "{told}"
    );
    let html = report(&work);
    assert!(
        html.contains("verified: every check held (1 of them)"),
        "the verdict at the top"
    );
    assert!(
        html.contains("did not hold"),
        "the refused COMPLETE beside its step"
    );
}

#[tokio::test]
async fn a_model_that_keeps_saying_complete_ends_unverified_and_the_page_cannot_steer_a_check() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(always_done).await;
    let work = Workdir::new(&model);
    // The page says, in its own words, that the check passed.
    let ran = run(
        &work,
        "Do what the page needs",
        &server.url("says-passed.html"),
        &[
            "--expect-js",
            "window.done === true",
            "--expect-text",
            "the check passed",
        ],
    )
    .await;
    assert_eq!(ran.code(), Some(4), "{}", ran.stderr());
    let v = ran.json();
    assert_eq!(v["status"], "unverified");
    assert_eq!(v["success"], false);
    assert!(
        v["reason"].as_str().unwrap_or_default().contains("2 times"),
        "{v}"
    );
    assert_eq!(model.received().len(), 2, "two refusals, then the end");
    let checks = checks(&work);
    assert_eq!(checks.len(), 4, "{checks:?}");
    let js: Vec<&Value> = checks.iter().filter(|c| c["check"] == "js").collect();
    assert!(js.iter().all(|c| c["passed"] == false), "{js:?}");
    // The text check reads the page's words and holds: that is what it asks.
    assert!(checks
        .iter()
        .filter(|c| c["check"] == "text_contains")
        .all(|c| c["passed"] == true));
    assert!(report(&work).contains("not verified: js"));
}

#[tokio::test]
async fn bad_checks_get_clear_errors_and_a_check_that_never_returns_is_bounded() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(always_done).await;
    let work = Workdir::new(&model);
    let url = server.url("three-boxes.html");
    let bad = run(&work, "Tick the boxes", &url, &["--expect-regex", "("]).await;
    assert_eq!(bad.code(), Some(2));
    bad.stderr_has("--expect-regex \"(\" is not a regular expression");
    assert!(model.received().is_empty(), "nothing ran");
    let ran = run(
        &work,
        "Tick the boxes",
        &url,
        &[
            "--expect-js",
            "(() => { throw new Error('boom') })()",
            "--expect-js",
            "new Promise(() => {})",
            "--expect-answer",
            "three",
        ],
    )
    .await;
    assert_eq!(ran.code(), Some(4), "{}", ran.stderr());
    let details: Vec<String> = checks(&work)
        .iter()
        .map(|c| c["detail"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        details.iter().any(|d| d.contains("threw Error: boom")),
        "{details:?}"
    );
    assert!(
        details.iter().any(|d| d.contains("no answer within 10 s")),
        "{details:?}"
    );
    assert!(
        details.iter().any(|d| d == "there is no answer"),
        "{details:?}"
    );
    assert!(work.path("rec/report.html").is_file());
}

#[tokio::test]
async fn a_batch_runs_report_shows_its_check_and_the_summary_links_it() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(hasty_ticker).await;
    let work = Workdir::new(&model);
    let line = serde_json::json!({
        "id": "boxes",
        "task": "Tick the first box and the second box",
        "url": server.url("three-boxes.html"),
        "check": {"js": "document.querySelectorAll('input:checked').length === 2"},
    });
    std::fs::write(work.path("tasks.jsonl"), line.to_string()).expect("tasks");
    let ran = work.run(&["batch", "tasks.jsonl", "--out", "b"]).await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    let html = std::fs::read_to_string(work.path("b/runs/boxes/1/report.html")).expect("report");
    assert!(
        html.contains("verified: every check held"),
        "the batch's verdict in the run's report"
    );
    let summary = std::fs::read_to_string(work.path("b/summary.md")).expect("summary");
    assert!(
        summary.contains("[1](runs/boxes/1/report.html)"),
        "{summary}"
    );
}

/// Ticks two boxes and says it ticked three, lists two flights and says it
/// listed three; told what seamark counted, does the rest.
fn fibber(r: &Received) -> Reply {
    let text = r.text();
    let refused = text.contains("COMPLETE was not accepted");
    Reply::Text(if r.task().starts_with("List") {
        match refused {
            false => "ANSWER:A $10; B $12\nCOMPLETE:listed the 3 cheapest flights".into(),
            true => "ANSWER:A $10; B $12; C $15\nCOMPLETE:listed the 3 cheapest flights".into(),
        }
    } else {
        tick(r, "ticked 3 boxes")
    })
}

#[tokio::test]
async fn counted_work_is_done_only_when_seamarks_own_count_agrees() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(fibber).await;
    let work = Workdir::new(&model);
    let url = server.url("three-boxes.html");
    let ticked = run(&work, "Tick all three boxes", &url, &[]).await;
    assert_eq!(ticked.code(), Some(0), "{}", ticked.stderr());
    let counts = checks(&work);
    assert_eq!(counts.len(), 2, "{counts:?}");
    assert_eq!(counts[0]["check"], "count");
    assert_eq!(counts[0]["passed"], false);
    assert_eq!(
        counts[0]["detail"],
        "seamark counts 2 boxes checked on the page"
    );
    assert_eq!(counts[1]["passed"], true);

    let work = Workdir::new(&model);
    let listed = run(&work, "List the 3 cheapest flights", &url, &[]).await;
    assert_eq!(listed.code(), Some(0), "{}", listed.stderr());
    let counts = checks(&work);
    assert_eq!(counts[0]["detail"], "seamark counts 2 items in the answer");
    assert_eq!(counts[1]["passed"], true, "{counts:?}");
    assert_eq!(listed.json()["answer"], "A $10; B $12; C $15");
}

#[tokio::test]
async fn a_refused_complete_stays_refused_in_the_history_and_a_count_never_named_is_no_reason() {
    // The second COMPLETE names no count either: seamark counts the boxes
    // itself. It used to refuse it for its wording, and end a run on a page
    // that was exactly right unverified; and the first COMPLETE's refusal
    // read "done: task marked complete" in every later prompt's history.
    let server = Server::start(None).await;
    let model = ModelServer::answering(hasty_ticker).await;
    let work = Workdir::new(&model);
    let ran = run(
        &work,
        "Tick all three boxes",
        &server.url("three-boxes.html"),
        &[],
    )
    .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    assert_eq!(ran.json()["status"], "done");
    let received = model.received();
    // Told up front what seamark counts.
    assert!(
        received[0]
            .text()
            .contains("seamark counts the boxes checked on the page itself: at least 3"),
        "{}",
        received[0].text()
    );
    // The next prompt's history shows the refusal, and its reason.
    let next = received[1].text();
    let history = next
        .split("# Steps so far")
        .nth(1)
        .and_then(|h| h.split("# Result of your last answer").next())
        .unwrap_or_else(|| panic!("no history: {next}"));
    assert!(
        history.contains(
            "COMPLETE:ticked the boxes → NOT ACCEPTED: COMPLETE was not accepted: the person's checks \
             of the task do not hold yet: count \"at least 3 boxes checked\": seamark counts 2 \
             boxes checked on the page"
        ),
        "{history}"
    );
    assert!(!history.contains("task marked complete"), "{history}");
    // So do the journal and the report.
    let steps = records(&work.path("rec"), "step");
    let outcomes = steps[0]["report"]["outcomes"].as_array().expect("outcomes");
    let complete = outcomes.last().expect("the COMPLETE");
    assert_eq!(complete["status"], "not_accepted", "{complete}");
    assert!(report(&work).contains("seamark counts 2 boxes checked on the page"));
}
