//! Safety and privacy, enforced in code whatever the model says: domain
//! limits (with a guard every request of a launched browser goes through),
//! confirmation before destructive actions, secrets the model never sees,
//! scrubbing of personal data, and impasses recognised by the orchestrator.

mod confirm;
mod domains;
mod impasse;
mod proxy;
mod scrub;
mod secrets;
mod totp;

pub use confirm::{
    is_reversible, ConfirmGuard, ConfirmPolicy, Confirmer, Danger, Decision, Hold, HoldReason,
    DEFAULT_WORDS, PARKED,
};
pub use domains::{DomainPattern, DomainPatternError, DomainPolicy};
pub use impasse::{detect as detect_impasse, Impasse};
pub use proxy::{Blocked, DomainGuard};
pub use scrub::{scrub, scrub_reading, tag_counts};
pub use secrets::{Secret, SecretError, Secrets};
pub use totp::{OneTimeCodes, TotpError};
