//! What the API and the page answer with: the status of an error (bodies
//! and whole responses are [`crate::listen`]'s).

use hyper::StatusCode;

use super::CoworkerError;

pub use crate::listen::{respond, Body};

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
