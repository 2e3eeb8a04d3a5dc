//! OpenTelemetry traces: a run, its steps and their stages (perceive, mark,
//! the model's call, act, each command) as spans, exported over OTLP/HTTP
//! when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `--otlp URL`) says where.
//!
//! The spans are `tracing` spans of target `seamark`, made by the helpers
//! below; [`Traces`](crate::traces::Traces) turns them into OpenTelemetry spans. Without an
//! endpoint nothing is made: no exporter, no thread, and the spans cost what
//! a disabled `tracing` span costs. The standard variables hold
//! (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`). A model's call carries the GenAI semantic
//! conventions' attributes; what a span says of a page or a command has its
//! secrets sealed, as the journal has.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use tracing::field::Empty;
use tracing::Span;

use crate::brain::Usage;
use crate::records::{Outcome, RunResult, RunStatus, StepRecord};
use crate::safety::Secrets;

/// The variables that turn traces on, in the order the exporter reads them.
pub const ENDPOINT_VARS: &[&str] = &[
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// Why traces could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TracesError {
    /// The HTTP client that sends them could not be made.
    #[error("cannot make the HTTP client for traces")]
    Client(#[source] reqwest::Error),
    /// The OTLP exporter refused its configuration (an endpoint that is no
    /// URL, a header that is none).
    #[error("cannot export traces to {endpoint}")]
    Exporter {
        /// Where they were to go.
        endpoint: String,
        /// What the exporter said.
        #[source]
        source: opentelemetry_otlp::ExporterBuildError,
    },
}

/// The exporter of a process's traces, while it lives.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
}

impl Traces {
    /// Traces to `otlp` (a base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`), else
    /// to where the environment says; `None` when neither says anything.
    /// Call it before any async runtime starts: the HTTP client it makes
    /// runs one of its own.
    pub fn start(otlp: Option<&str>) -> Result<Option<Traces>, TracesError> {
        let from_env = ENDPOINT_VARS
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()));
        let endpoint = match (otlp, from_env) {
            (Some(base), _) => Some(signal_endpoint(base)),
            (None, Some(_)) => None,
            (None, None) => return Ok(None),
        };
        let client = reqwest::blocking::Client::builder()
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(TracesError::Client)?;
        let mut builder = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(OtlpClient(client));
        if let Some(endpoint) = &endpoint {
            builder = builder.with_endpoint(endpoint.clone());
        }
        let exporter = builder.build().map_err(|source| TracesError::Exporter {
            endpoint: endpoint.unwrap_or_else(|| "OTEL_EXPORTER_OTLP_ENDPOINT".into()),
            source,
        })?;
        // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win.
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("seamark");
        }
        let resource = resource
            .with_attribute(opentelemetry::KeyValue::new(
                "service.version",
                env!("CARGO_PKG_VERSION"),
            ))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        Ok(Some(Traces { provider }))
    }

    /// The tracer the `tracing` layer hands seamark's spans to.
    pub fn tracer(&self) -> SdkTracer {
        self.provider.tracer("seamark")
    }

    /// Sends what is left and stops the exporter's thread (at most a few
    /// seconds when the collector does not answer).
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!("traces not all sent: {e}");
        }
    }
}

/// A base URL's traces endpoint, as the exporter makes it of
/// `OTEL_EXPORTER_OTLP_ENDPOINT`: `/v1/traces` appended.
fn signal_endpoint(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    }
}

/// OTLP over seamark's own HTTP client (reqwest, rustls): the exporter's
/// thread sends its batches with it, blocking, as the SDK expects.
#[derive(Debug)]
struct OtlpClient(reqwest::blocking::Client);

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for OtlpClient {
    async fn send_bytes(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let mut sent = self
            .0
            .request(parts.method, parts.uri.to_string())
            .body(body.to_vec());
        for (name, value) in &parts.headers {
            sent = sent.header(name, value);
        }
        let response = sent.send()?;
        let mut answer = http::Response::builder().status(response.status().as_u16());
        for (name, value) in response.headers() {
            answer = answer.header(name.as_str(), value.as_bytes());
        }
        Ok(answer.body(response.bytes()?)?)
    }
}

/// The span of a whole run: its task, start page and model, and at its
/// end how it went ([`end_run`]).
pub fn run_span(task: &str, url: &str, model: &str, secrets: &Secrets) -> Span {
    tracing::info_span!(
        target: "seamark",
        "run",
        "otel.name" = "seamark run",
        "otel.status_code" = Empty,
        "seamark.task" = %secrets.redact(task),
        "url.full" = %secrets.redact(url),
        "gen_ai.request.model" = model,
        "seamark.status" = Empty,
        "seamark.steps" = Empty,
        "seamark.reason" = Empty,
        "seamark.run_dir" = Empty,
        "seamark.cost_usd" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
    )
}

