//! `seamark run --judge MODEL`: a second model judges the run when the
//! agent says COMPLETE. One scripted model server answers as the agent or as
//! the judge by the request's model name, over OpenAI's wire format.

use serde_json::Value;

use crate::model_server::{ModelServer, Received, Reply};
use crate::server::Server;
use crate::support::{records, Ran, Workdir};
use crate::verify::tick;

/// The judge's model, as `--judge` names it.
const JUDGE: &str = "openai/judge";

fn is_judge(r: &Received) -> bool {
    r.body["model"] == "judge"
}

/// The agent: ticks the first two boxes and says it is done; told it is
/// not, ticks the third too.
fn agent(r: &Received) -> String {
    tick(r, "ticked the boxes")
}

/// The agent, and a judge that always answers `verdict`.
fn judged_by(verdict: &'static str) -> impl Fn(&Received) -> Reply + Send + Sync {
    move |r: &Received| {
        Reply::Text(if is_judge(r) {
            verdict.into()
        } else {
            agent(r)
        })
    }
}

/// A judge that passes the run once the steps show the third box clicked.
fn fair_verdict(r: &Received) -> String {
    if r.text().contains("(checkbox \"Third box\")") {
        r#"{"verdict": "pass", "reason": "all three boxes were ticked"}"#.into()
    } else {
        r#"{"verdict": "fail", "reason": "the third box was never ticked"}"#.into()
    }
}

/// The agent, and the fair judge.
fn fair(r: &Received) -> Reply {
    Reply::Text(if is_judge(r) {
        fair_verdict(r)
    } else {
        agent(r)
    })
}

async fn run(model: &ModelServer, judge: &str) -> (Workdir, Ran) {
    run_with_skills(model, judge, &["--no-skills"]).await
}

/// The same run, with these skills flags (`--skills DIR` learns from it).
async fn run_with_skills(model: &ModelServer, judge: &str, skills: &[&str]) -> (Workdir, Ran) {
    let server = Server::start(None).await;
    let work = Workdir::new(model);
    let url = server.url("three-boxes.html");
    let mut args = vec!["run", "--json", "--out", "rec", "--judge", judge];
    args.extend_from_slice(&["--task", "Tick the boxes the person wants", "--url", &url]);
    args.extend_from_slice(skills);
    let ran = work.run(&args).await;
    (work, ran)
}

fn judged(work: &Workdir) -> Vec<Value> {
    records(&work.path("rec"), "check")
        .into_iter()
        .filter(|c| c["check"] == "judge")
        .collect()
}

#[tokio::test]
async fn the_judges_fail_reaches_the_agent_which_goes_on_and_its_pass_ends_the_run_done() {
    let model = ModelServer::answering(fair).await;
    let (work, ran) = run(&model, JUDGE).await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    let v = ran.json();
    assert_eq!(v["status"], "done");
    assert_eq!(v["judge"]["verdict"], "pass", "{v}");
    assert_eq!(v["judge"]["judged"], 2, "{v}");
    assert_eq!(v["judge"]["model"], JUDGE, "{v}");
    // Its tokens are its own, apart from the agent's.
    assert!(
        v["judge"]["spend"]["tokens"]["input"].as_u64() > Some(0),
        "{v}"
    );
    let received = model.received();
    let (judge, agent): (Vec<&Received>, Vec<&Received>) =
        received.iter().partition(|r| is_judge(r));
    // What the judge was shown: the task, the summary, the steps, a screenshot.
    let first = judge[0].text();
    assert!(first.contains("Tick the boxes the person wants"), "{first}");
    assert!(first.contains("ticked the boxes"), "{first}");
    assert!(first.contains("(checkbox \"Second box\")"), "{first}");
    assert!(!judge[0].images().is_empty(), "the judge saw no screenshot");
    assert!(judge[0].body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("You judge whether a web agent did the task")));
    // Its reason reached the agent, which went on.
    assert!(
        agent[1]
            .text()
            .contains("the judge (openai/judge) says: \"the third box was never ticked\""),
        "{}",
        agent[1].text()
    );
    let verdicts = judged(&work);
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    assert_eq!(verdicts[0]["passed"], false);
    assert_eq!(verdicts[1]["passed"], true);
    assert_eq!(verdicts[1]["detail"], "pass: all three boxes were ticked");
}

