//! Where a running browser's DevTools are, in the forms a person has at
//! hand: its websocket URL, its HTTP address or bare port, its profile
//! folder, or `auto` (the usual folders of the browsers this user has).
//!
//! A browser started with `--remote-debugging-port` writes the port it
//! listens on and its websocket path into `DevToolsActivePort` in its
//! profile folder. Chrome 144's `chrome://inspect/#remote-debugging` route
//! picks the port itself and answers 404 at `/json/version`, so a folder is
//! read for the websocket directly, never through `/json/version`.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file a browser with remote debugging on writes into its profile folder.
pub const ACTIVE_PORT_FILE: &str = "DevToolsActivePort";

/// How long a port is given to answer.
const ANSWER: Duration = Duration::from_secs(2);

/// A running browser's DevTools, as given to `--cdp`.
#[derive(Debug, Clone, PartialEq)]
pub enum DevTools {
    /// Its websocket URL (`ws://…/devtools/browser/…`), used as it is.
    Socket(String),
    /// Its HTTP address (`http://host:port`): `/json/version` names the websocket.
    Http(String),
    /// A port on this machine: `http://127.0.0.1:PORT`.
    Port(u16),
    /// A profile folder: its `DevToolsActivePort` names the websocket.
    Folder(PathBuf),
    /// The usual profile folders of this user's browsers, the first whose
    /// `DevToolsActivePort` answers.
    Auto,
}

/// Why no browser could be found where `--cdp` pointed.
#[derive(Debug, thiserror::Error)]
pub enum DevToolsError {
    /// The folder holds no `DevToolsActivePort`.
    #[error(
        "{dir} has no {ACTIVE_PORT_FILE}: no browser with remote debugging on uses this profile \
         folder. Start one that writes it: `seamark browser --profile {dir}`, or \
         `chromium --user-data-dir={dir} --remote-debugging-port=0`"
    )]
    NoActivePort {
        /// The folder given.
        dir: String,
    },
    /// The folder does not exist.
    #[error("--cdp {0}: no such folder, and not a ws:// or http:// URL, a port or `auto`")]
    NoFolder(String),
    /// The file is there but cannot be read as a port and a path.
    #[error("{file} cannot be read as a port and a websocket path: {reason}")]
    BadActivePort {
        /// The file.
        file: String,
        /// What is wrong with it.
        reason: ActivePortFault,
    },
    /// The file names a port where nothing answers: its browser has ended.
    #[error(
        "{file} is stale: it names port {port}, where nothing answers (the browser that wrote it \
         has ended; start it again)"
    )]
    Stale {
        /// The file.
        file: String,
        /// The port it names.
        port: u16,
    },
    /// Nothing answers at the address.
    #[error("no browser answers at {address}: {reason}")]
    NoAnswer {
        /// The address asked.
        address: String,
        /// What happened.
        reason: String,
    },
    /// `/json/version` did not name a websocket.
    #[error(
        "{address}/json/version does not name the browser's websocket ({reason}); a browser \
         whose remote debugging was turned on at chrome://inspect answers no such question: \
         pass its profile folder instead (`--cdp DIR`, or `--cdp auto`)"
    )]
    NoVersion {
        /// The address asked.
        address: String,
        /// What came back.
        reason: String,
    },
    /// `auto` found no browser.
    #[error(
        "--cdp auto: no running browser with remote debugging on; looked for {ACTIVE_PORT_FILE} \
         in {looked}. Start one with `seamark browser`"
    )]
    NothingRunning {
        /// The folders looked in.
        looked: String,
    },
}

/// What is wrong with a `DevToolsActivePort` file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActivePortFault {
    /// It could not be read at all.
    #[error("{0}")]
    Unreadable(String),
    /// It holds nothing.
    #[error("it is empty")]
    Empty,
    /// Its first line (its start here) is no port.
    #[error("its first line, {0:?}, is no port")]
    NoPort(String),
    /// Its second line (its start here) is no browser's websocket path.
    #[error("its second line, {0:?}, is no /devtools/browser/ path")]
    NoPath(String),
}

impl std::str::FromStr for DevTools {
    type Err = std::convert::Infallible;

    /// Reads `--cdp`'s value: `auto`, a `ws://`/`wss://` or `http://`/`https://`
    /// URL, a bare port, else a folder.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        Ok(if s == "auto" {
            Self::Auto
        } else if lower.starts_with("ws://") || lower.starts_with("wss://") {
            Self::Socket(s.to_string())
        } else if lower.starts_with("http://") || lower.starts_with("https://") {
            Self::Http(s.trim_end_matches('/').to_string())
        } else if let Ok(port) = s.parse::<u16>() {
            Self::Port(port)
        } else {
            Self::Folder(PathBuf::from(s))
        })
    }
}

