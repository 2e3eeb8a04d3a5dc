//! A small OTLP/HTTP receiver, as a collector is: it takes
//! `POST /v1/traces` (protobuf, the exporters' default), keeps each body as
//! it came and the spans it holds, and answers 200.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http_body_util::BodyExt;
use hyper::service::service_fn;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message;
use tokio::net::TcpListener;

/// One span as received: its name, ids, and attributes as text.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    pub name: String,
    pub trace_id: Vec<u8>,
    pub span_id: Vec<u8>,
    pub parent_span_id: Vec<u8>,
    pub attributes: HashMap<String, String>,
    /// The resource's attributes (`service.name`, …).
    pub resource: HashMap<String, String>,
}

impl ReceivedSpan {
    /// An attribute's value as text (`""` when it has none).
    pub fn attr(&self, key: &str) -> &str {
        self.attributes.get(key).map(String::as_str).unwrap_or("")
    }
}

pub struct OtlpReceiver {
    /// `http://127.0.0.1:PORT`: what OTEL_EXPORTER_OTLP_ENDPOINT takes.
    pub base: String,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl OtlpReceiver {
    pub async fn start() -> OtlpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let kept = kept.clone();
                tokio::spawn(async move {
                    let service =
                        service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                            let kept = kept.clone();
                            async move {
                                let path = request.uri().path().to_string();
                                let body = request.into_body().collect().await?.to_bytes();
                                if path == "/v1/traces" {
                                    kept.lock().unwrap().push(body.to_vec());
                                }
                                Ok::<_, hyper::Error>(hyper::Response::new(
                                    http_body_util::Full::new(bytes::Bytes::new()),
                                ))
                            }
                        });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        OtlpReceiver { base, bodies, task }
    }

    /// Every body received, as it came.
    pub fn bodies(&self) -> Vec<Vec<u8>> {
        self.bodies.lock().unwrap().clone()
    }

    /// Every span received, decoded.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        let mut out = Vec::new();
        for body in self.bodies() {
            let request =
                ExportTraceServiceRequest::decode(body.as_slice()).expect("an OTLP protobuf body");
            for resource_spans in request.resource_spans {
                let resource = resource_spans
                    .resource
                    .map(|r| attributes(&r.attributes))
                    .unwrap_or_default();
                for scope in resource_spans.scope_spans {
                    for span in scope.spans {
                        out.push(ReceivedSpan {
                            name: span.name,
                            trace_id: span.trace_id,
                            span_id: span.span_id,
                            parent_span_id: span.parent_span_id,
                            attributes: attributes(&span.attributes),
                            resource: resource.clone(),
                        });
                    }
                }
            }
        }
        out
    }
}

fn attributes(
    list: &[opentelemetry_proto::tonic::common::v1::KeyValue],
) -> HashMap<String, String> {
    list.iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(AnyValue::StringValue(s)) => s.clone(),
                Some(AnyValue::IntValue(i)) => i.to_string(),
                Some(AnyValue::DoubleValue(d)) => d.to_string(),
                Some(AnyValue::BoolValue(b)) => b.to_string(),
                Some(other) => format!("{other:?}"),
                None => String::new(),
            };
            (kv.key.clone(), value)
        })
        .collect()
}
