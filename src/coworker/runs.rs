//! A session's run kept in the database, so that no two machines need to
//! share a disk: its journal line by line (each stored before the run goes
//! on, through [`crate::mirror`]), the files its journal saves (each
//! step's screenshot) the same way, and the rest of its run directory
//! (report, storage state, the worker's log, downloads, `site.har`) as
//! the worker finds them changed, every [`SYNC_EVERY`] and at the run's
//! end. A worker's own folder is a cache: it is rebuilt from here when the
//! worker takes a session, and the page reads only from here.
//!
//! No secret is in a row: the journal and the files are redacted by the
//! run as they are written. The run's storage state (its cookies) is kept,
//! as an account's login is: a credential, so the database is one.

use std::collections::HashMap;
use std::path::{Component, Path};
use std::time::{Duration, SystemTime};

use sqlx::Row;

use super::store::{now_ms, Store};
use super::CoworkerError;
use crate::mirror::{Frame, FrameKind};

/// How often a worker stores what changed in a running session's folder.
pub const SYNC_EVERY: Duration = Duration::from_secs(2);

/// The largest file of a run directory kept (a larger download stays on
/// the worker, and its log says so).
pub const MAX_FILE: u64 = 64 << 20;

/// Files of a run directory that are never kept: the account's login is
/// kept on the account, a `.part` is a file being written.
fn kept(name: &str) -> bool {
    name != crate::journal::JOURNAL
        && name != super::accounts::ACCOUNT_LOGIN
        && !name.ends_with(".part")
        && !name.split('/').any(|part| part.starts_with('.'))
}

