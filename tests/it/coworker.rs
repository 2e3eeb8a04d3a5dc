//! `seamark serve`, `seamark worker` and `seamark sessions` as a team uses
//! them: sessions submitted over the API, a question that parks a session
//! with no browser held, answered on the page in a real Chromium; a server
//! killed with SIGKILL mid-step and started again; PostgreSQL shared by
//! workers on one queue; and bad input to the API.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use seamark::coworker::{Client, Session, SessionState};
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;

use crate::model_server::{ModelServer, Received, Reply};
use crate::server::Server;
use crate::support::{Fixture, Workdir};

/// A `seamark serve` (or `seamark worker`) started in a working directory,
/// its stderr kept for when a test fails.
pub struct Served {
    child: tokio::process::Child,
    /// Its page and API (`http://127.0.0.1:PORT`); empty for a worker.
    pub base: String,
    said: Arc<Mutex<Vec<String>>>,
}

impl Served {
    /// `seamark serve --listen 127.0.0.1:0 ARGS…` in `w`, once it listens.
    pub async fn serve(w: &Workdir, args: &[&str]) -> Served {
        Self::serve_with_env(w, args, &[]).await
    }

    /// [`Served::serve`], with these variables in its environment.
    pub async fn serve_with_env(w: &Workdir, args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut all = vec!["serve", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut served = Self::start(w, &all, env);
        served.base = served.said_line("seamark serve: ").await;
        served.base = served
            .base
            .trim_start_matches("seamark serve: ")
            .split(' ')
            .next()
            .unwrap_or_default()
            .to_string();
        served
    }

    /// `seamark worker ARGS…` in `w`, once it works.
    pub async fn worker(w: &Workdir, args: &[&str]) -> Served {
        let mut all = vec!["worker"];
        all.extend_from_slice(args);
        let served = Self::start(w, &all, &[]);
        served.said_line("seamark worker: ").await;
        served
    }

    fn start(w: &Workdir, args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut cmd = w.command(args);
        cmd.envs(env.iter().copied());
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("start seamark");
        let said = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let kept = said.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                kept.lock().unwrap().push(line);
            }
        });
        Served {
            child,
            base: String::new(),
            said,
        }
    }

    /// The first line it printed that starts with `prefix`, waited for.
    async fn said_line(&self, prefix: &str) -> String {
        for _ in 0..400 {
            if let Some(l) = self.said().lines().find(|l| l.starts_with(prefix)) {
                return l.to_string();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("seamark never said {prefix:?}:\n{}", self.said());
    }

    /// What it printed on stderr so far.
    pub fn said(&self) -> String {
        self.said.lock().unwrap().join("\n")
    }

    /// Its API.
    pub fn client(&self) -> Client {
        Client::new(&self.base, None).expect("the server's address")
    }

    /// Killed at once, as a machine that went away.
    pub async fn kill9(mut self) {
        self.child.start_kill().expect("SIGKILL");
        self.child.wait().await.expect("reaped");
    }

    /// Ended with SIGTERM, as a service manager ends it.
    pub async fn terminate(mut self) {
        crate::processes::terminate(&mut self.child, "seamark serve").await;
    }
}

/// Waits (at most three minutes) until the session is in `state`; fails
/// with the session and what the server said.
pub async fn wait_for(served: &Served, id: &str, state: SessionState) -> Session {
    let client = served.client();
    let mut last = None;
    for _ in 0..1800 {
        match client.get(id).await {
            Ok(s) if s.status == state => return s,
            Ok(s) if s.status.ended() => last = Some(s),
            Ok(s) => last = Some(s),
            Err(_) => {}
        }
        if last.as_ref().is_some_and(|s| s.status.ended()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let log = last
        .as_ref()
        .and_then(|s| std::fs::read_to_string(format!("{}/worker.log", s.run_dir)).ok())
        .unwrap_or_default();
    panic!(
        "session {id} never got {state}: {last:#?}\nserver:\n{}\nrun:\n{log}",
        served.said()
    );
}

/// A session of the task, queued over the API.
pub async fn submit(served: &Served, task: &str, url: &str, options: Value) -> String {
    let mut body = options.as_object().cloned().unwrap_or_default();
    body.insert("task".into(), task.into());
    body.insert("url".into(), url.into());
    served
        .client()
        .submit(Value::Object(body))
        .await
        .unwrap_or_else(|e| panic!("submit: {e}\n{}", served.said()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_asks_waits_with_no_browser_and_goes_on_when_answered_on_the_page() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(crate::sessions::asks_the_city).await;
    let w = Workdir::new(&model);
    let hook = sites.url("hook");
    let served = Served::serve(&w, &["--workers", "1", "--notify", &hook]).await;
    let id = submit(
        &served,
        "Look up the weather where the person wants",
        &sites.url("lookup.html"),
        json!({ "no_skills": true }),
    )
    .await;
    let waiting = wait_for(&served, &id, SessionState::Waiting).await;
    assert_eq!(waiting.question.as_deref(), Some("Which city?"));
    assert!(waiting.waiting_since.is_some());
    assert!(waiting.hold.is_none(), "a question, not a held action");
    // The webhook heard of it, with the question and the page's link.
    let told: Value = serde_json::from_str(&sites.posted("/hook")[0]).expect("JSON");
    assert_eq!(told["id"], id.as_str());
    assert_eq!(told["question"], "Which city?");
    assert_eq!(told["page"], format!("{}/sessions/{id}", served.base));
    // Waiting holds nothing: the run's process is gone, and its context
    // with it; the worker's own browser has no page of it open.
    let tmp = crate::processes::tmp_of(&w.path(""));
    let kept = crate::processes::browser_profiles(&tmp);
    assert!(kept.len() <= 1, "one browser kept at most: {kept:?}");
    for profile in kept {
        let pages = crate::processes::pages_of_browser(&profile).await;
        assert!(
            pages.iter().all(|u| !u.contains("lookup.html")),
            "no page of the waiting session: {pages:?}"
        );
    }

    // The person answers on the page, in a real browser.
    let fx = Fixture::open(&format!("{}/", served.base)).await;
    let mut actor = fx.actor().await;
    let asks = actor
        .exec
        .observation()
        .expect("a look")
        .table
        .elements
        .clone();
    assert!(
        asks.iter().any(|e| e.name == "Send answers"),
        "the page shows the question with a box: {asks:?}"
    );
    let (field, button) = (
        actor.id("answer to: Look up the weather where the person wants"),
        actor.id("Send answers"),
    );
    let report = actor
        .run(&format!("TYPE:{field}:Rome\nCLICK:{button}"))
        .await;
    assert!(
        report.outcomes.iter().all(|o| !o.status.is_failure()),
        "{report:?}"
    );
    actor.close().await;

    let done = wait_for(&served, &id, SessionState::Done).await;
    assert_eq!(done.answer.as_deref(), Some("Rome"));
    assert_eq!(done.result.as_ref().unwrap()["answer"], "Rome is 25°C");
    assert!(
        model.received().iter().any(|r| r
            .text()
            .contains("The person answered your question \"Which city?\": Rome")),
        "the model got the answer"
    );
    // The state changes were recorded, with their reasons.
    let events = served.client_events(&id).await;
    let states: Vec<&str> = events
        .iter()
        .map(|e| e["state"].as_str().unwrap())
        .collect();
    for state in ["queued", "active", "waiting", "done"] {
        assert!(states.contains(&state), "{states:?}");
    }
    served.terminate().await;
}

impl Served {
    /// The text of one of its pages (`/sessions/…`), as a browser gets it.
    pub async fn page(&self, path: &str) -> String {
        let answer = reqwest::get(format!("{}{path}", self.base)).await;
        answer.expect("the page").text().await.expect("its text")
    }

    /// A session's events, from its server-sent event stream (which ends
    /// once the session has).
    async fn client_events(&self, id: &str) -> Vec<Value> {
        let text = reqwest::get(format!("{}/api/sessions/{id}/events", self.base))
            .await
            .expect("events")
            .text()
            .await
            .expect("the stream ends with the session");
        text.split("\n\n")
            .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(|d| serde_json::from_str(d).expect("an event is JSON"))
            .collect()
    }
}

/// A session ordering a widget (`confirm: allow`), returned once its
/// order reached the site: its step is under way, not yet recorded (the
/// site answers the order slowly), for a test to cut it there.
pub(crate) async fn order_in_flight(served: &Served, sites: &Server) -> String {
    let id = submit(
        served,
        "Order one widget for Ada",
        &sites.url("order.html"),
        json!({ "confirm": "allow", "no_skills": true }),
    )
    .await;
    for _ in 0..800 {
        if !sites.posted("/order").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(sites.posted("/order").len(), 1, "the order was sent");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_step_goes_on_after_a_restart_without_repeating_the_order() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(crate::sessions::orders).await;
    let w = Workdir::new(&model);
    let args = ["--workers", "1", "--lease", "2"];
    let served = Served::serve(&w, &args).await;
    let id = order_in_flight(&served, &sites).await;
    served.kill9().await;

    let served = Served::serve(&w, &args).await;
    // The cut step is not repeated blindly: the click on "Place order" again
    // is held for a person, though the session said --confirm allow.
    let waiting = wait_for(&served, &id, SessionState::Waiting).await;
    let hold = waiting.hold.clone().expect("a held action");
    assert!(
        hold["command"].as_str().unwrap().starts_with("CLICK:"),
        "{hold}"
    );
    assert!(
        hold["element"].as_str().unwrap().contains("Place order"),
        "{hold}"
    );
    assert!(waiting.question.as_deref().unwrap().starts_with("Approve?"));
    assert_eq!(
        sites.posted("/order").len(),
        1,
        "nothing sent while it waits"
    );
    assert!(waiting.reason.contains("yes or no"), "{}", waiting.reason);

    // Refused from a terminal, as the terminal's no.
    let refused = w
        .run(&["sessions", "--server", &served.base, "answer", &id, "no"])
        .await;
    assert_eq!(refused.code(), Some(0), "{}", refused.stderr());
    let done = wait_for(&served, &id, SessionState::Done).await;
    assert_eq!(
        sites.posted("/order").len(),
        1,
        "the order was placed exactly once"
    );
    assert_eq!(done.result.as_ref().unwrap()["answer"], "Orders placed: 1");
    assert!(
        done.attempts >= 3,
        "taken, taken over, and taken after the answer"
    );
    // The question is where the run was parked, the no where it went on.
    let dir = std::path::Path::new(&done.run_dir);
    let asked = crate::support::records(dir, "step")
        .iter()
        .find_map(|s| s["asked"]["question"].as_str().map(str::to_string))
        .expect("a question recorded");
    assert!(
        asked.starts_with("Approve? seamark would CLICK:"),
        "{asked}"
    );
    let resumes = crate::support::records(dir, "resume");
    assert_eq!(resumes.last().unwrap()["answer"], "no", "{resumes:#?}");
    let events = served.client_events(&id).await;
    assert!(
        events
            .iter()
            .any(|e| e["reason"].as_str().unwrap_or_default().contains("lapsed")),
        "{events:#?}"
    );
    served.terminate().await;
}

/// Answers every task with its page's title, in one step.
pub fn titles(r: &Received) -> Reply {
    Reply::Text(format!(
        "ANSWER:{}\nCOMPLETE:read the title",
        r.task().rsplit(' ').next().unwrap_or_default()
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_to_the_api_gets_a_4xx_with_its_reason() {
    let model = ModelServer::answering(titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "0"]).await;
    let http = reqwest::Client::new();
    let base = served.base.clone();
    let post = |path: &str, body: &str, content_type: &str| {
        http.post(format!("{base}{path}"))
            .header("content-type", content_type)
            .body(body.to_string())
            .send()
    };
    let json_type = "application/json";
    let cases: Vec<(&str, &str, &str, u16, &str)> = vec![
        ("/api/sessions", "{", json_type, 400, "not JSON"),
        ("/api/sessions", "[]", json_type, 400, "JSON object"),
        ("/api/sessions", "{}", json_type, 400, "\"task\" is missing"),
        (
            "/api/sessions",
            r#"{"task":"x"}"#,
            json_type,
            400,
            "\"url\" is missing",
        ),
        (
            "/api/sessions",
            r#"{"task":"","url":"http://a.test/"}"#,
            json_type,
            400,
            "empty",
        ),
        (
            "/api/sessions",
            r#"{"task":5,"url":"http://a.test/"}"#,
            json_type,
            400,
            "must be a string",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"nope"}"#,
            json_type,
            400,
            "not a URL",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"file:///etc/passwd"}"#,
            json_type,
            400,
            "http or https",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","colour":1}"#,
            json_type,
            400,
            "unknown field \"colour\"",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","out":"/tmp"}"#,
            json_type,
            400,
            "cannot be set",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","storage_state":"/etc/shadow"}"#,
            json_type,
            400,
            "worker's disk",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","cdp":"auto"}"#,
            json_type,
            400,
            "cannot be set",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","max_steps":0}"#,
            json_type,
            400,
            "max-steps",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","max_steps":"many"}"#,
            json_type,
            400,
            "max-steps",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","max_steps":true}"#,
            json_type,
            400,
            "string or a number",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","no_skills":"yes"}"#,
            json_type,
            400,
            "true or false",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","confirm":"maybe"}"#,
            json_type,
            400,
            "confirm",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","secret":["pw=hunter2"]}"#,
            json_type,
            400,
            "would be stored",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","secret":"pw=totp:JBSWY3DP"}"#,
            json_type,
            400,
            "NAME=env:SEAMARK_SECRET_",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/","allow_domain":[1,{}]}"#,
            json_type,
            400,
            "string or a number",
        ),
        (
            "/api/sessions",
            r#"{"task":"x","url":"http://a.test/"}"#,
            "text/plain",
            415,
            "application/json",
        ),
        (
            "/api/sessions/nope/answer",
            r#"{"answer":"x"}"#,
            json_type,
            404,
            "no session nope",
        ),
        (
            "/api/sessions/nope/stop",
            "",
            json_type,
            404,
            "no session nope",
        ),
        (
            "/api/sessions/nope/answer",
            r#"{"answer":""}"#,
            json_type,
            400,
            "answer",
        ),
        (
            "/api/sessions/nope/answer",
            r#"{"answer":"x","more":1}"#,
            json_type,
            400,
            "nothing else",
        ),
        ("/api/nothing", "", json_type, 404, "no route"),
    ];
    for (path, body, content_type, status, says) in &cases {
        let reply = post(path, body, content_type).await.expect("a reply");
        let code = reply.status().as_u16();
        let text = reply.text().await.unwrap();
        // The reason, as the JSON error's text.
        let text = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or(text);
        assert_eq!(code, *status, "POST {path} {body}: {text}");
        assert!(
            text.contains(says),
            "POST {path} {body}: {text} (wanted {says:?})"
        );
    }
    // Too big a body.
    let big = format!(
        r#"{{"task":"{}","url":"http://a.test/"}}"#,
        "x".repeat(2 << 20)
    );
    let reply = post("/api/sessions", &big, json_type)
        .await
        .expect("a reply");
    assert_eq!(reply.status().as_u16(), 413);
    // A wrong state: answering a session that does not wait, stopping one that ended.
    let id = submit(&served, "Say hi", "http://a.test/", json!({})).await;
    let reply = post(
        &format!("/api/sessions/{id}/answer"),
        r#"{"answer":"x"}"#,
        json_type,
    )
    .await
    .unwrap();
    assert_eq!(reply.status().as_u16(), 409);
    assert!(reply
        .text()
        .await
        .unwrap()
        .contains("is queued, not waiting"));
    assert_eq!(
        served.client().stop(&id).await.expect("stopped").status,
        SessionState::Stopped
    );
    let again = served.client().stop(&id).await.expect_err("ended");
    assert!(again.to_string().contains("409"), "{again}");
    // Lists and methods.
    for (path, status) in [
        ("/api/sessions?state=sleeping", 400),
        ("/api/sessions?limit=0", 400),
        ("/api/sessions?limit=x", 400),
        ("/api/sessions?colour=red", 400),
        ("/api/sessions/nope", 404),
        ("/api/sessions/nope/events", 404),
        ("/sessions/nope", 404),
        ("/sessions/nope/run/report.html", 404),
        (&format!("/sessions/{id}/run/..%2f..%2fsessions.db"), 404),
        ("/api/sessions?state=stopped", 200),
    ] {
        let reply = http.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(reply.status().as_u16(), status, "GET {path}");
    }
    let reply = http
        .delete(format!("{base}/api/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 405);
    // A POST from another site's page is refused (no site can submit
    // through the person's browser).
    let reply = http
        .post(format!("{base}/api/sessions"))
        .header("content-type", json_type)
        .header("origin", "http://evil.test")
        .body(r#"{"task":"x","url":"http://a.test/"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 403);
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_others_can_reach_wants_a_token_and_every_route_checks_it() {
    let model = ModelServer::answering(titles).await;
    let w = Workdir::new(&model);
    let open = w.run(&["serve", "--listen", "0.0.0.0:0"]).await;
    assert_eq!(open.code(), Some(2), "{}", open.stderr());
    open.stderr_has("wants a token");

    let served = Served::serve(&w, &["--workers", "0", "--token", "s3cret"]).await;
    let http = reqwest::Client::new();
    for path in ["/", "/api/sessions", "/api/sessions/x", "/sessions/x"] {
        let reply = http
            .get(format!("{}{path}", served.base))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status().as_u16(), 401, "GET {path}");
        let reply = http
            .get(format!("{}{path}", served.base))
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap();
        assert_eq!(
            reply.status().as_u16(),
            401,
            "GET {path} with a wrong token"
        );
    }
    let with = Client::new(&served.base, Some("s3cret".into())).unwrap();
    assert!(with.list(None).await.expect("listed").is_empty());
    let without = served.client().list(None).await.expect_err("refused");
    assert!(without.to_string().contains("401"), "{without}");
    // The page's way in: the token once, then a cookie.
    let page = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}/?token=s3cret", served.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 303);
    let cookie = page.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    served.terminate().await;
}

/// Closes the account: clicks "Delete account" until the site says so.
fn deletes(r: &Received) -> Reply {
    Reply::Text(if r.url().contains("/deleted") {
        "ANSWER:closed\nCOMPLETE:the account is closed".into()
    } else {
        format!("CLICK:{}", r.id_of("Delete account"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_action_waits_for_approve_on_the_page_and_then_goes_ahead() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(deletes).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "1"]).await;
    let id = submit(
        &served,
        "Close my account",
        &sites.url("delete.html"),
        json!({ "no_skills": true }),
    )
    .await;
    let waiting = wait_for(&served, &id, SessionState::Waiting).await;
    let hold = waiting.hold.clone().expect("a held action");
    assert_eq!(hold["element"], "button \"Delete account\"", "{hold}");
    assert!(
        sites.posted("/deleted").is_empty(),
        "nothing done while it waits"
    );

    // The page shows what would be done, with Approve and Refuse.
    let fx = Fixture::open(&format!("{}/sessions/{id}", served.base)).await;
    let mut actor = fx.actor().await;
    let shown = actor
        .exec
        .observation()
        .expect("a look")
        .table
        .elements
        .clone();
    assert!(shown.iter().any(|e| e.name == "Refuse"), "{shown:?}");
    let approve = actor.id("Approve");
    let report = actor.run(&format!("CLICK:{approve}")).await;
    assert!(
        report.outcomes.iter().all(|o| !o.status.is_failure()),
        "{report:?}"
    );
    actor.close().await;

    let done = wait_for(&served, &id, SessionState::Done).await;
    assert_eq!(sites.posted("/deleted").len(), 1, "approved: done once");
    assert_eq!(done.answer.as_deref(), Some("yes"));
    // The yes is recorded as a person's, as at the terminal.
    let decisions: Vec<Value> =
        crate::support::records(std::path::Path::new(&done.run_dir), "step")
            .iter()
            .flat_map(|s| {
                s["report"]["confirmations"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
    assert!(
        decisions
            .iter()
            .any(|d| d["by"] == "a person" && d["allowed"] == true),
        "{decisions:#?}"
    );
    assert!(
        decisions.iter().any(|d| d["by"] == "parked for a person"),
        "{decisions:#?}"
    );
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_on_postgresql_drain_forty_sessions_and_one_killed_loses_none() {
    let pg = crate::postgres::Postgres::start().await;
    let sites = Server::start(None).await;
    let model = ModelServer::answering(titles).await;
    let w = Workdir::new(&model);
    let db = ["--db", pg.url.as_str()];
    let served = Served::serve(&w, &[db[0], db[1], "--workers", "0"]).await;
    let queue = [db[0], db[1], "--workers", "1", "--lease", "3"];
    let first = Served::worker(&w, &queue).await;
    let second = Served::worker(&w, &queue).await;
    let mut ids = Vec::new();
    for k in 0..40 {
        let task = format!("Say the number {k}");
        let url = sites.url(&format!("form.html?k={k}"));
        ids.push(
            submit(
                &served,
                &task,
                &url,
                json!({ "no_skills": true, "max_steps": 3 }),
            )
            .await,
        );
    }
    // Halfway, one worker's machine goes away.
    let client = served.client();
    for _ in 0..1200 {
        let done = client.list(Some("done")).await.expect("listed").len();
        if done >= 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    first.kill9().await;
    for (k, id) in ids.iter().enumerate() {
        let done = wait_for(&served, id, SessionState::Done).await;
        // Each session's own answer: none ran another's task.
        assert_eq!(done.result.as_ref().unwrap()["answer"], k.to_string());
        // One run each: a taken-over session goes on in its journal.
        let dir = std::path::Path::new(&done.run_dir);
        assert_eq!(
            crate::support::records(dir, "start").len(),
            1,
            "{}",
            done.run_dir
        );
    }
    // No session ran on two workers at once: a session held twice was taken
    // over only once its first worker's lease had lapsed.
    let mut taken_over = 0;
    for id in &ids {
        let events = served.client_events(id).await;
        let holds: Vec<&Value> = events.iter().filter(|e| e["state"] == "active").collect();
        for later in holds.iter().skip(1) {
            let reason = later["reason"].as_str().unwrap_or_default();
            assert!(
                reason.contains("lapsed") || reason.contains("a person asked"),
                "{id}: {events:#?}"
            );
            taken_over += 1;
        }
    }
    assert!(
        taken_over <= 1,
        "the killed worker held one session at most"
    );
    second.terminate().await;
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_after_its_run_ended_done_leaves_the_session_done_not_in_review() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "0"]).await;
    let url = sites.url("form.html?k=7");
    let task = "Say the number 7";
    let id = submit(
        &served,
        task,
        &url,
        json!({ "no_skills": true, "max_steps": 3 }),
    )
    .await;
    // A worker takes the session and its run ends done; the worker dies
    // before it tells the store.
    let db = w.path("seamark-serve/sessions.db");
    let store = seamark::coworker::Store::open(&db.to_string_lossy())
        .await
        .expect("the server's store");
    let taken = store
        .take("gone", Duration::from_millis(500))
        .await
        .expect("take")
        .expect("the queued session");
    assert_eq!(taken.session.id, id);
    let dir = w.path("gone-worker").join(&id).display().to_string();
    let ran = w
        .run(&[
            "run",
            "--task",
            task,
            "--url",
            &url,
            "--no-skills",
            "--out",
            &dir,
            "--json",
        ])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    // The gone worker had mirrored its run's journal to the database, line
    // by line, to its end.
    let journal = std::fs::read_to_string(std::path::Path::new(&dir).join("journal.jsonl"))
        .expect("the run's journal");
    for line in journal.split_inclusive('\n') {
        let frame = seamark::mirror::Frame {
            kind: seamark::mirror::FrameKind::Line,
            name: String::new(),
            data: line.as_bytes().to_vec(),
        };
        store.mirrored(&id, &frame).await.expect("mirrored");
    }
    // Another worker finds the lease lapsed: the run's own ending stands.
    let worker = Served::worker(&w, &["--workers", "1", "--lease", "3"]).await;
    let done = wait_for(&served, &id, SessionState::Done).await;
    assert_eq!(done.result.as_ref().unwrap()["answer"], "7");
    let kept = store.journal_text(&id).await.expect("the journal");
    assert!(
        !kept.contains("\"kind\":\"resume\""),
        "a done run is not run again: {kept}"
    );
    worker.terminate().await;
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_sent_to_a_server_runs_as_sessions_and_is_scored_as_a_batch() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "2"]).await;
    let line = |id: &str, k: u32, check: Value| {
        json!({
            "id": id,
            "task": format!("Say the number {k}"),
            "url": sites.url(&format!("form.html?k={k}")),
            "check": check,
        })
        .to_string()
    };
    let tasks = [
        line("answer", 1, json!({ "answer_contains": "1" })),
        line("page", 2, json!({ "text_contains": "Create your account" })),
        line("wrong", 3, json!({ "answer_contains": "seven" })),
    ]
    .join("\n");
    std::fs::write(w.path("tasks.jsonl"), tasks).unwrap();
    let ran = w
        .run(&[
            "batch",
            "tasks.jsonl",
            "--serve",
            &served.base,
            "--out",
            "b",
            "--max-steps",
            "3",
        ])
        .await;
    assert_eq!(
        ran.code(),
        Some(1),
        "one task fails its check\n{}",
        ran.stderr()
    );
    let results: Vec<Value> = std::fs::read_to_string(w.path("b/results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), 3);
    let passed = |id: &str| results.iter().find(|r| r["id"] == id).unwrap()["passed"].clone();
    assert_eq!(passed("answer"), true);
    assert_eq!(passed("page"), true, "{results:#?}");
    assert_eq!(passed("wrong"), false);
    // Each ran as a session of the server, in its run directory there.
    let sessions = served.client().list(None).await.unwrap();
    assert_eq!(sessions.len(), 3);
    for r in &results {
        let dir = r["run_dir"].as_str().unwrap();
        assert!(sessions.iter().any(|s| s.run_dir == dir), "{dir}");
    }
    // The page check went with the session as its run's own check.
    let page = sessions
        .iter()
        .find(|s| s.task == "Say the number 2")
        .unwrap();
    assert_eq!(page.options["expect_text"], json!(["Create your account"]));
    let summary = std::fs::read_to_string(w.path("b/summary.md")).unwrap();
    assert!(
        summary.contains("2/3") || summary.contains("2 of 3"),
        "{summary}"
    );
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_session_stops_when_a_person_stops_it() {
    let sites = Server::start(None).await;
    let model = ModelServer::start(vec![], crate::model_server::hang).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "1", "--lease", "3"]).await;
    let id = submit(&served, "Wait for ever", &sites.url("form.html"), json!({})).await;
    wait_for(&served, &id, SessionState::Active).await;
    // The run is under way: the model was asked.
    for _ in 0..300 {
        if !model.received().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let asked = w
        .run(&["sessions", "--server", &served.base, "stop", &id])
        .await;
    assert_eq!(asked.code(), Some(0), "{}", asked.stderr());
    let stopped = wait_for(&served, &id, SessionState::Stopped).await;
    assert_eq!(stopped.reason, "stopped by a person");
    // The run ended as Ctrl-C ends one: its journal's end says so.
    let ends = crate::support::records(std::path::Path::new(&stopped.run_dir), "end");
    assert_eq!(ends[0]["result"]["status"], "interrupted", "{ends:#?}");
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_cut_off_whose_journal_cannot_be_read_goes_to_review() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(crate::sessions::orders).await;
    let w = Workdir::new(&model);
    let args = ["--workers", "1", "--lease", "2"];
    let served = Served::serve(&w, &args).await;
    let id = order_in_flight(&served, &sites).await;
    served.kill9().await;
    // The journal's start, as the database keeps it, is broken: what the
    // cut step did cannot be checked.
    let db = w.path("seamark-serve/sessions.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .expect("the sessions' database");
    sqlx::query(
        "UPDATE run_journal SET line = '{\"kind\":\"start\",\"task\":' || char(10)
         WHERE seq = (SELECT MIN(seq) FROM run_journal WHERE session = $1)",
    )
    .bind(&id)
    .execute(&pool)
    .await
    .expect("the journal's first line broken");
    pool.close().await;

    let served = Served::serve(&w, &args).await;
    let review = wait_for(&served, &id, SessionState::Review).await;
    assert!(
        review.reason.contains("cannot be checked"),
        "{}",
        review.reason
    );
    assert_eq!(sites.posted("/order").len(), 1, "nothing was done again");
    served.terminate().await;
}