impl DevTools {
    /// The browser's DevTools websocket URL, found where this points. Asks
    /// the network (a port, `/json/version`), so it may take a moment; each
    /// question is bounded.
    pub async fn websocket(&self, http: &reqwest::Client) -> Result<String, DevToolsError> {
        match self {
            Self::Socket(url) => answering_socket(url).await,
            Self::Http(base) => from_version(http, base).await,
            Self::Port(port) => from_version(http, &format!("http://127.0.0.1:{port}")).await,
            Self::Folder(dir) => from_folder(dir),
            Self::Auto => {
                let folders = usual_folders();
                for dir in &folders {
                    if let Ok(ws) = from_folder(dir) {
                        return Ok(ws);
                    }
                }
                Err(DevToolsError::NothingRunning {
                    looked: folders
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                })
            }
        }
    }
}

/// `url` when a websocket answers there (its handshake done, within the
/// bound): one where nothing answers is told now, as the configuration
/// error it is, not later as a browser that could not start.
async fn answering_socket(url: &str) -> Result<String, DevToolsError> {
    let no_answer = |reason: String| DevToolsError::NoAnswer {
        address: url.to_string(),
        reason,
    };
    match tokio::time::timeout(ANSWER * 2, async_tungstenite::tokio::connect_async(url)).await {
        Ok(Ok((mut socket, _))) => {
            let _ = socket.close(None).await;
            Ok(url.to_string())
        }
        Ok(Err(e)) => Err(no_answer(crate::errors::chain(&e))),
        Err(_) => Err(no_answer(format!(
            "no websocket handshake in {} s",
            (ANSWER * 2).as_secs()
        ))),
    }
}

/// The most of `/json/version` read: its answer is some 500 bytes.
const VERSION_BOUND: usize = 64 << 10;

/// The websocket `/json/version` names at `base`.
async fn from_version(http: &reqwest::Client, base: &str) -> Result<String, DevToolsError> {
    let no_answer = |reason: String| DevToolsError::NoAnswer {
        address: base.to_string(),
        reason,
    };
    let reply = http
        .get(format!("{base}/json/version"))
        .timeout(ANSWER * 2)
        .send()
        .await
        .map_err(|e| no_answer(crate::errors::chain(&e)))?;
    let status = reply.status();
    let no_version = |reason: String| DevToolsError::NoVersion {
        address: base.to_string(),
        reason,
    };
    if !status.is_success() {
        return Err(no_version(format!("it answered {status}")));
    }
    let mut reply = reply;
    let mut bytes = Vec::new();
    while let Some(chunk) = reply
        .chunk()
        .await
        .map_err(|e| no_answer(crate::errors::chain(&e)))?
    {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > VERSION_BOUND {
            return Err(no_version(format!(
                "its answer is over {} KiB: no browser's",
                VERSION_BOUND >> 10
            )));
        }
    }
    let body: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| no_version(format!("not JSON: {e}")))?;
    body.get("webSocketDebuggerUrl")
        .and_then(|u| u.as_str())
        .map(str::to_string)
        .ok_or_else(|| no_version("no webSocketDebuggerUrl in it".into()))
}

/// The websocket a profile folder's `DevToolsActivePort` names, when its
/// port answers. A browser's profile inside its folder (`Default`) is taken
/// for the folder.
pub fn from_folder(dir: &Path) -> Result<String, DevToolsError> {
    if !dir.is_dir() {
        return Err(DevToolsError::NoFolder(dir.display().to_string()));
    }
    let mut file = dir.join(ACTIVE_PORT_FILE);
    if !file.is_file() && dir.join("Preferences").is_file() {
        if let Some(parent) = dir.parent() {
            file = parent.join(ACTIVE_PORT_FILE);
        }
    }
    let text = match read_small_file(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(DevToolsError::NoActivePort {
                dir: dir.display().to_string(),
            })
        }
        Err(e) => {
            return Err(DevToolsError::BadActivePort {
                file: file.display().to_string(),
                reason: ActivePortFault::Unreadable(e.to_string()),
            })
        }
    };
    let (port, path) = read_active_port(&text).map_err(|reason| DevToolsError::BadActivePort {
        file: file.display().to_string(),
        reason,
    })?;
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    if TcpStream::connect_timeout(&address, ANSWER).is_err() {
        return Err(DevToolsError::Stale {
            file: file.display().to_string(),
            port,
        });
    }
    Ok(format!("ws://127.0.0.1:{port}{path}"))
}

/// The most of a `DevToolsActivePort` file read: a port and a path are
/// some 60 bytes.
const ACTIVE_PORT_BOUND: u64 = 512;

