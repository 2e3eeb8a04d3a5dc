//! A worker: takes a session under a lease, runs it as a `seamark run` (or
//! `seamark resume`) process of its own, renews the lease while it runs, and
//! leaves the session as the run left it. A run ends when it asks: the
//! browser closes with its process, and the session waits holding nothing.
//! A worker that loses its lease (it stalled past it, and another took the
//! session) kills its run at once, so that no session runs twice.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use super::accounts::Login;
use super::kept_browser::KeptBrowser;
use super::live_view::LiveLink;
use super::request::{OptionSpec, SessionRequest};
use super::runs::RunSync;
use super::store::{Ending, Taken, SECRET_TAKEN};
use super::{SessionState, Store};
use crate::agent::Resume;
use crate::storage::StorageState;

/// How often a session is taken over again after its workers died, before
/// it goes to review: a run that kills its worker each time is not retried
/// for ever.
pub const MAX_TAKE_OVERS: i64 = 3;

/// How a worker works.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The `seamark` binary each run is started from.
    pub program: PathBuf,
    /// The worker's name, as sessions record who holds them.
    pub name: String,
    /// How long a lease lasts unless renewed (renewed every third of it).
    pub lease: Duration,
    /// How long an idle worker waits before looking for work again.
    pub poll: Duration,
    /// A webhook told of each session that starts waiting for a person.
    pub notify: Option<String>,
    /// The address of the sessions page, for the webhook's link.
    pub page: Option<String>,
    /// The run options a session may set.
    pub spec: Arc<Vec<OptionSpec>>,
    /// The folder of secrets kept for sessions (`NAME=@FILE` names a file
    /// in it), absolute.
    pub secrets: PathBuf,
    /// This worker's own folder of run directories: a cache of what the
    /// database keeps, rebuilt from it when a session is taken.
    pub runs: PathBuf,
    /// The browser its process keeps, that each run opens a context in;
    /// none: each run launches its own.
    pub browser: Option<Arc<KeptBrowser>>,
    /// Where each run serves its live view (port 0: any free one); none:
    /// runs have none.
    pub live: Option<std::net::SocketAddr>,
    /// How long a run that asks for a person's hands keeps its browser
    /// open for them.
    pub hands_timeout: Duration,
}

/// The one argument of a run a worker starts: the rest come on its
/// standard input, as a JSON array (`seamark --args-on-stdin`).
pub const ARGS_ON_STDIN: &str = "--args-on-stdin";

/// A worker over a store.
#[derive(Debug, Clone)]
pub struct Worker {
    store: Store,
    config: WorkerConfig,
}

/// What the run of a session became.
enum Exit {
    /// It ended, as told.
    Ended(Ending),
    /// Another worker holds the session now, or this one is shutting
    /// down: the session is not this worker's to end.
    Let(Option<String>),
}

impl Worker {
    /// A worker taking sessions from `store`.
    pub fn new(store: Store, config: WorkerConfig) -> Worker {
        Worker { store, config }
    }

