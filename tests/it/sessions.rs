//! Sessions that last, through the binary: a login kept in a storage state
//! or a profile, one-time codes, questions for the person (at a terminal, or
//! ending the run as `needs_input`), and `seamark resume` after a run was
//! killed, ran out of budget or waited for an answer.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::model_server::{scripted_brain, ModelServer, Received, Reply};
use crate::server::{Server, SESSION_COOKIE, SESSION_PASSWORD};
use crate::support::{records, with_model, Workdir};

/// The scripted model of the shop: signs in as ada with the secret `pw` on
/// the sign-in page; on the account page answers who it says is signed in
/// and what the site remembers.
fn shop(r: &Received) -> Reply {
    let url = r.url();
    Reply::Text(if url.contains("/session-login.html") {
        format!(
            "TYPE:{}:ada\nTYPE:{}:{{{{secret:pw}}}}\nCLICK:{}",
            r.id_of("Username"),
            r.id_of("Password"),
            r.id_of("Sign in")
        )
    } else if url.contains("/me") {
        let mut who = r.first_named("button", "Signed in as");
        if who == "none" {
            who = r.first_named("button", "Not signed in");
        }
        let remembered = r.first_named("button", "Remembered:");
        format!("ANSWER:{who}; {remembered}\nCOMPLETE:read the account page")
    } else {
        format!("STOP:no script for {url}")
    })
}

/// The answer of a run, from its journal's end record.
fn ended(dir: &Path) -> Value {
    records(dir, "end")
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("no end record in {}", dir.display()))["result"]
        .clone()
}

