//! Cookie banners answered by rule, before the model sees them (`--consent`).
//!
//! DuckDuckGo's autoconsent (vendored in `vendor/autoconsent`, MPL-2.0)
//! knows the banners of some 200 consent platforms and hundreds of sites,
//! and how a privacy-minded person answers each. Its content script runs in
//! every document of the session's tabs before the page's own scripts, in a
//! world of its own (the page can neither see it nor talk to it), and asks
//! its driver for everything else by message: its rules when it starts, and
//! the few checks that need the page's own scripts (a platform's API, such
//! as `window.Cookiebot`), which are run in the page's world here. What it
//! did with a banner comes back as a [`ConsentRecord`].
//!
//! A banner no rule knows is the model's, as is every banner under
//! [`Consent::Ask`]. Frames of other sites run in processes of their own
//! (remote.rs): banners in them are the model's for now.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use chromiumoxide::cdp::js_protocol::runtime::{
    AddBindingParams, EvaluateParams, EventBindingCalled, EventExecutionContextCreated,
    EventExecutionContextDestroyed, ExecutionContextId,
};
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use futures::StreamExt;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::task::JoinHandle;

/// The world the content script runs in, in each document.
const WORLD: &str = "seamark-consent";

/// The function the content script calls to send a message; it exists only
/// in [`WORLD`].
const BINDING: &str = "__seamarkConsent";

/// The content script, built for a driver that answers its messages.
const CONTENT_SCRIPT: &str = include_str!("../../vendor/autoconsent/autoconsent.playwright.js");

/// The rules without their opt-in steps, indexed: what rejecting needs.
const COMPACT_RULES: &str = include_str!("../../vendor/autoconsent/compact-rules.json");

/// The full rules: what accepting needs.
const FULL_RULES: &str = include_str!("../../vendor/autoconsent/rules.json");

/// How long a look waits for a banner being answered to be done.
pub const SETTLE_WITHIN: Duration = Duration::from_secs(5);

/// How long a look waits for the top document's rules to start looking.
const BEFORE_DETECTION: Duration = Duration::from_secs(1);

/// How long a look waits, at most, for the first pass of the rules over
/// the top document, or for a platform found to show its banner: a banner
/// there at load is found in tens of milliseconds; the rules look again
/// every half second for one that comes later, and a look does not wait for
/// those.
const FIRST_PASS: Duration = Duration::from_millis(300);

/// A pass is over once its checks of the page's scripts are answered and
/// its script has been quiet this long (it sends no word when it finds
/// nothing).
const PASS_QUIET: Duration = Duration::from_millis(40);

/// How cookie banners are answered (`--consent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Consent {
    /// Refuse every cookie that is not needed, as a privacy-minded person
    /// does (or hide the banner when it offers no refusal).
    #[default]
    Reject,
    /// Accept the cookies the banner offers.
    Accept,
    /// Leave banners to the model.
    Ask,
}

impl std::str::FromStr for Consent {
    type Err = crate::errors::UnknownWord;
    fn from_str(s: &str) -> Result<Consent, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "reject" => Ok(Consent::Reject),
            "accept" => Ok(Consent::Accept),
            "ask" => Ok(Consent::Ask),
            other => Err(crate::errors::UnknownWord::new(
                other,
                "--consent",
                "reject, accept or ask",
            )),
        }
    }
}

impl std::fmt::Display for Consent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Consent::Reject => "reject",
            Consent::Accept => "accept",
            Consent::Ask => "ask",
        })
    }
}

/// What was done with a banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsentOutcome {
    /// Its refusal was chosen.
    Rejected,
    /// It was accepted.
    Accepted,
    /// It offers no refusal, and was hidden.
    Hidden,
    /// Its rule did not get through: the banner is the model's.
    Failed,
}

/// A cookie banner answered by rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentRecord {
    /// The consent platform or site rule that knew it (`Onetrust`).
    pub cmp: String,
    /// The document it was in.
    pub url: String,
    /// What was done.
    pub outcome: ConsentOutcome,
}

