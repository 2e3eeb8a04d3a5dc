//! Signing in with a secret the person gave, through `seamark run --confirm
//! deny` as a user without a terminal runs it: the sign-in goes through with
//! no further consent, a destructive click after it is still refused, a
//! made-up password is still held, a login wall without a secret still ends
//! the run, and the secret reaches neither the model nor the run directory.

use crate::model_server::{reply, ModelServer, Received, Turn};
use crate::server::Server;
use crate::support::Seamark;
use crate::support::{all_bytes, records, Run};

pub const PW: &str = "hunter2-Acme-7731";

/// `seamark run` of a sign-in at `url` with the person's `secret`, then a
/// delete that `--confirm deny` refuses: the run ends failed (exit 1).
pub fn sign_in_then_delete(url: &str, secret: &str) -> Seamark {
    Seamark::task(&[
        "--task",
        "Sign in as ada with the password stored as the secret ACME_PW, then delete the account",
        "--url",
        url,
        "--secret",
        secret,
        "--confirm",
        "deny",
        "--allow-domain",
        "127.0.0.1",
    ])
    .fails(1)
}

/// A model that signs in with the secret, then tries to delete the account,
/// then stops when that is refused.
pub fn secret_signer() -> Turn {
    reply(|r| {
        let text = r.text();
        if text.contains("held for a person's confirmation") {
            return "STOP:deleting the account needs a person's confirmation".into();
        }
        if text.contains("\"Delete account\"") {
            return format!("CLICK:{}", r.id_of("Delete account"));
        }
        sign_in(r)
    })
}

/// Signs in as ada with the secret ACME_PW, ids read off the list.
pub fn sign_in(r: &Received) -> String {
    format!(
        "TYPE:{}:ada\nTYPE:{}:{{{{secret:ACME_PW}}}}\nCLICK:{}",
        r.id_of("Email or username"),
        r.id_of("Password"),
        r.id_of("Sign in")
    )
}

#[tokio::test]
async fn a_sign_in_with_the_persons_secret_goes_through_and_a_delete_after_it_is_still_refused() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), secret_signer).await;
    let url = server.url("signin.html");
    let secret = format!("ACME_PW@127.0.0.1={PW}");
    let run = sign_in_then_delete(&url, &secret).model(&model).run().await;
    let v = run.json();
    // The sign-in posted the secret, and nothing deleted the account.
    assert_eq!(
        server.posted("/signed-in.html"),
        vec![format!("user=ada&pw={PW}")],
        "{}",
        run.stderr()
    );
    assert!(server.posted("/account-deleted.html").is_empty());
    assert_eq!(v["success"], false);
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("needs a person's confirmation")),
        "{v}"
    );
    let received = model.received();
    // The first page was no impasse: the model was told the secret's name.
    let first = received[0].text();
    assert!(!first.contains("IMPASSE"), "{first}");
    assert!(first.contains("{{secret:ACME_PW}}"), "{first}");
    // The secret is in no request to the model and in no file of the run.
    for (i, req) in received.iter().enumerate() {
        let body = serde_json::to_string(&req.body).unwrap();
        assert!(!body.contains(PW), "request {i} carried the secret");
    }
    let run_dir = run.path("rec");
    let files = all_bytes(&run_dir);
    // The report and the animation are files of the run like the others.
    for made in ["report.html", "run.gif"] {
        assert!(files.iter().any(|(name, _)| name == made), "no {made}");
    }
    for (name, bytes) in files {
        assert!(
            !bytes.windows(PW.len()).any(|w| w == PW.as_bytes()),
            "{name} holds the secret"
        );
    }
    assert!(!run.stderr().contains(PW) && !run.stdout().contains(PW));
    // The journal says why the sign-in needed no consent, and what was refused.
    let steps = records(&run_dir, "step");
    let signed = &steps[0]["report"]["confirmations"][0];
    assert_eq!(signed["allowed"], true, "{signed}");
    assert!(
        signed["by"].as_str().unwrap().contains("ACME_PW"),
        "{signed}"
    );
    let refused = &steps[1]["report"]["confirmations"][0];
    assert_eq!(refused["allowed"], false, "{refused}");
    assert_eq!(refused["hold"]["why"], "its name says \"delete\"");
    // The browser asked no one else anything, a password leak check least of
    // all: the domain guard, which lets only the test server through,
    // refused nothing in any step.
    for s in &steps {
        assert!(s["blocked"].is_null(), "{s}");
        assert!(s["report"]["blocked"].is_null(), "{s}");
    }
}

