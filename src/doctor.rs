//! `seamark doctor`: everything a run needs, checked in one place, each with
//! what was found and what to do. Nothing is changed unless asked (`fix`),
//! and then only what is safe to make: folders.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::brain::{self, BrainError, HttpPolicy, Prompt};
use crate::browser::{self, BrowserOptions, DevTools, Session};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// As it should be.
    Ok,
    /// A run works, but not as well or as safely as it could.
    Warning,
    /// A run would fail.
    Failed,
    /// Not checked, and why is said (no key, `--offline`).
    Skipped,
}

/// One check's outcome.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What was checked, one word or two: `chromium`, `model`.
    pub check: &'static str,
    /// How it came out.
    pub health: Health,
    /// What was found.
    pub found: String,
    /// What to do about it, when something is to be done.
    pub todo: Option<String>,
}

impl Finding {
    fn new(check: &'static str, health: Health, found: impl Into<String>) -> Self {
        Self {
            check,
            health,
            found: found.into(),
            todo: None,
        }
    }

    fn todo(mut self, todo: impl Into<String>) -> Self {
        self.todo = Some(todo.into());
        self
    }
}

/// What to examine, and whether to mend what is safe to mend.
#[derive(Debug, Clone, Default)]
pub struct Examination {
    /// The Chromium binary given (`--chrome`), else found as a run finds it.
    pub chrome: Option<PathBuf>,
    /// The model (`provider/model`), else none is checked.
    pub model: Option<String>,
    /// A browser to attach to (`--cdp TARGET`), else whether `auto` would
    /// find one.
    pub cdp: Option<String>,
    /// Where run directories go.
    pub runs: PathBuf,
    /// Make what is missing and safe to make (the profile and runs folders).
    pub fix: bool,
    /// Ask nothing of the network (the model is not called).
    pub offline: bool,
}

/// Below this, a run cannot keep its screenshots (a run of 30 steps keeps
/// some 20 MB; a batch, many times that).
const DISK_FAILED: u64 = 200 << 20;
/// Below this, a long run or a batch may fill the disk.
const DISK_WARNING: u64 = 2 << 30;

/// Runs every check, in the order a run needs them.
pub async fn examine(e: &Examination) -> Vec<Finding> {
    let mut out = Vec::new();
    let chromium = chromium(e.chrome.as_deref()).await;
    let found = chromium.health == Health::Ok;
    out.push(chromium);
    out.push(sandbox());
    out.push(if found {
        starts(e.chrome.clone()).await
    } else {
        Finding::new(
            "browser",
            Health::Skipped,
            "not started: no Chromium was found",
        )
    });
    out.push(font());
    out.push(model(e.model.as_deref(), e.offline).await);
    out.push(profile(e.fix));
    out.push(cdp(e.cdp.as_deref()).await);
    out.push(disk(&e.runs, e.fix));
    out
}

/// The Chromium a run would launch, and its version.
async fn chromium(explicit: Option<&Path>) -> Finding {
    let path = match browser::find_chromium(explicit) {
        Ok(path) => path,
        Err(e) => {
            return Finding::new("chromium", Health::Failed, e.to_string()).todo(
                "install it (Debian: apt-get install chromium; macOS: brew install --cask \
                 chromium), or point --chrome or SEAMARK_CHROME at one",
            )
        }
    };
    match tokio::time::timeout(Duration::from_secs(20), version_of(&path)).await {
        Ok(Ok((true, out, _))) => Finding::new(
            "chromium",
            Health::Ok,
            format!("{} at {}", out.trim(), path.display()),
        ),
        Ok(Ok((false, _, err))) => Finding::new(
            "chromium",
            Health::Failed,
            format!("{} does not run: {}", path.display(), err.trim()),
        )
        .todo("install Chromium again, or point --chrome at one that runs"),
        Ok(Err(err)) => Finding::new(
            "chromium",
            Health::Failed,
            format!("{} cannot be started: {err}", path.display()),
        )
        .todo("point --chrome at an executable Chromium"),
        Err(_) => Finding::new(
            "chromium",
            Health::Failed,
            format!("{} --version did not answer in 20 s", path.display()),
        )
        .todo("point --chrome at a Chromium that starts"),
    }
}

