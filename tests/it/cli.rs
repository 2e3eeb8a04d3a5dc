//! `seamark mark`, `run` and `replay` as a user runs them: the real binary
//! against the test server (and a scripted model), good input and bad alike.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::processes::{net_logs_of, tmp_of, TestDir};
use crate::server::Server;

/// One run of the binary, with its own temp dir (also its TMPDIR, so that a
/// leftover browser profile or process would show).
pub struct Run {
    dir: TestDir,
    out: Output,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    /// The one JSON object `--json` printed.
    pub fn result(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout().trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
                self.stdout(),
                self.stderr()
            )
        })
    }
    /// The temporary browser profile is gone.
    fn profile_removed(&self) -> bool {
        profiles_in(&self.path("tmp")).is_empty()
    }
}

pub fn profiles_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("seamark-profile-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The binary with these arguments, in a new temp dir that is also its TMPDIR.
pub fn command(args: &[&str]) -> (tokio::process::Command, TestDir) {
    let dir = TestDir::new();
    (command_in(dir.path(), args), dir)
}

/// The binary with these arguments in `dir`, whose `tmp/` is its TMPDIR.
pub fn command_in(dir: &Path, args: &[&str]) -> tokio::process::Command {
    let tmp = tmp_of(dir);
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_seamark"));
    cmd.current_dir(dir)
        .env("TMPDIR", &tmp)
        .env(seamark::browser::NET_LOG_ENV, net_logs_of(dir))
        .env_remove("SEAMARK_CHROME")
        .args(args);
    cmd
}

/// A working directory of its own for several runs of the binary against
/// the scripted model (files one run leaves, the next one reads).
pub struct Workdir {
    dir: TestDir,
    model: String,
}

impl Workdir {
    /// A new directory, runs in it against `model`.
    pub fn new(model: &crate::model_server::ModelServer) -> Workdir {
        Workdir {
            dir: TestDir::new(),
            model: model.base.clone(),
        }
    }

    /// A path in the directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The binary with these arguments, to run or to start.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = command_in(self.dir.path(), args);
        with_model(&mut cmd, &self.model);
        cmd.kill_on_drop(true);
        cmd
    }

    /// Runs the binary with these arguments to its end. One that is still
    /// running after three minutes is sent SIGTERM, which makes it end the
    /// way it tells (a run's end and report, a batch's summary), and the
    /// test fails with what it printed: a hang shows where it hung.
    pub async fn run(&self, args: &[&str]) -> Ran {
        self.run_with_env(args, &[]).await
    }

    /// [`Workdir::run`], with these variables set in its environment.
    pub async fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = cmd.spawn().expect("start seamark");
        let pid = child.id().expect("a pid");
        let out = child.wait_with_output();
        tokio::pin!(out);
        let out = match tokio::time::timeout(Duration::from_secs(180), &mut out).await {
            Ok(out) => out.expect("run seamark"),
            Err(_) => {
                crate::processes::kill(&[pid], "TERM");
                // A future that ended is not waited on again (it would panic).
                let (ended, out) =
                    match tokio::time::timeout(Duration::from_secs(60), &mut out).await {
                        Ok(out) => ("ended by SIGTERM", out),
                        Err(_) => {
                            // Stuck past the signal too: what it printed still
                            // shows how far it got.
                            crate::processes::kill(&[pid], "KILL");
                            let out = tokio::time::timeout(Duration::from_secs(30), &mut out)
                                .await
                                .expect("seamark's output did not end after SIGKILL");
                            ("outlived SIGTERM by a minute, killed", out)
                        }
                    };
                let out = out.expect("run seamark");
                panic!(
                    "seamark hung: still running after 180 s, {ended}\nstdout:\n{}\nstderr:\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        };
        Ran { out }
    }
}

/// What one run of the binary printed.
pub struct Ran {
    pub out: Output,
}

impl Ran {
    pub fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    /// The one JSON object `--json` printed.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout().trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
                self.stdout(),
                self.stderr()
            )
        })
    }
}

