//! What seamark does with bad input, as a careless or hostile user gives it:
//! each row of docs/safety.md's table "what seamark does with bad input" has
//! its test here, through the binary. Configuration errors end with exit 2
//! before a browser starts (the test directory's check finds none), and no
//! secret or key reaches any output, in any form.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cli::{profiles_in, run_with_model, run_with_model_and_env, seamark_with_env, Run};
use crate::model_server::{reply, ModelServer, Received, Reply, Turn};
use crate::server::Server;

/// A run of `seamark run` that must stop at its configuration: exit 2, the
/// reason on stderr, and no browser started.
fn refused(run: &Run, reason: &str) {
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(
        run.stderr().contains(reason),
        "the reason {reason:?} is not said:\n{}",
        run.stderr()
    );
    assert!(
        profiles_in(&run.path("tmp")).is_empty() && !run.path("rec").exists(),
        "a browser or a run started before the refusal"
    );
}

/// `seamark run` with a scripted model that is never reached.
async fn run_with(args: &[&str]) -> Run {
    let model = ModelServer::start(Vec::new(), || reply(|_| "STOP:unreached".into())).await;
    let run = run_with_model(&model, args).await;
    assert!(model.received().is_empty(), "the model was called");
    run
}

#[tokio::test]
async fn a_start_url_seamark_cannot_open_is_refused_with_exit_2_before_anything_starts() {
    for (url, reason) in [
        ("ftp://x", "does not open ftp: URLs"),
        ("javascript:alert(1)", "does not open javascript: URLs"),
        ("http://[::1", "is not a URL"),
        ("", "empty URL"),
    ] {
        let run = run_with(&["--task", "look", "--url", url]).await;
        refused(&run, reason);
    }
    for command in ["mark", "read"] {
        let run = seamark_with_env(&[command, "ftp://x"], &[]).await;
        assert_eq!(run.code(), Some(2), "{command}: {}", run.stderr());
        assert!(run.stderr().contains("does not open ftp: URLs"));
    }
}

#[tokio::test]
async fn an_empty_task_is_refused_with_exit_2() {
    let run = run_with(&["--task", "  ", "--url", "about:blank"]).await;
    refused(&run, "--task is empty");
}

#[tokio::test]
async fn a_model_base_url_that_is_not_a_url_is_refused_before_a_browser_starts() {
    let run = seamark_with_env(
        &[
            "run",
            "--task",
            "look",
            "--url",
            "about:blank",
            "--out",
            "rec",
        ],
        &[
            ("OPENAI_BASE_URL", "not a url"),
            ("SEAMARK_MODEL", "openai/x"),
        ],
    )
    .await;
    refused(&run, "OPENAI_BASE_URL=\"not a url\" is not an http(s) URL");
}

#[tokio::test]
async fn max_steps_0_and_a_cost_that_is_not_a_finite_amount_are_refused() {
    for (flag, value, reason) in [
        ("--max-steps", "0", "must be 1 or more"),
        ("--max-failures", "0", "must be 1 or more"),
        ("--max-cost", "NaN", "must be a finite number"),
        ("--max-cost", "inf", "must be a finite number"),
        ("--max-cost=-1", "", "must be a finite number"),
    ] {
        let mut args = vec!["--task", "look", "--url", "about:blank", flag];
        if !value.is_empty() {
            args.push(value);
        }
        let run = run_with(&args).await;
        refused(&run, reason);
    }
}

#[tokio::test]
async fn a_storage_state_with_a_typo_or_nothing_in_it_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (text, reason) in [
        (r#"{"cookie": []}"#, "has a field \"cookie\""),
        ("[]", "is not a JSON object"),
        ("{}", "neither \"cookies\" nor \"origins\""),
        (
            r#"{"cookies": [], "origins": []}"#,
            "holds no cookies and no origins",
        ),
    ] {
        let file = dir.path().join("state.json");
        std::fs::write(&file, text).unwrap();
        let run = run_with(&[
            "--task",
            "look",
            "--url",
            "about:blank",
            "--storage-state",
            file.to_str().unwrap(),
        ])
        .await;
        refused(&run, reason);
    }
}

#[tokio::test]
async fn a_save_storage_state_path_that_cannot_be_written_is_refused_before_the_run() {
    let run = run_with(&[
        "--task",
        "look",
        "--url",
        "about:blank",
        "--save-storage-state",
        "no/such/dir/state.json",
    ])
    .await;
    refused(&run, "--save-storage-state cannot be written");
}

