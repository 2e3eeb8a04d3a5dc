//! The README's first command: `seamark demo` runs the bundled task end to
//! end with the recorded answers. A replay that no longer matches its
//! recording (the site or seamark changed how a page looks) fails here, so
//! the recording is made anew on purpose (`seamark demo --record …`).

use crate::cli::seamark_with_env;

#[tokio::test]
async fn the_demo_runs_the_task_to_its_answer_as_recorded() {
    let ran = seamark_with_env(&["demo", "--json", "--out", "rec"], &[]).await;
    let result = ran.result();
    assert_eq!(
        result["divergences"].as_array().map(Vec::len).unwrap_or(0),
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
    // Progress went to stderr, and it says where the answers came from.
    assert!(
        ran.stderr().contains("the answers come from a recording"),
        "{}",
        ran.stderr()
    );
    assert!(ran.stderr().contains("step 3/10"), "{}", ran.stderr());
}