    /// Takes and runs sessions until `shutdown` turns true; a run under way
    /// then is interrupted and its session queued again for any worker.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        while !*shutdown.borrow() {
            match self.store.take(&self.config.name, self.config.lease).await {
                Ok(Some(taken)) => self.work_on(taken, &mut shutdown).await,
                Ok(None) => {
                    // Woken at once by a session queued in this process;
                    // one queued elsewhere is found at the next look.
                    tokio::select! {
                        _ = tokio::time::sleep(self.config.poll) => {}
                        _ = shutdown.changed() => {}
                        _ = self.store.queued() => {}
                    }
                }
                Err(e) => {
                    tracing::warn!("worker {}: {e}", self.config.name);
                    let _ = tokio::time::timeout(self.config.poll, shutdown.changed()).await;
                }
            }
        }
    }

    async fn work_on(&self, mut taken: Taken, shutdown: &mut watch::Receiver<bool>) {
        let id = taken.session.id.clone();
        // The run goes on in this worker's folder, from what the database
        // keeps of it (another worker, or this one before, ran it so far).
        let dir = self.config.runs.join(&id);
        taken.session.run_dir = dir.display().to_string();
        let mut sync = RunSync::default();
        let rebuilt = match self.store.restore_run(&id, &dir).await {
            Ok(rebuilt) => self.store.ran_in(&id, &dir).await.map(|()| rebuilt),
            Err(e) => Err(e),
        };
        match rebuilt {
            Ok(true) => sync.already(&dir),
            Ok(false) => {}
            Err(e) => {
                let why = format!("its run could not be rebuilt on {}: {e}", self.config.name);
                if let Err(e) = self.store.release(&id, &self.config.name, &why).await {
                    tracing::warn!("worker {}: session {id}: {e}", self.config.name);
                }
                return;
            }
        }
        let lent = self.lend(&taken).await;
        let link = self.config.live.and_then(|_| LiveLink::new());
        let exit = match self.prepare(&taken, &lent) {
            Ok(mut args) => {
                // Flags go right after the subcommand: a run directory
                // comes last, after `--`.
                if let (Some(listen), Some(_), false) = (self.config.live, &link, args.is_empty()) {
                    let live = LiveLink::args(listen, self.config.hands_timeout);
                    args.splice(1..1, live);
                }
                let args = self.in_kept_browser(args).await;
                let run = (&mut sync, link.as_ref());
                self.run_child(&taken, args, run, shutdown).await
            }
            Err(ending) => Exit::Ended(*ending),
        };
        // What the run left (its report, its last state) is kept before
        // the session says it ended: a page that shows the ending finds it.
        if !matches!(exit, Exit::Let(None)) {
            sync.sync(&self.store, &id, &dir).await;
            self.take_back(&taken.session, &lent, &exit).await;
        }
        lent.clear();
        let result = match exit {
            Exit::Ended(ending) => {
                let waiting = ending.state == SessionState::Waiting;
                let question = ending.question.clone();
                let finished = self.store.finish(&id, &self.config.name, &ending).await;
                if waiting && matches!(finished, Ok(true)) {
                    let question = question.as_deref().unwrap_or_default();
                    self.notify(&taken, question, ending.hold.as_ref()).await;
                }
                finished.map(|_| ())
            }
            Exit::Let(Some(why)) => self.store.release(&id, &self.config.name, &why).await,
            Exit::Let(None) => Ok(()),
        };
        if let Err(e) = result {
            tracing::warn!("worker {}: session {id}: {e}", self.config.name);
        }
    }

    /// The run's arguments, with the browser its worker keeps: the run
    /// opens a context of its own there. One that cannot be had is said,
    /// and the run launches its own.
    async fn in_kept_browser(&self, mut args: Vec<String>) -> Vec<String> {
        let Some(kept) = &self.config.browser else {
            return args;
        };
        match kept.websocket().await {
            // After the command's name (`run` or `resume`), before any `--`.
            Ok(ws) => args.insert(1.min(args.len()), format!("--worker-browser={ws}")),
            Err(e) => tracing::warn!(
                "worker {}: its browser cannot be had, the run launches its own: {e}",
                self.config.name
            ),
        }
        args
    }

    /// What a session's run is lent: its account's login and secrets, and
    /// the approved skills (in a folder of its own).
    async fn lend(&self, taken: &Taken) -> Lent {
        let session = &taken.session;
        let login = match &session.account {
            Some(account) => match self.store.account_login(account).await {
                Ok((state, secrets)) => Some(AccountLogin::of(state.as_deref(), secrets)),
                Err(e) => {
                    let why = format!("its account {account} cannot be read: {e}");
                    Some(AccountLogin::unreadable(why))
                }
            },
            None => None,
        };
        let no_skills = session.options.get("no_skills") == Some(&Value::Bool(true));
        let skills = if no_skills {
            None
        } else {
            let folder = self.config.runs.join(".skills").join(&session.id);
            let store = crate::skill::SkillStore::new(&folder);
            let written = match self.store.approved_skills().await {
                Ok(skills) => {
                    let _ = std::fs::remove_dir_all(&folder);
                    skills.iter().try_for_each(|k| store.save(k).map(drop))
                }
                Err(e) => Err(crate::skill::SkillError::Invalid(e.to_string())),
            };
            match written {
                Ok(()) => Some(folder),
                Err(e) => {
                    // The run goes on without skills: the model does it all.
                    tracing::warn!("session {}: no skills lent: {e}", session.id);
                    None
                }
            }
        };
        Lent { login, skills }
    }

    /// Takes back what a run was lent: its account's login as the run
    /// left it, what it learned (proposed for review), and the skill it
    /// had to hand over to the model (marked stale).
    async fn take_back(&self, session: &super::Session, lent: &Lent, exit: &Exit) {
        if let (Some(account), Some(login)) = (&session.account, &lent.login) {
            self.save_login(account, session, login).await;
        }
        let Some(folder) = &lent.skills else {
            return;
        };
        let proposed = crate::skill::SkillStore::new(folder.join(crate::skill::PROPOSED));
        for listed in proposed.list() {
            let Ok(skill) = listed.skill else { continue };
            if let Err(e) = self.store.propose_skill(&skill, &session.id).await {
                tracing::warn!("session {}: skill {}: {e}", session.id, skill.name);
            }
        }
        let Exit::Ended(ending) = exit else { return };
        let report = ending.result.as_ref().map(|r| &r["skill"]);
        let followed = report.and_then(|r| r["followed"].as_str());
        let took_over = report.and_then(|r| r["took_over"].as_str());
        if let (Some(name), Some(why)) = (followed, took_over) {
            if let Err(e) = self.store.mark_stale(name, why, &session.id).await {
                tracing::warn!("session {}: skill {name}: {e}", session.id);
            }
        }
    }

    /// Saves the browser state a session's run left as its account's
    /// login, judged against the login it started with.
    async fn save_login(&self, account: &str, session: &super::Session, login: &AccountLogin) {
        let path = Path::new(&session.run_dir).join(crate::storage::RUN_STATE);
        // A run that took no step kept no state: the login is as it was.
        let Ok(after) = StorageState::read(&path) else {
            return;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let judged = Login::judged(login.state.as_ref(), &after, now);
        let saved = match serde_json::to_string(&after) {
            Ok(json) => {
                self.store
                    .save_login(account, &session.id, &json, &judged)
                    .await
            }
            Err(e) => Err(super::CoworkerError::Corrupt(e.to_string())),
        };
        if let Err(e) = saved {
            tracing::warn!("session {}: account {account}: its login: {e}", session.id);
        }
    }

    /// The arguments of the run that goes on with a session, or how it
    /// ends without one.
    fn prepare(&self, taken: &Taken, lent: &Lent) -> Result<Vec<String>, Box<Ending>> {
        let login = lent.login.as_ref();
        let session = &taken.session;
        let dir = Path::new(&session.run_dir);
        let mut request = SessionRequest {
            task: session.task.clone(),
            url: session.url.clone(),
            account: session.account.clone(),
            options: session.options.clone(),
        };
        if let Some(login) = login {
            if let Some(why) = &login.unreadable {
                return Err(Box::new(ended(SessionState::Failed, why.clone())));
            }
            login.lend_secrets(&mut request);
        }
        if taken.lapses > MAX_TAKE_OVERS {
            return Err(Box::new(ended(
                SessionState::Review,
                format!(
                    "its workers died {} times running it: a person must look at {} before it \
                     runs again",
                    taken.lapses,
                    dir.display()
                ),
            )));
        }
        let journal = dir.join(crate::journal::JOURNAL);
        if !journal_started(&journal) {
            return self.fresh_run(&request, dir, journal.exists(), lent);
        }
        // A run that ended, its worker gone before it said so: the ending
        // is the journal's, not a run to go on with (a done run is not
        // resumed). One that was interrupted, or asks, goes on as before.
        // Only a take-over can find one: the journal is read for it then.
        if let Some(result) = taken.taken_over.then(|| ended_run(dir)).flatten() {
            return Err(Box::new(self.ending(dir, &result.to_string(), "", false)));
        }
        let resume = match Resume::read(dir) {
            Ok(resume) => resume,
            Err(e) => {
                return Err(Box::new(ended(
                    SessionState::Review,
                    format!(
                        "its run cannot go on, so what its last step did cannot be checked: {e}"
                    ),
                )))
            }
        };
        // The answer goes to a run that still waits for one: a run cut off
        // after it took the answer goes on without it.
        let answer = taken.answer.as_ref().filter(|_| resume.question.is_some());
        match answer {
            None if resume.question.is_some() => {
                // Its worker died after the run asked, before the session said so.
                return Err(Box::new(waiting(&resume)));
            }
            Some(a) if a == SECRET_TAKEN => {
                // A secret answer leaves the store as a worker takes it: one
                // that died before its run took the answer lost it.
                let mut again = waiting(&resume);
                again.reason = "the secret answer was lost with the worker that took it: \
                                give it again"
                    .into();
                return Err(Box::new(again));
            }
            _ => {}
        }
        // A resumed run starts from the account's login as it is now:
        // another session of the account may have changed it meanwhile.
        if let Some(login) = login {
            login.lend(dir, true)?;
        }
        let mut args = vec![
            "resume".to_string(),
            "--json".to_string(),
            // Nobody is at a worker's terminal: what would be asked of a
            // person waits for them on the page.
            "--park".to_string(),
        ];
        if let Some(answer) = answer {
            args.push(format!("--answer={answer}"));
        }
        let secrets = request
            .secret_args(Some(&self.config.secrets))
            .map_err(|e| Box::new(ended(SessionState::Failed, e.to_string())))?;
        args.extend(secrets);
        // The run directory last, after `--`: it is a value, never a flag.
        args.extend(["--".to_string(), session.run_dir.clone()]);
        Ok(args)
    }

    fn fresh_run(
        &self,
        request: &SessionRequest,
        dir: &Path,
        begun: bool,
        lent: &Lent,
    ) -> Result<Vec<String>, Box<Ending>> {
        if begun {
            // A journal without a start: the run died before it began.
            // What it left goes (as `--overwrite` would), before the
            // account's login is put there.
            std::fs::remove_dir_all(dir).map_err(|e| {
                Box::new(ended(
                    SessionState::Failed,
                    format!("its run directory {} cannot be cleared: {e}", dir.display()),
                ))
            })?;
        }
        let mut request = request.clone();
        // Nobody is at a worker's terminal: a destructive action waits for
        // a person's yes on the page.
        let asks = request
            .options
            .get("confirm")
            .is_none_or(|c| c.as_str() == Some("ask"));
        if asks {
            request
                .options
                .insert("confirm".into(), Value::String("park".into()));
        }
        let session = request
            .run_args(&self.config.spec, Some(&self.config.secrets))
            .map_err(|e| Box::new(ended(SessionState::Failed, e.to_string())))?;
        let mut args = vec![
            "run".to_string(),
            format!("--out={}", dir.display()),
            "--json".into(),
        ];
        args.extend(session);
        let login = lent.login.as_ref();
        if let Some(path) = login.map(|l| l.lend(dir, false)).transpose()?.flatten() {
            args.push(format!("--storage-state={}", path.display()));
        }
        if let Some(folder) = &lent.skills {
            // The approved skills only; what the run learns is proposed.
            args.push(format!("--skills={}", folder.display()));
            args.push("--review-skills".into());
        }
        Ok(args)
    }

    async fn run_child(
        &self,
        taken: &Taken,
        args: Vec<String>,
        (sync, link): (&mut RunSync, Option<&LiveLink>),
        shutdown: &mut watch::Receiver<bool>,
    ) -> Exit {
        let session = &taken.session;
        let dir = PathBuf::from(&session.run_dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Exit::Ended(ended(
                SessionState::Failed,
                format!("its run directory {} cannot be made: {e}", dir.display()),
            ));
        }
        // The arguments go on standard input, not the command line: a
        // secret answer is among them, and `ps` shows every command line.
        let mut command = Command::new(&self.config.program);
        command
            .arg(ARGS_ON_STDIN)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // A worker killed with SIGKILL takes its runs (and their browsers)
        // with it: the session's lease lapses, and another worker goes on.
        crate::browser::tie_to_this_process(&mut command);
        if let Some(link) = link {
            link.give_to(&mut command);
        }
        let (mut child, mirrored) = match self.spawn_mirrored(&session.id, &mut command) {
            Ok(both) => both,
            Err(why) => return Exit::Ended(ended(SessionState::Failed, why)),
        };
        if let Some(mut stdin) = child.stdin.take() {
            let given = serde_json::to_vec(&args).unwrap_or_default();
            // Dropped once written: the run reads to its end.
            if let Err(e) = stdin.write_all(&given).await {
                tracing::warn!("session {}: its run's arguments: {e}", session.id);
            }
        }
        let stderr = child.stderr.take();
        let log = tokio::spawn(follow_log(
            self.store.clone(),
            session.id.clone(),
            dir.join("worker.log"),
            stderr,
        ));
        let mut stdout = child.stdout.take();
        let out = tokio::spawn(async move {
            let mut text = String::new();
            if let Some(out) = stdout.as_mut() {
                let _ = out.take(1 << 20).read_to_string(&mut text).await;
            }
            text
        });
        let watch = self.watch(&session.id, &mut child, (sync, &dir), shutdown);
        let watched = tokio::select! {
            watched = watch => watched,
            never = self.follow(taken, link) => match never {},
        };
        let _ = mirrored.await;
        let tail = log.await.unwrap_or_default();
        let printed = out.await.unwrap_or_default();
        match watched {
            Watched::Exited { stop_asked } => {
                Exit::Ended(self.ending(&dir, &printed, &tail, stop_asked))
            }
            Watched::Lost => Exit::Let(None),
            Watched::ShutDown => {
                // A run that ended on its own as the worker shut down keeps
                // its ending; one the shutdown interrupted is queued again.
                let ending = self.ending(&dir, &printed, &tail, false);
                let interrupted = ending
                    .result
                    .as_ref()
                    .is_none_or(|r| r["status"] == "interrupted");
                if interrupted {
                    Exit::Let(Some(
                        "its worker shut down: queued again, to go on from its journal".into(),
                    ))
                } else {
                    Exit::Ended(ending)
                }
            }
        }
    }

    /// Follows the run's live view, if it has one, for as long as the run
    /// lasts: the webhook is told each time the agent asks for hands.
    async fn follow(&self, taken: &Taken, link: Option<&LiveLink>) -> std::convert::Infallible {
        let Some(link) = link else {
            return std::future::pending().await;
        };
        let asked = |why: String| async move {
            let question = crate::agent::hands_question(&why);
            self.notify(taken, &question, None).await;
        };
        let (id, name) = (&taken.session.id, &self.config.name);
        link.follow(&self.store, id, name, asked).await
    }

    /// Starts a session's run with its journal mirrored to the store: each
    /// line and saved file is stored before the run goes on.
    fn spawn_mirrored(
        &self,
        id: &str,
        command: &mut Command,
    ) -> Result<(Child, tokio::task::JoinHandle<()>), String> {
        let (mut mirror, ends) = crate::mirror::pipes()
            .map_err(|e| format!("its run's journal could not be mirrored: {e}"))?;
        ends.give_to(command);
        let spawned = command.spawn();
        // The run holds its ends now: the mirror ends when the run does.
        drop(ends);
        let child = spawned.map_err(|e| {
            format!(
                "its run could not start ({}): {e}",
                self.config.program.display()
            )
        })?;
        let store = self.store.clone();
        let id = id.to_string();
        let mirrored = tokio::spawn(async move {
            while let Ok(Some(frame)) = mirror.next().await {
                let stored = store.mirrored(&id, &frame).await;
                if let Err(e) = &stored {
                    tracing::warn!("session {id}: its journal was not stored: {e}");
                }
                if mirror.answer(stored.is_ok()).await.is_err() {
                    break;
                }
            }
        });
        Ok((child, mirrored))
    }

    /// Waits for the run, renewing the lease; stops it when a person asks,
    /// when the worker shuts down, and kills it when the lease is lost.
    async fn watch(
        &self,
        id: &str,
        child: &mut Child,
        (sync, dir): (&mut RunSync, &Path),
        shutdown: &mut watch::Receiver<bool>,
    ) -> Watched {
        let every = self.config.lease / 3;
        let mut renewed = Instant::now();
        let mut stop_asked = false;
        let mut shutting = false;
        let mut syncing = tokio::time::interval(super::runs::SYNC_EVERY);
        loop {
            tokio::select! {
                _ = child.wait() => break,
                // What changed in the run directory, for the page and for
                // a worker that goes on with the session elsewhere.
                _ = syncing.tick() => sync.sync(&self.store, id, dir).await,
                _ = tokio::time::sleep(every) => {
                    match self.store.renew(id, &self.config.name, self.config.lease).await {
                        Ok(Some(stop)) => {
                            renewed = Instant::now();
                            if stop && !stop_asked {
                                stop_asked = true;
                                interrupt(child);
                            }
                        }
                        Ok(None) => {
                            let _ = child.kill().await;
                            return Watched::Lost;
                        }
                        Err(e) => {
                            tracing::warn!("session {id}: the lease was not renewed: {e}");
                            // Past most of the lease another worker may take
                            // it: this run must not go on beside that one.
                            if renewed.elapsed() > self.config.lease * 2 / 3 {
                                let _ = child.kill().await;
                                return Watched::Lost;
                            }
                        }
                    }
                }
                _ = shutdown.changed(), if !shutting => {
                    shutting = true;
                    interrupt(child);
                }
            }
        }
        if shutting && !stop_asked {
            return Watched::ShutDown;
        }
        Watched::Exited { stop_asked }
    }

    /// How the session ends, from what the run printed (`--json`) and its
    /// last lines on stderr.
    fn ending(&self, dir: &Path, printed: &str, tail: &str, stop_asked: bool) -> Ending {
        let Some(result) = printed
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(Value::is_object)
        else {
            let why = tail.trim();
            let why = if why.is_empty() {
                "its run ended without a result"
            } else {
                why
            };
            return ended(SessionState::Failed, format!("its run failed: {why}"));
        };
        let status = result["status"].as_str().unwrap_or_default().to_string();
        let reason = result["reason"].as_str().unwrap_or_default().to_string();
        let state = match status.as_str() {
            "done" => SessionState::Done,
            "needs_input" => SessionState::Waiting,
            "interrupted" if stop_asked => SessionState::Stopped,
            "stopped" => SessionState::Stopped,
            _ => SessionState::Failed,
        };
        let mut ending = Ending {
            state,
            reason: if state == SessionState::Stopped && stop_asked {
                "stopped by a person".into()
            } else {
                format!("{}: {reason}", status.replace('_', " "))
            },
            question: None,
            hold: None,
            steps: result["steps"].as_i64(),
            cost_usd: result["cost_usd"].as_f64(),
            result: Some(result),
        };
        if state == SessionState::Waiting {
            match Resume::read(dir) {
                Ok(resume) => {
                    let asked = waiting(&resume);
                    ending.question = asked.question;
                    ending.hold = asked.hold;
                    ending.reason = asked.reason;
                }
                Err(_) => ending.question = Some(reason),
            }
        }
        ending
    }

    /// Tells `--notify` that a session waits for a person.
    async fn notify(&self, taken: &Taken, question: &str, hold: Option<&serde_json::Value>) {
        let Some(url) = &self.config.notify else {
            return;
        };
        let id = &taken.session.id;
        let body = serde_json::json!({
            "id": id,
            "status": "waiting",
            "task": taken.session.task,
            "question": question,
            "hold": hold,
            "page": self.config.page.as_ref().map(|p| format!("{p}/sessions/{id}")),
        });
        let sent = reqwest::Client::new()
            .post(url)
            .timeout(Duration::from_secs(10))
            .json(&body)
            .send()
            .await
            .and_then(|r| r.error_for_status());
        let _ = match sent {
            Ok(_) => self.store.note(id, "notified", url).await,
            Err(e) => {
                self.store
                    .note(id, "notify failed", &format!("{url}: {e}"))
                    .await
            }
        };
    }
}

