//! The sessions page: every session and its state, the questions waiting
//! for a person with a box to answer each (Approve and Refuse for a held
//! action), a live view of a session's steps (its marked screenshots and
//! commands, from its journal, refreshed while it runs), and the report of
//! a session that ended. Server-rendered by askama; no script.

use std::path::Path;

use askama::Template;
use hyper::{Response, StatusCode};

use super::http::{respond, status_of, Body};
use super::{Session, SessionEvent, SessionState, Store};

const STYLE: &str = include_str!("../../templates/serve/serve.css");

/// A waiting session on the list page.
struct Waiting {
    id: String,
    task: String,
    question: String,
    since: String,
    hold: bool,
}

/// A row of the list.
struct Row {
    id: String,
    status: String,
    task: String,
    steps: i64,
    cost: String,
    updated: String,
}

#[derive(Template)]
#[template(path = "serve/sessions.html")]
struct SessionsPage {
    style: &'static str,
    /// Refreshed while sessions run, unless a question waits (a reload
    /// would lose an answer being typed).
    live: bool,
    counts: Vec<(String, i64)>,
    waiting: Vec<Waiting>,
    sessions: Vec<Row>,
}

/// A step of the live view.
struct StepCard {
    step: usize,
    url: String,
    commands: String,
    screenshot: Option<String>,
}

#[derive(Template)]
#[template(path = "serve/session.html")]
struct SessionPage {
    style: &'static str,
    live: bool,
    id: String,
    task: String,
    url: String,
    status: String,
    reason: String,
    steps: i64,
    cost: String,
    run_dir: String,
    answer: Option<String>,
    question: Option<String>,
    hold: bool,
    hold_screenshot: Option<String>,
    stoppable: bool,
    report: Option<String>,
    step_cards: Vec<StepCard>,
    events: Vec<SessionEvent>,
}

fn cost(usd: Option<f64>) -> String {
    usd.map(|c| format!("${c:.4}"))
        .unwrap_or_else(|| "–".into())
}

fn html(rendered: Result<String, askama::Error>) -> Response<Body> {
    match rendered {
        Ok(page) => respond(StatusCode::OK, "text/html; charset=utf-8", page),
        Err(e) => respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain; charset=utf-8",
            format!("the page could not be rendered: {e}"),
        ),
    }
}

fn problem(status: StatusCode, why: impl std::fmt::Display) -> Response<Body> {
    respond(status, "text/plain; charset=utf-8", why.to_string())
}

/// `/`: the sessions (`?state=` one state's), and what waits for a person.
pub async fn sessions(store: &Store, query: Option<&str>) -> Response<Body> {
    let state = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "state")
        .and_then(|(_, v)| SessionState::from_word(&v));
    let (listed, waiting, counts) = match (
        store.list(state, 200).await,
        store.list(Some(SessionState::Waiting), 200).await,
        store.counts().await,
    ) {
        (Ok(l), Ok(w), Ok(c)) => (l, w, c),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return problem(status_of(&e), e),
    };
    let running = counts
        .iter()
        .any(|(s, n)| *n > 0 && (s == "active" || s == "queued"));
    let page = SessionsPage {
        style: STYLE,
        live: running && waiting.is_empty(),
        counts,
        waiting: waiting
            .into_iter()
            .map(|s| Waiting {
                hold: s.hold.is_some(),
                question: s.question.clone().unwrap_or_default(),
                since: s.waiting_since.clone().unwrap_or_default(),
                id: s.id,
                task: s.task,
            })
            .collect(),
        sessions: listed
            .into_iter()
            .map(|s| Row {
                status: s.status.to_string(),
                cost: cost(s.cost_usd),
                id: s.id,
                task: s.task,
                steps: s.steps,
                updated: s.updated,
            })
            .collect(),
    };
    html(page.render())
}

/// `/sessions/{id}`: one session, live while it runs.
pub async fn session(store: &Store, id: &str) -> Response<Body> {
    let (session, events) = match (store.get(id).await, store.events(id, 0).await) {
        (Ok(s), Ok(e)) => (s, e),
        (Err(e), _) | (_, Err(e)) => return problem(status_of(&e), e),
    };
    let dir = Path::new(&session.run_dir);
    let file_link = |name: &str| format!("/sessions/{id}/run/{name}");
    let step_cards = crate::report::RunLog::read(dir)
        .map(|log| {
            log.steps
                .iter()
                .map(|s| StepCard {
                    step: s.step,
                    url: s.url.clone(),
                    commands: s.commands.join("\n"),
                    screenshot: (!s.screenshot.is_empty()).then(|| file_link(&s.screenshot)),
                })
                .collect()
        })
        .unwrap_or_default();
    let hold_screenshot = session
        .hold
        .as_ref()
        .and_then(|h| h["screenshot"].as_str())
        .and_then(|p| Path::new(p).file_name())
        .map(|n| file_link(&n.to_string_lossy()));
    let report = (session.status.ended() && dir.join("report.html").is_file())
        .then(|| file_link("report.html"));
    let Session {
        id,
        status,
        task,
        url,
        reason,
        steps,
        cost_usd,
        run_dir,
        answer,
        question,
        hold,
        ..
    } = session;
    let page = SessionPage {
        style: STYLE,
        live: matches!(status, SessionState::Active | SessionState::Queued),
        stoppable: !status.ended(),
        status: status.to_string(),
        question: question.filter(|_| status == SessionState::Waiting),
        hold: hold.is_some(),
        cost: cost(cost_usd),
        hold_screenshot,
        report,
        step_cards,
        events,
        id,
        task,
        url,
        reason,
        steps,
        run_dir,
        answer,
    };
    html(page.render())
}

/// The answer form: the session is queued again, and the person sees it.
pub async fn answered(store: &Store, id: &str, fields: &[(String, String)]) -> Response<Body> {
    let answer = fields
        .iter()
        .find(|(k, _)| k == "answer")
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty());
    let Some(answer) = answer else {
        return problem(StatusCode::BAD_REQUEST, "the answer is empty");
    };
    match store.answer(id, answer).await {
        Ok(_) => see(&format!("/sessions/{id}")),
        Err(e) => problem(status_of(&e), e),
    }
}

/// The stop button.
pub async fn stopped(store: &Store, id: &str) -> Response<Body> {
    match store.stop(id).await {
        Ok(_) => see(&format!("/sessions/{id}")),
        Err(e) => problem(status_of(&e), e),
    }
}

/// A file of a session's run directory: its report and screenshots.
pub async fn run_file(store: &Store, id: &str, name: &str) -> Response<Body> {
    let session = match store.get(id).await {
        Ok(s) => s,
        Err(e) => return problem(status_of(&e), e),
    };
    let Some(path) = crate::serve::local_path(Path::new(&session.run_dir), name) else {
        return problem(StatusCode::NOT_FOUND, "not found");
    };
    match tokio::fs::read(&path).await {
        Ok(bytes) if path.is_file() => respond(StatusCode::OK, crate::serve::mime_of(&path), bytes),
        _ => problem(StatusCode::NOT_FOUND, "not found"),
    }
}

fn see(location: &str) -> Response<Body> {
    let mut r = respond(StatusCode::SEE_OTHER, "text/plain", "");
    if let Ok(v) = location.parse() {
        r.headers_mut().insert("location", v);
    }
    r
}
