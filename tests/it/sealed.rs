//! `seamark serve` as hostile ground: a session is a guest on the worker
//! (no program, file or variable of the worker's but those kept for
//! sessions), a web page on a rebound name or a file a site downloaded
//! cannot reach the API, slow clients cannot hold the server down, a
//! database that is down is told at once, no secret answer is on a command
//! line, and the terminal's client reads bounded answers.

use std::time::Duration;

use seamark::coworker::SessionState;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::coworker::{submit, wait_for, Served};
use crate::model_server::{ModelServer, Received, Reply};
use crate::server::Server;
use crate::support::{Fixture, Seamark, Workdir};

/// Types the secret the task's last word names into the city box, then
/// reads the weather: the site's log shows what was typed.
fn types_the_named_secret(r: &Received) -> Reply {
    Reply::Text(if r.url().contains("/weather.html") {
        "ANSWER:looked up\nCOMPLETE:looked up".into()
    } else {
        let name = r.task().rsplit(' ').next().unwrap_or_default().to_string();
        format!(
            "TYPE:{}:{{{{secret:{name}}}}}\nCLICK:{}",
            r.id_of("City"),
            r.id_of("Look up")
        )
    })
}

/// A POST of a session to the API, with these headers; its status and
/// error text.
async fn post_session(base: &str, headers: &[(&str, &str)], body: Value) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/api/sessions"))
        .json(&body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let reply = request.send().await.expect("a reply");
    let status = reply.status().as_u16();
    (status, reply.text().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_names_no_program_file_or_variable_of_the_worker_but_those_kept_for_it() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(types_the_named_secret).await;
    let w = Workdir::new(&model);
    std::fs::create_dir_all(w.path("seamark-serve/secrets")).unwrap();
    std::fs::write(w.path("seamark-serve/secrets/town.txt"), "Porto-93\n").unwrap();
    let served = Served::serve_with_env(
        &w,
        &["--workers", "2"],
        &[
            ("SEAMARK_SECRET_CITY", "Lisbon-71"),
            ("WORKER_ONLY_KEY", "sk-worker-only"),
        ],
    )
    .await;
    let url = sites.url("lookup.html");
    for (option, value, says) in [
        ("chrome", json!("/bin/sh"), "the worker's own program"),
        ("profile", json!("/root/.ssh"), "worker's disk"),
        ("site", json!("/etc/passwd"), "worker's disk"),
        (
            "secret",
            json!("k=env:WORKER_ONLY_KEY"),
            "not a variable kept for sessions",
        ),
        ("secret", json!("pw=@/etc/shadow"), "not a plain file name"),
        (
            "secret",
            json!("pw=@../../sessions.db"),
            "not a plain file name",
        ),
    ] {
        let (status, text) = post_session(
            &served.base,
            &[],
            json!({ "task": "x", "url": url, option: value }),
        )
        .await;
        assert_eq!(status, 400, "{option}={value}: {text}");
        assert!(text.contains(says), "{option}={value}: {text}");
    }
    // What the operator kept for sessions reaches the page; a task that
    // starts with a dash is a task, not a flag.
    let by_env = submit(
        &served,
        "-1 degrees? Look up the weather of city",
        &url,
        json!({ "secret": "city=env:SEAMARK_SECRET_CITY", "no_skills": true }),
    )
    .await;
    let by_file = submit(
        &served,
        "Look up the weather of town",
        &url,
        json!({ "secret": ["town=@town.txt"], "no_skills": true }),
    )
    .await;
    for id in [&by_env, &by_file] {
        wait_for(&served, id, SessionState::Done).await;
    }
    for city in ["Lisbon-71", "Porto-93"] {
        assert!(
            sites.was_requested(&format!("/weather.html?city={city}")),
            "{city} was typed"
        );
    }
    served.terminate().await;
}

/// Asks for a PIN, types the secret answer, reads the weather.
fn asks_the_pin(r: &Received) -> Reply {
    let text = r.text();
    Reply::Text(if r.url().contains("/weather.html") {
        "ANSWER:looked up\nCOMPLETE:looked up".into()
    } else if let Some(rest) = text.split("with a secret: type it as ").nth(1) {
        let placeholder = rest.split_whitespace().next().unwrap_or_default();
        format!(
            "TYPE:{}:{placeholder}\nCLICK:{}",
            r.id_of("City"),
            r.id_of("Look up")
        )
    } else {
        "ASK:Which PIN?".into()
    })
}

/// Every process's command line that holds `needle`, and whether a run a
/// worker started was seen at all.
fn command_lines_with(needle: &str) -> (Vec<String>, bool) {
    let mut found = Vec::new();
    let mut seen_run = false;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(line) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&line).replace('\0', " ");
        seen_run |= line.contains("--args-on-stdin");
        if line.contains(needle) {
            found.push(line);
        }
    }
    (found, seen_run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_answer_is_on_no_command_line_while_its_run_goes_on() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(asks_the_pin).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "1"]).await;
    let id = submit(
        &served,
        "Look up the weather with the PIN",
        &sites.url("lookup.html"),
        json!({ "no_skills": true }),
    )
    .await;
    wait_for(&served, &id, SessionState::Waiting).await;
    // The run would refuse these: refused now, with its reason.
    for (answer, says) in [("!12", "shorter than"), ("a\u{0}b", "NUL")] {
        let refused = served.client().answer(&id, answer).await.expect_err(answer);
        assert!(refused.to_string().contains(says), "{answer:?}: {refused}");
    }
    let pin = "Zq-5581-pin";
    served
        .client()
        .answer(&id, &format!("!{pin}"))
        .await
        .expect("answered");
    let mut runs_seen = 0;
    for _ in 0..3000 {
        let (holding, seen_run) = command_lines_with(pin);
        assert_eq!(holding, Vec::<String>::new(), "the PIN on a command line");
        runs_seen += usize::from(seen_run);
        let s = served.client().get(&id).await.expect("the session");
        if s.status.ended() {
            assert_eq!(s.status, SessionState::Done, "{s:#?}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(runs_seen > 0, "the resumed run was never seen running");
    assert!(
        sites.was_requested(&format!("/weather.html?city={pin}")),
        "the PIN was typed"
    );
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_a_rebound_name_or_another_origin_cannot_reach_the_api() {
    let model = ModelServer::answering(crate::coworker::titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "0", "--allow-host", "seamark.lan"]).await;
    let port = served
        .base
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let http = reqwest::Client::new();
    let body = json!({ "task": "x", "url": "http://a.test/" });
    let rebound = format!("rebound.evil.test:{port}");
    for path in ["/", "/api/sessions", "/sessions/x"] {
        let reply = http
            .get(format!("{}{path}", served.base))
            .header("host", &rebound)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status().as_u16(), 421, "GET {path} as {rebound}");
    }
    let own = served.base.clone();
    for (headers, status) in [
        (vec![("host", rebound.as_str())], 421),
        (
            vec![
                ("host", rebound.as_str()),
                ("origin", "http://rebound.evil.test"),
            ],
            421,
        ),
        (vec![("origin", "http://evil.test")], 403),
        (vec![("origin", "null")], 403),
        (
            vec![("origin", own.as_str()), ("sec-fetch-site", "cross-site")],
            403,
        ),
        (vec![("origin", own.as_str())], 201),
        (
            vec![("host", "seamark.lan"), ("origin", "http://seamark.lan")],
            201,
        ),
        (vec![], 201),
    ] {
        let (got, text) = post_session(&served.base, &headers, body.clone()).await;
        assert_eq!(got, status, "POST with {headers:?}: {text}");
    }
    // Every page of the server's runs no script and cannot be framed.
    let page = http.get(format!("{}/", served.base)).send().await.unwrap();
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("default-src 'none'"), "{policy}");
    assert!(!policy.contains("script-src"), "{policy}");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    served.terminate().await;

    // A token link leads to a path of the server's own, its query kept.
    let served = Served::serve(&w, &["--workers", "0", "--token", "t0ken-1"]).await;
    let no_follow = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let reply = no_follow
        .get(format!(
            "{}//evil.example/?token=t0ken-1&state=done",
            served.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 303);
    assert_eq!(reply.headers()["location"], "/evil.example/?state=done");
    served.terminate().await;
}

/// Clicks the link to the notes, then says the notes were saved.
fn saves_the_notes(r: &Received) -> Reply {
    Reply::Text(if r.text().contains("notes.html") {
        "ANSWER:saved\nCOMPLETE:the notes are saved".into()
    } else {
        format!("CLICK:{}", r.id_of("Get the notes"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_a_site_downloaded_opened_from_the_report_cannot_reach_the_api() {
    let sites = Server::start(None).await;
    let model = ModelServer::answering(saves_the_notes).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "1"]).await;
    let id = submit(
        &served,
        "Save the meeting notes",
        &sites.url("evil-download.html"),
        json!({ "no_skills": true }),
    )
    .await;
    let done = wait_for(&served, &id, SessionState::Done).await;
    let run = std::path::Path::new(&done.run_dir);
    assert!(run.join("downloads/notes.html").is_file(), "downloaded");
    // Links out of the run directory are not followed.
    std::os::unix::fs::symlink("/etc/passwd", run.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink("/etc", run.join("etc")).unwrap();
    let http = reqwest::Client::new();
    for path in ["leak.txt", "etc/passwd"] {
        let reply = http
            .get(format!("{}/sessions/{id}/run/{path}", served.base))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status().as_u16(), 404, "{path}");
    }
    // The download is an attachment under a policy that runs nothing.
    let file = format!("{}/sessions/{id}/run/downloads/notes.html", served.base);
    let reply = http.get(&file).send().await.unwrap();
    let header = |name: &str| reply.headers()[name].to_str().unwrap().to_string();
    assert!(header("content-disposition").starts_with("attachment"));
    assert_eq!(header("content-type"), "application/octet-stream");
    assert!(header("content-security-policy").starts_with("sandbox"));

    // In a real browser: the report shows its pictures, but its script
    // reaches nothing of the server's; the download opened from it runs
    // nothing.
    let fx = Fixture::open("empty.html").await;
    fx.goto(&format!("{}/sessions/{id}/run/report.html", served.base))
        .await;
    let pictures = fx
        .eval(
            "Promise.all([...document.images].map(i => i.decode().then(() => i.naturalWidth, \
             () => 0))).then(ws => ws.filter(w => w > 0).length)",
        )
        .await;
    assert!(
        pictures.as_u64().unwrap_or(0) > 0,
        "the report's pictures: {pictures}"
    );
    let read = fx
        .eval("fetch('/api/sessions').then(r => r.text(), e => 'refused: ' + e)")
        .await;
    assert!(
        read.as_str().unwrap_or_default().starts_with("refused"),
        "the report read the API: {read}"
    );
    let link = fx
        .eval("[...document.links].map(a => a.href).find(h => h.includes('downloads/')) || ''")
        .await;
    let link = link.as_str().unwrap_or_default().to_string();
    assert!(
        link.contains("/downloads/notes"),
        "the report links the download: {link}"
    );
    let _ = fx.session.navigate(&link, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!sites.was_requested("/exfil"), "the downloaded page ran");
    let sessions = served.client().list(None).await.expect("the sessions");
    assert_eq!(sessions.len(), 1, "a session was planted: {sessions:#?}");
    fx.close().await;
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_cut_off_and_the_server_still_answers() {
    let model = ModelServer::answering(crate::coworker::titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "0"]).await;
    let address = served.base.trim_start_matches("http://").to_string();
    // More slow clients than the server serves at once, each sending its
    // request's head a line a second, for at most 40 s.
    let slow: Vec<_> = (0..300)
        .map(|n| {
            let address = address.clone();
            tokio::spawn(async move {
                let mut stream = tokio::net::TcpStream::connect(&address).await.ok()?;
                stream.write_all(b"GET / HTTP/1.1\r\n").await.ok()?;
                for _ in 0..40 {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    let line = format!("x-slow-{n}: still sending\r\n");
                    if stream.write_all(line.as_bytes()).await.is_err() {
                        return Some(true);
                    }
                    let mut byte = [0u8; 1];
                    let read =
                        tokio::time::timeout(Duration::from_millis(1), stream.read(&mut byte));
                    if let Ok(Ok(0) | Err(_)) = read.await {
                        return Some(true);
                    }
                }
                Some(false)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let reply = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
        .get(format!("{}/api/sessions", served.base))
        .send()
        .await
        .expect("the server answers beside slow clients");
    assert_eq!(reply.status().as_u16(), 200);
    let mut cut = 0;
    for client in slow {
        if client.await.unwrap() == Some(true) {
            cut += 1;
        }
    }
    assert_eq!(cut, 300, "slow clients the server cut off");
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_is_down_is_a_503_not_a_wait() {
    let pg = crate::postgres::Postgres::start().await;
    let model = ModelServer::answering(crate::coworker::titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "0", "--db", &pg.url]).await;
    drop(pg);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    for path in ["/", "/api/sessions"] {
        let reply = http
            .get(format!("{}{path}", served.base))
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        assert_eq!(reply.status().as_u16(), 503, "GET {path}");
        assert_eq!(reply.headers()["retry-after"], "5");
        assert!(reply.text().await.unwrap().contains("session database"));
    }
    served.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_password_is_never_printed() {
    let run = Seamark::new(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--db",
        "postgres://ada:pw-in-user-91@127.0.0.1:1/db?password=pw-in-query-92",
    ])
    .fails(2)
    .run()
    .await;
    let said = run.stderr();
    assert!(said.contains("--db"), "{said}");
    assert!(
        !said.contains("pw-in-user-91") && !said.contains("pw-in-query-92"),
        "{said}"
    );
    Seamark::new(&["serve", "--notify", "not-a-url"])
        .fails(2)
        .run()
        .await
        .stderr_has("--notify");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_client_keeps_ids_in_their_path_and_answers_bounded() {
    // An id is one segment of the path, whatever it holds.
    let model = ModelServer::answering(crate::coworker::titles).await;
    let w = Workdir::new(&model);
    let served = Served::serve(&w, &["--workers", "0"]).await;
    let shown = Seamark::new(&[
        "sessions",
        "--server",
        &served.base,
        "show",
        "../../admin?x=1#f",
    ])
    .fails(1)
    .run()
    .await;
    shown.stderr_has("no session ../../admin?x=1#f");
    Seamark::new(&["sessions", "--server", &served.base, "show", ".."])
        .fails(1)
        .run()
        .await
        .stderr_has("not a session's id");
    served.terminate().await;
    // A reply that is not the API's is told in one line, with its size.
    let sites = Server::start(None).await;
    let big = Seamark::new(&["sessions", "--server", &sites.url("not-an-api"), "list"])
        .fails(1)
        .run()
        .await;
    big.stderr_has("3000000 bytes: aaaa");
    assert!(
        big.stderr().len() < 1_000,
        "{} bytes on stderr",
        big.stderr().len()
    );
    for server in ["not-a-url", "file:///etc/passwd"] {
        Seamark::new(&["sessions", "--server", server, "list"])
            .fails(2)
            .run()
            .await
            .stderr_has("--server");
    }
}
