//! Files as a person lets an agent use them, through the binary: UPLOAD
//! attaches only files of the folder given with `--files` (the test server
//! parses the multipart form it receives), downloads are files of the run
//! named in every result, and the model sees the tabs and switches them.

use crate::support::Seamark;
use std::path::Path;

use crate::model_server::{reply, say, ModelServer, Received};
use crate::server::Server;
use crate::support::Run;

/// The files the server received: (field, name, bytes as hex).
fn received_files(server: &Server) -> Vec<(String, String, String)> {
    server
        .log
        .lock()
        .unwrap()
        .iter()
        .filter_map(|l| l.strip_prefix("FILE "))
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let mut next = || parts.next().unwrap_or_default().to_string();
            (next(), next(), next())
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The feedback line of a prompt: what the model was told of its last commands.
fn feedback(r: &Received) -> String {
    let text = r.text();
    text.split_once("# Result of your last answer")
        .map(|(_, rest)| rest.split("\n# ").next().unwrap_or_default().to_string())
        .unwrap_or(text)
}

/// The first file the prompt lists for UPLOAD whose name starts with
/// `prefix` ("missing" when none).
fn listed_file(r: &Received, prefix: &str) -> String {
    let text = r.text();
    text.lines()
        .find_map(|l| l.split_once("files you may UPLOAD"))
        .and_then(|(_, files)| {
            files
                // Names are quoted: `"cv.bin" (6 B), "a.png" (11 B)`.
                .split('"')
                .find(|w| w.starts_with(prefix))
                .map(str::to_string)
        })
        .unwrap_or_else(|| "missing".into())
}

/// A folder of files to upload, and a secret beside it (outside it) that a
/// link inside it points to.
fn folder_with_a_link_out() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("mine")).unwrap();
    std::fs::write(root.path().join("secret.txt"), "the person's secret").unwrap();
    std::fs::write(
        root.path().join("mine/cv.bin"),
        [0u8, 159, 146, 150, 10, 255],
    )
    .unwrap();
    std::fs::write(root.path().join("mine/a.png"), b"first photo").unwrap();
    std::fs::write(root.path().join("mine/b.png"), b"second photo").unwrap();
    std::os::unix::fs::symlink(
        root.path().join("secret.txt"),
        root.path().join("mine/link.txt"),
    )
    .unwrap();
    root
}

async fn run_upload(
    server: &Server,
    script: Vec<crate::model_server::Turn>,
    files: Option<&Path>,
) -> (Run, Vec<Received>) {
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("upload.html");
    let mut args = vec![
        "--task",
        "Send my CV",
        "--url",
        &url,
        "--max-failures",
        "9",
        "--confirm",
        "allow",
    ];
    let dir;
    if let Some(f) = files {
        dir = f.display().to_string();
        args.extend(["--files", &dir]);
    }
    let run = Seamark::task(&args).model(&model).output().await;
    (run, model.received())
}

/// Issue 45: `UPLOAD:1:/etc/passwd` attached the file and the page could
/// read it. A path out of the folder, absolute, with `..` or through a
/// link, now attaches nothing, and the model is told why.
#[tokio::test]
async fn a_model_upload_of_a_file_outside_the_folder_attaches_nothing() {
    let server = Server::start(None).await;
    let root = folder_with_a_link_out();
    let tries = ["/etc/passwd", "../secret.txt", "link.txt"];
    let mut script: Vec<_> = tries
        .iter()
        .map(|path| {
            let path = path.to_string();
            reply(move |r| format!("UPLOAD:{}:{path}", r.id_of("Your CV")))
        })
        .collect();
    script.push(reply(|r| format!("CLICK:{}", r.id_of("Send"))));
    script.push(say("COMPLETE:sent"));
    let (run, prompts) = run_upload(&server, script, Some(&root.path().join("mine"))).await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    for (i, why) in [
        "/etc/passwd is outside the folder",
        "../secret.txt is outside the folder",
        "link.txt is a link that leads outside the folder",
    ]
    .iter()
    .enumerate()
    {
        let told = feedback(&prompts[i + 1]);
        assert!(
            told.contains(why) && told.contains("--files"),
            "step {}: {told}",
            i + 2
        );
        assert!(told.contains("nothing attached"), "{told}");
    }
    // The form went out with no file in it, and nothing of the secret did.
    let got = received_files(&server);
    assert_eq!(
        got,
        vec![
            ("doc".into(), String::new(), String::new()),
            ("photos".into(), String::new(), String::new())
        ]
    );
    let posted = server.log.lock().unwrap().join("\n");
    assert!(!posted.contains("root:x:0:0") && !posted.contains("the person's secret"));
    let journal = std::fs::read_to_string(run.path("rec/journal.jsonl")).unwrap();
    assert!(!journal.contains("root:x:0:0") && !journal.contains("the person's secret"));
    // The skill learned from the run keeps no path out of the folder.
    let skill = std::fs::read_to_string(run.path("skills/send-my-cv.json")).unwrap_or_default();
    assert!(
        !skill.contains("passwd") && !skill.contains("secret.txt") && !skill.contains("link.txt"),
        "{skill}"
    );
}