#[tokio::test]
async fn a_save_storage_state_that_fails_at_the_end_makes_the_run_fail() {
    let server = Server::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    let taken = path.clone();
    // Writable when the run starts; a directory by the time it ends.
    let model = ModelServer::start(
        vec![reply(move |_| {
            std::fs::create_dir_all(&taken).unwrap();
            "COMPLETE:looked".into()
        })],
        || reply(|_| "STOP:unexpected".into()),
    )
    .await;
    let run = run_with_model(
        &model,
        &[
            "--task",
            "look",
            "--url",
            &server.url("form.html"),
            "--save-storage-state",
            path.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    let reason = run.result()["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains("looked") && reason.contains("the storage state was not saved"),
        "{reason}"
    );
}

#[tokio::test]
async fn out_naming_a_directory_that_holds_a_run_is_refused_unless_overwrite() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), || reply(|_| "COMPLETE:looked".into())).await;
    let work = crate::cli::Workdir::new(&model);
    let url = server.url("form.html");
    let args = [
        "run", "--json", "--task", "look", "--url", &url, "--out", "rec",
    ];
    let first = work.run(&args).await;
    assert_eq!(first.code(), Some(0), "{}", first.stderr());
    let journal = std::fs::read_to_string(work.path("rec/journal.jsonl")).unwrap();

    let again = work.run(&args).await;
    assert_eq!(again.code(), Some(2), "{}", again.stderr());
    assert!(
        again.stderr().contains("already holds a run") && again.stderr().contains("--overwrite"),
        "{}",
        again.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(work.path("rec/journal.jsonl")).unwrap(),
        journal,
        "the first run's journal was touched"
    );

    let mut over = args.to_vec();
    over.push("--overwrite");
    let replaced = work.run(&over).await;
    assert_eq!(replaced.code(), Some(0), "{}", replaced.stderr());
    let starts = seamark::journal::read_records(&work.path("rec"))
        .unwrap()
        .into_iter()
        .filter(|r| r["kind"] == "start")
        .count();
    assert_eq!(starts, 1, "--overwrite appended instead of replacing");
}

/// The password typed, and the API key: characters that read differently
/// in every form a value can take in text.
const PW: &str = "p@ss w\"rd/x+1";
const KEY: &str = "sk-k3y/odd+chars \"q\"&z";

/// Every form in which `value` could leak: as it is, %-encoded as
/// `encodeURIComponent` does, +-encoded as a form sends it, JSON-escaped,
/// and reversed.
fn forms(value: &str) -> Vec<String> {
    const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'!')
        .remove(b'~')
        .remove(b'*')
        .remove(b'\'')
        .remove(b'(')
        .remove(b')');
    let component = percent_encoding::utf8_percent_encode(value, COMPONENT).to_string();
    let form: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    let json = serde_json::to_string(value).unwrap();
    vec![
        value.to_string(),
        component,
        form,
        json.trim_matches('"').to_string(),
        value.chars().rev().collect(),
    ]
}

/// Every file under `dir`, with its path.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.push((path, bytes));
            }
        }
    }
    out
}

/// Fails naming where a form of `value` shows in `text`.
fn never_shows(value: &str, what: &str, text: &[u8]) {
    for form in forms(value) {
        let found = text.windows(form.len()).any(|w| w == form.as_bytes());
        assert!(!found, "{what} shows {form:?}");
    }
}

/// A model that types the secret into the password field, says COMPLETE,
/// and, when its COMPLETE is refused, is answered by a provider that
/// refuses the key and echoes it back.
fn typist() -> Turn {
    Box::new(|r: &Received| {
        let text = r.text();
        if text.contains("COMPLETE was not accepted") {
            let key = r
                .header("authorization")
                .unwrap_or_default()
                .trim_start_matches("Bearer ")
                .to_string();
            return Reply::Status(
                401,
                json!({"error": {"message": format!("Incorrect API key provided: {key}."), "type": "invalid_request_error"}})
                    .to_string(),
                None,
            );
        }
        if r.step() == 1 {
            return Reply::Text(format!("TYPE:{}:{{{{secret:PW}}}}", r.id_of("Password")));
        }
        Reply::Text("COMPLETE:typed it".into())
    })
}