impl ConsentRecord {
    /// The line a person and the model read: `cookie banner of Onetrust: rejected`.
    pub fn describe(&self) -> String {
        let done = match self.outcome {
            ConsentOutcome::Rejected => "rejected",
            ConsentOutcome::Accepted => "accepted",
            ConsentOutcome::Hidden => "hidden (it offers no refusal)",
            ConsentOutcome::Failed => "its rule did not get through; it is yours to answer",
        };
        format!("cookie banner of {}: {done}", self.cmp)
    }
}

/// What the model (or an MCP client) is told of the banners answered since
/// it last looked, when any were.
pub fn consent_note(handled: &[ConsentRecord]) -> Option<String> {
    if handled.is_empty() {
        return None;
    }
    let lines: Vec<String> = handled.iter().map(ConsentRecord::describe).collect();
    Some(format!(
        "answered by rule, nothing to do about it: {}",
        lines.join("; ")
    ))
}

/// What the session's banners came to, shared with the tasks answering them.
#[derive(Default)]
struct Ledger {
    /// Every banner answered, in order.
    handled: Vec<ConsentRecord>,
    /// The documents a look waits for, by their isolated world: since when,
    /// and for how long at most.
    busy: HashMap<i64, (Instant, Duration)>,
    /// What each document's script is doing: checks of the page's scripts
    /// it waits for, and when it was last heard from.
    activity: HashMap<i64, (u32, Instant)>,
    /// How many times a script found a banner or began to answer one.
    found: u64,
}

impl Ledger {
    /// Whether a look waits for a document now.
    fn waits(&self) -> bool {
        self.busy.iter().any(|(world, (since, within))| {
            if since.elapsed() >= *within {
                return false;
            }
            if *within != FIRST_PASS {
                return true;
            }
            // A pass waits for nothing but its checks and its own work.
            self.activity
                .get(world)
                .is_none_or(|(pending, last)| *pending > 0 || last.elapsed() < PASS_QUIET)
        })
    }

    /// A message heard from `world`, asking for a check (`asks`) or not.
    fn heard(&mut self, world: i64, asks: bool) {
        let (pending, last) = self.activity.entry(world).or_insert((0, Instant::now()));
        *pending += u32::from(asks);
        *last = Instant::now();
    }

    /// A check `world` asked for was answered.
    fn answered(&mut self, world: i64) {
        if let Some((pending, last)) = self.activity.get_mut(&world) {
            *pending = pending.saturating_sub(1);
            *last = Instant::now();
        }
    }

    /// Forgets a document that is gone.
    fn gone(&mut self, world: i64) {
        self.busy.remove(&world);
        self.activity.remove(&world);
    }
}

/// Answers the banners of the session's tabs; stops with the session.
pub(super) struct ConsentKeeper {
    consent: Consent,
    ledger: Arc<Mutex<Ledger>>,
    tasks: Vec<JoinHandle<()>>,
}

impl ConsentKeeper {
    /// A keeper that answers banners as `consent` says.
    pub(super) fn new(consent: Consent) -> ConsentKeeper {
        ConsentKeeper {
            consent,
            ledger: Arc::default(),
            tasks: Vec::new(),
        }
    }

