//! `seamark mcp` driven by real MCP clients (rmcp's, and the official Python
//! SDK's), over a child process's stdio and over streamable HTTP, against the
//! fixture site.

use std::time::Duration;

use base64::Engine;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation,
};
use rmcp::service::RequestContext;
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::model_server::id_in;
use crate::processes::{
    kill, kill_browsers_under, terminate, wait_for_browsers_to_end, wait_for_exit, TestDir,
};
use crate::server::{Server, SESSION_PASSWORD};
use crate::support::{all_bytes, command, records};

/// A client connected to `seamark mcp`, and the temp dir it runs in (its
/// run directory is `rec` there).
pub struct Mcp<H: ClientHandler = ()> {
    client: RunningService<RoleClient, H>,
    dir: TestDir,
    /// The server process and its endpoint, for HTTP (the stdio one belongs
    /// to the transport).
    server: Option<(tokio::process::Child, String)>,
    /// The stdio server's process id.
    pid: Option<u32>,
}

/// What one tool call gave.
pub struct Called {
    pub text: String,
    pub images: Vec<Vec<u8>>,
    pub is_error: bool,
}

impl Mcp {
    /// `seamark mcp --out rec ARGS` over its stdio, with a client that has
    /// no person behind it.
    pub async fn stdio(args: &[&str]) -> Mcp {
        Mcp::stdio_with((), args).await
    }

    /// `seamark mcp --http PORT --out rec ARGS`, and a client over HTTP.
    async fn http(args: &[&str]) -> Mcp {
        let (server, url, dir) = http_server(args).await;
        let client =
            ().serve(StreamableHttpClientTransport::from_uri(url.clone()))
                .await
                .expect("MCP handshake over HTTP");
        Mcp {
            client,
            dir,
            server: Some((server, url)),
            pid: None,
        }
    }

    /// Another client of the same HTTP server, in an MCP session of its own.
    async fn another_client(&self) -> RunningService<RoleClient, ()> {
        let (_, url) = self.server.as_ref().expect("an HTTP server");
        ().serve(StreamableHttpClientTransport::from_uri(url.clone()))
            .await
            .expect("MCP handshake over HTTP")
    }
}

/// `seamark mcp --http PORT --out rec ARGS` started and listening: the
/// process, its endpoint and the temp dir it runs in.
async fn http_server(args: &[&str]) -> (tokio::process::Child, String, TestDir) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        l.local_addr().expect("addr").port().to_string()
    };
    let mut all = vec!["mcp", "--http", port.as_str(), "--out", "rec"];
    all.extend_from_slice(args);
    let (mut cmd, dir) = command(&all);
    cmd.stderr(std::process::Stdio::piped()).kill_on_drop(true);
    let mut server = cmd.spawn().expect("start seamark mcp --http");
    // Wait for the line that says it listens.
    let stderr = server.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(l)) = lines.next_line().await {
            if let Some(u) = l.split("streamable HTTP at ").nth(1) {
                return u.trim().to_string();
            }
        }
        String::new()
    })
    .await
    .expect("seamark mcp --http listens");
    assert!(url.ends_with("/mcp"), "{url}");
    // Its stderr is read to the end: a closed pipe would fail its last lines.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (server, url, dir)
}

/// What one tool call of this client gave.
async fn call_on<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> Called {
    let args = args.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool} failed as a call: {e}"));
    let mut text = String::new();
    let mut images = Vec::new();
    for c in result.content {
        match c {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Image(i) => images.push(
                base64::engine::general_purpose::STANDARD
                    .decode(i.data)
                    .expect("base64 image"),
            ),
            _ => {}
        }
    }
    Called {
        text,
        images,
        is_error: result.is_error == Some(true),
    }
}

impl<H: ClientHandler> Mcp<H> {
    /// `seamark mcp --out rec ARGS` over its stdio, with this client.
    async fn stdio_with(handler: H, args: &[&str]) -> Mcp<H> {
        let mut all = vec!["mcp", "--out", "rec"];
        all.extend_from_slice(args);
        let (cmd, dir) = command(&all);
        let transport = TokioChildProcess::new(cmd).expect("start seamark mcp");
        let pid = transport.id();
        let client = handler.serve(transport).await.expect("MCP handshake");
        Mcp {
            client,
            dir,
            server: None,
            pid,
        }
    }

