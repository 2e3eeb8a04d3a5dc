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
use std::time::Duration;

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::fetch::{
    self, EventRequestPaused, FulfillRequestParams, HeaderEntry, RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{
    CookieParam, CookieSameSite, DeleteCookiesParams, ResourceType, TimeSinceEpoch,
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
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        cause: std::io::Error,
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
            cause: source,
        })?;
        let format = |why: String| StorageError::Format {
            path: shown.clone(),
            why,
        };
        // Strict at the top: a typo ("cookie") or another kind of JSON would
        // otherwise read as an empty state and load nothing without a word.
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format(e.to_string()))?;
        let Some(fields) = value.as_object() else {
            return Err(format("it is not a JSON object".into()));
        };
        if let Some(other) = fields
            .keys()
            .find(|k| !matches!(k.as_str(), "cookies" | "origins"))
        {
            return Err(format(format!(
                "it has a field {other:?}: a storage state has only \"cookies\" and \"origins\""
            )));
        }
        if fields.is_empty() {
            return Err(format("it has neither \"cookies\" nor \"origins\"".into()));
        }
        let state: StorageState =
            serde_json::from_value(value).map_err(|e| format(e.to_string()))?;
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
            cause: source,
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

    /// Whether a state can be written to `path`, tried before a run starts
    /// (the file beside it that [`StorageState::write`] renames into place
    /// is created and removed; `path` itself is left as it is).
    pub fn check_writable(path: &Path) -> Result<(), StorageError> {
        let io = |source| StorageError::Io {
            path: path.display().to_string(),
            cause: source,
        };
        if path.is_dir() {
            return Err(io(std::io::Error::other("it is a directory")));
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".part");
        let tmp = std::path::PathBuf::from(tmp);
        write_private(&tmp, b"").map_err(io)?;
        std::fs::remove_file(&tmp).map_err(io)
    }

    /// The state of the session's browser (context): every cookie, and the
    /// localStorage of the page's origin joined to `known` (what earlier
    /// looks found of other origins, which it updates).
    pub async fn capture(
        session: &Session,
        known: &mut BTreeMap<String, Vec<Item>>,
    ) -> Result<StorageState, StorageError> {
        let cookies = read_cookies(session).await?;
        // A page without storage (about:blank, data:, a sandbox) has none to give.
        if let Some(page) = OriginState::read(session).await {
            known.insert(page.origin, page.local);
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
        set_cookies(session, &self.cookies).await?;
        let writes: Vec<(String, String)> = self
            .origins
            .iter()
            .filter(|o| o.origin.starts_with("http") && !o.local_storage.is_empty())
            .map(|o| {
                let js = format!("{} true", set_items_js("localStorage", &o.local_storage));
                (o.origin.clone(), js)
            })
            .collect();
        write_in_blank_pages(session, &writes).await
    }
}

/// One site's state at a moment, to come back to (a checkpoint's): the
/// cookies the site's host gets, and its origin's localStorage and
/// sessionStorage. Kept in memory only: it holds the site's session.
#[derive(Debug, Clone, Default)]
pub struct PageState {
    host: String,
    cookies: Vec<Cookie>,
    origin: Option<OriginState>,
}

/// An origin's two storages.
#[derive(Debug, Clone)]
struct OriginState {
    origin: String,
    local: Vec<Item>,
    session: Vec<Item>,
}