#[tokio::test]
async fn without_files_every_upload_is_refused_and_the_model_is_told_before_it_tries() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| format!("UPLOAD:{}:/etc/passwd", r.id_of("Your CV"))),
        say("STOP:no file to send"),
    ];
    let (run, prompts) = run_upload(&server, script, None).await;
    assert_eq!(run.json()["success"], false, "{}", run.stderr());
    assert!(
        prompts[0]
            .text()
            .contains("the person gave no folder for uploads"),
        "{}",
        prompts[0].text()
    );
    let told = feedback(&prompts[1]);
    assert!(
        told.contains("none was given (seamark run --files DIR)"),
        "{told}"
    );
}

#[tokio::test]
async fn a_file_from_the_folder_reaches_the_server_with_its_exact_bytes() {
    let server = Server::start(None).await;
    let root = folder_with_a_link_out();
    // The model takes the names from the files it is shown, as a model would.
    let script = vec![
        reply(|r| format!("UPLOAD:{}:{}", r.id_of("Your CV"), listed_file(r, "cv"))),
        reply(|r| {
            let (a, b) = (listed_file(r, "a."), listed_file(r, "b."));
            format!("UPLOAD:{}:{a}|{b}", r.id_of("Photos"))
        }),
        reply(|r| format!("CLICK:{}", r.id_of("Send"))),
        say("COMPLETE:sent"),
    ];
    let (run, prompts) = run_upload(&server, script, Some(&root.path().join("mine"))).await;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let listed = prompts[0].text();
    assert!(
        listed.contains(r#""a.png" (11 B), "b.png" (12 B), "cv.bin" (6 B)"#)
            && !listed.contains("link.txt"),
        "{listed}"
    );
    let mut got = received_files(&server);
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "doc".into(),
                "cv.bin".into(),
                hex(&[0, 159, 146, 150, 10, 255])
            ),
            ("photos".into(), "a.png".into(), hex(b"first photo")),
            ("photos".into(), "b.png".into(), hex(b"second photo")),
        ]
    );
    // The journal names the file, its size and hash, never its bytes.
    let journal = std::fs::read_to_string(run.path("rec/journal.jsonl")).unwrap();
    assert!(
        journal.contains("attached \\\"cv.bin\\\" (6 B, sha256 "),
        "{journal}"
    );
    assert!(!journal.contains("first photo"));
    // A skill keeps the file's name in the folder, not where the folder is.
    let skill = std::fs::read_to_string(run.path("skills/send-my-cv.json")).unwrap();
    assert!(
        skill.contains("cv.bin") && !skill.contains(&root.path().display().to_string()),
        "{skill}"
    );
}

