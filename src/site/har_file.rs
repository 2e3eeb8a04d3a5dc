//! The HAR file: an exchange the browser saw as a sealed HAR 1.2 entry, and
//! the file read back.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use har::v1_2::{
    Content, Cookies, Entries, Headers, Log, PostData, QueryString, Request, Response,
};

use super::SiteError;
use crate::browser::{Exchange, Got};
use crate::safety::Secrets;

/// The recording's name in a run directory.
pub const HAR_FILE: &str = "site.har";

/// What a sealed value is written as.
pub(super) const SEALED: &str = "[redacted]";

/// What a failed request's response comment starts with; the rest is the
/// network's error (`failed: ConnectionRefused`).
pub(super) const FAILED: &str = "failed: ";

/// Request headers whose values are never written.
const SEALED_REQUEST_HEADERS: [&str; 3] = ["cookie", "authorization", "proxy-authorization"];

/// Response headers whose values are never written, but for a cookie's
/// name and attributes.
const SET_COOKIE: &str = "set-cookie";

/// `t` as HAR writes a moment: RFC 3339 in UTC, to the millisecond.
fn started(t: SystemTime) -> String {
    let ms = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_millis())
        .unwrap_or(0);
    let whole = crate::clock::utc_rfc3339(t);
    format!("{}.{ms:03}Z", whole.trim_end_matches('Z'))
}

/// The name of a cookie's `name=value` pair.
fn cookie_name(pair: &str) -> &str {
    pair.split_once('=').map_or(pair, |(n, _)| n).trim()
}

/// A `Set-Cookie` value with the cookie's value sealed: `sid=[redacted]; Path=/`.
fn sealed_set_cookie(value: &str) -> String {
    let (pair, attributes) = value.split_once(';').unwrap_or((value, ""));
    let name = cookie_name(pair);
    if attributes.is_empty() {
        format!("{name}={SEALED}")
    } else {
        format!("{name}={SEALED};{attributes}")
    }
}

/// A cookie of a `name=value` pair, its value sealed; none for a pair
/// with no name.
fn sealed_cookie(pair: &str) -> Option<Cookies> {
    let name = cookie_name(pair);
    (!name.is_empty()).then(|| Cookies {
        name: name.to_string(),
        value: SEALED.to_string(),
        ..Cookies::default()
    })
}

/// The cookies a `Cookie` header names, their values sealed.
fn request_cookies(headers: &[(String, String)]) -> Vec<Cookies> {
    headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("cookie"))
        .flat_map(|(_, v)| v.split(';'))
        .filter_map(sealed_cookie)
        .collect()
}

/// The cookies the `Set-Cookie` headers set, their values sealed.
fn response_cookies(headers: &[(String, String)]) -> Vec<Cookies> {
    headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(SET_COOKIE))
        // Several cookies may come in one header, a line each; a line's
        // first pair is the cookie, the rest its attributes.
        .flat_map(|(_, v)| v.lines())
        .filter_map(|line| sealed_cookie(line.split(';').next().unwrap_or_default()))
        .collect()
}

/// Headers as HAR writes them, sealed.
fn sealed_headers(headers: &[(String, String)], secrets: &Secrets) -> Vec<Headers> {
    headers
        .iter()
        .map(|(name, value)| {
            let lower = name.to_ascii_lowercase();
            let value = if SEALED_REQUEST_HEADERS.contains(&lower.as_str()) {
                SEALED.to_string()
            } else if lower == SET_COOKIE {
                value
                    .lines()
                    .map(sealed_set_cookie)
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                secrets.redact(value)
            };
            Headers {
                name: name.clone(),
                value,
                comment: None,
            }
        })
        .collect()
}

/// A header's value, by its name in any case.
pub(super) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A request body as the recording keeps it, and as a replay compares it:
/// its text (a binary body read as Latin-1-safe lossy UTF-8), secrets sealed.
pub(super) fn sealed_body(body: &[u8], secrets: &Secrets) -> String {
    secrets.redact(&String::from_utf8_lossy(body))
}

