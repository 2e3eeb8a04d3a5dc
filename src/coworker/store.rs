//! The sessions and their state changes, in SQLite or PostgreSQL through
//! sqlx's `Any` driver: one set of statements for both (`$N` parameters
//! work in each), and a worker's take is one statement, so that two workers
//! never take the same session (SQLite runs one writer at a time;
//! PostgreSQL's `FOR UPDATE SKIP LOCKED` passes over a row another takes).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyConnection, AnyPool, Row};
use tokio::sync::Notify;

use super::{CoworkerError, Session, SessionEvent, SessionState};

/// Which database a store is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// A SQLite file: one machine.
    Sqlite,
    /// PostgreSQL: a queue many machines share.
    Postgres,
}

/// The sessions' database.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    dialect: Dialect,
    /// Wakes this process's idle workers when a session is queued here
    /// (workers elsewhere find it at their next look).
    queued: Arc<Notify>,
}

/// The columns a session is read from, in every query that gives one.
const COLUMNS: &str = "id, task, url, options, state, reason, question, hold, answer, result, \
                       run_dir, steps, cost_usd, worker, attempts, created, updated, \
                       waiting_since, taken_over, account, live_url";

/// A session to queue.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    /// The task.
    pub task: &'a str,
    /// The start URL.
    pub url: &'a str,
    /// The account it runs as, if any.
    pub account: Option<&'a str>,
    /// Its run options.
    pub options: &'a serde_json::Map<String, serde_json::Value>,
    /// Its run directory.
    pub run_dir: &'a str,
}

/// A session as a worker takes it.
#[derive(Debug, Clone)]
pub struct Taken {
    /// The session.
    pub session: Session,
    /// The answer to give the run as it was given (a secret one too: it is
    /// dropped from the store as it is taken).
    pub answer: Option<String>,
    /// Whether another worker held it and its lease lapsed.
    pub taken_over: bool,
    /// How many times its workers' leases lapsed, this one counted.
    pub lapses: i64,
}

/// How a run left its session.
#[derive(Debug, Clone)]
pub struct Ending {
    /// The state it goes to.
    pub state: SessionState,
    /// Why.
    pub reason: String,
    /// The question, for `waiting`.
    pub question: Option<String>,
    /// The held action, for a `waiting` that wants a yes or a no.
    pub hold: Option<serde_json::Value>,
    /// The run's result (`--json`'s object), when it gave one.
    pub result: Option<serde_json::Value>,
    /// Steps taken.
    pub steps: Option<i64>,
    /// USD spent.
    pub cost_usd: Option<f64>,
}

/// Milliseconds since the epoch, as the store keeps times.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A stored time as the API gives it: to the millisecond, so that changes
/// within one second keep their order when read by time.
pub(super) fn rfc3339(ms: i64) -> String {
    crate::clock::utc_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64))
}

