//! Starting the Chromium process: seamark spawns it itself (not through
//! chromiumoxide's launcher) so that the browser is tied to seamark's life.
//! On Linux the process gets `PR_SET_PDEATHSIG`: when seamark dies, killed
//! with SIGKILL or crashing, the kernel kills the browser, and its helper
//! processes (zygotes, renderers, the network service) end with it.
//!
//! The DevTools websocket URL is read from the line Chromium prints on its
//! standard error ("DevTools listening on ws://…"); the rest of that stream
//! is drained into the debug log, so Chromium never writes into a closed pipe.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

/// The environment variable naming a folder where each browser seamark
/// launches writes Chromium's net log (`--log-net-log`): every request the
/// browser made, with the traffic annotation of the service that made it.
/// For finding out what a browser talks to; `scripts/soak.sh` reads them.
pub const NET_LOG_ENV: &str = "SEAMARK_NET_LOG";

/// How long Chromium may take to say where it listens.
const LISTEN_WITHIN: Duration = Duration::from_secs(30);

/// Most of Chromium's standard error kept for a launch that failed.
const STDERR_KEPT: usize = 4_000;

/// A Chromium process seamark started, and where its DevTools listen.
pub(super) struct Launched {
    /// The process (killed when dropped, with its group).
    pub child: BrowserProcess,
    /// The browser's DevTools websocket URL.
    pub ws_url: String,
}

/// The browser's process, in a process group of its own: ending it ends
/// the group. `--chrome` may name a wrapper script (Debian's own
/// `/usr/bin/chromium` is one) that starts the browser as its child without
/// `exec`: killing the script alone left that child running.
pub(super) struct BrowserProcess {
    child: Child,
    /// The group's id: the first process's pid (none once it was reaped).
    group: Option<u32>,
}

impl BrowserProcess {
    fn new(child: Child) -> BrowserProcess {
        let group = child.id();
        BrowserProcess { child, group }
    }

    /// Kills every process of the group, the first one too.
    pub fn start_kill(&mut self) {
        #[cfg(unix)]
        if let Some(group) = self.group.and_then(|g| libc::pid_t::try_from(g).ok()) {
            // SAFETY: killpg only sends a signal; a group that is gone is ESRCH.
            unsafe {
                libc::killpg(group, libc::SIGKILL);
            }
        }
        let _ = self.child.start_kill();
    }

    /// The first process's pid, while it has not been reaped.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits for the first process to end.
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.wait().await
    }

    /// Whether the first process has ended.
    pub fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        self.child.try_wait()
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        self.start_kill();
    }
}

/// Why Chromium did not start listening.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// It could not be started.
    #[error("{0}")]
    Spawn(std::io::Error),
    /// Its standard error could not be read.
    #[error("reading Chromium's standard error: {0}")]
    Stderr(std::io::Error),
    /// Its standard error was not given to seamark.
    #[error("Chromium's standard error could not be read")]
    NoStderr,
    /// It exited first: what it said.
    #[error("Chromium exited before it listened: {}", .0.trim_end())]
    Exited(String),
    /// It did not say in time.
    #[error("Chromium did not say where it listens within {} s", LISTEN_WITHIN.as_secs())]
    Silent,
}

