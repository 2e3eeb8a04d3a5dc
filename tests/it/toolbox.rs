//! seamark in a person's toolbox: `doctor` says what a run needs and what
//! to do, the shells accept the completion scripts, and `man` renders.

use std::path::Path;

use serde_json::Value;

use crate::model_server::{say, status, ModelServer};
use crate::server::Server;
use crate::support::Seamark;

/// The checks `doctor --json` printed, by name: (health, found, todo).
fn checks(stdout: &str) -> Vec<(String, String, String, String)> {
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("check"), s("health"), s("found"), s("todo"))
        })
        .collect()
}

fn health<'a>(
    all: &'a [(String, String, String, String)],
    check: &str,
) -> &'a (String, String, String, String) {
    all.iter()
        .find(|c| c.0 == check)
        .unwrap_or_else(|| panic!("no {check} check in {all:?}"))
}

#[tokio::test]
async fn doctor_finds_everything_a_run_needs_on_this_machine() {
    let model = ModelServer::start(vec![say("OK")], || say("OK")).await;
    let base = format!("{}/v1", model.base);
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().to_string_lossy().into_owned();
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("SEAMARK_MODEL", "openai/scripted"),
        ("HOME", home_path.as_str()),
        ("XDG_DATA_HOME", ""),
    ];
    let run = Seamark::new(&["doctor", "--json", "--fix"])
        .envs(&env)
        .run()
        .await;
    let all = checks(&run.stdout());
    let names: Vec<&str> = all.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        names,
        ["chromium", "sandbox", "browser", "font", "model", "profile", "cdp", "disk"]
    );
    for (check, health, found, _) in &all {
        // The sandbox is off as root (CI's containers), and says so.
        let as_root = check == "sandbox" && found.contains("as root");
        assert!(health == "ok" || as_root, "{check}: {health}: {found}");
    }
    assert!(health(&all, "chromium").2.contains("Chromium 1"), "{all:?}");
    assert!(
        health(&all, "model").2.contains("openai/scripted answered"),
        "{all:?}"
    );
    // The model was asked once, with a tiny request and no image.
    let asked = model.received();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].images().is_empty());
    // --fix made the profile folder and the runs folder, and nothing else.
    assert!(home.path().join(".local/share/seamark/browser").is_dir());
    assert!(run.path("runs").is_dir());

    // The same, for a person: a line a check, and the verdict.
    let text = Seamark::new(&["doctor", "--offline"])
        .envs(&env)
        .run()
        .await;
    assert!(
        text.stdout().contains("seamark is ready"),
        "{}",
        text.stdout()
    );
    assert!(
        text.stdout().contains("skipped  model"),
        "{}",
        text.stdout()
    );
}

#[tokio::test]
async fn doctor_says_what_to_do_without_chromium_and_with_a_refused_key() {
    let model = ModelServer::start(vec![status(401, None)], || status(401, None)).await;
    let base = format!("{}/v1", model.base);
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-refused-0000"),
        ("SEAMARK_CHROME", "/nonexistent/chromium"),
    ];
    let run = Seamark::new(&["doctor", "--json", "--model", "openai/gpt-4o"])
        .envs(&env)
        .fails(1)
        .run()
        .await;
    let all = checks(&run.stdout());
    let chromium = health(&all, "chromium");
    assert_eq!(chromium.1, "failed");
    assert!(chromium.2.contains("/nonexistent/chromium"), "{chromium:?}");
    assert!(
        chromium.3.contains("apt-get install chromium"),
        "{chromium:?}"
    );
    assert_eq!(health(&all, "browser").1, "skipped");
    let key = health(&all, "model");
    assert_eq!(key.1, "failed", "{key:?}");
    assert!(
        key.2.contains("HTTP 401") && key.3.contains("OPENAI_API_KEY"),
        "{key:?}"
    );
    assert!(
        !run.stdout().contains("sk-refused"),
        "the key is never printed"
    );
    let v: Value = serde_json::from_str(run.stdout().trim()).unwrap();
    assert_eq!(v["failed"], 2, "{v}");

    // A browser to attach to that is not there fails too.
    let cdp = Seamark::new(&["doctor", "--offline", "--cdp", "127.0.0.1:9"])
        .fails(1)
        .run()
        .await;
    assert!(cdp.stdout().contains("FAILED  cdp"), "{}", cdp.stdout());
}

