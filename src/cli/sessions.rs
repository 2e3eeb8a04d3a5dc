//! `seamark sessions`: the sessions of a `seamark serve`, from a terminal.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use seamark::coworker::{Account, Client, Session, SessionState};

use super::UsageError;

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// The server (else env SEAMARK_SERVER, else http://127.0.0.1:8470).
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// Its token (else env SEAMARK_TOKEN).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Print JSON instead of lines.
    #[arg(long)]
    json: bool,
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// The sessions, newest first (the default).
    List {
        /// Only those in this state (queued, active, waiting, done, failed,
        /// stopped, review).
        #[arg(long, value_name = "STATE")]
        state: Option<String>,
    },
    /// One session, whole.
    Show {
        /// The session's id.
        id: String,
    },
    /// Queue a task as a session.
    Submit {
        /// What to do, in plain words.
        #[arg(long)]
        task: String,
        /// Where to start (http or https).
        #[arg(long)]
        url: String,
        /// The account it runs as: one session of an account runs at a
        /// time, and each starts with the login the last one left.
        #[arg(long, value_name = "NAME")]
        account: Option<String>,
        /// A run option, as `seamark run`'s flag in snake case: max_steps=5,
        /// allow_domain=example.com (repeat for a list), no_skills=true.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// Answer a session that waits for a person (yes or no for a held
    /// action; a leading ! keeps the answer secret).
    Answer {
        /// The session's id.
        id: String,
        /// The answer.
        answer: String,
    },
    /// Stop a session: at once when queued or waiting, at its next lease
    /// renewal when it runs.
    Stop {
        /// The session's id.
        id: String,
    },
    /// The accounts: their login, secrets, and the session that holds each.
    Accounts,
    /// Define an account, or change its secrets (each as a session names
    /// one: NAME=env:SEAMARK_SECRET_… or NAME=@FILE).
    Account {
        /// Its name.
        name: String,
        /// A secret its sessions get (repeatable).
        #[arg(long = "secret", value_name = "NAME=env:VAR|NAME=@FILE")]
        secrets: Vec<String>,
    },
    /// Wait until a session waits for a person or has ended; print it.
    Wait {
        /// The session's id.
        id: String,
        /// Give up after this many seconds (exit status 1).
        #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
        timeout: u64,
    },
}

/// `NAME=VALUE` pairs as a session's options: a value that reads as JSON
/// (a number, true) is taken as such, a name given twice is a list.
fn options(set: &[String]) -> Result<serde_json::Map<String, serde_json::Value>, UsageError> {
    let mut map = serde_json::Map::new();
    for pair in set {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(UsageError(format!("--set {pair:?}: give NAME=VALUE")));
        };
        let value = serde_json::from_str::<serde_json::Value>(value)
            .ok()
            .filter(|v| v.is_number() || v.is_boolean())
            .unwrap_or_else(|| serde_json::Value::String(value.to_string()));
        match map.get_mut(name) {
            Some(serde_json::Value::Array(items)) => items.push(value),
            Some(first) => *first = serde_json::Value::Array(vec![first.clone(), value]),
            None => {
                map.insert(name.to_string(), value);
            }
        }
    }
    Ok(map)
}

fn line(s: &Session) -> String {
    let mut line = format!("{}  {:<8} {:>3} steps  {}", s.id, s.status, s.steps, s.task);
    if let Some(account) = &s.account {
        line.push_str(&format!("  (as {account})"));
    }
    if let Some(q) = s
        .question
        .as_ref()
        .filter(|_| s.status == SessionState::Waiting)
    {
        line.push_str(&format!("\n    asks: {q}"));
    }
    line
}

fn account_line(a: &Account) -> String {
    let holder = match &a.holder {
        Some(id) => format!("in use by session {id}"),
        None => "free".into(),
    };
    let mut line = format!(
        "{}  login {:<6} {holder} · {} queued",
        a.name, a.login, a.queued
    );
    if !a.secrets.is_empty() {
        line.push_str(&format!("\n    secrets: {}", a.secrets.join(", ")));
    }
    if !a.note.is_empty() {
        line.push_str(&format!("\n    {}", a.note));
    }
    line
}

pub async fn run(args: SessionsArgs) -> anyhow::Result<ExitCode> {
    let server = args
        .server
        .clone()
        .or_else(|| std::env::var("SEAMARK_SERVER").ok())
        .unwrap_or_else(|| "http://127.0.0.1:8470".into());
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("SEAMARK_TOKEN").ok());
    let client = Client::new(&server, token).map_err(|e| UsageError(format!("--server: {e}")))?;
    let show = |s: &Session| {
        if args.json {
            show!("{}", serde_json::json!(s));
        } else {
            show!("{}\n    {} · {}", line(s), s.reason, s.run_dir);
        }
    };
    match args.action.unwrap_or(Action::List { state: None }) {
        Action::List { state } => {
            let sessions = client.list(state.as_deref()).await?;
            if args.json {
                show!("{}", serde_json::json!({ "sessions": sessions }));
            } else {
                for s in &sessions {
                    show!("{}", line(s));
                }
            }
        }
        Action::Show { id } => show(&client.get(&id).await?),
        Action::Submit {
            task,
            url,
            account,
            set,
        } => {
            let mut body = options(&set)?;
            body.insert("task".into(), task.into());
            body.insert("url".into(), url.into());
            if let Some(account) = account {
                body.insert("account".into(), account.into());
            }
            let id = client.submit(serde_json::Value::Object(body)).await?;
            show!("{id}");
        }
        Action::Accounts => {
            let accounts = client.accounts().await?;
            if args.json {
                show!("{}", serde_json::json!({ "accounts": accounts }));
            }
            for a in accounts.iter().filter(|_| !args.json) {
                show!("{}", account_line(a));
            }
        }
        Action::Account { name, secrets } => {
            let spec = serde_json::json!({ "name": name, "secrets": secrets });
            let account = client.define_account(spec).await?;
            if args.json {
                show!("{}", serde_json::json!(account));
            } else {
                show!("{}", account_line(&account));
            }
        }
        Action::Answer { id, answer } => show(&client.answer(&id, &answer).await?),
        Action::Stop { id } => show(&client.stop(&id).await?),
        Action::Wait { id, timeout } => return wait(&client, &id, timeout, show).await,
    }
    Ok(ExitCode::SUCCESS)
}

/// Waits until a session waits for a person or has ended, and shows it;
/// exits 0 when done, `NEEDS_INPUT` when it waits, 1 otherwise.
async fn wait(
    client: &Client,
    id: &str,
    timeout: u64,
    show: impl Fn(&Session),
) -> anyhow::Result<ExitCode> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout);
    loop {
        let s = client.get(id).await?;
        if s.status.ended() || s.status == SessionState::Waiting {
            show(&s);
            return Ok(if s.status == SessionState::Done {
                ExitCode::SUCCESS
            } else if s.status == SessionState::Waiting {
                ExitCode::from(super::NEEDS_INPUT)
            } else {
                ExitCode::from(1)
            });
        }
        if tokio::time::Instant::now() > deadline {
            tell!(
                "seamark: session {id} is still {} after {timeout} s",
                s.status
            );
            return Ok(ExitCode::from(1));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
