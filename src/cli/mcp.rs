//! `seamark mcp`: seamark's perception and executor as MCP tools, over stdio
//! (the default) or streamable HTTP. stdout carries only the protocol.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use seamark::mcp::{Desk, Desks, McpOptions, SeamarkMcp};
use seamark::safety::ConfirmPolicy;
use tokio::sync::Mutex;

use super::run::PolicyArgs;
use super::signals::{self, Signals, Stop};
use super::{BrowserArgs, SiteArgs, StorageArgs, UsageError};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve over streamable HTTP at [ADDR:]PORT (127.0.0.1 unless an
    /// address is given; the endpoint is http://ADDR:PORT/mcp) instead of
    /// stdio. The browser starts at once; each MCP session gets a browser
    /// context of its own in it, and a run directory.
    #[arg(long, value_name = "[ADDR:]PORT")]
    http: Option<String>,
    /// The session's run directory (default: runs/<time>-mcp-session); over
    /// HTTP, the folder of the sessions' run directories (session-1, …).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Destructive clicks and keys (delete, pay, send, a form with a
    /// password…): ask the person through the client when it supports MCP
    /// elicitation, else refuse (there is no terminal to ask at); deny; allow.
    #[arg(long, value_name = "ask|deny|allow", default_value = "ask")]
    confirm: ConfirmPolicy,
    /// A skills folder (as for run, e.g. skills): the skill tool does a task
    /// learned before from its skill, with no model, while the pages fit.
    #[arg(long, value_name = "DIR")]
    skills: Option<PathBuf>,
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    storage: StorageArgs,
    #[command(flatten)]
    site: SiteArgs,
    #[command(flatten)]
    browser: BrowserArgs,
}

pub async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let act = args.policy.act_options(args.confirm, None)?;
    args.storage.check()?;
    let (site, fixed_clock) = args.site.site_use()?;
    let options = McpOptions {
        site,
        fixed_clock,
        browser: args.browser.options().await?,
        act,
        scrub: !args.policy.no_scrub,
        out: args.out.clone(),
        skills: args.skills.clone(),
        storage_state: args.storage.storage_state.clone(),
        save_storage_state: args.storage.save_storage_state.clone(),
        ..McpOptions::default()
    };
    let skills = args.skills.is_some();
    match &args.http {
        None => serve_stdio(options, skills).await,
        Some(addr) => serve_http(options, skills, addr).await,
    }
}

/// Serves one client on stdin and stdout until it closes them (or a signal),
/// over one desk.
async fn serve_stdio(options: McpOptions, skills: bool) -> anyhow::Result<ExitCode> {
    let signals = Signals::listen();
    let desk = Desk::new(options)?;
    tell!("seamark mcp: run directory {}", desk.dir().display());
    let desk = Arc::new(Mutex::new(desk));
    let mut stopped = None;
    let served = async {
        let service = SeamarkMcp::new(desk.clone(), skills)
            .serve(seamark::mcp::stdio::transport())
            .await
            .context("the MCP session could not start")?;
        tokio::select! {
            r = service.waiting() => { r.context("the MCP session failed")?; }
            stop = signals.first() => stopped = Some(stop),
        }
        anyhow::Ok(())
    }
    .await;
    let dir = desk.lock().await.finish().await;
    tell!(
        "seamark mcp: session ended; report {}",
        dir.join(seamark::report::REPORT).display()
    );
    served.map(|()| ended_by(stopped))
}

/// The exit status of a server that ended: 0 when its client closed it,
/// the signal's when one ended it.
fn ended_by(stop: Option<Stop>) -> ExitCode {
    match stop {
        Some(stop) => {
            tell!("seamark mcp: ended by {}", stop.name());
            signals::interrupted()
        }
        None => ExitCode::SUCCESS,
    }
}

/// Serves streamable HTTP until a signal. Each MCP session has a desk of its
/// own: a browser context in the one browser, and a run directory.
async fn serve_http(options: McpOptions, skills: bool, addr: &str) -> anyhow::Result<ExitCode> {
    if options.browser.profile.is_some() {
        return Err(UsageError(
            "--profile is for seamark mcp over stdio: over HTTP each MCP session has a browser \
             context of its own, which a profile does not reach (use --storage-state and \
             --save-storage-state)"
                .into(),
        )
        .into());
    }
    let addr = match addr.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => addr.to_string(),
    };
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|e| UsageError(format!("cannot listen on {addr}: {e}")))?;
    let local = listener.local_addr()?;
    let mut signals = std::pin::pin!(Signals::listen().first());
    let remote: Vec<String> = options.browser.cdp.iter().cloned().collect();
    let desks = Desks::start(options, &remote)
        .await
        .context("the browser could not start")?;
    let desks = Arc::new(desks);
    let sessions = desks.clone();
    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || SeamarkMcp::session(&sessions, skills).map_err(std::io::Error::other),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    ));
    tell!("seamark mcp: serving MCP over streamable HTTP at http://{local}/mcp");
    let stopped = loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("a connection could not be accepted: {e}");
                    continue;
                }
            },
            stop = &mut signals => break Some(stop),
        };
        // A client's DELETE (the end of its session) is answered 200 OK:
        // rmcp answers 202 Accepted, which the official Python SDK logs as
        // "Session termination failed: 202" at every session end (it takes
        // 200 or 204).
        let inner = service.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let ends_session = request.method() == Method::DELETE;
            let answer = inner.call(request);
            async move {
                let mut response = answer.await?;
                if ends_session && response.status() == StatusCode::ACCEPTED {
                    *response.status_mut() = StatusCode::OK;
                }
                Ok::<_, std::convert::Infallible>(response)
            }
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    };
    for dir in desks.finish().await {
        tell!(
            "seamark mcp: session ended; report {}",
            dir.join(seamark::report::REPORT).display()
        );
    }
    Ok(ended_by(stopped))
}
