//! Accounts: a name a session runs as, so that two sessions never use one
//! stateful login at once. The store keeps, per account, its login (the
//! browser's storage state, saved back when a session of it ends or
//! parks) and the names of its secrets (never their values: `env:` and
//! `@FILE`, resolved by the worker as a session's own are). At most one
//! session of an account is active; the others wait, queued, and a waiting
//! (parked) session holds nothing, its account included.

use serde::{Deserialize, Serialize};
use sqlx::{AnyConnection, Row};

use super::request::{account_name, SessionRequest};
use super::store::{now_ms, Store};
use super::CoworkerError;
use crate::storage::StorageState;

/// The file in a new run's directory its account's login is loaded from
/// (never kept with the run: the account keeps it).
pub const ACCOUNT_LOGIN: &str = "account-login.json";

/// An account, as the API and the page show it (its login's cookies
/// never).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Account {
    /// Its name.
    pub name: String,
    /// Its login: `none` (no session has saved one yet), `kept`, or
    /// `broken` (a session left it logged out).
    pub login: String,
    /// What the last session said of the login.
    pub note: String,
    /// Its secrets, named as a session names its own.
    pub secrets: Vec<String>,
    /// The session that holds it now (active), if any.
    pub holder: Option<String>,
    /// Sessions of it waiting for it (queued).
    pub queued: i64,
    /// The last session that saved its login.
    pub last_session: Option<String>,
    /// When it last changed (RFC 3339, UTC).
    pub updated: String,
}

/// What a session did to its account's login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// The login is kept for the next session.
    Kept,
    /// The site took the login away: the cookies it had are gone.
    Broken(String),
}

impl Login {
    /// What a session left of the login it started with (`before`, the
    /// account's state then) in `after`: the cookies of the login that the
    /// site removed, when it removed every one of them, break it.
    pub fn judged(before: Option<&StorageState>, after: &StorageState, now_s: f64) -> Login {
        let Some(before) = before else {
            return Login::Kept;
        };
        let live = |c: &&crate::storage::Cookie| c.expires < 0.0 || c.expires > now_s;
        let had: Vec<&crate::storage::Cookie> = before.cookies.iter().filter(live).collect();
        if had.is_empty() {
            return Login::Kept;
        }
        let kept = had.iter().any(|c| {
            after
                .cookies
                .iter()
                .filter(live)
                .any(|a| a.name == c.name && a.domain == c.domain && a.path == c.path)
        });
        if kept {
            Login::Kept
        } else {
            let names: Vec<&str> = had.iter().map(|c| c.name.as_str()).take(5).collect();
            Login::Broken(format!(
                "the site removed every cookie of the login ({}): it looks logged out; sign \
                 in again in a session of this account",
                names.join(", ")
            ))
        }
    }
}

/// An account's definition, as posted to `/api/accounts`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountSpec {
    /// Its name.
    pub name: String,
    /// Its secrets, as a session names its own (`NAME=env:SEAMARK_SECRET_…`
    /// or `NAME=@FILE`).
    #[serde(default)]
    pub secrets: Vec<String>,
}

impl AccountSpec {
    /// The spec checked: a good name, and secrets a session could name.
    pub fn checked(self) -> Result<AccountSpec, CoworkerError> {
        let name = account_name(&self.name)?;
        let request = SessionRequest {
            task: String::new(),
            url: String::new(),
            account: None,
            options: serde_json::Map::from_iter([(
                "secret".to_string(),
                serde_json::json!(self.secrets),
            )]),
        };
        request.secret_args(None)?;
        Ok(AccountSpec {
            name,
            secrets: self.secrets,
        })
    }
}

