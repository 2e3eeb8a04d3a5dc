//! `seamark mark`, `run` and `replay` as a user runs them: the real binary
//! against the test server (and a scripted model), good input and bad alike.

use std::time::Duration;

use crate::server::Server;
use crate::support::{command, profiles_in, Seamark};

/// A browser with a temporary profile is killed at the end, not closed
/// (nothing of the profile is kept, and a close takes up to half a second):
/// no Chromium process and no profile may be left by it either way. (With a
/// net log, as in every other test, the close is graceful, to end the log.)
#[tokio::test]
async fn a_browser_with_a_temporary_profile_ends_at_once_and_leaves_nothing() {
    let server = Server::start(None).await;
    let (mut cmd, dir) = command(&["mark", &server.url("form.html"), "-o", "m.png"]);
    cmd.env_remove(seamark::browser::NET_LOG_ENV);
    let out = cmd.output().await.expect("run seamark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        profiles_in(&dir.tmp()).is_empty(),
        "{:?}",
        profiles_in(&dir.tmp())
    );
    // Nor the folder of Chromium's singleton socket, which a kill leaves.
    let left: Vec<String> = std::fs::read_dir(dir.tmp())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("org.chromium."))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    // The directory's own check (when it is dropped) finds no browser left.
}

#[tokio::test]
async fn mark_prints_the_list_and_writes_the_marked_image_and_the_table() {
    let server = Server::start(None).await;
    let run = Seamark::new(&[
        "mark",
        &server.url("form.html"),
        "-o",
        "m.png",
        "--json",
        "t.json",
    ])
    .run()
    .await;
    let list = run.stdout();
    assert!(
        list.starts_with("[1] textbox \"Email address\" type=email\n"),
        "{list}"
    );
    assert!(
        list.contains("[12] checkbox \"Send me news\" checked\n"),
        "{list}"
    );
    let table: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.path("t.json")).unwrap()).unwrap();
    let elements = table["elements"].as_array().unwrap();
    assert_eq!(elements.len(), list.lines().count());
    assert_eq!(table["title"], "Sign up");
    assert!(table["signature"].as_str().is_some_and(|s| s.len() == 16));
    assert_eq!(elements[0]["role"], "textbox");
    assert!(elements[0]["backend_node_id"]
        .as_i64()
        .is_some_and(|b| b > 0));
    let img = image::open(run.path("m.png")).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (1280, 800));
    // The first element's box is outlined in a palette color.
    let b = &elements[0]["bbox"];
    let (x, y) = (
        b["x"].as_f64().unwrap() as u32 + 1,
        b["y"].as_f64().unwrap() as u32 + 4,
    );
    let px = img.get_pixel(x, y).0;
    assert!(
        seamark::mark::PALETTE.contains(&px),
        "no mark outline at ({x},{y}): {px:?}"
    );
    assert!(run.profile_removed());
}

#[tokio::test]
async fn viewport_and_image_format_follow_the_flags() {
    let server = Server::start(None).await;
    let run = Seamark::new(&[
        "mark",
        &server.url("checkboxes.html"),
        "--viewport",
        "800x600",
        "-o",
        "m.jpg",
    ])
    .run()
    .await;
    let bytes = std::fs::read(run.path("m.jpg")).unwrap();
    assert_eq!(&bytes[..2], &[0xFF, 0xD8], "not a JPEG");
    let img = image::load_from_memory(&bytes).unwrap();
    assert_eq!((img.width(), img.height()), (800, 600));
}

#[tokio::test]
async fn a_malformed_viewport_is_a_usage_error() {
    let run = Seamark::new(&["mark", "about:blank", "--viewport", "1280by800"])
        .fails(2)
        .run()
        .await;
    run.stderr_has("expected WIDTHxHEIGHT");
}

#[tokio::test]
async fn an_unreachable_url_is_one_clear_line_and_exit_1() {
    // A port nobody listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let run = Seamark::new(&["mark", &url]).fails(1).run().await;
    let err = run.stderr();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "seamark: cannot open {url}: net::ERR_CONNECTION_REFUSED"
        )),
        "{err}"
    );
    assert!(run.profile_removed(), "profile left behind after an error");
}

#[tokio::test]
async fn an_image_is_perceived_and_said_not_to_be_a_page() {
    let server = Server::start(None).await;
    let run = Seamark::new(&["mark", &server.url("image.png")])
        .run()
        .await;
    run.stderr_has("not an HTML page but image/png");
    run.stderr_has("no interactive element found");
    assert_eq!(run.stdout(), "");
}

