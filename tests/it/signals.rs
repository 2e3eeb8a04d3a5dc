//! Ending seamark as a service manager, a closed terminal or the kernel
//! does: SIGTERM and SIGHUP end a run as Ctrl-C does (its end record and
//! report written, the browser closed) with 143 and 129; SIGKILL leaves no
//! time for any of that, and the browser still ends with seamark. Every
//! test here runs in a `TestDir`, which fails it when a browser is left.

use std::time::Duration;

use serde_json::Value;

use crate::processes::{browsers_under, kill, terminate, wait_for_browsers_to_end};
use crate::report::{run_stuck_at_step_two, signal};
use crate::server::Server;
use crate::support::{command, profiles_in, records};

/// Ends a run stuck at step 2 with `name`, and checks what a run ended so
/// must leave: the exit status, the interrupted end naming the signal, the
/// report.
async fn a_run_ended_by(name: &str, code: i32, cause: &str) {
    let server = Server::start(None).await;
    let (child, dir, _model) = run_stuck_at_step_two(&server).await;
    signal(&child, name).await;
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("seamark ended")
        .expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON result");
    assert_eq!(result["status"], "interrupted");
    let reason = result["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(&format!("interrupted ({cause}) during step 2")),
        "{reason}"
    );
    let rec = dir.path().join("rec");
    assert_eq!(records(&rec, "end")[0]["result"]["status"], "interrupted");
    assert!(rec.join("report.html").is_file(), "no report.html");
    assert!(profiles_in(&dir.tmp()).is_empty(), "the profile was left");
    assert!(
        browsers_under(&dir.tmp()).is_empty(),
        "the browser was left running"
    );
}

#[tokio::test]
async fn sigterm_ends_a_run_as_ctrl_c_does_and_exits_143() {
    a_run_ended_by("-TERM", 143, "SIGTERM").await;
}

#[tokio::test]
async fn sighup_ends_a_run_as_ctrl_c_does_and_exits_129() {
    a_run_ended_by("-HUP", 129, "SIGHUP").await;
}

#[tokio::test]
async fn a_seamark_killed_with_sigkill_takes_its_browser_with_it() {
    let server = Server::start(None).await;
    let (mut child, dir, _model) = run_stuck_at_step_two(&server).await;
    assert!(
        !browsers_under(&dir.tmp()).is_empty(),
        "the run's browser is not found by its environment"
    );
    kill(&[child.id().expect("seamark runs")], "KILL");
    let status = child.wait().await.expect("seamark's status");
    assert_eq!(status.code(), None, "seamark was not killed");
    let left = wait_for_browsers_to_end(&dir.tmp(), Duration::from_secs(15));
    assert!(left.is_empty(), "Chromium outlived seamark: {left:?}");
}

#[tokio::test]
async fn sigterm_ends_mark_and_removes_its_profile() {
    let server = Server::start(None).await;
    let (mut cmd, dir) = command(&["mark", &server.url("slow"), "--timeout", "60"]);
    let mut child = cmd.spawn().expect("start seamark mark");
    for _ in 0..200 {
        if server.was_requested("/slow") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        server.was_requested("/slow"),
        "the page was never asked for"
    );
    terminate(&mut child, "seamark mark").await;
    assert!(profiles_in(&dir.tmp()).is_empty(), "the profile was left");
}