/// A body as HAR content: text when it is UTF-8, else base64; secrets sealed
/// either way.
fn content(body: Option<&[u8]>, mime: &str, secrets: &Secrets) -> Content {
    let Some(body) = body else {
        return Content {
            size: -1,
            mime_type: Some(mime.to_string()),
            comment: Some("the body was not kept".into()),
            ..Content::default()
        };
    };
    let (text, encoding) = match std::str::from_utf8(body) {
        Ok(text) => (secrets.redact(text), None),
        Err(_) => (
            base64::engine::general_purpose::STANDARD.encode(secrets.redact_bytes(body)),
            Some("base64".to_string()),
        ),
    };
    Content {
        size: body.len() as i64,
        mime_type: Some(mime.to_string()),
        text: Some(text),
        encoding,
        ..Content::default()
    }
}

/// What came back, as a sealed HAR response: a failure is a status 0 whose
/// comment says why.
fn sealed_response(got: &Got, secrets: &Secrets) -> Response {
    match got {
        Got::Response {
            status,
            status_text,
            headers,
            body,
        } => Response {
            status: *status,
            status_text: status_text.clone(),
            http_version: "HTTP/1.1".into(),
            cookies: response_cookies(headers),
            headers: sealed_headers(headers, secrets),
            content: content(
                body.as_deref(),
                header(headers, "content-type").unwrap_or_default(),
                secrets,
            ),
            redirect_url: header(headers, "location").map(|l| secrets.redact(l)),
            headers_size: -1,
            body_size: body.as_ref().map_or(-1, |b| b.len() as i64),
            comment: None,
        },
        Got::Failed(reason) => Response {
            status: 0,
            http_version: "HTTP/1.1".into(),
            content: Content {
                size: 0,
                mime_type: Some(String::new()),
                ..Content::default()
            },
            redirect_url: Some(String::new()),
            headers_size: -1,
            body_size: -1,
            comment: Some(format!("{FAILED}{reason}")),
            ..Response::default()
        },
    }
}

/// An exchange as a sealed HAR entry.
pub(super) fn entry(exchange: &Exchange, secrets: &Secrets) -> Entries {
    let asked = &exchange.asked;
    let url = secrets.redact(&asked.url);
    let query_string = url::Url::parse(&url)
        .map(|u| {
            u.query_pairs()
                .map(|(name, value)| QueryString {
                    name: name.into_owned(),
                    value: value.into_owned(),
                    comment: None,
                })
                .collect()
        })
        .unwrap_or_default();
    let post_data = asked.body.as_ref().map(|body| PostData {
        mime_type: header(&asked.headers, "content-type")
            .unwrap_or_default()
            .to_string(),
        text: Some(sealed_body(body, secrets)),
        params: None,
        comment: None,
    });
    let request = Request {
        method: asked.method.clone(),
        url,
        http_version: "HTTP/1.1".into(),
        cookies: request_cookies(&asked.headers),
        headers: sealed_headers(&asked.headers, secrets),
        query_string,
        body_size: asked.body.as_ref().map_or(0, |b| b.len() as i64),
        post_data,
        headers_size: -1,
        comment: Some(asked.resource.clone()),
    };
    let response = sealed_response(&exchange.got, secrets);
    Entries {
        started_date_time: started(exchange.at),
        time: 0.0,
        request,
        response,
        timings: har::v1_2::Timings {
            send: 0.0,
            wait: 0.0,
            receive: 0.0,
            ..har::v1_2::Timings::default()
        },
        ..Entries::default()
    }
}

/// A HAR 1.2 file of `entries`.
pub(super) fn write_har(path: &Path, entries: Vec<Entries>) -> Result<(), SiteError> {
    let log = Log {
        creator: har::v1_2::Creator {
            name: "seamark".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            comment: None,
        },
        entries,
        comment: Some(
            "recorded by seamark --record-site: cookie and authorization values and secrets \
             are sealed"
                .into(),
        ),
        ..Log::default()
    };
    let har = har::Har {
        log: har::Spec::V1_2(log),
    };
    let text = har::to_json(&har).map_err(|e| SiteError::Write {
        path: path.to_path_buf(),
        cause: std::io::Error::other(e.to_string()),
    })?;
    // Whole or not at all: a reader never finds half a file.
    let partial = path.with_extension("har.partial");
    std::fs::write(&partial, text)
        .and_then(|_| std::fs::rename(&partial, path))
        .map_err(|source| SiteError::Write {
            path: path.to_path_buf(),
            cause: source,
        })
}