#[tokio::test]
async fn a_pdf_is_said_not_to_be_a_page() {
    let server = Server::start(None).await;
    let run = Seamark::new(&["mark", &server.url("doc.pdf")]).run().await;
    let err = run.stderr();
    assert!(
        err.contains("not an HTML page but application/pdf"),
        "{err}"
    );
}

#[tokio::test]
async fn a_page_that_never_finishes_loading_is_perceived_after_the_timeout() {
    let server = Server::start(None).await;
    let run = Seamark::new(&["mark", &server.url("slow"), "--timeout", "2"])
        .run()
        .await;
    run.stderr_has("had not finished loading");
    assert_eq!(run.stdout(), "[1] button \"Early button\"\n");
}

#[tokio::test]
async fn about_blank_has_nothing_to_mark() {
    let run = Seamark::new(&["mark", "about:blank", "-o", "b.png"])
        .run()
        .await;
    run.stderr_has("no interactive element found");
    assert!(run.path("b.png").is_file());
}

#[tokio::test]
async fn an_http_error_page_is_marked_and_its_status_reported() {
    let server = Server::start(None).await;
    let run = Seamark::new(&["mark", &server.url("missing")]).run().await;
    run.stderr_has("HTTP 404");
    assert_eq!(run.stdout(), "[1] \"Home\"\n");
}

#[tokio::test]
async fn a_page_with_fifty_thousand_nodes_gives_a_bounded_list() {
    let server = Server::start(None).await;
    let run = Seamark::new(&["mark", &server.url("big"), "--json", "t.json"])
        .run()
        .await;
    assert!(
        run.stdout().starts_with("[1] \"Row link 0\"\n"),
        "{}",
        run.stdout()
    );
    // One link every 18,000 px: the others lie in parts too far to walk.
    let table: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.path("t.json")).unwrap()).unwrap();
    assert_eq!(table["elements"].as_array().unwrap().len(), 1);
    run.stderr_has("distant parts");
}

#[tokio::test]
async fn a_missing_chromium_says_where_it_looked_and_how_to_fix_it() {
    let run = Seamark::new(&["mark", "about:blank", "--chrome", "/nonexistent/chromium"])
        .fails(1)
        .run()
        .await;
    assert_eq!(
        run.stderr().trim(),
        "seamark: Chromium not found at /nonexistent/chromium (from --chrome)"
    );
    let (mut cmd, _dir) = command(&["mark", "about:blank"]);
    let out = cmd
        .env("SEAMARK_CHROME", "/nope/chrome")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("Chromium not found at /nope/chrome (from SEAMARK_CHROME)"));
}

#[tokio::test]
async fn ctrl_c_removes_the_profile_and_exits_130() {
    let server = Server::start(None).await;
    let (mut cmd, dir) = command(&["mark", &server.url("slow"), "--timeout", "60"]);
    let mut child = cmd.spawn().unwrap();
    // Wait until the browser runs (its profile exists), then interrupt.
    let tmp = dir.path().join("tmp");
    for _ in 0..200 {
        if !profiles_in(&tmp).is_empty() && server.was_requested("/slow") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!profiles_in(&tmp).is_empty(), "browser never started");
    let pid = child.id().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        profiles_in(&tmp).is_empty(),
        "profile left behind after Ctrl-C"
    );
}

#[tokio::test]
async fn attaching_with_cdp_marks_the_page_and_leaves_the_browser_running() {
    let server = Server::start(None).await;
    let (mut browser, ws, _profile) = crate::support::running_chromium().await;
    let run = Seamark::new(&["mark", &server.url("disabled.html"), "--cdp", &ws])
        .run()
        .await;
    assert!(
        run.stdout().contains("[6] button \"Enabled button\""),
        "{}",
        run.stdout()
    );
    assert!(
        browser.try_wait().unwrap().is_none(),
        "seamark closed a browser it did not start"
    );
    browser.kill().await.unwrap();
}

#[tokio::test]
async fn the_model_image_is_downscaled_and_the_raw_screenshot_has_no_marks() {
    let server = Server::start(None).await;
    let run = Seamark::new(&[
        "mark",
        &server.url("form.html"),
        "--viewport",
        "2000x1000",
        "-o",
        "full.png",
        "--model-image",
        "sent.webp",
        "--screenshot",
        "raw.png",
    ])
    .run()
    .await;
    let full = image::open(run.path("full.png")).unwrap().to_rgb8();
    let sent = image::open(run.path("sent.webp")).unwrap().to_rgb8();
    let raw = image::open(run.path("raw.png")).unwrap().to_rgb8();
    assert_eq!(full.dimensions(), (2000, 1000));
    assert_eq!(sent.dimensions(), (1568, 784));
    assert_eq!(raw.dimensions(), (2000, 1000));
    assert!(raw != full, "the raw screenshot must not carry marks");
}

