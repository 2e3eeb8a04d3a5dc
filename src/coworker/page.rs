//! The sessions page: every session and its state, the questions waiting
//! for a person with a box to answer each (Approve and Refuse for a held
//! action), a live view of a session's steps (its marked screenshots and
//! commands, from its journal, refreshed while it runs), and the report of
//! a session that ended. Server-rendered by askama; no script.

use std::path::Path;

use askama::Template;
use hyper::{Response, StatusCode};

use super::http::{respond, status_of, Body};
use super::{Account, Session, SessionEvent, SessionState, Store};

const STYLE: &str = include_str!("../../templates/serve/serve.css");

/// A waiting session on the list page.
struct Waiting {
    id: String,
    task: String,
    account: Option<String>,
    question: String,
    since: String,
    hold: bool,
    /// It waits for a person's hands in its live view, not for words.
    hands: bool,
}

/// A row of the list.
struct Row {
    id: String,
    status: String,
    task: String,
    account: String,
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
    /// Whether a question waits for a typed answer (not only holds).
    has_questions: bool,
    sessions: Vec<Row>,
    accounts: Vec<Account>,
    /// Skills that wait for a person's review.
    proposed: usize,
}

#[derive(Template)]
#[template(path = "serve/new.html")]
struct NewTaskPage {
    style: &'static str,
    accounts: Vec<String>,
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
    /// The page reloads itself every 2 s (a session under way without a
    /// live view).
    refresh: bool,
    /// Its live view's path, while its run has one.
    live_view: Option<String>,
    /// Why the agent asks for a person's hands, while it waits for them.
    hands: Option<String>,
    id: String,
    task: String,
    url: String,
    status: String,
    reason: String,
    steps: i64,
    cost: String,
    run_dir: String,
    answer: Option<String>,
    account: Option<String>,
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

/// A plain-text page that says what went wrong.
pub(super) fn problem(status: StatusCode, why: impl std::fmt::Display) -> Response<Body> {
    respond(status, "text/plain; charset=utf-8", why.to_string())
}

/// `/`: the sessions (`?state=` one state's), and what waits for a person.
pub async fn sessions(store: &Store, query: Option<&str>) -> Response<Body> {
    let state = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "state")
        .and_then(|(_, v)| SessionState::from_word(&v));
    // At once: a database that is down is told after one wait, not three.
    let (listed, waiting, counts, accounts, skills) = match futures::try_join!(
        store.list(state, 200),
        store.list(Some(SessionState::Waiting), 200),
        store.counts(),
        store.accounts(),
        store.skills(),
    ) {
        Ok(all) => all,
        Err(e) => return problem(status_of(&e), e),
    };
    let running = counts
        .iter()
        .any(|(s, n)| *n > 0 && (s == "active" || s == "queued"));
    // The oldest question first: answered in the order they came.
    let mut waiting = waiting;
    waiting.reverse();
    let page = SessionsPage {
        style: STYLE,
        live: running && waiting.is_empty(),
        counts,
        has_questions: waiting
            .iter()
            .any(|s| s.hold.is_none() && s.worker.is_none()),
        waiting: waiting
            .into_iter()
            .map(|s| Waiting {
                hold: s.hold.is_some(),
                hands: s.worker.is_some(),
                question: s.question.clone().unwrap_or_default(),
                since: s.waiting_since.clone().unwrap_or_default(),
                id: s.id,
                task: s.task,
                account: s.account,
            })
            .collect(),
        accounts,
        proposed: skills.iter().filter(|k| k.proposal.is_some()).count(),
        sessions: listed
            .into_iter()
            .map(|s| Row {
                status: s.status.to_string(),
                cost: cost(s.cost_usd),
                id: s.id,
                task: s.task,
                account: s.account.unwrap_or_default(),
                steps: s.steps,
                updated: s.updated,
            })
            .collect(),
    };
    html(page.render())
}