    pub async fn call(&self, tool: &str, args: Value) -> Called {
        call_on(&self.client, tool, args).await
    }

    /// Opens the shop's sign-in page and signs in as ada, typing the secret
    /// `pw` (the session was started with it): what the act gave.
    async fn sign_in_to_the_shop(&self, server: &Server) -> Called {
        let login = self
            .call("open", json!({ "url": server.url("session-login.html") }))
            .await;
        assert!(!login.is_error, "{}", login.text);
        let commands = format!(
            "TYPE:{}:ada\nTYPE:{}:{{{{secret:pw}}}}\nCLICK:{}",
            id_in(&login.text, "Username"),
            id_in(&login.text, "Password"),
            id_in(&login.text, "Sign in")
        );
        self.call("act", json!({ "commands": commands })).await
    }

    /// Ends the session as a client does (closing the transport) and waits
    /// for the server to write its end. An HTTP server is stopped as a
    /// service manager stops it, with SIGTERM, and must exit 143.
    pub async fn close(mut self) -> TestDir {
        let _ = self.client.cancel().await;
        if let Some((mut server, _)) = self.server.take() {
            terminate(&mut server, "seamark mcp --http").await;
            return self.dir;
        }
        // The stdio server ends when its stdin closes: wait for its report.
        let report = self.dir.path().join("rec/report.html");
        for _ in 0..300 {
            if report.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.dir
    }
}

#[tokio::test]
async fn tools_are_listed_and_open_gives_the_marked_screenshot_and_the_list() {
    let server = Server::start(None).await;
    let mcp = Mcp::stdio(&[]).await;
    let tools = mcp.client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, ["act", "observe", "open", "read", "tabs"]);
    let act = tools.iter().find(|t| t.name == "act").expect("act");
    let schema = serde_json::to_value(&act.input_schema).unwrap_or_default();
    assert_eq!(
        schema["properties"]["commands"]["type"], "string",
        "{schema}"
    );
    assert_eq!(schema["required"], json!(["commands"]), "{schema}");
    assert!(act
        .description
        .as_deref()
        .unwrap_or_default()
        .contains("CLICK:3"));
    let opened = mcp
        .call("open", json!({"url": server.url("form.html")}))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    assert!(
        opened
            .text
            .contains("[1] textbox \"Email address\" type=email"),
        "{}",
        opened.text
    );
    assert!(
        opened.text.contains("Viewport: 1280x800"),
        "{}",
        opened.text
    );
    let png = image::load_from_memory(&opened.images[0]).expect("a PNG");
    assert_eq!((png.width(), png.height()), (1280, 800));
    // Text alone on request.
    let text_only = mcp.call("observe", json!({"image": false})).await;
    assert!(text_only.images.is_empty());
    assert!(text_only.text.contains("Email address"));
    mcp.close().await;
}

