//! `seamark serve` (the API, the sessions page, and workers) and `seamark
//! worker` (workers only, for more machines on one PostgreSQL queue).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use seamark::coworker::api::{self, ApiConfig, RunArgsRefused};
use seamark::coworker::kept_browser::KeptBrowser;
use seamark::coworker::{OptionKind, OptionSpec, Store, Worker, WorkerConfig};
use seamark::listen::Gate;
use tokio::sync::watch;

use super::UsageError;

/// Where the sessions are kept, and how workers run them.
#[derive(Debug, Args)]
pub struct QueueArgs {
    /// The sessions' database: a SQLite file (made if missing), or
    /// postgres://user@host/db for a queue several machines share.
    #[arg(
        long,
        value_name = "FILE|postgres://…",
        default_value = "seamark-serve/sessions.db"
    )]
    db: String,
    /// Workers in this process: sessions run at once here.
    #[arg(long, value_name = "N", default_value_t = 2)]
    workers: usize,
    /// Seconds a worker's hold on a session lasts unless renewed (every
    /// third of it): after a worker dies, another goes on with its session
    /// this long after its last renewal.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = super::at_least_one)]
    lease: usize,
    /// A webhook: each session that starts waiting for a person is POSTed
    /// there as JSON (id, task, question, the held action, the page's link).
    #[arg(long, value_name = "URL", value_parser = webhook)]
    notify: Option<String>,
    /// The folder of secrets kept for sessions: a session's
    /// `secret: "NAME=@FILE"` names a file in it (no other file of this
    /// machine), as `NAME=env:SEAMARK_SECRET_…` names one of the variables
    /// kept for sessions (no other variable). Every worker needs its own
    /// copy.
    #[arg(long, value_name = "DIR", default_value = "seamark-serve/secrets")]
    secrets: PathBuf,
    /// This process's own folder of run directories: a cache of what the
    /// database keeps of each session's run (any worker rebuilds a run
    /// from the database when it takes its session), never shared.
    #[arg(long, value_name = "DIR", default_value = "seamark-serve/runs")]
    runs: PathBuf,
    /// Launch a browser for each session's run, instead of one kept
    /// browser this process's runs each open a context of their own in.
    #[arg(long)]
    launch_each: bool,
    /// Where each session's run serves its live view (watched and taken
    /// over through the sessions page, which passes it on): an address the
    /// server can reach, any free port of it (default 127.0.0.1, for a
    /// server on this machine).
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    live_on: std::net::IpAddr,
    /// How long a session whose agent asks for a person's hands (HANDS)
    /// keeps its browser open for them, in seconds; then the browser
    /// closes, its state kept, and the session waits on as for an answer.
    /// Also how long a person may leave a browser they took untouched.
    #[arg(long, value_name = "SECONDS", default_value_t = seamark::live::HANDS_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    hands_timeout: u64,
}

/// This machine's name ("worker" when it cannot be read).
fn machine_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".into())
}

/// A webhook's address: http or https.
fn webhook(text: &str) -> Result<String, String> {
    match url::Url::parse(text) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(text.to_string()),
        Ok(_) => Err("the webhook is an http or https URL".into()),
        Err(e) => Err(format!("not a URL: {e}")),
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on. Another address than loopback wants a
    /// token (--token or env SEAMARK_TOKEN).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8470")]
    listen: SocketAddr,
    /// The bearer token every route wants (else env SEAMARK_TOKEN; none on
    /// loopback when neither is set).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Another host name the server answers to (repeatable): a request
    /// whose Host names none of them is refused, so that a web page on a
    /// name rebound to this address cannot reach the API. By default
    /// loopback's names and the address it listens on.
    #[arg(long, value_name = "NAME", value_parser = host_name)]
    allow_host: Vec<String>,
    #[command(flatten)]
    queue: QueueArgs,
}

/// A host name as a request's Host gives it (an IPv6 address bracketed).
fn host_name(text: &str) -> Result<String, String> {
    let name = text.trim().to_ascii_lowercase();
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    let fine = !bare.is_empty()
        && (bare.parse::<std::net::IpAddr>().is_ok()
            || bare.split('.').all(|l| {
                !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            }));
    if !fine {
        return Err("a host name (example.com) or an address, without a port".into());
    }
    Ok(match bare.parse::<std::net::Ipv6Addr>() {
        Ok(ip) => format!("[{ip}]"),
        Err(_) => name,
    })
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The address of the sessions page, for the webhook's links.
    #[arg(long, value_name = "URL")]
    page: Option<String>,
    #[command(flatten)]
    queue: QueueArgs,
}

