//! What the API and the page answer with: a response's body (whole, or a
//! stream of events), a whole response, and the status of an error.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::{Response, StatusCode};

use super::CoworkerError;

/// A response's body: whole, or a stream of events.
pub type Body = BoxBody<Bytes, Infallible>;

/// A whole response, never cached.
pub fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()).boxed());
    *r.status_mut() = status;
    if let Ok(v) = content_type.parse() {
        r.headers_mut().insert("content-type", v);
    }
    if let Ok(v) = "no-store".parse() {
        r.headers_mut().insert("cache-control", v);
    }
    r
}

/// The status an error is answered with.
pub fn status_of(e: &CoworkerError) -> StatusCode {
    match e {
        CoworkerError::NotFound(_) => StatusCode::NOT_FOUND,
        CoworkerError::Conflict(_) => StatusCode::CONFLICT,
        CoworkerError::BadRequest(_) => StatusCode::BAD_REQUEST,
        CoworkerError::Db(e) if unavailable(e) => StatusCode::SERVICE_UNAVAILABLE,
        CoworkerError::Db(_) | CoworkerError::Corrupt(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Whether the database could not be reached (down, or every connection
/// busy past the pool's wait), rather than refusing what was asked.
fn unavailable(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_)
    )
}
