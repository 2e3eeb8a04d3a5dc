//! A scripted model on 127.0.0.1 that speaks the real wire formats: OpenAI chat
//! completions (`POST …/chat/completions`) and Anthropic Messages (`POST
//! …/v1/messages`). Each request is answered by the next entry of a script,
//! which reads the prompt (to find ids by name, as a model would) and answers
//! text, or an HTTP error. Every request is recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request the model received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Request path.
    pub path: String,
    /// Header lines, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (Null when it was not JSON).
    pub body: Value,
}

impl Received {
    /// Whether this is an Anthropic Messages request.
    pub fn is_anthropic(&self) -> bool {
        self.path.ends_with("/messages")
    }

    /// The user message's parts, in either format.
    fn parts(&self) -> Vec<Value> {
        let messages = self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        messages
            .iter()
            .filter(|m| m["role"] == "user")
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    /// The prompt text.
    pub fn text(&self) -> String {
        self.parts()
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str().map(str::to_string))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The images, as base64 PNG bytes, in either format.
    pub fn images(&self) -> Vec<String> {
        self.parts()
            .iter()
            .filter_map(|p| match p["type"].as_str() {
                Some("image_url") => p["image_url"]["url"]
                    .as_str()
                    .and_then(|u| u.strip_prefix("data:image/png;base64,"))
                    .map(str::to_string),
                Some("image") => p["source"]["data"].as_str().map(str::to_string),
                _ => None,
            })
            .collect()
    }

    /// What READ gave in this prompt ("" when it gave nothing).
    pub fn reading(&self) -> String {
        self.text()
            .split_once("What READ gave:")
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    }

    /// The id of the element listed with exactly this name: `[id] role "name"`.
    pub fn id_of(&self, name: &str) -> u32 {
        id_in(&self.text(), name)
    }

    /// The list line of the element with this name, with the state its
    /// group gives it (`offscreen below` for a line under `offscreen below:`),
    /// as a model reads the list.
    pub fn line_of(&self, name: &str) -> String {
        let needle = format!("\"{name}\"");
        let mut group = String::new();
        for l in self.text().lines() {
            if let Some(g) = l
                .strip_prefix("offscreen ")
                .and_then(|g| g.strip_suffix(':'))
            {
                group = format!(" offscreen {}", g.replace(',', ""));
            } else if !l.starts_with('[') {
                group.clear();
            } else if l.contains(&needle) {
                return format!("{l}{group}");
            }
        }
        String::new()
    }

    /// The name of the first listed element of this role whose name starts
    /// with `prefix` ("none" when there is none): what a model reads off a
    /// list of results.
    pub fn first_named(&self, role: &str, prefix: &str) -> String {
        // A link's line has no role word.
        let needle = if role == "link" {
            format!("] \"{prefix}")
        } else {
            format!("{role} \"{prefix}")
        };
        self.text()
            .lines()
            .find(|l| l.starts_with('[') && l.contains(&needle))
            .and_then(|l| l.split('"').nth(1))
            .unwrap_or("none")
            .to_string()
    }

    /// The URL of the page the prompt shows (its `URL:` line).
    pub fn url(&self) -> String {
        self.text()
            .lines()
            .find_map(|l| l.strip_prefix("URL: "))
            .unwrap_or_default()
            .to_string()
    }

    /// The task the prompt gives (under `# Task`).
    pub fn task(&self) -> String {
        let text = self.text();
        text.split_once("# Task\n\n")
            .and_then(|(_, rest)| rest.split_once("\n\n# Plan"))
            .map(|(task, _)| task.trim().to_string())
            .unwrap_or_default()
    }

    /// The step the prompt is for (`step N of at most M`), 0 when unknown.
    pub fn step(&self) -> usize {
        let text = self.text();
        text.split_once("(step ")
            .and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The id of the element an element list shows with exactly this name, as
/// a model reads it off `[id] role "name"`.
pub fn id_in(text: &str, name: &str) -> u32 {
    let needle = format!("\"{name}\"");
    text.lines()
        .filter(|l| l.starts_with('[') && l.contains(&needle))
        .find_map(|l| l[1..].split(']').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no element {name:?} in the list:\n{text}"))
}

/// What the scripted model does with one request.
pub enum Reply {
    /// Answer this text, in the request's wire format.
    Text(String),
    /// An HTTP error with a body and an optional Retry-After.
    Status(u16, String, Option<u32>),
    /// 200 with a body that is not the provider's format.
    Raw(String),
    /// No answer at all: the request is left waiting, as a stuck model leaves it.
    Hang,
    /// The reply once the condition holds (a model that takes its time, while
    /// the test does something to the runs under way); at most a minute.
    When(Arc<dyn Fn() -> bool + Send + Sync>, Box<Reply>),
}

/// One entry of a script.
pub type Turn = Box<dyn FnMut(&Received) -> Reply + Send>;

/// A turn that always answers the same text.
pub fn say(text: &str) -> Turn {
    let text = text.to_string();
    Box::new(move |_| Reply::Text(text.clone()))
}

/// A turn that answers from the request.
pub fn reply(f: impl FnMut(&Received) -> String + Send + 'static) -> Turn {
    let mut f = f;
    Box::new(move |r| Reply::Text(f(r)))
}

/// A turn that never answers.
pub fn hang() -> Turn {
    Box::new(|_| Reply::Hang)
}

/// A turn that fails with an HTTP status.
pub fn status(code: u16, retry_after: Option<u32>) -> Turn {
    Box::new(move |_| {
        Reply::Status(
            code,
            json!({"error": {"message": format!("scripted {code}"), "type": "server_error"}})
                .to_string(),
            retry_after,
        )
    })
}

/// A model that does the demo's job search from what it is sent (the
/// task `Search jobs for the role of R in P with …`): the role and the
/// place from the task, the ids from the list, whichever the search
/// button is called.
pub fn job_seeker(r: &Received) -> Reply {
    let url = r.url();
    let task = r.task();
    Reply::Text(if url.contains("index.html") {
        let button = ["Search jobs", "Find jobs"]
            .into_iter()
            .find(|b| !r.line_of(b).is_empty())
            .unwrap_or("Search jobs");
        format!(
            "TYPE:{}:{}\nTYPE:{}:{}\nCLICK:{}",
            r.id_of("Keywords"),
            between(&task, "role of ", " in "),
            r.id_of("Location"),
            between(&task, " in ", " with "),
            r.id_of(button)
        )
    } else if !url.contains("salary=") {
        if r.line_of("Apply filters").contains("offscreen") {
            "SCROLL:down".into()
        } else {
            format!(
                "CLICK:{}\nCLICK:{}\nCLICK:{}",
                r.id_of("50–75 LPA"),
                r.id_of("75–100 LPA"),
                r.id_of("Apply filters")
            )
        }
    } else {
        "COMPLETE:searched the jobs and filtered them to 50–100 LPA".into()
    })
}

/// The words of `text` between `from` and the first `to` after it (empty
/// when either is missing): what a model reads off a sentence.
pub fn between(text: &str, from: &str, to: &str) -> String {
    text.split_once(from)
        .and_then(|(_, rest)| rest.split_once(to))
        .map(|(v, _)| v.to_string())
        .unwrap_or_default()
}

/// A client of the scripted model at `base` (`http://127.0.0.1:PORT`), in
/// OpenAI's wire format, as a program using the library makes one.
pub fn scripted_brain(
    base: &str,
) -> Result<Box<dyn seamark::brain::Brain>, seamark::brain::BrainError> {
    let brain = seamark::brain::OpenAi::new(
        "scripted",
        Some("sk-test".into()),
        Some(format!("{base}/v1")),
        seamark::brain::HttpPolicy::default(),
    )?;
    Ok(Box::new(brain))
}

/// Tokens each answer reports: fixed, so sums can be checked.
pub const INPUT_TOKENS: u64 = 1000;
pub const OUTPUT_TOKENS: u64 = 20;

/// The running scripted model.
pub struct ModelServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ModelServer {
    /// Serves the script; past its end, every turn repeats `then`.
    pub async fn start(script: Vec<Turn>, then: fn() -> Turn) -> ModelServer {
        let script = Mutex::new(VecDeque::from(script));
        Self::answering(move |r| {
            let turn = script.lock().ok().and_then(|mut s| s.pop_front());
            match turn {
                Some(mut t) => t(r),
                None => then()(r),
            }
        })
        .await
    }

    /// Answers every request with `answer`, which reads it (its task, its
    /// step, its list) as a model would: for runs that go on side by side.
    pub async fn answering(
        answer: impl Fn(&Received) -> Reply + Send + Sync + 'static,
    ) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let answer: Answer = Arc::new(answer);
        let log = received.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (log, answer) = (log.clone(), answer.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, log, answer).await;
                });
            }
        });
        ModelServer {
            base,
            received,
            task,
        }
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// How the server answers a request.
type Answer = Arc<dyn Fn(&Received) -> Reply + Send + Sync>;

