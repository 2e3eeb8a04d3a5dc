//! Run reports: `report.html` and `run.gif` as a run writes them and as
//! `seamark report` writes them again, opened in the real Chromium, hostile
//! pages included.

use std::path::Path;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::input::{DispatchKeyEventParams, DispatchKeyEventType};
use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use serde_json::Value;

use crate::model_server::{hang, reply, say, ModelServer};
use crate::server::Server;
use crate::support::{records, spawn_with_model, stop_script, Fixture, Run, Seamark};

/// What a hostile page tries to run in whoever shows its names.
const OWNED: &str = "document.title='owned'";

/// A report opened in Chromium from its file, with every error, CSP
/// violation and failed load the page meets collected from before it loads.
struct Shown {
    fx: Fixture,
}

impl Shown {
    async fn open(report: &Path) -> Shown {
        let fx = Fixture::open("empty.html").await;
        let watch = "window.__problems = [];\
            document.addEventListener('securitypolicyviolation', e => \
              window.__problems.push('csp: ' + e.violatedDirective + ' ' + e.blockedURI));\
            window.addEventListener('error', e => window.__problems.push('error: ' + \
              (e.message || (e.target && (e.target.src || e.target.href)) || e.type)), true);";
        fx.session
            .page()
            .execute(AddScriptToEvaluateOnNewDocumentParams::new(watch))
            .await
            .expect("install the watch");
        let url = url::Url::from_file_path(report).expect("a file URL");
        fx.goto(url.as_str()).await;
        Shown { fx }
    }

    async fn eval(&self, js: &str) -> Value {
        self.fx.eval(js).await
    }

    /// The natural width of every step's screenshot, each scrolled to (they
    /// load lazily, as a person scrolling sees them).
    async fn image_widths(&self) -> Vec<u64> {
        let v = self
            .eval(
                "(async () => { const out = []; \
                   for (const img of document.querySelectorAll('section.step img')) { \
                     img.scrollIntoView(); try { await img.decode(); } catch (e) {} \
                     out.push(img.naturalWidth); } return out; })()",
            )
            .await;
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default()
    }

    async fn press(&self, key: &str, code: i64) {
        for kind in [DispatchKeyEventType::KeyDown, DispatchKeyEventType::KeyUp] {
            let params = DispatchKeyEventParams::builder()
                .r#type(kind)
                .key(key)
                .code(key)
                .windows_virtual_key_code(code)
                .build()
                .expect("key event");
            self.fx.session.page().execute(params).await.expect("press");
        }
    }

    async fn problems(&self) -> Value {
        self.eval("window.__problems").await
    }

    async fn close(self) {
        self.fx.close().await;
    }
}

/// The id of the first list line holding `needle`, as a model reads it.
fn id_on_line(text: &str, needle: &str) -> u32 {
    text.lines()
        .filter(|l| l.starts_with('[') && l.contains(needle))
        .find_map(|l| l[1..].split(']').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{text}"))
}

/// A three-step run on the hostile page: a click that opens a dialog with
/// markup in it, a click on an id that does not exist (the failed step),
/// then an answer made of markup.
async fn hostile_run() -> (Run, Server) {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| format!("CLICK:{}", id_on_line(&r.text(), "onerror"))),
        say("CLICK:999"),
        say(&format!(
            "ANSWER:<img src=x onerror={OWNED}></script><script>{OWNED}</script>\nCOMPLETE:done"
        )),
    ];
    let model = ModelServer::start(script, stop_script).await;
    let run = Seamark::task(&[
        "--task",
        "Look at the account <b>page</b>",
        "--url",
        &server.url("hostile.html"),
    ])
    .model(&model)
    .output()
    .await;
    (run, server)
}