impl OriginState {
    /// The storages of the session's page's origin, when it has them.
    async fn read(session: &Session) -> Option<OriginState> {
        let v = evaluate(session.page(), STORAGES_JS).await.ok()?;
        let items = |v: &serde_json::Value| -> Vec<Item> {
            v.as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|i| {
                            Some(Item {
                                name: i[0].as_str()?.to_string(),
                                value: i[1].as_str()?.to_string(),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let origin = v[0].as_str().filter(|o| o.starts_with("http"))?;
        Some(OriginState {
            origin: origin.to_string(),
            local: items(&v[1]),
            session: items(&v[2]),
        })
    }
}

impl PageState {
    /// The state of the site of the session's page, whose host is `host`.
    pub async fn capture(session: &Session, host: &str) -> Result<PageState, StorageError> {
        let cookies = read_cookies(session)
            .await?
            .into_iter()
            .filter(|c| domain_matches(&c.domain, host))
            .collect();
        Ok(PageState {
            host: host.to_string(),
            cookies,
            origin: OriginState::read(session).await,
        })
    }

    /// How many cookies and storage items it holds.
    pub fn size(&self) -> (usize, usize) {
        let items = self
            .origin
            .as_ref()
            .map_or(0, |o| o.local.len() + o.session.len());
        (self.cookies.len(), items)
    }

    /// Puts the site back as it was: its cookies set since are deleted and
    /// those it had set again, and its origin's storages emptied and filled
    /// in a blank page of the origin (nothing is fetched). The page is left
    /// blank: open the checkpoint's URL next, in the same tab (sessionStorage
    /// belongs to the tab).
    pub async fn restore(&self, session: &Session) -> Result<(), StorageError> {
        let keep = |c: &Cookie| {
            self.cookies
                .iter()
                .any(|k| k.name == c.name && k.domain == c.domain && k.path == c.path)
        };
        for c in read_cookies(session).await? {
            if domain_matches(&c.domain, &self.host) && !keep(&c) {
                let mut params = DeleteCookiesParams::new(c.name.clone());
                params.domain = Some(c.domain.clone());
                params.path = Some(c.path.clone());
                session
                    .page()
                    .execute(params)
                    .await
                    .map_err(|e| StorageError::Browser(format!("set (cookies): {e}")))?;
            }
        }
        set_cookies(session, &self.cookies).await?;
        let Some(o) = &self.origin else {
            return Ok(());
        };
        let js = format!(
            "localStorage.clear(); sessionStorage.clear(); {} {} true",
            set_items_js("localStorage", &o.local),
            set_items_js("sessionStorage", &o.session)
        );
        write_in_blank_pages(session, &[(o.origin.clone(), js)]).await
    }
}

/// Whether a cookie of `domain` (a leading dot for subdomains too) goes to `host`.
fn domain_matches(domain: &str, host: &str) -> bool {
    let d = domain.trim_start_matches('.');
    !d.is_empty()
        && (host.eq_ignore_ascii_case(d)
            || host
                .to_ascii_lowercase()
                .ends_with(&format!(".{}", d.to_ascii_lowercase())))
}

/// Every cookie of the session's browser (context).
async fn read_cookies(session: &Session) -> Result<Vec<Cookie>, StorageError> {
    let params = GetCookiesParams {
        browser_context_id: session.context().cloned(),
    };
    let reply = session
        .browser()
        .execute(params)
        .await
        .map_err(|e| StorageError::Browser(format!("read: {e}")))?;
    Ok(reply
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
        .collect())
}

/// Sets cookies in the session's browser (context).
async fn set_cookies(session: &Session, cookies: &[Cookie]) -> Result<(), StorageError> {
    if cookies.is_empty() {
        return Ok(());
    }
    let mut params = SetCookiesParams::new(cookies.iter().map(cookie_param).collect());
    params.browser_context_id = session.context().cloned();
    session
        .browser()
        .execute(params)
        .await
        .map_err(|e| StorageError::Browser(format!("set (cookies): {e}")))?;
    Ok(())
}

/// A script that sets `items` in `storage` (`localStorage`, `sessionStorage`).
fn set_items_js(storage: &str, items: &[Item]) -> String {
    let pairs = serde_json::to_string(
        &items
            .iter()
            .map(|i| (i.name.as_str(), i.value.as_str()))
            .collect::<Vec<_>>(),
    )
    .unwrap_or_else(|_| "[]".into());
    format!("for (const [k, v] of {pairs}) {storage}.setItem(k, v);")
}

/// How long a blank page of an origin may take to be asked for.
const BLANK_PAGE_WAIT: Duration = Duration::from_secs(5);

/// Runs each script in a blank page of its origin, which the browser is
/// given instead of asking the site (nothing is fetched); the tab is left
/// at about:blank.
async fn write_in_blank_pages(
    session: &Session,
    writes: &[(String, String)],
) -> Result<(), StorageError> {
    if writes.is_empty() {
        return Ok(());
    }
    let page = session.page();
    let failed = |e: String| StorageError::Browser(format!("set (storage): {e}"));
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
    for (origin, js) in writes {
        let url = format!("{}/", origin.trim_end_matches('/'));
        let fake = async {
            let Ok(Some(ev)) = tokio::time::timeout(BLANK_PAGE_WAIT, paused.next()).await else {
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
            result = Err(failed(format!("{origin}: {e}")));
            break;
        }
        if let Err(e) = evaluate(page, js).await {
            result = Err(failed(format!("{origin}: {e}")));
            break;
        }
    }
    let _ = page.execute(fetch::DisableParams::default()).await;
    let _ = page.execute(NavigateParams::new("about:blank")).await;
    result
}

/// The page's origin, its localStorage and its sessionStorage items.
const STORAGES_JS: &str =
    "(() => { const items = s => Object.keys(s).map(k => [k, s.getItem(k)]); \
     try { return [location.origin, items(localStorage), items(sessionStorage)]; } \
     catch (e) { return [null, [], []]; } })()";

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
