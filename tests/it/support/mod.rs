//! The fluent helper: a fixture page in a real headless Chromium, perceived
//! with a guard that perception changed nothing, and assertions that read as
//! sentences: `seen.named("Buy now").button().occluded_by("Cookie consent")`.

pub mod journal;
pub mod process;
pub mod task;

pub use journal::{all_bytes, base64_decode, blocked_targets, records};
pub use process::{
    command, command_in, profiles_in, spawn_with_model, with_model, Ran, Run, Seamark, Workdir,
};
pub use task::{stop_script, Task, KEY};

use seamark::records::{BatchReport, Outcome, Status};

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use seamark::act::{ActOptions, Executor};
use seamark::browser::{BrowserOptions, Pool, Session, Viewport};
use seamark::commands::parse;
use seamark::perceive::{self, Direction, Element, ElementState, Observation, PerceiveOptions};
use seamark::safety::ConfirmPolicy;
use serde_json::Value;

use crate::server::Server;

/// What perception must leave as it found it: scroll, focus and selection.
const PAGE_STATE_JS: &str = "[scrollX, scrollY, document.activeElement ? \
     document.activeElement.outerHTML.slice(0, 80) : '', String(getSelection()), \
     Reflect.ownKeys(window).map(String).join(',')]";

/// Perception that walks every part of the page, far ones too: what skipping
/// them is checked against.
pub fn walking_every_part() -> PerceiveOptions {
    PerceiveOptions {
        far_screens: 0.0,
        ..PerceiveOptions::default()
    }
}

/// Whether an element's box reaches within `screens` screens of the default
/// 1280×800 viewport: where skipping far parts must find all the whole walk
/// finds.
pub fn within_screens(e: &Element, screens: f64) -> bool {
    let (w, h) = (1280.0, 800.0);
    let b = e.bbox;
    b.y + b.h > -screens * h
        && b.y < (screens + 1.0) * h
        && b.x + b.w > -screens * w
        && b.x < (screens + 1.0) * w
}

/// A headless Chromium started as a person would start one (site isolation
/// on, no seamark flags), for seamark to attach to: the process, its DevTools
/// URL and its profile (removed when dropped).
pub async fn running_chromium() -> (tokio::process::Child, String, tempfile::TempDir) {
    let profile = tempfile::tempdir().expect("profile directory");
    let (browser, ws) = running_chromium_in(profile.path()).await;
    (browser, ws, profile)
}

/// The same, with its profile in `profile`: the process and its DevTools URL.
pub async fn running_chromium_in(profile: &std::path::Path) -> (tokio::process::Child, String) {
    persons_chromium(profile, "about:blank").await
}

/// A person's Chromium with its profile in `profile` and a tab of theirs
/// open at `url`: the process and its DevTools URL.
pub async fn persons_chromium(
    profile: &std::path::Path,
    url: &str,
) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let chrome = seamark::browser::find_chromium(None).expect("Chromium");
    let mut browser = tokio::process::Command::new(chrome)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--remote-debugging-port=0",
            url,
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start Chromium");
    // Chromium prints "DevTools listening on ws://..." on stderr.
    let mut stderr = tokio::io::BufReader::new(browser.stderr.take().expect("stderr"));
    let mut line = String::new();
    while tokio::time::timeout(Duration::from_secs(20), stderr.read_line(&mut line))
        .await
        .expect("Chromium says where it listens within 20 s")
        .expect("read Chromium's stderr")
        > 0
    {
        if let Some(at) = line.find("ws://") {
            // The line can come before the profile's DevToolsActivePort is
            // written (on a loaded machine it did, and `--cdp auto` then
            // found no browser): what finds the browser by its folder needs
            // the file.
            let file = profile.join(seamark::browser::ACTIVE_PORT_FILE);
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            // Whole: its port, then its path.
            let whole = |f: &std::path::Path| {
                std::fs::read_to_string(f).is_ok_and(|t| {
                    t.lines()
                        .nth(1)
                        .is_some_and(|l| l.starts_with("/devtools/"))
                })
            };
            while !whole(&file) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "Chromium wrote no {} in 20 s",
                    file.display()
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            return (browser, line[at..].trim().to_string());
        }
        line.clear();
    }
    panic!("no DevTools URL from Chromium");
}

