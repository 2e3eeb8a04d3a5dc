//! stdio for the MCP service, with JSON-RPC's parse error. The SDK's stdio
//! transport skips a line that is not JSON without a word (it fears an
//! error storm between two peers answering each other's garbage); JSON-RPC
//! 2.0 asks for `{"error": {"code": -32700}, "id": null}`, and a client whose
//! request was mangled on the way waits forever without it. An error with
//! id null is never answered, so no storm comes of it.
//!
//! Lines from stdin that parse as JSON go on to the service; the others get
//! the parse error. The service's lines and these errors reach stdout
//! through one writer, a whole line at a time, so they never interleave.

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Room in each pipe between the filter and the service.
const PIPE_BYTES: usize = 1 << 20;

/// JSON-RPC 2.0's code for a message that is not JSON.
pub const PARSE_ERROR: i64 = -32700;

/// The service's ends of stdin and stdout, as a transport for
/// `ServiceExt::serve`; the tasks that filter stdin and write stdout run
/// until stdin ends and the service lets go of its end.
pub fn transport() -> (DuplexStream, DuplexStream) {
    let (service_in, mut to_service) = tokio::io::duplex(PIPE_BYTES);
    let (from_service, service_out) = tokio::io::duplex(PIPE_BYTES);
    let (lines, mut to_stdout) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = to_stdout.recv().await {
            let written = async {
                stdout.write_all(line.as_bytes()).await?;
                stdout.write_all(b"\n").await?;
                stdout.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
    });
    let errors = lines.clone();
    tokio::spawn(async move {
        let mut input = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = input.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<serde_json::Value>(&line) {
                Ok(_) => {
                    let sent = async {
                        to_service.write_all(line.as_bytes()).await?;
                        to_service.write_all(b"\n").await
                    };
                    if sent.await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let error = json!({
                        "jsonrpc": "2.0",
                        "id": null,
                        "error": {"code": PARSE_ERROR, "message": format!("Parse error: {e}")},
                    });
                    if errors.send(error.to_string()).is_err() {
                        break;
                    }
                }
            }
        }
        // Dropping `to_service` ends the service's input: the client is gone.
    });
    tokio::spawn(async move {
        let mut output = BufReader::new(from_service).lines();
        while let Ok(Some(line)) = output.next_line().await {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (service_in, service_out)
}