#[tokio::test]
async fn act_signs_in_with_a_secret_that_no_result_and_no_file_holds() {
    const PW: &str = "correct-horse-battery-9";
    let server = Server::start(None).await;
    let secret = format!("ACME_PW={PW}");
    let mcp = Mcp::stdio(&["--secret", &secret, "--record-site"]).await;
    let opened = mcp
        .call("open", json!({"url": server.url("signin.html")}))
        .await;
    assert!(
        opened.text.contains("{{secret:ACME_PW}}"),
        "the client's model is told which secret it may type: {}",
        opened.text
    );
    let user = id_in(&opened.text, "Email or username");
    let pw = id_in(&opened.text, "Password");
    let button = id_in(&opened.text, "Sign in");
    let commands =
        format!("TYPE:{user}:ada\nTYPE:{pw}:{{{{secret:ACME_PW}}}}\nCLICK:{button}\nCLICK:{user}");
    let acted = mcp.call("act", json!({ "commands": commands })).await;
    assert!(!acted.is_error, "{}", acted.text);
    assert!(acted.text.contains("signed-in.html"), "{}", acted.text);
    // The batch stopped at the new page: the last command was not run.
    assert!(
        acted.text.contains(&format!("not run: CLICK:{user}")),
        "{}",
        acted.text
    );
    assert_eq!(server.posted("/signed-in.html").len(), 1);
    // The result ends with the new page's list; an id it does not have is refused.
    let stale = mcp.call("act", json!({"commands": "CLICK:99"})).await;
    assert!(stale.is_error);
    assert!(
        stale.text.contains("there is no element 99"),
        "{}",
        stale.text
    );
    let read = mcp.call("read", json!({})).await;
    assert!(!read.is_error, "{}", read.text);
    for called in [&opened, &acted, &stale, &read] {
        assert!(!called.text.contains(PW), "a tool result holds the secret");
        for img in &called.images {
            assert!(!img.windows(PW.len()).any(|w| w == PW.as_bytes()));
        }
    }
    let dir = mcp.close().await;
    let rec = dir.path().join("rec");
    let files = all_bytes(&rec);
    assert!(files.iter().any(|(n, _)| n == "report.html"), "no report");
    // The session's site was recorded, the sign-in's form with its secret sealed.
    let har = std::fs::read_to_string(rec.join("site.har")).expect("site.har");
    assert!(
        har.contains("pw={{secret:ACME_PW}}"),
        "the sign-in is recorded sealed"
    );
    for (name, bytes) in files {
        assert!(
            !bytes.windows(PW.len()).any(|w| w == PW.as_bytes()),
            "{name} holds the secret"
        );
    }
    // Each act is a step of the session's journal, as a run's are.
    let steps = records(&rec, "step");
    assert_eq!(steps.len(), 2);
    assert_eq!(
        steps[0]["report"]["outcomes"][2]["command"],
        format!("CLICK:{button}")
    );
    assert_eq!(records(&rec, "end").len(), 1);
}

#[tokio::test]
async fn a_destructive_click_is_held_and_a_blocked_domain_is_refused() {
    let server = Server::start(None).await;
    let other = Server::start(None).await;
    let other_host = other.base.trim_start_matches("http://").to_string();
    // Both servers are 127.0.0.1: block by the other's port through localhost.
    let blocked_url = other.url("form.html").replace("127.0.0.1", "localhost");
    let mcp = Mcp::stdio(&["--block-domain", "localhost"]).await;
    let refused = mcp.call("open", json!({ "url": blocked_url })).await;
    assert!(refused.is_error);
    assert!(
        refused.text.contains("refused by the domain policy"),
        "{}",
        refused.text
    );
    assert!(
        !other.was_requested("/form.html"),
        "{other_host} was reached"
    );
    let opened = mcp
        .call("open", json!({"url": server.url("delete.html")}))
        .await;
    let delete = id_in(&opened.text, "Delete account");
    let held = mcp
        .call("act", json!({ "commands": format!("CLICK:{delete}") }))
        .await;
    assert!(held.is_error, "{}", held.text);
    assert!(held.text.contains("HELD"), "{}", held.text);
    assert!(
        held.text.contains("held for a person's confirmation"),
        "{}",
        held.text
    );
    assert!(
        held.text
            .contains("the MCP client does not support elicitation"),
        "{}",
        held.text
    );
    assert!(!server.was_requested("/deleted"), "the form was posted");
    mcp.close().await;
}

/// A client with a person behind it, who answers every confirmation so.
#[derive(Clone)]
struct Person {
    says_yes: bool,
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("a person", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(serde_json::to_string(&request).unwrap_or_default());
        }
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({ "go_ahead": self.says_yes })))
    }
}

#[tokio::test]
async fn a_client_that_can_ask_its_person_lets_a_destructive_click_through_on_a_yes() {
    let server = Server::start(None).await;
    for says_yes in [false, true] {
        let person = Person {
            says_yes,
            asked: Default::default(),
        };
        let asked = person.asked.clone();
        let mcp = Mcp::stdio_with(person, &[]).await;
        let opened = mcp
            .call("open", json!({"url": server.url("delete.html")}))
            .await;
        let delete = id_in(&opened.text, "Delete account");
        let acted = mcp
            .call("act", json!({ "commands": format!("CLICK:{delete}") }))
            .await;
        assert_eq!(acted.is_error, !says_yes, "{}", acted.text);
        assert_eq!(server.was_requested("/deleted"), says_yes, "{}", acted.text);
        let asked = asked.lock().map(|a| a.clone()).unwrap_or_default();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].contains("Delete account"), "{asked:?}");
        assert!(
            asked[0].contains("go_ahead"),
            "the schema was sent: {asked:?}"
        );
        let dir = mcp.close().await;
        let decision = &records(&dir.path().join("rec"), "step")[0]["report"]["confirmations"][0];
        assert_eq!(decision["allowed"], says_yes, "{decision}");
        assert_eq!(decision["by"], "a person", "{decision}");
    }
}