/// The start of `file` (up to [`ACTIVE_PORT_BOUND`] bytes), when it is a
/// regular file: a FIFO would block the read forever, a link to
/// `/dev/zero` never end it, and a gigabyte would all be held and told.
fn read_small_file(file: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let kind = std::fs::metadata(file)?.file_type();
    if !kind.is_file() {
        return Err(std::io::Error::other(format!(
            "it is not a regular file (a {})",
            describe_kind(kind)
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(file)?
        .take(ACTIVE_PORT_BOUND)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a file that is not a regular one is, in a word.
fn describe_kind(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "folder"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "device"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The port and websocket path of a `DevToolsActivePort` file: two lines.
fn read_active_port(text: &str) -> Result<(u16, String), ActivePortFault> {
    let mut lines = text.lines().map(str::trim);
    let port = lines
        .next()
        .filter(|l| !l.is_empty())
        .ok_or(ActivePortFault::Empty)?;
    let port: u16 = port
        .parse()
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| ActivePortFault::NoPort(port.chars().take(40).collect()))?;
    let path = lines.next().unwrap_or_default();
    if !path.starts_with("/devtools/browser/") {
        return Err(ActivePortFault::NoPath(path.chars().take(80).collect()));
    }
    Ok((port, path.to_string()))
}

/// The folder an environment variable names, when it is set and not empty.
fn env(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The folder seamark keeps a browser profile in for the person
/// (`seamark browser`): `$XDG_DATA_HOME/seamark/browser`, else
/// `~/.local/share/seamark/browser` (on macOS `~/Library/Application
/// Support/seamark/browser`; on Windows `%LOCALAPPDATA%\seamark\browser`).
pub fn own_profile_folder() -> Option<PathBuf> {
    let data = if cfg!(windows) {
        env("LOCALAPPDATA")?
    } else if cfg!(target_os = "macos") {
        env("HOME")?.join("Library/Application Support")
    } else {
        env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join(".local/share")))?
    };
    Some(data.join("seamark").join("browser"))
}

/// The usual profile folders of Chrome, Chromium, Edge and Brave for this
/// user, seamark's own first.
pub fn usual_folders() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = own_profile_folder().into_iter().collect();
    let (base, names): (Option<PathBuf>, &[&str]) = if cfg!(windows) {
        (
            env("LOCALAPPDATA"),
            &[
                "Google/Chrome/User Data",
                "Google/Chrome Beta/User Data",
                "Google/Chrome SxS/User Data",
                "Chromium/User Data",
                "Microsoft/Edge/User Data",
                "BraveSoftware/Brave-Browser/User Data",
            ],
        )
    } else if cfg!(target_os = "macos") {
        (
            env("HOME").map(|h| h.join("Library/Application Support")),
            &[
                "Google/Chrome",
                "Google/Chrome Beta",
                "Google/Chrome Canary",
                "Chromium",
                "Microsoft Edge",
                "BraveSoftware/Brave-Browser",
            ],
        )
    } else {
        (
            env("XDG_CONFIG_HOME").or_else(|| env("HOME").map(|h| h.join(".config"))),
            &[
                "google-chrome",
                "google-chrome-beta",
                "google-chrome-unstable",
                "chromium",
                "microsoft-edge",
                "microsoft-edge-beta",
                "BraveSoftware/Brave-Browser",
            ],
        )
    };
    if let Some(base) = base {
        out.extend(names.iter().map(|n| base.join(n)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_cdp_is_told_apart() {
        let parse = |s: &str| s.parse::<DevTools>().unwrap();
        assert_eq!(parse("auto"), DevTools::Auto);
        assert_eq!(
            parse("ws://127.0.0.1:9222/devtools/browser/x"),
            DevTools::Socket("ws://127.0.0.1:9222/devtools/browser/x".into())
        );
        assert_eq!(
            parse("http://127.0.0.1:9222/"),
            DevTools::Http("http://127.0.0.1:9222".into())
        );
        assert_eq!(parse("9222"), DevTools::Port(9222));
        assert_eq!(parse("70000"), DevTools::Folder("70000".into()));
        assert_eq!(parse("~/prof"), DevTools::Folder("~/prof".into()));
    }

    #[test]
    fn an_active_port_file_is_read_and_a_broken_one_refused() {
        assert_eq!(
            read_active_port("37989\n/devtools/browser/ca99\n").unwrap(),
            (37989, "/devtools/browser/ca99".to_string())
        );
        assert_eq!(read_active_port(""), Err(ActivePortFault::Empty));
        assert_eq!(
            read_active_port("port\n/devtools/browser/x"),
            Err(ActivePortFault::NoPort("port".into()))
        );
        let no_path = read_active_port("9222\n").unwrap_err();
        assert!(no_path.to_string().contains("no /devtools/browser/ path"));
    }

    #[test]
    fn a_folder_without_the_file_and_a_stale_file_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let err = from_folder(dir.path()).unwrap_err().to_string();
        assert!(err.contains("has no DevToolsActivePort"), "{err}");
        assert!(err.contains("--remote-debugging-port=0"), "{err}");
        // A port nobody serves: one just freed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(
            dir.path().join(ACTIVE_PORT_FILE),
            format!("{port}\n/devtools/browser/gone"),
        )
        .unwrap();
        let err = from_folder(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("is stale") && err.contains(&port.to_string()),
            "{err}"
        );
        // A browser's profile inside the folder stands for the folder.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::fs::write(
            dir.path().join(ACTIVE_PORT_FILE),
            format!("{port}\n/devtools/browser/here"),
        )
        .unwrap();
        let profile = dir.path().join("Default");
        std::fs::create_dir(&profile).unwrap();
        std::fs::write(profile.join("Preferences"), "{}").unwrap();
        assert_eq!(
            from_folder(&profile).unwrap(),
            format!("ws://127.0.0.1:{port}/devtools/browser/here")
        );
    }
}
