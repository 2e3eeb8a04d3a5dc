//! Skills a server's sessions share, reviewed before they change what
//! runs. A skill a session learns is *proposed*: no session follows it
//! until a person approves it (on the page, or `seamark skill approve NAME
//! --server …`), and a refused one is kept as refused. A worker gives each
//! run the approved skills only, in a folder of its own, with
//! `--review-skills`; what the run learns comes back as a proposal. A skill
//! a later run had to hand over to the model is marked stale, with where
//! and why, so that a person sees which skills the sites left behind.

use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::store::{now_ms, rfc3339, Store};
use super::CoworkerError;
use crate::skill::Skill;

/// A skill as the API and the page show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServedSkill {
    /// Its name.
    pub name: String,
    /// `proposed` (a proposal waits), `approved` (followed), or `refused`.
    pub state: String,
    /// The skill that is followed, if one was approved.
    pub approved: Option<Skill>,
    /// The skill that waits for a person, if one does.
    pub proposal: Option<Skill>,
    /// The session the proposal was learned from.
    pub proposal_session: Option<String>,
    /// The last skill refused under this name.
    pub refused: Option<Skill>,
    /// Where and why a run following the approved skill last had to hand
    /// over to the model (it is going stale), if one did.
    pub stale: Option<String>,
    /// The session that handed over.
    pub stale_session: Option<String>,
    /// When it last changed (RFC 3339, UTC).
    pub updated: String,
}

fn parsed(column: &str, text: Option<String>) -> Result<Option<Skill>, CoworkerError> {
    text.map(|t| {
        Skill::from_json(&t).map_err(|e| CoworkerError::Corrupt(format!("skill {column}: {e}")))
    })
    .transpose()
}

impl Store {
    /// Proposes a skill a session learned (over an earlier proposal of the
    /// same name, which it replaces).
    pub async fn propose_skill(&self, skill: &Skill, session: &str) -> Result<(), CoworkerError> {
        skill
            .check()
            .map_err(|e| CoworkerError::BadRequest(format!("skill {}: {e}", skill.name)))?;
        let body = serde_json::to_string(skill)
            .map_err(|e| CoworkerError::Corrupt(format!("skill {}: {e}", skill.name)))?;
        let now = now_ms();
        sqlx::query(
            "INSERT INTO skills (name, proposal, proposal_session, proposed, updated)
             VALUES ($1, $2, $3, $4, $4)
             ON CONFLICT (name) DO UPDATE SET proposal = excluded.proposal,
                proposal_session = excluded.proposal_session, proposed = excluded.proposed,
                updated = excluded.updated",
        )
        .bind(&skill.name)
        .bind(body)
        .bind(session)
        .bind(now)
        .execute(self.pool())
        .await?;
        self.note(session, "skill", &format!("proposed skill {}", skill.name))
            .await
    }

    /// A person's decision on a proposed skill: approved, it is followed
    /// from the next session on (and is no longer stale); refused, it is
    /// kept as refused.
    pub async fn decide_skill(&self, name: &str, approve: bool) -> Result<(), CoworkerError> {
        let statement = if approve {
            "UPDATE skills SET approved = proposal, proposal = NULL, proposal_session = NULL,
                stale = NULL, stale_session = NULL, decided = $1, updated = $1
             WHERE name = $2 AND proposal IS NOT NULL"
        } else {
            "UPDATE skills SET refused = proposal, proposal = NULL, proposal_session = NULL,
                decided = $1, updated = $1
             WHERE name = $2 AND proposal IS NOT NULL"
        };
        let changed = sqlx::query(statement)
            .bind(now_ms())
            .bind(name)
            .execute(self.pool())
            .await?
            .rows_affected();
        if changed == 0 {
            return Err(match self.skills().await?.iter().any(|s| s.name == name) {
                true => CoworkerError::Conflict(format!("skill {name} has no proposal waiting")),
                false => CoworkerError::NotFound(format!("skill {name}")),
            });
        }
        Ok(())
    }

    /// Marks an approved skill as handed over to the model by a session.
    pub async fn mark_stale(
        &self,
        name: &str,
        why: &str,
        session: &str,
    ) -> Result<(), CoworkerError> {
        sqlx::query(
            "UPDATE skills SET stale = $1, stale_session = $2, updated = $3
             WHERE name = $4 AND approved IS NOT NULL",
        )
        .bind(why)
        .bind(session)
        .bind(now_ms())
        .bind(name)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The approved skills: what a run may follow.
    pub async fn approved_skills(&self) -> Result<Vec<Skill>, CoworkerError> {
        let rows =
            sqlx::query("SELECT approved FROM skills WHERE approved IS NOT NULL ORDER BY name")
                .fetch_all(self.pool())
                .await?;
        let mut skills = Vec::new();
        for row in &rows {
            // One that no longer reads is left out, not every run failed.
            match parsed("approved", row.try_get("approved")?) {
                Ok(Some(skill)) => skills.push(skill),
                Ok(None) => {}
                Err(e) => tracing::warn!("{e}"),
            }
        }
        Ok(skills)
    }

    /// Every skill, by name: proposals first.
    pub async fn skills(&self) -> Result<Vec<ServedSkill>, CoworkerError> {
        let rows = sqlx::query(
            "SELECT name, approved, proposal, proposal_session, refused, stale, stale_session,
                updated
             FROM skills ORDER BY CASE WHEN proposal IS NULL THEN 1 ELSE 0 END, name",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let approved = parsed("approved", r.try_get("approved")?)?;
                let proposal = parsed("proposal", r.try_get("proposal")?)?;
                let state = match (&proposal, &approved) {
                    (Some(_), _) => "proposed",
                    (None, Some(_)) => "approved",
                    (None, None) => "refused",
                };
                Ok(ServedSkill {
                    name: r.try_get("name")?,
                    state: state.into(),
                    approved,
                    proposal,
                    proposal_session: r.try_get("proposal_session")?,
                    refused: parsed("refused", r.try_get("refused")?)?,
                    stale: r.try_get("stale")?,
                    stale_session: r.try_get("stale_session")?,
                    updated: rfc3339(r.try_get("updated")?),
                })
            })
            .collect()
    }
}
