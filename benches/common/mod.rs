//! What the browser benchmarks share: the tests' HTTP server and the runtime.

#[path = "../../tests/it/server.rs"]
#[allow(dead_code)]
pub mod server;

/// The runtime the benchmarks drive the browser from: two workers, as this
/// machine has two cores.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

#[path = "../../tests/it/model_server.rs"]
#[allow(dead_code)]
pub mod model_server;

#[allow(dead_code)]
pub mod paced;

/// Runs `task` from `url` with the scripted model at `model` and `options`,
/// which must end in success.
#[allow(dead_code)]
pub async fn successful_run(
    model: &str,
    task: &str,
    url: String,
    options: seamark::agent::AgentOptions,
) {
    let brain = model_server::scripted_brain(model).expect("brain");
    let result = seamark::agent::Agent::builder()
        .task(task)
        .url(url)
        .brain(brain)
        .options(options)
        .build()
        .expect("agent")
        .run()
        .await
        .expect("run");
    assert!(result.success, "{}", result.reason);
}
