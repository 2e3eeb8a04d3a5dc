//! The rules a run was started under, recorded in its journal's start
//! record, so that `seamark resume` goes on under the same ones: budgets,
//! domain limits, confirmation, the names of its secrets, dialogs,
//! downloads, reading, the answer's schema, the viewport.

use std::sync::Arc;
use std::time::Duration;

use super::options::AgentOptions;
use crate::act::DialogPolicy;
use crate::records::RunPolicy;
use crate::safety::{ConfirmGuard, DomainPattern, DomainPatternError, DomainPolicy};
use crate::schema::AnswerSchema;

/// What of a run's recorded rules cannot be put back.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// Secrets it used that were not given again.
    #[error(
        "the run used the secret{} {}: give {} again (their values are never recorded)",
        if .0.len() == 1 { "" } else { "s" },
        .0.join(", "),
        .0.iter().map(|n| format!("--secret {n}=…")).collect::<Vec<_>>().join(" ")
    )]
    MissingSecrets(Vec<String>),
    /// A domain limit that is none.
    #[error("the run's domain limits: {0}")]
    Domain(DomainPatternError),
    /// Its uploads folder.
    #[error("the run's uploads folder: {0}")]
    Uploads(crate::files::UploadError),
    /// Its answer's schema.
    #[error("the run's schema: {0}")]
    Schema(crate::schema::SchemaError),
    /// Its device.
    #[error("the run's device: {0}")]
    Device(crate::browser::UnknownDevice),
}

impl RunPolicy {
    /// The rules of these options.
    pub fn of(o: &AgentOptions) -> RunPolicy {
        let act = &o.act;
        RunPolicy {
            max_failures: o.max_failures,
            max_cost: o.max_cost,
            max_time_s: o.max_time.map(|t| t.as_secs_f64()),
            images: o.images,
            list_cap: o.list_cap,
            scrub: o.scrub,
            allow_domains: act.domains.allow.iter().map(ToString::to_string).collect(),
            block_domains: act.domains.block.iter().map(ToString::to_string).collect(),
            confirm: act.confirm.policy,
            confirm_words: act.confirm.words(),
            secrets: act.secrets.names().iter().map(|n| n.to_string()).collect(),
            dismiss_dialogs: act.dialogs == DialogPolicy::Dismiss,
            download_dir: act.download_dir.clone(),
            files: act.files.as_ref().map(|f| f.root().to_path_buf()),
            read_chars: act.read_chars,
            schema: act.answer_schema.as_ref().map(|s| s.schema().clone()),
            viewport: o.browser.viewport,
            device: o.browser.device.map(|d| d.name.to_string()),
            expect: o.expect.clone(),
            record_site: o.site == crate::site::SiteUse::Record,
        }
    }

    /// Puts these rules into `o`, whose secrets (given again: their values
    /// are never recorded), confirmer and step budget are kept. Errors name
    /// what cannot be restored.
    pub fn apply(&self, o: &mut AgentOptions) -> Result<(), PolicyError> {
        let missing: Vec<String> = self
            .secrets
            .iter()
            .filter(|n| !o.act.secrets.names().contains(&n.as_str()))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(PolicyError::MissingSecrets(missing));
        }
        let patterns = |list: &[String]| {
            list.iter()
                .map(|p| p.parse::<DomainPattern>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(PolicyError::Domain)
        };
        o.max_failures = self.max_failures;
        o.max_cost = self.max_cost;
        o.max_time = self
            .max_time_s
            .filter(|t| *t > 0.0 && t.is_finite())
            .map(Duration::from_secs_f64);
        o.images = self.images.max(1);
        o.list_cap = self.list_cap;
        o.scrub = self.scrub;
        o.act.domains = DomainPolicy {
            allow: patterns(&self.allow_domains)?,
            block: patterns(&self.block_domains)?,
        };
        o.act.confirm = ConfirmGuard::new(
            self.confirm,
            self.confirm_words.clone(),
            o.act.confirm.confirmer(),
        );
        o.act.dialogs = if self.dismiss_dialogs {
            DialogPolicy::Dismiss
        } else {
            DialogPolicy::Accept
        };
        o.act.download_dir = self.download_dir.clone();
        // A folder given again (`resume --files`) wins over the recorded one.
        if o.act.files.is_none() {
            o.act.files = match &self.files {
                Some(dir) => {
                    Some(crate::files::UploadFolder::new(dir).map_err(PolicyError::Uploads)?)
                }
                None => None,
            };
        }
        o.act.read_chars = self.read_chars;
        o.act.answer_schema = match &self.schema {
            Some(s) => Some(Arc::new(
                AnswerSchema::new(s.clone()).map_err(PolicyError::Schema)?,
            )),
            None => None,
        };
        o.browser.viewport = self.viewport;
        o.browser.device = match &self.device {
            Some(name) => Some(crate::browser::Device::named(name).map_err(PolicyError::Device)?),
            None => None,
        };
        o.expect = self.expect.clone();
        // A recorded run goes on recording, into the same site.har.
        if self.record_site && o.site == crate::site::SiteUse::Live {
            o.site = crate::site::SiteUse::Record;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::{ConfirmPolicy, Secrets};

    #[test]
    fn the_rules_come_back_as_they_were_and_secrets_must_be_given_again() {
        let mut o = AgentOptions {
            max_cost: Some(0.5),
            ..AgentOptions::default()
        };
        o.act.domains.allow = vec!["*.example.com".parse().unwrap()];
        o.act.confirm = ConfirmGuard::new(ConfirmPolicy::Allow, vec!["zap".into()], None);
        o.act.secrets = Secrets::new(vec!["pw=hunter2-long".parse().unwrap()]).unwrap();
        o.browser.device = Some(crate::browser::Device::named("Pixel 8").unwrap());
        o.browser.viewport = o.browser.device.unwrap().viewport();
        let policy = RunPolicy::of(&o);
        let json = serde_json::to_string(&policy).unwrap();
        assert!(
            json.contains("\"pw\"") && !json.contains("hunter2"),
            "{json}"
        );
        let back: RunPolicy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, policy);

        let mut fresh = AgentOptions::default();
        let err = back.apply(&mut fresh).unwrap_err().to_string();
        assert!(err.contains("give --secret pw=… again"), "{err}");
        fresh.act.secrets = Secrets::new(vec!["pw=other-value".parse().unwrap()]).unwrap();
        back.apply(&mut fresh).unwrap();
        assert_eq!(RunPolicy::of(&fresh), policy);
        assert_eq!(fresh.browser.device.map(|d| d.name), Some("Pixel 8"));
    }
}
