//! The live view: a run's browser watched from a page in a real Chromium
//! (the test's), taken over there with real pointer and key events, and
//! handed back; the agent asking for a person's hands (`HANDS`) and going
//! on when they are done; and nothing a person typed kept anywhere.

use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    MouseButton,
};
use seamark::browser::Viewport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::model_server::{ModelServer, Received, Reply};
use crate::server::Server;
use crate::support::journal::records;
use crate::support::process::spawn_with_model;
use crate::support::Fixture;

/// The code the fixture draws in a picture: what a person types, and what
/// must be found nowhere afterwards.
pub(crate) const CODE: &str = "k7Qx2";

/// What the prompt says after a person handed the browser back.
const HANDED_BACK: &str = "A PERSON HAD THE BROWSER";

/// A model at the human check: asks for hands, then presses Continue once
/// a person has had the browser, and is done when the page welcomes it.
pub(crate) fn at_the_human_check(r: &Received) -> Reply {
    let text = r.text();
    Reply::Text(if text.contains("Welcome") {
        "COMPLETE:past the human check".into()
    } else if text.contains(HANDED_BACK) {
        format!("CLICK:{}", r.id_of("Continue"))
    } else {
        "HANDS:the page wants a code read from a picture".into()
    })
}

/// A model that asks for hands, and is done once a person had the browser.
fn hands_then_done(r: &Received) -> Reply {
    Reply::Text(if r.text().contains(HANDED_BACK) {
        "COMPLETE:a person acted".into()
    } else {
        "HANDS:a person must point at the page".into()
    })
}

/// A `seamark run --live` under way, and its live view's address.
struct LiveRun {
    child: tokio::process::Child,
    dir: crate::processes::TestDir,
    url: String,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl LiveRun {
    async fn start(model: &ModelServer, site: &Server, task: &str, more: &[&str]) -> LiveRun {
        let url = site.url("human-check.html");
        let mut args = vec!["--live", "--task", task, "--url", &url];
        args.extend_from_slice(more);
        let (mut child, dir) = spawn_with_model(model, &args);
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let live = tokio::time::timeout(Duration::from_secs(60), async {
            while let Ok(Some(line)) = lines.next_line().await {
                said.lock().unwrap().push_str(&format!("{line}\n"));
                if let Some(url) = line.split("hand back): ").nth(1) {
                    return url.trim().to_string();
                }
            }
            panic!("no live view was announced:\n{}", said.lock().unwrap());
        })
        .await
        .expect("the live view's address in a minute");
        let keep = said.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                keep.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        LiveRun {
            child,
            dir,
            url: live,
            stderr: said,
        }
    }

    /// Waits for the run to end; its `--json` result.
    async fn result(mut self) -> (Value, crate::processes::TestDir) {
        let mut stdout = self.child.stdout.take().expect("stdout");
        let mut out = String::new();
        tokio::time::timeout(Duration::from_secs(120), async {
            use tokio::io::AsyncReadExt;
            stdout.read_to_string(&mut out).await.unwrap();
            self.child.wait().await.unwrap()
        })
        .await
        .unwrap_or_else(|_| panic!("the run did not end:\n{}", self.stderr.lock().unwrap()));
        let result = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("no result ({e}): {out}\n{}", self.stderr.lock().unwrap()));
        (result, self.dir)
    }
}

/// A person's view of a live page, in the test's Chromium at a width of
/// its own.
pub(crate) struct Viewer {
    pub fx: Fixture,
}

impl Viewer {
    pub async fn open(url: &str, width: u32) -> Viewer {
        let viewport = Viewport {
            width,
            height: 1000,
            ..Viewport::default()
        };
        Viewer {
            fx: Fixture::open_with(url, viewport).await,
        }
    }