#[tokio::test]
async fn run_without_a_model_says_exactly_what_to_set() {
    let run = Seamark::new(&["run", "--task", "x", "--url", "http://127.0.0.1:9/"])
        .fails(2)
        .run()
        .await;
    let err = run.stderr();
    for needle in [
        "--model openai/<model>",
        "SEAMARK_MODEL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ] {
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
    let run = Seamark::new(&[
        "run",
        "--task",
        "x",
        "--url",
        "http://127.0.0.1:9/",
        "--model",
        "openai/gpt-4o",
    ])
    .fails(2)
    .run()
    .await;
    run.stderr_has("OPENAI_API_KEY is not set");
}

#[tokio::test]
async fn run_prints_one_json_result_and_replay_does_the_same_again() {
    use crate::model_server::{reply, say, ModelServer};
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| format!("CLICK:{}", r.id_of("Send me news"))),
        say("ANSWER:the newsletter is off\nCOMPLETE:unticked the newsletter box"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let base = format!("{}/v1", model.base);
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("SEAMARK_MODEL", "openai/scripted"),
    ];
    let url = server.url("form.html");
    let run = Seamark::new(&[
        "run",
        "--task",
        "Turn off the newsletter",
        "--url",
        &url,
        "--json",
        "--out",
        "rec",
    ])
    .envs(&env)
    .run()
    .await;
    let v: serde_json::Value = serde_json::from_str(run.stdout().trim()).expect("one JSON object");
    assert_eq!(v["success"], true);
    assert_eq!(v["answer"], "the newsletter is off");
    assert_eq!(v["reason"], "unticked the newsletter box");
    assert_eq!(v["steps"], 2);
    assert_eq!(v["tokens"]["input"], 2 * crate::model_server::INPUT_TOKENS);
    assert!(v["cost_usd"].is_null(), "an unknown model has no price");
    assert!(v["run_dir"].as_str().unwrap().ends_with("rec"));
    // Progress went to stderr, step by step.
    let err = run.stderr();
    assert!(err.contains("step 1/30"), "{err}");
    assert!(err.contains("CLICK:12 → done"), "{err}");
    assert!(run.path("rec/step-001.png").is_file());
    assert!(run.profile_removed());
    // Replay the recording with no model at all.
    let rec = run.path("rec");
    let again = Seamark::new(&["replay", rec.to_str().unwrap(), "--json", "--out", "again"])
        .run()
        .await;
    let w: serde_json::Value = serde_json::from_str(again.stdout().trim()).unwrap();
    assert_eq!(
        (w["success"].clone(), w["answer"].clone()),
        (v["success"].clone(), v["answer"].clone())
    );
    assert_eq!(w["divergences"], serde_json::json!([]));
    assert_eq!(
        model.received().len(),
        2,
        "the replay never asked the model"
    );
}

#[tokio::test]
async fn replay_of_a_missing_recording_is_a_usage_error() {
    let run = Seamark::new(&["replay", "no/such/run"])
        .fails(2)
        .run()
        .await;
    run.stderr_has("cannot read no/such/run/journal.jsonl");
}

#[tokio::test]
async fn bad_safety_configuration_is_a_usage_error_that_names_the_problem() {
    let base = [
        "run",
        "--task",
        "x",
        "--url",
        "http://127.0.0.1:9/",
        "--model",
        "openai/m",
    ];
    let env = [("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    let run = Seamark::new(&with(&["--allow-domain", "https://example.com/x"]))
        .envs(&env)
        .fails(2)
        .run()
        .await;
    run.stderr_has("is not a domain pattern (a domain, not a URL)");
    let run = Seamark::new(&with(&["--secret", "pw=abc"]))
        .envs(&env)
        .fails(2)
        .run()
        .await;
    run.stderr_has("secret pw: the value is shorter than 4 characters");
    assert!(
        !run.stderr().contains("abc"),
        "the value is not echoed: {}",
        run.stderr()
    );
    let run = Seamark::new(&with(&["--secret", "pw=env:SEAMARK_TEST_UNSET_VAR"]))
        .envs(&env)
        .fails(2)
        .run()
        .await;
    run.stderr_has("env SEAMARK_TEST_UNSET_VAR is not set");
    let run = Seamark::new(&with(&["--confirm", "sometimes"]))
        .envs(&env)
        .fails(2)
        .run()
        .await;
    run.stderr_has("--confirm takes ask, deny, allow or park");
}
