//! `seamark serve` as a team's coworker (issue 82): sessions' results saved
//! on PostgreSQL whatever they cost, events as JSON in the order they
//! happened, a server that refuses what it cannot run, and a schema made
//! by many processes at once.

use std::time::Duration;

use seamark::coworker::client::ClientError;
use seamark::coworker::store::{Ending, NewSession};
use seamark::coworker::{SessionState, Store};
use serde_json::{json, Value};

use crate::coworker::{submit, titles, wait_for, Served};
use crate::model_server::{ModelServer, Received, Reply};
use crate::server::Server;
use crate::support::{Fixture, Workdir};

/// Queues a session with no options through the store itself.
async fn queue(store: &Store, id: &str) {
    let new = NewSession {
        task: "a task",
        url: "http://127.0.0.1/",
        account: None,
        options: &serde_json::Map::new(),
        run_dir: "/nowhere",
    };
    store.submit(id, &new).await.expect("queued");
}

/// Bug: on PostgreSQL a session ended without a cost (one done from a
/// skill) made its connection's cached statement take the cost as a
/// float4, and the next session's cost on that connection failed to save
/// ("incorrect binary data format in bind parameter 7"): it went to review.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_with_and_without_a_cost_all_save_their_ending_on_postgresql() {
    let pg = crate::postgres::Postgres::start().await;
    let store = Store::open(&pg.url).await.expect("the store");
    // One at a time, so that each statement goes out on the same pooled
    // connection as the one before it.
    let costs = [None, Some(0.25), None, Some(0.0), Some(1.5), None];
    for (k, cost) in costs.iter().enumerate() {
        let id = format!("s{k}");
        queue(&store, &id).await;
        let taken = store
            .take("w", Duration::from_secs(30))
            .await
            .expect("taken")
            .expect("a session to take");
        assert_eq!(taken.session.id, id);
        let ending = Ending {
            state: SessionState::Done,
            reason: "done".into(),
            question: None,
            hold: None,
            result: Some(serde_json::json!({ "status": "done" })),
            steps: Some(2),
            cost_usd: *cost,
        };
        let saved = store.finish(&id, "w", &ending).await;
        assert!(
            matches!(saved, Ok(true)),
            "session {k} (cost {cost:?}): {saved:?}"
        );
        let session = store.get(&id).await.expect("read back");
        assert_eq!(session.status, SessionState::Done);
        assert_eq!(session.cost_usd, *cost, "session {k}");
    }
}