/// How long a query waits for a connection: past it the database is
/// taken as down, and the page and the API say so (503) rather than wait.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// The statements that make the tables and their indexes, in order.
fn tables(serial: &str, blob: &str) -> Vec<String> {
    vec![
        "CREATE TABLE IF NOT EXISTS sessions (
            id TEXT PRIMARY KEY,
            task TEXT NOT NULL,
            url TEXT NOT NULL,
            options TEXT NOT NULL,
            state TEXT NOT NULL,
            reason TEXT NOT NULL,
            question TEXT,
            hold TEXT,
            answer TEXT,
            result TEXT,
            run_dir TEXT NOT NULL,
            steps BIGINT NOT NULL DEFAULT 0,
            cost_usd DOUBLE PRECISION,
            worker TEXT,
            lease_until BIGINT NOT NULL DEFAULT 0,
            attempts BIGINT NOT NULL DEFAULT 0,
            stop_requested BIGINT NOT NULL DEFAULT 0,
            taken_over BIGINT NOT NULL DEFAULT 0,
            lapses BIGINT NOT NULL DEFAULT 0,
            created BIGINT NOT NULL,
            updated BIGINT NOT NULL,
            waiting_since BIGINT
        )"
        .to_string(),
        format!(
            "CREATE TABLE IF NOT EXISTS session_events (
                seq {serial},
                session TEXT NOT NULL,
                at BIGINT NOT NULL,
                state TEXT NOT NULL,
                reason TEXT NOT NULL
            )"
        ),
        "CREATE TABLE IF NOT EXISTS accounts (
            name TEXT PRIMARY KEY,
            storage_state TEXT,
            secrets TEXT NOT NULL DEFAULT '[]',
            login TEXT NOT NULL DEFAULT 'unknown',
            note TEXT NOT NULL DEFAULT '',
            last_session TEXT,
            updated BIGINT NOT NULL
        )"
        .to_string(),
        format!(
            "CREATE TABLE IF NOT EXISTS run_journal (
                seq {serial},
                session TEXT NOT NULL,
                line TEXT NOT NULL
            )"
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS run_files (
                session TEXT NOT NULL,
                path TEXT NOT NULL,
                data {blob} NOT NULL,
                updated BIGINT NOT NULL,
                PRIMARY KEY (session, path)
            )"
        ),
        "CREATE TABLE IF NOT EXISTS skills (
            name TEXT PRIMARY KEY,
            approved TEXT,
            proposal TEXT,
            proposal_session TEXT,
            proposed BIGINT,
            refused TEXT,
            decided BIGINT,
            stale TEXT,
            stale_session TEXT,
            updated BIGINT NOT NULL
        )"
        .into(),
        "CREATE INDEX IF NOT EXISTS journal_by_session ON run_journal (session, seq)".into(),
        "CREATE INDEX IF NOT EXISTS sessions_by_state ON sessions (state, created)".into(),
        "CREATE INDEX IF NOT EXISTS events_by_session ON session_events (session, seq)".into(),
    ]
}

/// The advisory lock under which the tables are made on PostgreSQL (any
/// number, the same in every process: "seamark" in ASCII).
const SCHEMA_LOCK: i64 = 0x0073_6561_6d61_726b;

/// The advisory lock a take holds on PostgreSQL ("seamarkt").
const TAKE_LOCK: i64 = 0x7365_616d_6172_6b74;

/// What a secret answer becomes in the store once a worker took it.
pub const SECRET_TAKEN: &str = "!(secret)";

/// A stored answer as the API shows it: a secret's value never.
pub fn shown_answer(answer: &str) -> String {
    if answer.starts_with('!') {
        SECRET_TAKEN.to_string()
    } else {
        answer.to_string()
    }
}