#[tokio::test]
async fn no_key_or_secret_in_any_output_in_any_form() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), typist).await;
    let secret = format!("PW={PW}");
    // The person's own check hands the field's value back, reversed, in an
    // error: the model must not get it, nor any file.
    let check = "(() => { throw new Error([...document.querySelector('input[type=password]').value].reverse().join('')) })()";
    let run = run_with_model_and_env(
        &model,
        &[
            "--task",
            "type the password",
            "--url",
            &server.url("signin.html"),
            "--secret",
            &secret,
            "--expect-js",
            check,
            "--confirm",
            "deny",
        ],
        &[("OPENAI_API_KEY", KEY)],
    )
    .await;
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    let result = run.result();
    assert!(
        result["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("Incorrect API key provided"),
        "the provider's words are gone: {result}"
    );
    let received = model.received();
    let refused = received
        .iter()
        .find(|r| r.text().contains("COMPLETE was not accepted"))
        .expect("the check refused COMPLETE");
    assert!(
        refused.text().contains("its value is not shown"),
        "{}",
        refused.text()
    );
    for r in &received {
        never_shows(PW, "a prompt", r.text().as_bytes());
    }
    for value in [PW, KEY] {
        never_shows(value, "stdout", run.stdout().as_bytes());
        never_shows(value, "stderr", run.stderr().as_bytes());
        for (path, bytes) in files_under(&run.path("rec")) {
            never_shows(value, &path.display().to_string(), &bytes);
        }
    }
}

#[tokio::test]
async fn a_reply_of_1000_commands_runs_50_and_a_reply_of_megabytes_is_kept_cut() {
    let server = Server::start(None).await;
    let model = ModelServer::start(
        vec![reply(|r| {
            let id = r.id_of("Promo code");
            let commands: Vec<String> = (1..=1000).map(|n| format!("TYPE:{id}:{n}")).collect();
            format!("Thought: {}\n{}", "a".repeat(100_000), commands.join("\n"))
        })],
        || reply(|_| "COMPLETE:typed".into()),
    )
    .await;
    let run = run_with_model(
        &model,
        &[
            "--task",
            "type the numbers",
            "--url",
            &server.url("form.html"),
            "--expect-js",
            "document.querySelector('input[placeholder=\"Promo code\"]').value === '50'",
        ],
    )
    .await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let second = &model.received()[1];
    assert!(
        second
            .text()
            .contains("950 more commands past the first 50"),
        "the model was not told: {}",
        second.text()
    );
    let steps = crate::agent::records(&run.path("rec"), "step");
    let outcomes = steps[0]["report"]["outcomes"].as_array().unwrap().len();
    assert_eq!(outcomes, 50);
    let answer = steps[0]["answer"].as_str().unwrap();
    assert!(answer.len() < 70_000, "{} characters kept", answer.len());
    assert!(
        answer.contains("[cut here by seamark"),
        "the cut is not said"
    );
    let report = std::fs::metadata(run.path("rec/report.html"))
        .unwrap()
        .len();
    assert!(report < 2_000_000, "report.html is {report} bytes");
}