/// The most of what `--version` prints that is read, from each stream.
const MOST_VERSION: u64 = 4 << 10;

/// Runs `path --version` in a process group of its own, and ends the
/// whole group after, however it went (a wrapper script's browser too):
/// whether it ran well, and the start of what it printed on each stream.
/// Dropped (at the caller's bound), the group is ended all the same.
async fn version_of(path: &Path) -> std::io::Result<(bool, String, String)> {
    use tokio::io::AsyncReadExt;
    let mut child = tokio::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    let group = GroupKill(child.id());
    let read = |stream: Option<Box<dyn tokio::io::AsyncRead + Unpin + Send>>| async move {
        let mut bytes = Vec::new();
        if let Some(stream) = stream {
            let _ = stream.take(MOST_VERSION).read_to_end(&mut bytes).await;
        }
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let out = child.stdout.take().map(|s| Box::new(s) as _);
    let err = child.stderr.take().map(|s| Box::new(s) as _);
    let (out, err) = futures::join!(read(out), read(err));
    // What it printed is read: whatever it still runs is ended now.
    drop(group);
    let ran = child.wait().await?.success();
    Ok((ran, out, err))
}

/// Ends a process group when dropped.
struct GroupKill(Option<u32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            // SAFETY: kill(2) of the group this process started.
            unsafe {
                libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
            }
        }
    }
}

/// Whether Chromium's sandbox is on for the browsers seamark launches.
fn sandbox() -> Finding {
    if browser::sandboxed() {
        Finding::new(
            "sandbox",
            Health::Ok,
            "on: seamark runs as a normal user, and Chromium keeps pages in its sandbox",
        )
    } else {
        Finding::new(
            "sandbox",
            Health::Warning,
            "off: seamark runs as root, where Chromium refuses its sandbox, so it is launched \
             with --no-sandbox (as in most containers)",
        )
        .todo("run seamark as a normal user to keep the sandbox between pages and the machine")
    }
}

/// A browser seamark launches starts, opens a page and takes a screenshot.
async fn starts(chrome: Option<PathBuf>) -> Finding {
    let began = Instant::now();
    let options = BrowserOptions {
        chrome,
        ..BrowserOptions::default()
    };
    let tried = tokio::time::timeout(Duration::from_secs(60), async {
        let session = Session::start(&options).await?;
        let shot = session.screenshot().await;
        session.close().await;
        shot
    })
    .await;
    match tried {
        Ok(Ok(png)) => Finding::new(
            "browser",
            Health::Ok,
            format!(
                "launched headless, took a screenshot ({} KB) and closed, in {} ms",
                png.len() / 1024,
                began.elapsed().as_millis()
            ),
        ),
        Ok(Err(err)) => Finding::new("browser", Health::Failed, err.to_string()).todo(
            "run the browser by hand (chromium --headless=new --dump-dom about:blank) to see \
             what it needs; SEAMARK_LOG=debug shows what seamark sent",
        ),
        Err(_) => Finding::new(
            "browser",
            Health::Failed,
            "the browser did not start and take a screenshot within 60 s",
        )
        .todo("a loaded machine, or a browser that waits on something: try again, then run it by hand"),
    }
}

/// The bundled font reads and draws the digits of the marks.
fn font() -> Finding {
    if crate::mark::DigitAtlas::new(16.0).inked() {
        Finding::new(
            "font",
            Health::Ok,
            "the bundled DejaVu Sans Mono Bold draws every digit of the marks",
        )
    } else {
        Finding::new(
            "font",
            Health::Failed,
            "the bundled font draws no digits: this binary is damaged",
        )
        .todo("build or install seamark again")
    }
}

