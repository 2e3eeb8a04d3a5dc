//! The person's own browser, lent to seamark: attached by its profile
//! folder, its port or `auto`, seamark works in a tab of its own, leaves
//! the person's tabs alone and closes only its own; `seamark browser`
//! starts such a browser; a `--cdp` that points at nothing is a usage error.
//! The page's Go button is in a frame of another site, which a person's
//! browser runs in a process of its own.

use std::time::Duration;

use serde_json::json;

use crate::mcp::Mcp;
use crate::model_server::{ModelServer, Received, Reply};
use crate::processes::{terminate, TestDir};
use crate::server::Server;
use crate::support::{command, persons_chromium, Seamark};

/// A person's Chromium, started as a person starts one (a profile folder of
/// its own, `--remote-debugging-port=0`), with a tab of theirs open.
struct PersonsBrowser {
    process: tokio::process::Child,
    profile: tempfile::TempDir,
    port: u16,
    server: Server,
}

impl PersonsBrowser {
    async fn start() -> PersonsBrowser {
        let profile = tempfile::tempdir().expect("a profile folder");
        PersonsBrowser::start_in(profile).await
    }

    async fn start_in(profile: tempfile::TempDir) -> PersonsBrowser {
        let server = Server::start(None).await;
        let (process, ws) = persons_chromium(profile.path(), &server.url("persons-tab.html")).await;
        let port = url::Url::parse(&ws)
            .ok()
            .and_then(|u| u.port())
            .expect("the DevTools URL names its port");
        let browser = PersonsBrowser {
            process,
            profile,
            port,
            server,
        };
        for _ in 0..200 {
            if browser.loads_of_the_persons_tab() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            browser.loads_of_the_persons_tab(),
            1,
            "the person's tab loads"
        );
        browser
    }

    fn folder(&self) -> String {
        self.profile.path().display().to_string()
    }

    /// How often the person's tab loaded: more than once is a reload.
    fn loads_of_the_persons_tab(&self) -> usize {
        self.heard("/heard/persons-tab-load")
    }

    fn heard(&self, path: &str) -> usize {
        self.server
            .log
            .lock()
            .map(|l| l.iter().filter(|p| p.as_str() == path).count())
            .unwrap_or(0)
    }

    /// The URLs of the browser's tabs, as its DevTools list them.
    async fn tabs(&self) -> Vec<String> {
        crate::processes::pages_at(self.port).await
    }

    /// Asserts that the person's tab is still open, loaded once, that the
    /// browser still runs, and whether seamark's tab on `page` is there.
    async fn was_left_alone(&mut self, page: &str, seamarks_tab_kept: bool) {
        assert!(
            self.process
                .try_wait()
                .expect("the browser's status")
                .is_none(),
            "seamark ended the person's browser"
        );
        let tabs = self.tabs().await;
        assert!(
            tabs.iter().any(|t| t.ends_with("/persons-tab.html")),
            "the person's tab was closed: {tabs:?}"
        );
        assert_eq!(
            self.loads_of_the_persons_tab(),
            1,
            "the person's tab was loaded again"
        );
        assert_eq!(
            tabs.iter().any(|t| t.ends_with(page)),
            seamarks_tab_kept,
            "seamark's tab on {page}: {tabs:?}"
        );
    }

    async fn end(mut self) {
        let _ = self.process.kill().await;
    }
}

/// Presses Go, then says it is done.
fn presses_go(r: &Received) -> Reply {
    Reply::Text(if r.step() == 1 {
        format!("CLICK:{}", r.id_of("Go"))
    } else {
        "COMPLETE:pressed Go".into()
    })
}

