//! The agent in this process, as the library's users drive it: a task on a
//! page of the fixture server, against a scripted model.

use std::time::Duration;

use seamark::agent::{Agent, AgentOptions, Asker, RunResult};
use seamark::brain::{Anthropic, Brain, HttpPolicy, OpenAi, Prices};

use crate::model_server::{say, ModelServer, Turn};
use crate::server::Server;

/// The key the tests send; it must never be written anywhere.
pub const KEY: &str = "sk-test-DO-NOT-LEAK-4242";

/// Model calls that fail fast in tests: two retries, short backoff.
fn quick() -> HttpPolicy {
    HttpPolicy {
        timeout: Duration::from_secs(20),
        retries: 2,
        backoff: Duration::from_millis(20),
        max_wait: Duration::from_secs(2),
    }
}

/// Which wire format the scripted model is reached by.
#[derive(Clone, Copy)]
enum Wire {
    OpenAi,
    Anthropic,
}

/// One task for the agent: a page of the fixture server, a script, options.
pub struct Task {
    task: String,
    page: String,
    wire: Wire,
    options: AgentOptions,
    asker: Option<std::sync::Arc<dyn Asker>>,
}

/// A person who gives the same answer to every question.
struct Answers(&'static str);

impl Asker for Answers {
    fn ask(&self, _question: &str) -> Option<String> {
        Some(self.0.into())
    }
    fn hand_over(&self, _what: &str) -> bool {
        false
    }
}

/// What a finished run left: the result, the model's log, the run directory,
/// and the two sites (`other` is also reached as `localhost`).
pub struct Done {
    pub result: RunResult,
    pub model: ModelServer,
    pub sites: Server,
    pub other: Server,
    _dir: tempfile::TempDir,
}

impl Task {
    pub fn new(task: &str, page: &str) -> Task {
        Task {
            task: task.into(),
            page: page.into(),
            wire: Wire::OpenAi,
            options: AgentOptions {
                max_steps: 10,
                ..AgentOptions::default()
            },
            asker: None,
        }
    }

    /// A person is there, and answers every question with `answer`.
    pub fn person_answers(mut self, answer: &'static str) -> Task {
        self.asker = Some(std::sync::Arc::new(Answers(answer)));
        self
    }

    pub fn anthropic(mut self) -> Task {
        self.wire = Wire::Anthropic;
        self
    }

    pub fn max_steps(mut self, n: usize) -> Task {
        self.options.max_steps = n;
        self
    }

    /// Changes options.
    pub fn with(mut self, f: impl FnOnce(&mut AgentOptions)) -> Task {
        f(&mut self.options);
        self
    }

    pub fn prices(mut self, prices: Prices) -> Task {
        self.options.prices = prices;
        self
    }

    fn brain(wire: Wire, model: &ModelServer) -> Box<dyn Brain> {
        match wire {
            Wire::OpenAi => Box::new(
                OpenAi::new(
                    "test-model",
                    Some(KEY.into()),
                    Some(format!("{}/v1", model.base)),
                    quick(),
                )
                .expect("client"),
            ),
            Wire::Anthropic => Box::new(
                Anthropic::new(
                    "test-model",
                    Some(KEY.into()),
                    Some(model.base.clone()),
                    quick(),
                )
                .expect("client"),
            ),
        }
    }

    /// Runs the task against a scripted model (past the script: `then`).
    pub async fn run(self, script: Vec<Turn>, then: fn() -> Turn) -> Done {
        let other = Server::start(None).await;
        let sites = Server::start(Some(other.base.clone())).await;
        let model = ModelServer::start(script, then).await;
        let dir = tempfile::tempdir().expect("tempdir");
        let mut options = self.options;
        options.out = Some(dir.path().join("run"));
        let mut agent = Agent::builder()
            .task(self.task)
            .url(sites.url(&self.page))
            .brain(Task::brain(self.wire, &model))
            .options(options);
        if let Some(asker) = self.asker {
            agent = agent.asker(asker);
        }
        let result = agent.build().expect("agent").run().await.expect("run");
        Done {
            result,
            model,
            sites,
            other,
            _dir: dir,
        }
    }
}

/// A script's last word: the model stops.
pub fn stop_script() -> Turn {
    say("STOP:the script has no more answers")
}