/// The run options a session may set: `seamark run`'s flags, in snake case.
pub fn run_options() -> Vec<OptionSpec> {
    use clap::Args as _;
    let command = super::run::RunArgs::augment_args(clap::Command::new("run"));
    command
        .get_arguments()
        .filter(|a| a.get_long().is_some())
        .filter(|a| !matches!(a.get_id().as_str(), "task" | "url" | "help" | "version"))
        .map(|a| OptionSpec {
            name: a.get_id().as_str().to_string(),
            kind: match a.get_action() {
                clap::ArgAction::SetTrue => OptionKind::Flag,
                clap::ArgAction::Append => OptionKind::Values,
                _ => OptionKind::Value,
            },
        })
        .collect()
}

/// A session's run, parsed as `seamark run` will: a value its flag would
/// refuse is refused at submission.
fn check_run(args: &[String]) -> Result<(), RunArgsRefused> {
    parsed_run(args).map(drop)
}

/// [`check_run`], and the model the run would use must be one this
/// process's workers can call: a session none of them could run is
/// refused now, naming what is missing, not failed at its first step.
fn check_run_and_model(args: &[String]) -> Result<(), RunArgsRefused> {
    let matches = parsed_run(args)?;
    usable_model(matches.get_one::<String>("model")).map_err(|reason| RunArgsRefused { reason })
}

/// Why the model a run names (else `SEAMARK_MODEL`) cannot be called with
/// this process's environment, if it cannot.
fn usable_model(flag: Option<&String>) -> Result<(), String> {
    let name = super::run::model_name(flag).map_err(|e| e.0)?;
    seamark::brain::from_model_name(&name, seamark::brain::HttpPolicy::default())
        .map(drop)
        .map_err(|e| format!("model {name}: {e}"))
}

fn parsed_run(args: &[String]) -> Result<clap::ArgMatches, RunArgsRefused> {
    use clap::Args as _;
    let command = super::run::RunArgs::augment_args(clap::Command::new("run"))
        .color(clap::ColorChoice::Never);
    let argv = std::iter::once("run".to_string()).chain(args.iter().cloned());
    command.try_get_matches_from(argv).map_err(|e| {
        let text = e.render().to_string();
        RunArgsRefused {
            reason: text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string(),
        }
    })
}

impl QueueArgs {
    async fn store(&self) -> anyhow::Result<Store> {
        if self.workers > 64 {
            return Err(UsageError("--workers: at most 64 in one process".into()).into());
        }
        Store::open(&self.db).await.map_err(|e| {
            anyhow::Error::from(UsageError(masked(
                &self.db,
                &format!("--db {}: {e}", shown_db(&self.db)),
            )))
        })
    }

    /// Starts the workers; they stop when `shutdown` turns true.
    fn start(
        &self,
        store: &Store,
        page: Option<String>,
        shutdown: &watch::Receiver<bool>,
    ) -> anyhow::Result<Vec<tokio::task::JoinHandle<()>>> {
        let program = std::env::current_exe()
            .map_err(|e| UsageError(format!("seamark's own binary cannot be found: {e}")))?;
        let host = machine_name();
        let spec = Arc::new(run_options());
        let secrets = std::path::absolute(&self.secrets)
            .map_err(|e| UsageError(format!("--secrets {}: {e}", self.secrets.display())))?;
        super::writable_folder("--runs", &self.runs)?;
        std::fs::create_dir_all(&self.runs)?;
        let runs = std::fs::canonicalize(&self.runs)?;
        // One browser for this process's workers, launched at the first
        // session: each run opens a context of its own in it.
        let browser = (!self.launch_each).then(|| Arc::new(KeptBrowser::new()));
        Ok((1..=self.workers)
            .map(|n| {
                let config = WorkerConfig {
                    program: program.clone(),
                    name: format!("{host}-{}-{n}", std::process::id()),
                    lease: Duration::from_secs(self.lease as u64),
                    poll: Duration::from_millis(250),
                    notify: self.notify.clone(),
                    page: page.clone(),
                    spec: spec.clone(),
                    secrets: secrets.clone(),
                    runs: runs.clone(),
                    browser: browser.clone(),
                    live: Some(std::net::SocketAddr::new(self.live_on, 0)),
                    hands_timeout: Duration::from_secs(self.hands_timeout),
                };
                tokio::spawn(Worker::new(store.clone(), config).run(shutdown.clone()))
            })
            .collect())
    }
}