/// Points the command at the scripted model (OpenAI's wire format), with
/// none of the user's own model settings.
pub fn with_model(cmd: &mut tokio::process::Command, model_base: &str) {
    for var in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "SEAMARK_PRICES",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("OPENAI_BASE_URL", format!("{model_base}/v1"))
        .env("SEAMARK_MODEL", "openai/scripted");
}

async fn seamark(args: &[&str]) -> Run {
    seamark_with_env(args, &[]).await
}

/// Runs the binary with extra environment variables (model keys and URLs are
/// cleared first, so the user's own never leak into a test).
pub async fn seamark_with_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let (mut cmd, dir) = command(args);
    for var in [
        "SEAMARK_MODEL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "SEAMARK_PRICES",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("seamark hung")
        .expect("run seamark");
    Run { dir, out }
}

/// `seamark run --json --out rec` with the scripted model, started and left
/// running: for tests that interrupt or kill it. The directory is the run's
/// working directory.
pub fn spawn_with_model(
    model: &crate::model_server::ModelServer,
    args: &[&str],
) -> (tokio::process::Child, TestDir) {
    let mut all = vec!["run", "--json", "--out", "rec"];
    all.extend_from_slice(args);
    let (mut cmd, dir) = command(&all);
    with_model(&mut cmd, &model.base);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    (cmd.spawn().expect("start seamark"), dir)
}

/// `seamark run --json --out rec` with the scripted model as its model
/// (OpenAI's wire format) and these flags.
pub async fn run_with_model(model: &crate::model_server::ModelServer, args: &[&str]) -> Run {
    run_with_model_and_env(model, args, &[]).await
}

/// The same, with extra environment variables.
pub async fn run_with_model_and_env(
    model: &crate::model_server::ModelServer,
    args: &[&str],
    extra: &[(&str, &str)],
) -> Run {
    let base = format!("{}/v1", model.base);
    let mut env = vec![
        ("OPENAI_BASE_URL", base.as_str()),
        ("SEAMARK_MODEL", "openai/scripted"),
    ];
    env.extend_from_slice(extra);
    let mut all = vec!["run", "--json", "--out", "rec"];
    all.extend_from_slice(args);
    seamark_with_env(&all, &env).await
}

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
    let run = seamark(&[
        "mark",
        &server.url("form.html"),
        "-o",
        "m.png",
        "--json",
        "t.json",
    ])
    .await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
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
    let run = seamark(&[
        "mark",
        &server.url("checkboxes.html"),
        "--viewport",
        "800x600",
        "-o",
        "m.jpg",
    ])
    .await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let bytes = std::fs::read(run.path("m.jpg")).unwrap();
    assert_eq!(&bytes[..2], &[0xFF, 0xD8], "not a JPEG");
    let img = image::load_from_memory(&bytes).unwrap();
    assert_eq!((img.width(), img.height()), (800, 600));
}

#[tokio::test]
async fn a_malformed_viewport_is_a_usage_error() {
    let run = seamark(&["mark", "about:blank", "--viewport", "1280by800"]).await;
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("expected WIDTHxHEIGHT"),
        "{}",
        run.stderr()
    );
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
    let run = seamark(&["mark", &url]).await;
    assert_eq!(run.code(), Some(1));
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
    let run = seamark(&["mark", &server.url("image.png")]).await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(
        run.stderr().contains("not an HTML page but image/png"),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr().contains("no interactive element found"),
        "{}",
        run.stderr()
    );
    assert_eq!(run.stdout(), "");
}

#[tokio::test]
async fn a_pdf_is_said_not_to_be_a_page() {
    let server = Server::start(None).await;
    let run = seamark(&["mark", &server.url("doc.pdf")]).await;
    let err = run.stderr();
    assert_eq!(run.code(), Some(0), "{err}");
    assert!(
        err.contains("not an HTML page but application/pdf"),
        "{err}"
    );
}

#[tokio::test]
async fn a_page_that_never_finishes_loading_is_perceived_after_the_timeout() {
    let server = Server::start(None).await;
    let run = seamark(&["mark", &server.url("slow"), "--timeout", "2"]).await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(
        run.stderr().contains("had not finished loading"),
        "{}",
        run.stderr()
    );
    assert_eq!(run.stdout(), "[1] button \"Early button\"\n");
}

