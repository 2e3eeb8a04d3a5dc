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

/// Starts a worker of each of `configs` on `store`, waits until every
/// session of `ids` has ended (looking every `poll`), stops the workers,
/// and gives the time from their start to the last ending.
#[allow(dead_code)]
pub async fn drained(
    store: &seamark::coworker::Store,
    ids: &[String],
    configs: Vec<seamark::coworker::WorkerConfig>,
    poll: std::time::Duration,
) -> std::time::Duration {
    let started = std::time::Instant::now();
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let handles: Vec<_> = configs
        .into_iter()
        .map(|config| {
            let worker = seamark::coworker::Worker::new(store.clone(), config);
            tokio::spawn(worker.run(shutdown.clone()))
        })
        .collect();
    loop {
        let mut ended = 0;
        for id in ids {
            if store.get(id).await.expect("a session").status.ended() {
                ended += 1;
            }
        }
        if ended == ids.len() {
            break;
        }
        tokio::time::sleep(poll).await;
    }
    let took = started.elapsed();
    let _ = stop.send(true);
    futures::future::join_all(handles).await;
    took
}
