//! `seamark batch` as a user runs it: a tasks file, the binary, the test
//! server's pages in browser contexts of one Chromium (or of a Chromium the
//! test started), and a scripted model that tells the tasks apart by their
//! text and reads the ids it uses off the list it was sent, as a model would.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::model_server::{ModelServer, Received, Reply, INPUT_TOKENS, OUTPUT_TOKENS};
use crate::server::Server;
use crate::support::{Ran, Workdir};

/// A batch to run: a working directory of its own, a tasks file in it, and
/// the scripted model.
struct Batch(Workdir);

impl Batch {
    /// A batch against the scripted model.
    fn new(model: &ModelServer) -> Batch {
        Batch(Workdir::new(model))
    }

    /// Writes the tasks file `tasks.jsonl`, a line per task.
    fn tasks(self, tasks: &[Value]) -> Batch {
        let text: Vec<String> = tasks.iter().map(Value::to_string).collect();
        std::fs::write(self.path("tasks.jsonl"), text.join("\n") + "\n").expect("write tasks");
        self
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.path(rel)
    }

    /// `seamark batch` with these arguments, to run or to start.
    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut all = vec!["batch"];
        all.extend_from_slice(args);
        self.0.command(&all)
    }

    /// Runs `seamark batch` with these arguments to its end.
    async fn run(&self, args: &[&str]) -> Ran {
        let mut all = vec!["batch"];
        all.extend_from_slice(args);
        self.0.run(&all).await
    }

    /// The lines of a batch directory's results.jsonl.
    fn results(&self, dir: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(dir).join("results.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a results line is JSON"))
            .collect()
    }

    /// A batch directory's summary.json.
    fn summary(&self, dir: &str) -> Value {
        let text = std::fs::read_to_string(self.path(dir).join("summary.json"))
            .unwrap_or_else(|e| panic!("no summary.json in {dir}: {e}"));
        serde_json::from_str(&text).expect("summary.json is JSON")
    }
}