#[tokio::test]
async fn bad_calls_are_errors_and_the_server_keeps_serving() {
    let server = Server::start(None).await;
    let mcp = Mcp::stdio(&[]).await;
    // Before any page.
    let early = mcp.call("observe", json!({})).await;
    assert!(
        early.is_error && early.text.contains("call open"),
        "{}",
        early.text
    );
    // Unknown tool, a missing and a wrong-typed argument: protocol errors.
    for (tool, args) in [
        ("fly", json!({})),
        ("open", json!({})),
        ("act", json!({"commands": 5})),
    ] {
        let args = args.as_object().cloned().unwrap_or_default();
        let r = mcp
            .client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
            .await;
        assert!(
            r.is_err() || r.as_ref().is_ok_and(|r| r.is_error == Some(true)),
            "{tool}: {r:?}"
        );
    }
    mcp.call("open", json!({"url": server.url("form.html")}))
        .await;
    let unparsed = mcp.call("act", json!({"commands": "JUMP:3"})).await;
    assert!(unparsed.is_error);
    assert!(
        unparsed.text.contains("could not be read"),
        "{}",
        unparsed.text
    );
    let asked = mcp
        .call("act", json!({"commands": "ASK:Which account?"}))
        .await;
    assert!(
        asked.is_error && asked.text.contains("ask the person yourself"),
        "{}",
        asked.text
    );
    let bad_url = mcp
        .call("open", json!({"url": "http://127.0.0.1:1/"}))
        .await;
    assert!(bad_url.is_error, "{}", bad_url.text);
    // The browser dies between calls: the next call says so, the one after
    // starts a new browser.
    kill_browsers_under(&mcp.dir.tmp());
    wait_for_browsers_to_end(&mcp.dir.tmp(), Duration::from_secs(10));
    let lost = mcp.call("observe", json!({})).await;
    assert!(lost.is_error, "{}", lost.text);
    // Said first or after the page's error, whichever noticed the loss
    // first (a race CI lost once on the capital letter).
    assert!(
        lost.text.to_lowercase().contains("the browser was lost"),
        "{}",
        lost.text
    );
    let again = mcp
        .call("open", json!({"url": server.url("form.html")}))
        .await;
    assert!(!again.is_error, "{}", again.text);
    assert!(again.text.contains("Email address"));
    mcp.close().await;
}

#[tokio::test]
async fn a_line_that_is_not_json_gets_the_parse_error_32700_and_the_next_request_its_answer() {
    let (mut cmd, _dir) = command(&["mcp", "--out", "rec"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("start seamark mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let lines = [
        init.to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        "{this is not json".to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string(),
    ];
    for l in lines {
        stdin
            .write_all(format!("{l}\n").as_bytes())
            .await
            .expect("write");
    }
    stdin.flush().await.expect("flush");
    let mut answers: Vec<Value> = Vec::new();
    let got = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = out.next_line().await {
            // stdout carries only the protocol: every line is JSON-RPC.
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout held a line that is not JSON ({e}): {line}"));
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            let done = v["id"] == 2;
            answers.push(v);
            if done {
                break;
            }
        }
    })
    .await;
    assert!(got.is_ok(), "no answer to tools/list: {answers:?}");
    let tools = answers.iter().find(|a| a["id"] == 2).expect("the answer");
    assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(5));
    let parse_error = answers
        .iter()
        .find(|a| a["error"]["code"] == -32700)
        .unwrap_or_else(|| panic!("no parse error among {answers:?}"));
    assert_eq!(parse_error["id"], Value::Null, "{parse_error}");
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
}