    /// Answers the banners of `page`'s documents from the next one on.
    pub(super) async fn follow(&mut self, page: &Page) -> Result<(), CdpError> {
        let auto_action = match self.consent {
            Consent::Ask => return Ok(()),
            Consent::Reject => "optOut",
            Consent::Accept => "optIn",
        };
        // The listeners first: a document may start as soon as the script is in.
        let called = page.event_listener::<EventBindingCalled>().await?;
        let created = page
            .event_listener::<EventExecutionContextCreated>()
            .await?;
        let destroyed = page
            .event_listener::<EventExecutionContextDestroyed>()
            .await?;
        page.execute(
            AddBindingParams::builder()
                .name(BINDING)
                .execution_context_name(WORLD)
                .build()
                .map_err(CdpError::msg)?,
        )
        .await?;
        page.execute(
            AddScriptToEvaluateOnNewDocumentParams::builder()
                .source(content_script())
                .world_name(WORLD)
                .run_immediately(true)
                .build()
                .map_err(CdpError::msg)?,
        )
        .await?;
        let driver = Arc::new(Driver {
            page: page.clone(),
            ledger: self.ledger.clone(),
            worlds: Mutex::default(),
            auto_action,
        });
        self.tasks.push(tokio::spawn(async move {
            let (mut called, mut created, mut destroyed) = (called, created, destroyed);
            loop {
                // Contexts first: a world is known before its messages are
                // heard (the protocol sends them in that order).
                tokio::select! {
                    biased;
                    Some(c) = created.next() => lock(&driver.worlds).created(&c),
                    Some(d) = destroyed.next() => {
                        // A banner whose document is gone is not waited for.
                        let gone = lock(&driver.worlds).destroyed(&d.execution_context_unique_id);
                        if let Some(id) = gone {
                            lock(&driver.ledger).gone(id);
                        }
                    }
                    Some(call) = called.next() => {
                        if call.name == BINDING {
                            driver.heard(*call.execution_context_id.inner(), &call.payload);
                        }
                    }
                    else => break,
                }
            }
        }));
        Ok(())
    }

    /// The banners answered so far, in order.
    pub(super) fn handled(&self) -> Vec<ConsentRecord> {
        lock(&self.ledger).handled.clone()
    }

    /// A count that moves whenever a banner is found, answered or given up
    /// on: a look taken while it stood still saw no banner's doing.
    pub(super) fn stirred(&self) -> u64 {
        let ledger = lock(&self.ledger);
        ledger.found + ledger.handled.len() as u64
    }