#[tokio::test]
async fn a_run_writes_a_report_a_person_can_read_and_a_hostile_page_leaves_it_inert() {
    let (run, _server) = hostile_run().await;
    let result = run.json();
    // Relative to where seamark ran, as the run directory is.
    let report = run.path(result["report"].as_str().expect("the report's path"));
    assert_eq!(report, run.path("rec/report.html"));
    let shown = Shown::open(&report).await;
    // One card per step, the failed one marked and linked from the summary.
    let cards = shown
        .eval("[...document.querySelectorAll('section.step')].map(s => s.id + ' ' + s.className)")
        .await;
    assert_eq!(
        cards,
        serde_json::json!(["step-1 step", "step-2 step failed", "step-3 step"])
    );
    let links = shown
        .eval("[...document.querySelectorAll('.summary.failures a')].map(a => a.getAttribute('href'))")
        .await;
    assert_eq!(links, serde_json::json!(["#step-2"]));
    assert_eq!(shown.image_widths().await, vec![1280, 1280, 1280]);
    // The prompt's tokens, a bar per step, its tooltip the journal's figures.
    let bars = shown
        .eval("[...document.querySelectorAll('svg.tokens g title')].map(t => t.textContent)")
        .await;
    let journaled: Vec<String> = records(&run.path("rec"), "step")
        .iter()
        .map(|r| {
            let t = &r["prompt_tokens"];
            format!(
                "step {}: {} text + {} image tokens",
                r["step"], t["text"], t["images"]
            )
        })
        .collect();
    assert_eq!(bars, serde_json::json!(journaled));
    assert!(journaled[0].contains(" text + 1105 image"), "{journaled:?}");
    let text = shown
        .eval("document.body.innerText")
        .await
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The page's names, its dialog and the model's answer, shown as text.
    for shown_as_text in [
        format!("<img src=x onerror={OWNED}>"),
        format!("</script><script>{OWNED}</script>"),
        "Look at the account <b>page</b>".to_string(),
    ] {
        assert!(
            text.contains(shown_as_text.as_str()),
            "{shown_as_text:?} not shown:\n{text}"
        );
    }
    assert!(text.contains("alert \"<img src=x onerror="), "{text}");
    assert!(text.contains("failed"), "{text}");
    assert!(text.contains("CLICK:999"), "{text}");
    // Nothing ran: the title is the report's, no element came from the page,
    // and the page met no error and no CSP violation (its own style and
    // script were allowed).
    assert_eq!(
        shown.eval("document.title").await,
        "seamark · Look at the account <b>page</b>"
    );
    assert_eq!(shown.eval("document.scripts.length").await, 1);
    assert_eq!(
        shown
            .eval("document.querySelectorAll('[onerror], b, iframe, object, embed').length")
            .await,
        0
    );
    // Three screenshots, the animation, and the enlarged view.
    assert_eq!(shown.eval("document.images.length").await, 5);
    assert_eq!(shown.problems().await, serde_json::json!([]));
    // The style applied: the failed card is tinted.
    assert_eq!(
        shown
            .eval("getComputedStyle(document.getElementById('step-2')).backgroundColor")
            .await,
        "rgb(255, 246, 246)"
    );
    // ← → move between the steps.
    shown.eval("window.scrollTo(0, 0)").await;
    shown.press("ArrowRight", 39).await;
    assert_eq!(shown.eval("document.activeElement.id").await, "step-1");
    shown.press("ArrowRight", 39).await;
    assert_eq!(shown.eval("document.activeElement.id").await, "step-2");
    shown.press("ArrowLeft", 37).await;
    assert_eq!(shown.eval("document.activeElement.id").await, "step-1");
    // A click on a screenshot enlarges it.
    shown
        .eval("document.querySelector('#step-2 a.shot').click()")
        .await;
    assert_eq!(
        shown.eval("document.getElementById('zoom').open").await,
        true
    );
    assert_eq!(
        shown
            .eval("document.querySelector('#zoom img').getAttribute('src')")
            .await,
        "step-002.png"
    );
    shown.close().await;
}

#[tokio::test]
async fn the_animation_has_one_frame_per_step_800_pixels_wide() {
    let (run, _server) = hostile_run().await;
    let file = std::fs::File::open(run.path("rec/run.gif")).expect("run.gif");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(file).expect("a GIF");
    // 1280×800 screenshots at 800 wide, with four caption lines under them.
    assert_eq!((decoder.width(), decoder.height()), (800, 596));
    let mut delays = Vec::new();
    while let Some(frame) = decoder.read_next_frame().expect("a frame") {
        delays.push(frame.delay);
    }
    assert_eq!(delays, vec![100, 100, 300]);
}