#[tokio::test]
async fn a_judge_that_always_fails_ends_the_run_unverified() {
    let model = ModelServer::answering(judged_by(
        r#"{"verdict": "fail", "reason": "not convinced"}"#,
    ))
    .await;
    let (work, ran) = run(&model, JUDGE).await;
    assert_eq!(ran.code(), Some(4), "{}", ran.stderr());
    let v = ran.json();
    assert_eq!(v["status"], "unverified");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not convinced")),
        "{v}"
    );
    assert_eq!(judged(&work).len(), 2);
}

#[tokio::test]
async fn an_unreadable_judge_answer_is_asked_once_more_then_the_run_ends_unverified() {
    let model = ModelServer::answering(judged_by("Looks good to me!")).await;
    let (work, ran) = run(&model, JUDGE).await;
    assert_eq!(ran.code(), Some(4), "{}", ran.stderr());
    let v = ran.json();
    assert_eq!(v["reason"], "the judge's answer could not be read", "{v}");
    let asks: Vec<Received> = model.received().into_iter().filter(is_judge).collect();
    assert_eq!(asks.len(), 2, "asked once more, and no more");
    assert!(asks[1]
        .text()
        .contains("Your last answer could not be read"));
    let verdicts = judged(&work);
    assert_eq!(verdicts.len(), 1);
    assert!(verdicts[0]["detail"]
        .as_str()
        .is_some_and(|d| d.contains("Looks good to me!")));
}

#[tokio::test]
async fn a_run_the_judge_is_unsure_of_ends_done_and_is_not_learned_as_a_skill() {
    let model = ModelServer::answering(judged_by(
        r#"{"verdict": "unsure", "reason": "the screenshot does not show the boxes"}"#,
    ))
    .await;
    let (work, ran) = run_with_skills(&model, JUDGE, &["--skills", "skills"]).await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    let v = ran.json();
    assert_eq!(v["judge"]["verdict"], "unsure", "{v}");
    assert!(v["skill"]["learned"].is_null(), "{v}");
    let notes: Vec<Value> = records(&work.path("rec"), "skill");
    assert!(
        notes.iter().any(|n| n["detail"]
            .as_str()
            .is_some_and(|d| d.contains("the judge (openai/judge) did not pass the run"))),
        "{notes:?}"
    );
    assert!(!work
        .path("skills")
        .join("tick-the-boxes-the-person-wants.json")
        .exists());
}

#[tokio::test]
async fn a_batch_scores_a_task_without_a_check_by_the_judges_verdict() {
    // "wants": the agent ticks two boxes, is refused, ticks the third and
    // passes. "likes": it ticks one and keeps saying it is done.
    let model = ModelServer::answering(|r: &Received| {
        Reply::Text(if is_judge(r) {
            fair_verdict(r)
        } else if r.task().contains("likes") {
            let first = r.line_of("First box");
            match first.contains("unchecked") {
                true => format!("CLICK:{}\nCOMPLETE:ticked the boxes", r.id_of("First box")),
                false => "COMPLETE:ticked the boxes".into(),
            }
        } else {
            agent(r)
        })
    })
    .await;
    let server = Server::start(None).await;
    let work = Workdir::new(&model);
    let url = server.url("three-boxes.html");
    let lines: Vec<String> = [
        ("wants", "Tick the boxes the person wants"),
        ("likes", "Tick the boxes the person likes"),
    ]
    .iter()
    .map(|(id, task)| serde_json::json!({"id": id, "task": task, "url": url}).to_string())
    .collect();
    std::fs::write(work.path("tasks.jsonl"), lines.join("\n")).expect("tasks");
    let ran = work
        .run(&["batch", "tasks.jsonl", "--out", "b", "--judge", JUDGE])
        .await;
    assert_eq!(ran.code(), Some(1), "one task failed: {}", ran.stderr());
    let results: Vec<Value> = std::fs::read_to_string(work.path("b/results.jsonl"))
        .expect("results")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let of = |id: &str| {
        results
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no result for {id}: {results:?}"))
            .clone()
    };
    let (wants, likes) = (of("wants"), of("likes"));
    assert_eq!(wants["verdict"]["check"], "judge", "{wants}");
    assert_eq!(wants["passed"], true, "{wants}");
    assert_eq!(wants["judge"]["verdict"], "pass", "{wants}");
    assert_eq!(likes["verdict"]["check"], "judge", "{likes}");
    assert_eq!(likes["passed"], false, "{likes}");
    assert_eq!(likes["status"], "unverified", "{likes}");
    let table = std::fs::read_to_string(work.path("b/summary.md")).expect("summary");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("| wants | judge | 1/1 | yes |")),
        "{table}"
    );
}
