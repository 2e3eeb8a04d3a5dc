//! A script's value in the page.

use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;

/// Why a script's value did not come back.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The browser did not run it.
    #[error("{0}")]
    Cdp(chromiumoxide::error::CdpError),
    /// It threw: what it threw, as the page describes it.
    #[error("{0}")]
    Thrown(String),
    /// It gave no answer in time.
    #[error("no answer within {} s", .0.as_secs())]
    Timeout(Duration),
}

/// Evaluates `js` in the page's main world, its promise awaited, and gives
/// its value (`null` when it has none to give), or what it threw.
pub async fn evaluate(page: &Page, js: &str) -> Result<serde_json::Value, EvalError> {
    let mut params = EvaluateParams::new(js);
    params.await_promise = Some(true);
    params.return_by_value = Some(true);
    let reply = page.execute(params).await.map_err(EvalError::Cdp)?;
    if let Some(e) = &reply.result.exception_details {
        return Err(EvalError::Thrown(
            e.exception
                .as_ref()
                .and_then(|x| x.description.clone())
                .unwrap_or_else(|| e.text.clone()),
        ));
    }
    Ok(reply
        .result
        .result
        .value
        .clone()
        .unwrap_or(serde_json::Value::Null))
}