/// The database as it may be shown: a PostgreSQL URL without its
/// password, whether in its user part or its query (`?password=`).
fn shown_db(db: &str) -> String {
    masked(db, db)
}

/// `text` with every password `db` carries put out of sight (`***`), as
/// given and percent-decoded: what an error or a banner says of the
/// database never shows one.
fn masked(db: &str, text: &str) -> String {
    let Ok(url) = url::Url::parse(db) else {
        return text.to_string();
    };
    let mut secrets: Vec<String> = url.password().map(str::to_string).into_iter().collect();
    secrets.extend(
        url.query_pairs()
            .filter(|(k, _)| k.to_ascii_lowercase().ends_with("password"))
            .map(|(_, v)| v.into_owned()),
    );
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        let decoded = percent_encoding::percent_decode_str(secret)
            .decode_utf8_lossy()
            .into_owned();
        let encoded: String = url::form_urlencoded::byte_serialize(decoded.as_bytes()).collect();
        for form in [secret.as_str(), decoded.as_str(), encoded.as_str()] {
            out = out.replace(form, "***");
        }
    }
    out
}

pub async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("SEAMARK_TOKEN").ok())
        .filter(|t| !t.trim().is_empty());
    if token.is_none() && !args.listen.ip().is_loopback() {
        return Err(UsageError(format!(
            "--listen {}: a server others can reach wants a token: give --token or set \
             SEAMARK_TOKEN",
            args.listen
        ))
        .into());
    }
    let store = args.queue.store().await?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| UsageError(format!("--listen {}: {e}", args.listen)))?;
    let address = listener.local_addr()?;
    let page = format!("http://{address}");
    let (stop, shutdown) = watch::channel(false);
    let workers = args.queue.start(&store, Some(page.clone()), &shutdown)?;
    tell!(
        "seamark serve: {page} · sessions and their runs in {} · {} workers",
        shown_db(&args.queue.db),
        args.queue.workers
    );
    // Runs here use this process's environment: a model it cannot call is
    // said now, and sessions that would use it are refused. Workers
    // elsewhere (`--workers 0`) have their own.
    let has_workers = args.queue.workers > 0;
    if has_workers {
        if let Err(why) = usable_model(None) {
            tell!(
                "seamark serve: warning: {why}. Sessions that name no `model` of their own are \
                 refused until this is set"
            );
        }
    }
    let mut hosts = Gate::default_hosts(address);
    if address.ip().is_unspecified() {
        // Every address: the machine's own name is one people use.
        hosts.extend(host_name(&machine_name()).ok());
    }
    hosts.extend(args.allow_host.iter().cloned());
    let config = ApiConfig {
        gate: Gate {
            token,
            hosts,
            cookie: "seamark_token",
        },
        spec: Arc::new(run_options()),
        check: if has_workers {
            check_run_and_model
        } else {
            check_run
        },
    };
    let server = tokio::spawn(api::serve(listener, store, config, shutdown.clone()));
    until_signal(stop, workers).await;
    server.abort();
    Ok(super::signals::interrupted())
}

pub async fn worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let store = args.queue.store().await?;
    let (stop, shutdown) = watch::channel(false);
    let workers = args.queue.start(&store, args.page.clone(), &shutdown)?;
    tell!(
        "seamark worker: {} workers on {}",
        args.queue.workers,
        shown_db(&args.queue.db)
    );
    until_signal(stop, workers).await;
    Ok(super::signals::interrupted())
}

/// Waits for Ctrl-C, SIGTERM or SIGHUP; then the workers interrupt their
/// runs (each writes its journal's end) and queue their sessions again.
async fn until_signal(stop: watch::Sender<bool>, workers: Vec<tokio::task::JoinHandle<()>>) {
    let signal = super::signals::Signals::listen().first().await;
    tell!(
        "seamark: {}: stopping the runs under way; their sessions are queued again",
        signal.name()
    );
    let _ = stop.send(true);
    let all = futures::future::join_all(workers);
    if tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .is_err()
    {
        tell!("seamark: some runs did not stop within 60 s");
    }
}