/// What a worker lends a session's run, and takes back at its end.
struct Lent {
    /// Its account's login and secrets, when it names an account.
    login: Option<AccountLogin>,
    /// The folder of the approved skills it may follow, unless it follows
    /// none.
    skills: Option<PathBuf>,
}

impl Lent {
    /// Removes what was written for the run alone.
    fn clear(&self) {
        if let Some(folder) = &self.skills {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
}

/// An account's login and secrets, lent to a run of one of its sessions.
struct AccountLogin {
    /// Its login as the store keeps it.
    state: Option<StorageState>,
    /// Its secrets, named as a session's own.
    secrets: Vec<String>,
    /// Why it could not be read, when it could not.
    unreadable: Option<String>,
}

impl AccountLogin {
    fn of(state: Option<&str>, secrets: Vec<String>) -> AccountLogin {
        // A login that no longer reads starts the session logged out, as
        // a new account does (the page says so at its end).
        let state = state.and_then(|s| serde_json::from_str(s).ok());
        AccountLogin {
            state,
            secrets,
            unreadable: None,
        }
    }

    fn unreadable(why: String) -> AccountLogin {
        AccountLogin {
            state: None,
            secrets: Vec::new(),
            unreadable: Some(why),
        }
    }

    /// Adds the account's secrets to the session's own.
    fn lend_secrets(&self, request: &mut SessionRequest) {
        if self.secrets.is_empty() {
            return;
        }
        let mut all: Vec<Value> = match request.options.remove("secret") {
            Some(Value::Array(items)) => items,
            Some(Value::Null) | None => Vec::new(),
            Some(one) => vec![one],
        };
        all.extend(self.secrets.iter().cloned().map(Value::String));
        request.options.insert("secret".into(), Value::Array(all));
    }

    /// Writes the login into the run directory: as the state a resumed
    /// run starts from (`resumed`), or as a file a new run loads (its
    /// path given back). None when the account has no login yet.
    fn lend(&self, dir: &Path, resumed: bool) -> Result<Option<PathBuf>, Box<Ending>> {
        let Some(state) = &self.state else {
            return Ok(None);
        };
        let path = dir.join(if resumed {
            crate::storage::RUN_STATE
        } else {
            super::accounts::ACCOUNT_LOGIN
        });
        std::fs::create_dir_all(dir)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                state
                    .write(&path, &crate::safety::Secrets::default())
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| {
                Box::new(ended(
                    SessionState::Failed,
                    format!("its account's login could not be given to its run: {e}"),
                ))
            })?;
        Ok(Some(path))
    }
}

/// Whether a journal holds a run's start. The start is its first record:
/// its first line tells, without reading a long journal twice (Resume
/// reads it whole).
fn journal_started(journal: &Path) -> bool {
    std::fs::File::open(journal).is_ok_and(|f| {
        let mut first = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(std::io::Read::take(f, 64 << 10)),
            &mut first,
        )
        .is_ok()
            && first.contains("\"start\"")
    })
}

