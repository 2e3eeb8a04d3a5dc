//! Runs become fixtures, through the binary as a team uses it: a run signs
//! in with a secret and sends a form with `--record-site`; the site's server
//! is stopped, and the run is done again from its `site.har` with the same
//! scripted model; the recording holds no secret and no cookie in any
//! encoding; three fixtures run offline as a batch with `--repeat 5`.

use std::path::Path;

use crate::model_server::{ModelServer, Received, Reply};
use crate::server::{Server, DESK_COOKIE, DESK_PASSWORD};
use crate::support::Workdir;

/// The secret's spec as `--secret` takes it.
fn desk_secret() -> String {
    format!("DESK_PW={DESK_PASSWORD}")
}

/// `run` of the help-desk task from `signin`, with its secret, sending
/// allowed and its check, then `more`.
fn desk_run(signin: &str, more: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--task",
        DESK_TASK,
        "--url",
        signin,
        "--secret",
        &desk_secret(),
        "--confirm",
        "allow",
        "--expect-text",
        "Request received",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(more.iter().map(|a| a.to_string()));
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// A model that signs in, sends a request for a laptop, and answers with
/// what the page says it received; and, for the other fixtures' tasks,
/// answers the page's title. Ids come from the list it is sent.
fn clerk(r: &Received) -> Reply {
    let t = r.text();
    Reply::Text(if !r.task().contains("help desk") {
        let title = crate::model_server::between(&t, "Title: ", "\n");
        format!("ANSWER:{title}\nCOMPLETE:read the title")
    } else if t.contains("Request received") {
        "ANSWER:received\nCOMPLETE:the request was sent".into()
    } else if t.contains("Send request") {
        assert!(t.contains("Signed in as Ada"), "the XHR was answered: {t}");
        format!(
            "TYPE:{}:New laptop\nSELECT:{}:High\nCLICK:{}",
            r.id_of("Subject"),
            r.id_of("Priority"),
            r.id_of("Send request")
        )
    } else {
        format!(
            "TYPE:{}:ada\nTYPE:{}:{{{{secret:DESK_PW}}}}\nCLICK:{}",
            r.id_of("Username"),
            r.id_of("Password"),
            r.id_of("Sign in")
        )
    })
}

const DESK_TASK: &str = "Sign in to the help desk as ada (password: the secret DESK_PW) and \
                         ask for a new laptop, high priority";

/// Whether `bytes` hold `needle` as it is, as a form or a URL writes it,
/// or in base64.
fn holds_in_any_encoding(bytes: &[u8], needle: &str) -> bool {
    use base64::Engine;
    let form: String = url::form_urlencoded::byte_serialize(needle.as_bytes()).collect();
    let link = needle.replace('&', "%26").replace(' ', "%20");
    let b64 = base64::engine::general_purpose::STANDARD.encode(needle);
    let text = String::from_utf8_lossy(bytes);
    [needle.to_string(), form, link, b64]
        .iter()
        .any(|n| text.contains(n.as_str()))
}

fn har_entries(path: &Path) -> Vec<serde_json::Value> {
    let har: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("the HAR")).expect("HAR is JSON");
    assert_eq!(har["log"]["version"], "1.2");
    har["log"]["entries"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_sign_in_and_form_runs_again_offline_and_three_fixtures_score_pass_k() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(clerk).await;
    let w = Workdir::new(&model);
    let signin = server.url("desk-signin.html");
    let live_args = desk_run(
        &signin,
        &["--no-skills", "--record-site", "--out", "live", "--json"],
    );
    let live = w.run(&strs(&live_args)).await;
    let v = live.json();
    assert_eq!(v["status"], "done", "{}", live.stderr());
    // The live server got the sign-in and the request.
    assert_eq!(
        server.posted("/desk/submit"),
        ["subject=New+laptop&priority=High"]
    );
    let har = w.path("live/site.har");
    assert_eq!(v["site"]["mode"], "recorded");
    assert!(
        !w.path("live/site-entries.jsonl").exists(),
        "written whole at the end"
    );
    let entries = har_entries(&har);
    assert_eq!(v["site"]["requests"], entries.len());
    let urls: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["request"]["url"].as_str())
        .collect();
    for part in [
        "desk-signin.html",
        "desk.css",
        "/desk/login",
        "desk-request.html",
        "/desk/me?_=",
        "/image.png",
        "/desk/submit",
    ] {
        assert!(urls.iter().any(|u| u.contains(part)), "{part} in {urls:#?}");
    }
    // The redirect is recorded as one, and the posted form with its
    // secret sealed.
    let login = entries
        .iter()
        .find(|e| {
            e["request"]["url"]
                .as_str()
                .is_some_and(|u| u.ends_with("/desk/login"))
        })
        .expect("the sign-in");
    assert_eq!(login["response"]["status"], 303);
    assert_eq!(
        login["request"]["postData"]["text"],
        "user=ada&pw={{secret:DESK_PW}}"
    );
    // No secret, and no cookie's value, in the recording in any encoding.
    let bytes = std::fs::read(&har).unwrap();
    let cookie_value = DESK_COOKIE.split_once('=').unwrap().1;
    for needle in [DESK_PASSWORD, cookie_value] {
        assert!(
            !holds_in_any_encoding(&bytes, needle),
            "{needle} in the HAR"
        );
    }

    // The site goes away: the run is done again from the recording alone.
    drop(server);
    let offline_args = desk_run(
        &signin,
        &[
            "--no-skills",
            "--site",
            "live/site.har",
            "--fixed-clock",
            "--out",
            "offline",
            "--json",
        ],
    );
    let replayed = w.run(&strs(&offline_args)).await;
    let r = replayed.json();
    assert_eq!(r["status"], "done", "{}", replayed.stderr());
    assert_eq!(r["site"]["mode"], "replayed");
    assert_eq!(r["site"]["unmatched"], serde_json::json!(null), "{r}");
    assert!(r["site"]["requests"].as_u64().unwrap_or(0) >= 7, "{r}");

    // It becomes a fixture, beside two more of other recorded runs.
    let fixture = w
        .run(&["fixture", "live", "--out", "fixtures", "--id", "desk"])
        .await;
    assert_eq!(fixture.code(), Some(0), "{}", fixture.stderr());
    assert!(
        fixture.stdout().contains("SECRET_DESK_PW"),
        "{}",
        fixture.stdout()
    );
    let line: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(w.path("fixtures/tasks.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(line["site"], "desk/site.har");
    assert_eq!(line["expect"][0]["text_contains"], "Request received");
    assert_eq!(line["secrets"][0], "DESK_PW=env:SECRET_DESK_PW");
    let other = Server::start(None).await;
    for (id, page, title) in [
        ("pricing", "pricing.html", "Acme Registry"),
        ("jobs", "jobs.html", "Job search"),
    ] {
        let url = other.url(page);
        let out = format!("live-{id}");
        let ran = w
            .run(&[
                "run",
                "--no-skills",
                "--task",
                &format!("Say the page's title, which holds {title}"),
                "--url",
                &url,
                "--expect-answer",
                title,
                "--record-site",
                "--out",
                &out,
            ])
            .await;
        assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
        let made = w
            .run(&["fixture", &out, "--out", "fixtures", "--id", id])
            .await;
        assert_eq!(made.code(), Some(0), "{}", made.stderr());
    }
    drop(other);
    let batch = w
        .run_with_env(
            &[
                "batch",
                "fixtures/tasks.jsonl",
                "--repeat",
                "5",
                "--concurrency",
                "2",
                // A replay reaches no one: sending is safe there.
                "--confirm",
                "allow",
                "--out",
                "suite",
            ],
            &[("SECRET_DESK_PW", DESK_PASSWORD)],
        )
        .await;
    let out = batch.stdout();
    assert_eq!(batch.code(), Some(0), "{out}\n{}", batch.stderr());
    assert!(out.contains("pass^5: 3 of 3 tasks"), "{out}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.path("suite/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["runs"], 15, "{summary}");
}

/// The name of the skill a run in `w` learned.
fn learned_skill(w: &Workdir) -> String {
    std::fs::read_dir(w.path("skills"))
        .expect("a skills folder")
        .filter_map(|e| e.ok())
        .find_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json").map(str::to_string)
        })
        .expect("a skill was learned")
}