/// One tiny request to the model, with its key.
async fn model(name: Option<&str>, offline: bool) -> Finding {
    let Some(name) = name else {
        return Finding::new("model", Health::Skipped, "no model was named").todo(brain::NO_MODEL);
    };
    if offline {
        return Finding::new(
            "model",
            Health::Skipped,
            format!("{name} was not called (--offline)"),
        );
    }
    let policy = HttpPolicy {
        timeout: Duration::from_secs(30),
        retries: 0,
        ..HttpPolicy::default()
    };
    let mut brain = match brain::from_model_name(name, policy) {
        Ok(brain) => brain,
        Err(BrainError::NotConfigured(why)) => {
            return Finding::new(
                "model",
                Health::Skipped,
                format!("{name} was not called: {why}"),
            )
            .todo(brain::NO_MODEL)
        }
        Err(err) => return Finding::new("model", Health::Failed, err.to_string()),
    };
    let prompt = Prompt {
        system: "You check that you can be reached. Answer with the one word OK.".into(),
        text: "Are you there?".into(),
        images: Vec::new(),
        step: 1,
        signature: String::new(),
    };
    let began = Instant::now();
    match brain.answer(&prompt).await {
        Ok(reply) => Finding::new(
            "model",
            Health::Ok,
            format!(
                "{} answered in {} ms ({} tokens in, {} out)",
                brain.name(),
                began.elapsed().as_millis(),
                reply.usage.input,
                reply.usage.output
            ),
        ),
        Err(err @ BrainError::Unauthorized { .. }) => {
            Finding::new("model", Health::Failed, err.to_string()).todo(
                "check the key (OPENAI_API_KEY or ANTHROPIC_API_KEY): it is refused; a local \
                 server needs none",
            )
        }
        Err(err @ BrainError::NotFound { .. }) => {
            Finding::new("model", Health::Failed, err.to_string()).todo(
                "check the model's name and the base URL (OPENAI_BASE_URL, ANTHROPIC_BASE_URL)",
            )
        }
        Err(err) => Finding::new("model", Health::Failed, err.to_string())
            .todo("check that the endpoint is up and reachable from here"),
    }
}

/// `seamark browser`'s profile folder: there or not, in use or not.
fn profile(fix: bool) -> Finding {
    let Some(dir) = browser::own_profile_folder() else {
        return Finding::new(
            "profile",
            Health::Warning,
            "no home folder (HOME, XDG_DATA_HOME) to keep `seamark browser`'s profile in",
        )
        .todo("set HOME, or give `seamark browser --profile DIR`");
    };
    if let Some(holder) = browser::profile_holder(&dir) {
        return Finding::new(
            "profile",
            Health::Ok,
            format!(
                "{} is in use by a browser ({holder}): `--cdp auto` works in it; a run with \
                 --profile there is refused until it closes",
                dir.display()
            ),
        );
    }
    if dir.is_dir() {
        return Finding::new(
            "profile",
            Health::Ok,
            format!("{} is there and free", dir.display()),
        );
    }
    if fix {
        return match std::fs::create_dir_all(&dir) {
            Ok(()) => Finding::new(
                "profile",
                Health::Ok,
                format!("{} made (--fix)", dir.display()),
            ),
            Err(err) => Finding::new(
                "profile",
                Health::Failed,
                format!("{} cannot be made: {err}", dir.display()),
            ),
        };
    }
    Finding::new(
        "profile",
        Health::Ok,
        format!(
            "{} is not made yet: `seamark browser` makes it (or doctor --fix)",
            dir.display()
        ),
    )
}