#[tokio::test]
async fn attached_by_its_folder_or_its_port_a_task_works_in_a_tab_of_its_own_and_leaves_the_persons_alone(
) {
    let mut person = PersonsBrowser::start().await;
    let model = ModelServer::answering(presses_go).await;
    let task = person.server.url("guest.html");
    let folder = person.folder();
    let port = person.port.to_string();
    for (n, (cdp, keep)) in [(folder.as_str(), false), (port.as_str(), true)]
        .into_iter()
        .enumerate()
    {
        let mut args = vec!["--task", "Press Go", "--url", &task, "--cdp", cdp];
        if keep {
            args.push("--keep-tab");
        }
        Seamark::task(&args).model(&model).run().await;
        assert_eq!(
            person.heard("/heard/go"),
            n + 1,
            "--cdp {cdp}: the click on Go reached the server"
        );
        person.was_left_alone("/guest.html", keep).await;
    }
    // What the model was shown is seamark's tab alone.
    for r in model.received() {
        assert!(!r.text().contains("My mail"), "{}", r.text());
    }
    // Domain limits hold in the person's browser too, inside the frame of
    // another site: Go's request to its own server goes, the tracker's is
    // refused, and the run says so.
    let trackers = person.heard("/heard/tracker");
    assert_eq!(trackers, 2, "without limits, the tracker is reached");
    let loads = person.heard("/heard/tracker-load");
    assert!(
        loads >= 2,
        "without limits, the frame's load tells the tracker"
    );
    let run = Seamark::task(&[
        "--task",
        "Press Go",
        "--url",
        &task,
        "--cdp",
        &port,
        "--block-domain",
        "tracker.localhost",
    ])
    .model(&model)
    .run()
    .await;
    for _ in 0..100 {
        if person.heard("/heard/go") == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(person.heard("/heard/go"), 3, "{}", run.stderr());
    assert_eq!(
        person.heard("/heard/tracker"),
        trackers,
        "the tracker was reached"
    );
    // Also the frame's first request, sent as it loads: the frame is held
    // until its requests are checked.
    assert_eq!(
        person.heard("/heard/tracker-load"),
        loads,
        "the frame told the tracker as it loaded"
    );
    let steps =
        std::fs::read_to_string(run.path("rec").join("journal.jsonl")).expect("the journal");
    assert!(
        steps.contains("tracker.localhost is blocked"),
        "the refusal is not in the run: {steps}"
    );
    // The tab the second run kept is there, this run's is gone.
    person.was_left_alone("/guest.html", true).await;
    let tabs = person.tabs().await;
    assert_eq!(
        tabs.iter().filter(|t| t.ends_with("/guest.html")).count(),
        1,
        "{tabs:?}"
    );
    person.end().await;
}

#[tokio::test]
async fn auto_finds_the_browser_in_the_usual_folders_and_says_where_it_looked_when_none_runs() {
    let home = tempfile::tempdir().expect("a home");
    let config = home.path().join("config");
    let data = home.path().join("data");
    let env = [
        ("HOME", home.path().to_str().expect("a UTF-8 path")),
        ("XDG_CONFIG_HOME", config.to_str().expect("a UTF-8 path")),
        ("XDG_DATA_HOME", data.to_str().expect("a UTF-8 path")),
    ];
    let server = Server::start(None).await;
    let page = server.url("guest.html");
    let none = Seamark::new(&["mark", &page, "--cdp", "auto"])
        .envs(&env)
        .fails(2)
        .run()
        .await;
    assert!(
        none.stderr()
            .contains("no running browser with remote debugging on")
            && none
                .stderr()
                .contains(&config.join("chromium").display().to_string())
            && none
                .stderr()
                .contains(&data.join("seamark/browser").display().to_string()),
        "{}",
        none.stderr()
    );
    // Chromium's own folder, as the person's everyday Chromium keeps it.
    let chromium = config.join("chromium");
    std::fs::create_dir_all(&chromium).expect("the chromium folder");
    let (mut browser, _) = persons_chromium(&chromium, "about:blank").await;
    let found = Seamark::new(&["mark", &page, "--cdp", "auto"])
        .envs(&env)
        .run()
        .await;
    assert!(
        found.stdout().contains("button \"Go\""),
        "{}",
        found.stdout()
    );
    let _ = browser.kill().await;
}

#[tokio::test]
async fn a_cdp_that_points_at_nothing_is_a_usage_error_that_says_what_to_do() {
    let empty = tempfile::tempdir().expect("a folder");
    let stale = tempfile::tempdir().expect("a folder");
    // A port nobody serves: one just freed.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    std::fs::write(
        stale.path().join("DevToolsActivePort"),
        format!("{free}\n/devtools/browser/gone\n"),
    )
    .expect("a stale file");
    let port = free.to_string();
    let cases = [
        (
            empty.path().display().to_string(),
            "has no DevToolsActivePort",
        ),
        (
            empty.path().join("nowhere").display().to_string(),
            "no such folder",
        ),
        (stale.path().display().to_string(), "is stale"),
        (port.clone(), "no browser answers at http://127.0.0.1:"),
    ];
    for (cdp, says) in cases {
        Seamark::new(&["mark", "http://127.0.0.1:9/", "--cdp", &cdp])
            .fails(2)
            .run()
            .await
            .stderr_has(says);
    }
    // How to start a browser that writes the file is told.
    let run = Seamark::new(&[
        "mark",
        "http://127.0.0.1:9/",
        "--cdp",
        &empty.path().display().to_string(),
    ])
    .fails(2)
    .run()
    .await;
    run.stderr_has("seamark browser --profile");
}