#[tokio::test]
async fn over_streamable_http_each_session_has_its_own_browser_context_and_run_directory() {
    let server = Server::start(None).await;
    let secret = format!("pw={SESSION_PASSWORD}");
    let mcp = Mcp::http(&["--secret", &secret]).await;
    let other = mcp.another_client().await;
    // The first session signs in...
    let signed_in = mcp.sign_in_to_the_shop(&server).await;
    assert!(
        signed_in.text.contains("Signed in as ada"),
        "{}",
        signed_in.text
    );
    // ...and the second, in a browser context of its own, is not signed in.
    let me = call_on(&other, "open", json!({ "url": server.url("me") })).await;
    assert!(me.text.contains("Not signed in"), "{}", me.text);
    // Its page and ids are its own.
    let form = call_on(&other, "open", json!({ "url": server.url("form.html") })).await;
    let news = id_in(&form.text, "Send me news");
    let acted = call_on(
        &other,
        "act",
        json!({ "commands": format!("CLICK:{news}") }),
    )
    .await;
    assert!(
        acted.text.contains(&format!("CLICK:{news} → done")),
        "{}",
        acted.text
    );
    let tabs = mcp.call("tabs", json!({})).await;
    assert!(
        tabs.text.contains("/me") && !tabs.text.contains("form.html"),
        "{}",
        tabs.text
    );
    // A session the client ends is reported then, while the server serves on.
    let _ = other.cancel().await;
    let ended = mcp.dir.path().join("rec/session-2/report.html");
    for _ in 0..100 {
        if ended.is_file() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ended.is_file(), "the ended session was not reported");
    assert!(mcp
        .call("observe", json!({"image": false}))
        .await
        .text
        .contains("/me"));
    // Each session has its run directory, with its own step and report.
    let dir = mcp.close().await;
    for n in [1, 2] {
        let rec = dir.path().join(format!("rec/session-{n}"));
        assert_eq!(records(&rec, "step").len(), 1, "session {n}");
        assert!(rec.join("report.html").is_file(), "session {n}");
    }
}

#[tokio::test]
async fn read_of_a_text_gives_the_section_under_the_heading_that_holds_it_not_an_earlier_mention() {
    let server = Server::start(None).await;
    let mcp = Mcp::stdio(&[]).await;
    mcp.call("open", json!({"url": server.url("shipping.html")}))
        .await;
    let read = mcp.call("read", json!({"text": "shipping"})).await;
    assert!(!read.is_error, "{}", read.text);
    assert!(read.text.contains("Free over $50"), "{}", read.text);
    assert!(
        !read.text.contains("within 30 days") && !read.text.contains("Questions about"),
        "{}",
        read.text
    );
    mcp.close().await;
}

#[tokio::test]
async fn pipelined_calls_run_in_the_order_they_were_sent() {
    // A client may send its next call before the last one is answered: a
    // `read` sent right after `open` once answered "no page is open", and
    // one sent after a second `open` read the first page.
    let server = Server::start(None).await;
    let mcp = Mcp::stdio(&[]).await;
    let (form, pricing) = (server.url("form.html"), server.url("pricing.html"));
    // The form's ids, as a client's model learns them, for the acts below.
    let email = id_in(
        &mcp.call("open", json!({ "url": form })).await.text,
        "Email address",
    );
    for round in 0..3 {
        let typed = format!("TYPE:{email}:ada{round}@example.com");
        let (_, acted, first, _, second) = tokio::join!(
            mcp.call("open", json!({ "url": form })),
            mcp.call("act", json!({ "commands": typed })),
            mcp.call("read", json!({})),
            mcp.call("open", json!({ "url": pricing })),
            mcp.call("read", json!({})),
        );
        assert!(!acted.is_error, "{}", acted.text);
        assert!(!first.is_error, "{}", first.text);
        assert!(first.text.contains("Create your account"), "{}", first.text);
        // The act ran on the page opened just before it, and the read after it.
        let field = first.text.lines().find(|l| l.starts_with("Email address"));
        assert!(
            field.is_some_and(|l| !l.ends_with("(empty)")),
            "{}",
            first.text
        );
        assert!(!second.is_error, "{}", second.text);
        assert!(second.text.contains("Plans and pricing"), "{}", second.text);
    }
    mcp.close().await;
}

/// An MCP session over stdio signed in to the shop at its start, and what
/// its `open` of the account page shows: `seamark mcp ARGS`.
async fn account_page(server: &Server, args: &[&str]) -> String {
    let mcp = Mcp::stdio(args).await;
    let me = mcp.call("open", json!({ "url": server.url("me") })).await;
    assert!(!me.is_error, "{}", me.text);
    mcp.close().await;
    me.text
}