/// How watching a run ended.
enum Watched {
    /// The run's process exited.
    Exited {
        /// Whether a person had asked it to stop.
        stop_asked: bool,
    },
    /// Another worker holds the session: the run was killed.
    Lost,
    /// The worker is shutting down: the run was interrupted.
    ShutDown,
}

fn ended(state: SessionState, reason: String) -> Ending {
    Ending {
        state,
        reason,
        question: None,
        hold: None,
        result: None,
        steps: None,
        cost_usd: None,
    }
}

/// A session waiting on the question its run ended with.
fn waiting(resume: &Resume) -> Ending {
    let question = resume.question.clone().unwrap_or_default();
    let hold = resume
        .parked
        .as_ref()
        .and_then(|h| serde_json::to_value(h).ok());
    Ending {
        reason: if hold.is_some() {
            "waiting for a person's yes or no".into()
        } else {
            "waiting for a person's answer".into()
        },
        question: Some(question),
        hold,
        steps: Some(resume.first_step as i64 - 1),
        ..ended(SessionState::Waiting, String::new())
    }
}

/// Asks a run to stop as Ctrl-C does: it ends `interrupted`, with its
/// journal and report written.
fn interrupt(child: &Child) {
    if let Some(pid) = child.id() {
        // SAFETY: a plain kill(2) on the run's own process id.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
}

/// Copies a run's stderr to `worker.log` in its run directory and records
/// each step it starts; gives back its last lines (why a run failed).
async fn follow_log(
    store: Store,
    id: String,
    path: PathBuf,
    stderr: Option<tokio::process::ChildStderr>,
) -> String {
    let Some(stderr) = stderr else {
        return String::new();
    };
    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .await
        .ok();
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let mut tail: Vec<String> = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(f) = file.as_mut() {
            let _ = f.write_all(format!("{line}\n").as_bytes()).await;
        }
        if let Some(step) = step_of(&line) {
            if let Err(e) = store.step(&id, step, &line).await {
                tracing::warn!("session {id}: a step was not recorded: {e}");
            }
        }
        tail.push(line);
        if tail.len() > 5 {
            tail.remove(0);
        }
    }
    tail.join("\n")
}

/// The step a progress line starts (`step 3/30 · https://…`).
fn step_of(line: &str) -> Option<i64> {
    let rest = line.strip_prefix("step ")?;
    let (n, _) = rest.split_once('/')?;
    n.parse().ok()
}

/// The result of the run in `dir` when its journal's last part ends with
/// an end record (no resume after it) that is not an interruption.
fn ended_run(dir: &Path) -> Option<Value> {
    let records = crate::journal::read_records(dir).ok()?;
    let last = records
        .into_iter()
        .rfind(|r| ["start", "resume", "end"].contains(&r["kind"].as_str().unwrap_or_default()))?;
    if last["kind"] != "end" {
        return None;
    }
    let result = last.get("result")?.clone();
    let goes_on =
        ["interrupted", "needs_input"].contains(&result["status"].as_str().unwrap_or_default());
    (result.is_object() && !goes_on).then_some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_line_names_its_step_and_nothing_else_does() {
        assert_eq!(step_of("step 3/30 · https://example.com/"), Some(3));
        assert_eq!(step_of("step x/30"), None);
        assert_eq!(step_of("seamark: step 3/30"), None);
    }
}
