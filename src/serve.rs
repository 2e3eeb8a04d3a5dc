//! A static file server on 127.0.0.1, for pages seamark serves to the browser
//! it drives itself (a MiniWoB++ suite's task pages, the demo's site, the
//! WebGames app). GET and HEAD only; no path leaves the folder. A single-page
//! app's server ([`StaticServer::start_app`](crate::serve::StaticServer::start_app)) answers every path that is no
//! file with its `index.html` (the app routes on the client), and a POST to
//! `/api/…` with `200 {}` (where such an app records what a visitor did).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// How many of the last requests a server keeps (see [`StaticServer::served`]).
pub const SERVED_KEPT: usize = 10_000;

/// A folder served on 127.0.0.1 until dropped.
#[derive(Debug)]
pub struct StaticServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    task: JoinHandle<()>,
    served: Arc<Mutex<VecDeque<(Instant, String)>>>,
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StaticServer {
    /// Serves `root` on a free port of 127.0.0.1.
    pub async fn start(root: PathBuf) -> std::io::Result<StaticServer> {
        Self::start_on(root, 0).await
    }

    /// Serves the single-page app at `root` on a free port of 127.0.0.1.
    pub async fn start_app(root: PathBuf) -> std::io::Result<StaticServer> {
        Self::serve(root, 0, true).await
    }

    /// Serves `root` on this port of 127.0.0.1 (0: any free one).
    pub async fn start_on(root: PathBuf, port: u16) -> std::io::Result<StaticServer> {
        Self::serve(root, port, false).await
    }

    async fn serve(root: PathBuf, port: u16, app: bool) -> std::io::Result<StaticServer> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let served: Arc<Mutex<VecDeque<(Instant, String)>>> = Arc::default();
        let log = served.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (root, log) = (root.clone(), log.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let root = root.clone();
                        let asked = req.uri().to_string();
                        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
                        if log.len() == SERVED_KEPT {
                            log.pop_front();
                        }
                        log.push_back((Instant::now(), asked));
                        drop(log);
                        async move { Ok::<_, Infallible>(answer(&root, &req, app)) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(StaticServer { base, task, served })
    }

    /// The requests served so far (their path and query; the last
    /// [`SERVED_KEPT`]), with when each came: what a client did, timed from
    /// the server's side.
    pub fn served(&self) -> Vec<(Instant, String)> {
        self.served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// The URL of a path under the served folder.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base, path.trim_start_matches('/'))
    }
}

fn answer<B>(root: &Path, req: &Request<B>, app: bool) -> Response<Full<Bytes>> {
    if app && req.method() == Method::POST && req.uri().path().starts_with("/api/") {
        let mut r = plain(StatusCode::OK, "{}");
        r.headers_mut().insert(
            "content-type",
            hyper::header::HeaderValue::from_static("application/json"),
        );
        return r;
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "GET or HEAD only");
    }
    let Some(mut file) = local_path(root, req.uri().path()) else {
        return plain(StatusCode::NOT_FOUND, "not found");
    };
    if file.is_dir() {
        file = file.join("index.html");
    }
    if app && !file.is_file() {
        file = root.join("index.html");
    }
    match std::fs::read(&file) {
        Ok(body) => {
            let mime = mime_of(&file);
            let body = if req.method() == Method::HEAD {
                Bytes::new()
            } else {
                Bytes::from(body)
            };
            Response::builder()
                .header("content-type", mime)
                .header("cache-control", "no-store")
                .body(Full::new(body))
                .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "bad response"))
        }
        Err(_) => plain(StatusCode::NOT_FOUND, "not found"),
    }
}

/// The file a URL path names under `root`, or `None` when it would leave it.
pub fn local_path(root: &Path, url_path: &str) -> Option<PathBuf> {
    let decoded = percent_encoding::percent_decode_str(url_path)
        .decode_utf8()
        .ok()?;
    let rel = Path::new(decoded.trim_start_matches('/'));
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return None;
    }
    Some(root.join(rel))
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r
}

/// The content type of a file, by its extension; text is UTF-8.
pub fn mime_of(path: &Path) -> &'static str {
    match crate::files::downloads::mime_of(&path.to_string_lossy()) {
        "text/html" => "text/html; charset=utf-8",
        "text/plain" => "text/plain; charset=utf-8",
        mime => mime,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_served_with_their_type_and_text_as_utf_8() {
        let of = |name: &str| mime_of(Path::new(name));
        assert_eq!(of("index.HTML"), "text/html; charset=utf-8");
        assert_eq!(of("notes.txt"), "text/plain; charset=utf-8");
        assert!(of("app.js").ends_with("/javascript"), "{}", of("app.js"));
        assert_eq!(of("game.wasm"), "application/wasm");
        assert_eq!(of("data.json"), "application/json");
        assert_eq!(of("no-extension"), "application/octet-stream");
    }

    #[test]
    fn no_path_leaves_the_folder() {
        let root = Path::new("/srv/site");
        assert_eq!(
            local_path(root, "/miniwob/click-button.html"),
            Some(PathBuf::from("/srv/site/miniwob/click-button.html"))
        );
        assert_eq!(local_path(root, "/../etc/passwd"), None);
        assert_eq!(local_path(root, "/a/%2e%2e/%2e%2e/etc/passwd"), None);
        assert_eq!(
            local_path(root, "/a%20b.html"),
            Some(PathBuf::from("/srv/site/a b.html"))
        );
    }
}