/// Eight processes' stores opened at the same moment on an empty
/// PostgreSQL database (a `serve` and its workers started together): each
/// makes or finds the schema, none fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_opened_at_once_on_an_empty_postgresql_database_all_open() {
    let pg = crate::postgres::Postgres::start().await;
    let admin = sqlx::postgres::PgPool::connect(&pg.url)
        .await
        .expect("PostgreSQL");
    sqlx::query("CREATE DATABASE fresh")
        .execute(&admin)
        .await
        .expect("a new database");
    let fresh = pg.url.replace("/postgres", "/fresh");
    let opened = futures::future::join_all((0..8).map(|_| Store::open(&fresh))).await;
    for (k, store) in opened.iter().enumerate() {
        assert!(store.is_ok(), "store {k}: {:?}", store.as_ref().err());
    }
    let store = opened.into_iter().next().unwrap().unwrap();
    queue(&store, "one").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_no_model_warns_at_start_and_refuses_a_session_naming_what_is_missing() {
    let model = ModelServer::answering(titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve_with_env(&w, &[], &[("SEAMARK_MODEL", "")]).await;
    let said = served.said();
    assert!(
        said.contains("warning") && said.contains("no model configured"),
        "{said}"
    );
    let client = served.client();
    let refused = |options: Value| {
        let mut body = options.as_object().cloned().unwrap_or_default();
        body.insert("task".into(), "Say the number 1".into());
        body.insert("url".into(), "http://127.0.0.1:9/".into());
        let client = client.clone();
        async move { client.submit(Value::Object(body)).await }
    };
    match refused(json!({})).await {
        Err(ClientError::Refused { status, reason }) => {
            assert_eq!(status, 400);
            assert!(reason.contains("no model configured"), "{reason}");
        }
        other => panic!("a session with no model was taken: {other:?}"),
    }
    match refused(json!({ "model": "anthropic/claude" })).await {
        Err(ClientError::Refused { status, reason }) => {
            assert_eq!(status, 400);
            assert!(reason.contains("ANTHROPIC_API_KEY"), "{reason}");
        }
        other => panic!("a session with an unusable model was taken: {other:?}"),
    }
    // A model the workers can call is taken, and runs.
    let sites = Server::start(None).await;
    let id = submit(
        &served,
        "Say the number 4",
        &sites.url("form.html?k=4"),
        json!({ "model": "openai/scripted", "no_skills": true, "max_steps": 3 }),
    )
    .await;
    wait_for(&served, &id, SessionState::Done).await;
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_events_come_as_json_in_the_order_they_happened_to_the_millisecond() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &[]).await;
    let id = submit(
        &served,
        "Say the number 5",
        &sites.url("form.html?k=5"),
        json!({ "no_skills": true, "max_steps": 3 }),
    )
    .await;
    wait_for(&served, &id, SessionState::Done).await;
    let events = served.client().events(&id).await.expect("events as JSON");
    let states: Vec<&str> = events.iter().map(|e| e.state.as_str()).collect();
    let at = |state: &str| states.iter().position(|s| *s == state);
    assert_eq!(states.first(), Some(&"queued"), "{states:?}");
    assert!(at("queued") < at("active"), "{states:?}");
    assert!(at("active") < at("step"), "{states:?}");
    assert_eq!(states.last(), Some(&"done"), "{states:?}");
    for pair in events.windows(2) {
        assert!(pair[0].seq < pair[1].seq, "{events:#?}");
        assert!(pair[0].at_ms <= pair[1].at_ms, "{events:#?}");
    }
    for e in &events {
        let ms = e.at.rsplit('.').next().unwrap_or_default();
        assert!(
            ms.len() == 4 && ms.ends_with('Z'),
            "not to the millisecond: {}",
            e.at
        );
    }
    // A client that asks for no JSON still gets the stream.
    let streamed = reqwest::get(format!("{}/api/sessions/{id}/events", served.base))
        .await
        .expect("events");
    assert_eq!(streamed.headers()["content-type"], "text/event-stream");
    served.terminate().await;
}