/// Where setup.sh installs tsc, playwright's types and node's.
fn ts_dir() -> std::path::PathBuf {
    std::env::var_os("SEAMARK_TS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/seamark/ts-export")
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_exported_as_python_sends_the_same_form_with_other_values_and_as_typescript_type_checks(
) {
    let server = Server::start(None).await;
    let model = ModelServer::answering(clerk).await;
    let w = Workdir::new(&model);
    let learned = w
        .run(&strs(&desk_run(&server.url("desk-signin.html"), &[])))
        .await;
    assert_eq!(learned.code(), Some(0), "{}", learned.stderr());
    let sent = server.posted("/desk/submit");
    let skill = learned_skill(&w);
    let python = w
        .run(&[
            "skill", "export", &skill, "--lang", "python", "--out", "desk.py",
        ])
        .await;
    assert_eq!(python.code(), Some(0), "{}", python.stderr());
    let script = std::fs::read_to_string(w.path("desk.py")).unwrap();
    assert!(!script.contains(DESK_PASSWORD), "{script}");
    assert!(script.contains("secret(\"DESK_PW\")"), "{script}");
    assert!(script.contains("assert "), "the run's check: {script}");
    // The script, with other values, sends what the run sent with its own.
    let chrome = seamark::browser::find_chromium(None).expect("Chromium");
    let args = |line: &str| {
        let help = std::process::Command::new("python3")
            .arg(w.path("desk.py"))
            .arg("--help")
            .output()
            .expect("python3");
        assert!(
            String::from_utf8_lossy(&help.stdout).contains(line),
            "{}",
            String::from_utf8_lossy(&help.stdout)
        );
    };
    args("--subject");
    let ran = tokio::process::Command::new("python3")
        .arg(w.path("desk.py"))
        .args(["--subject", "Docking station", "--priority", "Low"])
        .env("CHROME_PATH", &chrome)
        .env("SECRET_DESK_PW", DESK_PASSWORD)
        .env("TMPDIR", w.path("tmp"))
        .output()
        .await
        .expect("python3 runs the export");
    // It checked the page as the run did, then stops where the model
    // answered: a TODO that fails when reached.
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(
        !ran.status.success() && said.contains("TODO: the model went on here: ANSWER"),
        "{said}\n{script}"
    );
    let after = server.posted("/desk/submit");
    assert_eq!(after.len(), sent.len() + 1, "{after:?}");
    assert_eq!(sent[0], "subject=New+laptop&priority=High");
    assert_eq!(
        after.last().map(String::as_str),
        Some("subject=Docking+station&priority=Low")
    );
    let signins = server.posted("/desk/login");
    assert_eq!(signins.len(), 2);
    assert_eq!(
        signins[0], signins[1],
        "the same sign-in, the secret from the environment"
    );

    // The same skill in TypeScript type-checks with tsc.
    let ts = w
        .run(&[
            "skill",
            "export",
            &skill,
            "--lang",
            "typescript",
            "--out",
            "desk.ts",
        ])
        .await;
    assert_eq!(ts.code(), Some(0), "{}", ts.stderr());
    if !tsc_installed() {
        return;
    }
    // Beside the packages, as a team's project holds it: modules resolve
    // from the file's folder up.
    let beside = ts_dir().join(format!("desk-{}.ts", std::process::id()));
    std::fs::copy(w.path("desk.ts"), &beside).unwrap();
    let checked = tsc(&["--noEmit", &beside.to_string_lossy()]).await;
    let _ = std::fs::remove_file(&beside);
    assert!(
        checked.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&checked.stdout),
        std::fs::read_to_string(w.path("desk.ts")).unwrap_or_default()
    );
}