/// The scripted model of the weather site. "Look up the weather in CITY"
/// types the city and looks it up; "… and answer" answers what the weather
/// page says (its "Back: …" link names it); a task that starts with "Stop"
/// stops at once; one that starts with "Wait" waits a second at each step;
/// one that starts with "Refuse" gets the provider's 401, as a revoked key
/// does.
fn weather(r: &Received) -> Reply {
    let task = r.task();
    let url = r.url();
    if task.starts_with("Refuse") {
        return Reply::Status(401, r#"{"error": {"message": "invalid key"}}"#.into(), None);
    }
    let text = if task.starts_with("Stop") {
        "STOP:the task says to stop".to_string()
    } else if task.starts_with("Wait") {
        "WAIT:1".to_string()
    } else if url.contains("/lookup.html") {
        let city = task
            .split("weather in ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .unwrap_or("Nowhere");
        format!(
            "TYPE:{}:{city}\nCLICK:{}",
            r.id_of("City"),
            r.id_of("Look up")
        )
    } else if url.contains("/weather.html") {
        let said = r.first_named("link", "Back: ");
        let said = said.trim_start_matches("Back: ");
        if task.contains("and answer") {
            format!("ANSWER:{said}\nCOMPLETE:answered")
        } else {
            "COMPLETE:looked it up".to_string()
        }
    } else {
        format!("STOP:no script for {url}")
    };
    Reply::Text(text)
}

/// A task of the weather site.
fn task(id: &str, text: &str, sites: &Server, check: Option<Value>) -> Value {
    let mut t = json!({"id": id, "task": text, "url": sites.url("lookup.html")});
    if let Some(c) = check {
        t["check"] = c;
    }
    t
}

/// The results line of run `id#attempt`.
fn line<'a>(results: &'a [Value], id: &str, attempt: u64) -> &'a Value {
    results
        .iter()
        .find(|r| r["id"] == id && r["attempt"] == attempt)
        .unwrap_or_else(|| panic!("no result for {id}#{attempt} in {results:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_check_kind_passes_when_it_should_and_fails_when_it_should() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(weather).await;
    let s = &sites;
    // (id, task, check, passes)
    let suite: Vec<(&str, &str, Option<Value>, bool)> = vec![
        (
            "url-pass",
            "Look up the weather in Paris",
            Some(json!({"url_contains": "city=Paris"})),
            true,
        ),
        (
            "url-fail",
            "Stop before the weather in Oslo",
            Some(json!({"url_contains": "weather.html"})),
            false,
        ),
        (
            "text-pass",
            "Look up the weather in Rome",
            Some(json!({"text_contains": "rome IS 25°C   and sunny"})),
            true,
        ),
        (
            "text-fail",
            "Look up the weather in Rome",
            Some(json!({"text_contains": "Lima is"})),
            false,
        ),
        (
            "answer-pass",
            "Look up the weather in Paris and answer",
            Some(json!({"answer_contains": "21°c"})),
            true,
        ),
        (
            "answer-fail",
            "Look up the weather in Oslo and answer",
            Some(json!({"answer_contains": "21°C"})),
            false,
        ),
        (
            "regex-pass",
            "Look up the weather in Oslo and answer",
            Some(json!({"answer_regex": "^Oslo is -?\\d+°C$"})),
            true,
        ),
        (
            "regex-fail",
            "Look up the weather in Paris and answer",
            Some(json!({"answer_regex": "^\\d+ degrees$"})),
            false,
        ),
        (
            "js-pass",
            "Look up the weather in Paris",
            Some(json!({"js": "document.title === 'Weather in Paris' && forecast.temperature"})),
            true,
        ),
        (
            "js-fail",
            "Look up the weather in Paris",
            Some(json!({"js": "window.forecast.rain > 50"})),
            false,
        ),
        (
            "js-throws",
            "Look up the weather in Paris",
            Some(json!({"js": "nosuchthing.at.all"})),
            false,
        ),
        ("none-pass", "Look up the weather in Rome", None, true),
        ("none-fail", "Stop before the weather in Rome", None, false),
        // A model that fails fails its run only.
        (
            "model-fails",
            "Refuse to look up the weather in Rome",
            None,
            false,
        ),
    ];
    let lines: Vec<Value> = suite
        .iter()
        .map(|(id, text, check, _)| task(id, text, s, check.clone()))
        .collect();
    let batch = Batch::new(&model).tasks(&lines);
    let ran = batch
        .run(&[
            "tasks.jsonl",
            "--concurrency",
            "3",
            "--out",
            "b",
            "--max-steps",
            "4",
        ])
        .await;
    assert_eq!(
        ran.code(),
        Some(1),
        "some runs fail: exit 1\n{}",
        ran.stderr()
    );

    let results = batch.results("b");
    assert_eq!(results.len(), suite.len(), "{results:#?}");
    for (id, _, check, passes) in &suite {
        let r = line(&results, id, 1);
        assert_eq!(r["passed"], *passes, "{id}: {r:#}");
        let kind = check
            .as_ref()
            .and_then(|c| c.as_object()?.keys().next().cloned())
            .unwrap_or_else(|| "ending".into());
        assert_eq!(r["verdict"]["check"], kind, "{id}: {r:#}");
        // Each run has its own run directory, whose journal ended as the record says.
        let dir = batch.path("b").join(r["run_dir"].as_str().unwrap());
        assert_eq!(dir, batch.path(&format!("b/runs/{id}/1")));
        let end = crate::support::records(&dir, "end");
        assert_eq!(end.len(), 1, "{id}: one end record");
        assert_eq!(end[0]["result"]["status"], r["status"], "{id}");
        assert_eq!(end[0]["result"]["steps"], r["steps"], "{id}");
        assert!(dir.join("report.html").is_file(), "{id}: no report");
        // The model was asked once per step, each answer counted (the
        // refused one answered nothing).
        let answered = r["steps"].as_u64().unwrap() - u64::from(*id == "model-fails");
        assert_eq!(r["tokens"]["input"], answered * INPUT_TOKENS, "{id}");
        assert_eq!(r["tokens"]["output"], answered * OUTPUT_TOKENS, "{id}");
    }
    // What the checks found is told.
    assert!(line(&results, "js-throws", 1)["verdict"]["detail"]
        .as_str()
        .unwrap()
        .contains("ReferenceError"));
    assert_eq!(line(&results, "answer-fail", 1)["answer"], "Oslo is 3°C");
    assert_eq!(line(&results, "url-fail", 1)["status"], "stopped");
    let refused = line(&results, "model-fails", 1);
    assert_eq!(refused["status"], "failed");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .starts_with("the model failed"),
        "{refused:#}"
    );
    let asked: usize = results
        .iter()
        .map(|r| r["steps"].as_u64().unwrap() as usize)
        .sum();
    assert_eq!(model.received().len(), asked, "one model call per step");

    // The summary agrees with the results.
    let summary = batch.summary("b");
    let passed = suite.iter().filter(|t| t.3).count();
    assert_eq!(summary["runs"], suite.len());
    assert_eq!(summary["passed"], passed);
    assert_eq!(summary["failed"], suite.len() - passed);
    assert_eq!(summary["tasks_passing_all"], passed);
    assert_eq!(summary["steps"], asked);
    assert_eq!(
        summary["tokens"]["input"],
        (asked as u64 - 1) * INPUT_TOKENS
    );
    for t in summary["per_task"].as_array().unwrap() {
        let r = line(&results, t["id"].as_str().unwrap(), 1);
        assert_eq!(
            t["passed"],
            if r["passed"] == true { 1 } else { 0 },
            "{t:#}"
        );
        assert_eq!(t["median_steps"], r["steps"].as_f64().unwrap());
    }
    let failures: usize = summary["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["runs"].as_array().unwrap().len())
        .sum();
    assert_eq!(failures, suite.len() - passed);
    // The table is printed and written.
    let table = std::fs::read_to_string(batch.path("b/summary.md")).unwrap();
    assert!(ran.stdout().contains(table.trim()), "{}", ran.stdout());
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("| url-pass | url_contains | 1/1 | yes |")),
        "{table}"
    );
    assert!(
        table.contains("| text-fail | text_contains | 0/1 | no |"),
        "{table}"
    );
    assert!(table.contains("the text_contains check failed"), "{table}");
    // Progress went to stderr, a line per run (stderr is no terminal here).
    ran.stderr_has("14 runs, 3 at once");
    ran.stderr_has("url-pass#1 passed");
}