#[tokio::test]
async fn a_session_signed_in_over_mcp_lasts_in_its_profile_and_its_saved_storage_state() {
    let server = Server::start(None).await;
    let keep = tempfile::tempdir().expect("a temp dir");
    let profile = keep.path().join("profile");
    let state = keep.path().join("state.json");
    let (profile, state) = (profile.to_string_lossy(), state.to_string_lossy());
    let secret = format!("pw={SESSION_PASSWORD}");
    let mcp = Mcp::stdio(&[
        "--secret",
        &secret,
        "--profile",
        &profile,
        "--save-storage-state",
        &state,
    ])
    .await;
    let acted = mcp.sign_in_to_the_shop(&server).await;
    assert!(!acted.is_error, "{}", acted.text);
    assert!(acted.text.contains("Signed in as ada"), "{}", acted.text);
    mcp.close().await;

    // The saved state holds the site's session and what it remembered, not
    // the password, and only its owner can read it.
    let saved = std::fs::read_to_string(&*state).expect("the state was saved");
    assert!(
        saved.contains("s-ada-7") && saved.contains("remember"),
        "{saved}"
    );
    assert!(!saved.contains(SESSION_PASSWORD));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&*state)
        .expect("state")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "a storage state is a credential");

    // A new session with the same profile is still signed in; so is one in
    // a fresh browser that starts from the saved state.
    for args in [["--profile", &*profile], ["--storage-state", &*state]] {
        let me = account_page(&server, &args).await;
        assert!(me.contains("Signed in as ada"), "{args:?}: {me}");
        assert!(me.contains("Remembered: ada"), "{args:?}: {me}");
    }
    // And one with neither is not.
    assert!(account_page(&server, &[]).await.contains("Not signed in"));
}

#[tokio::test]
async fn a_storage_state_that_is_no_state_is_refused_before_the_session_starts() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"cookies\": 7}").expect("write");
    let (mut cmd, _tmp) = command(&["mcp", "--storage-state", &bad.to_string_lossy()]);
    let out = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("seamark mcp runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not a storage state"), "{stderr}");
}

#[tokio::test]
async fn sigterm_ends_the_stdio_server_with_its_report_and_no_browser_left() {
    let server = Server::start(None).await;
    let mcp = Mcp::stdio(&[]).await;
    let opened = mcp
        .call("open", json!({"url": server.url("form.html")}))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let pid = mcp.pid.expect("the stdio server's pid");
    kill(&[pid], "TERM");
    assert!(
        wait_for_exit(pid, Duration::from_secs(30)),
        "seamark mcp still runs 30 s after SIGTERM"
    );
    let rec = mcp.dir.path().join("rec");
    assert!(rec.join("report.html").is_file(), "no report after SIGTERM");
    assert_eq!(
        records(&rec, "end").len(),
        1,
        "the session's end was not written"
    );
    // No browser is left: the test directory checks that when dropped.
}

#[tokio::test]
async fn an_mcp_client_uploads_from_the_files_folder_and_is_told_where_its_downloads_are() {
    let server = Server::start(None).await;
    let files = tempfile::tempdir().expect("a temp dir");
    std::fs::write(files.path().join("cv.txt"), "my CV").expect("write");
    let folder = files.path().to_string_lossy();
    let mcp = Mcp::stdio(&["--files", &folder, "--confirm", "allow"]).await;
    let page = mcp
        .call("open", json!({ "url": server.url("upload.html") }))
        .await;
    assert!(
        page.text.contains("files you may UPLOAD") && page.text.contains("\"cv.txt\" (5 B)"),
        "{}",
        page.text
    );
    let cv = id_in(&page.text, "Your CV");
    let refused = mcp
        .call(
            "act",
            json!({ "commands": format!("UPLOAD:{cv}:/etc/passwd") }),
        )
        .await;
    assert!(
        refused.is_error && refused.text.contains("nothing attached"),
        "{}",
        refused.text
    );
    let attached = mcp
        .call("act", json!({ "commands": format!("UPLOAD:{cv}:cv.txt") }))
        .await;
    assert!(
        attached.text.contains("attached \"cv.txt\" (5 B"),
        "{}",
        attached.text
    );
    let sent = mcp
        .call(
            "act",
            json!({ "commands": format!("CLICK:{}", id_in(&attached.text, "Send")) }),
        )
        .await;
    assert!(sent.text.contains("Title: Received"), "{}", sent.text);
    let posted = server.log.lock().expect("log").clone();
    let hex: String = b"my CV".iter().map(|b| format!("{b:02x}")).collect();
    assert!(
        posted.contains(&format!("FILE doc cv.txt {hex}")),
        "{posted:?}"
    );

    let page = mcp
        .call("open", json!({ "url": server.url("downloads.html") }))
        .await;
    let got = mcp
        .call(
            "act",
            json!({ "commands": format!("CLICK:{}", id_in(&page.text, "Get the report")) }),
        )
        .await;
    let path = got
        .text
        .lines()
        .find_map(|l| l.strip_prefix("downloaded file: "))
        .and_then(|l| l.split(" (").next())
        .unwrap_or_else(|| panic!("no download named: {}", got.text))
        .to_string();
    assert_eq!(
        std::fs::read_to_string(&path).expect("the file is where the answer says"),
        crate::server::REPORT_CSV
    );
    let dir = mcp.close().await;
    assert!(
        std::path::Path::new(&path).starts_with(
            std::fs::canonicalize(dir.path().join("rec/downloads")).expect("rec/downloads")
        ),
        "{path}"
    );
}

