//! No process outlives its test, and no browser talks to anyone. A test
//! that runs the binary does so in a [`TestDir`], which is also the
//! binary's TMPDIR; every process seamark starts inherits that TMPDIR, so
//! the browsers a test started are found by their environment, whatever
//! their parent or process group. Each browser writes its net log into the
//! directory too (`SEAMARK_NET_LOG`). When the directory is dropped it
//! waits (bounded) for the browsers to end, kills any that did not, reads
//! the net logs, and fails the test, naming it, when a browser outlived it
//! or made a request of its own to a host off this machine.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::netlog::{foreign_in, Foreign};

/// How long the browsers a test started may take to end after it: the
/// helpers of a killed browser notice its death on their own, a moment
/// later on a loaded machine.
const BROWSERS_END_WITHIN: Duration = Duration::from_secs(15);

/// A temporary directory that a test runs seamark in (its TMPDIR is `tmp/`
/// inside it), checked when dropped: no browser started under it may still run.
pub struct TestDir {
    dir: tempfile::TempDir,
}

impl TestDir {
    /// A new directory.
    pub fn new() -> TestDir {
        TestDir {
            dir: tempfile::tempdir().expect("a temp dir"),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The TMPDIR of the processes started in it.
    pub fn tmp(&self) -> PathBuf {
        tmp_of(self.path())
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let tmp = self.tmp();
        let left = wait_for_browsers_to_end(&tmp, BROWSERS_END_WITHIN);
        kill(&left, "KILL");
        let foreign: Vec<Foreign> = foreign_in(&net_logs_of(self.path()))
            .into_iter()
            .filter(|f| !f.is_a_pages())
            .collect();
        if std::thread::panicking() {
            return;
        }
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        assert!(
            left.is_empty(),
            "{test}: {} Chromium process(es) outlived the test by {} s: {}",
            left.len(),
            BROWSERS_END_WITHIN.as_secs(),
            left.iter()
                .map(|p| format!("{p} {}", command_line(*p)))
                .collect::<Vec<_>>()
                .join("; ")
        );
        assert!(
            foreign.is_empty(),
            "{test}: the browser made requests of its own off this machine: {}",
            foreign
                .iter()
                .map(|f| format!("{} ({})", f.url, f.service()))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
}

/// Where the browsers started in a test's directory write their net logs.
pub fn net_logs_of(dir: &Path) -> PathBuf {
    dir.join("netlog")
}

/// The TMPDIR of the processes a test starts in `dir`.
pub fn tmp_of(dir: &Path) -> PathBuf {
    dir.join("tmp")
}

/// The Chromium processes (the browser and its helpers) whose TMPDIR is
/// `tmp`.
pub fn browsers_under(tmp: &Path) -> Vec<u32> {
    let marker = format!("TMPDIR={}", tmp.display()).into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let program = std::fs::read(e.path().join("cmdline")).ok()?;
            let program = program.split(|b| *b == 0).next()?;
            if !String::from_utf8_lossy(program).contains("chrom") {
                return None;
            }
            let environ = std::fs::read(e.path().join("environ")).ok()?;
            environ
                .split(|b| *b == 0)
                .any(|var| var == marker.as_slice())
                .then_some(pid)
        })
        .collect()
}

/// Waits until no browser runs under `tmp`, for at most `limit`: those
/// still running then.
pub fn wait_for_browsers_to_end(tmp: &Path, limit: Duration) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let left = browsers_under(tmp);
        if left.is_empty() || start.elapsed() >= limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until process `pid` has ended (gone, or a zombie no one reaped
/// yet), for at most `limit`: whether it did.
pub fn wait_for_exit(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().next().map(str::to_string))
            });
        if state.is_none_or(|s| s == "Z" || s == "X") {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `signal` (a name: `TERM`, `KILL`…) to each process.
pub fn kill(pids: &[u32], signal: &str) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status();
    }
}

/// Stops `child` as a service manager does (SIGTERM) and asserts that it
/// ends within 30 s with 143, as a command ended by SIGTERM must; `what`
/// names it in the failure.
pub async fn terminate(child: &mut tokio::process::Child, what: &str) {
    kill(&[child.id().expect("the process runs")], "TERM");
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap_or_else(|_| panic!("{what} did not end within 30 s of SIGTERM"))
        .expect("its status");
    assert_eq!(status.code(), Some(143), "{what} after SIGTERM");
}

/// Kills every browser started under `tmp`, as a test that takes a browser
/// away from seamark does.
pub fn kill_browsers_under(tmp: &Path) {
    kill(&browsers_under(tmp), "KILL");
}

/// A process's command line, for messages.
fn command_line(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| {
            String::from_utf8_lossy(&c)
                .replace('\0', " ")
                .chars()
                .take(160)
                .collect()
        })
        .unwrap_or_default()
}

/// The profiles of the browsers running under `tmp`: one a browser, each
/// launch having a fresh one. Counted by profile, not by process: a
/// process Chromium has just forked shows its parent's command line until
/// it runs its own program.
pub fn browser_profiles(tmp: &Path) -> std::collections::BTreeSet<PathBuf> {
    browsers_under(tmp)
        .into_iter()
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            cmdline
                .split(|b| *b == 0)
                .filter_map(|a| std::str::from_utf8(a).ok())
                .find_map(|a| a.strip_prefix("--user-data-dir="))
                .map(PathBuf::from)
        })
        .collect()
}

/// The URLs of the pages the running Chromium of this profile has open,
/// read over its DevTools HTTP endpoint (the profile's
/// `DevToolsActivePort` names the port).
pub async fn pages_of_browser(profile: &Path) -> Vec<String> {
    let active =
        std::fs::read_to_string(profile.join("DevToolsActivePort")).expect("DevToolsActivePort");
    let port: u16 = active
        .lines()
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a port");
    pages_at(port).await
}

/// The URLs of the pages the browser whose DevTools listen on `port` has
/// open, as its `/json/list` gives them.
pub async fn pages_at(port: u16) -> Vec<String> {
    let list: serde_json::Value = reqwest::get(format!("http://127.0.0.1:{port}/json/list"))
        .await
        .expect("the browser answers")
        .json()
        .await
        .expect("a JSON list");
    list.as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "page")
        .filter_map(|t| t["url"].as_str().map(str::to_string))
        .collect()
}
