//! Checkpoints: the model keeps a phase's page with `CHECKPOINT:name`, and
//! after a mistake goes `BACK:checkpoint` to it: the URL opened again with
//! the site's cookies and storage as they were, the page compared with what
//! it was, each journaled and shown in the report, and the detour left out
//! of the skill learned from the run.

use serde_json::json;

use crate::mcp::Mcp;
use crate::model_server::{between, id_in, ModelServer, Received, Reply};
use crate::server::Server;
use crate::support::{records, Workdir};

/// Goes through the two-step wizard, but "starts over" by mistake right
/// after keeping the name's phase, and goes back to it instead of typing
/// the name again. Its first answer is a BACK:checkpoint with none kept.
fn wizard_walker(r: &Received) -> Reply {
    let text = r.text();
    let last = between(&text, "# Result of your last answer", "# Current page");
    let kept = text.contains("Checkpoints kept");
    // The wizard's steps, by the controls of the page shown.
    let page = between(&text, "<page_data>", "</page_data>");
    let (first, second) = (page.contains("\"Full name\""), page.contains("\"Finish\""));
    let answer = if r.url().contains("wizard-done") {
        "COMPLETE:signed up Ada Lovelace for Pro".to_string()
    } else if last.contains("(none)") {
        "BACK:checkpoint".to_string()
    } else if first && !kept {
        format!(
            "PLAN: 1) name 2) plan\nTYPE:{}:Ada Lovelace\nCLICK:{}",
            r.id_of("Full name"),
            r.id_of("Next")
        )
    } else if second && !kept {
        format!("CHECKPOINT:name entered\nCLICK:{}", r.id_of("Start over"))
    } else if first {
        "BACK:checkpoint:Name Entered".to_string()
    } else {
        format!(
            "SELECT:{}:Pro\nCLICK:{}",
            r.id_of("Plan"),
            r.id_of("Finish")
        )
    };
    Reply::Text(answer)
}

#[tokio::test]
async fn back_to_a_checkpoint_puts_the_page_and_the_sites_state_back_after_a_mistake() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(wizard_walker).await;
    let work = Workdir::new(&model);
    let ran = work
        .run(&[
            "run",
            "--json",
            "--skills",
            "skills",
            "--out",
            "rec",
            "--task",
            "Sign up Ada Lovelace for the Pro plan",
            "--url",
            &server.url("wizard.html"),
        ])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    assert_eq!(ran.json()["status"], "done");

    // The form was sent from the restored page: the name came back from
    // sessionStorage, and the request carries the cookie "Start over" deleted.
    let done = "/wizard-done.html?name=Ada+Lovelace&plan=Pro";
    assert!(
        server.was_requested(done),
        "{:?}",
        server.log.lock().map(|l| l.clone())
    );
    assert!(
        server
            .cookies(done)
            .iter()
            .any(|c| c.contains("wizard=Ada%20Lovelace")),
        "{:?}",
        server.cookies("/wizard-done.html")
    );

    // What the model was told: no checkpoint at first, then the list of
    // those kept, then where BACK took it.
    let texts: Vec<String> = model.received().iter().map(Received::text).collect();
    assert!(
        texts[1].contains("BACK:checkpoint → FAILED: no checkpoint was kept yet"),
        "{}",
        texts[1]
    );
    let told = texts
        .iter()
        .find(|t| t.contains("back at checkpoint"))
        .expect("the model was told it went back");
    assert!(
        told.contains("the page is as it was at the checkpoint")
            && told.contains("\"name entered\" at step 3"),
        "{told}"
    );

    let checkpoints = records(&work.path("rec"), "checkpoint");
    let events: Vec<(&str, &str)> = checkpoints
        .iter()
        .map(|c| {
            (
                c["event"].as_str().unwrap_or_default(),
                c["name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [("kept", "name entered"), ("back", "name entered")],
        "{checkpoints:?}"
    );
    assert_eq!(checkpoints[0]["step"], 3);
    assert!(checkpoints[0]["url"]
        .as_str()
        .unwrap_or_default()
        .ends_with("/wizard.html"));

    let html = std::fs::read_to_string(work.path("rec/report.html")).expect("report.html");
    assert!(
        html.contains("kept &quot;name entered&quot;")
            || html.contains("kept &#34;name entered&#34;"),
        "the report lists the checkpoint"
    );

    // The skill learned from the run keeps the checkpoint and leaves out
    // the detour it undid.
    let skills: String = std::fs::read_dir(work.path("skills"))
        .expect("a skill was learned")
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect();
    assert!(skills.contains("CHECKPOINT:name entered"), "{skills}");
    assert!(
        !skills.contains("Start over") && !skills.contains("BACK:"),
        "{skills}"
    );
}

#[tokio::test]
async fn an_mcp_client_keeps_a_checkpoint_goes_back_to_it_and_has_acts_expectations_checked() {
    let server = Server::start(None).await;
    let mcp = Mcp::stdio(&[]).await;
    let opened = mcp
        .call("open", json!({"url": server.url("wizard.html")}))
        .await;
    let commands = format!(
        "TYPE:{}:Ada\nCLICK:{}",
        id_in(&opened.text, "Full name"),
        id_in(&opened.text, "Next")
    );
    let named = mcp
        .call(
            "act",
            json!({"commands": commands, "expect": {"text_contains": "step 2 of 2"}}),
        )
        .await;
    assert!(!named.is_error, "{}", named.text);
    assert!(
        named.text.contains("text_contains \"step 2 of 2\" held"),
        "{}",
        named.text
    );
    let name_kept = json!({"js": "sessionStorage.getItem('name') === 'Ada'"});
    let over = mcp
        .call(
            "act",
            json!({
                "commands": format!("CHECKPOINT:named\nCLICK:{}", id_in(&named.text, "Start over")),
                "expect": name_kept,
            }),
        )
        .await;
    assert!(over.is_error, "the expectation failed: {}", over.text);
    assert!(over.text.contains("did NOT hold"), "{}", over.text);
    let back = mcp
        .call(
            "act",
            json!({"commands": "BACK:checkpoint", "expect": name_kept}),
        )
        .await;
    assert!(!back.is_error, "{}", back.text);
    assert!(
        back.text.contains("back at checkpoint \"named\"") && back.text.contains("held"),
        "{}",
        back.text
    );
    assert!(id_in(&back.text, "Finish") > 0);
    let dir = mcp.close().await;
    let run = dir.path().join("rec");
    let kinds: Vec<String> = records(&run, "checkpoint")
        .iter()
        .map(|c| c["event"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(kinds, ["kept", "back"]);
    let checks: Vec<bool> = records(&run, "check")
        .iter()
        .map(|c| c["passed"] == true)
        .collect();
    assert_eq!(checks, [true, false, true]);
}