#[tokio::test]
async fn seamark_browser_starts_one_to_attach_to_by_the_line_it_prints_and_ends_it_on_sigterm() {
    use tokio::io::AsyncBufReadExt;
    let profile = tempfile::tempdir().expect("a profile folder");
    let folder = profile.path().join("mine");
    let (mut cmd, _dir): (_, TestDir) = command(&[
        "browser",
        "--headless",
        "--profile",
        folder.to_str().expect("a UTF-8 path"),
    ]);
    // The person's browser is an everyday one, with its services (network
    // time, updates, the account list) on as in any Chromium: its requests
    // are its own business, not the automation browser's to account for.
    cmd.env_remove(seamark::browser::NET_LOG_ENV)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut browser = cmd.spawn().expect("start seamark browser");
    let stdout = browser.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("seamark browser says where it runs")
        .expect("its stdout")
        .expect("a line");
    let cdp = line.strip_prefix("--cdp ").expect("a --cdp line");
    assert_eq!(cdp, folder.display().to_string());
    let server = Server::start(None).await;
    let marked = Seamark::new(&["mark", &server.url("guest.html"), "--cdp", cdp])
        .run()
        .await;
    assert!(
        marked.stdout().contains("button \"Go\""),
        "{}",
        marked.stdout()
    );
    // A second one on the same folder is refused, and says how to attach.
    let again = Seamark::new(&["browser", "--headless", "--profile", cdp])
        .fails(2)
        .run()
        .await;
    again.stderr_has("--cdp");
    terminate(&mut browser, "seamark browser").await;
    // Its browser ended with it: the port it wrote answers no more.
    let gone = Seamark::new(&["mark", &server.url("guest.html"), "--cdp", cdp])
        .fails(2)
        .run()
        .await;
    gone.stderr_has("is stale");
}

#[tokio::test]
async fn an_mcp_client_works_in_a_tab_of_its_own_in_the_persons_browser() {
    let mut person = PersonsBrowser::start().await;
    let port = person.port.to_string();
    let mcp = Mcp::stdio(&["--cdp", &port]).await;
    let opened = mcp
        .call("open", json!({"url": person.server.url("guest.html")}))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let tabs = mcp.call("tabs", json!({})).await;
    assert!(!tabs.text.contains("persons-tab"), "{}", tabs.text);
    let go = crate::model_server::id_in(&opened.text, "Go");
    let acted = mcp
        .call("act", json!({"commands": format!("CLICK:{go}")}))
        .await;
    assert!(!acted.is_error, "{}", acted.text);
    for _ in 0..100 {
        if person.heard("/heard/go") == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(person.heard("/heard/go"), 1, "{}", acted.text);
    mcp.close().await;
    // The session's end closes seamark's tab, and only that.
    for _ in 0..100 {
        if !person
            .tabs()
            .await
            .iter()
            .any(|t| t.ends_with("/guest.html"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    person.was_left_alone("/guest.html", false).await;
    person.end().await;
}