    /// Waits, at most [`SETTLE_WITHIN`] from when each began, for the
    /// banners being answered to be done: a look taken meanwhile would show
    /// the model a banner about to go.
    pub(super) async fn settled(&self) {
        loop {
            let waiting = lock(&self.ledger).waits();
            if !waiting {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

impl Drop for ConsentKeeper {
    fn drop(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The content script, with the messenger it sends through: the binding,
/// with whether it runs in the top document.
fn content_script() -> String {
    format!(
        "(() => {{\n\
           const send = globalThis[{binding:?}];\n\
           if (typeof send !== 'function') return;\n\
           globalThis.autoconsentSendMessage = (message) => {{\n\
             send(JSON.stringify({{ main: window.top === window, message }}));\n\
             return Promise.resolve();\n\
           }};\n\
         }})();\n{CONTENT_SCRIPT}",
        binding = BINDING,
    )
}

/// The execution contexts of a page's frames: which frame each isolated
/// world is in, and each frame's own (the page's) world.
#[derive(Default)]
struct Worlds {
    frame_of: HashMap<i64, String>,
    main_world: HashMap<String, i64>,
    /// The protocol's unique id of each context known, which is all its
    /// end names.
    ids: HashMap<String, i64>,
}

impl Worlds {
    fn created(&mut self, event: &EventExecutionContextCreated) {
        let context = &event.context;
        let Some(aux) = &context.aux_data else {
            return;
        };
        let Some(frame) = aux.get("frameId").and_then(Value::as_str) else {
            return;
        };
        let id = *context.id.inner();
        self.ids.insert(context.unique_id.clone(), id);
        if aux.get("isDefault").and_then(Value::as_bool) == Some(true) {
            self.main_world.insert(frame.to_string(), id);
        } else if context.name == WORLD {
            self.frame_of.insert(id, frame.to_string());
        }
    }

    /// Forgets a context that is gone; its id, when it was known.
    fn destroyed(&mut self, unique_id: &str) -> Option<i64> {
        let id = self.ids.remove(unique_id)?;
        self.frame_of.remove(&id);
        self.main_world.retain(|_, world| *world != id);
        Some(id)
    }

    /// The page's own world in the frame of isolated world `id`.
    fn main_world_beside(&self, id: i64) -> Option<i64> {
        self.main_world.get(self.frame_of.get(&id)?).copied()
    }
}

/// How long a look waits for a document whose rules are at `lifecycle`
/// (after `attempts` passes over it), if at all.
fn waits_for(lifecycle: &str, attempts: u64, main: bool) -> Option<Duration> {
    match lifecycle {
        "openPopupDetected" | "runningOptOut" | "runningOptIn" => Some(SETTLE_WITHIN),
        "cmpDetected" => Some(FIRST_PASS),
        "loading" | "waitingForInitResponse" | "initialized" if main => Some(BEFORE_DETECTION),
        "started" if main && attempts <= 1 => Some(FIRST_PASS),
        _ => None,
    }
}

/// Answers the content script's messages from one page.
struct Driver {
    page: Page,
    ledger: Arc<Mutex<Ledger>>,
    worlds: Mutex<Worlds>,
    auto_action: &'static str,
}

/// A message as the messenger wraps it.
#[derive(Deserialize)]
struct Sent {
    main: bool,
    message: Value,
}

impl Driver {
    /// Handles one message from isolated world `world`: what it tells is
    /// kept at once; what it asks for is answered by a task of its own, so
    /// that one slow answer holds up neither the others nor the bookkeeping.
    fn heard(self: &Arc<Self>, world: i64, payload: &str) {
        let Ok(Sent { main, message }) = serde_json::from_str::<Sent>(payload) else {
            tracing::debug!("consent: a message that is not one: {payload:.200}");
            return;
        };
        let text = |key: &str| {
            message
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let kind = text("type");
        lock(&self.ledger).heard(world, kind == "eval");
        match kind.as_str() {
            "init" => self.init(world, text("url"), main),
            "eval" => {
                let (driver, id, code) = (self.clone(), text("id"), text("code"));
                tokio::spawn(async move {
                    let result = driver.evaluate_beside(world, &code).await;
                    let reply = json!({ "type": "evalResp", "id": id, "result": result });
                    driver.reply(world, &reply).await;
                    lock(&driver.ledger).answered(world);
                });
            }
            "report" => self.reported(world, &message, &text("url"), main),
            "optOutResult" | "optInResult"
                if message.get("result").and_then(Value::as_bool) != Some(true) =>
            {
                self.ended(world, &text("cmp"), &text("url"), ConsentOutcome::Failed);
            }
            "autoconsentDone" => {
                let outcome = if message.get("isCosmetic").and_then(Value::as_bool) == Some(true) {
                    ConsentOutcome::Hidden
                } else if self.auto_action == "optIn" {
                    ConsentOutcome::Accepted
                } else {
                    ConsentOutcome::Rejected
                };
                self.ended(world, &text("cmp"), &text("url"), outcome);
            }
            "autoconsentError" => {
                tracing::debug!("consent: {}", message["details"]);
                lock(&self.ledger).busy.remove(&world);
            }
            _ => {}
        }
    }

    /// Answers a world's `init`: the configuration and the rules for its
    /// document at `url`.
    fn init(self: &Arc<Self>, world: i64, url: String, main: bool) {
        let config = json!({
            "enabled": true,
            "autoAction": self.auto_action,
            "disabledCmps": [],
            "enablePrehide": false,
            "enableCosmeticRules": true,
            "enableHeuristicDetection": false,
            "detectRetries": 20,
            "isMainWorld": false,
            "visualTest": false,
            "logs": {
                "lifecycle": false, "rulesteps": false, "detectionsteps": false,
                "evals": false, "errors": false, "messages": false, "waits": false
            },
        });
        let driver = self.clone();
        tokio::spawn(async move {
            let rules = rules_for(driver.auto_action == "optIn", &url, main);
            // The rules go as made: 66 KB of JSON parsed once, not per document.
            let reply = format!("{{\"type\":\"initResp\",\"config\":{config},\"rules\":{rules}}}");
            driver.reply_text(world, &reply).await;
        });
    }

    /// Takes in a world's `report`: a pop-up found, and what is waited for.
    fn reported(&self, world: i64, message: &Value, url: &str, main: bool) {
        let state = &message["state"];
        let lifecycle = state["lifecycle"].as_str().unwrap_or_default();
        let wait = waits_for(
            lifecycle,
            state["findCmpAttempts"].as_u64().unwrap_or(0),
            message["mainFrame"].as_bool().unwrap_or(main),
        );
        // A blank tab's rules, and those of a document already
        // gone, are not waited for.
        let here = !url.starts_with("about:") && lock(&self.worlds).frame_of.contains_key(&world);
        let mut ledger = lock(&self.ledger);
        if matches!(
            lifecycle,
            "cmpDetected" | "openPopupDetected" | "runningOptOut" | "runningOptIn"
        ) {
            ledger.found += 1;
        }
        match wait.filter(|_| here) {
            // A stage already waited for keeps its start.
            Some(within) => match ledger.busy.get(&world) {
                Some((_, w)) if *w == within => {}
                _ => {
                    ledger.busy.insert(world, (Instant::now(), within));
                }
            },
            None => {
                ledger.busy.remove(&world);
            }
        }
    }

    /// Records what became of the banner of `world`.
    fn ended(&self, world: i64, cmp: &str, url: &str, outcome: ConsentOutcome) {
        let mut ledger = lock(&self.ledger);
        ledger.busy.remove(&world);
        ledger.handled.push(ConsentRecord {
            cmp: cmp.to_string(),
            url: url.to_string(),
            outcome,
        });
    }

    /// Hands `message` to the content script of isolated world `world`.
    async fn reply(&self, world: i64, message: &Value) {
        self.reply_text(world, &message.to_string()).await;
    }

    /// The same, with the message as JSON text.
    async fn reply_text(&self, world: i64, message: &str) {
        let expression = format!("autoconsentReceiveMessage({message})");
        if let Err(e) = self.evaluate(world, expression).await {
            tracing::debug!("consent: a reply was not taken: {e}");
        }
    }

    /// One of the rules' checks of the page's own scripts (`!!window.Cookiebot`),
    /// run in the page's world of the frame `world` is in: true or false,
    /// false when it throws or the frame is gone.
    async fn evaluate_beside(&self, world: i64, code: &str) -> bool {
        let Some(main) = lock(&self.worlds).main_world_beside(world) else {
            return false;
        };
        let expression =
            format!("(() => {{ try {{ return !!({code}); }} catch (e) {{ return false; }} }})()");
        self.evaluate(main, expression)
            .await
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    }

    async fn evaluate(&self, context: i64, expression: String) -> Result<Value, CdpError> {
        let params = EvaluateParams::builder()
            .expression(expression)
            .context_id(ExecutionContextId::new(context))
            .return_by_value(true)
            .await_promise(false)
            .build()
            .map_err(CdpError::msg)?;
        let reply = self.page.execute(params).await?;
        Ok(reply.result.result.value.clone().unwrap_or(Value::Null))
    }
}

/// The rules a document at `url` needs, as JSON: the compact ones that can
/// run there to reject, or the full ones to accept. A document is sent only
/// the rules that can run in it (the top document, or a frame), as the
/// package's own drivers do: the whole set is 257 KB, a frame's share a few.
/// Most documents need the same set (the generic rules, no site's own), so
/// each set is made once.
fn rules_for(accept: bool, url: &str, main: bool) -> Arc<str> {
    type Made = Mutex<HashMap<(bool, bool, Vec<usize>), Arc<str>>>;
    static MADE: OnceLock<Made> = OnceLock::new();
    let compact = compact_rules();
    let chosen = match (accept, compact) {
        (true, _) => full_rules_chosen(url, main),
        (false, Some(rules)) => rules.chosen(url, main),
        (false, None) => Vec::new(),
    };
    let key = (accept, main, chosen);
    let made = MADE.get_or_init(Mutex::default);
    if let Some(rules) = lock(made).get(&key) {
        return rules.clone();
    }
    let rules = match (accept, compact) {
        (true, _) => {
            json!({ "autoconsent": key.2.iter().filter_map(|i| full_rules().get(*i)).collect::<Vec<_>>() })
        }
        (false, Some(compact)) => json!({ "compact": compact.made_of(&key.2, main) }),
        (false, None) => json!({ "autoconsent": [] }),
    };
    let rules: Arc<str> = rules.to_string().into();
    lock(made).insert(key, rules.clone());
    rules
}

/// A rule's own URL pattern (a JavaScript regular expression), compiled
/// once; one Rust cannot compile lets the rule through (the content script
/// checks it again).
fn pattern_allows(cache: &Mutex<HashMap<String, Option<Regex>>>, pattern: &str, url: &str) -> bool {
    if pattern.is_empty() {
        return true;
    }
    let mut cache = lock(cache);
    let compiled = cache
        .entry(pattern.to_string())
        .or_insert_with(|| Regex::new(pattern).ok());
    compiled.as_ref().is_none_or(|re| re.is_match(url))
}

fn patterns() -> &'static Mutex<HashMap<String, Option<Regex>>> {
    static PATTERNS: OnceLock<Mutex<HashMap<String, Option<Regex>>>> = OnceLock::new();
    PATTERNS.get_or_init(Mutex::default)
}

/// The full rules.
fn full_rules() -> &'static [Value] {
    static FULL: OnceLock<Vec<Value>> = OnceLock::new();
    FULL.get_or_init(|| {
        serde_json::from_str::<Value>(FULL_RULES)
            .ok()
            .and_then(|v| v.get("autoconsent").and_then(Value::as_array).cloned())
            .unwrap_or_default()
    })
}

/// The places of the full rules that can run in a document at `url`.
fn full_rules_chosen(url: &str, main: bool) -> Vec<usize> {
    full_rules()
        .iter()
        .enumerate()
        .filter(|(_, rule)| {
            let context = &rule["runContext"];
            let in_main = context["main"].as_bool().unwrap_or(true);
            let in_frame = context["frame"].as_bool().unwrap_or(false);
            (if main { in_main } else { in_frame })
                && pattern_allows(
                    patterns(),
                    context["urlPattern"].as_str().unwrap_or_default(),
                    url,
                )
        })
        .map(|(i, _)| i)
        .collect()
}

/// The compact rule set, with its index (see the package's `encoding.ts`).
struct CompactRules {
    version: Value,
    strings: Vec<Value>,
    rules: Vec<Value>,
    generic: (usize, usize),
    frame: (usize, usize),
    specific: (usize, usize),
    generic_strings: usize,
    frame_strings: usize,
}

fn compact_rules() -> Option<&'static CompactRules> {
    static COMPACT: OnceLock<Option<CompactRules>> = OnceLock::new();
    COMPACT
        .get_or_init(|| CompactRules::parse(COMPACT_RULES))
        .as_ref()
}

impl CompactRules {
    fn parse(text: &str) -> Option<CompactRules> {
        let v: Value = serde_json::from_str(text).ok()?;
        let range = |key: &str| -> Option<(usize, usize)> {
            let r = v["index"][key].as_array()?;
            Some((r.first()?.as_u64()? as usize, r.get(1)?.as_u64()? as usize))
        };
        let end = |key: &str| v["index"][key].as_u64().map(|n| n as usize);
        Some(CompactRules {
            version: v["v"].clone(),
            strings: v["s"].as_array()?.clone(),
            rules: v["r"].as_array()?.clone(),
            generic: range("genericRuleRange")?,
            frame: range("frameRuleRange")?,
            specific: range("specificRuleRange")?,
            generic_strings: end("genericStringEnd")?,
            frame_strings: end("frameStringEnd")?,
        })
    }

    /// The places of the rules that can run in a document at `url`
    /// (`filterCompactRules`): in a frame, the frame rules for it; in the
    /// top document, the generic rules and the site rules for it.
    fn chosen(&self, url: &str, main: bool) -> Vec<usize> {
        let runs_here = |rule: &Value| -> bool {
            let context = rule[4].as_u64().unwrap_or(0);
            if main && context == 1 {
                return false;
            }
            if !main && [20, 22, 10, 12].contains(&context) {
                return false;
            }
            pattern_allows(patterns(), rule[3].as_str().unwrap_or_default(), url)
        };
        let places = |(from, to): (usize, usize)| from..to.min(self.rules.len());
        if !main {
            return places(self.frame)
                .filter(|i| runs_here(&self.rules[*i]))
                .collect();
        }
        places(self.generic)
            .chain(places(self.specific).filter(|i| runs_here(&self.rules[*i])))
            .collect()
    }

    /// The rule set of the rules at `chosen`, as the content script takes
    /// it. Strings no kept rule uses are blanked, their places kept (rules
    /// name strings by place).
    fn made_of(&self, chosen: &[usize], main: bool) -> Value {
        let rules: Vec<&Value> = chosen.iter().filter_map(|i| self.rules.get(*i)).collect();
        let generic_only = main && chosen.iter().all(|i| places_in(*i, self.generic));
        if generic_only {
            let strings = self.strings.get(..self.generic_strings).unwrap_or_default();
            return json!({ "v": self.version, "s": strings, "r": rules });
        }
        let strings = if main {
            self.strings.len()
        } else {
            self.frame_strings
        };
        let mut used = std::collections::HashSet::new();
        for rule in &rules {
            for steps in (6..=9).filter_map(|i| rule[i].as_array()) {
                used_strings(steps, &mut used);
            }
            for id in rule[5].as_array().into_iter().flatten() {
                used.extend(id.as_u64());
            }
        }
        let last = used
            .iter()
            .max()
            .map_or(0, |m| *m as usize + 1)
            .min(strings);
        let kept: Vec<Value> = self.strings[..last.min(self.strings.len())]
            .iter()
            .enumerate()
            .map(|(i, s)| match used.contains(&(i as u64)) {
                true => s.clone(),
                false => Value::String(String::new()),
            })
            .collect();
        json!({ "v": self.version, "s": kept, "r": rules })
    }

    /// The rules that can run in a document at `url`, as the content
    /// script takes them.
    #[cfg(test)]
    fn filtered(&self, url: &str, main: bool) -> Value {
        self.made_of(&self.chosen(url, main), main)
    }
}

/// Whether place `i` is in the range `(from, to)`.
fn places_in(i: usize, (from, to): (usize, usize)) -> bool {
    (from..to).contains(&i)
}

/// The places of the strings `steps` use (their compacted keys), nested
/// steps included.
fn used_strings(steps: &[Value], used: &mut std::collections::HashSet<u64>) {
    for step in steps {
        for key in ["e", "v", "c", "k", "w", "wv", "h", "cc"] {
            if let Some(id) = step.get(key).and_then(Value::as_u64) {
                used.insert(id);
            }
        }
        if let Some(inner) = step.get("if") {
            used_strings(std::slice::from_ref(inner), used);
        }
        for key in ["then", "else", "any"] {
            if let Some(inner) = step.get(key).and_then(Value::as_array) {
                used_strings(inner, used);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_reads_as_written_and_refuses_anything_else() {
        assert_eq!("Reject".parse::<Consent>(), Ok(Consent::Reject));
        assert_eq!("accept".parse::<Consent>(), Ok(Consent::Accept));
        assert_eq!("ask".parse::<Consent>(), Ok(Consent::Ask));
        assert!("maybe".parse::<Consent>().is_err());
        assert_eq!(Consent::default(), Consent::Reject);
    }

    #[test]
    fn the_vendored_rules_parse_and_a_page_gets_only_the_rules_for_it() {
        let rules = compact_rules().expect("the vendored compact rules parse");
        let all = rules.rules.len();
        let top = rules.filtered("https://shop.example/", true);
        let frame = rules.filtered("https://shop.example/frame", false);
        let top_rules = top["r"].as_array().map_or(0, Vec::len);
        let frame_rules = frame["r"].as_array().map_or(0, Vec::len);
        assert!(top_rules > 50 && top_rules < all, "{top_rules} of {all}");
        assert!(frame_rules < top_rules, "{frame_rules} in a frame");
        // A rule names its strings by place: each place a kept rule uses
        // still holds a string.
        let strings = top["s"].as_array().expect("strings");
        let mut used = std::collections::HashSet::new();
        for rule in top["r"].as_array().into_iter().flatten() {
            for steps in (6..=9).filter_map(|i| rule[i].as_array()) {
                used_strings(steps, &mut used);
            }
        }
        assert!(used.iter().all(|i| strings
            .get(*i as usize)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())));
    }

    #[test]
    fn a_site_rule_is_sent_only_to_its_own_site() {
        let rules = compact_rules().expect("the vendored compact rules parse");
        let names = |v: &Value| -> Vec<String> {
            v["r"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r[1].as_str().map(str::to_string))
                .collect()
        };
        let there = names(&rules.filtered("https://www.abc.net.au/news", true));
        let elsewhere = names(&rules.filtered("https://shop.example/", true));
        assert!(there.iter().any(|n| n == "abc"), "{there:?}");
        assert!(!elsewhere.iter().any(|n| n == "abc"));
        // Its frame gets neither the site rules nor the generic ones.
        let frame = names(&rules.filtered("https://www.abc.net.au/news", false));
        assert!(
            !frame.iter().any(|n| n == "abc" || n == "cookieyes"),
            "{frame:?}"
        );
        // Accepting takes the full rules, filtered the same way.
        let full: Vec<&Value> = full_rules_chosen("https://shop.example/", true)
            .into_iter()
            .map(|i| &full_rules()[i])
            .collect();
        assert!(full.iter().any(|r| r["name"] == "cookieyes"));
        assert!(!full.iter().any(|r| r["name"] == "abc"));
        // A set is made once, and is what the filter gives.
        let made = rules_for(false, "https://shop.example/", true);
        assert!(Arc::ptr_eq(
            &made,
            &rules_for(false, "https://other.example/", true)
        ));
        let sent: Value = serde_json::from_str(&made).expect("JSON");
        assert_eq!(
            sent["compact"],
            rules.filtered("https://shop.example/", true)
        );
    }

    #[test]
    fn a_look_waits_for_a_pass_while_its_checks_are_out_and_for_a_banner_being_answered() {
        let mut ledger = Ledger::default();
        assert!(!ledger.waits());
        // The first pass over the top document: its check of the page's
        // scripts is out, so a look waits; answered and quiet, it does not.
        ledger.busy.insert(7, (Instant::now(), FIRST_PASS));
        ledger.heard(7, true);
        std::thread::sleep(PASS_QUIET);
        assert!(ledger.waits());
        ledger.answered(7);
        assert!(ledger.waits(), "just answered: the pass is still at work");
        std::thread::sleep(PASS_QUIET);
        assert!(!ledger.waits());
        // A banner being answered is waited for however quiet its script is,
        // until it is done or its document is gone.
        ledger.busy.insert(7, (Instant::now(), SETTLE_WITHIN));
        assert!(ledger.waits());
        ledger.gone(7);
        assert!(!ledger.waits());
        // Nothing is waited for past its bound.
        ledger
            .busy
            .insert(8, (Instant::now() - SETTLE_WITHIN, SETTLE_WITHIN));
        assert!(!ledger.waits());
    }

    #[test]
    fn a_record_says_what_became_of_the_banner() {
        let record = ConsentRecord {
            cmp: "Onetrust".into(),
            url: "https://shop.example/".into(),
            outcome: ConsentOutcome::Rejected,
        };
        assert_eq!(record.describe(), "cookie banner of Onetrust: rejected");
        let json = serde_json::to_value(&record).expect("serializes");
        assert_eq!(json["outcome"], "rejected");
    }
}
