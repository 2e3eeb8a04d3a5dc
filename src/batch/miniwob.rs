//! MiniWoB++ as a suite: tasks made from the task pages of a MiniWoB++
//! checkout, served on 127.0.0.1. Each (task, seed) starts its episode with
//! that seed (the same episode every time), gives the episode's instruction
//! as the task, keeps the episode's own time limit, and is scored by the
//! page's raw reward (above 0 is a success).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use super::suite_error::SuiteError;
use super::task::{Check, TaskSpec};
use crate::browser::{evaluate, BrowserOptions, Pool};
use crate::serve::StaticServer;

/// The check of every MiniWoB++ task: the episode's raw reward.
pub const REWARD_CHECK: &str = "WOB_RAW_REWARD_GLOBAL > 0";

/// How long the agent may go on past the episode's own limit (the episode
/// ends itself at its limit; the agent notices at its next step).
const GRACE: Duration = Duration::from_secs(2);

/// The served folder of a MiniWoB++ checkout: the one holding `miniwob/`
/// (the task pages) and `core/core.js`. `dir` may be that folder, or a
/// checkout holding it as `html/` or `miniwob/html/`.
pub fn find_root(dir: &Path) -> Result<PathBuf, SuiteError> {
    let candidates = [
        dir.to_path_buf(),
        dir.join("html"),
        dir.join("miniwob").join("html"),
    ];
    candidates
        .into_iter()
        .find(|c| c.join("core").join("core.js").is_file() && c.join("miniwob").is_dir())
        .ok_or_else(|| SuiteError::NotMiniwob(dir.to_path_buf()))
}

/// The task names of a served folder (`miniwob/<name>.html`), sorted.
pub fn task_names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("miniwob"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_suffix(".html")
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A MiniWoB++ suite being served.
#[derive(Debug)]
pub struct ServedMiniwob {
    /// The served folder.
    pub root: PathBuf,
    server: StaticServer,
}

/// What starting one episode showed.
struct Episode {
    utterance: String,
    limit_ms: u64,
}

impl ServedMiniwob {
    /// Serves the checkout at `dir` (see [`find_root`]).
    pub async fn serve(dir: &Path) -> Result<ServedMiniwob, SuiteError> {
        let root = find_root(dir)?;
        let server =
            StaticServer::start(root.clone())
                .await
                .map_err(|cause| SuiteError::Serve {
                    dir: root.clone(),
                    cause,
                })?;
        Ok(ServedMiniwob { root, server })
    }

    /// The tasks: `names` (all when empty; an unknown name is an error that
    /// lists the known ones) × seeds `0..seeds`, ids `<task>.<seed>`. Each
    /// episode is started once in `pool` to read its instruction and time
    /// limit (`episode_time`, when given, replaces the page's own limit),
    /// `concurrency` at a time.
    pub async fn tasks(
        &self,
        names: &[String],
        seeds: usize,
        episode_time: Option<Duration>,
        pool: &Arc<Pool>,
        browser: &BrowserOptions,
        concurrency: usize,
    ) -> Result<Vec<TaskSpec>, SuiteError> {
        let known = task_names(&self.root);
        let names: Vec<String> = if names.is_empty() {
            known.clone()
        } else {
            let unknown: Vec<String> = (names.iter())
                .filter(|n| !known.contains(n))
                .cloned()
                .collect();
            if !unknown.is_empty() {
                return Err(SuiteError::Unknown {
                    suite: "MiniWoB++",
                    names: unknown,
                    place: self.root.join("miniwob"),
                    has: format!("it has: {}", known.join(", ")),
                });
            }
            names.to_vec()
        };
        let pairs: Vec<(String, usize)> = names
            .iter()
            .flat_map(|n| (0..seeds).map(move |s| (n.clone(), s)))
            .collect();
        let found: Vec<Result<TaskSpec, SuiteError>> = futures::stream::iter(pairs)
            .map(|(name, seed)| self.task(name, seed, episode_time, pool, browser))
            .buffered(concurrency.max(1))
            .collect()
            .await;
        found.into_iter().collect()
    }

    /// One task: its episode started once to read what it asks.
    async fn task(
        &self,
        name: String,
        seed: usize,
        episode_time: Option<Duration>,
        pool: &Arc<Pool>,
        browser: &BrowserOptions,
    ) -> Result<TaskSpec, SuiteError> {
        let url = self.server.url(&format!("miniwob/{name}.html"));
        let fail = |why: String| SuiteError::Episode {
            name: name.clone(),
            seed,
            why,
        };
        let session = pool.open(browser).await.map_err(|e| fail(e.to_string()))?;
        let episode = async {
            session
                .navigate(&url, Duration::from_secs(30))
                .await
                .map_err(|e| e.to_string())?;
            let limit = match episode_time {
                Some(t) => t.as_millis().to_string(),
                None => "core.EPISODE_MAX_TIME".to_string(),
            };
            let seen = evaluate(
                session.page(),
                &format!(
                    "(() => {{ const limit = {limit}; {} const u = core.getUtterance(); \
                     return [typeof u === 'string' ? u : u.utterance, limit]; }})()",
                    start_episode(seed, "limit")
                ),
            )
            .await
            .map_err(|e| format!("the episode did not start: {e}"))?;
            Ok::<_, String>(Episode {
                utterance: seen[0].as_str().unwrap_or_default().trim().to_string(),
                limit_ms: seen[1].as_u64().unwrap_or(10_000),
            })
        }
        .await;
        session.close().await;
        let episode = episode.map_err(fail)?;
        if episode.utterance.is_empty() {
            return Err(fail("the episode gave no instruction".into()));
        }
        // The episode's time, bounded as a browser timer must be.
        let limit_ms = episode.limit_ms.clamp(1, 2_147_483_647);
        Ok(TaskSpec {
            id: format!("{name}.{seed}"),
            task: episode.utterance,
            url,
            check: Some(Check::Js(REWARD_CHECK.into())),
            max_time: Some((Duration::from_millis(limit_ms) + GRACE).as_secs_f64()),
            setup: Some(start_episode(seed, &limit_ms.to_string())),
            ..TaskSpec::default()
        })
    }
}

/// The script that starts an episode with `seed` and a time limit of
/// `limit` (a JavaScript expression, in ms): the same episode every time.
fn start_episode(seed: usize, limit: &str) -> String {
    format!("Math.seedrandom('{seed}'); core.EPISODE_MAX_TIME = {limit}; core.startEpisodeReal();")
}