#[tokio::test]
async fn tabs_lists_switches_and_closes_the_tabs_a_site_opened() {
    let server = Server::start(None).await;
    let mcp = Mcp::stdio(&[]).await;
    let page = mcp
        .call("open", json!({ "url": server.url("tabs.html") }))
        .await;
    let open = id_in(&page.text, "Open results in a new tab");
    mcp.call("act", json!({ "commands": format!("CLICK:{open}") }))
        .await;
    let listed = mcp.call("tabs", json!({})).await;
    assert!(
        listed.text.contains("1. \"Tabs\"") && listed.text.contains("from=tab (shown)"),
        "{}",
        listed.text
    );
    let first = mcp.call("tabs", json!({ "select": 1 })).await;
    assert!(
        first.text.starts_with("switched to tab 1")
            && first.text.contains("URL: ")
            && first.text.contains("/tabs.html"),
        "{}",
        first.text
    );
    mcp.call("tabs", json!({ "select": 2 })).await;
    let closed = mcp.call("tabs", json!({ "close": true })).await;
    assert!(closed.text.contains("tab 1 is shown"), "{}", closed.text);
    let left = mcp.call("tabs", json!({})).await;
    assert_eq!(left.text.lines().count(), 1, "{}", left.text);
    let only = mcp.call("tabs", json!({ "close": true })).await;
    assert!(
        only.is_error && only.text.contains("the only tab"),
        "{}",
        only.text
    );
    mcp.close().await;
}

/// `observe` with a zoom region adds a close look as a second image: a box
/// of the last image around the canvas's dot, captured again eight times
/// larger; and an element by its id, its long edge filling the image.
#[tokio::test]
async fn observe_with_a_zoom_adds_a_close_look_of_a_box_or_an_element() {
    let server = Server::start(None).await;
    let mcp = Mcp::stdio(&[]).await;
    let opened = mcp
        .call("open", json!({"url": server.url("canvas.html")}))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let shot = image::load_from_memory(&opened.images[0])
        .expect("a PNG")
        .to_rgb8();
    let lime: Vec<(u32, u32)> = shot
        .enumerate_pixels()
        .filter(|(_, _, p)| p[0] < 40 && p[1] > 215 && p[2] < 40)
        .map(|(x, y, _)| (x, y))
        .collect();
    let (x, y) = lime[lime.len() / 2];
    let closer = mcp
        .call(
            "observe",
            json!({"zoom": format!("@{},{}:@{},{}", x - 40, y - 25, x + 40, y + 25)}),
        )
        .await;
    assert!(!closer.is_error, "{}", closer.text);
    assert_eq!(closer.images.len(), 2, "{}", closer.text);
    let look = image::load_from_memory(&closer.images[1]).expect("a PNG");
    assert_eq!((look.width(), look.height()), (640, 400));
    assert!(closer.text.contains("magnified 8.0×"), "{}", closer.text);
    // A region outside the image is an error, and nothing else is shown.
    let outside = mcp
        .call("observe", json!({"zoom": "@2000,10:@2100,50"}))
        .await;
    assert!(outside.is_error, "{}", outside.text);
    assert!(
        outside.text.contains("outside the image"),
        "{}",
        outside.text
    );
    // An element by its id: the email field of the form.
    let form = mcp
        .call("open", json!({"url": server.url("form.html")}))
        .await;
    let id = id_in(&form.text, "Email address");
    let field = mcp.call("observe", json!({"zoom": id.to_string()})).await;
    assert!(!field.is_error, "{}", field.text);
    let look = image::load_from_memory(&field.images[1]).expect("a PNG");
    assert!(
        look.width() >= 1200 && look.height() < look.width() / 4,
        "{}×{}",
        look.width(),
        look.height()
    );
    mcp.close().await;
}

