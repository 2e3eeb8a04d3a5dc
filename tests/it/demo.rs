//! The README's first command: `seamark demo` runs the bundled task end to
//! end with the recorded answers. A replay that no longer matches its
//! recording (the site or seamark changed how a page looks) fails here, so
//! the recording is made anew on purpose (`seamark demo --record …`).
//!
//! One test, its runs one after another: the demo serves its site on the
//! fixed port the recording was made on.

use crate::support::Run;
use crate::support::Seamark;

const RECORDING: &str = include_str!("../../demo/recording/journal.jsonl");

async fn demo(args: &[&str]) -> Run {
    let mut all = vec!["demo", "--json"];
    all.extend_from_slice(args);
    Seamark::new(&all).output().await
}

fn divergences(ran: &Run) -> usize {
    ran.json()["divergences"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0)
}

#[tokio::test]
async fn the_demo_runs_as_recorded_and_fails_when_its_pages_no_longer_match() {
    let ran = demo(&["--out", "rec"]).await;
    let result = ran.json();
    assert_eq!(
        divergences(&ran),
        0,
        "the demo no longer matches its recording: {:#}\n{}",
        result["divergences"],
        ran.stderr()
    );
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    assert_eq!(result["status"], "done");
    assert_eq!(result["steps"], 4);
    assert!(
        result["answer"]
            .as_str()
            .unwrap_or_default()
            .starts_with("5 Data Scientist jobs in India pay 50 to 100 LPA"),
        "{result:#}"
    );
    // The person gets a report to open and an animation.
    assert!(ran.path("rec/report.html").is_file());
    assert!(ran.path("rec/run.gif").is_file());
    // The report says what the run cost: nothing, as no model was called.
    let html = std::fs::read_to_string(ran.path("rec/report.html")).expect("report");
    assert!(html.contains("none (a replay calls no model)"), "{html}");
    // Progress went to stderr, and it says where the answers came from.
    ran.stderr_has("the answers come from a recording");
    ran.stderr_has("step 3/10");

    // A recording whose second page looked otherwise: the replay diverges
    // there, and the demo fails and says how to make the recording anew.
    let dir = tempfile::tempdir().expect("tempdir");
    let doctored: String = RECORDING
        .lines()
        .map(
            |line| match line.contains("\"kind\":\"step\",\"step\":2,") {
                true => line.replace("\"signature\":\"", "\"signature\":\"0"),
                false => line.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(doctored.trim(), RECORDING.trim(), "step 2 was doctored");
    let path = dir.path().join("doctored.jsonl");
    std::fs::write(&path, doctored).expect("write");
    let diverged = demo(&["--recording", path.to_str().unwrap_or_default()]).await;
    assert_eq!(diverged.code(), Some(1), "{}", diverged.stderr());
    assert!(divergences(&diverged) > 0, "{}", diverged.stdout());
    assert!(
        diverged
            .stderr()
            .contains("seamark demo --record demo/recording/journal.jsonl"),
        "{}",
        diverged.stderr()
    );

    // Made anew on purpose, the recording replays without a divergence.
    let fresh = dir.path().join("fresh.jsonl");
    let recorded = demo(&["--record", fresh.to_str().unwrap_or_default()]).await;
    assert_eq!(recorded.code(), Some(0), "{}", recorded.stderr());
    let again = demo(&["--recording", fresh.to_str().unwrap_or_default()]).await;
    assert_eq!(again.code(), Some(0), "{}", again.stderr());
    assert_eq!(divergences(&again), 0, "{}", again.stdout());
}