/// The scripted member of the club: says who the page says it is; a task
/// that asks first waits for a person's answer before it does.
fn club_member(r: &Received) -> Reply {
    let text = r.text();
    let answered = text.contains("The person answered your question");
    if r.task().starts_with("Ask") && !answered {
        return Reply::Text("ASK:Go on?".into());
    }
    if r.task().starts_with("Sign out") && !r.url().contains("out=1") {
        return Reply::Text(format!("CLICK:{}", r.id_of("Sign out")));
    }
    let who = [
        r.first_named("link", "Welcome back"),
        r.first_named("link", "Signed in"),
        r.first_named("link", "Signed out"),
    ]
    .into_iter()
    .find(|n| n != "none")
    .unwrap_or_else(|| "none".into());
    Reply::Text(format!("ANSWER:{who}\nCOMPLETE:said who I am"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_of_one_account_run_one_at_a_time_each_logged_in_as_the_last_one_left_it() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(club_member).await;
    let w = Workdir::new(&model);
    let pg = crate::postgres::Postgres::start().await;
    let pin = [("SEAMARK_SECRET_PIN", "4321")];
    let served = Served::serve_with_env(&w, &["--db", &pg.url, "--workers", "2"], &pin).await;
    let client = served.client();
    client
        .define_account(json!({ "name": "club", "secrets": ["pin=env:SEAMARK_SECRET_PIN"] }))
        .await
        .expect("an account");
    let url = sites.url("club.html");
    let of_club = json!({ "account": "club", "no_skills": true, "max_steps": 4 });
    // The first signs in (the site sets its cookie), then asks and waits.
    let first = submit(&served, "Ask, then say who you are", &url, of_club.clone()).await;
    wait_for(&served, &first, SessionState::Waiting).await;
    // Two more of the same account, at once, with two workers free.
    let second = submit(&served, "Say who you are", &url, of_club.clone()).await;
    let third = submit(&served, "Say who you are, again", &url, of_club.clone()).await;
    let mut most_active = 0;
    loop {
        let sessions = client.list(None).await.expect("listed");
        let ours = |id: &String| sessions.iter().find(|s| &s.id == id).cloned();
        let (b, c) = (ours(&second).unwrap(), ours(&third).unwrap());
        let active = sessions
            .iter()
            .filter(|s| s.status == SessionState::Active)
            .count();
        most_active = most_active.max(active);

        if b.status.ended() && c.status.ended() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert_eq!(most_active, 1, "two sessions of one account ran at once");
    // Each of the two that waited said which session held the account.
    let mut told_why = false;
    for id in [&second, &third] {
        let events = client.events(id).await.expect("events");
        told_why |= events.iter().any(|e| {
            e.state == "queued" && e.reason.starts_with("account club is in use by session ")
        });
    }
    assert!(
        told_why,
        "a waiting session said which session holds its account"
    );
    // The waiting first one held nothing: the others ran while it waited.
    assert_eq!(
        client.get(&first).await.unwrap().status,
        SessionState::Waiting
    );
    let said = |s: &seamark::coworker::Session| {
        s.result.as_ref().unwrap()["answer"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let b = wait_for(&served, &second, SessionState::Done).await;
    let c = wait_for(&served, &third, SessionState::Done).await;
    // Each started logged in with the cookie the site set in the first.
    let member = sites
        .cookies("/club.html")
        .iter()
        .find_map(|c| c.split("member=").nth(1).map(|v| v[..6].to_string()))
        .expect("a later visit came with the login cookie");
    assert_eq!(said(&b), format!("Welcome back member {member}"));
    assert_eq!(said(&c), format!("Welcome back member {member}"));
    // The first goes on once answered, its account free again.
    client.answer(&first, "yes").await.expect("answered");
    let a = wait_for(&served, &first, SessionState::Done).await;
    assert_eq!(said(&a), format!("Welcome back member {member}"));
    let accounts = client.accounts().await.expect("accounts");
    assert_eq!(accounts.len(), 1, "{accounts:?}");
    let club = &accounts[0];
    assert_eq!(club.login, "kept", "{club:?}");
    assert_eq!(club.holder, None);
    assert_eq!(club.secrets, vec!["pin=env:SEAMARK_SECRET_PIN"]);
    assert!(
        !serde_json::to_string(&accounts).unwrap().contains(&member),
        "the login's cookies are never shown"
    );
    // The CLI lists it too.
    let listed = w
        .run(&["sessions", "--server", &served.base, "accounts"])
        .await;
    listed.stdout_has("club  login kept");
    // A session the site logs out leaves the login broken, and says so.
    let out = submit(&served, "Sign out of the club", &url, of_club.clone()).await;
    let signed_out = wait_for(&served, &out, SessionState::Done).await;
    assert_eq!(said(&signed_out), "Signed out");
    let club = client.accounts().await.expect("accounts").remove(0);
    assert_eq!(club.login, "broken", "{club:?}");
    assert!(
        club.note.contains(&format!("session {out}")) && club.note.contains("member"),
        "{club:?}"
    );
    let listed = w
        .run(&["sessions", "--server", &served.base, "accounts"])
        .await;
    listed.stdout_has("club  login broken");
    served.terminate().await;
}

/// Gives a task through the page's form, in a real browser: gives back
/// the new session's id, read off the page it lands on.
async fn give_task_on_the_page(served: &Served, task: &str, url: &str, account: &str) -> String {
    let fx = Fixture::open(&format!("{}/new", served.base)).await;
    let mut actor = fx.actor().await;
    let (task_box, url_box, account_box, start) = (
        actor.id("Task"),
        actor.id("Start URL"),
        actor.id("Account"),
        actor.id("Start"),
    );
    let report = actor
        .run(&format!(
            "TYPE:{task_box}:{task}\nTYPE:{url_box}:{url}\nTYPE:{account_box}:{account}\nCLICK:{start}"
        ))
        .await;
    assert!(
        report.outcomes.iter().all(|o| !o.status.is_failure()),
        "{report:?}"
    );
    let landed = actor.look().await.url.clone();
    actor.close().await;
    landed
        .split("/sessions/")
        .nth(1)
        .unwrap_or_else(|| panic!("the form did not lead to the session: {landed}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_given_on_the_page_ask_and_both_questions_are_answered_in_one_post() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(crate::sessions::asks_the_city).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "2"]).await;
    let url = sites.url("lookup.html");
    let first = give_task_on_the_page(
        &served,
        "Look up the weather for the first person",
        &url,
        "ann",
    )
    .await;
    let second = give_task_on_the_page(
        &served,
        "Look up the weather for the second person",
        &url,
        "bob",
    )
    .await;
    let a = wait_for(&served, &first, SessionState::Waiting).await;
    let b = wait_for(&served, &second, SessionState::Waiting).await;
    assert_eq!(a.account.as_deref(), Some("ann"));
    assert_eq!(b.account.as_deref(), Some("bob"));
    assert_eq!(a.url, url, "the form's URL is the session's");

    // Both questions on one screen, each naming its task and account.
    let fx = Fixture::open(&format!("{}/", served.base)).await;
    let mut actor = fx.actor().await;
    let text = actor.look().await.table.elements.clone();
    let names: Vec<&str> = text.iter().map(|e| e.name.as_str()).collect();
    assert!(
        names.contains(&"answer to: Look up the weather for the first person"),
        "{names:?}"
    );
    let (to_first, to_second, send) = (
        actor.id("answer to: Look up the weather for the first person"),
        actor.id("answer to: Look up the weather for the second person"),
        actor.id("Send answers"),
    );
    let report = actor
        .run(&format!(
            "TYPE:{to_first}:Rome\nTYPE:{to_second}:Oslo\nCLICK:{send}"
        ))
        .await;
    assert!(
        report.outcomes.iter().all(|o| !o.status.is_failure()),
        "{report:?}"
    );
    actor.close().await;
    let a = wait_for(&served, &first, SessionState::Done).await;
    let b = wait_for(&served, &second, SessionState::Done).await;
    assert_eq!(a.answer.as_deref(), Some("Rome"));
    assert_eq!(b.answer.as_deref(), Some("Oslo"));
    assert!(a.result.unwrap()["answer"]
        .as_str()
        .unwrap()
        .starts_with("Rome"));
    assert!(b.result.unwrap()["answer"]
        .as_str()
        .unwrap()
        .starts_with("Oslo"));
    // The two answers went in one post: both were queued before either
    // was taken again.
    let events_a = served.client().events(&first).await.unwrap();
    let events_b = served.client().events(&second).await.unwrap();
    let answered = |events: &[seamark::coworker::SessionEvent]| {
        events
            .iter()
            .find(|e| e.reason.starts_with("answered"))
            .map(|e| e.seq)
            .unwrap()
    };
    let resumed = |events: &[seamark::coworker::SessionEvent], after: i64| {
        events
            .iter()
            .find(|e| e.state == "active" && e.seq > after)
            .map(|e| e.seq)
            .unwrap()
    };
    let (qa, qb) = (answered(&events_a), answered(&events_b));
    assert!(qb < resumed(&events_a, qa) || qa < resumed(&events_b, qb));
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_goes_on_on_another_machine_after_its_worker_and_its_folder_are_gone() {
    let pg = crate::postgres::Postgres::start().await;
    let sites = Server::start(None).await;
    let model = ModelServer::answering(crate::sessions::orders).await;
    let w = Workdir::new(&model);
    let (serve_runs, runs_a, runs_b) = (w.path("serve"), w.path("machine-a"), w.path("machine-b"));
    let folder = |p: &std::path::PathBuf| p.display().to_string();
    let served = Served::serve(
        &w,
        &[
            "--db",
            &pg.url,
            "--workers",
            "0",
            "--runs",
            &folder(&serve_runs),
        ],
    )
    .await;
    let on = |runs: &std::path::PathBuf| {
        vec![
            "--db".to_string(),
            pg.url.clone(),
            "--workers".into(),
            "1".into(),
            "--lease".into(),
            "2".into(),
            "--runs".into(),
            folder(runs),
        ]
    };
    let args_a = on(&runs_a);
    let a: Vec<&str> = args_a.iter().map(String::as_str).collect();
    let machine_a = Served::worker(&w, &a).await;
    let id = crate::coworker::order_in_flight(&served, &sites).await;
    // Machine B comes up; machine A goes away, its disk with it.
    let args_b = on(&runs_b);
    let b: Vec<&str> = args_b.iter().map(String::as_str).collect();
    let machine_b = Served::worker(&w, &b).await;
    machine_a.kill9().await;
    std::fs::remove_dir_all(&runs_a).expect("machine A's folder deleted");

    // B goes on from the database: the cut click is held for a person.
    let waiting = wait_for(&served, &id, SessionState::Waiting).await;
    assert!(
        waiting.run_dir.starts_with(&folder(&runs_b)),
        "{}",
        waiting.run_dir
    );
    assert_eq!(sites.posted("/order").len(), 1, "nothing sent again");
    served.client().answer(&id, "no").await.expect("answered");
    let done = wait_for(&served, &id, SessionState::Done).await;
    assert_eq!(
        sites.posted("/order").len(),
        1,
        "the order was placed exactly once"
    );
    assert_eq!(done.result.as_ref().unwrap()["answer"], "Orders placed: 1");
    assert!(
        !serve_runs.join(&id).exists(),
        "the server keeps no run on disk"
    );

    // The page shows every step's screenshot and the report, though the
    // machine that took the first steps is gone.
    let page = served.page(&format!("/sessions/{id}")).await;
    let journal = served.client().events(&id).await.unwrap();
    assert!(
        journal.iter().any(|e| e.reason.contains("lapsed")),
        "{journal:#?}"
    );
    let shots: Vec<&str> = page
        .split("src=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|src| src.contains("/run/step-"))
        .collect();
    let steps = done.steps as usize;
    assert!(
        shots.len() >= steps && steps >= 2,
        "{steps} steps, shots {shots:?}"
    );
    for shot in &shots {
        let r = reqwest::get(format!("{}{shot}", served.base))
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{shot}");
        assert_eq!(r.headers()["content-type"], "image/png", "{shot}");
        assert!(r.bytes().await.unwrap().starts_with(b"\x89PNG"), "{shot}");
    }
    assert!(
        page.contains(&format!("/sessions/{id}/run/report.html")),
        "{page}"
    );
    let report = reqwest::get(format!("{}/sessions/{id}/run/report.html", served.base))
        .await
        .unwrap();
    assert_eq!(report.status(), 200);
    assert!(report
        .text()
        .await
        .unwrap()
        .contains("Order one widget for Ada"));
    // The run's storage state is kept, but a login is never given to a page.
    let login = reqwest::get(format!(
        "{}/sessions/{id}/run/storage-state.json",
        served.base
    ))
    .await
    .unwrap();
    assert_eq!(login.status(), 404);
    machine_b.terminate().await;
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learned_skill_is_proposed_not_used_until_a_person_approves_it_on_the_page() {
    let board = crate::skills::Board::serve().await;
    let model = ModelServer::answering(crate::model_server::job_seeker).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "1"]).await;
    let client = served.client();
    let search = |role: &str, place: &str| crate::skills::task(role, place);
    let start = board.start();
    // Done with the model, and learned: proposed, not approved.
    let first = submit(
        &served,
        &search("Data Scientist", "India"),
        &start,
        json!({}),
    )
    .await;
    wait_for(&served, &first, SessionState::Done).await;
    let skills = client.skills().await.expect("skills");
    assert_eq!(skills.len(), 1, "{skills:#?}");
    let name = skills[0].name.clone();
    assert_eq!(skills[0].state, "proposed");
    assert_eq!(skills[0].proposal_session.as_deref(), Some(first.as_str()));
    assert!(skills[0].approved.is_none());

    // The same task in other words: the proposal is not followed, the
    // model does every step again.
    let calls = model.received().len();
    let second = submit(&served, &search("Data Engineer", "Pune"), &start, json!({})).await;
    let done = wait_for(&served, &second, SessionState::Done).await;
    assert!(model.received().len() > calls, "the model was called");
    assert!(done.result.as_ref().unwrap()["skill"]["followed"].is_null());

    // A person approves it on the skills page, in a real browser, seeing
    // its steps and the session it came from.
    let fx = Fixture::open(&format!("{}/skills", served.base)).await;
    let mut actor = fx.actor().await;
    let proposed_by = client.skills().await.expect("skills")[0]
        .proposal_session
        .clone()
        .expect("the proposal's session");
    let seen = actor.look().await.table.elements.clone();
    assert!(
        seen.iter()
            .any(|e| e.name == format!("session {proposed_by}")),
        "the page links the run it came from: {seen:?}"
    );
    let approve = actor.id(&format!("Approve skill {name}"));
    let report = actor.run(&format!("CLICK:{approve}")).await;
    assert!(
        report.outcomes.iter().all(|o| !o.status.is_failure()),
        "{report:?}"
    );
    actor.close().await;
    let skills = client.skills().await.expect("skills");
    assert_eq!(skills[0].state, "approved", "{skills:#?}");

    // Now followed: done with no model call.
    let calls = model.received().len();
    let third = submit(&served, &search("Analyst", "Delhi"), &start, json!({})).await;
    let done = wait_for(&served, &third, SessionState::Done).await;
    assert_eq!(model.received().len(), calls, "no model call");
    assert_eq!(
        done.result.as_ref().unwrap()["skill"]["followed"],
        name.as_str()
    );
    // The site changes: the model takes over where the skill no longer
    // fits. The skill is marked going stale, with where and why, and the
    // run learned again is proposed beside the approved one.
    board.rename_search_button();
    let fourth = submit(&served, &search("Designer", "Goa"), &start, json!({})).await;
    wait_for(&served, &fourth, SessionState::Done).await;
    let skills = client.skills().await.expect("skills");
    let skill = &skills[0];
    assert_eq!(
        skill.stale_session.as_deref(),
        Some(fourth.as_str()),
        "{skill:#?}"
    );
    assert!(
        skill.stale.as_deref().is_some_and(|w| !w.is_empty()),
        "{skill:#?}"
    );
    assert_eq!(skill.state, "proposed");
    assert!(skill.approved.is_some() && skill.proposal.is_some());
    let page = served.page("/skills").await;
    assert!(
        page.contains("Going stale") && page.contains("It would replace"),
        "{page}"
    );
    let refused = w
        .run(&["skill", "refuse", &name, "--server", &served.base])
        .await;
    assert_eq!(refused.code(), Some(0), "{}", refused.stderr());
    assert_eq!(client.skills().await.unwrap()[0].state, "approved");
    // The CLI refuses what has no proposal waiting, with the reason.
    let refused = w
        .run(&["skill", "refuse", &name, "--server", &served.base])
        .await;
    assert_ne!(refused.code(), Some(0));
    assert!(
        refused.stderr().contains("no proposal waiting"),
        "{}",
        refused.stderr()
    );
    served.terminate().await;
}

/// Marks the page as this session's own and looks again; tells what the
/// page remembered at the first look when it remembered anything then.
fn marks_its_own(r: &Received) -> Reply {
    let seen = r.first_named("button", "Seen ");
    let told = if r.url().contains("again=1") {
        format!("ANSWER:{seen}\nCOMPLETE:told what the page remembers")
    } else if seen != "Seen cookie=none storage=none" {
        format!("ANSWER:at the first look: {seen}\nCOMPLETE:it remembered another's")
    } else {
        format!(
            "CLICK:{}\nCLICK:{}",
            r.id_of("Mark as mine"),
            r.id_of("Look again")
        )
    };
    Reply::Text(told)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_sessions_on_one_worker_share_one_browser_and_none_sees_anothers_cookie_or_storage() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(marks_its_own).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "1"]).await;
    let mut ids = Vec::new();
    for k in 0..10 {
        let url = sites.url(&format!("isolation.html?who=s{k}"));
        let task = format!("Tell what the page remembers, as s{k}");
        ids.push(submit(&served, &task, &url, json!({ "no_skills": true })).await);
    }
    // Every browser that runs meanwhile, sampled.
    let tmp = crate::processes::tmp_of(&w.path(""));
    let mut browsers = std::collections::BTreeSet::new();
    let client = served.client();
    loop {
        browsers.extend(crate::processes::browser_profiles(&tmp));
        let ended = futures::future::join_all(ids.iter().map(|id| client.get(id))).await;
        if ended
            .iter()
            .all(|s| s.as_ref().is_ok_and(|s| s.status.ended()))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        browsers.len(),
        1,
        "one browser launched, not ten: {browsers:?}"
    );
    for (k, id) in ids.iter().enumerate() {
        let done = wait_for(&served, id, SessionState::Done).await;
        assert_eq!(
            done.result.as_ref().unwrap()["answer"],
            format!("Seen cookie=s{k} storage=s{k}"),
            "session {k} saw only its own"
        );
        // Its first visit carried no cookie; its second, its own only.
        assert_eq!(
            sites.cookies(&format!("/whoami?who=s{k}")),
            vec![format!("who=s{k}")],
            "session {k}"
        );
    }
    // The kept browser dies: the next session gets a new one.
    let first = browsers.iter().next().unwrap().clone();
    crate::processes::kill_browsers_under(&tmp);
    let url = sites.url("isolation.html?who=after");
    let task = "Tell what the page remembers, as after";
    let after = submit(&served, task, &url, json!({ "no_skills": true })).await;
    let done = wait_for(&served, &after, SessionState::Done).await;
    assert_eq!(
        done.result.as_ref().unwrap()["answer"],
        "Seen cookie=after storage=after"
    );
    let now = crate::processes::browser_profiles(&tmp);
    assert!(
        now.len() == 1 && !now.contains(&first),
        "a new browser: {now:?}, the first {first:?}"
    );
    served.terminate().await;
}