/// The browser the in-process tests share: one Chromium for the test
/// binary, each fixture in a browser context of its own (cookies, storage,
/// cache and permissions apart), opened from the pool that batch uses. It
/// lives on a runtime of its own, on a thread as long-lived as the process:
/// a test's runtime ends with its test, and Chromium gets a parent-death
/// signal that fires when the thread that launched it exits. It ends with
/// the process (that signal again); `scripts/test.sh` checks that it did.
struct TestBrowser {
    runtime: tokio::runtime::Handle,
    pool: Arc<Pool>,
}

/// The name of the shared browser's profile folders, before the pid of the
/// test binary that made it.
const SHARED_PROFILE: &str = "seamark-it-shared-";

/// The shared browser's profile: a folder of this test binary's own, since
/// nothing removes the profile of a browser kept in a static (one seamark
/// made would be left at each run). The folders of test binaries that have
/// ended are removed first, so one is left at most.
fn shared_profile() -> std::path::PathBuf {
    let tmp = std::env::temp_dir();
    for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(SHARED_PROFILE) else {
            continue;
        };
        if !std::path::Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    tmp.join(format!("{SHARED_PROFILE}{}", std::process::id()))
}

/// The shared browser, launched on first use, or why it could not be.
fn shared_browser() -> &'static TestBrowser {
    static SHARED: OnceLock<Result<TestBrowser, String>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("shared browser".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let options = BrowserOptions {
                    profile: Some(shared_profile()),
                    ..BrowserOptions::default()
                };
                let pool = runtime.block_on(Pool::start(&options, &[]));
                let shared = pool
                    .map(|pool| TestBrowser {
                        runtime: runtime.handle().clone(),
                        pool: Arc::new(pool),
                    })
                    .map_err(|e| e.to_string());
                if tx.send(shared).is_ok() {
                    // Drives the browser's connection for the rest of the process.
                    runtime.block_on(std::future::pending::<()>());
                }
            });
        match thread {
            Ok(_) => rx.recv().unwrap_or_else(|e| Err(e.to_string())),
            Err(e) => Err(e.to_string()),
        }
    });
    shared
        .as_ref()
        .unwrap_or_else(|e| panic!("launch Chromium (install Debian's chromium package): {e}"))
}

/// A session in a context of the shared browser. Its context is disposed on
/// the shared browser's runtime, which outlives the test's own.
pub struct ContextSession(Option<Session>);

impl ContextSession {
    /// Opens a context of the shared browser with `viewport`.
    async fn open(viewport: Viewport) -> ContextSession {
        let shared = shared_browser();
        let pool = shared.pool.clone();
        let session = shared
            .runtime
            .spawn(async move {
                pool.open(&BrowserOptions {
                    viewport,
                    ..BrowserOptions::default()
                })
                .await
            })
            .await
            .expect("the shared browser's runtime runs")
            .expect("a context of the shared browser");
        ContextSession(Some(session))
    }

    /// Disposes of the context now.
    pub async fn close(mut self) {
        if let Some(session) = self.0.take() {
            let _ = shared_browser().runtime.spawn(session.close()).await;
        }
    }
}

impl std::ops::Deref for ContextSession {
    type Target = Session;
    fn deref(&self) -> &Session {
        self.0.as_ref().expect("an open session")
    }
}

impl std::ops::DerefMut for ContextSession {
    fn deref_mut(&mut self) -> &mut Session {
        self.0.as_mut().expect("an open session")
    }
}

impl Drop for ContextSession {
    /// The session's drop disposes of its context in the background, on the
    /// runtime it finds: the shared browser's, which is still there after
    /// the test.
    fn drop(&mut self) {
        let _in = shared_browser().runtime.enter();
        drop(self.0.take());
    }
}

/// A fixture page open in a context of the shared browser.
pub struct Fixture {
    pub server: Server,
    pub other: Server,
    pub session: ContextSession,
}

impl Fixture {
    /// Serves `tests/sites/` (and a second origin) and opens `path` at 1280×800.
    pub async fn open(path: &str) -> Fixture {
        Self::open_with(path, Viewport::default()).await
    }

    /// Same, with a viewport.
    pub async fn open_with(path: &str, viewport: Viewport) -> Fixture {
        let other = Server::start(None).await;
        let server = Server::start(Some(other.base.clone())).await;
        let session = ContextSession::open(viewport).await;
        let fx = Fixture {
            server,
            other,
            session,
        };
        fx.goto(path).await;
        fx
    }

