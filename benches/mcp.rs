//! `seamark mcp` beside the same work in the library, in the same run: an
//! `observe` (marked screenshot and list) and a one-click `act` (a checkbox
//! toggled: the click, the settled page, the new list), through rmcp's client
//! over the seamark binary's stdio, and on a `Desk` in this process. The
//! difference is the protocol's cost: JSON-RPC framing, the image in base64,
//! two pipes.
//!
//! Before the timings, what an `observe` costs a client's model in tokens on
//! each saved page of the corpus, beside an accessibility snapshot of the
//! same page (`Accessibility.getFullAXTree`, written as Playwright MCP writes
//! its snapshot: one `- role "name" [ref=eN]` line per node that is not
//! ignored, indented by depth, text as `- text: …`), with its median and max.
//!
//! `cargo bench --bench mcp`.
// criterion's macros write public functions with no doc comment; the docs
// lint is for the library.
// A benchmark fails by panicking, as a test does, and its scenario is told
// in order, however long.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines
)]

mod common;

use std::collections::HashMap;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::accessibility::{AxNode, GetFullAxTreeParams};
use common::server;
use criterion::{criterion_group, criterion_main, Criterion};
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use seamark::brain::tokens::{image_tokens, text_tokens, Provider};
use seamark::browser::{BrowserOptions, Session};
use seamark::mcp::{Desk, McpOptions};
use serde_json::json;

const MODEL: &str = "openai/gpt-4o";

/// An accessibility snapshot as Playwright MCP writes one.
fn ax_snapshot(nodes: &[AxNode]) -> String {
    let by_id: HashMap<&str, &AxNode> = nodes
        .iter()
        .map(|n| (n.node_id.inner().as_str(), n))
        .collect();
    let text = |v: &Option<chromiumoxide::cdp::browser_protocol::accessibility::AxValue>| {
        v.as_ref()
            .and_then(|v| v.value.as_ref())
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let mut out = String::new();
    let mut refs = 0;
    let mut stack: Vec<(&AxNode, usize)> = nodes.first().map(|n| vec![(n, 0)]).unwrap_or_default();
    while let Some((node, depth)) = stack.pop() {
        let role = text(&node.role);
        let mut child_depth = depth;
        if !node.ignored && role != "InlineTextBox" {
            let name = text(&node.name);
            let pad = "  ".repeat(depth);
            if role == "StaticText" {
                out.push_str(&format!("{pad}- text: {name}\n"));
            } else {
                refs += 1;
                let name = if name.is_empty() {
                    String::new()
                } else {
                    format!(" \"{name}\"")
                };
                out.push_str(&format!("{pad}- {role}{name} [ref=e{refs}]\n"));
            }
            child_depth = depth + 1;
        }
        for id in node.child_ids.iter().flatten().rev() {
            if let Some(child) = by_id.get(id.inner().as_str()) {
                stack.push((child, child_depth));
            }
        }
    }
    out
}

fn median(mut v: Vec<usize>) -> usize {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Tokens of an observe and of an accessibility snapshot, page by page.
fn token_table(rt: &tokio::runtime::Runtime, server: &server::Server) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut desk = Desk::new(McpOptions {
        out: Some(dir.path().join("rec")),
        ..McpOptions::default()
    })
    .expect("desk");
    let (mut observes, mut snapshots) = (Vec::new(), Vec::new());
    rt.block_on(async {
        let session = Session::start(&BrowserOptions::default())
            .await
            .expect("launch Chromium");
        for page in server::corpus_pages() {
            let url = server.url(&format!("corpus/{page}/index.html"));
            let seen = desk.open(&url, true).await;
            if seen.is_error {
                eprintln!("mcp-tokens {page}: {}", seen.text);
                continue;
            }
            let image = seen
                .image
                .as_ref()
                .map(|_| image_tokens(Provider::OpenAi, 1280, 800))
                .unwrap_or(0);
            let observe = text_tokens(MODEL, &seen.text) + image;
            let _ = session.navigate(&url, Duration::from_secs(30)).await;
            let nodes = session
                .page()
                .execute(GetFullAxTreeParams::default())
                .await
                .map(|r| r.result.nodes.clone())
                .unwrap_or_default();
            let snapshot = text_tokens(MODEL, &ax_snapshot(&nodes));
            eprintln!(
                "mcp-tokens {page}: observe {observe} (image {image}), ax snapshot {snapshot}"
            );
            observes.push(observe);
            snapshots.push(snapshot);
        }
        session.close().await;
        desk.finish().await;
    });
    eprintln!(
        "mcp-tokens over {} pages: observe median {} max {}; ax snapshot median {} max {}",
        observes.len(),
        median(observes.clone()),
        observes.iter().max().copied().unwrap_or(0),
        median(snapshots.clone()),
        snapshots.iter().max().copied().unwrap_or(0),
    );
}

fn bench(c: &mut Criterion) {
    let rt = common::runtime();
    let server = rt.block_on(server::Server::start(None));
    token_table(&rt, &server);
    let form = server.url("form.html");
    // The library: a desk in this process.
    let dir = tempfile::tempdir().expect("temp dir");
    let mut desk = Desk::new(McpOptions {
        out: Some(dir.path().join("lib")),
        ..McpOptions::default()
    })
    .expect("desk");
    let opened = rt.block_on(desk.open(&form, true));
    let news = opened
        .text
        .lines()
        .find(|l| l.contains("\"Send me news\""))
        .and_then(|l| l[1..].split(']').next()?.parse::<u32>().ok())
        .expect("the checkbox");
    let click = format!("CLICK:{news}");
    // The binary over stdio, with rmcp's client.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_seamark"));
    cmd.args(["mcp", "--out"]).arg(dir.path().join("mcp"));
    let client = rt.block_on(async {
        let client =
            ().serve(TokioChildProcess::new(cmd).expect("start seamark mcp"))
                .await
                .expect("handshake");
        let args = json!({ "url": form })
            .as_object()
            .cloned()
            .unwrap_or_default();
        client
            .call_tool(CallToolRequestParams::new("open").with_arguments(args))
            .await
            .expect("open");
        client
    });
    let call = |tool: &'static str, args: serde_json::Value| {
        let args = args.as_object().cloned().unwrap_or_default();
        let result = rt
            .block_on(client.call_tool(CallToolRequestParams::new(tool).with_arguments(args)))
            .expect("call");
        assert!(result.is_error != Some(true), "{tool} failed");
        result
            .content
            .iter()
            .filter(|c| matches!(c, ContentBlock::Image(_)))
            .count()
    };
    let mut group = c.benchmark_group("mcp/form");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("library_observe", |b| {
        b.iter(|| rt.block_on(desk.observe(true)))
    });
    group.bench_function("mcp_observe", |b| {
        b.iter(|| call("observe", json!({ "image": true })))
    });
    group.bench_function("library_act_click", |b| {
        b.iter(|| rt.block_on(desk.act(&click, &[], false)))
    });
    group.bench_function("mcp_act_click", |b| {
        b.iter(|| call("act", json!({ "commands": click })))
    });
    group.finish();
    rt.block_on(async {
        let _ = client.cancel().await;
        desk.finish().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