/// Starts `path` with `args` (bare keys, as in [`super::FLAGS`]) and the
/// profile `profile`, and waits until it says where its DevTools listen.
pub(super) async fn launch(
    path: &Path,
    profile: &Path,
    args: &[String],
) -> Result<Launched, LaunchError> {
    // A file an earlier browser of this profile left would name a dead port.
    let _ = std::fs::remove_file(profile.join(super::devtools::ACTIVE_PORT_FILE));
    let mut cmd = Command::new(path);
    cmd.args(args.iter().map(|a| format!("--{a}")))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--remote-debugging-port=0")
        .args(net_log_args())
        .arg("about:blank")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    tie_to_this_process(&mut cmd);
    // A group of its own, ended whole (see [`BrowserProcess`]); Ctrl-C at
    // the terminal then reaches seamark only, which ends the browser itself.
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = BrowserProcess::new(cmd.spawn().map_err(LaunchError::Spawn)?);
    let Some(stderr) = child.child.stderr.take() else {
        return Err(LaunchError::NoStderr);
    };
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let mut said = String::new();
    let mut stderr_open = true;
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let found = tokio::time::timeout(LISTEN_WITHIN, async {
        loop {
            tokio::select! {
                line = lines.next_line(), if stderr_open => match line {
                    Ok(Some(line)) => {
                        if let Some(url) = devtools_url(&line) {
                            return Ok(url);
                        }
                        if said.len() < STDERR_KEPT {
                            said.push_str(&line);
                            said.push('\n');
                        }
                    }
                    // A wrapper script may send the browser's standard error
                    // elsewhere: its profile's DevToolsActivePort tells then.
                    Ok(None) => stderr_open = false,
                    Err(e) => return Err(LaunchError::Stderr(e)),
                },
                _ = tick.tick() => {
                    if let Ok(url) = super::devtools::from_folder(profile) {
                        return Ok(url);
                    }
                    if matches!(child.try_wait(), Ok(Some(_))) && !stderr_open {
                        return Err(LaunchError::Exited(said.clone()));
                    }
                }
            }
        }
    })
    .await
    .unwrap_or(Err(LaunchError::Silent));
    match found {
        Ok(ws_url) => {
            // Bytes, not lines: a line that is not UTF-8 ended the old
            // loop, the pipe then filled, and Chromium blocked on its stderr.
            let mut rest = lines.into_inner();
            tokio::spawn(async move {
                let mut line = Vec::new();
                while matches!(rest.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
                    tracing::debug!(target: "chromium", "{}", String::from_utf8_lossy(&line).trim_end());
                    line.clear();
                }
            });
            Ok(Launched { child, ws_url })
        }
        Err(reason) => {
            child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
            Err(reason)
        }
    }
}

/// The DevTools URL in a line of Chromium's standard error, if it holds one.
fn devtools_url(line: &str) -> Option<String> {
    let (_, url) = line.rsplit_once("listening on ")?;
    let url = url.trim();
    (url.starts_with("ws://") && url.contains("/devtools/browser/")).then(|| url.to_string())
}

/// `--log-net-log` into the folder [`NET_LOG_ENV`] names, a file per
/// browser; nothing when it is not set.
fn net_log_args() -> Vec<String> {
    static LAUNCHES: AtomicUsize = AtomicUsize::new(0);
    let Some(dir) = std::env::var_os(NET_LOG_ENV).map(PathBuf::from) else {
        return Vec::new();
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        tracing::warn!("no net log: {} cannot be made: {e}", dir.display());
        return Vec::new();
    }
    let n = LAUNCHES.fetch_add(1, Ordering::SeqCst);
    let file = dir.join(format!("netlog-{}-{n}.json", std::process::id()));
    vec![
        format!("--log-net-log={}", file.display()),
        // URLs and each request's traffic annotation; no cookies or bodies.
        "--net-log-capture-mode=Default".into(),
    ]
}

/// Makes the kernel kill the process (a browser, a worker's run) when the
/// thread that starts it ends:
/// seamark's runtime threads live as long as seamark, so a seamark killed
/// with SIGKILL (or crashing) takes its browser with it. A seamark that is
/// already gone when the browser starts is noticed too.
#[cfg(target_os = "linux")]
pub fn tie_to_this_process(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (prctl, getppid), and nothing is allocated.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                // seamark died between fork and prctl.
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Elsewhere a browser is ended by seamark's own exit paths only.
#[cfg(not(target_os = "linux"))]
pub fn tie_to_this_process(_cmd: &mut Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_devtools_url_is_read_from_chromiums_line_and_nothing_else() {
        assert_eq!(
            devtools_url("DevTools listening on ws://127.0.0.1:41633/devtools/browser/6f0e-4a"),
            Some("ws://127.0.0.1:41633/devtools/browser/6f0e-4a".into())
        );
        assert_eq!(
            devtools_url("[1204/082400.1:ERROR:bus.cc(408)] listening on nothing"),
            None
        );
        assert_eq!(devtools_url("listening on ws://x/devtools/page/1"), None);
    }
}
