//! A browser's state, as Playwright writes it (`storageState`): its cookies
//! and each origin's localStorage. Loaded into a session at the start
//! (`--storage-state`), written at the end (`--save-storage-state`) and after
//! every step into the run directory (what `seamark resume` starts from), so
//! a login moves between runs and between seamark and the tools people use.
//!
//! The file is a credential: it is written with mode 0600, and never with a
//! secret's value in it (secrets are redacted, as everywhere).

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::fetch::{
    self, EventRequestPaused, FulfillRequestParams, HeaderEntry, RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{
    CookieParam, CookieSameSite, ResourceType, TimeSinceEpoch,
};
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::browser_protocol::storage::{GetCookiesParams, SetCookiesParams};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::browser::{evaluate, Session};
use crate::safety::Secrets;

/// The run directory's storage state, written after every step.
pub const RUN_STATE: &str = "storage-state.json";

/// Errors of a storage state.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a storage state.
    #[error("{path} is not a storage state (Playwright's storageState JSON: {{\"cookies\": […], \"origins\": […]}}): {why}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The browser refused to give or take the state.
    #[error("the browser's state could not be {0}")]
    Browser(String),
}

/// Cookies and localStorage, in Playwright's `storageState` form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StorageState {
    /// Every cookie of the browser (context).
    #[serde(default)]
    pub cookies: Vec<Cookie>,
    /// Each origin's localStorage.
    #[serde(default)]
    pub origins: Vec<OriginStorage>,
}

/// A cookie, as Playwright writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cookie {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// The domain (a leading dot for subdomains too).
    pub domain: String,
    /// The path.
    #[serde(default = "root_path")]
    pub path: String,
    /// Unix seconds; -1 for a session cookie.
    #[serde(default = "session_cookie")]
    pub expires: f64,
    /// Hidden from scripts.
    #[serde(default)]
    pub http_only: bool,
    /// Sent over https only.
    #[serde(default)]
    pub secure: bool,
    /// `Strict`, `Lax` or `None`.
    #[serde(default = "lax")]
    pub same_site: String,
}

fn root_path() -> String {
    "/".into()
}
fn session_cookie() -> f64 {
    -1.0
}
fn lax() -> String {
    "Lax".into()
}

/// One origin's localStorage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OriginStorage {
    /// `https://example.com` (scheme, host and port).
    pub origin: String,
    /// Its items, in order.
    #[serde(default)]
    pub local_storage: Vec<Item>,
}

/// A localStorage item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// The key.
    pub name: String,
    /// The value.
    pub value: String,
}

