//! seamark: a Set-of-Mark web agent.
//!
//! One step of the loop is: [`browser`] (a real Chromium over CDP) →
//! [`perceive`] (an [`perceive::Observation`]: screenshot, element table,
//! signature) → [`mark`] (numbered boxes drawn on the screenshot) → the model →
//! the executor. See `docs/design.md` for the whole design.

pub mod act;
pub mod agent;
pub mod batch;
pub mod bench;
pub mod brain;
pub mod browser;
pub mod check;
pub mod clock;
pub mod coworker;
pub mod demo;
pub mod doctor;
pub mod evidence;
pub mod figures;
pub mod files;
pub mod journal;
pub mod judge;
pub mod mark;
pub mod mcp;
pub mod perceive;
pub mod protocol;
pub mod quote;
pub mod read;
pub mod records;
pub mod report;
pub mod safety;
pub mod schema;
pub mod serve;
pub mod site;
pub mod skill;
pub mod start_url;
pub mod storage;
pub mod traces;
