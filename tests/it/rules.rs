//! The orchestrator's rules through `seamark run`, as a user meets them: an
//! answer given is a result, a command that makes progress is no repetition,
//! an impasse ends a run only when the model makes no progress against it,
//! changes the page makes on its own are not a command's effect, and the
//! first look waits for the page's first content.

use crate::model_server::{reply, ModelServer, Turn};
use crate::server::Server;
use crate::support::Seamark;

/// A model that searches flights from Paris to Lisbon, then answers the
/// cheapest price it reads off the results, again and again without COMPLETE.
fn forgetful_flight_searcher() -> Turn {
    reply(|r| {
        let text = r.text();
        if r.url().contains("results.html") {
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
    let run = Seamark::task(&[
        "--task",
        "Find the price of the cheapest flight from Paris to Lisbon",
        "--url",
        &url,
    ])
    .model(&model)
    .run()
    .await;
    let v = run.json();
    assert_eq!(v["success"], true, "{v}\n{}", run.stderr());
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

/// A model that scrolls one scroll area, always by the same command, until
/// the city it wants shows, ticks it and saves.
fn patient_scroller() -> Turn {
    reply(|r| {
        if r.url().contains("city=") {
            return "COMPLETE:saved City 55".into();
        }
        let line = r.line_of("City 55");
        if line.contains(" checked") {
            format!("CLICK:{}", r.id_of("Save"))
        } else if line.contains("offscreen") || line.is_empty() {
            format!("SCROLL:{}:down", r.id_of("City 1"))
        } else {
            format!("CLICK:{}", r.id_of("City 55"))
        }
    })
}

#[tokio::test]
async fn scrolling_one_area_again_and_again_is_progress_not_a_loop() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), patient_scroller).await;
    let url = server.url("scroll-list.html");
    let run = Seamark::task(&["--task", "Tick City 55 and save", "--url", &url])
        .model(&model)
        .run()
        .await;
    let v = run.json();
    assert_eq!(v["success"], true, "{v}\n{}", run.stderr());
    assert!(server.was_requested("/scroll-list.html?city=55"));
    // The same SCROLL was sent many times, each moving the area further.
    let scrolls = model
        .received()
        .iter()
        .filter(|r| r.text().contains("scrolled the area"))
        .count();
    assert!(scrolls >= 3, "{scrolls} scrolls");
}

/// A model given the credentials in its task: it closes the popup over the
/// form, fills the form, and signs in.
fn credentialed() -> Turn {
    reply(|r| {
        let text = r.text();
        if r.url().contains("signed-in") {
            return "COMPLETE:signed in".into();
        }
        if text.contains("\"No thanks\"") && !text.contains("disappeared") {
            return format!("CLICK:{}", r.id_of("No thanks"));
        }
        if r.line_of("Email or username").contains("value=\"ada\"") {
            return format!("CLICK:{}", r.id_of("Sign in"));
        }
        format!(
            "TYPE:{}:ada\nTYPE:{}:plain-pass-42",
            r.id_of("Email or username"),
            r.id_of("Password")
        )
    })
}

#[tokio::test]
async fn a_login_wall_with_a_popup_does_not_end_a_run_that_makes_progress_against_it() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), credentialed).await;
    let url = server.url("login-popup.html");
    let run = Seamark::task(&[
        "--task",
        "Sign in as ada with the password plain-pass-42",
        "--url",
        &url,
        "--confirm",
        "allow",
    ])
    .model(&model)
    .run()
    .await;
    let v = run.json();
    assert_eq!(v["success"], true, "{v}\n{}", run.stderr());
    assert_eq!(
        server.posted("/signed-in.html"),
        vec!["user=ada&pw=plain-pass-42".to_string()]
    );
    // It was named an impasse all along, and the run went on past three steps.
    let received = model.received();
    assert!(received.len() >= 4, "{} steps", received.len());
    assert!(received[2]
        .text()
        .contains("IMPASSE: this page asks to sign in"));
}

#[tokio::test]
async fn a_ticking_countdown_neither_cuts_a_batch_nor_counts_as_a_clicks_effect() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), || {
        reply(|r| {
            if r.url().contains("first=") {
                return "COMPLETE:reserved".into();
            }
            format!(
                "CLICK:{}\nTYPE:{}:Ada\nTYPE:{}:Lovelace\nCLICK:{}",
                r.id_of("Do nothing"),
                r.id_of("First name"),
                r.id_of("Last name"),
                r.id_of("Reserve")
            )
        })
    })
    .await;
    let url = server.url("countdown.html");
    let run = Seamark::task(&["--task", "Reserve for Ada Lovelace", "--url", &url])
        .model(&model)
        .run()
        .await;
    let v = run.json();
    assert_eq!(v["success"], true, "{v}\n{}", run.stderr());
    assert!(server.was_requested("/countdown.html?first=Ada&last=Lovelace"));
    // The whole batch ran in one step, and the idle click did nothing but
    // take the focus.
    let steps = crate::support::records(&run.path("rec"), "step");
    let report = &steps[0]["report"];
    assert_eq!(
        report["outcomes"].as_array().map(Vec::len),
        Some(4),
        "{report}"
    );
    assert_eq!(
        report["outcomes"][0]["changes"],
        serde_json::json!(["it has the keyboard focus"]),
        "{report}"
    );
    assert!(
        !report.to_string().contains("the text on the page changed"),
        "{report}"
    );
}

#[tokio::test]
async fn the_first_look_waits_for_controls_a_page_draws_after_its_load() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), || {
        reply(|r| {
            if r.url().contains("news=on") {
                return "COMPLETE:subscribed".into();
            }
            if r.line_of("Weekly news").contains(" checked") {
                return format!("CLICK:{}", r.id_of("Subscribe"));
            }
            format!("CLICK:{}", r.id_of("Weekly news"))
        })
    })
    .await;
    let url = server.url("late-controls.html");
    let run = Seamark::task(&["--task", "Subscribe to the weekly news", "--url", &url])
        .model(&model)
        .run()
        .await;
    let first = model.received()[0].text();
    assert!(first.contains("checkbox \"Weekly news\""), "{first}");
    assert_eq!(run.json()["success"], true, "{}", run.stderr());
    assert!(server.was_requested("/late-controls.html?news=on"));
}
