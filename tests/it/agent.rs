//! The agent loop end to end: a real browser on fixture sites, and a scripted
//! model that speaks the OpenAI and Anthropic wire formats and reads the ids it
//! clicks from the element list it was sent, as a model would.

use std::path::Path;

use seamark::agent::{Agent, AgentOptions};
use seamark::brain::{Prices, Replay};
use serde_json::Value;

use crate::model_server::{reply, say, status, Received, Reply, Turn, INPUT_TOKENS, OUTPUT_TOKENS};
use crate::support::{all_bytes, base64_decode, records, stop_script, Task, KEY};

fn job_search_script() -> Vec<Turn> {
    vec![
        reply(|r| {
            format!(
                "Thought: the search form is here.\nPLAN: 1) search 2) filter by salary 3) read the first job\n\
                 TYPE:{}:Data Scientist\nTYPE:{}:India\nCLICK:{} \"Search jobs\"",
                r.id_of("Keywords"),
                r.id_of("Location"),
                r.id_of("Search jobs")
            )
        }),
        reply(|r| {
            // The salary filter is far below the results.
            assert!(
                r.line_of("Salary").contains("offscreen below"),
                "{}",
                r.line_of("Salary")
            );
            "SCROLL:down".into()
        }),
        reply(|r| {
            assert!(!r.line_of("Salary").contains("offscreen"), "{}", r.text());
            format!(
                "SELECT:{}:50-100 LPA\nCLICK:{}",
                r.id_of("Salary"),
                r.id_of("Apply filters")
            )
        }),
        reply(|r| {
            let job = r.first_named("link", "Data Scientist ·");
            format!(
                "ANSWER:{job}\nCOMPLETE:found the Data Scientist jobs in India paying 50-100 LPA"
            )
        }),
    ]
}

#[tokio::test]
async fn a_job_search_runs_to_an_answer_and_is_recorded_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let prices_file = dir.path().join("prices.json");
    std::fs::write(
        &prices_file,
        r#"{"models": {"openai/test-model": {"input": 1.0, "output": 2.0}}}"#,
    )
    .unwrap();
    let done = Task::new(
        "Search jobs for Data Scientist in India with a salary between 50 and 100 LPA and give the first one",
        "jobs.html",
    )
    .prices(Prices::with_file(&prices_file).unwrap())
    .run(job_search_script(), stop_script)
    .await;
    let r = &done.result;
    assert!(r.success, "{r:?}");
    assert_eq!(
        r.answer.as_deref(),
        Some("Data Scientist · Acme Analytics · Bengaluru, India · 72 LPA")
    );
    assert_eq!(r.steps, 4);
    // Tokens are summed over the steps, and priced.
    assert_eq!(r.tokens.input, 4 * INPUT_TOKENS);
    assert_eq!(r.tokens.output, 4 * OUTPUT_TOKENS);
    let cost = r.cost_usd.expect("priced");
    assert!(
        (cost - 4.0 * (1000.0 + 2.0 * 20.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    // Every request carried the marked screenshot and the element list, and the key.
    let received = done.model.received();
    assert_eq!(received.len(), 4);
    for (i, req) in received.iter().enumerate() {
        assert_eq!(req.path, "/v1/chat/completions");
        assert_eq!(req.body["model"], "test-model");
        assert_eq!(
            req.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        let images = req.images();
        assert!(
            !images.is_empty() && images.len() <= 2,
            "step {i}: {} images",
            images.len()
        );
        let png = base64_decode(images.last().unwrap());
        let img = image::load_from_memory(&png).expect("a PNG");
        assert_eq!((img.width(), img.height()), (1280, 800));
        assert!(req.text().contains("<page_data>"), "{}", req.text());
        assert!(req.text().contains("] textbox \"") || req.text().contains("] \""));
        assert!(req.body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("TYPE:id:text"));
    }
    // The plan from step 1 stays in the context.
    assert!(received[3].text().contains("1) search 2) filter by salary"));
    // The history of step 4 tells what each earlier command did.
    assert!(
        received[3].text().contains("navigated to"),
        "{}",
        received[3].text()
    );
    // The run directory holds every step: a record each, and its marked image.
    let run_dir = &r.run_dir;
    let steps = records(run_dir, "step");
    assert_eq!(steps.len(), 4);
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["step"], i + 1);
        let shot = s["screenshot"].as_str().unwrap();
        assert!(run_dir.join(shot).is_file(), "{shot}");
        let list = s["elements"].as_str().unwrap();
        assert!(list.lines().any(|l| l.starts_with("[1] ")), "{list}");
        assert!(s["answer"].as_str().is_some());
    }
    assert_eq!(records(run_dir, "start").len(), 1);
    assert_eq!(records(run_dir, "end")[0]["result"]["success"], true);
    // The key is nowhere in the run directory.
    for (name, bytes) in all_bytes(run_dir) {
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "the API key leaked into {name}"
        );
    }
    // A replay of the recording against the live site does the same.
    let replay = Replay::open(run_dir).expect("open the recording");
    assert_eq!(replay.url, done.sites.url("jobs.html"));
    let replay_dir = dir.path().join("replay");
    let again = Agent::builder()
        .task(replay.task.clone())
        .url(replay.url.clone())
        .brain(Box::new(replay))
        .options(AgentOptions {
            out: Some(replay_dir.clone()),
            ..AgentOptions::default()
        })
        .build()
        .unwrap()
        .run()
        .await
        .unwrap();
    assert_eq!((again.success, &again.answer), (true, &r.answer));
    assert!(again.divergences.is_empty(), "{:?}", again.divergences);
    let commands = |d: &Path| -> Vec<Value> {
        records(d, "step")
            .into_iter()
            .map(|s| s["commands"].clone())
            .collect()
    };
    assert_eq!(commands(&replay_dir), commands(run_dir));
}

