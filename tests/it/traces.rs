//! OpenTelemetry traces: a run sends a trace to the collector that
//! OTEL_EXPORTER_OTLP_ENDPOINT names, its steps, stages, model calls and
//! commands as spans below the run's, with the GenAI token attributes, and
//! no secret in any of it; a batch is one trace with its runs below it.

use crate::model_server::{reply, say, ModelServer, INPUT_TOKENS, OUTPUT_TOKENS};
use crate::otlp_receiver::{OtlpReceiver, ReceivedSpan};
use crate::server::Server;
use crate::support::Seamark;

const PW: &str = "correct-horse-battery-staple";

fn named<'a>(spans: &'a [ReceivedSpan], name: &str) -> Vec<&'a ReceivedSpan> {
    spans.iter().filter(|s| s.name == name).collect()
}

#[tokio::test]
async fn a_run_is_a_trace_of_its_steps_stages_model_calls_and_commands_with_no_secret() {
    let collector = OtlpReceiver::start().await;
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| {
            format!(
                "TYPE:{}:ada\nTYPE:{}:{{{{secret:pw}}}}",
                r.id_of("Username"),
                r.id_of("Password")
            )
        }),
        say("COMPLETE:typed the name and the password"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let secret = format!("pw@127.0.0.1={PW}");
    let url = server.url("account.html");
    Seamark::task(&[
        "--task",
        "Fill in the sign-in form",
        "--url",
        &url,
        "--secret",
        &secret,
    ])
    .model(&model)
    .envs(&[("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base.as_str())])
    .run()
    .await;

    // The process sent what it had before it exited.
    let spans = collector.spans();
    let roots = named(&spans, "seamark run");
    assert_eq!(roots.len(), 1, "{spans:#?}");
    let root = roots[0];
    assert!(
        root.parent_span_id.is_empty(),
        "the run is the trace's root"
    );
    assert_eq!(root.attr("seamark.status"), "done");
    assert_eq!(root.attr("seamark.steps"), "2");
    assert_eq!(root.attr("gen_ai.request.model"), "openai/scripted");
    assert_eq!(
        root.resource.get("service.name").map(String::as_str),
        Some("seamark")
    );
    assert!(
        spans.iter().all(|s| s.trace_id == root.trace_id),
        "one trace"
    );

    let steps = [named(&spans, "step 1"), named(&spans, "step 2")].concat();
    assert_eq!(steps.len(), 2, "{spans:#?}");
    assert!(steps.iter().all(|s| s.parent_span_id == root.span_id));
    let first = steps[0];
    assert!(
        first.attr("seamark.commands").contains("TYPE:"),
        "{first:?}"
    );
    assert!(
        first.attr("seamark.outcomes").contains("{{secret:pw}}"),
        "the secret's placeholder, not its value: {first:?}"
    );

    // Each step's stages, and its model call with the GenAI attributes.
    for stage in ["perceive", "mark", "act"] {
        let s = named(&spans, stage);
        assert_eq!(s.len(), 2, "{stage}: {spans:#?}");
        assert!(s
            .iter()
            .all(|s| steps.iter().any(|p| p.span_id == s.parent_span_id)));
    }
    let chats = named(&spans, "chat scripted");
    assert_eq!(chats.len(), 2, "{spans:#?}");
    for chat in &chats {
        assert_eq!(chat.attr("gen_ai.system"), "openai");
        assert_eq!(chat.attr("gen_ai.request.model"), "scripted");
        assert_eq!(
            chat.attr("gen_ai.usage.input_tokens"),
            INPUT_TOKENS.to_string()
        );
        assert_eq!(
            chat.attr("gen_ai.usage.output_tokens"),
            OUTPUT_TOKENS.to_string()
        );
    }
    // The commands, below the act stage.
    let typed = named(&spans, "TYPE");
    assert_eq!(typed.len(), 2, "{spans:#?}");
    let acts = named(&spans, "act");
    assert!(typed
        .iter()
        .all(|t| acts.iter().any(|a| a.span_id == t.parent_span_id)));
    assert!(
        typed.iter().all(|t| t.attr("seamark.status") == "done"),
        "{typed:#?}"
    );

    // No byte of the secret went out.
    for body in collector.bodies() {
        assert!(
            !body.windows(PW.len()).any(|w| w == PW.as_bytes()),
            "a trace carried the secret"
        );
    }
}

#[tokio::test]
async fn a_batch_is_one_trace_with_its_runs_below_it_and_otlp_names_the_collector() {
    let collector = OtlpReceiver::start().await;
    let server = Server::start(None).await;
    let model = ModelServer::start(Vec::new(), || say("COMPLETE:looked")).await;
    let tasks = format!(
        "{}\n{}\n",
        serde_json::json!({"id": "one", "task": "Look at the form", "url": server.url("account.html")}),
        serde_json::json!({"id": "two", "task": "Look at the form again", "url": server.url("account.html")})
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tasks.jsonl");
    std::fs::write(&file, tasks).unwrap();
    let base = format!("{}/v1", model.base);
    let otlp = collector.base.clone();
    Seamark::new(&[
        "batch",
        file.to_str().unwrap(),
        "--otlp",
        &otlp,
        "--out",
        dir.path().join("batch").to_str().unwrap(),
    ])
    .envs(&[
        ("OPENAI_BASE_URL", base.as_str()),
        ("SEAMARK_MODEL", "openai/scripted"),
    ])
    .run()
    .await;
    let spans = collector.spans();
    let batches = named(&spans, "seamark batch");
    assert_eq!(batches.len(), 1, "{spans:#?}");
    let batch = batches[0];
    assert_eq!(batch.attr("seamark.tasks"), "2");
    let runs = named(&spans, "seamark run");
    assert_eq!(runs.len(), 2, "{spans:#?}");
    for r in runs {
        assert_eq!(r.parent_span_id, batch.span_id);
        assert_eq!(r.trace_id, batch.trace_id);
    }
}

#[tokio::test]
async fn a_collector_that_is_not_there_costs_the_run_nothing_and_a_bad_one_is_told() {
    let server = Server::start(None).await;
    let model = ModelServer::start(vec![say("COMPLETE:looked")], || say("STOP:no")).await;
    let url = server.url("account.html");
    // Nothing listens on port 9: the run is done all the same.
    Seamark::task(&["--task", "Look at the form", "--url", &url])
        .model(&model)
        .envs(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")])
        .run()
        .await;
    let bad = Seamark::new(&["devices", "--otlp", "not a url"])
        .fails(2)
        .run()
        .await;
    bad.stderr_has("--otlp");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_of_a_server_is_a_trace_of_its_own() {
    use crate::coworker::{submit, titles, wait_for, Served};
    use seamark::coworker::SessionState;

    let collector = OtlpReceiver::start().await;
    let sites = Server::start(None).await;
    let model = ModelServer::answering(titles).await;
    let w = crate::support::Workdir::new(&model);
    // --otlp on the server reaches the runs its workers start.
    let served = Served::serve(&w, &["--workers", "1", "--otlp", &collector.base]).await;
    let mut dirs = Vec::new();
    for k in [3, 4] {
        let url = sites.url(&format!("form.html?k={k}"));
        let options = serde_json::json!({ "no_skills": true, "max_steps": 3 });
        let id = submit(&served, &format!("Say the number {k}"), &url, options).await;
        let done = wait_for(&served, &id, SessionState::Done).await;
        dirs.push(done.run_dir);
    }
    served.terminate().await;
    let spans = collector.spans();
    let runs = named(&spans, "seamark run");
    assert_eq!(runs.len(), 2, "{spans:#?}");
    assert_ne!(runs[0].trace_id, runs[1].trace_id, "a trace each");
    for r in &runs {
        assert!(r.parent_span_id.is_empty(), "each session's run is a root");
        let dir = r.attr("seamark.run_dir");
        assert!(
            dirs.iter()
                .any(|d| dir.ends_with(d.trim_start_matches("./"))),
            "{dir} is no session's run directory: {dirs:?}"
        );
    }
}