/// Says what the clock page shows, and the day the prompt's `Now:` told.
fn clock_reader(r: &Received) -> Reply {
    let now = crate::model_server::between(&r.text(), "Now: ", " ");
    Reply::Text(format!(
        "ANSWER:{} | {} | told {now}\nCOMPLETE:read the clock",
        r.first_named("button", "Page time "),
        r.first_named("button", "Draws ")
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_clock_gives_the_page_and_the_model_one_time_and_the_same_draws_each_run() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(clock_reader).await;
    let w = Workdir::new(&model);
    let url = server.url("clock.html");
    let mut answers = Vec::new();
    for clock in [
        Some("2026-03-14T09:26:53Z"),
        Some("2026-03-14T09:26:53Z"),
        None,
    ] {
        let mut args = vec![
            "run",
            "--no-skills",
            "--task",
            "Read the clock",
            "--url",
            &url,
            "--json",
        ];
        if let Some(at) = clock {
            args.extend(["--fixed-clock", at]);
        }
        let ran = w.run(&args).await;
        let v = ran.json();
        assert_eq!(v["status"], "done", "{}", ran.stderr());
        answers.push(v["answer"].as_str().unwrap_or_default().to_string());
    }
    let fixed = &answers[0];
    assert!(
        fixed.starts_with("Page time 2026-03-14T09:2") && fixed.ends_with("told 2026-03-14"),
        "{answers:#?}"
    );
    let draws = |a: &str| a.split(" | ").nth(1).unwrap_or_default().to_string();
    assert_eq!(draws(&answers[0]), draws(&answers[1]), "{answers:#?}");
    assert_ne!(draws(&answers[0]), draws(&answers[2]), "{answers:#?}");
    let bad = w
        .run(&[
            "run",
            "--task",
            "t",
            "--url",
            &url,
            "--fixed-clock",
            "yesterday",
        ])
        .await;
    assert_eq!(bad.code(), Some(2));
    bad.stderr_has("--fixed-clock");
    std::fs::write(w.path("not.har"), "{\"log\": {}}").unwrap();
    let not_har = w
        .run(&["run", "--task", "t", "--url", &url, "--site", "not.har"])
        .await;
    assert_eq!(not_har.code(), Some(2));
    not_har.stderr_has("is not a HAR 1.2 recording");
    let alone = w
        .run(&["run", "--task", "t", "--url", &url, "--fixed-clock"])
        .await;
    assert_eq!(alone.code(), Some(2));
    alone.stderr_has("--site");
}

/// Types the secret into the echo form and sends it.
fn echoes_the_code(r: &Received) -> Reply {
    Reply::Text(if r.url().contains("/echo-encodings") {
        "ANSWER:sent\nCOMPLETE:sent".into()
    } else {
        format!(
            "TYPE:{}:{{{{secret:CODE}}}}\nCLICK:{}",
            r.id_of("Code"),
            r.id_of("Show")
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_holds_no_secret_cookie_or_token_in_any_encoding_it_was_echoed_in() {
    use crate::server::{ECHO_SCRIPT_COOKIE, ECHO_SESSION, ECHO_TOKEN};
    let server = Server::start(None).await;
    let model = ModelServer::answering(echoes_the_code).await;
    let w = Workdir::new(&model);
    let code = "Pa55-word:Zebra";
    let ran = w
        .run(&[
            "run",
            "--task",
            "Send the code (the secret CODE)",
            "--url",
            &server.url("echo-form.html"),
            "--secret",
            &format!("CODE={code}"),
            "--record-site",
            "--no-skills",
            "--out",
            "rec",
            "--json",
        ])
        .await;
    assert_eq!(ran.json()["status"], "done", "{}", ran.stderr());
    assert!(server.was_requested("/echo-auth"), "the page's fetch ran");
    let har = std::fs::read(w.path("rec/site.har")).expect("the recording");
    let text = String::from_utf8_lossy(&har);
    use base64::Engine;
    let hex: String = code.bytes().map(|b| format!("{b:02x}")).collect();
    let refs: String = code.chars().map(|c| format!("&#{};", c as u32)).collect();
    for (what, needle) in [
        ("the secret", code.to_string()),
        (
            "the secret in base64",
            base64::engine::general_purpose::STANDARD.encode(code),
        ),
        ("the secret in hex", hex),
        ("the secret in character references", refs),
        ("the HttpOnly cookie echoed", ECHO_SESSION.to_string()),
        (
            "the cookie a script put in a URL",
            ECHO_SCRIPT_COOKIE.to_string(),
        ),
        ("the bearer token echoed", ECHO_TOKEN.to_string()),
    ] {
        assert!(
            !holds_in_any_encoding(&har, &needle),
            "{what} ({needle}) is in the recording"
        );
    }
    assert!(text.contains("/echo-encodings"), "the page was recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_keeps_the_domain_policy_for_a_frame_the_recording_holds() {
    let server = Server::start(None).await;
    let model =
        ModelServer::answering(|_| Reply::Text("ANSWER:seen\nCOMPLETE:looked".into())).await;
    let w = Workdir::new(&model);
    let page = server.url("frames-site.html");
    let task = [
        "run",
        "--task",
        "Look at the page",
        "--url",
        &page,
        "--no-skills",
        "--json",
    ];
    let mut live = task.to_vec();
    live.extend(["--record-site", "--out", "live"]);
    assert_eq!(w.run(&live).await.json()["status"], "done");
    let framed = "Button in site frame";
    assert!(
        model.received()[0].text().contains(framed),
        "live, the frame of localhost is seen"
    );
    // Replayed with localhost refused, the recording's answer for the
    // frame is refused as the live guard refuses it.
    let mut replay = task.to_vec();
    replay.extend([
        "--site",
        "live/site.har",
        "--allow-domain",
        "127.0.0.1",
        "--out",
        "replayed",
    ]);
    let ran = w.run(&replay).await;
    assert_eq!(ran.json()["status"], "done", "{}", ran.stderr());
    let seen = model.received();
    let last = seen.last().expect("a prompt").text();
    assert!(
        !last.contains(framed),
        "the refused frame was answered: {last}"
    );
    let blocked = crate::support::blocked_targets(&w.path("replayed"));
    assert!(
        blocked.iter().any(|b| b.contains("localhost")),
        "the refusal is recorded: {blocked:?}"
    );
}

/// Fills the trip form, the size by the first letters of its option.
fn books_a_trip(r: &Received) -> Reply {
    Reply::Text(if r.url().contains("/travel/submit") {
        "ANSWER:booked\nCOMPLETE:booked".into()
    } else {
        format!(
            "TYPE:{}:Lisbon\nTYPE:{}:Economy\nTYPE:{}:https://trip.example/x\nSELECT:{}:lar\nCLICK:{}",
            r.id_of("From"),
            r.id_of("Class"),
            r.id_of("URL"),
            r.id_of("Size"),
            r.id_of("Book")
        )
    })
}

/// Whether setup.sh installed tsc; in CI it must have (a test that needs
/// it fails there without it, and is skipped, saying so, elsewhere).
fn tsc_installed() -> bool {
    let tsc = ts_dir().join("node_modules/.bin/tsc");
    if tsc.is_file() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tsc is not at {} (scripts/setup.sh installs it)",
        tsc.display()
    );
    eprintln!("skipped: tsc is not at {}", tsc.display());
    false
}

/// `tsc` of `ts_dir()`, with the options of a strict project, on `args`.
async fn tsc(args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(ts_dir().join("node_modules/.bin/tsc"))
        .args(["--strict", "--noUnusedLocals", "--target", "es2022"])
        .args(["--module", "nodenext", "--moduleResolution", "nodenext"])
        .args(["--types", "node"])
        .args(args)
        .current_dir(ts_dir())
        .output()
        .await
        .expect("tsc")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_with_fields_from_class_and_url_exports_scripts_that_run_in_both_languages() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(books_a_trip).await;
    let w = Workdir::new(&model);
    let learned = w
        .run(&[
            "run",
            "--task",
            "Book a trip from Lisbon in Economy, link https://trip.example/x, size Large",
            "--url",
            &server.url("travel-form.html"),
            "--json",
        ])
        .await;
    assert_eq!(learned.json()["status"], "done", "{}", learned.stderr());
    assert_eq!(
        server.posted("/travel/submit"),
        ["from=Lisbon&class=Economy&url=https%3A%2F%2Ftrip.example%2Fx&size=Large"],
        "the prefix chose Large"
    );
    let skill = learned_skill(&w);
    let chrome = seamark::browser::find_chromium(None).expect("Chromium");
    let other = [
        "--from_",
        "Porto",
        "--class_",
        "Business",
        "--url_",
        "https://trip.example/y",
        "--size",
        "Small",
    ];
    let wanted = "from=Porto&class=Business&url=https%3A%2F%2Ftrip.example%2Fy&size=Small";
    for (lang, file) in [("python", "trip.py"), ("typescript", "trip.ts")] {
        let out = w
            .run(&["skill", "export", &skill, "--lang", lang, "--out", file])
            .await;
        assert_eq!(out.code(), Some(0), "{}", out.stderr());
    }
    let script = std::fs::read_to_string(w.path("trip.py")).unwrap();
    assert!(script.contains("choose("), "{script}");
    assert!(
        !script.contains("\"lar\""),
        "the prefix, not the option: {script}"
    );
    let ran = tokio::process::Command::new("python3")
        .arg(w.path("trip.py"))
        .args(other)
        .env("CHROME_PATH", &chrome)
        .env("TMPDIR", w.path("tmp"))
        .output()
        .await
        .expect("python3 runs the export");
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(
        said.contains("TODO: the model went on here"),
        "{said}\n{script}"
    );
    assert_eq!(
        server.posted("/travel/submit").last().map(String::as_str),
        Some(wanted),
        "{said}"
    );
    if !tsc_installed() {
        return;
    }
    // Built beside the packages, as a team's project holds it, and run.
    let own = ts_dir().join(format!("trip-{}", std::process::id()));
    std::fs::create_dir_all(&own).unwrap();
    std::fs::copy(w.path("trip.ts"), own.join("trip.ts")).unwrap();
    let own_str = own.to_string_lossy().into_owned();
    let built = tsc(&["--outDir", &own_str, &format!("{own_str}/trip.ts")]).await;
    assert!(
        built.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&built.stdout),
        std::fs::read_to_string(w.path("trip.ts")).unwrap_or_default()
    );
    let ran = tokio::process::Command::new("node")
        .arg(own.join("trip.js"))
        .args(other)
        .env("CHROME_PATH", &chrome)
        .env("TMPDIR", w.path("tmp"))
        .current_dir(ts_dir())
        .output()
        .await
        .expect("node runs the export");
    let _ = std::fs::remove_dir_all(&own);
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(said.contains("TODO: the model went on here"), "{said}");
    let posted = server.posted("/travel/submit");
    assert_eq!(posted.len(), 3, "{posted:?}\n{said}");
    assert_eq!(posted.last().map(String::as_str), Some(wanted), "{said}");
}