/// `/sessions/{id}`: one session, live while it runs.
pub async fn session(store: &Store, id: &str) -> Response<Body> {
    let (session, events) = match futures::try_join!(store.get(id), store.events(id, 0)) {
        Ok(both) => both,
        Err(e) => return problem(status_of(&e), e),
    };
    // The run as the database keeps it: the worker that ran it may be gone.
    let (journal, has_report) = match futures::try_join!(
        store.journal_text(id),
        store.has_run_file(id, "report.html")
    ) {
        Ok(both) => both,
        Err(e) => return problem(status_of(&e), e),
    };
    let file_link = |name: &str| format!("/sessions/{id}/run/{name}");
    let log = crate::report::RunLog::parse(Path::new(&session.run_dir), &journal);
    let step_cards = log
        .steps
        .iter()
        .map(|s| StepCard {
            step: s.step,
            url: s.url.clone(),
            commands: s.commands.join("\n"),
            screenshot: (!s.screenshot.is_empty()).then(|| file_link(&s.screenshot)),
        })
        .collect();
    let hold_screenshot = session
        .hold
        .as_ref()
        .and_then(|h| h["screenshot"].as_str())
        .and_then(|p| Path::new(p).file_name())
        .map(|n| file_link(&n.to_string_lossy()));
    let report = (session.status.ended() && has_report).then(|| file_link("report.html"));
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
        account,
        live,
        worker,
        ..
    } = session;
    // Waiting with its worker still holding it: for a person's hands, in
    // the live view, not for words.
    let hands = question
        .clone()
        .filter(|_| status == SessionState::Waiting && worker.is_some());
    let page = SessionPage {
        style: STYLE,
        refresh: matches!(status, SessionState::Active | SessionState::Queued) && live.is_none(),
        live_view: live,
        hands,
        stoppable: !status.ended(),
        status: status.to_string(),
        question: question.filter(|_| status == SessionState::Waiting && worker.is_none()),
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
        account,
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

/// A skill as the skills page shows it.
struct SkillView {
    task: String,
    site: String,
    params: String,
    /// Each step: its page, then each command with what it acts on.
    steps: Vec<String>,
}

impl SkillView {
    fn of(skill: &crate::skill::Skill) -> SkillView {
        SkillView {
            task: skill.task.clone(),
            site: skill.site.clone(),
            params: if skill.params.is_empty() {
                "none".into()
            } else {
                skill.params.join(", ")
            },
            steps: skill
                .steps
                .iter()
                .map(|step| {
                    let mut text = format!("on {}", step.page);
                    for a in &step.actions {
                        text.push_str(&format!("\n{}", a.command));
                        if let Some(t) = &a.target {
                            text.push_str(&format!("  on {}", t.describe_text()));
                        }
                    }
                    if let Some(then) = &step.then_model {
                        text.push_str(&format!("\nthen the model: {then}"));
                    }
                    text
                })
                .collect(),
        }
    }
}

/// A skill's card on the skills page.
struct SkillCard {
    name: String,
    state: String,
    from_session: Option<String>,
    stale: Option<String>,
    stale_session: Option<String>,
    proposal: Option<SkillView>,
    approved: Option<SkillView>,
}

#[derive(Template)]
#[template(path = "serve/skills.html")]
struct SkillsPage {
    style: &'static str,
    skills: Vec<SkillCard>,
}

/// `/skills`: the proposals, side by side with what each would replace,
/// and the approved skills with those going stale.
pub async fn skills(store: &Store) -> Response<Body> {
    let skills = match store.skills().await {
        Ok(skills) => skills,
        Err(e) => return problem(status_of(&e), e),
    };
    let skills = skills
        .into_iter()
        .map(|k| SkillCard {
            proposal: k.proposal.as_ref().map(SkillView::of),
            approved: k.approved.as_ref().map(SkillView::of),
            name: k.name,
            state: k.state,
            from_session: k.proposal_session,
            stale: k.stale,
            stale_session: k.stale_session,
        })
        .collect();
    html(
        SkillsPage {
            style: STYLE,
            skills,
        }
        .render(),
    )
}

/// The Approve and Refuse buttons of a proposed skill.
pub async fn decided(store: &Store, name: &str, approve: bool) -> Response<Body> {
    match store.decide_skill(name, approve).await {
        Ok(()) => see("/skills"),
        Err(e) => problem(status_of(&e), e),
    }
}

/// `/new`: the form that gives the server a task.
pub async fn new_task(store: &Store) -> Response<Body> {
    match store.accounts().await {
        Ok(accounts) => html(
            NewTaskPage {
                style: STYLE,
                accounts: accounts.into_iter().map(|a| a.name).collect(),
            }
            .render(),
        ),
        Err(e) => problem(status_of(&e), e),
    }
}

/// The new-task form's fields as a session's JSON: empty fields left out,
/// a number as a number, the domains as a list.
pub fn task_of_form(fields: &[(String, String)]) -> serde_json::Value {
    let mut task = serde_json::Map::new();
    for (name, value) in fields {
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        let value = match name.as_str() {
            "max_steps" => value
                .parse::<u64>()
                .map(serde_json::Value::from)
                .unwrap_or_else(|_| value.into()),
            "allow_domain" => value
                .split([',', ' ', '\n'])
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(serde_json::Value::from)
                .collect(),
            "expect_text" => serde_json::json!([value]),
            _ => value.into(),
        };
        task.insert(name.clone(), value);
    }
    serde_json::Value::Object(task)
}

/// The answers form: every answer given (`answer-<id>`) goes to its
/// session; one that cannot be taken is said, the others taken still.
pub async fn answered_all(store: &Store, fields: &[(String, String)]) -> Response<Body> {
    let mut refused = Vec::new();
    let mut taken = 0;
    for (name, value) in fields {
        let (Some(id), answer) = (name.strip_prefix("answer-"), value.trim()) else {
            continue;
        };
        if answer.is_empty() {
            continue;
        }
        match store.answer(id, answer).await {
            Ok(_) => taken += 1,
            Err(e) => refused.push(format!("session {id}: {e}")),
        }
    }
    if refused.is_empty() && taken > 0 {
        return see("/");
    }
    if taken == 0 && refused.is_empty() {
        return problem(StatusCode::BAD_REQUEST, "no answer was given");
    }
    problem(
        StatusCode::CONFLICT,
        format!(
            "{taken} answers taken; these were not:\n{}",
            refused.join("\n")
        ),
    )
}

/// The stop button.
pub async fn stopped(store: &Store, id: &str) -> Response<Body> {
    match store.stop(id).await {
        Ok(_) => see(&format!("/sessions/{id}")),
        Err(e) => problem(status_of(&e), e),
    }
}

/// A file of a session's run directory: its report and screenshots.
///
/// Only what seamark wrote itself is shown in the browser: its pictures,
/// its report (a policy that lets its own script run, in an origin of its
/// own, so that it can reach nothing of the server's), and its records as
/// plain text. Anything else, and whatever a visited site made the browser
/// download, is given as an attachment: never run on the server's origin.
/// The files are the database's: no path of the server's disk is read.
pub async fn run_file(store: &Store, id: &str, segments: &[&str]) -> Response<Body> {
    let session = match store.get(id).await {
        Ok(s) => s,
        Err(e) => return problem(status_of(&e), e),
    };
    let not_found = || problem(StatusCode::NOT_FOUND, "not found");
    let plain = |s: &&str| !matches!(*s, "" | "." | "..") && !s.contains(['/', '\\', '\0']);
    if segments.is_empty() || !segments.iter().all(plain) {
        return not_found();
    }
    let name = segments.join("/");
    // A storage state is a login: never given to a page.
    if name == crate::storage::RUN_STATE {
        return not_found();
    }
    let bytes = match store.run_file(&session.id, &name).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return not_found(),
        Err(e) => return problem(status_of(&e), e),
    };
    let shown = RunFile::of(&name);
    let mut r = respond(StatusCode::OK, shown.content_type(&name), bytes);
    let headers = r.headers_mut();
    if let Ok(v) = shown.policy().parse() {
        headers.insert("content-security-policy", v);
    }
    if shown == RunFile::Attachment {
        let file = Path::new(&name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let quoted: String = file
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() && c != '"' && c != '\\' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if let Ok(v) = format!("attachment; filename=\"{quoted}\"").parse() {
            headers.insert("content-disposition", v);
        }
    }
    r
}

/// How a file of a run directory is given to the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunFile {
    /// The run's report: seamark's page, with its own script.
    Report,
    /// A picture seamark took or drew.
    Picture,
    /// A record seamark wrote, shown as plain text.
    Text,
    /// Anything else: saved, never shown.
    Attachment,
}