async fn serve(
    mut stream: TcpStream,
    log: Arc<Mutex<Vec<Received>>>,
    answer: Answer,
) -> std::io::Result<()> {
    // Read the head, then exactly Content-Length bytes of body.
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 65536];
    let head_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.lines();
    let path = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("/")
        .to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let raw = String::from_utf8_lossy(&buf[head_end..]).to_string();
    let received = Received {
        path,
        headers,
        body: serde_json::from_str(&raw).unwrap_or(Value::Null),
    };
    let anthropic = received.is_anthropic();
    let mut reply = answer(&received);
    // Received as soon as it is read, even when the answer takes its time.
    if let Ok(mut l) = log.lock() {
        l.push(received);
    }
    while let Reply::When(ready, then) = reply {
        for _ in 0..1200 {
            if ready() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        reply = *then;
    }
    let (code, body, retry) = match reply {
        Reply::Text(text) => (200, wire(anthropic, &text), None),
        Reply::Status(code, body, retry) => (code, body, retry),
        Reply::Raw(body) => (200, body, None),
        Reply::When(..) => unreachable!("waited for above"),
        Reply::Hang => {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            return Ok(());
        }
    };
    let retry = retry
        .map(|s| format!("Retry-After: {s}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\n{retry}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.flush().await
}

/// An answer in the provider's response format.
fn wire(anthropic: bool, text: &str) -> String {
    if anthropic {
        json!({
            "id": "msg_test", "type": "message", "role": "assistant", "model": "scripted",
            "content": [{ "type": "text", "text": text }],
            "stop_reason": "end_turn",
            "usage": { "input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS }
        })
    } else {
        json!({
            "id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": INPUT_TOKENS, "completion_tokens": OUTPUT_TOKENS, "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS }
        })
    }
    .to_string()
}
