//! The orchestrator's rules through `seamark run`, as a user meets them: an
//! answer given is a result, a command that makes progress is no repetition,
//! an impasse ends a run only when the model makes no progress against it,
//! changes the page makes on its own are not a command's effect, and the
//! first look waits for the page's first content.

use crate::cli::run_with_model;
use crate::model_server::{reply, ModelServer, Received, Turn};
use crate::server::Server;

/// The URL line of a prompt.
fn url_of(r: &Received) -> String {
    r.text()
        .lines()
        .find_map(|l| l.strip_prefix("URL: "))
        .unwrap_or_default()
        .to_string()
}

/// A model that searches flights from Paris to Lisbon, then answers the
/// cheapest price it reads off the results, again and again without COMPLETE.
fn forgetful_flight_searcher() -> Turn {
    reply(|r| {
        let text = r.text();
        if url_of(r).contains("results.html") {
            let cheapest = text
                .lines()
                .filter(|l| l.contains("button \"Select "))
                .filter_map(|l| l.rsplit('$').next()?.split('"').next()?.parse::<u32>().ok())
                .min()
                .unwrap_or(0);
            return format!("ANSWER:The cheapest flight costs ${cheapest}");
        }
        if r.line_of("Paris").contains("] option ") {
            return format!("CLICK:{}", r.id_of("Paris"));
        }
        if r.line_of("From").contains("value=\"Paris\"") {
            return format!(
                "TYPE:{}:Lisbon\nCLICK:{}",
                r.id_of("To"),
                r.id_of("Search flights")
            );
        }
        format!("TYPE:{}:Pa", r.id_of("From"))
    })
}

#[tokio::test]
async fn an_answer_given_twice_without_complete_ends_the_run_as_done_not_stuck() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), forgetful_flight_searcher).await;
    let url = server.url("flights.html");
    let run = run_with_model(
        &model,
        &[
            "--task",
            "Find the price of the cheapest flight from Paris to Lisbon",
            "--url",
            &url,
        ],
    )
    .await;
    let v = run.result();
    assert_eq!(v["success"], true, "{v}\n{}", run.stderr());
    assert_eq!(run.code(), Some(0));
    assert_eq!(v["answer"], "The cheapest flight costs $289");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("given again without COMPLETE")),
        "{v}"
    );
    // The first answer was recorded and the model told plainly how to end.
    let received = model.received();
    let last = received.last().expect("requests").text();
    assert!(
        last.contains("answer recorded. If it is what the task asked for, end with COMPLETE"),
        "{last}"
    );
    assert_eq!(v["steps"], received.len());
}