/// The probe: doctor read and printed a 1 GB `--version` whole, left a
/// `--chrome` wrapper's child running past its bound, and called a
/// websocket that was no browser's "ok cdp".
#[tokio::test]
async fn doctor_reads_a_bounded_version_ends_what_it_starts_and_wants_a_browser_to_answer() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let chrome = dir.path().join("chrome");
    std::fs::write(
        &chrome,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] || exit 1\nsleep 300 &\necho $! > {}\n\
             head -c 1000000000 /dev/zero | tr '\\0' a\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&chrome, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let chrome = chrome.to_string_lossy().into_owned();
    let run = Seamark::new(&["doctor", "--offline", "--chrome", &chrome])
        .fails(1)
        .run()
        .await;
    assert!(
        run.out.stdout.len() < 20_000,
        "{} bytes printed",
        run.out.stdout.len()
    );
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("the wrapper started its child")
        .trim()
        .parse()
        .unwrap();
    // SIGKILL is delivered, and the orphan reaped, a moment after doctor
    // exits: waited for, bounded, before it counts as left behind.
    let alive = || {
        // SAFETY: kill(2) with signal 0 only asks whether the process is there.
        (unsafe { libc::kill(pid, 0) }) == 0
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    };
    for _ in 0..50 {
        if !alive() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!alive(), "the wrapper's child {pid} outlived doctor by 5 s");

    // A websocket that answers no DevTools command is no browser.
    let sites = Server::start(None).await;
    let cdp = Seamark::new(&["doctor", "--offline", "--cdp", &sites.base])
        .fails(1)
        .run()
        .await;
    assert!(cdp.stdout().contains("FAILED  cdp"), "{}", cdp.stdout());
    assert!(
        cdp.stdout().contains("does not answer as a browser"),
        "{}",
        cdp.stdout()
    );
}

#[tokio::test]
async fn the_shells_accept_the_completion_scripts() {
    for (shell, check) in [("bash", "bash"), ("zsh", "zsh"), ("fish", "fish")] {
        let run = Seamark::new(&["completions", shell]).run().await;
        assert!(
            run.stdout().contains("--device"),
            "{shell}: the flags are in it"
        );
        let script = run.path(&format!("seamark.{shell}"));
        std::fs::write(&script, run.stdout()).unwrap();
        if !have(check) {
            // CI installs them (scripts/setup.sh); elsewhere a missing shell is said.
            assert!(std::env::var_os("CI").is_none(), "{check} is not installed");
            eprintln!("{check} is not installed: its script is not checked");
            continue;
        }
        let checked = std::process::Command::new(check)
            .arg("-n")
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            checked.status.success(),
            "{check} -n refused the script: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
    for shell in ["powershell", "elvish"] {
        let run = Seamark::new(&["completions", shell]).run().await;
        assert!(run.stdout().contains("doctor"), "{shell}");
    }
    Seamark::new(&["completions", "tcsh"]).fails(2).run().await;
}

#[tokio::test]
async fn man_renders_seamarks_page_a_subcommands_and_writes_them_all() {
    let top = Seamark::new(&["man"]).run().await;
    let page = top.path("seamark.1");
    std::fs::write(&page, top.stdout()).unwrap();
    let shown = render(&page);
    assert!(
        shown.contains("SUBCOMMANDS") && shown.contains("seamark-doctor(1)"),
        "{shown}"
    );

    let run = Seamark::new(&["man", "run"]).run().await;
    let page = run.path("seamark-run.1");
    std::fs::write(&page, run.stdout()).unwrap();
    let shown = render(&page);
    assert!(
        shown.contains("--max-steps") && shown.contains("--device"),
        "{shown}"
    );

    let all = Seamark::new(&["man", "--dir", "man1"]).run().await;
    for name in [
        "seamark.1",
        "seamark-run.1",
        "seamark-sessions-list.1",
        "seamark-doctor.1",
    ] {
        assert!(all.path("man1").join(name).is_file(), "{name}");
    }
    let bad = Seamark::new(&["man", "nope"]).fails(2).run().await;
    bad.stderr_has("has no subcommand \"nope\"");
}

/// The page as `man -l` shows it, plain.
fn render(page: &Path) -> String {
    let out = std::process::Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man is installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn have(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