#[tokio::test]
async fn a_download_is_a_result_of_the_run_named_everywhere_and_read_by_the_model() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| format!("CLICK:{}", r.id_of("Get the report"))),
        say("READ:download:report.csv"),
        reply(|r| format!("CLICK:{}", r.id_of("Odd name"))),
        reply(|r| format!("CLICK:{}", r.id_of("Hidden name"))),
        reply(|r| format!("CLICK:{}", r.id_of("Big file"))),
        say("COMPLETE:downloaded the reports"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("downloads.html");
    let run = Seamark::task(&[
        "--task",
        "Get the reports",
        "--url",
        &url,
        "--max-download-mb",
        "1",
    ])
    .model(&model)
    .run()
    .await;
    let prompts = model.received();
    let csv = crate::server::REPORT_CSV;
    // The model is told what it got, and reads its text.
    let told = feedback(&prompts[1]);
    assert!(
        told.contains(&format!(
            "downloaded \"report.csv\" ({} B, text/csv)",
            csv.len()
        )),
        "{told}"
    );
    assert!(
        prompts[2].text().contains("north,36"),
        "{}",
        prompts[2].text()
    );
    // A name out of the folder and a hidden one are made safe; one over
    // the cap is stopped, removed and told.
    let told = feedback(&prompts[5]);
    assert!(told.contains("passed the download size cap"), "{told}");
    let dir = run.path("rec/downloads");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // Chromium suggests `_.._x` for `../../x`: either way, no way out.
    let odd = names
        .iter()
        .find(|n| n.ends_with('x'))
        .cloned()
        .unwrap_or_default();
    assert!(!odd.contains('/') && !odd.starts_with('.'), "{odd}");
    assert_eq!(names, [odd.as_str(), "bashrc", "report.csv"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("report.csv")).unwrap(),
        csv
    );
    assert!(!run.path("x").exists() && !run.path("rec/x").exists());
    // Named in the result, the journal and the report.
    let result = run.json();
    let listed: Vec<&str> = result["downloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["report.csv", odd.as_str(), "bashrc"]);
    let first = &result["downloads"][0];
    assert_eq!(first["size"], csv.len());
    assert_eq!(first["mime"], "text/csv");
    assert!(first["url"]
        .as_str()
        .unwrap()
        .ends_with("/attachment?name=report.csv"));
    assert_eq!(first["sha256"].as_str().unwrap().len(), 64);
    let journal = std::fs::read_to_string(run.path("rec/journal.jsonl")).unwrap();
    assert_eq!(
        journal.matches("\"kind\":\"download\"").count(),
        3,
        "{journal}"
    );
    let report = std::fs::read_to_string(run.path("rec/report.html")).unwrap();
    assert!(
        report.contains("href=\"downloads/report%2Ecsv\""),
        "the report links the file"
    );
}

#[tokio::test]
async fn two_tabs_are_listed_tab_1_brings_the_first_back_and_tab_close_closes_the_second() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| format!("CLICK:{}", r.id_of("Open results in a new tab"))),
        say("TAB:1"),
        say("TAB:2"),
        say("TAB:close"),
        say("COMPLETE:looked at both tabs"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("tabs.html");
    let run = Seamark::task(&["--task", "Compare the tabs", "--url", &url])
        .model(&model)
        .run()
        .await;
    let prompts = model.received();
    let tabs_line = |r: &Received| {
        r.text()
            .lines()
            .find(|l| l.starts_with("Notes:") && l.contains("open tabs"))
            .unwrap_or_default()
            .to_string()
    };
    // One tab: no list. Two: both, numbered in the order they opened.
    assert_eq!(tabs_line(&prompts[0]), "");
    let two = tabs_line(&prompts[1]);
    assert!(
        two.contains("1. \"Tabs\" · ") && two.contains("2. ") && two.contains("from=tab (shown)"),
        "{two}"
    );
    // TAB:1 shows the first again.
    assert!(
        prompts[2].url().ends_with("/tabs.html"),
        "{}",
        prompts[2].url()
    );
    assert!(tabs_line(&prompts[2]).contains("tabs.html (shown)"));
    assert!(
        feedback(&prompts[2]).contains("switched to tab 1"),
        "{}",
        feedback(&prompts[2])
    );
    // TAB:2 then TAB:close: the second is gone, the first is shown.
    assert!(
        prompts[3].url().contains("from=tab"),
        "{}",
        prompts[3].url()
    );
    let closed = feedback(&prompts[4]);
    assert!(
        closed.contains("closed the tab of") && closed.contains("tab 1 is shown"),
        "{closed}"
    );
    assert!(prompts[4].url().ends_with("/tabs.html"));
    assert_eq!(tabs_line(&prompts[4]), "", "one tab is left");
    // The report shows each switch.
    let report = std::fs::read_to_string(run.path("rec/report.html")).unwrap();
    assert!(report.contains("switched to tab 1") && report.contains("closed the tab of"));
}

/// A zone that takes files dropped on it, with no file input: UPLOAD onto
/// it drops the file as from a file manager, and the page's drop handler
/// sends it; onto an element that takes no drop, nothing is attached and
/// the browser does not open the file.
#[tokio::test]
async fn upload_onto_a_drop_zone_drops_the_file_and_elsewhere_attaches_nothing() {
    let server = Server::start(None).await;
    let root = folder_with_a_link_out();
    let script = vec![
        reply(|r| {
            format!(
                "UPLOAD:{}:{}",
                r.id_of("Not a drop zone"),
                listed_file(r, "cv")
            )
        }),
        reply(|r| {
            format!(
                "UPLOAD:{}:{}",
                r.id_of("Drop your CV here"),
                listed_file(r, "cv")
            )
        }),
        say("COMPLETE:dropped"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("dropzone.html");
    let files = root.path().join("mine").display().to_string();
    Seamark::task(&["--task", "Send my CV", "--url", &url, "--files", &files])
        .model(&model)
        .run()
        .await;
    let prompts = model.received();
    let refused = feedback(&prompts[1]);
    assert!(
        refused.contains("is neither a file input nor a place that takes files"),
        "{refused}"
    );
    // The page stayed where it was: the file was not opened.
    assert!(prompts[1].text().contains("dropzone.html"));
    let dropped = feedback(&prompts[2]);
    assert!(dropped.contains("dropped \"cv.bin\" (6 B"), "{dropped}");
    assert_eq!(
        received_files(&server),
        vec![(
            "dropped".into(),
            "cv.bin".into(),
            hex(&[0, 159, 146, 150, 10, 255])
        )]
    );
}