    /// Navigates to a path of the fixture server and waits for the load event.
    pub async fn goto(&self, path: &str) {
        let url = if path.contains("://") {
            path.to_string()
        } else {
            self.server.url(path)
        };
        self.session
            .navigate(&url, Duration::from_secs(20))
            .await
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    /// Evaluates JavaScript in the page's main world (promises awaited).
    pub async fn eval(&self, js: &str) -> Value {
        let mut params = chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::new(js);
        params.await_promise = Some(true);
        params.return_by_value = Some(true);
        let reply = self.session.page().execute(params).await.expect("evaluate");
        reply.result.result.value.clone().unwrap_or(Value::Null)
    }

    /// The text of a node, found by its backendNodeId alone.
    pub async fn node_text(&self, backend_node_id: i64) -> String {
        self.node_read(backend_node_id, "textContent").await
    }

    /// A string property of a node, found by its backendNodeId alone.
    pub async fn node_read(&self, backend_node_id: i64, property: &str) -> String {
        use chromiumoxide::cdp::browser_protocol::dom::{BackendNodeId, ResolveNodeParams};
        use chromiumoxide::cdp::js_protocol::runtime::CallFunctionOnParams;
        let page = self.session.page();
        let node = page
            .execute(
                ResolveNodeParams::builder()
                    .backend_node_id(BackendNodeId::new(backend_node_id))
                    .build(),
            )
            .await
            .expect("resolve node");
        let mut call =
            CallFunctionOnParams::new(format!("function () {{ return String(this.{property}); }}"));
        call.object_id = node.result.object.object_id.clone();
        call.return_by_value = Some(true);
        let reply = page.execute(call).await.expect("read node");
        reply
            .result
            .result
            .value
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }

    /// Perceives, checking that perception changed nothing in the page: no DOM
    /// mutation seen by an observer the test installs, same scroll, same focus,
    /// same selection, no global added.
    pub async fn perceive(&self) -> Seen {
        self.perceive_with(&PerceiveOptions::default()).await
    }

    /// Perceives with `options`, checking that perception left the page as it was.
    pub async fn perceive_with(&self, options: &PerceiveOptions) -> Seen {
        self.eval(
            "window.__mut = 0; new MutationObserver(r => { window.__mut += r.length; })\
             .observe(document, {subtree: true, childList: true, attributes: true, characterData: true})",
        )
        .await;
        let before = self.eval(PAGE_STATE_JS).await;
        let obs = perceive::perceive(&self.session, options)
            .await
            .expect("perceive");
        let mutations = self
            .eval("new Promise(r => setTimeout(() => r(window.__mut), 50))")
            .await;
        assert_eq!(mutations, Value::from(0), "perception mutated the page");
        let after = self.eval(PAGE_STATE_JS).await;
        assert_eq!(
            before, after,
            "perception changed scroll, focus, selection or the page's globals"
        );
        // A look reports node numbers; these tests check nodes too.
        let mut obs = obs;
        perceive::identify(self.session.page(), &mut obs.table.elements)
            .await
            .expect("identify");
        Seen { obs }
    }

    /// Ends the browser session.
    pub async fn close(self) {
        self.session.close().await;
    }
}

/// The one element of `obs` with exactly this name (the test fails, with
/// the list, when there are none or several).
fn only_named<'a>(obs: &'a Observation, name: &str) -> &'a Element {
    let found: Vec<&Element> = obs
        .table
        .elements
        .iter()
        .filter(|e| e.name == name)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one element named {name:?}, found {}:\n{}",
        found.len(),
        perceive::element_list(&obs.table, usize::MAX)
    );
    found[0]
}

/// One observation under test.
pub struct Seen {
    pub obs: Observation,
}

impl Seen {
    /// The list as the model reads it, for failure messages.
    pub fn list(&self) -> String {
        perceive::element_list(&self.obs.table, usize::MAX)
    }