impl StorageState {
    /// Reads a storage state file.
    pub fn read(path: &Path) -> Result<StorageState, StorageError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| StorageError::Io {
            path: shown.clone(),
            source,
        })?;
        let state: StorageState =
            serde_json::from_str(&text).map_err(|e| StorageError::Format {
                path: shown.clone(),
                why: e.to_string(),
            })?;
        for o in &state.origins {
            if url::Url::parse(&o.origin).is_err() {
                return Err(StorageError::Format {
                    path: shown,
                    why: format!("{:?} is not an origin", o.origin),
                });
            }
        }
        Ok(state)
    }

    /// Writes it to `path` with mode 0600 (it is a credential), secrets
    /// redacted, by way of a file beside it renamed into place: a crash
    /// leaves the old state or the new one, never half of one.
    pub fn write(&self, path: &Path, secrets: &Secrets) -> Result<(), StorageError> {
        let io = |source| StorageError::Io {
            path: path.display().to_string(),
            source,
        };
        let text = serde_json::to_string_pretty(self).map_err(|e| StorageError::Format {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        let text = secrets.redact(&text) + "\n";
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".part");
        let tmp = std::path::PathBuf::from(tmp);
        write_private(&tmp, text.as_bytes()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// The state of the session's browser (context): every cookie, and the
    /// localStorage of the page's origin joined to `known` (what earlier
    /// looks found of other origins, which it updates).
    pub async fn capture(
        session: &Session,
        known: &mut BTreeMap<String, Vec<Item>>,
    ) -> Result<StorageState, StorageError> {
        let params = GetCookiesParams {
            browser_context_id: session.context().cloned(),
        };
        let reply = session
            .browser()
            .execute(params)
            .await
            .map_err(|e| StorageError::Browser(format!("read: {e}")))?;
        let cookies = reply
            .result
            .cookies
            .iter()
            .map(|c| Cookie {
                name: c.name.clone(),
                value: c.value.clone(),
                domain: c.domain.clone(),
                path: c.path.clone(),
                expires: if c.session { -1.0 } else { c.expires },
                http_only: c.http_only,
                secure: c.secure,
                same_site: c
                    .same_site
                    .as_ref()
                    .map_or("Lax", |s| s.as_ref())
                    .to_string(),
            })
            .collect();
        // A page without storage (about:blank, data:, a sandbox) has none to give.
        if let Ok(v) = evaluate(session.page(), LOCAL_STORAGE_JS).await {
            if let (Some(origin), Some(items)) = (v[0].as_str(), v[1].as_array()) {
                let items: Vec<Item> = items
                    .iter()
                    .filter_map(|i| {
                        Some(Item {
                            name: i[0].as_str()?.to_string(),
                            value: i[1].as_str()?.to_string(),
                        })
                    })
                    .collect();
                if origin.starts_with("http") {
                    known.insert(origin.to_string(), items);
                }
            }
        }
        Ok(StorageState {
            cookies,
            origins: known
                .iter()
                .filter(|(_, items)| !items.is_empty())
                .map(|(origin, items)| OriginStorage {
                    origin: origin.clone(),
                    local_storage: items.clone(),
                })
                .collect(),
        })
    }

    /// Puts the state into the session's browser (context): its cookies,
    /// then each origin's localStorage, written in a blank page of that
    /// origin which the browser is given instead of asking the site (nothing
    /// is fetched). Call it before the first navigation.
    pub async fn apply(&self, session: &Session) -> Result<(), StorageError> {
        let cookies: Vec<CookieParam> = self.cookies.iter().map(cookie_param).collect();
        if !cookies.is_empty() {
            let mut params = SetCookiesParams::new(cookies);
            params.browser_context_id = session.context().cloned();
            session
                .browser()
                .execute(params)
                .await
                .map_err(|e| StorageError::Browser(format!("set (cookies): {e}")))?;
        }
        let origins: Vec<&OriginStorage> = self
            .origins
            .iter()
            .filter(|o| o.origin.starts_with("http") && !o.local_storage.is_empty())
            .collect();
        if origins.is_empty() {
            return Ok(());
        }
        let page = session.page();
        let failed = |e: String| StorageError::Browser(format!("set (localStorage): {e}"));
        let mut paused = page
            .event_listener::<EventRequestPaused>()
            .await
            .map_err(|e| failed(e.to_string()))?;
        let pattern = RequestPattern {
            url_pattern: Some("*".into()),
            resource_type: Some(ResourceType::Document),
            request_stage: Some(RequestStage::Request),
        };
        page.execute(fetch::EnableParams {
            patterns: Some(vec![pattern]),
            handle_auth_requests: None,
        })
        .await
        .map_err(|e| failed(e.to_string()))?;
        let mut result = Ok(());
        for o in origins {
            let url = format!("{}/", o.origin.trim_end_matches('/'));
            let fake = async {
                let Some(ev) = paused.next().await else {
                    return;
                };
                let mut reply = FulfillRequestParams::new(ev.request_id.clone(), 200);
                reply.response_headers = Some(vec![HeaderEntry::new("Content-Type", "text/html")]);
                reply.body = Some(
                    base64::engine::general_purpose::STANDARD
                        .encode("<!doctype html><title></title>")
                        .into(),
                );
                let _ = page.execute(reply).await;
            };
            let (navigated, ()) = futures::join!(page.execute(NavigateParams::new(url)), fake);
            if let Err(e) = navigated {
                result = Err(failed(format!("{}: {e}", o.origin)));
                break;
            }
            let items = serde_json::to_string(
                &o.local_storage
                    .iter()
                    .map(|i| (i.name.as_str(), i.value.as_str()))
                    .collect::<Vec<_>>(),
            )
            .unwrap_or_else(|_| "[]".into());
            let js = format!("for (const [k, v] of {items}) localStorage.setItem(k, v); true");
            if let Err(e) = evaluate(page, &js).await {
                result = Err(failed(format!("{}: {e}", o.origin)));
                break;
            }
        }
        let _ = page.execute(fetch::DisableParams::default()).await;
        let _ = page.execute(NavigateParams::new("about:blank")).await;
        result
    }
}

/// The page's origin and its localStorage items.
const LOCAL_STORAGE_JS: &str = "(() => { try { return [location.origin, \
     Object.keys(localStorage).map(k => [k, localStorage.getItem(k)])]; } \
     catch (e) { return [null, []]; } })()";

fn cookie_param(c: &Cookie) -> CookieParam {
    let mut p = CookieParam::new(c.name.clone(), c.value.clone());
    p.domain = Some(c.domain.clone());
    p.path = Some(c.path.clone());
    p.secure = Some(c.secure);
    p.http_only = Some(c.http_only);
    p.same_site = match c.same_site.to_ascii_lowercase().as_str() {
        "strict" => Some(CookieSameSite::Strict),
        "none" => Some(CookieSameSite::None),
        _ => Some(CookieSameSite::Lax),
    };
    if c.expires > 0.0 {
        p.expires = Some(TimeSinceEpoch::new(c.expires));
    }
    p
}

/// Writes a file only its owner may read.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(path)?;
    // A file that was there already keeps its mode: make it private too.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn playwrights_file_reads_and_writes_back_private_and_without_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(
            &path,
            r#"{"cookies": [{"name": "sid", "value": "hunter2-token", "domain": "127.0.0.1", "path": "/",
                "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"}],
               "origins": [{"origin": "http://127.0.0.1:8080", "localStorage": [{"name": "k", "value": "v"}]}]}"#,
        )
        .unwrap();
        let state = StorageState::read(&path).unwrap();
        assert_eq!(state.cookies[0].name, "sid");
        assert!(state.cookies[0].http_only);
        assert_eq!(state.origins[0].local_storage[0].value, "v");
        let secrets = Secrets::new(vec!["tok=hunter2-token".parse().unwrap()]).unwrap();
        let out = dir.path().join("out.json");
        state.write(&out, &secrets).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            text.contains("{{secret:tok}}") && !text.contains("hunter2"),
            "{text}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&out).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(!dir.path().join("out.json.part").exists());
    }

    #[test]
    fn a_corrupt_file_is_named_and_explained() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        std::fs::write(&path, "{\"cookies\": [{\"name\": 3}]}").unwrap();
        let err = StorageState::read(&path).unwrap_err().to_string();
        assert!(err.contains("bad.json is not a storage state"), "{err}");
        std::fs::write(&path, "{\"origins\": [{\"origin\": \"not an origin\"}]}").unwrap();
        let err = StorageState::read(&path).unwrap_err().to_string();
        assert!(err.contains("\"not an origin\" is not an origin"), "{err}");
        let err = StorageState::read(&dir.path().join("none.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("none.json"), "{err}");
    }
}