/// The largest recording read: a run's bodies are kept up to 32 MiB each,
/// and a file past this is not read into memory whole.
pub const MAX_HAR: u64 = 1 << 30;

/// Reads a HAR 1.2 file's entries.
pub fn read_har(path: &Path) -> Result<Vec<Entries>, SiteError> {
    let read = |source| SiteError::Read {
        path: path.to_path_buf(),
        cause: source,
    };
    let not_har = |reason: String| SiteError::NotHar {
        path: path.to_path_buf(),
        reason,
    };
    let meta = std::fs::metadata(path).map_err(read)?;
    if !meta.is_file() {
        // A FIFO or a device would be waited on, or read without end.
        return Err(not_har("it is not a regular file".into()));
    }
    let size = meta.len();
    if size > MAX_HAR {
        return Err(not_har(format!(
            "it is {} MiB; seamark reads recordings of at most {} MiB",
            size >> 20,
            MAX_HAR >> 20
        )));
    }
    let bytes = std::fs::read(path).map_err(read)?;
    let entries = match har::from_slice(&bytes)
        .map_err(|e| not_har(e.to_string()))?
        .log
    {
        har::Spec::V1_2(log) => log.entries,
        har::Spec::V1_3(_) => return Err(not_har("it is HAR 1.3; seamark replays HAR 1.2".into())),
    };
    for (n, entry) in entries.iter().enumerate() {
        if let Err(why) = answerable(entry) {
            return Err(not_har(format!(
                "entry {} ({} {}): {why}",
                n + 1,
                entry.request.method,
                entry.request.url.chars().take(200).collect::<String>()
            )));
        }
    }
    Ok(entries)
}