/// The browser `--cdp` would attach to: the one given, else whether
/// `auto` finds one.
async fn cdp(target: Option<&str>) -> Finding {
    let Ok(http) = reqwest::Client::builder().no_proxy().build() else {
        return Finding::new("cdp", Health::Skipped, "no HTTP client could be made here");
    };
    let given = target.is_some();
    let target = target.unwrap_or("auto");
    let Ok(devtools) = target.parse::<DevTools>();
    match devtools.websocket(&http).await {
        Ok(socket) => {
            // Found is not answered: what listens there must speak as a browser.
            let asked =
                tokio::time::timeout(Duration::from_secs(5), browser::browser_version(&socket))
                    .await;
            match asked {
                Ok(Ok(product)) => Finding::new(
                    "cdp",
                    Health::Ok,
                    format!("--cdp {target} finds {product} at {socket}"),
                ),
                Ok(Err(e)) => Finding::new(
                    "cdp",
                    Health::Failed,
                    format!(
                        "--cdp {target} names {socket}, which does not answer as a browser: {e}"
                    ),
                )
                .todo("point --cdp at a browser with remote debugging on: `seamark browser`"),
                Err(_) => Finding::new(
                    "cdp",
                    Health::Failed,
                    format!("--cdp {target} names {socket}, which did not answer in 5 s"),
                )
                .todo("point --cdp at a browser with remote debugging on: `seamark browser`"),
            }
        }
        Err(err) if given => Finding::new("cdp", Health::Failed, err.to_string())
            .todo("start the browser with remote debugging on: `seamark browser`"),
        Err(_) => Finding::new(
            "cdp",
            Health::Ok,
            "no browser of yours has remote debugging on, so --cdp auto would find none; \
             without --cdp, seamark launches its own",
        ),
    }
}

/// Room for run directories where they go.
fn disk(runs: &Path, fix: bool) -> Finding {
    if fix && !runs.exists() {
        if let Err(err) = std::fs::create_dir_all(runs) {
            return Finding::new(
                "disk",
                Health::Failed,
                format!("{} cannot be made: {err}", runs.display()),
            );
        }
    }
    let at = crate::files::nearest_existing(runs);
    let probe = tempfile::Builder::new()
        .prefix(".seamark-doctor")
        .tempdir_in(at);
    if let Err(err) = probe {
        return Finding::new(
            "disk",
            Health::Failed,
            format!("nothing can be written in {}: {err}", at.display()),
        )
        .todo("run seamark where it can write, or give --out a folder it can");
    }
    let Some(free) = free_bytes(at) else {
        return Finding::new(
            "disk",
            Health::Skipped,
            format!(
                "{} can be written; its free space cannot be read",
                at.display()
            ),
        );
    };
    let gb = free as f64 / f64::from(1u32 << 30);
    let said = format!("{gb:.1} GB free where runs go ({})", runs.display());
    if free < DISK_FAILED {
        Finding::new("disk", Health::Failed, said)
            .todo("free some space: a run keeps a screenshot a step")
    } else if free < DISK_WARNING {
        Finding::new("disk", Health::Warning, said)
            .todo("a long run or a batch may fill it: free some space, or give --out elsewhere")
    } else {
        Finding::new("disk", Health::Ok, said)
    }
}

/// Bytes an unprivileged user may still write on the file system of `dir`.
#[cfg(unix)]
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string that outlives the call, and
    // `stat` is written by statvfs before it is read, only when it succeeds.
    let stat = unsafe {
        if libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) != 0 {
            return None;
        }
        stat.assume_init()
    };
    #[allow(clippy::unnecessary_cast)] // The fields' types differ between systems.
    Some(stat.f_bavail as u64 * stat.f_frsize as u64)
}

#[cfg(not(unix))]
fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_font_and_a_folder_that_cannot_be_written_are_told() {
        assert_eq!(font().health, Health::Ok);
        let ro = disk(Path::new("/proc/seamark-runs"), false);
        assert_eq!(ro.health, Health::Failed, "{ro:?}");
        let dir = tempfile::tempdir().unwrap();
        let fine = disk(&dir.path().join("runs"), true);
        assert!(dir.path().join("runs").is_dir());
        assert_ne!(fine.health, Health::Failed, "{fine:?}");
    }
}