    /// The one element with exactly this name.
    pub fn named(&self, name: &str) -> Check<'_> {
        Check(only_named(&self.obs, name), self)
    }

    /// The one element whose node has this DOM id.
    pub async fn with_id(&self, fx: &Fixture, id: &str) -> &Element {
        for e in &self.obs.table.elements {
            if fx.node_read(e.backend_node_id, "id").await == id {
                return e;
            }
        }
        panic!("no element with id {id:?} listed:\n{}", self.list())
    }

    /// The elements of this role, in mark-id order.
    pub fn with_role(&self, role: &str) -> Vec<&Element> {
        self.obs
            .table
            .elements
            .iter()
            .filter(|e| e.role == role)
            .collect()
    }

    /// No element's name contains `needle`.
    pub fn absent(&self, needle: &str) -> &Self {
        let hit = self
            .obs
            .table
            .elements
            .iter()
            .find(|e| e.name.contains(needle));
        assert!(
            hit.is_none(),
            "{needle:?} should not be listed:\n{}",
            self.list()
        );
        self
    }

    /// Nothing is listed twice: distinct nodes, and distinct (role, name, box).
    pub fn no_duplicates(&self) -> &Self {
        let mut nodes = std::collections::HashSet::new();
        let mut keys = std::collections::HashSet::new();
        for e in &self.obs.table.elements {
            assert!(nodes.insert(e.backend_node_id), "node listed twice: {e:?}");
            let key = format!(
                "{}|{}|{:.0},{:.0},{:.0},{:.0}",
                e.role, e.name, e.bbox.x, e.bbox.y, e.bbox.w, e.bbox.h
            );
            assert!(
                keys.insert(key.clone()),
                "element listed twice: {key}\n{}",
                self.list()
            );
        }
        self
    }

    /// Ids run 1..=n in table order.
    pub fn ids_are_dense(&self) -> &Self {
        for (i, e) in self.obs.table.elements.iter().enumerate() {
            assert_eq!(e.id as usize, i + 1);
        }
        self
    }
}

/// Assertions on one element; each returns itself so they chain.
pub struct Check<'a>(pub &'a Element, &'a Seen);

impl<'a> Check<'a> {
    fn fail(&self, what: &str) -> ! {
        panic!("{what}: {:?}\n{}", self.0, self.1.list())
    }

    /// Has this role.
    pub fn role(self, role: &str) -> Self {
        if self.0.role != role {
            self.fail(&format!("expected role {role}"));
        }
        self
    }

    /// Is interactable, with a click point inside its visible box.
    pub fn interactable(self) -> Self {
        if !self.0.is_interactable() {
            self.fail("expected interactable");
        }
        let (Some(p), Some(v)) = (self.0.click_point, self.0.visible) else {
            self.fail("interactable without click point or visible box")
        };
        if !v.contains(p) {
            self.fail("click point outside the visible box");
        }
        self
    }

    /// Is offscreen in this direction.
    pub fn offscreen(self, dir: Direction) -> Self {
        match self.0.state {
            ElementState::Offscreen { direction, .. } if direction == dir => self,
            _ => self.fail(&format!("expected offscreen {dir:?}")),
        }
    }

    /// Is occluded by something whose description contains `cover`.
    pub fn occluded_by(self, cover: &str) -> Self {
        match &self.0.state {
            ElementState::Occluded { by, .. } if by.contains(cover) => self,
            _ => self.fail(&format!("expected occluded by {cover:?}")),
        }
    }

    /// Is disabled.
    pub fn disabled(self) -> Self {
        if self.0.state != ElementState::Disabled {
            self.fail("expected disabled");
        }
        self
    }

    /// Has this checked state.
    pub fn checked(self, on: bool) -> Self {
        if self.0.checked != Some(on) {
            self.fail(&format!("expected checked={on}"));
        }
        self
    }

    /// Has this value.
    pub fn value(self, v: &str) -> Self {
        if self.0.value.as_deref() != Some(v) {
            self.fail(&format!("expected value {v:?}"));
        }
        self
    }

    /// The element itself.
    pub fn element(&self) -> &'a Element {
        self.0
    }
}

/// A fixture page with an executor: look, run a batch written as the model
/// writes it, check what happened.
pub struct Actor {
    pub fx: Fixture,
    pub exec: Executor,
}

impl Fixture {
    /// Puts an executor on the page and looks once. Destructive clicks go
    /// ahead: these tests are about how actions work; the confirmation guard
    /// has its own (safety.rs).
    pub async fn actor(self) -> Actor {
        self.actor_with(ActOptions::default()).await
    }