/// Why an entry cannot be answered as a browser takes an answer: a status
/// that is none, a header no HTTP message can carry, a body past what a
/// replay answers, a redirect to a script.
fn answerable(entry: &Entries) -> Result<(), String> {
    let response = &entry.response;
    let failed = response
        .comment
        .as_deref()
        .is_some_and(|c| c.starts_with(FAILED));
    if !failed && response.status != 0 && !(100..=599).contains(&response.status) {
        return Err(format!("status {} is no HTTP status", response.status));
    }
    for h in &response.headers {
        let token = !h.name.is_empty()
            && h.name
                .bytes()
                .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b));
        if !token {
            return Err(format!("the header name {:?} is no HTTP header's", h.name));
        }
        if h.value.contains(['\0', '\r']) {
            return Err(format!(
                "the header {} holds a NUL or a carriage return",
                h.name
            ));
        }
    }
    let text = response.content.text.as_deref().unwrap_or_default();
    if text.len() > crate::browser::MAX_BODY * 4 / 3 + 4 {
        return Err(format!(
            "its body is {} MiB; a replay answers bodies of at most {} MiB",
            text.len() >> 20,
            crate::browser::MAX_BODY >> 20
        ));
    }
    let location = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("location"))
        .map(|h| h.value.as_str());
    if let Some(location) = location.filter(|_| (300..400).contains(&response.status)) {
        let to = url::Url::parse(&entry.request.url)
            .and_then(|base| base.join(location))
            .map(|u| u.scheme().to_string())
            .unwrap_or_default();
        if !matches!(to.as_str(), "http" | "https") {
            return Err(format!(
                "it redirects to {location:?}, which is no web page"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::Asked;

    fn secrets() -> Secrets {
        Secrets::new(vec!["pw=hunter2-horse".parse().unwrap()]).unwrap()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn cookies_authorization_and_secrets_are_sealed_in_every_part_of_an_entry() {
        let exchange = Exchange {
            asked: Asked {
                method: "POST".into(),
                url: "http://site.test/in?pw=hunter2-horse".into(),
                headers: pairs(&[
                    ("Cookie", "sid=abc123; theme=dark"),
                    ("Authorization", "Bearer xyz"),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                ]),
                body: Some(b"user=ada&pw=hunter2-horse".to_vec()),
                resource: "Document".into(),
            },
            at: UNIX_EPOCH,
            got: Got::Response {
                status: 200,
                status_text: "OK".into(),
                headers: pairs(&[
                    ("Set-Cookie", "sid=abc123; Path=/; HttpOnly"),
                    ("Content-Type", "image/png"),
                ]),
                body: Some(vec![
                    0xff, 0xfe, b'h', b'u', b'n', b't', b'e', b'r', b'2', b'-', b'h', b'o', b'r',
                    b's', b'e',
                ]),
            },
        };
        let e = entry(&exchange, &secrets());
        let json = serde_json::to_string(&e).unwrap();
        for leak in ["hunter2-horse", "abc123", "Bearer xyz"] {
            assert!(!json.contains(leak), "{leak} in {json}");
        }
        let png = base64::engine::general_purpose::STANDARD
            .decode(e.response.content.text.as_deref().unwrap())
            .unwrap();
        assert!(!String::from_utf8_lossy(&png).contains("hunter2"));
        assert_eq!(e.request.cookies.len(), 2);
        assert!(json.contains("sid=[redacted]; Path=/; HttpOnly"), "{json}");
        assert_eq!(
            e.request.post_data.unwrap().text.unwrap(),
            "user=ada&pw={{secret:pw}}"
        );
        assert_eq!(e.started_date_time, "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn a_recording_past_the_bound_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.har");
        // Sparse: no gigabyte is written.
        std::fs::File::create(&path)
            .unwrap()
            .set_len(MAX_HAR + 1)
            .unwrap();
        let err = read_har(&path).unwrap_err();
        assert!(err.to_string().contains("at most 1024 MiB"), "{err}");
    }

    /// A recording of one answer to GET http://s.test/, as `change` leaves it.
    fn one_answer(dir: &Path, change: impl FnOnce(&mut Response)) -> std::path::PathBuf {
        let mut e = entry(
            &Exchange {
                asked: Asked {
                    method: "GET".into(),
                    url: "http://s.test/".into(),
                    headers: Vec::new(),
                    body: None,
                    resource: "Document".into(),
                },
                at: UNIX_EPOCH,
                got: Got::Response {
                    status: 200,
                    status_text: "OK".into(),
                    headers: pairs(&[("Content-Type", "text/html")]),
                    body: Some(b"<p>hi</p>".to_vec()),
                },
            },
            &secrets(),
        );
        change(&mut e.response);
        let path = dir.join("one.har");
        write_har(&path, vec![e]).unwrap();
        path
    }

    #[test]
    fn an_entry_no_browser_could_take_is_named_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_har(&one_answer(dir.path(), |_| {})).unwrap().len(), 1);
        let header = |name: &str, value: &str| Headers {
            name: name.into(),
            value: value.into(),
            comment: None,
        };
        type Change = Box<dyn FnOnce(&mut Response)>;
        let cases: Vec<(Change, &str)> = vec![
            (
                Box::new(|r| r.status = 99999),
                "status 99999 is no HTTP status",
            ),
            (Box::new(|r| r.status = 1), "status 1"),
            (
                Box::new(move |r| r.headers.push(header("X-A\r\nSet-Cookie", "x"))),
                "no HTTP header's",
            ),
            (
                Box::new(move |r| r.headers.push(header("X-B", "a\0b"))),
                "holds a NUL",
            ),
            (
                Box::new(move |r| {
                    r.status = 302;
                    r.headers.push(header("Location", "javascript:alert(1)"));
                }),
                "no web page",
            ),
        ];
        for (change, says) in cases {
            let err = read_har(&one_answer(dir.path(), change))
                .unwrap_err()
                .to_string();
            assert!(err.contains("entry 1 (GET http://s.test/)"), "{err}");
            assert!(err.contains(says), "{err}");
        }
    }

    #[test]
    fn a_fifo_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("site.har");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a path of our own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_har(&fifo).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn a_failed_request_is_written_as_what_it_was() {
        let exchange = Exchange {
            asked: Asked {
                method: "GET".into(),
                url: "http://tracker.test/p.gif".into(),
                headers: Vec::new(),
                body: None,
                resource: "Image".into(),
            },
            at: UNIX_EPOCH,
            got: Got::Failed("BlockedByClient".into()),
        };
        let e = entry(&exchange, &secrets());
        assert_eq!(e.response.status, 0);
        assert_eq!(
            e.response.comment.as_deref(),
            Some("failed: BlockedByClient")
        );
    }
}
