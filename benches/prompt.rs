//! The prompt of a long run: a scripted 31-step run on a fixture (one
//! button marked a step, `tests/sites/marks.html`), done twice in one bench
//! run: with the history as it is (the last 5 steps in full, older ones
//! folded) and with the last 20 in full (the old default, which also
//! dropped what was older). The tokens each step's prompt held, as the
//! journal counts them (`o200k_base` for the text, OpenAI's formula for the
//! images), are printed at steps 1, 5, 10, 20 and 30, with step 30's text
//! against step 5's. Token counts are exact, not timed: each run is done
//! once.
//!
//! `cargo bench --bench prompt`.

// A benchmark fails by panicking, as a test does, and its scenario is told
// in order, however long.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines
)]

mod common;

use common::model_server::{ModelServer, Received, Reply};
use common::server::Server;

use std::path::Path;

use seamark::agent::AgentOptions;

/// Marks one button a step, reading the next one's id off the list, and
/// says COMPLETE when 30 are marked.
fn one_mark_a_step(r: &Received) -> Reply {
    Reply::Text(if r.step() <= 30 {
        format!("CLICK:{}", r.id_of(&r.first_named("button", "Mark ")))
    } else {
        "COMPLETE:marked 30 buttons".into()
    })
}

/// The run's text and image tokens per step.
async fn tokens_per_step(
    model: &ModelServer,
    sites: &Server,
    history: usize,
    out: &Path,
) -> Vec<(u64, u64)> {
    let options = AgentOptions {
        max_steps: 32,
        history,
        out: Some(out.to_path_buf()),
        report: false,
        ..AgentOptions::default()
    };
    common::successful_run(
        &model.base,
        "Mark the buttons one at a time",
        sites.url("marks.html"),
        options,
    )
    .await;
    seamark::journal::read_records(out)
        .expect("journal")
        .into_iter()
        .filter(|r| r["kind"] == "step")
        .map(|r| {
            let t = &r["prompt_tokens"];
            (
                t["text"].as_u64().unwrap_or(0),
                t["images"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn main() {
    let rt = common::runtime();
    let sites = rt.block_on(Server::start(None));
    let model = rt.block_on(ModelServer::answering(one_mark_a_step));
    let work = tempfile::tempdir().expect("tempdir");
    let folded = rt.block_on(tokens_per_step(
        &model,
        &sites,
        5,
        &work.path().join("folded"),
    ));
    let in_full = rt.block_on(tokens_per_step(
        &model,
        &sites,
        20,
        &work.path().join("full"),
    ));
    let at = [1usize, 5, 10, 20, 30];
    println!("\nprompt tokens of a 31-step run (one click a step), text (o200k_base) and images (OpenAI)\n");
    println!("| step | text, last 20 in full (before) | text, 5 in full + folded (now) | now / before | images sent (now) |");
    println!("|---:|---:|---:|---:|---:|");
    for s in at {
        let (b, n) = (in_full[s - 1], folded[s - 1]);
        println!(
            "| {s} | {} | {} | {:.2} | {} |",
            b.0,
            n.0,
            n.0 as f64 / b.0 as f64,
            n.1
        );
    }
    let ratio = |v: &[(u64, u64)]| v[29].0 as f64 / v[4].0 as f64;
    println!(
        "\nstep 30's text / step 5's: {:.2} before, {:.2} now",
        ratio(&in_full),
        ratio(&folded)
    );
    let per_image = folded[0].1;
    let steps = folded.len() as u64;
    let sent: u64 = folded.iter().map(|t| t.1).sum();
    println!(
        "images over the run: {sent} tokens now; {} when every step after the first sent two ({per_image} each)",
        per_image * (2 * steps - 1)
    );
}