#[tokio::test]
async fn a_report_copied_elsewhere_still_shows_its_images_and_one_written_outside_holds_them() {
    let (run, _server) = hostile_run().await;
    // The run directory copied: its report refers to images beside it.
    let copy = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(run.path("rec"))
        .expect("run dir")
        .flatten()
    {
        std::fs::copy(entry.path(), copy.path().join(entry.file_name())).expect("copy");
    }
    let shown = Shown::open(&copy.path().join("report.html")).await;
    assert_eq!(shown.image_widths().await, vec![1280, 1280, 1280]);
    shown.close().await;
    // Written outside the run directory: one file, images inside.
    let out = copy.path().join("alone.html");
    let again = Seamark::new(&[
        "report",
        run.path("rec").to_str().unwrap_or_default(),
        "-o",
        out.to_str().unwrap_or_default(),
    ])
    .run()
    .await;
    assert!(again.stdout().contains("alone.html"), "{}", again.stdout());
    std::fs::remove_dir_all(run.path("rec")).expect("remove the run");
    let alone = tempfile::tempdir().expect("temp dir");
    let moved = alone.path().join("alone.html");
    std::fs::copy(&out, &moved).expect("move the report");
    let shown = Shown::open(&moved).await;
    assert_eq!(shown.image_widths().await, vec![1280, 1280, 1280]);
    assert_eq!(
        shown
            .eval("[...document.querySelectorAll('img[src]')].every(i => i.src.startsWith('data:image/'))")
            .await,
        true
    );
    assert_eq!(shown.problems().await, serde_json::json!([]));
    shown.close().await;
}

