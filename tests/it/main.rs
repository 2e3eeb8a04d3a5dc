//! seamark's integration tests: one binary, a module per feature. Every test
//! drives a real headless Chromium against pages served on 127.0.0.1.

// A test fails by panicking: unwrap() and expect() say where. A scenario is
// told in order, start to end, however long: it is not cut to fit a count.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

mod model_server;
mod netlog;
mod otlp_receiver;
mod postgres;
mod processes;
mod server;
mod support;

mod actions;
mod agent;
mod bad_input;
mod batch;
mod bench;
mod checkpoints;
mod cli;
mod consent;
mod corpus;
mod coworker;
mod demo;
mod devices;
mod docs;
mod documents;
mod files;
mod fixtures;
mod golden;
mod guest;
mod hands;
mod judge;
mod layers;
mod live;
mod long_runs;
mod mcp;
mod miniwob;
mod perception;
mod points;
mod read;
mod report;
mod rules;
mod safety;
mod scrolled;
mod sealed;
mod sessions;
mod signals;
mod signin;
mod skills;
mod soak;
mod team;
mod toolbox;
mod traces;
mod verify;
mod visual;
mod webgames;