/// Whether a name from the database is a plain path inside a run
/// directory (no `..`, not absolute).
fn inside(name: &str) -> bool {
    !name.is_empty()
        && !name.contains('\0')
        && Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

impl Store {
    /// Stores a frame a run mirrored: a journal line, or a file.
    pub async fn mirrored(&self, session: &str, frame: &Frame) -> Result<(), CoworkerError> {
        match frame.kind {
            FrameKind::Line => {
                sqlx::query("INSERT INTO run_journal (session, line) VALUES ($1, $2)")
                    .bind(session)
                    .bind(String::from_utf8_lossy(&frame.data).into_owned())
                    .execute(self.pool())
                    .await?;
                Ok(())
            }
            FrameKind::File if inside(&frame.name) => {
                self.put_run_file(session, &frame.name, &frame.data).await
            }
            FrameKind::File => Err(CoworkerError::BadRequest(format!(
                "a run file {:?} outside its run directory",
                frame.name
            ))),
        }
    }

    /// Stores one file of a session's run directory.
    pub async fn put_run_file(
        &self,
        session: &str,
        name: &str,
        data: &[u8],
    ) -> Result<(), CoworkerError> {
        sqlx::query(
            "INSERT INTO run_files (session, path, data, updated) VALUES ($1, $2, $3, $4)
             ON CONFLICT (session, path) DO UPDATE SET data = excluded.data,
                updated = excluded.updated",
        )
        .bind(session)
        .bind(name)
        .bind(data.to_vec())
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Records where a worker runs a session now (its own folder).
    pub async fn ran_in(&self, session: &str, dir: &Path) -> Result<(), CoworkerError> {
        sqlx::query("UPDATE sessions SET run_dir = $1 WHERE id = $2")
            .bind(dir.display().to_string())
            .bind(session)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// A session's journal as the run wrote it (empty when it has none).
    pub async fn journal_text(&self, session: &str) -> Result<String, CoworkerError> {
        let rows = sqlx::query("SELECT line FROM run_journal WHERE session = $1 ORDER BY seq")
            .bind(session)
            .fetch_all(self.pool())
            .await?;
        let mut text = String::new();
        for row in &rows {
            text.push_str(&row.try_get::<String, _>("line")?);
        }
        Ok(text)
    }

    /// One file of a session's run directory.
    pub async fn run_file(
        &self,
        session: &str,
        name: &str,
    ) -> Result<Option<Vec<u8>>, CoworkerError> {
        if name == crate::journal::JOURNAL {
            let text = self.journal_text(session).await?;
            return Ok((!text.is_empty()).then(|| text.into_bytes()));
        }
        let row = sqlx::query("SELECT data FROM run_files WHERE session = $1 AND path = $2")
            .bind(session)
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        Ok(match row {
            Some(row) => Some(row.try_get("data")?),
            None => None,
        })
    }

    /// Whether a session's run directory holds a file.
    pub async fn has_run_file(&self, session: &str, name: &str) -> Result<bool, CoworkerError> {
        let row = sqlx::query("SELECT 1 AS one FROM run_files WHERE session = $1 AND path = $2")
            .bind(session)
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.is_some())
    }

    /// Rebuilds a session's run directory in `dir` from the database:
    /// whatever the folder held is replaced. False when the database holds
    /// no run of it (a session not begun yet).
    pub async fn restore_run(&self, session: &str, dir: &Path) -> Result<bool, CoworkerError> {
        let journal = self.journal_text(session).await?;
        let io = |e: std::io::Error| {
            CoworkerError::Corrupt(format!("the run directory {}: {e}", dir.display()))
        };
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(io)?;
        }
        if journal.is_empty() {
            return Ok(false);
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        std::fs::write(dir.join(crate::journal::JOURNAL), journal).map_err(io)?;
        let rows = sqlx::query("SELECT path, data FROM run_files WHERE session = $1")
            .bind(session)
            .fetch_all(self.pool())
            .await?;
        for row in &rows {
            let name: String = row.try_get("path")?;
            if !inside(&name) {
                continue;
            }
            let path = dir.join(&name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            let data: Vec<u8> = row.try_get("data")?;
            std::fs::write(&path, data).map_err(io)?;
        }
        Ok(true)
    }
}

/// What a worker stored of a run directory so far: each file's size and
/// time, so that only what changed is stored again.
#[derive(Debug, Default)]
pub struct RunSync {
    seen: HashMap<String, (u64, SystemTime)>,
}

impl RunSync {
    /// Stores each file of `dir` that changed since the last call. A file
    /// that cannot be stored is said in the log and tried again next time.
    pub async fn sync(&mut self, store: &Store, session: &str, dir: &Path) {
        for (name, path) in files_in(dir) {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let stamp = (
                meta.len(),
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            );
            if self.seen.get(&name) == Some(&stamp) {
                continue;
            }
            if meta.len() > MAX_FILE {
                tracing::warn!(
                    "session {session}: {name} ({} bytes) is kept on this worker only",
                    meta.len()
                );
                self.seen.insert(name, stamp);
                continue;
            }
            let Ok(data) = tokio::fs::read(&path).await else {
                continue;
            };
            match store.put_run_file(session, &name, &data).await {
                Ok(()) => {
                    self.seen.insert(name, stamp);
                }
                Err(e) => tracing::warn!("session {session}: {name} was not stored: {e}"),
            }
        }
    }

    /// Marks the files of a directory rebuilt from the database as stored.
    pub fn already(&mut self, dir: &Path) {
        for (name, path) in files_in(dir) {
            if let Ok(meta) = std::fs::symlink_metadata(&path) {
                let stamp = (
                    meta.len(),
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                );
                self.seen.insert(name, stamp);
            }
        }
    }
}

/// The files of a run directory that are kept, by their names in it
/// (`downloads/x.pdf`), two levels deep at most; links are not followed.
fn files_in(dir: &Path) -> Vec<(String, std::path::PathBuf)> {
    let mut found = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), String::new(), 0)];
    while let Some((folder, prefix, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if kind.is_dir() && depth < 1 && !name.starts_with('.') {
                folders.push((entry.path(), format!("{name}/"), depth + 1));
            } else if kind.is_file() && kept(&name) {
                found.push((name, entry.path()));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_from_the_database_stays_inside_the_run_directory() {
        assert!(inside("step-001.png"));
        assert!(inside("downloads/report.pdf"));
        for bad in ["", "../x", "/etc/passwd", "a/../../b", "a\0b"] {
            assert!(!inside(bad), "{bad:?}");
        }
    }

    #[test]
    fn the_journal_the_accounts_login_and_hidden_files_are_not_synced_as_files() {
        assert!(kept("report.html"));
        assert!(kept("downloads/a.pdf"));
        for not in [
            "journal.jsonl",
            "account-login.json",
            "x.json.part",
            ".cache/x",
        ] {
            assert!(!kept(not), "{not}");
        }
    }
}