#[tokio::test]
async fn about_blank_has_nothing_to_mark() {
    let run = seamark(&["mark", "about:blank", "-o", "b.png"]).await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(run.stderr().contains("no interactive element found"));
    assert!(run.path("b.png").is_file());
}

#[tokio::test]
async fn an_http_error_page_is_marked_and_its_status_reported() {
    let server = Server::start(None).await;
    let run = seamark(&["mark", &server.url("missing")]).await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(run.stderr().contains("HTTP 404"), "{}", run.stderr());
    assert_eq!(run.stdout(), "[1] \"Home\"\n");
}

#[tokio::test]
async fn a_page_with_fifty_thousand_nodes_gives_a_bounded_list() {
    let server = Server::start(None).await;
    let run = seamark(&["mark", &server.url("big"), "--json", "t.json"]).await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(
        run.stdout().starts_with("[1] \"Row link 0\"\n"),
        "{}",
        run.stdout()
    );
    // One link every 18,000 px: the others lie in parts too far to walk.
    let table: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.path("t.json")).unwrap()).unwrap();
    assert_eq!(table["elements"].as_array().unwrap().len(), 1);
    assert!(run.stderr().contains("distant parts"), "{}", run.stderr());
}

#[tokio::test]
async fn a_missing_chromium_says_where_it_looked_and_how_to_fix_it() {
    let run = seamark(&["mark", "about:blank", "--chrome", "/nonexistent/chromium"]).await;
    assert_eq!(run.code(), Some(1));
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
    let run = seamark(&["mark", &server.url("disabled.html"), "--cdp", &ws]).await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
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
    let run = seamark(&[
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
    .await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
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
    let run = seamark_with_env(&["run", "--task", "x", "--url", "http://127.0.0.1:9/"], &[]).await;
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    let err = run.stderr();
    for needle in [
        "--model openai/<model>",
        "SEAMARK_MODEL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ] {
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
    let run = seamark_with_env(
        &[
            "run",
            "--task",
            "x",
            "--url",
            "http://127.0.0.1:9/",
            "--model",
            "openai/gpt-4o",
        ],
        &[],
    )
    .await;
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("OPENAI_API_KEY is not set"),
        "{}",
        run.stderr()
    );
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
    let run = seamark_with_env(
        &[
            "run",
            "--task",
            "Turn off the newsletter",
            "--url",
            &url,
            "--json",
            "--out",
            "rec",
        ],
        &env,
    )
    .await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
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
    let again = seamark_with_env(
        &["replay", rec.to_str().unwrap(), "--json", "--out", "again"],
        &[],
    )
    .await;
    assert_eq!(again.code(), Some(0), "{}", again.stderr());
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
    let run = seamark(&["replay", "no/such/run"]).await;
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr()
            .contains("cannot read no/such/run/journal.jsonl"),
        "{}",
        run.stderr()
    );
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
    let run = seamark_with_env(&with(&["--allow-domain", "https://example.com/x"]), &env).await;
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr()
            .contains("is not a domain pattern (a domain, not a URL)"),
        "{}",
        run.stderr()
    );
    let run = seamark_with_env(&with(&["--secret", "pw=abc"]), &env).await;
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr()
            .contains("secret pw: the value is shorter than 4 characters"),
        "{}",
        run.stderr()
    );
    assert!(
        !run.stderr().contains("abc"),
        "the value is not echoed: {}",
        run.stderr()
    );
    let run = seamark_with_env(&with(&["--secret", "pw=env:SEAMARK_TEST_UNSET_VAR"]), &env).await;
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr()
            .contains("env SEAMARK_TEST_UNSET_VAR is not set"),
        "{}",
        run.stderr()
    );
    let run = seamark_with_env(&with(&["--confirm", "sometimes"]), &env).await;
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr()
            .contains("--confirm takes ask, deny, allow or park"),
        "{}",
        run.stderr()
    );
}