/// Starts a run whose model answers step 1 and never step 2, and waits
/// until step 2 is asked.
pub async fn run_stuck_at_step_two(
    server: &Server,
) -> (
    tokio::process::Child,
    crate::processes::TestDir,
    ModelServer,
) {
    let model = ModelServer::start(
        vec![reply(|r| format!("CLICK:{}", r.id_of("Send me news")))],
        hang,
    )
    .await;
    let (child, dir) = spawn_with_model(
        &model,
        &[
            "--task",
            "Turn off the newsletter",
            "--url",
            &server.url("form.html"),
        ],
    );
    for _ in 0..600 {
        if model.received().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(model.received().len() >= 2, "step 2 was never asked");
    (child, dir, model)
}

pub async fn signal(child: &tokio::process::Child, name: &str) {
    let pid = child.id().expect("a running process").to_string();
    let status = tokio::process::Command::new("kill")
        .args([name, &pid])
        .status()
        .await
        .expect("kill");
    assert!(status.success());
}

#[tokio::test]
async fn ctrl_c_ends_the_run_as_interrupted_with_its_end_record_and_report() {
    let server = Server::start(None).await;
    let (child, dir, _model) = run_stuck_at_step_two(&server).await;
    signal(&child, "-INT").await;
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("seamark ended")
        .expect("output");
    assert_eq!(out.status.code(), Some(130));
    let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON result");
    assert_eq!(result["status"], "interrupted");
    assert_eq!(result["steps"], 1);
    assert!(result["reason"]
        .as_str()
        .unwrap_or_default()
        .contains("during step 2"));
    let rec = dir.path().join("rec");
    assert_eq!(records(&rec, "end")[0]["result"]["status"], "interrupted");
    let html = std::fs::read_to_string(rec.join("report.html")).expect("report.html");
    assert!(
        html.contains("interrupted (Ctrl-C) during step 2"),
        "{html}"
    );
    assert!(html.contains("id=\"step-1\""));
}

#[tokio::test]
async fn a_killed_run_whose_journal_was_cut_is_reported_as_interrupted() {
    let server = Server::start(None).await;
    let (mut child, dir, _model) = run_stuck_at_step_two(&server).await;
    signal(&child, "-KILL").await;
    let _ = child.wait().await;
    let rec = dir.path().join("rec");
    assert!(records(&rec, "end").is_empty());
    assert!(!rec.join("report.html").exists());
    // As a crash in the middle of writing leaves it: half a line.
    let journal = rec.join("journal.jsonl");
    let mut text = std::fs::read_to_string(&journal).expect("journal");
    text.push_str("{\"kind\":\"step\",\"step\":2,\"url\":\"http");
    std::fs::write(&journal, text).expect("cut the journal");
    let again = Seamark::new(&["report", rec.to_str().unwrap_or_default()])
        .run()
        .await;
    // Line 4: after the start, step 1's commands (act) and step 1.
    again.stderr_has("line 4 of the journal was cut off");
    let shown = Shown::open(&rec.join("report.html")).await;
    let text = shown.eval("document.body.innerText").await;
    let text = text.as_str().unwrap_or_default();
    assert!(text.contains("interrupted"), "{text}");
    assert!(text.contains("its journal stops after step 1"), "{text}");
    assert!(text.contains("line 4 of the journal was cut off"), "{text}");
    assert_eq!(shown.image_widths().await, vec![1280]);
    shown.close().await;
}

#[tokio::test]
async fn report_of_a_missing_directory_or_one_without_a_journal_is_a_usage_error() {
    let missing = Seamark::new(&["report", "no/such/run"])
        .fails(2)
        .run()
        .await;
    missing.stderr_has("no run directory at no/such/run");
    let empty = tempfile::tempdir().expect("temp dir");
    let none = Seamark::new(&["report", empty.path().to_str().unwrap_or_default()])
        .fails(2)
        .run()
        .await;
    none.stderr_has("holds no journal.jsonl");
    std::fs::write(empty.path().join("journal.jsonl"), "garbage\n\u{0}\u{1}\n").expect("write");
    let garbage = Seamark::new(&["report", empty.path().to_str().unwrap_or_default()])
        .fails(2)
        .run()
        .await;
    assert!(
        garbage
            .stderr()
            .contains("holds no record seamark can read"),
        "{}",
        garbage.stderr()
    );
}

#[tokio::test]
async fn a_garbage_line_in_a_journal_is_skipped_with_a_note_and_the_rest_reported() {
    let (run, _server) = hostile_run().await;
    let journal = run.path("rec/journal.jsonl");
    let text = std::fs::read_to_string(&journal).expect("journal");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "this is not JSON {");
    std::fs::write(&journal, lines.join("\n") + "\n").expect("write");
    let again = Seamark::new(&["report", run.path("rec").to_str().unwrap_or_default()])
        .run()
        .await;
    assert!(
        again
            .stderr()
            .contains("line 3 of the journal could not be read"),
        "{}",
        again.stderr()
    );
    let html = std::fs::read_to_string(run.path("rec/report.html")).expect("report");
    assert_eq!(html.matches("<section class=\"step").count(), 3);
    assert!(html.contains("line 3 of the journal could not be read"));
}

#[tokio::test]
async fn a_replay_report_marks_the_steps_whose_page_differs_from_the_recording() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| format!("CLICK:{}", r.id_of("Done"))),
        say("COMPLETE:done"),
    ];
    let model = ModelServer::start(script, stop_script).await;
    let run = Seamark::task(&["--task", "Say done", "--url", &server.url("visits")])
        .model(&model)
        .run()
        .await;
    let rec = run.path("rec");
    let again = Seamark::new(&[
        "replay",
        rec.to_str().unwrap_or_default(),
        "--json",
        "--out",
        run.path("again").to_str().unwrap_or_default(),
    ])
    .run()
    .await;
    let result = again.json();
    assert!(
        !result["divergences"]
            .as_array()
            .map(Vec::is_empty)
            .unwrap_or(true),
        "{result}"
    );
    let html = std::fs::read_to_string(run.path("again/report.html")).expect("report");
    assert!(
        html.contains("class=\"step diverged\" id=\"step-1\""),
        "{html}"
    );
    assert!(
        html.contains("the page differs from the recording at"),
        "{html}"
    );
    assert!(html.contains("href=\"#step-1\">step 1</a>"), "{html}");
}