/// A model with no secret: it makes a password up, then has nothing else to try.
fn guesser() -> Turn {
    reply(|r| {
        let text = r.text();
        if text.contains("held for a person's confirmation") || text.contains("SCROLL:down →") {
            return if text.contains("SCROLL:down →") {
                "SCROLL:up".into()
            } else {
                "SCROLL:down".into()
            };
        }
        format!(
            "TYPE:{}:ada\nTYPE:{}:guess-1234\nCLICK:{}",
            r.id_of("Email or username"),
            r.id_of("Password"),
            r.id_of("Sign in")
        )
    })
}

#[tokio::test]
async fn without_a_secret_a_made_up_password_is_held_and_the_login_wall_ends_the_run() {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), guesser).await;
    let url = server.url("signin.html");
    let run = Seamark::task(&[
        "--task",
        "Sign in to Acme",
        "--url",
        &url,
        "--confirm",
        "deny",
    ])
    .model(&model)
    .fails(1)
    .run()
    .await;
    let v = run.json();
    assert!(
        server.posted("/signed-in.html").is_empty(),
        "nothing was posted"
    );
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("impasse:") && r.contains("login wall")),
        "{v}"
    );
    let first = model.received()[0].text();
    assert!(
        first.contains("IMPASSE: this page asks to sign in"),
        "{first}"
    );
    let steps = records(&run.path("rec"), "step");
    assert_eq!(
        steps[0]["report"]["confirmations"][0]["hold"]["why"],
        "it submits a form with a password field"
    );
}

/// Runs the secret signer on the page whose sign-in box is a frame of
/// another site (localhost), with `secret` and the domain guard letting both
/// hosts through.
async fn sign_in_inside_a_frame(secret: &str) -> (Server, Run) {
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), secret_signer).await;
    let url = server.url("signin-framed.html");
    let run = Seamark::task(&[
        "--task",
        "Sign in as ada with the password stored as the secret ACME_PW",
        "--url",
        &url,
        "--secret",
        secret,
        "--confirm",
        "deny",
        "--allow-domain",
        "127.0.0.1",
        "--allow-domain",
        "localhost",
    ])
    .model(&model)
    .output()
    .await;
    (server, run)
}

#[tokio::test]
async fn a_sign_in_inside_a_frame_of_another_site_takes_the_secret_of_that_site() {
    // The box runs in a process of its own: typed into and submitted over
    // the frame's session, and recognised as a sign-in with the secret.
    let (server, run) = sign_in_inside_a_frame(&format!("ACME_PW@localhost={PW}")).await;
    assert_eq!(
        server.posted("/signed-in.html"),
        vec![format!("user=ada&pw={PW}")],
        "{}",
        run.stderr()
    );
    let steps = records(&run.path("rec"), "step");
    let signed = &steps[0]["report"]["confirmations"][0];
    assert_eq!(signed["allowed"], true, "{signed}");
}

#[tokio::test]
async fn a_secret_of_the_page_is_not_typed_into_a_frame_of_another_site() {
    // The page is 127.0.0.1, the field is localhost's: what is typed there
    // goes to localhost, which the secret is not for.
    let (server, run) = sign_in_inside_a_frame(&format!("ACME_PW@127.0.0.1={PW}")).await;
    assert!(
        server.posted("/signed-in.html").is_empty(),
        "{}",
        run.stderr()
    );
    let journal = std::fs::read_to_string(run.path("rec").join("journal.jsonl")).expect("journal");
    assert!(
        journal.contains("secret ACME_PW may not be typed on localhost"),
        "{journal}"
    );
    assert!(!journal.contains(PW));
}

#[tokio::test]
async fn an_enter_in_a_password_form_inside_a_frame_of_another_site_waits_for_a_person() {
    // The focus is in the frame's process: the Enter was checked against the
    // page's focused element, the iframe, which submits nothing, and went
    // through unasked.
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), || {
        reply(|r| {
            if r.text().contains("held for a person's confirmation") {
                return "STOP:signing in needs a person's confirmation".into();
            }
            format!(
                "TYPE:{}:ada\nTYPE:{}:made-up-password\nPRESS:Enter",
                r.id_of("Email or username"),
                r.id_of("Password")
            )
        })
    })
    .await;
    let url = server.url("signin-framed.html");
    let run = Seamark::task(&[
        "--task",
        "Sign in as ada",
        "--url",
        &url,
        "--confirm",
        "deny",
    ])
    .model(&model)
    .fails(1)
    .run()
    .await;
    assert!(
        server.posted("/signed-in.html").is_empty(),
        "{}",
        run.stderr()
    );
    let steps = records(&run.path("rec"), "step");
    let held = &steps[0]["report"]["confirmations"][0];
    assert_eq!(held["allowed"], false, "{held}");
    assert_eq!(
        held["hold"]["why"], "it submits a form with a password field",
        "{held}"
    );
}