/// Every file under `dir`, as text (lossy), for what must never be in one.
fn every_file(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.push((
                    p.display().to_string(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_storage_state_starts_the_next_run_signed_in() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(shop).await;
    let w = Workdir::new(&model);
    let secret = format!("pw={SESSION_PASSWORD}");
    let signed_in = "Signed in as ada; Remembered: ada";
    let first = w
        .run(&[
            "run",
            "--task",
            "Sign in and say who you are",
            "--url",
            &sites.url("session-login.html"),
            "--secret",
            &secret,
            "--save-storage-state",
            "state.json",
            "--json",
            "--out",
            "one",
        ])
        .await;
    assert_eq!(first.code(), Some(0), "{}", first.stderr());
    assert_eq!(first.json()["answer"], signed_in);
    // The state is Playwright's, private, with the session cookie and the
    // site's localStorage, and without the password.
    let text = std::fs::read_to_string(w.path("state.json")).expect("state.json");
    let state: Value = serde_json::from_str(&text).expect("JSON");
    let sid = state["cookies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sid")
        .unwrap_or_else(|| panic!("no session cookie: {text}"));
    assert_eq!(
        format!("sid={}", sid["value"].as_str().unwrap()),
        SESSION_COOKIE
    );
    assert_eq!(sid["httpOnly"], true);
    assert!(sid["expires"].as_f64().unwrap() > 0.0);
    assert_eq!(state["origins"][0]["origin"], sites.base);
    assert_eq!(state["origins"][0]["localStorage"][0]["name"], "remember");
    assert!(!text.contains(SESSION_PASSWORD));
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.path("state.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "a storage state is a credential");
    }
    // The run directory keeps one too, after every step: private, and
    // without the password.
    let kept = w.path("one/storage-state.json");
    assert!(!std::fs::read_to_string(&kept)
        .unwrap()
        .contains(SESSION_PASSWORD));
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    // Loaded, the next run starts signed in: the server sees the cookie.
    let cookies_before = sites.cookies("/me").len();
    let me = sites.url("me");
    let second = w
        .run(&[
            "run",
            "--task",
            "Say who you are",
            "--url",
            &me,
            "--storage-state",
            "state.json",
            "--json",
            "--out",
            "two",
        ])
        .await;
    assert_eq!(second.code(), Some(0), "{}", second.stderr());
    assert_eq!(second.json()["answer"], signed_in);
    let seen = sites.cookies("/me");
    assert!(
        seen[cookies_before..]
            .iter()
            .any(|c| c.contains(SESSION_COOKIE)),
        "{seen:?}"
    );
    // Without it, nobody is signed in.
    let third = w
        .run(&[
            "run",
            "--task",
            "Say who you are",
            "--url",
            &me,
            "--json",
            "--out",
            "three",
        ])
        .await;
    assert_eq!(third.json()["answer"], "Not signed in; Remembered: nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_keeps_the_login_and_one_in_use_is_refused() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(shop).await;
    let w = Workdir::new(&model);
    let secret = format!("pw={SESSION_PASSWORD}");
    let first = w
        .run(&[
            "run",
            "--task",
            "Sign in",
            "--url",
            &sites.url("session-login.html"),
            "--secret",
            &secret,
            "--profile",
            "profile",
            "--json",
            "--out",
            "one",
        ])
        .await;
    assert_eq!(first.code(), Some(0), "{}", first.stderr());
    assert!(w.path("profile").is_dir(), "the profile was made");
    let before = sites.cookies("/me").len();
    let second = w
        .run(&[
            "run",
            "--task",
            "Say who you are",
            "--url",
            &sites.url("me"),
            "--profile",
            "profile",
            "--json",
            "--out",
            "two",
        ])
        .await;
    assert_eq!(second.code(), Some(0), "{}", second.stderr());
    assert_eq!(second.json()["answer"], "Signed in as ada; Remembered: ada");
    assert!(sites.cookies("/me")[before..]
        .iter()
        .any(|c| c.contains(SESSION_COOKIE)));
    assert!(w.path("profile").is_dir(), "a profile is kept");

    // A profile a running browser holds is refused, and left as it was.
    let (mut other, _ws) = crate::support::running_chromium_in(&w.path("held")).await;
    let refused = w
        .run(&[
            "run",
            "--task",
            "t",
            "--url",
            &sites.url("me"),
            "--profile",
            "held",
        ])
        .await;
    assert_eq!(refused.code(), Some(2), "{}", refused.stderr());
    assert!(
        refused
            .stderr()
            .contains("is in use by another browser (process "),
        "{}",
        refused.stderr()
    );
    assert!(
        other.try_wait().unwrap().is_none(),
        "the other browser still runs"
    );
    other.kill().await.unwrap();
}

/// The seed of the test's authenticator: "12345678901234567890".
const SEED: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_time_code_is_typed_as_the_code_of_the_moment_and_kept_out_of_every_file() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(|r: &Received| {
        Reply::Text(if r.url().contains("/otp.html") {
            format!(
                "TYPE:{}:{{{{secret:otp}}}}\nCLICK:{}",
                r.id_of("One-time code"),
                r.id_of("Verify")
            )
        } else {
            "COMPLETE:verified".into()
        })
    })
    .await;
    let w = Workdir::new(&model);
    let ran = w
        .run(&[
            "run",
            "--task",
            "Pass the two-step check",
            "--url",
            &sites.url("otp.html"),
            "--secret",
            &format!("otp=totp:{SEED}"),
            "--json",
            "--out",
            "rec",
        ])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    // The code the server got is the one of that moment, as the RFC makes it.
    let verified: Vec<String> = sites
        .log
        .lock()
        .unwrap()
        .iter()
        .filter_map(|p| p.strip_prefix("/verify?code=").map(str::to_string))
        .collect();
    assert_eq!(verified.len(), 1, "{verified:?}");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let totp = totp_rs::Builder::new()
        .with_secret(totp_rs::Secret::try_from_base32(SEED).unwrap())
        .build()
        .unwrap();
    let fresh: Vec<String> = [now - 60, now - 30, now]
        .iter()
        .map(|t| totp.generate(*t).to_string())
        .collect();
    assert!(
        fresh.contains(&verified[0]),
        "{} is no code of the last minute: {fresh:?}",
        verified[0]
    );
    // Neither the code nor the seed is in a prompt or a file.
    for r in model.received() {
        let body = r.body.to_string();
        assert!(
            !body.contains(&verified[0]) && !body.contains(SEED),
            "a prompt holds the code"
        );
    }
    for (file, text) in every_file(&w.path("rec")) {
        assert!(!text.contains(&verified[0]), "{file} holds the code");
        assert!(!text.contains(SEED), "{file} holds the seed");
    }
}

/// The scripted model of a task that needs the person: it asks which city,
/// then looks the answer up on the weather site and answers.
pub(crate) fn asks_the_city(r: &Received) -> Reply {
    let text = r.text();
    let answered = text
        .split("The person answered your question \"Which city?\": ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .map(str::trim);
    Reply::Text(if r.url().contains("/weather.html") {
        let said = r.first_named("link", "Back: ");
        format!(
            "ANSWER:{}\nCOMPLETE:answered",
            said.trim_start_matches("Back: ")
        )
    } else if let Some(city) = answered {
        format!(
            "TYPE:{}:{city}\nCLICK:{}",
            r.id_of("City"),
            r.id_of("Look up")
        )
    } else {
        "ASK:Which city?".into()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_without_a_terminal_ends_as_needs_input_and_resume_takes_the_answer() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(asks_the_city).await;
    let w = Workdir::new(&model);
    let asked = w
        .run(&[
            "run",
            "--task",
            "Look up the weather where the person wants",
            "--url",
            &sites.url("lookup.html"),
            "--json",
            "--out",
            "rec",
        ])
        .await;
    assert_eq!(
        asked.code(),
        Some(3),
        "needs input: exit 3\n{}",
        asked.stderr()
    );
    let result = asked.json();
    assert_eq!(result["status"], "needs_input");
    assert_eq!(result["reason"], "Which city?");
    // Resume wants the answer, and says so.
    let without = w.run(&["resume", "rec"]).await;
    assert_eq!(without.code(), Some(2));
    assert!(
        without
            .stderr()
            .contains("waiting for the answer to \"Which city?\""),
        "{}",
        without.stderr()
    );
    let resumed = w
        .run(&["resume", "rec", "--answer", "Rome", "--json"])
        .await;
    assert_eq!(resumed.code(), Some(0), "{}", resumed.stderr());
    let result = resumed.json();
    assert_eq!(result["answer"], "Rome is 25°C");
    assert_eq!(result["steps"], 3, "steps count on from the first part");
    // The journal grew: the first part, the resume with the answer, the rest.
    let kinds: Vec<String> = seamark::journal::read_records(&w.path("rec"))
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        kinds,
        ["start", "act", "step", "end", "resume", "act", "step", "act", "step", "end"],
        "{kinds:?}"
    );
    let resume = records(&w.path("rec"), "resume");
    assert_eq!(resume[0]["answer"], "Rome");
    assert_eq!(
        records(&w.path("rec"), "step")[0]["asked"]["question"],
        "Which city?"
    );
    // The report shows the question where it was asked, and where the run
    // went on with the answer.
    let html = std::fs::read_to_string(w.path("rec/report.html")).expect("report");
    let card = |n: usize| {
        html.split(&format!("id=\"step-{n}\""))
            .nth(1)
            .and_then(|rest| rest.split("</section>").next())
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        card(1).contains("Which city? (no answer: the run waited for one)"),
        "{}",
        card(1)
    );
    assert!(
        card(2).contains("class=\"list resumed\"")
            && card(2).contains("the person answered: Rome")
            && card(2).contains("after it ended needs input: Which city?"),
        "{}",
        card(2)
    );
    // A completed run is not resumed.
    let again = w.run(&["resume", "rec"]).await;
    assert_eq!(again.code(), Some(2));
    again.stderr_has("the run is complete");
}

/// `seamark run` with a terminal (`script` gives it one): what it shows
/// comes out of the child's stdout, what the person types goes in its stdin.
fn at_a_terminal(w: &Workdir, model: &ModelServer, task: &str, url: &str) -> tokio::process::Child {
    let command = format!(
        "{} run --task '{task}' --url {url} --out rec",
        env!("CARGO_BIN_EXE_seamark"),
    );
    std::fs::create_dir_all(w.path("tmp")).unwrap();
    let mut cmd = tokio::process::Command::new("script");
    cmd.args(["-qec", &command, "/dev/null"])
        .current_dir(w.path(""))
        .env("TMPDIR", w.path("tmp"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    with_model(&mut cmd, &model.base);
    cmd.spawn().expect("script (util-linux)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_at_a_terminal_is_answered_there() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(asks_the_city).await;
    let w = Workdir::new(&model);
    let mut child = at_a_terminal(
        &w,
        &model,
        "Look up the weather where the person wants",
        &sites.url("lookup.html"),
    );
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"Oslo\n").await.unwrap();
    }
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the run at a terminal hung")
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(shown.contains("seamark asks: Which city?"), "{shown}");
    let result = ended(&w.path("rec"));
    assert_eq!(result["status"], "done", "{shown}");
    assert_eq!(result["answer"], "Oslo is 3°C");
    assert_eq!(
        records(&w.path("rec"), "step")[0]["asked"]["answer"],
        "Oslo"
    );
}

/// The scripted model of the two-step check: asks for the code sent to the
/// person's phone, then types the secret it was told of and verifies.
fn asks_the_code(r: &Received) -> Reply {
    let text = r.text();
    Reply::Text(if !text.contains("{{secret:answer1}}") {
        "ASK:What is the code sent to your phone?".into()
    } else if r.url().contains("/otp.html") {
        format!(
            "TYPE:{}:{{{{secret:answer1}}}}\nCLICK:{}",
            r.id_of("One-time code"),
            r.id_of("Verify")
        )
    } else {
        "COMPLETE:verified".into()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_answer_typed_at_a_terminal_is_never_on_the_screen() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let sites = Server::start(None).await;
    let model = ModelServer::answering(asks_the_code).await;
    let w = Workdir::new(&model);
    let mut child = at_a_terminal(
        &w,
        &model,
        "Pass the two-step check with the code the person has",
        &sites.url("otp.html"),
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut shown = Vec::new();
    // Reads the terminal until `text` is on it, as a person waits for it.
    let mut wait_for = async |text: &str| {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&shown).contains(text) {
            let n = tokio::time::timeout(Duration::from_secs(120), stdout.read(&mut buf))
                .await
                .unwrap_or_else(|_| {
                    panic!("waited for {text:?}: {}", String::from_utf8_lossy(&shown))
                })
                .unwrap();
            assert!(
                n > 0,
                "ended before {text:?}: {}",
                String::from_utf8_lossy(&shown)
            );
            shown.extend_from_slice(&buf[..n]);
        }
    };
    wait_for("What is the code sent to your phone?").await;
    wait_for("> ").await;
    stdin.write_all(b"!\n").await.unwrap();
    wait_for("secret (not shown): ").await;
    // A person reads the prompt before typing; the echo goes off right
    // after it is shown.
    tokio::time::sleep(Duration::from_millis(300)).await;
    stdin.write_all(b"482913\n").await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(120), stdout.read_to_end(&mut rest))
        .await
        .expect("the run at a terminal hung")
        .unwrap();
    shown.extend_from_slice(&rest);
    let shown = String::from_utf8_lossy(&shown).into_owned();
    assert!(
        !shown.contains("482913"),
        "the secret was on the screen: {shown}"
    );
    // Nothing else writes on the question's lines while the person answers.
    let asking = shown
        .split("seamark asks:")
        .nth(1)
        .and_then(|rest| rest.split("the question is put to the person").next())
        .unwrap_or_default();
    assert!(
        !asking.contains("thinking"),
        "the spinner ran over the question: {shown}"
    );
    assert!(
        sites.was_requested("/verify?code=482913"),
        "the code was typed: {shown}"
    );
    let result = ended(&w.path("rec"));
    assert_eq!(result["status"], "done", "{shown}");
    for (file, text) in every_file(&w.path("rec")) {
        assert!(!text.contains("482913"), "{file} holds the secret answer");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_answer_is_typed_but_never_seen_or_written() {
    use seamark::agent::{Agent, AgentOptions, Asker};

    /// The person answers from a script: the code sent to their phone.
    struct Person;
    impl Asker for Person {
        fn ask(&self, _question: &str) -> Option<String> {
            Some("!482913".into())
        }
        fn hand_over(&self, _what: &str) -> bool {
            false
        }
    }
    let sites = Server::start(None).await;
    let model = ModelServer::answering(asks_the_code).await;
    let dir = tempfile::tempdir().unwrap();
    let brain = scripted_brain(&model.base).unwrap();
    let result = Agent::builder()
        .task("Pass the two-step check with the code the person has")
        .url(sites.url("otp.html"))
        .brain(brain)
        .asker(Arc::new(Person))
        .options(AgentOptions {
            out: Some(dir.path().join("rec")),
            max_steps: 6,
            ..AgentOptions::default()
        })
        .build()
        .unwrap()
        .run()
        .await
        .unwrap();
    assert_eq!(
        result.status,
        seamark::agent::RunStatus::Done,
        "{}",
        result.reason
    );
    assert!(
        sites.was_requested("/verify?code=482913"),
        "the code was typed"
    );
    for r in model.received() {
        assert!(
            !r.body.to_string().contains("482913"),
            "a prompt holds the secret answer"
        );
    }
    for (file, text) in every_file(&dir.path().join("rec")) {
        assert!(!text.contains("482913"), "{file} holds the secret answer");
    }
    assert_eq!(
        records(&dir.path().join("rec"), "step")[0]["asked"]["answer"],
        "{{secret:answer1}}"
    );
}

/// The scripted model of the shop's order: types a name and places the
/// order. Told that its last commands' outcome is unknown, it first clicks
/// again (blindly, as a careless model would), then, held, reads the page.
pub(crate) fn orders(r: &Received) -> Reply {
    let text = r.text();
    Reply::Text(
        if text.contains("outcome is UNKNOWN") && !text.contains("HELD") {
            format!("CLICK:{}", r.id_of("Place order"))
        } else if text.contains("HELD") {
            let count = r.first_named("button", "Orders placed:");
            format!("ANSWER:{count}\nCOMPLETE:the order was placed once")
        } else {
            format!(
                "TYPE:{}:Ada\nCLICK:{}",
                r.id_of("Name"),
                r.id_of("Place order")
            )
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_after_kill_9_mid_batch_the_order_is_placed_exactly_once() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(orders).await;
    let w = Workdir::new(&model);
    let mut child = w
        .command(&[
            "run",
            "--task",
            "Order one widget for Ada",
            "--url",
            &sites.url("order.html"),
            "--confirm",
            "allow",
            "--out",
            "rec",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start");
    // The order reached the server: seamark dies before its outcome is recorded.
    for _ in 0..400 {
        if !sites.posted("/order").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(sites.posted("/order").len(), 1, "the order was sent");
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert!(
        records(&w.path("rec"), "step").is_empty(),
        "the step was never recorded"
    );
    assert_eq!(records(&w.path("rec"), "act").len(), 1);

    let resumed = w.run(&["resume", "rec", "--json"]).await;
    assert_eq!(resumed.code(), Some(0), "{}", resumed.stderr());
    assert_eq!(
        sites.posted("/order").len(),
        1,
        "the order was placed exactly once"
    );
    assert_eq!(resumed.json()["answer"], "Orders placed: 1");
    // The click again was held, for the unknown outcome, though --confirm allow.
    let steps = records(&w.path("rec"), "step");
    let held = &steps[0]["report"]["outcomes"][0];
    assert_eq!(held["status"], "held", "{held:#}");
    assert!(
        held["message"]
            .as_str()
            .unwrap()
            .contains("outcome is unknown"),
        "{held:#}"
    );
    let resume = &records(&w.path("rec"), "resume")[0];
    let unknown: Vec<&str> = resume["unknown"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        unknown.iter().any(|c| c.starts_with("CLICK:")),
        "{unknown:?}"
    );
}

/// Runs the binary and checks it refused, with exit 2 and a message saying `says`.
async fn refused(w: &Workdir, args: &[&str], says: &str) -> String {
    let ran = w.run(args).await;
    assert_eq!(ran.code(), Some(2), "{args:?}: {}", ran.stderr());
    assert!(ran.stderr().contains(says), "{args:?}: {}", ran.stderr());
    ran.stderr()
}

#[tokio::test]
async fn bad_state_secrets_and_run_directories_are_refused_clearly() {
    let model = ModelServer::answering(shop).await;
    let w = Workdir::new(&model);
    let run = |extra: &'static [&'static str]| {
        let mut args = vec!["run", "--task", "t", "--url", "about:blank"];
        args.extend_from_slice(extra);
        args
    };
    std::fs::write(w.path("bad.json"), "{\"cookies\": \"none\"}").unwrap();
    refused(
        &w,
        &run(&["--storage-state", "bad.json"]),
        "bad.json is not a storage state",
    )
    .await;
    let said = refused(
        &w,
        &run(&["--secret", "otp=totp:not-base32!"]),
        "secret otp: not a one-time code seed",
    )
    .await;
    assert!(
        !said.contains("not-base32"),
        "the seed is not shown: {said}"
    );
    std::fs::create_dir_all(w.path("empty")).unwrap();
    refused(&w, &["resume", "empty"], "holds no journal.jsonl").await;
    refused(&w, &["resume", "nowhere"], "no run directory at nowhere").await;
    assert!(model.received().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_captcha_is_handed_over_to_the_person_who_can_see_the_browser() {
    use seamark::agent::{Agent, AgentOptions, Asker};
    use std::sync::Mutex;

    /// The person at the window: solves the CAPTCHA (the server hears it)
    /// when handed the browser, and says what they were told.
    struct Person {
        solve: String,
        told: Mutex<Vec<String>>,
    }
    impl Asker for Person {
        fn ask(&self, _question: &str) -> Option<String> {
            None
        }
        fn hand_over(&self, what: &str) -> bool {
            self.told.lock().unwrap().push(what.to_string());
            let url = url::Url::parse(&self.solve).unwrap();
            let mut s =
                std::net::TcpStream::connect((url.host_str().unwrap(), url.port().unwrap()))
                    .unwrap();
            use std::io::{Read, Write};
            write!(
                s,
                "GET /captcha-solved HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let mut answer = String::new();
            let _ = s.read_to_string(&mut answer);
            true
        }
    }
    let sites = Server::start(None).await;
    // Patient while the gate lets the person through; then reads the page.
    let model = ModelServer::answering(|r: &Received| {
        Reply::Text(if r.url().contains("/weather.html") {
            let said = r.first_named("link", "Back: ");
            format!(
                "ANSWER:{}\nCOMPLETE:read it",
                said.trim_start_matches("Back: ")
            )
        } else {
            "WAIT:1".into()
        })
    })
    .await;
    let person = Arc::new(Person {
        solve: sites.base.clone(),
        told: Mutex::default(),
    });
    let dir = tempfile::tempdir().unwrap();
    let brain = scripted_brain(&model.base).unwrap();
    let result = Agent::builder()
        .task("Read the weather behind the bot check")
        .url(sites.url("captcha-gate.html"))
        .brain(brain)
        .asker(person.clone())
        .options(AgentOptions {
            out: Some(dir.path().join("rec")),
            max_steps: 6,
            hand_over: true,
            ..AgentOptions::default()
        })
        .build()
        .unwrap()
        .run()
        .await
        .unwrap();
    assert_eq!(
        result.status,
        seamark::agent::RunStatus::Done,
        "{}",
        result.reason
    );
    assert_eq!(result.answer.as_deref(), Some("Paris is 21°C"));
    let told = person.told.lock().unwrap().clone();
    assert_eq!(told.len(), 1, "handed over once: {told:?}");
    assert!(
        told[0].contains("CAPTCHA (reCAPTCHA)") && told[0].contains("browser window"),
        "{told:?}"
    );
    let notes = records(&dir.path().join("rec"), "step")[0]["notes"].to_string();
    assert!(
        notes.contains("handed the browser to solve a CAPTCHA"),
        "{notes}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_out_of_steps_goes_on_with_a_higher_budget() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(asks_the_city).await;
    let w = Workdir::new(&model);
    let first = w
        .run(&[
            "run",
            "--task",
            "Look up the weather where the person wants",
            "--url",
            &sites.url("lookup.html"),
            "--max-steps",
            "1",
            "--json",
            "--out",
            "rec",
        ])
        .await;
    assert_eq!(first.json()["status"], "needs_input");
    let short = w
        .run(&[
            "resume",
            "rec",
            "--answer",
            "Paris",
            "--max-steps",
            "2",
            "--json",
        ])
        .await;
    assert_eq!(short.code(), Some(1), "{}", short.stderr());
    assert_eq!(short.json()["status"], "budget");
    let low = w.run(&["resume", "rec"]).await;
    assert_eq!(low.code(), Some(2));
    low.stderr_has("give --max-steps above 2");
    let done = w
        .run(&["resume", "rec", "--max-steps", "5", "--json"])
        .await;
    assert_eq!(done.code(), Some(0), "{}", done.stderr());
    let result = done.json();
    assert_eq!(result["answer"], "Paris is 21°C");
    // Spend counts on over the three parts: one model call per step.
    assert_eq!(result["steps"], 3);
    assert_eq!(
        result["tokens"]["input"],
        3 * crate::model_server::INPUT_TOKENS
    );
}