impl Store {
    /// Opens (and makes, the first time) the store: `postgres://…` or
    /// `postgresql://…`, else a SQLite file (its folder is made).
    pub async fn open(db: &str) -> Result<Store, CoworkerError> {
        sqlx::any::install_default_drivers();
        let (url, dialect) = if db.starts_with("postgres://") || db.starts_with("postgresql://") {
            (db.to_string(), Dialect::Postgres)
        } else {
            let path = Path::new(db.strip_prefix("sqlite://").unwrap_or(db));
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| {
                    CoworkerError::BadRequest(format!("--db {db}: its folder cannot be made: {e}"))
                })?;
            }
            (
                format!("sqlite://{}?mode=rwc", path.display()),
                Dialect::Sqlite,
            )
        };
        let pool = AnyPoolOptions::new()
            .max_connections(if dialect == Dialect::Sqlite { 4 } else { 8 })
            // A database that is down is told within this, as a 503.
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect(&url)
            .await?;
        let store = Store {
            pool,
            dialect,
            queued: Arc::default(),
        };
        store.create().await?;
        Ok(store)
    }

    /// Waits until a session is queued through this store (a submission or
    /// an answer), for an idle worker of this process.
    pub async fn queued(&self) {
        self.queued.notified().await
    }

    /// On PostgreSQL, holds the takes' lock to the end of the transaction:
    /// a take, and a change that reads who holds an account, are made one
    /// at a time (SQLite makes every write so).
    async fn one_at_a_time(&self, tx: &mut AnyConnection) -> Result<(), CoworkerError> {
        if self.dialect == Dialect::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(TAKE_LOCK)
                .execute(tx)
                .await?;
        }
        Ok(())
    }

    /// Its connections, for the other tables' own modules.
    pub(super) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Which database it is.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Makes the tables, once, however many processes start at the same
    /// moment on an empty database: on PostgreSQL under an advisory lock
    /// in one transaction (two `CREATE TABLE IF NOT EXISTS` at once can
    /// both try to make the table's type, and one fails); SQLite runs one
    /// writer at a time.
    async fn create(&self) -> Result<(), CoworkerError> {
        let mut tx = self.pool.begin().await?;
        let (serial, blob) = match self.dialect {
            Dialect::Sqlite => ("INTEGER PRIMARY KEY AUTOINCREMENT", "BLOB"),
            Dialect::Postgres => {
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(SCHEMA_LOCK)
                    .execute(&mut *tx)
                    .await?;
                ("BIGSERIAL PRIMARY KEY", "BYTEA")
            }
        };
        let tables = tables(serial, blob);
        for table in &tables {
            sqlx::query(table).execute(&mut *tx).await?;
        }
        // Columns later versions added, to a database an earlier one made.
        for column in ["account", "live_url", "live_token"] {
            self.add_column(&mut tx, "sessions", column, "TEXT").await?;
        }
        sqlx::query("CREATE INDEX IF NOT EXISTS sessions_by_account ON sessions (account, state)")
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        if self.dialect == Dialect::Sqlite {
            // Readers go on while a worker writes (outside a transaction:
            // SQLite changes its journal only there).
            sqlx::query("PRAGMA journal_mode=WAL")
                .execute(&self.pool)
                .await?;
        }
        Ok(())
    }

    /// Adds a column to a table made before it existed.
    async fn add_column(
        &self,
        conn: &mut AnyConnection,
        table: &str,
        column: &str,
        kind: &str,
    ) -> Result<(), CoworkerError> {
        let statement = match self.dialect {
            Dialect::Postgres => {
                format!("ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")
            }
            Dialect::Sqlite => {
                let has: i64 = sqlx::query(&format!(
                    "SELECT COUNT(*) AS n FROM pragma_table_info('{table}') WHERE name = $1"
                ))
                .bind(column)
                .fetch_one(&mut *conn)
                .await?
                .try_get("n")?;
                if has > 0 {
                    return Ok(());
                }
                format!("ALTER TABLE {table} ADD COLUMN {column} {kind}")
            }
        };
        sqlx::query(&statement).execute(conn).await?;
        Ok(())
    }

    /// Records something that happened to a session (`state`: what, as a
    /// word), with its reason.
    pub async fn note(
        &self,
        session: &str,
        state: &str,
        reason: &str,
    ) -> Result<(), CoworkerError> {
        let mut conn = self.pool.acquire().await?;
        noted(&mut conn, session, state, reason).await
    }

    /// Records that a step was taken (for the live view and the events).
    pub async fn step(&self, id: &str, step: i64, line: &str) -> Result<(), CoworkerError> {
        sqlx::query("UPDATE sessions SET steps = $1, updated = $2 WHERE id = $3 AND steps < $1")
            .bind(step)
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        self.note(id, "step", line).await
    }

    /// Queues a new session; its run directory is `run_dir`.
    pub async fn submit(&self, id: &str, new: &NewSession<'_>) -> Result<Session, CoworkerError> {
        let now = now_ms();
        let options = serde_json::Value::Object(new.options.clone()).to_string();
        // The session and its first event in one transaction: a worker that
        // takes it at once records its `active` after this `queued`.
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO sessions (id, task, url, options, state, reason, run_dir, created, updated,
                account)
             VALUES ($1, $2, $3, $4, 'queued', 'submitted', $5, $6, $6, $7)",
        )
        .bind(id)
        .bind(new.task)
        .bind(new.url)
        .bind(options)
        .bind(new.run_dir)
        .bind(now)
        .bind(new.account)
        .execute(&mut *tx)
        .await?;
        noted(&mut tx, id, "queued", "submitted").await?;
        if let Some(account) = new.account {
            // Not beside a take: each would miss the other's change, and
            // this session would wait without saying for whom.
            self.one_at_a_time(&mut tx).await?;
            self.known_account(&mut tx, account).await?;
            waits_for_account(&mut tx, account).await?;
        }
        tx.commit().await?;
        self.queued.notify_waiters();
        self.get(id).await
    }

    /// One session.
    pub async fn get(&self, id: &str) -> Result<Session, CoworkerError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM sessions WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        match row {
            Some(row) => session_of(&row),
            None => Err(CoworkerError::NotFound(id.to_string())),
        }
    }

    /// The sessions, newest first (at most `limit`), of one state or all.
    pub async fn list(
        &self,
        state: Option<SessionState>,
        limit: i64,
    ) -> Result<Vec<Session>, CoworkerError> {
        let rows = match state {
            Some(state) => {
                sqlx::query(&format!(
                    "SELECT {COLUMNS} FROM sessions WHERE state = $1 ORDER BY created DESC, id \
                     LIMIT $2"
                ))
                .bind(state.word())
                .bind(limit)
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query(&format!(
                    "SELECT {COLUMNS} FROM sessions ORDER BY created DESC, id LIMIT $1"
                ))
                .bind(limit)
                .fetch_all(&self.pool)
                .await?
            }
        };
        rows.iter().map(session_of).collect()
    }

    /// How many sessions are in each state.
    pub async fn counts(&self) -> Result<Vec<(String, i64)>, CoworkerError> {
        let rows = sqlx::query("SELECT state, COUNT(*) AS n FROM sessions GROUP BY state")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("state")?, r.try_get("n")?)))
            .collect()
    }

    /// A session's state changes and steps after `after` (a `seq`).
    pub async fn events(&self, id: &str, after: i64) -> Result<Vec<SessionEvent>, CoworkerError> {
        let rows = sqlx::query(
            "SELECT seq, session, at, state, reason FROM session_events
             WHERE session = $1 AND seq > $2 ORDER BY seq",
        )
        .bind(id)
        .bind(after)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(SessionEvent {
                    seq: r.try_get("seq")?,
                    session: r.try_get("session")?,
                    at: rfc3339(r.try_get("at")?),
                    at_ms: r.try_get("at")?,
                    state: r.try_get("state")?,
                    reason: r.try_get("reason")?,
                })
            })
            .collect()
    }

    /// Takes the oldest session that is queued, or whose worker's lease
    /// lapsed, for `worker`, under a lease of `lease`.
    pub async fn take(
        &self,
        worker: &str,
        lease: Duration,
    ) -> Result<Option<Taken>, CoworkerError> {
        let now = now_ms();
        let skip_locked = match self.dialect {
            Dialect::Sqlite => "",
            Dialect::Postgres => "FOR UPDATE SKIP LOCKED",
        };
        let mut tx = self.pool.begin().await?;
        // One take at a time: two workers that each see an account free
        // would otherwise each take a session of it.
        self.one_at_a_time(&mut tx).await?;
        let row = sqlx::query(&format!(
            "UPDATE sessions SET
                taken_over = CASE WHEN state = 'active' THEN 1 ELSE 0 END,
                lapses = lapses + CASE WHEN state = 'active' THEN 1 ELSE 0 END,
                reason = CASE WHEN state = 'active'
                    THEN 'taken over by ' || $1 || ': the lease of ' || COALESCE(worker, '?') || ' lapsed'
                    ELSE 'taken by ' || $1 END,
                state = 'active', worker = $1, lease_until = $2, attempts = attempts + 1,
                stop_requested = 0, updated = $3
             WHERE id = (SELECT s.id FROM sessions s
                 WHERE (s.state = 'queued' OR (s.state = 'active' AND s.lease_until < $3))
                   AND (s.account IS NULL OR NOT EXISTS (SELECT 1 FROM sessions o
                       WHERE o.account = s.account AND o.state IN ('active', 'waiting')
                         AND o.worker IS NOT NULL AND o.id <> s.id))
                 ORDER BY s.created, s.id LIMIT 1 {skip_locked})
             RETURNING {COLUMNS}, lapses"
        ))
        .bind(worker)
        .bind(now + lease.as_millis() as i64)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let session = session_of(&row)?;
        let answer: Option<String> = row.try_get("answer")?;
        // A secret answer leaves the store as the worker takes it.
        if answer.as_deref().is_some_and(|a| a.starts_with('!')) {
            sqlx::query("UPDATE sessions SET answer = $1 WHERE id = $2")
                .bind(SECRET_TAKEN)
                .bind(&session.id)
                .execute(&mut *tx)
                .await?;
        }
        let taken_over: i64 = row.try_get("taken_over")?;
        noted(&mut tx, &session.id, "active", &session.reason).await?;
        if let Some(account) = &session.account {
            waits_for_account(&mut tx, account).await?;
        }
        tx.commit().await?;
        Ok(Some(Taken {
            session: Session {
                answer: answer.as_deref().map(shown_answer),
                ..session
            },
            answer,
            taken_over: taken_over != 0,
            lapses: row.try_get("lapses")?,
        }))
    }

    /// Renews `worker`'s lease on a session. `Ok(None)` when the worker no
    /// longer holds it; else whether a person asked it to stop.
    pub async fn renew(
        &self,
        id: &str,
        worker: &str,
        lease: Duration,
    ) -> Result<Option<bool>, CoworkerError> {
        let row = sqlx::query(
            "UPDATE sessions SET lease_until = $1
             WHERE id = $2 AND worker = $3 AND state IN ('active', 'waiting')
             RETURNING stop_requested",
        )
        .bind(now_ms() + lease.as_millis() as i64)
        .bind(id)
        .bind(worker)
        .fetch_optional(&self.pool)
        .await?;
        Ok(match row {
            Some(row) => Some(row.try_get::<i64, _>("stop_requested")? != 0),
            None => None,
        })
    }

    /// Ends `worker`'s hold on a session as the run left it. False when the
    /// worker no longer held it (its ending is not taken).
    pub async fn finish(
        &self,
        id: &str,
        worker: &str,
        ending: &Ending,
    ) -> Result<bool, CoworkerError> {
        let now = now_ms();
        let waiting = ending.state == SessionState::Waiting;
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE sessions SET state = $1, reason = $2, question = $3, hold = $4,
                result = COALESCE($5, result), steps = COALESCE($6, steps),
                cost_usd = CASE WHEN $12 = 1 THEN $7 ELSE cost_usd END, worker = NULL,
                lease_until = 0, waiting_since = $8, updated = $9, live_url = NULL,
                live_token = NULL
             WHERE id = $10 AND worker = $11 AND state IN ('active', 'waiting')",
        )
        .bind(ending.state.word())
        .bind(&ending.reason)
        .bind(ending.question.as_deref())
        .bind(ending.hold.as_ref().map(|h| h.to_string()))
        .bind(ending.result.as_ref().map(|r| r.to_string()))
        .bind(ending.steps)
        // Never a NULL float: sqlx's `Any` sends one to PostgreSQL as a
        // `real` (float4), and the connection's cached statement then
        // declares $7 a float4, so a later cost (a float8) is refused as
        // "incorrect binary data format in bind parameter 7". The float is
        // always bound, and $12 says whether it is one.
        .bind(ending.cost_usd.unwrap_or(0.0))
        .bind(waiting.then_some(now))
        .bind(now)
        .bind(id)
        .bind(worker)
        .bind(i64::from(ending.cost_usd.is_some()))
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if done {
            noted(&mut tx, id, ending.state.word(), &ending.reason).await?;
            if let Some(account) = account_of(&mut tx, id).await? {
                waits_for_account(&mut tx, &account).await?;
            }
        }
        tx.commit().await?;
        Ok(done)
    }

    /// A person's answer to a waiting session: it is queued again.
    pub async fn answer(&self, id: &str, answer: &str) -> Result<Session, CoworkerError> {
        // Refused now with the run's own reason, rather than taken and
        // failed at the worker.
        let waits = self.get(id).await?;
        if waits.status == SessionState::Waiting {
            super::request::check_answer(answer, waits.hold.is_some())?;
        }
        let mut tx = self.pool.begin().await?;
        let changed = sqlx::query(
            "UPDATE sessions SET state = 'queued', answer = $1, reason = 'answered',
                waiting_since = NULL, updated = $2, worker = NULL, live_url = NULL,
                live_token = NULL
             WHERE id = $3 AND state = 'waiting' AND (worker IS NULL OR lease_until < $2)",
        )
        .bind(answer)
        .bind(now_ms())
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            drop(tx);
            let session = self.get(id).await?;
            if session.worker.is_some() && session.status == SessionState::Waiting {
                return Err(CoworkerError::Conflict(format!(
                    "session {id} waits for a person's hands in its browser, not for words: take \
                     it over in its live view ({})",
                    session.live.as_deref().unwrap_or("its page")
                )));
            }
            return Err(CoworkerError::Conflict(format!(
                "session {id} is {}, not waiting for an answer",
                session.status
            )));
        }
        let why = format!("answered: {}", shown_answer(answer));
        noted(&mut tx, id, "queued", &why).await?;
        if let Some(account) = &waits.account {
            self.one_at_a_time(&mut tx).await?;
            waits_for_account(&mut tx, account).await?;
        }
        tx.commit().await?;
        self.queued.notify_waiters();
        self.get(id).await
    }

    /// A person's stop: a queued or waiting session stops now; an active
    /// one is asked to (its worker stops the run at its next renewal).
    pub async fn stop(&self, id: &str) -> Result<Session, CoworkerError> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let stopped = sqlx::query(
            "UPDATE sessions SET state = 'stopped', reason = 'stopped by a person',
                waiting_since = NULL, updated = $1
             WHERE id = $2 AND state IN ('queued', 'waiting') AND worker IS NULL",
        )
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if stopped == 1 {
            noted(&mut tx, id, "stopped", "stopped by a person").await?;
            tx.commit().await?;
            return self.get(id).await;
        }
        drop(tx);
        let asked = sqlx::query(
            "UPDATE sessions SET stop_requested = 1, updated = $1
             WHERE id = $2 AND state IN ('active', 'waiting') AND worker IS NOT NULL",
        )
        .bind(now)
        .bind(id)
        .execute(&self.pool)
        .await?
        .rows_affected();
        let session = self.get(id).await?;
        if asked == 0 {
            return Err(CoworkerError::Conflict(format!(
                "session {id} has ended ({}): there is nothing to stop",
                session.status
            )));
        }
        self.note(id, "active", "a person asked it to stop").await?;
        Ok(session)
    }

    /// Gives a session back to the queue: its worker is shutting down.
    pub async fn release(&self, id: &str, worker: &str, why: &str) -> Result<(), CoworkerError> {
        let mut tx = self.pool.begin().await?;
        let changed = sqlx::query(
            "UPDATE sessions SET state = 'queued', reason = $1, worker = NULL, lease_until = 0,
                updated = $2, live_url = NULL, live_token = NULL
             WHERE id = $3 AND worker = $4 AND state IN ('active', 'waiting')",
        )
        .bind(why)
        .bind(now_ms())
        .bind(id)
        .bind(worker)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 1 {
            noted(&mut tx, id, "queued", why).await?;
            if let Some(account) = account_of(&mut tx, id).await? {
                waits_for_account(&mut tx, &account).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}

/// Says on each queued session of `account` why it waits: which session
/// holds the account (recorded as an event when it changes), or that it
/// is free again.
async fn waits_for_account(conn: &mut AnyConnection, account: &str) -> Result<(), CoworkerError> {
    let holder: Option<String> = sqlx::query(
        "SELECT id FROM sessions WHERE account = $1 AND state IN ('active', 'waiting')
           AND worker IS NOT NULL ORDER BY id LIMIT 1",
    )
    .bind(account)
    .fetch_optional(&mut *conn)
    .await?
    .map(|row| row.try_get("id"))
    .transpose()?;
    let Some(holder) = holder else {
        sqlx::query(
            "UPDATE sessions SET reason = 'account ' || $1 || ' is free: waiting for a worker'
             WHERE account = $1 AND state = 'queued' AND reason LIKE 'account % is in use by %'",
        )
        .bind(account)
        .execute(conn)
        .await?;
        return Ok(());
    };
    let why = format!("account {account} is in use by session {holder}");
    sqlx::query(
        "INSERT INTO session_events (session, at, state, reason)
         SELECT id, $1, 'queued', $2 FROM sessions
         WHERE account = $3 AND state = 'queued' AND reason <> $2",
    )
    .bind(now_ms())
    .bind(&why)
    .bind(account)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE sessions SET reason = $1 WHERE account = $2 AND state = 'queued' AND reason <> $1",
    )
    .bind(&why)
    .bind(account)
    .execute(conn)
    .await?;
    Ok(())
}

/// The account a session runs as.
async fn account_of(conn: &mut AnyConnection, id: &str) -> Result<Option<String>, CoworkerError> {
    let row = sqlx::query("SELECT account FROM sessions WHERE id = $1")
        .bind(id)
        .fetch_optional(conn)
        .await?;
    Ok(match row {
        Some(row) => row.try_get("account")?,
        None => None,
    })
}

/// Records a session's change on `conn`: inside the transaction that
/// made the change, so that events are numbered in the order the changes
/// were.
pub(super) async fn noted(
    conn: &mut AnyConnection,
    session: &str,
    state: &str,
    reason: &str,
) -> Result<(), CoworkerError> {
    sqlx::query("INSERT INTO session_events (session, at, state, reason) VALUES ($1, $2, $3, $4)")
        .bind(session)
        .bind(now_ms())
        .bind(state)
        .bind(reason)
        .execute(conn)
        .await?;
    Ok(())
}

fn session_of(row: &AnyRow) -> Result<Session, CoworkerError> {
    let state: String = row.try_get("state")?;
    let status = SessionState::from_word(&state)
        .ok_or_else(|| CoworkerError::Corrupt(format!("state {state:?}")))?;
    let options: String = row.try_get("options")?;
    let options = match serde_json::from_str(&options) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => return Err(CoworkerError::Corrupt(format!("options {options:?}"))),
    };
    let json = |column: &str| -> Result<Option<serde_json::Value>, CoworkerError> {
        let text: Option<String> = row.try_get(column)?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|_| CoworkerError::Corrupt(format!("{column} {t:?}")))
        })
        .transpose()
    };
    let waiting_since: Option<i64> = row.try_get("waiting_since")?;
    let answer: Option<String> = row.try_get("answer")?;
    let id: String = row.try_get("id")?;
    let live_url: Option<String> = row.try_get("live_url")?;
    Ok(Session {
        live: live_url.map(|_| format!("/sessions/{id}/live/")),
        id,
        status,
        task: row.try_get("task")?,
        url: row.try_get("url")?,
        options,
        reason: row.try_get("reason")?,
        question: row.try_get("question")?,
        hold: json("hold")?,
        answer: answer.as_deref().map(shown_answer),
        result: json("result")?,
        run_dir: row.try_get("run_dir")?,
        steps: row.try_get("steps")?,
        cost_usd: row.try_get("cost_usd")?,
        worker: row.try_get("worker")?,
        attempts: row.try_get("attempts")?,
        created: rfc3339(row.try_get("created")?),
        updated: rfc3339(row.try_get("updated")?),
        waiting_since: waiting_since.map(rfc3339),
        account: row.try_get("account")?,
    })
}
