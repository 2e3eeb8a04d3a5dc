//! seamark: a Set-of-Mark web agent.
//!
//! One step of the loop is: [`browser`] (a real Chromium over CDP) →
//! [`perceive`] (an [`perceive::Observation`]: screenshot, element table,
//! signature) → [`mark`] (numbered boxes drawn on the screenshot) → the model →
//! the executor. See `docs/design.md` for the whole design.

// The loop, in its order: see, mark, ask, understand, act, and the run around it.
/// The executor: each command as real input, until the page changes.
pub mod act;
/// The loop itself: a task from its start page to its end.
pub mod agent;
/// The multimodal models, over their providers' HTTP APIs.
pub mod brain;
/// A real Chromium over the DevTools protocol: launch or attach, sessions, tabs.
pub mod browser;
/// The command language the model answers in (`CLICK:3`, `TYPE:5:…`).
pub mod commands;
/// Numbered boxes drawn on the screenshot, and the image the model is sent.
pub mod mark;
/// The page's interactive elements, their state, and the screenshot.
pub mod perceive;

// What a run reads, keeps and checks.
/// Checks of what a run did: the URL, the page's text, the answer.
pub mod check;
/// Evidence for counted work ("tick all 13 boxes").
pub mod evidence;
/// The person's files, uploads and downloads.
pub mod files;
/// The run directory and its journal.
pub mod journal;
/// A second model that judges a run said done.
pub mod judge;
/// READ: the page as text for the model, and PDFs.
pub mod read;
/// The records of a run's journal.
pub mod records;
/// Reports a person reads: report.html and run.gif.
pub mod report;
/// Safety in code: domain limits, confirmations, secrets, page text as data.
pub mod safety;
/// Answers that follow a JSON Schema.
pub mod schema;
/// A site as a run saw it: recorded, and replayed offline.
pub mod site;
/// Skills: a task done once, done again without the model.
pub mod skill;
/// A browser's cookies and storage, saved and loaded.
pub mod storage;
/// OpenTelemetry traces of runs, steps and stages.
pub mod traces;

// Runs many, and runs elsewhere.
/// `seamark batch`: a suite of tasks, scored.
pub mod batch;
/// `seamark serve`: sessions that outlast a process, on a queue.
pub mod coworker;
/// The bundled demo: a job board and a recorded run.
pub mod demo;
/// `seamark doctor`: what a run needs, checked.
pub mod doctor;
/// Watching a run's browser live, and a person's hands in it.
pub mod live;
/// `seamark mcp`: the loop's parts as tools for model clients.
pub mod mcp;
/// `seamark bench`: what perception costs per page.
pub mod measure;
pub mod mirror;

// Small parts everything uses.
/// The wall clock as the journal writes it.
pub mod clock;
/// How an error is told: its message, then each cause once.
pub mod errors;
/// Numbers as people read them.
pub mod figures;
/// What listens on a port of seamark's: who may ask, and how.
pub mod listen;
/// Outside text quoted for the model.
pub mod quote;
/// A static file server on 127.0.0.1.
pub mod serve;
/// What the user points seamark at: a URL or a local file.
pub mod start_url;