impl RunFile {
    /// What the file at `name` (a path in the run directory) is.
    fn of(name: &str) -> RunFile {
        let path = Path::new(name);
        let downloaded = path
            .components()
            .next()
            .is_some_and(|c| c.as_os_str() == crate::agent::DOWNLOADS);
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match extension.as_str() {
            _ if downloaded => RunFile::Attachment,
            "html" if name == "report.html" => RunFile::Report,
            "png" | "jpg" | "jpeg" | "gif" | "webp" => RunFile::Picture,
            "json" | "jsonl" | "log" | "txt" | "har" | "md" => RunFile::Text,
            _ => RunFile::Attachment,
        }
    }

    fn content_type(self, name: &str) -> &'static str {
        match self {
            RunFile::Report => "text/html; charset=utf-8",
            RunFile::Picture => crate::serve::mime_of(Path::new(name)),
            RunFile::Text => "text/plain; charset=utf-8",
            RunFile::Attachment => "application/octet-stream",
        }
    }

    /// Its Content-Security-Policy. The report runs sandboxed: an opaque
    /// origin, so its script reaches nothing of the server's (no cookie, no
    /// read of the API, a POST's `Origin: null` refused).
    fn policy(self) -> &'static str {
        match self {
            RunFile::Report => {
                "sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox \
                 allow-downloads; default-src 'none'; img-src 'self' data:; \
                 style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; \
                 form-action 'none'; frame-ancestors 'none'"
            }
            RunFile::Picture | RunFile::Text | RunFile::Attachment => {
                "sandbox; default-src 'none'; frame-ancestors 'none'"
            }
        }
    }
}

/// A redirect after a form's post.
pub(super) fn see(location: &str) -> Response<Body> {
    let mut r = respond(StatusCode::SEE_OTHER, "text/plain", "");
    if let Ok(v) = location.parse() {
        r.headers_mut().insert("location", v);
    }
    r
}