    /// Same, with options (the confirmation policy always `allow`).
    pub async fn actor_with(self, mut options: ActOptions) -> Actor {
        options.confirm.policy = ConfirmPolicy::Allow;
        let exec = Executor::new(&self.session, options).await;
        let mut actor = Actor { fx: self, exec };
        actor.look().await;
        actor
    }
}

impl Actor {
    /// Perceives the page; ids refer to this look from now on.
    pub async fn look(&mut self) -> &Observation {
        self.exec.observe(&self.fx.session).await.expect("observe")
    }

    /// The id of the one element with exactly this name in the last look.
    pub fn id(&self, name: &str) -> u32 {
        only_named(self.exec.observation().expect("an observation"), name).id
    }

    /// Parses and runs a batch.
    pub async fn run(&mut self, answer: &str) -> BatchReport {
        let steps = parse(answer).unwrap_or_else(|e| panic!("{answer:?}: {e}"));
        self.exec.run(&mut self.fx.session, &steps).await
    }

    /// Evaluates JavaScript in the page being driven.
    pub async fn eval(&self, js: &str) -> Value {
        self.fx.eval(js).await
    }

    /// Ends the browser session.
    pub async fn close(self) {
        self.fx.close().await;
    }
}

/// Assertions on a batch report.
pub trait ReportExt {
    /// The outcome of the n-th command (0-based), with its status.
    fn outcome(&self, n: usize) -> &Outcome;
    /// Asserts the statuses of the commands that ran, in order.
    fn statuses(&self, expected: &[Status]) -> &Self;
    /// Asserts the n-th outcome's message or changes mention `needle`.
    fn says(&self, n: usize, needle: &str) -> &Self;
    /// Asserts the page settled after every command before the bound (no
    /// "still busy").
    fn settled(&self) -> &Self;
}

impl ReportExt for BatchReport {
    fn outcome(&self, n: usize) -> &Outcome {
        self.outcomes
            .get(n)
            .unwrap_or_else(|| panic!("no outcome {n}:\n{}", self.feedback()))
    }

    fn statuses(&self, expected: &[Status]) -> &Self {
        let got: Vec<Status> = self.outcomes.iter().map(|o| o.status).collect();
        assert_eq!(got, expected, "\n{}", self.feedback());
        self
    }

    fn says(&self, n: usize, needle: &str) -> &Self {
        let line = self.outcome(n).line();
        assert!(
            line.contains(needle),
            "{needle:?} not in {line:?}\n{}",
            self.feedback()
        );
        self
    }

    fn settled(&self) -> &Self {
        let feedback = self.feedback();
        assert!(!feedback.contains("still busy"), "{feedback}");
        self
    }
}

/// Each value the page told the server with `?key=`, decoded.
pub fn told_text(server: &Server, key: &str) -> Vec<String> {
    server
        .log
        .lock()
        .unwrap()
        .iter()
        .filter_map(|l| l.split_once(&format!("/log?{key}=")))
        .map(|(_, v)| {
            percent_encoding::percent_decode_str(v.split(' ').next().unwrap_or(v))
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

/// The `x,y` the page told the server with `?key=`.
pub fn told(server: &Server, key: &str) -> Vec<(f64, f64)> {
    told_text(server, key)
        .iter()
        .filter_map(|xy| xy.split_once(','))
        .filter_map(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?)))
        .collect()
}

/// The centre of the pixels of the image the model was sent that are
/// near `rgb`.
pub fn centre_of(r: &crate::model_server::Received, rgb: [u8; 3]) -> (u32, u32) {
    let png = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        r.images().last().expect("an image was sent"),
    )
    .expect("base64");
    let img = image::load_from_memory(&png).expect("a PNG").to_rgb8();
    let near = |p: &image::Rgb<u8>| (0..3).all(|i| p[i].abs_diff(rgb[i]) < 30);
    let (mut sx, mut sy, mut n) = (0u64, 0u64, 0u64);
    for (x, y, p) in img.enumerate_pixels() {
        if near(p) {
            sx += u64::from(x);
            sy += u64::from(y);
            n += 1;
        }
    }
    assert!(n > 0, "no {rgb:?} in the image");
    ((sx / n) as u32, (sy / n) as u32)
}