/// What the official MCP Python SDK's client (`tests/interop/mcp_client.py`)
/// got from seamark: each call's text and error flag, and the SDK's warnings.
async fn python_sdk_client(args: &[&str]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/mcp_client.py");
    let out = tokio::process::Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .await
        .expect("python3 runs (scripts/setup.sh installs it with the SDK)");
    assert!(
        out.status.success(),
        "the Python SDK client failed (is the `mcp` package installed? scripts/setup.sh \
         installs it):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

/// What every session of the Python SDK must have got: the tools, a page
/// opened and observed, a form typed into and submitted (the server heard
/// the city), a read and the tabs, a wrong argument type refused as an error,
/// and no warning from the SDK (a DELETE answered 202 made it warn
/// "Session termination failed: 202" at every session end).
fn the_python_sdk_session_worked(calls: &Value, server: &Server) {
    let names: Vec<&str> = calls["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(names, ["act", "observe", "open", "read", "tabs"], "{calls}");
    for call in ["open", "observe", "act", "read", "tabs"] {
        assert_eq!(calls[call]["is_error"], false, "{call}: {calls}");
    }
    let acted = calls["act"]["text"].as_str().unwrap_or_default();
    assert!(acted.contains("→ done: typed \"Lisbon\""), "{acted}");
    assert!(
        server.was_requested("/weather.html?city=Lisbon"),
        "the form was not submitted: {calls}"
    );
    let read = calls["read"]["text"].as_str().unwrap_or_default();
    assert!(read.contains("Weather"), "{read}");
    assert!(
        calls["tabs"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("weather.html"),
        "{calls}"
    );
    assert_eq!(calls["wrong_type"]["is_error"], true, "{calls}");
    assert!(
        calls["wrong_type"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("integer"),
        "{calls}"
    );
    assert_eq!(calls["warnings"], json!([]), "the SDK warned");
}

#[tokio::test]
async fn the_official_python_sdk_drives_seamark_over_stdio_and_over_http() {
    let server = Server::start(None).await;
    let lookup = server.url("lookup.html");
    // Over stdio: the SDK starts `seamark mcp` itself and ends it by closing
    // its stdin, after which the session's report is written.
    let dir = crate::processes::TestDir::new();
    let out = dir.path().join("rec");
    let binary = env!("CARGO_BIN_EXE_seamark");
    let out_arg = out.to_string_lossy().into_owned();
    let calls = python_sdk_client(&["stdio", binary, &lookup, "--out", &out_arg]).await;
    the_python_sdk_session_worked(&calls, &server);
    assert!(
        out.join("report.html").is_file(),
        "no report after the SDK ended the session"
    );
    // Over streamable HTTP, with the session ended by the SDK's DELETE.
    let (mut mcp, url, dir) = http_server(&[]).await;
    let calls = python_sdk_client(&["http", &url, &lookup]).await;
    the_python_sdk_session_worked(&calls, &server);
    let ended = dir.path().join("rec/session-1/report.html");
    for _ in 0..100 {
        if ended.is_file() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        ended.is_file(),
        "the session the SDK ended was not reported"
    );
    terminate(&mut mcp, "seamark mcp --http").await;
}

/// A client that sends one request and closes its end: the answer comes on
/// stdout, and the end of input ends the server, which writes its report.
#[tokio::test]
async fn the_end_of_input_ends_the_server_after_its_answer() {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "a test", "version": "1"},
        },
    });
    let run = crate::support::Seamark::new(&["mcp"])
        .stdin(&format!("{initialize}\n"))
        .run()
        .await;
    run.stdout_has("\"serverInfo\":{\"name\":\"seamark\"")
        .stderr_has("session ended; report runs/");
}