    /// Waits until `js` is true in the viewer's page, a minute at most.
    pub async fn until(&self, js: &str) {
        let t = Instant::now();
        while self.fx.eval(js).await != Value::Bool(true) {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "never true in the viewer: {js}; it shows {}",
                self.fx
                    .eval("document.getElementById('status').textContent")
                    .await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn mouse(&self, kind: DispatchMouseEventType, x: f64, y: f64, button: MouseButton) {
        let mut e = DispatchMouseEventParams::new(kind, x, y);
        e.button = Some(button);
        e.click_count = Some(1);
        e.buttons = Some(0);
        self.fx.session.page().execute(e).await.expect("mouse");
    }

    /// A real click (or right click) at a CSS point of the viewer's page.
    pub async fn click(&self, x: f64, y: f64, button: MouseButton) {
        self.mouse(DispatchMouseEventType::MouseMoved, x, y, MouseButton::None)
            .await;
        self.mouse(DispatchMouseEventType::MousePressed, x, y, button.clone())
            .await;
        self.mouse(DispatchMouseEventType::MouseReleased, x, y, button)
            .await;
    }

    /// The centre of an element of the viewer's page.
    async fn centre(&self, selector: &str) -> (f64, f64) {
        let at = self
            .fx
            .eval(&format!(
                "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); \
                 return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
            ))
            .await;
        (at[0].as_f64().unwrap(), at[1].as_f64().unwrap())
    }

    /// Clicks a button of the viewer's page.
    pub async fn press(&self, selector: &str) {
        let (x, y) = self.centre(selector).await;
        self.click(x, y, MouseButton::Left).await;
    }

    /// The viewer's point that shows fraction `(fx, fy)` of the frame.
    pub async fn frame_point(&self, fx: f64, fy: f64) -> (f64, f64) {
        let r = self
            .fx
            .eval(
                "(() => { const r = document.getElementById('screen').getBoundingClientRect(); \
                 return [r.left, r.top, r.width, r.height]; })()",
            )
            .await;
        let n = |i: usize| r[i].as_f64().unwrap();
        (n(0) + fx * n(2), n(1) + fy * n(3))
    }

    /// Takes the browser over and waits until it is the person's.
    pub async fn take_over(&self) {
        self.until("!document.getElementById('take').hidden && !!document.getElementById('screen').dataset.seq")
            .await;
        self.press("#take").await;
        self.until("document.body.dataset.control === 'person'")
            .await;
    }

    /// Types `text` with real key events where the viewer's focus is.
    pub async fn keys(&self, text: &str) {
        for c in text.chars() {
            let key = c.to_string();
            let mut down = DispatchKeyEventParams::new(DispatchKeyEventType::KeyDown);
            down.key = Some(key.clone());
            down.text = Some(key.clone());
            self.fx.session.page().execute(down).await.expect("key");
            let mut up = DispatchKeyEventParams::new(DispatchKeyEventType::KeyUp);
            up.key = Some(key);
            self.fx.session.page().execute(up).await.expect("key");
        }
    }

    /// Hands the browser back with `note`.
    pub async fn hand_back(&self, note: &str) {
        self.press("#note").await;
        self.keys(note).await;
        self.press("#back button").await;
        self.until("document.body.dataset.control !== 'person'")
            .await;
    }
}

/// Where the watched page says clicks landed: (x, y, innerWidth,
/// innerHeight, button), in order.
pub(crate) fn clicks(site: &Server) -> Vec<(f64, f64, f64, f64, i64)> {
    site.requests("/clicked?")
        .iter()
        .map(|path| {
            let q: std::collections::HashMap<String, String> =
                url::form_urlencoded::parse(path.split('?').nth(1).unwrap_or_default().as_bytes())
                    .into_owned()
                    .collect();
            let n = |k: &str| q[k].parse::<f64>().unwrap();
            (n("x"), n("y"), n("w"), n("h"), n("button") as i64)
        })
        .collect()
}

/// Waits for the watched page to tell of its `n`th click.
async fn nth_click(site: &Server, n: usize) -> (f64, f64, f64, f64, i64) {
    let t = Instant::now();
    loop {
        if let Some(c) = clicks(site).get(n - 1) {
            return *c;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "click {n} never landed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 2.0
}

/// Whether any file under `dir` holds `text`: the name of one that does.
fn file_holding(dir: &std::path::Path, text: &str) -> Option<String> {
    walk(dir).into_iter().find_map(|p| {
        let bytes = std::fs::read(&p).ok()?;
        let holds = bytes.windows(text.len()).any(|b| b == text.as_bytes());
        holds.then(|| p.display().to_string())
    })
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_asks_for_hands_a_person_types_the_code_in_the_live_view_and_the_agent_goes_on() {
    let site = Server::start(None).await;
    let model = ModelServer::answering(at_the_human_check).await;
    let traces = crate::otlp_receiver::OtlpReceiver::start().await;
    let otlp = traces.base.clone();
    let run = LiveRun::start(
        &model,
        &site,
        "Get past the human check",
        &["--otlp", &otlp],
    )
    .await;
    let viewer = Viewer::open(&run.url, 1280).await;
    // The agent's reason is on the page while it waits.
    viewer
        .until(
            "document.getElementById('asked').textContent.includes('a code read from a picture')",
        )
        .await;
    viewer.take_over().await;
    // Into the field through the live view (the fixture puts it at CSS
    // 100..300 × 200..230 of a 1280 × 800 viewport): a click where the
    // frame shows it, then the code as keys.
    let (x, y) = viewer.frame_point(200.0 / 1280.0, 215.0 / 800.0).await;
    viewer.click(x, y, MouseButton::Left).await;
    viewer.keys(CODE).await;
    viewer.hand_back("I typed the code for you").await;
    let (result, dir) = run.result().await;
    assert_eq!(result["status"], "done", "{result}");

    // The next prompt told of the hand-over and the note, not the code.
    let prompts: Vec<String> = model.received().iter().map(Received::text).collect();
    let told = prompts
        .iter()
        .find(|p| p.contains(HANDED_BACK))
        .expect("a prompt after the hand-over");
    assert!(told.contains("I typed the code for you"), "{told}");
    assert!(told.contains("\"Code\" (input text)"), "{told}");
    for p in &prompts {
        assert!(!p.contains(CODE), "a prompt holds what the person typed");
    }
    // The journal's record of it, and the report's.
    let rec = dir.path().join("rec");
    let hands = records(&rec, "hands").remove(0);
    assert_eq!(hands["asked"], "the page wants a code read from a picture");
    assert_eq!(hands["ended"], "handed_back");
    assert_eq!(hands["note"], "I typed the code for you");
    assert!(hands["typed_into"][0].as_str().unwrap().contains("Code"));
    let report = std::fs::read_to_string(rec.join("report.html")).unwrap();
    assert!(report.contains("I typed the code for you"));
    if let Some(name) = file_holding(&rec, CODE) {
        panic!("{name} holds what the person typed");
    }
    // Nor does the run's trace.
    let bodies = traces.bodies();
    assert!(!bodies.is_empty(), "the run sent its trace");
    for body in bodies {
        assert!(
            !body.windows(CODE.len()).any(|b| b == CODE.as_bytes()),
            "the trace holds what the person typed"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_live_view_hands_ends_the_run_needing_a_person_with_the_reason() {
    let site = Server::start(None).await;
    let model = ModelServer::answering(at_the_human_check).await;
    let url = site.url("human-check.html");
    let run = crate::support::process::Seamark::task(&[
        "--task",
        "Get past the human check",
        "--url",
        &url,
    ])
    .model(&model)
    .fails(3)
    .run()
    .await;
    let result = run.json();
    assert_eq!(result["status"], "needs_input", "{result}");
    assert_eq!(
        result["reason"],
        "a person's hands are needed in the browser: the page wants a code read from a picture"
    );
}

/// Records, in a viewer's page, when each frame arrived and whether the
/// watched page's pad shows red in it (the pad fills the bottom of the
/// page; the point is its middle near the bottom).
const WATCH_THE_PAD: &str = r#"(() => {
  window.seen = [];
  const s = document.getElementById('screen');
  const c = document.createElement('canvas');
  s.addEventListener('load', () => {
    c.width = s.naturalWidth; c.height = s.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(s, 0, 0);
    const p = g.getImageData(Math.floor(c.width * 0.5), Math.floor(c.height * 0.95), 1, 1).data;
    window.seen.push([Date.now(), p[0] > 180 && p[1] < 90 && p[2] < 90]);
  });
  return true;
})()"#;

/// When a viewer first showed the pad red (the wall clock, ms).
async fn first_red(viewer: &Viewer) -> f64 {
    viewer.until("window.seen.some(([, red]) => red)").await;
    viewer
        .fx
        .eval("window.seen.find(([, red]) => red)[0]")
        .await
        .as_f64()
        .unwrap()
}

/// When the watched page painted its pad red (the wall clock, ms).
async fn painted(site: &Server) -> f64 {
    let t = Instant::now();
    loop {
        if let Some(path) = site.requests("/painted?at=").first() {
            return path.rsplit('=').next().unwrap().parse().unwrap();
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the pad was never painted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicks_in_views_640_and_1600_wide_land_at_the_matching_css_point_and_both_see_the_change_within_a_second(
) {
    // Two people watch the one run.
    let (site, _model, run, narrow) = watched(hands_then_done, "Point at the page", &[], 640).await;
    let wide = Viewer::open(&run.url, 1600).await;
    narrow.take_over().await;
    wide.until("document.body.dataset.control === 'person'")
        .await;
    for v in [&narrow, &wide] {
        v.fx.eval(WATCH_THE_PAD).await;
    }
    // Points of the pad (the bottom 45 % of the watched page), as
    // fractions of the frame each viewer shows at its own size.
    for (n, (viewer, fx, fy)) in [(&narrow, 0.25, 0.8), (&wide, 0.75, 0.6)]
        .into_iter()
        .enumerate()
    {
        let (x, y) = viewer.frame_point(fx, fy).await;
        viewer.click(x, y, MouseButton::Left).await;
        let (cx, cy, w, h, button) = nth_click(&site, n + 1).await;
        assert_eq!((w, h), (1280.0, 800.0));
        assert!(
            close(cx, fx * w) && close(cy, fy * h),
            "the click at {fx},{fy} of the frame landed at {cx},{cy}"
        );
        assert_eq!(button, 0);
    }
    // The first click painted the pad: both viewers showed it within a
    // second of the watched page's paint (by the wall clock both share).
    let at = painted(&site).await;
    for v in [&narrow, &wide] {
        let shown = first_red(v).await;
        assert!(
            shown - at < 1000.0,
            "a viewer showed the change {} ms after the page made it",
            shown - at
        );
    }
    // A right click is a right click there.
    let (x, y) = wide.frame_point(0.5, 0.9).await;
    wide.click(x, y, MouseButton::Right).await;
    let (cx, cy, ..) = nth_click(&site, 3).await;
    assert_eq!(nth_click(&site, 3).await.4, 2);
    assert!(close(cx, 640.0) && close(cy, 720.0), "{cx},{cy}");
    hand_back_and_done(&wide, run).await;
}

/// A `seamark run --live` at the human check with the model `answer`,
/// and a viewer of it `width` wide.
async fn watched(
    answer: fn(&Received) -> Reply,
    task: &str,
    more: &[&str],
    width: u32,
) -> (Server, ModelServer, LiveRun, Viewer) {
    let site = Server::start(None).await;
    let model = ModelServer::answering(answer).await;
    let run = LiveRun::start(&model, &site, task, more).await;
    let viewer = Viewer::open(&run.url, width).await;
    (site, model, run, viewer)
}

/// Hands the browser back from `viewer`, to a model that is done once a
/// person had it: the run ends done.
async fn hand_back_and_done(viewer: &Viewer, run: LiveRun) {
    viewer.hand_back("").await;
    let (result, _) = run.result().await;
    assert_eq!(result["status"], "done", "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_in_the_live_view_of_a_phone_lands_at_the_matching_css_point() {
    let (site, _model, run, viewer) = watched(
        hands_then_done,
        "Point at the phone",
        &["--device", "iPhone SE"],
        1280,
    )
    .await;
    viewer.take_over().await;
    let (x, y) = viewer.frame_point(0.5, 0.9).await;
    viewer.click(x, y, MouseButton::Left).await;
    let (cx, cy, w, h, _) = nth_click(&site, 1).await;
    assert_eq!((w, h), (375.0, 667.0), "the phone's viewport");
    assert!(close(cx, 0.5 * w) && close(cy, 0.9 * h), "{cx},{cy}");
    hand_back_and_done(&viewer, run).await;
}

/// A model that waits, step after step, until a person has had the
/// browser; then it is done.
fn waits_for_a_person(r: &Received) -> Reply {
    Reply::Text(if r.text().contains(HANDED_BACK) {
        "COMPLETE:a person looked".into()
    } else {
        "WAIT:0.3".into()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_takes_over_between_steps_a_refused_host_stays_refused_and_the_agent_is_told() {
    let (site, model, run, viewer) = watched(
        waits_for_a_person,
        "Wait for a person",
        &["--allow-domain", "127.0.0.1"],
        1280,
    )
    .await;
    viewer
        .until("/^step [1-9]/.test(document.getElementById('status').textContent)")
        .await;
    viewer.take_over().await;
    let steps_then = model.received().len();
    // The link to another host (CSS 100..300 × 300..330): the domain
    // policy holds for a person's clicks as for the agent's.
    let (x, y) = viewer.frame_point(200.0 / 1280.0, 315.0 / 800.0).await;
    viewer.click(x, y, MouseButton::Left).await;
    nth_click(&site, 1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        model.received().len(),
        steps_then,
        "the agent took a step while the person had the browser"
    );
    viewer.hand_back("I only looked").await;
    let (result, dir) = run.result().await;
    assert_eq!(result["status"], "done", "{result}");
    assert!(
        !site.was_requested("/weather.html"),
        "a refused host was reached"
    );
    let told = model
        .received()
        .iter()
        .map(Received::text)
        .find(|t| t.contains(HANDED_BACK))
        .unwrap();
    assert!(told.contains("I only looked"), "{told}");
    assert!(told.contains("clicked 1 times"), "{told}");
    let hands = records(&dir.path().join("rec"), "hands").remove(0);
    assert!(hands.get("asked").is_none(), "{hands}");
    assert_eq!(hands["clicks"], 1);
}

/// The URLs of the pages the worker's kept browser has open.
async fn kept_pages(w: &crate::support::Workdir) -> Vec<String> {
    let tmp = crate::processes::tmp_of(&w.path(""));
    let mut pages = Vec::new();
    for profile in crate::processes::browser_profiles(&tmp) {
        pages.extend(crate::processes::pages_of_browser(&profile).await);
    }
    pages
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_serve_a_session_that_asks_for_hands_waits_with_its_browser_open_and_a_person_on_the_page_gets_it_done(
) {
    use crate::coworker::{submit, wait_for, Served};
    use seamark::coworker::SessionState;
    let site = Server::start(None).await;
    let model = ModelServer::answering(at_the_human_check).await;
    let w = crate::support::Workdir::new(&model);
    let hook = site.url("hook");
    let served = Served::serve(&w, &["--workers", "1", "--notify", &hook]).await;
    let id = submit(
        &served,
        "Get past the human check",
        &site.url("human-check.html"),
        serde_json::json!({ "no_skills": true }),
    )
    .await;
    let waiting = wait_for(&served, &id, SessionState::Waiting).await;
    assert!(
        waiting.reason.contains("a code read from a picture"),
        "{waiting:?}"
    );
    assert!(waiting.worker.is_some(), "its worker still holds it");
    let live = waiting.live.clone().expect("a live view");
    // The webhook heard of it.
    // The webhook heard of it (told after the session changed).
    let t = Instant::now();
    while site.posted("/hook").is_empty() {
        assert!(t.elapsed() < Duration::from_secs(30), "no webhook");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let told: Value = serde_json::from_str(&site.posted("/hook")[0]).unwrap();
    assert!(
        told["question"]
            .as_str()
            .unwrap()
            .contains("a person's hands"),
        "{told}"
    );
    // Its browser is open at the page, not closed as for a question.
    assert!(
        kept_pages(&w)
            .await
            .iter()
            .any(|u| u.contains("human-check.html")),
        "the page is open"
    );
    // Words are no answer to it.
    let refused = served.client().answer(&id, "here").await.unwrap_err();
    assert!(refused.to_string().contains("hands"), "{refused}");
    // The session's page shows the live view; a person takes over there.
    let page = served.page(&format!("/sessions/{id}")).await;
    assert!(
        page.contains(&format!("<iframe class=\"live\" src=\"{live}\"")),
        "{page}"
    );
    let viewer = Viewer::open(&format!("{}{live}", served.base), 1280).await;
    viewer.take_over().await;
    let (x, y) = viewer.frame_point(200.0 / 1280.0, 215.0 / 800.0).await;
    viewer.click(x, y, MouseButton::Left).await;
    viewer.keys(CODE).await;
    viewer.hand_back("typed it").await;
    let done = wait_for(&served, &id, SessionState::Done).await;
    assert!(done.live.is_none(), "no live view once it ended");
    let events = served.client().events(&id).await.unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.state == "active" && e.reason == "a person has the browser"),
        "{events:?}"
    );
    served.terminate().await;
    // What the person typed is in no file the server keeps: not its
    // database, not the run's journal, report or logs.
    if let Some(name) = file_holding(&w.path("seamark-serve"), CODE) {
        panic!("{name} holds what the person typed");
    }
    for p in model.received() {
        assert!(
            !p.text().contains(CODE),
            "a prompt holds what the person typed"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_serve_hands_left_alone_past_the_timeout_close_the_browser_and_the_session_waits_on()
{
    use crate::coworker::{submit, wait_for, Served};
    use seamark::coworker::SessionState;
    let site = Server::start(None).await;
    let model = ModelServer::answering(at_the_human_check).await;
    let w = crate::support::Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "1", "--hands-timeout", "2"]).await;
    let id = submit(
        &served,
        "Get past the human check",
        &site.url("human-check.html"),
        serde_json::json!({ "no_skills": true }),
    )
    .await;
    wait_for(&served, &id, SessionState::Waiting).await;
    // Nobody comes: the run ends needing a person, its worker lets go.
    let t = Instant::now();
    let session = loop {
        let s = served.client().get(&id).await.unwrap();
        if s.status == SessionState::Waiting && s.worker.is_none() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "{s:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        session
            .question
            .as_deref()
            .unwrap()
            .contains("a code read from a picture"),
        "{session:?}"
    );
    assert!(session.live.is_none());
    assert!(
        kept_pages(&w)
            .await
            .iter()
            .all(|u| !u.contains("human-check.html")),
        "the browser was closed"
    );
    // It waits as a question does: an answer is taken.
    served.client().answer(&id, "later").await.unwrap();
    served.client().stop(&id).await.ok();
    served.terminate().await;
}

#[tokio::test]
async fn the_live_view_checks_its_host_its_token_and_origin_and_takes_input_only_after_a_take_over()
{
    use seamark::live::{Live, LiveServer};
    let live = Live::new(Duration::from_secs(60));
    let server = LiveServer::start(
        live.clone(),
        "127.0.0.1:0".parse().unwrap(),
        Some("t0ken-of-the-run".into()),
        &[],
    )
    .await
    .unwrap();
    let base = format!("http://{}", server.address());
    // A given token is the giver's to hand out: the address says none.
    assert!(!server.url().contains("t0ken"), "{}", server.url());
    let client = reqwest::Client::new();
    let get = |path: &str| client.get(format!("{base}{path}"));
    assert_eq!(get("/state").send().await.unwrap().status(), 401);
    let ok = get("/state").bearer_auth("t0ken-of-the-run");
    assert_eq!(ok.send().await.unwrap().status(), 200);
    // A page on a name rebound to this address.
    let rebound = get("/state")
        .bearer_auth("t0ken-of-the-run")
        .header("host", "evil.example:80");
    assert_eq!(rebound.send().await.unwrap().status(), 421);
    // Another site's page posting a take-over.
    let post = |path: &str| {
        client
            .post(format!("{base}{path}"))
            .bearer_auth("t0ken-of-the-run")
    };
    let forged = post("/take").header("origin", "https://evil.example");
    assert_eq!(forged.send().await.unwrap().status(), 403);
    // Input before the person has the browser is refused.
    let click = r#"{"kind":"mouse","action":"down","x":0.5,"y":0.5,"button":"left"}"#;
    let early = post("/input")
        .header("content-type", "application/json")
        .body(click);
    assert_eq!(early.send().await.unwrap().status(), 409);
    // Something that is no input is refused as such.
    let odd = post("/input").body(r#"{"kind":"shell","cmd":"id"}"#);
    assert_eq!(odd.send().await.unwrap().status(), 400);
    // The page itself runs its own script only.
    let page = get("/")
        .bearer_auth("t0ken-of-the-run")
        .send()
        .await
        .unwrap();
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(policy.contains("frame-ancestors 'self'"), "{policy}");
    // Off loopback, with no token given, one is made.
    let open = LiveServer::start(live, "0.0.0.0:0".parse().unwrap(), None, &[])
        .await
        .unwrap();
    assert!(open.url().contains("?token="), "{}", open.url());
}
