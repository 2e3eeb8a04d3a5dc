//! `seamark serve` as a team's coworker (issue 82): sessions' results saved
//! on PostgreSQL whatever they cost, events as JSON in the order they
//! happened, a server that refuses what it cannot run, and a schema made
//! by many processes at once.

use std::time::Duration;

use seamark::coworker::store::Ending;
use seamark::coworker::{SessionState, Store};

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
