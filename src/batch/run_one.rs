//! One run of a batch: its options, its agent, the last look at its page,
//! and its record scored and kept.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use tokio::sync::watch;

use crate::agent::{Agent, AgentOptions, LastLook, LearnedSkill, RunResult, RunStatus};
use crate::browser::Session;
use crate::clock::utc_rfc3339;
use crate::journal::Journal;
use crate::safety::{Secret, Secrets};
use crate::schema::AnswerSchema;

use super::{lock, score, Check, RunRecord, Score, Shared, Unit};

/// Runs one unit to its record and the record's line (secrets redacted), or
/// `None` when it was interrupted.
pub(super) async fn run_one(shared: &Shared, unit: &Unit) -> Option<(RunRecord, String)> {
    let spec = &unit.spec;
    let rel = PathBuf::from("runs")
        .join(&spec.id)
        .join(unit.attempt.to_string());
    let run_dir = shared.dir.join(&rel);
    // What an interrupted earlier try left is replaced: it was never recorded.
    if run_dir.exists() {
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    let started = Instant::now();
    let fail = |reason: String, secrets: &Secrets| {
        let wall_time_s = started.elapsed().as_secs_f64();
        let result = RunResult::failed_to_start(reason, run_dir.clone(), wall_time_s);
        Some(record(unit, &rel, &result, FinalLook::default(), secrets))
    };
    let options = match run_options(shared, unit, &run_dir) {
        Ok(o) => o,
        Err(why) => return fail(format!("the task cannot run: {why}"), &Secrets::default()),
    };
    let secrets = options.act.secrets.clone();
    let brain = match (shared.brains)(spec) {
        Ok(b) => b,
        Err(e) => return fail(format!("no model: {e}"), &secrets),
    };
    let look: Arc<Mutex<FinalLook>> = Arc::default();
    let mut builder = Agent::builder()
        .task(spec.task.clone())
        .url(spec.url.clone())
        .brain(brain)
        .options(options)
        .pool(shared.pool.clone())
        .interrupt(stopped(shared.stop.clone()));
    if let Some(js) = &spec.setup {
        builder = builder.setup(js.clone());
    }
    if let Some((judges, images)) = &shared.judges {
        match judges(spec) {
            Ok(b) => builder = builder.judge(crate::judge::Judge::new(b, *images)),
            Err(e) => return fail(format!("no judge model: {e}"), &secrets),
        }
    }
    // A skill is learned from a run that passes its check, known only once
    // the run is scored.
    let learned: LearnedSkill = Arc::default();
    if shared.agent.skills.is_some() {
        builder = builder.learn_into(learned.clone());
    }
    builder = builder.last_look(final_look(
        spec.check.clone().filter(Check::needs_page),
        look.clone(),
    ));
    let result = match builder.build() {
        Ok(agent) => agent.run().await,
        Err(e) => return fail(e.to_string(), &secrets),
    };
    let result = match result {
        Ok(r) => r,
        Err(e) => return fail(e.to_string(), &secrets),
    };
    if result.status == RunStatus::Interrupted {
        return None;
    }
    let seen = std::mem::take(&mut *lock(&look));
    let scored = record(unit, &rel, &result, seen, &secrets);
    keep_verdict(&run_dir, &result, &scored.0, spec.check.as_ref(), &secrets);
    let learned = lock(&learned).take();
    if let (true, Some(dir), Some(skill)) = (scored.0.passed, &shared.agent.skills, learned) {
        if let Err(why) = crate::skill::SkillStore::new(dir).save(&skill) {
            tracing::warn!("run {}: the skill learned was not saved: {why}", spec.id);
        }
    }
    Some(scored)
}

/// Writes a run's verdict into its own journal, as a check record after its
/// last step, and its report again with it: the run's report shows how the
/// batch scored it.
fn keep_verdict(
    run_dir: &Path,
    result: &RunResult,
    scored: &RunRecord,
    check: Option<&Check>,
    secrets: &Secrets,
) {
    let record = crate::records::CheckRecord::new(
        result.steps,
        &scored.verdict.check,
        check.map_or("done", Check::wanted),
        scored.passed,
        scored.verdict.detail.clone(),
    );
    let written = Journal::create(run_dir).and_then(|mut journal| {
        journal.redact(secrets.clone());
        journal.write(&record)
    });
    if let Err(e) = written {
        tracing::warn!(
            "run {}: its verdict was not kept in its journal: {e}",
            scored.id
        );
        return;
    }
    if result.report.is_some() {
        if let Err(e) = crate::report::write(run_dir) {
            tracing::warn!("run {}: its report was not written again: {e}", scored.id);
        }
    }
}

/// What the last look at a run's final page found.
#[derive(Default)]
struct FinalLook {
    /// What the check asked of the page, when it looks at one.
    page: Option<score::PageLook>,
    /// The browser the run was in.
    browser: Option<String>,
}

/// The last look at the final page: the browser it is in and, for a check
/// that needs it, what the check asks of it; kept in `slot`.
fn final_look(check: Option<Check>, slot: Arc<Mutex<FinalLook>>) -> LastLook {
    Box::new(move |session: &Session| {
        Box::pin(async move {
            let page = match &check {
                Some(c) => Some(score::look(session, c).await),
                None => None,
            };
            *lock(&slot) = FinalLook {
                page,
                browser: Some(session.origin().to_string()),
            };
        })
    })
}

/// Resolves once the batch is told to stop, with what stopped it.
async fn stopped(mut stop: watch::Receiver<Option<String>>) -> String {
    loop {
        if let Some(cause) = stop.borrow_and_update().clone() {
            return cause;
        }
        if stop.changed().await.is_err() {
            // The batch is gone without stopping: never interrupt.
            std::future::pending::<()>().await;
        }
    }
}

/// Why a task's own options cannot run.
#[derive(Debug, thiserror::Error)]
enum TaskOptionsError {
    /// Its `schema` is no JSON Schema.
    #[error("schema: {0}")]
    Schema(crate::schema::SchemaError),
    /// Its `secrets` cannot be read, or clash with the batch's.
    #[error("secrets: {0}")]
    Secrets(crate::safety::SecretError),
    /// Its `fixed_clock` is no start.
    #[error("{0}")]
    Clock(crate::site::ClockError),
}

/// The run's options: the batch's, with the task's own budget, schema and
/// secrets, in its own run directory (downloads in a folder of its own).
fn run_options(
    shared: &Shared,
    unit: &Unit,
    run_dir: &Path,
) -> Result<AgentOptions, TaskOptionsError> {
    let spec = &unit.spec;
    let mut options = shared.agent.clone();
    options.out = Some(run_dir.to_path_buf());
    if let Some(n) = spec.max_steps {
        options.max_steps = n;
    }
    if let Some(s) = spec.max_time {
        options.max_time = Some(std::time::Duration::from_secs_f64(s));
    }
    if let Some(schema) = &spec.schema {
        let schema = AnswerSchema::new(schema.clone()).map_err(TaskOptionsError::Schema)?;
        options.act.answer_schema = Some(Arc::new(schema));
    }
    if !spec.secrets.is_empty() {
        let own = spec
            .secrets
            .iter()
            .map(|s| s.parse::<Secret>())
            .collect::<Result<Vec<_>, _>>()
            .and_then(|own| options.act.secrets.and(own))
            .map_err(TaskOptionsError::Secrets)?;
        options.act.secrets = own;
    }
    if let Some(d) = &options.act.download_dir {
        options.act.download_dir = Some(d.join(&spec.id).join(unit.attempt.to_string()));
    }
    if !spec.expect.is_empty() {
        options.expect = spec.expect.clone();
    }
    if let Some(har) = &spec.site {
        options.site = crate::site::SiteUse::Replay(har.into());
    }
    if let Some(clock) = &spec.fixed_clock {
        let replayed = matches!(options.site, crate::site::SiteUse::Replay(_));
        let start =
            crate::site::ClockStart::parse(clock, replayed).map_err(TaskOptionsError::Clock)?;
        options.fixed_clock = Some(start);
    }
    Ok(options)
}

/// How many times a run asked its model: its steps, less those a skill did.
pub fn model_calls(result: &RunResult) -> usize {
    result
        .steps
        .saturating_sub(result.skill.as_ref().map_or(0, |s| s.steps))
}

/// The record of a finished run, and its line with the run's secrets redacted.
fn record(
    unit: &Unit,
    rel: &Path,
    result: &RunResult,
    seen: FinalLook,
    secrets: &Secrets,
) -> (RunRecord, String) {
    let verdict = score::verdict(unit.spec.check.as_ref(), result, seen.page);
    let report = result
        .report
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|name| rel.join(name));
    let record = RunRecord {
        id: unit.spec.id.clone(),
        attempt: unit.attempt,
        position: unit.position,
        task: unit.spec.task.clone(),
        passed: verdict.passed,
        verdict,
        status: result.status,
        reason: result.reason.clone(),
        answer: result.answer.clone(),
        data: result.data.clone(),
        steps: result.steps,
        tokens: result.tokens,
        cost_usd: result.cost_usd,
        wall_time_s: result.wall_time_s,
        model: result.model.clone(),
        run_dir: rel.to_path_buf(),
        report,
        browser: seen.browser,
        downloads: result.downloads.clone(),
        judge: result.judge.clone(),
        finished: utc_rfc3339(SystemTime::now()),
        model_calls: Some(model_calls(result)),
    };
    // The record given back is the one written: secrets redacted. One that
    // no longer reads as a record once redacted (a secret that equals a
    // status word) keeps its numbers and withholds its texts.
    let record = secrets.redacted(&record).unwrap_or_else(|_| {
        let withheld = "(withheld: a secret equals a word of this record)".to_string();
        RunRecord {
            task: secrets.redact(&record.task),
            reason: withheld.clone(),
            answer: None,
            data: None,
            verdict: Score {
                detail: withheld,
                ..record.verdict
            },
            ..record
        }
    });
    let line = serde_json::to_string(&record).unwrap_or_default();
    (record, line)
}
