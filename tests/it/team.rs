//! `seamark serve` as a team's coworker (issue 82): sessions' results saved
//! on PostgreSQL whatever they cost, events as JSON in the order they
//! happened, a server that refuses what it cannot run, and a schema made
//! by many processes at once.

use std::time::Duration;

use seamark::coworker::client::ClientError;
use seamark::coworker::store::Ending;
use seamark::coworker::{SessionState, Store};
use serde_json::{json, Value};

use crate::coworker::{submit, titles, wait_for, Served};
use crate::model_server::ModelServer;
use crate::server::Server;
use crate::support::Workdir;

/// Bug: on PostgreSQL a session ended without a cost (one done from a
/// skill) made its connection's cached statement take the cost as a
/// float4, and the next session's cost on that connection failed to save
/// ("incorrect binary data format in bind parameter 7"): it went to review.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_with_and_without_a_cost_all_save_their_ending_on_postgresql() {
    let pg = crate::postgres::Postgres::start().await;
    let store = Store::open(&pg.url).await.expect("the store");
    let options = serde_json::Map::new();
    // One at a time, so that each statement goes out on the same pooled
    // connection as the one before it.
    let costs = [None, Some(0.25), None, Some(0.0), Some(1.5), None];
    for (k, cost) in costs.iter().enumerate() {
        let id = format!("s{k}");
        store
            .submit(&id, "a task", "http://127.0.0.1/", &options, "/nowhere")
            .await
            .expect("submitted");
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
    store
        .submit(
            "one",
            "a task",
            "http://127.0.0.1/",
            &serde_json::Map::new(),
            "/x",
        )
        .await
        .expect("the schema takes a session");
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