#[tokio::test]
async fn a_skill_file_over_the_size_limit_is_refused_unread() {
    let dir = crate::processes::TestDir::new();
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    // A sparse file: as large as the probe's, without writing 300 MB.
    let file = std::fs::File::create(skills.join("huge.json")).unwrap();
    file.set_len(300 * 1024 * 1024).unwrap();
    let out = crate::cli::command_in(dir.path(), &["skill", "list", "--skills", "skills"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("huge.json") && stdout.contains("more than a skill file may be"),
        "{stdout}"
    );
}

#[tokio::test]
async fn an_mcp_check_never_hands_back_a_typed_secret() {
    let server = Server::start(None).await;
    let secret = format!("PW={PW}");
    let mcp = crate::mcp::Mcp::stdio(&["--secret", &secret]).await;
    let opened = mcp
        .call(
            "open",
            json!({"url": server.url("signin.html"), "image": false}),
        )
        .await;
    let pw = crate::model_server::id_in(&opened.text, "Password");
    let reversed = "[...document.querySelector('input[type=password]').value].reverse().join('')";
    let acted = mcp
        .call(
            "act",
            json!({
                "commands": format!("TYPE:{pw}:{{{{secret:PW}}}}"),
                "expect": {"js": reversed},
            }),
        )
        .await;
    assert!(
        acted.text.contains("js") && acted.text.contains("its value is not shown"),
        "{}",
        acted.text
    );
    never_shows(PW, "the act result", acted.text.as_bytes());
    let dir = mcp.close().await;
    for (path, bytes) in files_under(&dir.path().join("rec")) {
        never_shows(PW, &path.display().to_string(), &bytes);
    }
}

#[tokio::test]
async fn an_alert_on_the_start_page_holds_neither_run_nor_read_nor_mark() {
    let server = Server::start(None).await;
    let url = server.url("alert-on-load.html");
    let model = ModelServer::start(
        vec![reply(|r| format!("CLICK:{}", r.id_of("After the alert")))],
        || reply(|_| "COMPLETE:clicked it".into()),
    )
    .await;
    let run = run_with_model(
        &model,
        &[
            "--task",
            "click the button",
            "--url",
            &url,
            "--expect-js",
            "document.getElementById('after').textContent === 'Clicked after the alert'",
        ],
    )
    .await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let read = seamark_with_env(&["read", &url], &[]).await;
    assert_eq!(read.code(), Some(0), "{}", read.stderr());
    assert!(
        read.stdout().contains("terms accepted"),
        "{}",
        read.stdout()
    );
    let mark = seamark_with_env(&["mark", &url, "-o", "m.png"], &[]).await;
    assert_eq!(mark.code(), Some(0), "{}", mark.stderr());
    assert!(
        mark.stdout().contains("After the alert"),
        "{}",
        mark.stdout()
    );
}

#[tokio::test]
async fn a_loop_of_1000_alerts_ends_and_the_page_is_read() {
    let server = Server::start(None).await;
    let read = seamark_with_env(&["read", &server.url("alert-loop.html")], &[]).await;
    assert_eq!(read.code(), Some(0), "{}", read.stderr());
    assert!(
        read.stdout().contains("After the loop"),
        "{}",
        read.stdout()
    );
}

#[tokio::test]
async fn a_start_page_that_never_answers_ends_at_the_load_timeout_and_says_so() {
    let server = Server::start(None).await;
    let run = run_with(&[
        "--task",
        "look",
        "--url",
        &server.url("silent"),
        "--load-timeout",
        "3",
    ])
    .await;
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    let reason = run.result()["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains("did not finish loading in 3 s") && !reason.contains("perception"),
        "{reason}"
    );
    for command in ["read", "mark"] {
        let out = seamark_with_env(&[command, &server.url("silent"), "--timeout", "3"], &[]).await;
        assert_eq!(out.code(), Some(1), "{command}: {}", out.stderr());
        assert!(
            out.stderr().contains("did not finish loading in 3 s"),
            "{command}: {}",
            out.stderr()
        );
    }
}

#[tokio::test]
async fn max_time_holds_inside_a_step() {
    let server = Server::start(None).await;
    // The model never answers: only the deadline can end the step. The
    // budget leaves a loaded machine time to open the page first (3 s once
    // ran out while it was opened: the deadline held, not where asked).
    let model = ModelServer::start(Vec::new(), crate::model_server::hang).await;
    let run = run_with_model(
        &model,
        &[
            "--task",
            "look",
            "--url",
            &server.url("form.html"),
            "--max-time",
            "20",
        ],
    )
    .await;
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    assert_eq!(model.received().len(), 1, "the step asked the model");
    let result = run.result();
    assert_eq!(result["status"], "budget", "{result}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("the time budget of 20 s ran out during step 1"),
        "{result}"
    );
    assert!(run.path("rec/report.html").exists(), "no report");
}

#[tokio::test]
async fn an_mcp_open_of_a_page_that_never_answers_ends_and_the_call_behind_it_is_answered() {
    let server = Server::start(None).await;
    let mcp = crate::mcp::Mcp::stdio(&["--load-timeout", "3"]).await;
    let (opened, observed) = tokio::join!(
        mcp.call("open", json!({"url": server.url("silent"), "image": false})),
        async {
            // Sent once the open is under way, so it queues behind it.
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            mcp.call("observe", json!({"image": false})).await
        }
    );
    assert!(opened.is_error, "{}", opened.text);
    assert!(
        opened.text.contains("did not finish loading in 3 s"),
        "{}",
        opened.text
    );
    assert!(!observed.text.is_empty());
    mcp.close().await;
}