#[tokio::test]
async fn the_flight_search_batch_is_cut_when_the_dropdown_opens() {
    let script = vec![
        reply(|r| {
            format!(
                "TYPE:{}:Pa\nTYPE:{}:Lisbon\nCLICK:{}",
                r.id_of("From"),
                r.id_of("To"),
                r.id_of("Search flights")
            )
        }),
        reply(|r| {
            let t = r.text();
            assert!(t.contains("not run: TYPE:"), "{t}");
            assert!(t.contains("option \"Paris\""), "{t}");
            format!("CLICK:{}", r.id_of("Paris"))
        }),
        reply(|r| {
            format!(
                "TYPE:{}:Lisbon\nCLICK:{}",
                r.id_of("To"),
                r.id_of("Search flights")
            )
        }),
        reply(|r| {
            assert!(
                r.text().contains("/results.html?from=Paris&to=Lisbon"),
                "{}",
                r.text()
            );
            "COMPLETE:searched flights from Paris to Lisbon".into()
        }),
    ];
    let done = Task::new("Search flights from Paris to Lisbon", "flights.html")
        .anthropic()
        .run(script, stop_script)
        .await;
    assert!(done.result.success, "{:?}", done.result);
    assert_eq!(done.result.steps, 4);
    let received = done.model.received();
    assert!(received.iter().all(|r| r.path == "/v1/messages"));
    assert_eq!(received[0].header("x-api-key"), Some(KEY));
    assert_eq!(received[0].header("anthropic-version"), Some("2023-06-01"));
    assert!(received[0].body["system"]
        .as_str()
        .unwrap_or_default()
        .contains("COMPLETE:summary"));
    assert_eq!(received[0].images().len(), 1);
    let step1 = &records(&done.result.run_dir, "step")[0];
    assert_eq!(step1["report"]["dropped"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn a_captcha_ends_in_stop_with_the_reason() {
    let script = vec![reply(|r| {
        assert!(r.text().contains("I'm not a robot"), "{}", r.text());
        "STOP:a CAPTCHA asks to prove I am human".into()
    })];
    let done = Task::new("Read the article", "captcha.html")
        .run(script, stop_script)
        .await;
    let r = &done.result;
    assert!(!r.success);
    assert_eq!(r.reason, "stopped: a CAPTCHA asks to prove I am human");
    assert_eq!(r.steps, 1);
}

#[tokio::test]
async fn a_429_is_retried_and_then_the_run_goes_on() {
    let script = vec![status(429, Some(0)), say("COMPLETE:nothing to do")];
    let done = Task::new("Nothing", "form.html")
        .run(script, stop_script)
        .await;
    assert!(done.result.success, "{:?}", done.result);
    assert_eq!(done.model.received().len(), 2);
    assert_eq!(
        done.result.tokens.input, INPUT_TOKENS,
        "only the answer counts"
    );
}

#[tokio::test]
async fn a_model_that_fails_forever_ends_the_run_cleanly_within_the_retries() {
    fn always_500() -> Turn {
        status(500, None)
    }
    let done = Task::new("Anything", "form.html")
        .run(Vec::new(), always_500)
        .await;
    let r = &done.result;
    assert!(!r.success);
    assert!(
        r.reason.contains("kept failing (3 attempts)"),
        "{}",
        r.reason
    );
    assert!(r.reason.contains("HTTP 500: scripted 500"), "{}", r.reason);
    assert!(!r.reason.contains(KEY));
    assert_eq!(done.model.received().len(), 3);
    let steps = records(&r.run_dir, "step");
    assert!(steps[0]["error"]
        .as_str()
        .unwrap_or_default()
        .contains("HTTP 500"));
}

#[tokio::test]
async fn garbage_answers_get_feedback_and_then_end_the_run() {
    fn prose() -> Turn {
        say("I think I should look around the page a bit more first.")
    }
    let done = Task::new("Anything", "form.html")
        .run(Vec::new(), prose)
        .await;
    let r = &done.result;
    assert!(!r.success);
    assert!(
        r.reason.contains("could not be read 3 times in a row"),
        "{}",
        r.reason
    );
    let received = done.model.received();
    assert_eq!(received.len(), 3);
    assert!(received[1]
        .text()
        .contains("Your answer could not be read: no command found"));
}

#[tokio::test]
async fn a_body_that_is_not_the_providers_format_keeps_the_raw_body_in_the_error() {
    let script: Vec<Turn> = vec![Box::new(|_: &Received| {
        Reply::Raw("<html>proxy error</html>".into())
    })];
    let done = Task::new("Anything", "form.html")
        .run(script, stop_script)
        .await;
    assert!(!done.result.success);
    assert!(
        done.result.reason.contains("<html>proxy error</html>"),
        "{}",
        done.result.reason
    );
}

#[tokio::test]
async fn ids_that_do_not_exist_are_told_to_the_model_which_corrects_itself() {
    let script = vec![
        say("CLICK:999"),
        reply(|r| {
            assert!(r.text().contains("there is no element 999"), "{}", r.text());
            format!("CLICK:{}", r.id_of("Send me news"))
        }),
        say("COMPLETE:unsubscribed from news"),
    ];
    let done = Task::new("Turn off the newsletter", "form.html")
        .run(script, stop_script)
        .await;
    assert!(done.result.success, "{:?}", done.result);
    assert_eq!(done.result.steps, 3);
}

#[tokio::test]
async fn the_same_commands_on_the_same_page_are_a_loop_that_is_warned_then_stopped() {
    fn scroll_up() -> Turn {
        say("SCROLL:up")
    }
    let done = Task::new("Anything", "form.html")
        .max_steps(8)
        .run(Vec::new(), scroll_up)
        .await;
    let r = &done.result;
    assert!(!r.success);
    assert!(
        r.reason.starts_with("stuck: the same commands (SCROLL:up)"),
        "{}",
        r.reason
    );
    let received = done.model.received();
    assert_eq!(received.len(), 3);
    assert!(received[2]
        .text()
        .contains("Warning: you sent these same commands"));
}

#[tokio::test]
async fn a_refused_key_and_a_missing_model_end_the_run_with_the_providers_message() {
    let done = Task::new("Anything", "form.html")
        .run(vec![status(401, None)], stop_script)
        .await;
    let r = &done.result;
    assert!(!r.success);
    assert_eq!(
        r.reason,
        "the model failed: the model provider refused the API key (HTTP 401): scripted 401"
    );
    assert_eq!(done.model.received().len(), 1, "a 401 is not retried");
    let done = Task::new("Anything", "form.html")
        .anthropic()
        .run(vec![status(404, None)], stop_script)
        .await;
    assert!(
        done.result.reason.contains("was not found (HTTP 404 at "),
        "{}",
        done.result.reason
    );
    assert!(
        done.result.reason.ends_with("/v1/messages): scripted 404"),
        "{}",
        done.result.reason
    );
}

#[tokio::test]
async fn the_cost_budget_ends_the_run_once_spent() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("p.json");
    std::fs::write(
        &prices,
        r#"{"models": {"openai/test-model": {"input": 1000, "output": 0}}}"#,
    )
    .unwrap();
    fn scroll() -> Turn {
        say("SCROLL:down")
    }
    // Each answer costs 1000 tokens × $1000 per million = $1.
    let done = Task::new("Anything", "jobs-results.html")
        .prices(Prices::with_file(&prices).unwrap())
        .with(|o| o.max_cost = Some(1.5))
        .run(Vec::new(), scroll)
        .await;
    let r = &done.result;
    assert!(!r.success);
    assert_eq!(r.steps, 2);
    assert!(
        r.reason
            .starts_with("the cost budget of $1.50 ran out ($2.0000 spent)"),
        "{}",
        r.reason
    );
}