/// How the run went, on its span.
pub fn end_run(span: &Span, result: &RunResult, secrets: &Secrets) {
    span.record("seamark.status", result.status.word());
    span.record("seamark.steps", result.steps);
    span.record("seamark.reason", secrets.redact(&result.reason));
    span.record("seamark.run_dir", result.run_dir.display().to_string());
    span.record("gen_ai.usage.input_tokens", result.tokens.input);
    span.record("gen_ai.usage.output_tokens", result.tokens.output);
    if let Some(cost) = result.cost_usd {
        span.record("seamark.cost_usd", cost);
    }
    if result.status != RunStatus::Done {
        span.record("otel.status_code", "ERROR");
    }
}

/// The span of step `step`; [`end_step`] gives it its page and commands.
pub fn step_span(step: usize) -> Span {
    tracing::info_span!(
        target: "seamark",
        "step",
        "otel.name" = %format!("step {step}"),
        "seamark.step" = step,
        "url.full" = Empty,
        "seamark.commands" = Empty,
        "seamark.outcomes" = Empty,
        "seamark.error" = Empty,
    )
}

/// A step's page, commands and outcomes (one a line), on the current span
/// (the step's): from the record as the journal keeps it, secrets sealed.
pub fn end_step(shown: &StepRecord) {
    let span = Span::current();
    span.record("url.full", shown.url.as_str());
    span.record("seamark.commands", shown.commands.join("\n"));
    if let Some(report) = &shown.report {
        span.record("seamark.outcomes", outcome_lines(&report.outcomes));
    }
    if let Some(error) = &shown.error {
        span.record("seamark.error", error.as_str());
    }
}

/// A command's status as the journal writes it: `done`, `no_effect`, …
fn status_word(outcome: &Outcome) -> String {
    match serde_json::to_value(outcome.status) {
        Ok(serde_json::Value::String(word)) => word,
        _ => format!("{:?}", outcome.status),
    }
}

fn outcome_lines(outcomes: &[Outcome]) -> String {
    outcomes
        .iter()
        .map(|o| format!("{} → {}: {}", o.command, status_word(o), o.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A stage of a step: `perceive`, `mark`, `act`.
pub fn stage_span(stage: &'static str) -> Span {
    tracing::info_span!(target: "seamark", "stage", "otel.name" = stage)
}

/// The span of one model call (the GenAI conventions' `chat`), with its
/// provider and model from the brain's name (`openai/gpt-4o`).
pub fn chat_span(brain: &str) -> Span {
    let (system, model) = brain.split_once('/').unwrap_or(("seamark", brain));
    tracing::info_span!(
        target: "seamark",
        "chat",
        "otel.name" = %format!("chat {model}"),
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "gen_ai.operation.name" = "chat",
        "gen_ai.system" = system,
        "gen_ai.provider.name" = system,
        "gen_ai.request.model" = model,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "error.type" = Empty,
    )
}

/// What a model call cost, or that it failed, on its span.
pub fn end_chat(span: &Span, answered: Result<Usage, &str>) {
    match answered {
        Ok(usage) => {
            span.record("gen_ai.usage.input_tokens", usage.input);
            span.record("gen_ai.usage.output_tokens", usage.output);
        }
        Err(kind) => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", kind);
        }
    }
}

/// The span of one command of a step, e.g. `CLICK:3`.
pub fn command_span(command: &str) -> Span {
    tracing::info_span!(
        target: "seamark",
        "command",
        "otel.name" = %command.split(':').next().unwrap_or(command),
        "seamark.command" = command,
        "seamark.status" = Empty,
        "seamark.outcome" = Empty,
        "otel.status_code" = Empty,
    )
}

/// A command's outcome on its span, secrets sealed.
pub fn end_command(span: &Span, outcome: &Outcome, secrets: &Secrets) {
    span.record("seamark.status", status_word(outcome));
    span.record("seamark.outcome", secrets.redact(&outcome.message));
    if outcome.status.is_failure() {
        span.record("otel.status_code", "ERROR");
    }
}

/// The span of a batch (with its number of tasks, when known ahead): its
/// runs are spans below it.
pub fn batch_span(tasks: Option<usize>) -> Span {
    let span = tracing::info_span!(
        target: "seamark",
        "batch",
        "otel.name" = "seamark batch",
        "seamark.tasks" = Empty,
    );
    if let Some(n) = tasks {
        span.record("seamark.tasks", n);
    }
    span
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_gets_the_traces_path_once() {
        assert_eq!(
            signal_endpoint("http://127.0.0.1:4318/"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            signal_endpoint("https://otlp.example.com/v1/traces"),
            "https://otlp.example.com/v1/traces"
        );
    }
}