impl Store {
    /// Makes the account known (with no login and no secrets) if it is
    /// not yet.
    pub(super) async fn known_account(
        &self,
        conn: &mut AnyConnection,
        name: &str,
    ) -> Result<(), CoworkerError> {
        sqlx::query(
            "INSERT INTO accounts (name, updated) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(now_ms())
        .execute(conn)
        .await?;
        Ok(())
    }

    /// Defines an account, or changes its secrets.
    pub async fn define_account(&self, spec: &AccountSpec) -> Result<Account, CoworkerError> {
        let secrets = serde_json::json!(spec.secrets).to_string();
        sqlx::query(
            "INSERT INTO accounts (name, secrets, updated) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO UPDATE SET secrets = excluded.secrets,
                updated = excluded.updated",
        )
        .bind(&spec.name)
        .bind(secrets)
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        self.accounts()
            .await?
            .into_iter()
            .find(|a| a.name == spec.name)
            .ok_or_else(|| CoworkerError::NotFound(format!("account {}", spec.name)))
    }

    /// Every account, by name, with the session that holds it.
    pub async fn accounts(&self) -> Result<Vec<Account>, CoworkerError> {
        let rows = sqlx::query(
            "SELECT a.name, a.login, a.note, a.secrets, a.last_session, a.updated,
                (SELECT s.id FROM sessions s WHERE s.account = a.name
                    AND s.state IN ('active', 'waiting') AND s.worker IS NOT NULL
                 LIMIT 1) AS holder,
                (SELECT COUNT(*) FROM sessions s WHERE s.account = a.name AND s.state = 'queued')
                 AS queued
             FROM accounts a ORDER BY a.name",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let secrets: String = r.try_get("secrets")?;
                Ok(Account {
                    name: r.try_get("name")?,
                    login: r.try_get("login")?,
                    note: r.try_get("note")?,
                    secrets: serde_json::from_str(&secrets)
                        .map_err(|_| CoworkerError::Corrupt(format!("secrets {secrets:?}")))?,
                    holder: r.try_get("holder")?,
                    queued: r.try_get("queued")?,
                    last_session: r.try_get("last_session")?,
                    updated: super::store::rfc3339(r.try_get("updated")?),
                })
            })
            .collect()
    }

    /// An account's login (its storage state, as JSON) and its secrets,
    /// for the worker that runs a session of it.
    pub async fn account_login(
        &self,
        name: &str,
    ) -> Result<(Option<String>, Vec<String>), CoworkerError> {
        let row = sqlx::query("SELECT storage_state, secrets FROM accounts WHERE name = $1")
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        let Some(row) = row else {
            return Ok((None, Vec::new()));
        };
        let secrets: String = row.try_get("secrets")?;
        Ok((
            row.try_get("storage_state")?,
            serde_json::from_str(&secrets)
                .map_err(|_| CoworkerError::Corrupt(format!("secrets {secrets:?}")))?,
        ))
    }

    /// Saves the login a session of the account left (`state`, its
    /// storage state as JSON), and what became of it.
    pub async fn save_login(
        &self,
        name: &str,
        session: &str,
        state: &str,
        login: &Login,
    ) -> Result<(), CoworkerError> {
        let (word, note) = match login {
            Login::Kept => ("kept", format!("saved by session {session}")),
            Login::Broken(why) => ("broken", format!("session {session}: {why}")),
        };
        sqlx::query(
            "UPDATE accounts SET storage_state = $1, login = $2, note = $3, last_session = $4,
                updated = $5
             WHERE name = $6",
        )
        .bind(state)
        .bind(word)
        .bind(&note)
        .bind(session)
        .bind(now_ms())
        .bind(name)
        .execute(self.pool())
        .await?;
        self.note(session, "account", &format!("{name}: login {word}: {note}"))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Cookie;

    fn state(cookies: &[(&str, f64)]) -> StorageState {
        StorageState {
            cookies: cookies
                .iter()
                .map(|(name, expires)| Cookie {
                    name: name.to_string(),
                    value: "v".into(),
                    domain: "shop.test".into(),
                    path: "/".into(),
                    expires: *expires,
                    http_only: true,
                    secure: false,
                    same_site: "Lax".into(),
                })
                .collect(),
            origins: Vec::new(),
        }
    }

    #[test]
    fn a_login_whose_cookies_the_site_removed_is_broken_and_one_it_kept_is_kept() {
        let before = state(&[("sid", -1.0), ("pref", 2e9)]);
        let now = 1.8e9;
        assert_eq!(
            Login::judged(Some(&before), &state(&[("sid", -1.0)]), now),
            Login::Kept
        );
        assert!(matches!(
            Login::judged(Some(&before), &state(&[("other", -1.0)]), now),
            Login::Broken(why) if why.contains("sid")
        ));
        // Expired by the site (a past date) is removed too.
        assert!(matches!(
            Login::judged(Some(&before), &state(&[("sid", 1.0), ("pref", 1.0)]), now),
            Login::Broken(_)
        ));
        // No login before: nothing to break.
        assert_eq!(Login::judged(None, &state(&[]), now), Login::Kept);
    }
}