/// The scripted model of the isolation page, for runs `alpha` and `beta` at
/// once. alpha marks the page as its own (a cookie and a localStorage value);
/// beta, once alpha has, looks again and answers what its page remembers;
/// alpha takes its time until beta has answered, then looks again and
/// answers too, so that both runs are under way while beta looks.
fn isolation(sites: &Server) -> impl Fn(&Received) -> Reply {
    let log = sites.log.clone();
    let alpha_marked: Arc<dyn Fn() -> bool + Send + Sync> = Arc::new(move || {
        log.lock()
            .is_ok_and(|l| l.iter().any(|p| p == "/marked?who=alpha"))
    });
    let beta_answered = Arc::new(AtomicBool::new(false));
    move |r: &Received| {
        let me = if r.task().contains("alpha") {
            "alpha"
        } else {
            "beta"
        };
        if r.url().contains("again=1") {
            if me == "beta" {
                beta_answered.store(true, Ordering::SeqCst);
            }
            return Reply::Text(format!(
                "ANSWER:{}\nCOMPLETE:told what the page remembers",
                r.first_named("button", "Seen ")
            ));
        }
        if me == "alpha" && r.step() == 1 {
            return Reply::Text(format!("CLICK:{}", r.id_of("Mark as mine")));
        }
        let look_again = Box::new(Reply::Text(format!("CLICK:{}", r.id_of("Look again"))));
        let ready: Arc<dyn Fn() -> bool + Send + Sync> = match me {
            "beta" => alpha_marked.clone(),
            _ => {
                let flag = beta_answered.clone();
                Arc::new(move || flag.load(Ordering::SeqCst))
            }
        };
        Reply::When(ready, look_again)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_at_the_same_time_see_neither_the_others_cookie_nor_its_storage() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(isolation(&sites)).await;
    let tasks: Vec<Value> = ["alpha", "beta"]
        .iter()
        .map(|who| {
            json!({
                "id": who,
                "task": format!("Tell what the page remembers, as {who}"),
                "url": sites.url(&format!("isolation.html?who={who}")),
                "check": {"answer_contains": format!("cookie={who} storage={who}")},
            })
        })
        .collect();
    // beta must see nothing of alpha's.
    let mut tasks = tasks;
    tasks[1]["check"] = json!({"answer_contains": "Seen cookie=none storage=none"});
    let batch = Batch::new(&model).tasks(&tasks);
    let ran = batch
        .run(&[
            "tasks.jsonl",
            "--concurrency",
            "2",
            "--out",
            "b",
            "--max-steps",
            "20",
        ])
        .await;
    let results = batch.results("b");
    assert_eq!(ran.code(), Some(0), "{}\n{results:#?}", ran.stderr());
    // alpha's page remembered what it set: there was something not to see.
    assert_eq!(
        line(&results, "alpha", 1)["answer"],
        "Seen cookie=alpha storage=alpha"
    );
    assert_eq!(
        line(&results, "beta", 1)["answer"],
        "Seen cookie=none storage=none"
    );
    // The server agrees: beta's requests never carried alpha's cookie, and
    // alpha's did once it was set.
    assert!(
        sites.cookies("/whoami?who=beta").is_empty(),
        "{:?}",
        sites.cookies("/whoami?who=beta")
    );
    assert_eq!(
        sites.cookies("/whoami?who=alpha"),
        vec!["who=alpha".to_string()]
    );
}

/// A condition that holds once `flag` is set.
fn once(flag: &Arc<AtomicBool>) -> Arc<dyn Fn() -> bool + Send + Sync> {
    let flag = flag.clone();
    Arc::new(move || flag.load(Ordering::SeqCst))
}

/// The weather model, where the victim's task ("Wait …") and, with
/// `bystander_waits`, every other task take their time until `lost` is set:
/// the test breaks the victim's browser meanwhile.
fn waiting_for(lost: &Arc<AtomicBool>, bystander_waits: bool) -> impl Fn(&Received) -> Reply {
    let lost = lost.clone();
    move |r: &Received| {
        let reply = weather(r);
        if r.task().starts_with("Wait") || (bystander_waits && r.step() == 1) {
            Reply::When(once(&lost), Box::new(reply))
        } else {
            reply
        }
    }
}

/// The end of a batch started in the background, and its results in `b`.
async fn ended(
    run: tokio::task::JoinHandle<std::io::Result<Output>>,
    batch: &Batch,
) -> (Ran, Vec<Value>) {
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("batch hung")
        .expect("join")
        .expect("run");
    (Ran::of(out), batch.results("b"))
}

/// Waits until the model has been asked about a task that starts with `task`.
async fn asked(model: &ModelServer, task: &str) {
    for _ in 0..600 {
        if model.received().iter().any(|r| r.task().starts_with(task)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the model was never asked about {task:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_context_lost_under_a_run_fails_that_run_only() {
    use chromiumoxide::cdp::browser_protocol::target::GetTargetsParams;
    use futures::StreamExt;
    let sites = Server::start(None).await;
    let lost = Arc::new(AtomicBool::new(false));
    let model = ModelServer::answering(waiting_for(&lost, true)).await;
    // A browser the test started: seamark reaches it with --cdp, and so does the test.
    let (mut chromium, ws, _profile) = crate::support::running_chromium().await;
    let batch = Batch::new(&model).tasks(&[
        json!({"id": "victim", "task": "Wait for the weather", "url": sites.url("lookup.html?victim")}),
        task("bystander", "Look up the weather in Paris", &sites, Some(json!({"url_contains": "city=Paris"}))),
    ]);
    let run = tokio::spawn({
        let cmd = batch.command(&[
            "tasks.jsonl",
            "--concurrency",
            "2",
            "--out",
            "b",
            "--cdp",
            &ws,
        ]);
        let mut cmd = cmd;
        async move { cmd.output().await }
    });
    asked(&model, "Wait").await;
    asked(&model, "Look up").await;
    // The victim's browser context goes away under it, as a crashed one does.
    let (browser, mut handler) = chromiumoxide::Browser::connect(&ws).await.expect("connect");
    let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
    let targets = browser
        .execute(GetTargetsParams::default())
        .await
        .expect("targets");
    let victim = targets
        .result
        .target_infos
        .iter()
        .find(|t| t.url.contains("lookup.html?victim"))
        .and_then(|t| t.browser_context_id.clone())
        .expect("the victim's page, in a context of its own");
    browser
        .dispose_browser_context(victim)
        .await
        .expect("dispose");
    lost.store(true, Ordering::SeqCst);

    let (ran, results) = ended(run, &batch).await;
    assert_eq!(ran.code(), Some(1), "{}\n{results:#?}", ran.stderr());
    let victim = line(&results, "victim", 1);
    assert_eq!(victim["passed"], false);
    assert_eq!(victim["status"], "failed", "{victim:#}");
    assert!(
        victim["reason"]
            .as_str()
            .unwrap()
            .starts_with("the page was lost"),
        "{victim:#}"
    );
    let bystander = line(&results, "bystander", 1);
    assert_eq!(bystander["passed"], true, "{bystander:#}");
    assert_eq!(bystander["status"], "done");
    assert!(
        chromium.try_wait().expect("wait").is_none(),
        "seamark closed a browser it did not start"
    );
    handler.abort();
    chromium.kill().await.expect("kill");
}

/// The main process of the Chromium a seamark run launched with its
/// profile under `tmp` (its children carry `--type=`).
fn launched_chromium(tmp: &Path) -> Option<u32> {
    let marker = format!("--user-data-dir={}/seamark-profile-", tmp.display());
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let main = args.iter().any(|a| a.starts_with(&marker))
            && !args.iter().any(|a| a.starts_with("--type="));
        main.then_some(pid)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_killed_under_a_run_fails_it_and_the_next_run_gets_a_new_one() {
    let sites = Server::start(None).await;
    let lost = Arc::new(AtomicBool::new(false));
    let model = ModelServer::answering(waiting_for(&lost, false)).await;
    let batch = Batch::new(&model).tasks(&[
        json!({"id": "victim", "task": "Wait for the weather", "url": sites.url("lookup.html")}),
        task(
            "after",
            "Look up the weather in Rome",
            &sites,
            Some(json!({"url_contains": "city=Rome"})),
        ),
    ]);
    let mut cmd = batch.command(&["tasks.jsonl", "--concurrency", "1", "--out", "b"]);
    let run = tokio::spawn(async move { cmd.output().await });
    asked(&model, "Wait").await;
    let pid = launched_chromium(&batch.path("tmp")).expect("the batch's Chromium");
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    lost.store(true, Ordering::SeqCst);
    let (ran, results) = ended(run, &batch).await;
    assert_eq!(ran.code(), Some(1), "{}\n{results:#?}", ran.stderr());
    let victim = line(&results, "victim", 1);
    assert_eq!(victim["status"], "failed", "{victim:#}");
    assert!(
        victim["reason"]
            .as_str()
            .unwrap()
            .starts_with("the browser was lost"),
        "{victim:#}"
    );
    let after = line(&results, "after", 1);
    assert_eq!(after["passed"], true, "{after:#}\n{}", ran.stderr());
    // The second browser was launched, and closed at the end like the first.
    assert_eq!(launched_chromium(&batch.path("tmp")), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeat_two_gives_k_of_2_and_a_program_feeds_tasks_from_its_queue() {
    use seamark::agent::AgentOptions;
    use seamark::batch::{BatchOptions, TaskSpec};
    use std::sync::atomic::AtomicUsize;

    let sites = Server::start(None).await;
    // "flip" answers right the first time and wrong the second.
    let answers = Arc::new(AtomicUsize::new(0));
    let model = ModelServer::answering(move |r| {
        let Reply::Text(text) = weather(r) else {
            unreachable!()
        };
        if r.task().contains("flip")
            && text.starts_with("ANSWER")
            && answers.fetch_add(1, Ordering::SeqCst) % 2 == 1
        {
            return Reply::Text("ANSWER:Paris is 99°C\nCOMPLETE:answered".into());
        }
        Reply::Text(text)
    })
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let base = model.base.clone();
    let brains: seamark::batch::BrainMaker =
        Arc::new(move |_: &TaskSpec| crate::model_server::scripted_brain(&base));
    let options = BatchOptions {
        concurrency: 2,
        repeat: 2,
        agent: AgentOptions {
            max_steps: 4,
            ..AgentOptions::default()
        },
        ..BatchOptions::new(dir.path().join("b"))
    };
    // The program's own queue: tasks come while the batch runs.
    let (tx, rx) = tokio::sync::mpsc::channel::<TaskSpec>(1);
    let tasks = futures::stream::unfold(rx, |mut rx| async { rx.recv().await.map(|t| (t, rx)) });
    let batch = tokio::spawn(seamark::batch::Batch::new(options, brains).run_stream(tasks));
    for (id, text) in [
        ("steady", "Look up the weather in Paris and answer"),
        ("flip", "Look up the weather in Paris and answer (flip)"),
    ] {
        let spec: TaskSpec = serde_json::from_value(task(
            id,
            text,
            &sites,
            Some(json!({"answer_contains": "21°C"})),
        ))
        .expect("spec");
        tx.send(spec).await.expect("queue");
    }
    // A task whose id would name a directory outside the batch, and one that
    // came before, are left out.
    for id in ["../outside", "steady"] {
        let mut spec: TaskSpec =
            serde_json::from_value(task("x", "Look up the weather in Paris", &sites, None))
                .expect("spec");
        spec.id = id.into();
        tx.send(spec).await.expect("queue");
    }
    drop(tx);
    let outcome = batch.await.expect("join").expect("batch");

    let s = &outcome.summary;
    assert_eq!((s.runs, s.passed, s.repeat), (4, 3, 2), "{s:#?}");
    assert_eq!(s.tasks_passing_all, 1);
    let steady = &s.per_task[0];
    assert_eq!(
        (steady.id.as_str(), steady.passed, steady.all_passed),
        ("steady", 2, true)
    );
    let flip = &s.per_task[1];
    assert_eq!(
        (flip.id.as_str(), flip.passed, flip.all_passed),
        ("flip", 1, false)
    );
    let md = s.markdown("t");
    assert!(
        md.lines()
            .any(|l| l.starts_with("| flip | ") && l.contains(" | 1/2 | no |")),
        "{md}"
    );
    assert!(md.contains("pass^2: 1 of 2 tasks"), "{md}");
    // results.jsonl holds the same four runs, each attempt in its own directory.
    let (records, problems) =
        seamark::batch::results::read(&dir.path().join("b")).expect("results");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(records, outcome.records);
    let mut names: Vec<String> = records.iter().map(|r| r.name()).collect();
    names.sort();
    assert_eq!(names, ["flip#1", "flip#2", "steady#1", "steady#2"]);
    for r in &records {
        assert!(dir
            .path()
            .join("b")
            .join(&r.run_dir)
            .join("journal.jsonl")
            .is_file());
    }
    assert!(!dir.path().join("outside").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shards_merged_equal_the_whole() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(weather).await;
    let s = &sites;
    let batch = Batch::new(&model).tasks(&[
        task(
            "a",
            "Look up the weather in Paris",
            s,
            Some(json!({"url_contains": "Paris"})),
        ),
        task("b", "Stop before the weather in Rome", s, None),
        task(
            "c",
            "Look up the weather in Oslo and answer",
            s,
            Some(json!({"answer_contains": "3°C"})),
        ),
        task(
            "d",
            "Look up the weather in Rome and answer",
            s,
            Some(json!({"answer_contains": "3°C"})),
        ),
    ]);
    let (whole, one, two) = tokio::join!(
        batch.run(&["tasks.jsonl", "--out", "whole"]),
        batch.run(&["tasks.jsonl", "--shard", "1/2", "--out", "s1"]),
        batch.run(&["tasks.jsonl", "--shard", "2/2", "--out", "s2"]),
    );
    // The first shard's runs all pass; the second's do not.
    for (ran, code) in [(&whole, 1), (&one, 0), (&two, 1)] {
        assert_eq!(ran.code(), Some(code), "{}", ran.stderr());
    }
    let ids = |dir: &str| -> Vec<String> {
        batch
            .results(dir)
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut s1 = ids("s1");
    s1.sort();
    assert_eq!(s1, ["a", "c"]);
    let mut s2 = ids("s2");
    s2.sort();
    assert_eq!(s2, ["b", "d"]);
    let merged = batch.run(&["--merge", "s1", "s2", "--out", "merged"]).await;
    assert_eq!(merged.code(), Some(1), "{}", merged.stderr());
    let (w, m) = (batch.summary("whole"), batch.summary("merged"));
    for key in [
        "runs",
        "passed",
        "failed",
        "tasks",
        "tasks_passing_all",
        "steps",
        "tokens",
        "repeat",
    ] {
        assert_eq!(w[key], m[key], "{key}");
    }
    let per_task = |v: &Value| -> Vec<(Value, Value, Value)> {
        v["per_task"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].clone(),
                    t["passed"].clone(),
                    t["all_passed"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(per_task(&w), per_task(&m));
    assert_eq!(per_task(&m)[0].0, "a", "the suite's order");
    let failures = |v: &Value| -> Vec<String> {
        v["failures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["reason"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(failures(&w), failures(&m));
    // The merged results point at each shard's run directories.
    for r in batch.results("merged") {
        let dir = PathBuf::from(r["run_dir"].as_str().unwrap());
        assert!(
            dir.is_absolute() && dir.join("journal.jsonl").is_file(),
            "{r:#}"
        );
    }
    assert!(
        merged
            .stdout()
            .lines()
            .any(|l| l.starts_with("| a | ") && l.contains(" | 1/1 | yes |")),
        "{}",
        merged.stdout()
    );
}

/// The id of the first listed element of this role (a field without a name).
fn first_of_role(r: &Received, role: &str) -> u32 {
    let needle = format!("] {role}");
    r.text()
        .lines()
        .filter(|l| l.starts_with('[') && l.contains(&needle))
        .find_map(|l| l[1..].split(']').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {role} in the list:\n{}", r.text()))
}

/// A scripted model for three MiniWoB++ tasks, reading the instruction (the
/// task) and the list: the button and the text field right; the link wrong
/// on purpose (another link than the one named), which the page scores -1.
fn miniwob(r: &Received) -> Reply {
    let task = r.task();
    let quoted = task.split('"').nth(1).unwrap_or_default().to_string();
    let text = if r.step() > 1 {
        // A batch the page cut short (its countdown ticks) is finished.
        if task.starts_with("Enter") && r.text().contains("not run: CLICK") {
            format!("CLICK:{}", r.id_of("Submit"))
        } else {
            "COMPLETE:the episode is over".to_string()
        }
    } else if task.starts_with("Click on the link") {
        let other = r
            .text()
            .lines()
            .filter(|l| l.starts_with('[') && l.contains("] clickable \""))
            .find(|l| l.split('"').nth(1) != Some(quoted.as_str()))
            .and_then(|l| l[1..].split(']').next()?.parse::<u32>().ok())
            .expect("another link");
        format!("CLICK:{other}")
    } else if task.starts_with("Click on the \"") {
        format!("CLICK:{}", r.id_of(&quoted))
    } else if task.starts_with("Enter") {
        format!(
            "TYPE:{}:{quoted}\nCLICK:{}",
            first_of_role(r, "textbox"),
            r.id_of("Submit")
        )
    } else {
        format!("STOP:no script for {task:?}")
    };
    Reply::Text(text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn miniwob_tasks_are_scored_by_their_own_reward() {
    let model = ModelServer::answering(miniwob).await;
    let batch = Batch::new(&model);
    let checkout = crate::server::miniwob_dir().join("..");
    let ran = batch
        .run(&[
            "--miniwob",
            checkout.to_str().unwrap(),
            "--tasks",
            "click-button,click-link,enter-text",
            "--concurrency",
            "3",
            "--out",
            "wob",
        ])
        .await;
    let results = batch.results("wob");
    assert_eq!(ran.code(), Some(1), "{}\n{results:#?}", ran.stderr());
    for (id, passes) in [
        ("click-button.0", true),
        ("click-link.0", false),
        ("enter-text.0", true),
    ] {
        let r = line(&results, id, 1);
        assert_eq!(r["passed"], passes, "{id}: {r:#}");
        assert_eq!(r["verdict"]["check"], "js", "{id}");
    }
    // The instruction was the task, read from the episode the seed starts.
    let link = line(&results, "click-link.0", 1);
    assert!(
        link["task"]
            .as_str()
            .unwrap()
            .starts_with("Click on the link \""),
        "{link:#}"
    );
    // The same seed gives the same episode: a second suite has the same tasks.
    let again = batch
        .run(&[
            "--miniwob",
            checkout.to_str().unwrap(),
            "--tasks",
            "click-link",
            "--out",
            "again",
        ])
        .await;
    assert_eq!(again.code(), Some(1), "{}", again.stderr());
    assert_eq!(
        line(&batch.results("again"), "click-link.0", 1)["task"],
        link["task"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_writes_what_finished_exits_143_and_resume_runs_only_the_rest() {
    let sites = Server::start(None).await;
    // The "slow" tasks take their time until released.
    let released = Arc::new(AtomicBool::new(false));
    let release = released.clone();
    let model = ModelServer::answering(move |r| {
        let reply = weather(r);
        if r.task().contains("slowly") {
            Reply::When(once(&release), Box::new(reply))
        } else {
            reply
        }
    })
    .await;
    let s = &sites;
    let paris = || Some(json!({"url_contains": "Paris"}));
    let batch = Batch::new(&model).tasks(&[
        task("quick", "Look up the weather in Paris", s, paris()),
        task("slow-1", "Look up the weather in Paris slowly", s, paris()),
        task("slow-2", "Look up the weather in Paris slowly", s, paris()),
        task("last", "Look up the weather in Paris", s, paris()),
    ]);
    // Two at once: quick and slow-1, then slow-2 in quick's place; last waits.
    let child = batch
        .command(&["tasks.jsonl", "--concurrency", "2", "--out", "b"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start");
    for _ in 0..600 {
        let slow = model
            .received()
            .iter()
            .filter(|r| r.task().contains("slowly"))
            .count();
        if slow >= 2 && batch.results("b").len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // As Kubernetes stops a Job at its deadline.
    crate::processes::kill(&[child.id().expect("pid")], "TERM");
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("batch did not end after SIGTERM")
        .expect("wait");
    let ran = Ran::of(out);
    assert_eq!(ran.code(), Some(143), "{}", ran.stderr());
    // Only what finished is recorded; the summary says what did not.
    let results = batch.results("b");
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["id"], "quick");
    let summary = batch.summary("b");
    assert_eq!(summary["runs"], 1);
    assert_eq!(summary["interrupted"], 2, "{summary:#}");
    assert_eq!(summary["not_started"], 1, "{summary:#}");
    assert!(
        ran.stdout()
            .contains("2 runs cut short and 1 never started"),
        "{}",
        ran.stdout()
    );
    // The interrupted runs ended as such, with their journal's end.
    let end = crate::support::records(&batch.path("b/runs/slow-1/1"), "end");
    assert_eq!(end[0]["result"]["status"], "interrupted");
    let reason = end[0]["result"]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("interrupted (SIGTERM)"), "{reason}");

    // Resumed, only the three that did not finish run.
    released.store(true, Ordering::SeqCst);
    let asked_quick = |m: &ModelServer| {
        m.received()
            .iter()
            .filter(|r| r.task().ends_with("Paris") && r.url().contains("lookup"))
            .count()
    };
    let quick_before = asked_quick(&model);
    let resumed = batch
        .run(&["tasks.jsonl", "--concurrency", "2", "--resume", "b"])
        .await;
    assert_eq!(resumed.code(), Some(0), "{}", resumed.stderr());
    assert!(
        resumed
            .stderr()
            .contains("resuming: 1 run finished before is kept"),
        "{}",
        resumed.stderr()
    );
    assert_eq!(
        asked_quick(&model),
        quick_before + 1,
        "only last runs again of the two quick ones"
    );
    let results = batch.results("b");
    let mut names: Vec<String> = results
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["last", "quick", "slow-1", "slow-2"]);
    let summary = batch.summary("b");
    assert_eq!(
        (summary["runs"].as_u64(), summary["passed"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(summary["interrupted"], 0);
    // The interrupted run's directory was replaced by the finished run's.
    let end = crate::support::records(&batch.path("b/runs/slow-1/1"), "end");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["result"]["status"], "done");
}

#[tokio::test]
async fn bad_input_is_refused_with_a_clear_message_before_anything_runs() {
    let model = ModelServer::answering(weather).await;
    let batch = Batch::new(&model);
    std::fs::write(
        batch.path("bad.jsonl"),
        "{\"id\": \"ok\", \"task\": \"t\", \"url\": \"http://127.0.0.1:9/\"}\n\
         this is not json\n\
         {\"id\": \"no-url\", \"task\": \"t\"}\n\
         {\"id\": \"odd\", \"task\": \"t\", \"url\": \"http://127.0.0.1:9/\", \"check\": {\"title_is\": \"x\"}}\n",
    )
    .expect("write");
    let ran = batch.run(&["bad.jsonl"]).await;
    assert_eq!(ran.code(), Some(2), "{}", ran.stderr());
    let err = ran.stderr();
    assert!(
        err.contains("bad.jsonl: 3 bad lines, nothing was run"),
        "{err}"
    );
    assert!(err.contains("line 2: not a JSON object"), "{err}");
    assert!(err.contains("line 3: missing field `url`"), "{err}");
    assert!(
        err.contains("line 4: unknown variant `title_is`, expected one of `url_contains`"),
        "{err}"
    );
    assert!(
        !batch.path("batches").exists(),
        "nothing is written for a refused file"
    );
    assert!(model.received().is_empty());

    // A DevTools endpoint nobody answers at: one line, exit 2.
    std::fs::write(
        batch.path("one.jsonl"),
        "{\"id\": \"a\", \"task\": \"t\", \"url\": \"http://127.0.0.1:9/\"}\n",
    )
    .expect("write");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ws = format!("ws://127.0.0.1:{port}/devtools/browser/x");
    let ran = batch.run(&["one.jsonl", "--cdp", &ws]).await;
    assert_eq!(ran.code(), Some(2), "{}", ran.stderr());
    assert_eq!(ran.stderr().lines().count(), 1, "{}", ran.stderr());
    assert!(
        ran.stderr()
            .starts_with(&format!("seamark: no browser answers at {ws}")),
        "{}",
        ran.stderr()
    );
    // A directory that holds a batch already, without --resume; and a resume of none.
    std::fs::create_dir_all(batch.path("done")).unwrap();
    std::fs::write(batch.path("done/results.jsonl"), "{}\n").unwrap();
    let ran = batch.run(&["one.jsonl", "--out", "done"]).await;
    assert_eq!(ran.code(), Some(2), "{}", ran.stderr());
    let ran = batch.run(&["one.jsonl", "--resume", "nothing-here"]).await;
    assert_eq!(ran.code(), Some(2));
    ran.stderr_has("nothing-here is not a batch directory");
    // A MiniWoB++ task that does not exist is named, with those that do.
    let checkout = crate::server::miniwob_dir();
    let ran = batch
        .run(&[
            "--miniwob",
            checkout.to_str().unwrap(),
            "--tasks",
            "click-nothing",
        ])
        .await;
    assert_eq!(ran.code(), Some(2), "{}", ran.stderr());
    ran.stderr_has("no MiniWoB++ task named \"click-nothing\"");
    ran.stderr_has("click-button");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_limits_hold_in_every_run_of_a_batch_each_with_its_own_guard() {
    let other = Server::start(None).await;
    let sites = Server::start(Some(other.base.clone())).await;
    // Each run follows the lure, then ends.
    let model = ModelServer::answering(|r: &Received| {
        Reply::Text(match r.step() {
            1 => format!("CLICK:{}", r.id_of(&r.first_named("link", "IGNORE"))),
            _ => "COMPLETE:looked at the deals".to_string(),
        })
    })
    .await;
    let tasks: Vec<Value> = ["one", "two"]
        .iter()
        .map(|id| json!({"id": id, "task": "Look at today's deals", "url": sites.url("lure.html")}))
        .collect();
    let batch = Batch::new(&model).tasks(&tasks);
    let ran = batch
        .run(&[
            "tasks.jsonl",
            "--concurrency",
            "2",
            "--out",
            "b",
            "--allow-domain",
            "127.0.0.1",
        ])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    // Not one request reached the other host, from either run.
    let reached = other.log.lock().map(|l| l.clone()).unwrap_or_default();
    assert!(
        reached.is_empty(),
        "the blocked host was reached: {reached:?}"
    );
    // Each run's own journal has the refusals of its own page.
    for id in ["one", "two"] {
        let steps = crate::support::records(&batch.path(&format!("b/runs/{id}/1")), "step");
        let all = serde_json::to_string(&steps).unwrap();
        assert!(
            all.contains("/pixel.png"),
            "{id}: the image's refusal is not in its run"
        );
        assert!(
            all.contains("/prize"),
            "{id}: the lure's refusal is not in its run"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_spread_over_the_remote_browsers_given() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(weather).await;
    let (mut first, ws1, _p1) = crate::support::running_chromium().await;
    let (mut second, ws2, _p2) = crate::support::running_chromium().await;
    let s = &sites;
    let paris = || Some(json!({"url_contains": "Paris"}));
    let batch = Batch::new(&model).tasks(&[
        task("a", "Look up the weather in Paris", s, paris()),
        task("b", "Look up the weather in Paris", s, paris()),
    ]);
    let ran = batch
        .run(&[
            "tasks.jsonl",
            "--concurrency",
            "2",
            "--out",
            "b",
            "--cdp",
            &ws1,
            "--cdp",
            &ws2,
        ])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    let mut used: Vec<String> = batch
        .results("b")
        .iter()
        .map(|r| r["browser"].as_str().unwrap_or_default().to_string())
        .collect();
    used.sort();
    let mut given = vec![ws1.clone(), ws2.clone()];
    given.sort();
    assert_eq!(used, given, "one run in each browser");
    for browser in [&mut first, &mut second] {
        assert!(
            browser.try_wait().unwrap().is_none(),
            "seamark closed a browser it did not start"
        );
        browser.kill().await.unwrap();
    }
}

#[tokio::test]
async fn webvoyager_and_online_mind2web_files_run_as_published_with_their_ids() {
    let model = ModelServer::answering(|_: &Received| Reply::Text("COMPLETE:looked".into())).await;
    let sites = Server::start(None).await;
    let work = Workdir::new(&model);
    // As the suites publish them: WebVoyager's JSON lines, Online-Mind2Web's array.
    let webvoyager = [
        json!({"web_name": "Forms", "id": "Forms--0", "ques": "Look at the form", "web": sites.url("form.html")}),
        json!({"web_name": "Forms", "id": "Forms--1", "ques": "Look at the boxes", "web": sites.url("three-boxes.html")}),
    ]
    .map(|t| t.to_string())
    .join("\n");
    std::fs::write(work.path("WebVoyager_data.jsonl"), webvoyager).expect("webvoyager");
    let mind2web = json!([
        {"task_id": "fb7b4f784cfde003e2548fdf4e8d6b4f", "confirmed_task": "Look at the form",
         "website": sites.url("form.html"), "reference_length": 3, "level": "easy"}
    ]);
    std::fs::write(work.path("Online_Mind2Web.json"), mind2web.to_string()).expect("mind2web");
    for (suite, file, ids) in [
        (
            "webvoyager",
            "WebVoyager_data.jsonl",
            vec!["Forms--0", "Forms--1"],
        ),
        (
            "online-mind2web",
            "Online_Mind2Web.json",
            vec!["fb7b4f784cfde003e2548fdf4e8d6b4f"],
        ),
    ] {
        let out = format!("b-{suite}");
        let ran = work
            .run(&["batch", "--suite", suite, file, "--out", &out])
            .await;
        assert_eq!(ran.code(), Some(0), "{suite}: {}", ran.stderr());
        let results =
            std::fs::read_to_string(work.path(&format!("{out}/results.jsonl"))).expect("results");
        let mut got: Vec<String> = results
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|r| r["id"].as_str().map(str::to_string))
            .collect();
        got.sort();
        assert_eq!(got, ids, "{suite}: the suite's ids are kept");
    }
    // A file that is not the suite's format is refused before anything runs.
    std::fs::write(work.path("wrong.json"), "{\"id\": 1}").expect("wrong");
    let refused = work
        .run(&[
            "batch",
            "--suite",
            "online-mind2web",
            "wrong.json",
            "--out",
            "b-wrong",
        ])
        .await;
    assert_eq!(refused.code(), Some(2), "{}", refused.stderr());
    assert!(
        refused
            .stderr()
            .contains("not an Online-Mind2Web task array"),
        "{}",
        refused.stderr()
    );
}

#[tokio::test]
async fn an_online_mind2web_export_is_the_folder_webjudge_reads() {
    // The agent ticks the first box, then answers.
    let model = ModelServer::answering(|r: &Received| {
        Reply::Text(match r.line_of("First box").contains("unchecked") {
            true => format!("PLAN: tick the first box\nCLICK:{}", r.id_of("First box")),
            false => "ANSWER:the first box is ticked\nCOMPLETE:ticked it".into(),
        })
    })
    .await;
    let sites = Server::start(None).await;
    let work = Workdir::new(&model);
    let id = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
    let tasks = json!([{"task_id": id, "confirmed_task": "Tick the first box",
        "website": sites.url("three-boxes.html"), "reference_length": 2, "level": "easy"}]);
    std::fs::write(work.path("tasks.json"), tasks.to_string()).expect("tasks");
    let ran = work
        .run(&[
            "batch",
            "--suite",
            "online-mind2web",
            "tasks.json",
            "--out",
            "b",
            "--export",
            "online-mind2web",
            "exp",
        ])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    let folder = work.path(&format!("exp/{id}"));
    let result: Value = serde_json::from_str(
        &std::fs::read_to_string(folder.join("result.json")).expect("result.json"),
    )
    .expect("JSON");
    assert_eq!(result["task_id"], id);
    assert_eq!(result["task"], "Tick the first box");
    assert_eq!(result["final_result_response"], "the first box is ticked");
    let actions = result["action_history"].as_array().expect("action_history");
    assert_eq!(
        actions.len(),
        1,
        "the answer and COMPLETE are no actions: {actions:?}"
    );
    let action = actions[0].as_str().unwrap_or_default();
    assert!(
        action.starts_with("CLICK:") && action.contains("First box"),
        "{action}"
    );
    let thoughts = result["thoughts"].as_array().expect("thoughts");
    assert_eq!(thoughts.len(), 2, "one per step: {thoughts:?}");
    assert_eq!(thoughts[0], "tick the first box");
    // One screenshot per step, ordered by the number WebJudge sorts on.
    let mut shots: Vec<String> = std::fs::read_dir(folder.join("trajectory"))
        .expect("trajectory/")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    shots.sort();
    assert_eq!(shots, ["0_screenshot.png", "1_screenshot.png"]);
    let png = std::fs::read(folder.join("trajectory/0_screenshot.png")).expect("png");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
}
