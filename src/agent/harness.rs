//! What a run (or an MCP session) is set in: its domain guard, its site
//! recorded or replayed, its downloads folder, and its end record.

use crate::act::ActOptions;
use crate::browser::BrowserOptions;
use crate::journal::{Journal, JournalError};
use crate::safety::{DomainGuard, Secrets};
use crate::site::{ClockStart, SiteHold, SiteUse};

use super::error::SetupError;
use super::RunResult;

/// Writes a run's end record and then, when asked, its report; the result
/// says where the report is. A report that cannot be written loses the run
/// nothing: the journal has it all, and `seamark report` writes it again.
pub(crate) fn write_end(
    journal: &mut Journal,
    mut result: RunResult,
    report: bool,
) -> Result<RunResult, JournalError> {
    journal.write(&serde_json::json!({ "kind": "end", "result": result }))?;
    if report {
        match crate::report::write(journal.dir()) {
            Ok(written) => result.report = Some(written.html),
            Err(e) => tracing::warn!("the report was not written: {e}"),
        }
    }
    Ok(result)
}

/// The folder of a run's directory that keeps its downloads.
pub const DOWNLOADS: &str = "downloads";

/// Downloads are results of a run (or an MCP session): kept in its
/// directory `dir` unless the person said where.
pub(crate) fn keep_downloads_in(act: &mut ActOptions, dir: &std::path::Path) {
    if act.download_dir.is_none() {
        act.download_dir = Some(dir.join(DOWNLOADS));
    }
}

/// At the end of a run in `dir`: one that downloaded nothing keeps no
/// empty folder for it.
pub(crate) fn drop_empty_downloads(dir: &std::path::Path) {
    let _ = std::fs::remove_dir(dir.join(DOWNLOADS));
}

/// Starts the domain guard for the executor's policy, and routes the
/// browser and the executor (its record of refusals) through it: a browser
/// seamark launches sends its requests through the guard's proxy; in one it
/// attached to, seamark's tabs check theirs with the guard's filter.
pub(crate) async fn start_guard(
    act: &mut ActOptions,
    browser: &mut BrowserOptions,
    attached: bool,
) -> Result<DomainGuard, SetupError> {
    let guard = DomainGuard::start(act.domains.clone())
        .await
        .map_err(SetupError::Guard)?;
    if attached {
        browser.request_filter = Some(guard.request_filter());
    } else {
        browser.proxy = Some(guard.addr.clone());
    }
    act.blocked = Some(guard.record());
    Ok(guard)
}

/// Records the site or answers it from a recording, as `site` says: the
/// browser's traffic and, when `fixed_clock` asks, its clock. A replay in a
/// browser seamark launches reaches no network: what the recording does not
/// answer fails. A replay is the live run's twin: the domain `guard`'s
/// policy holds for what the recording answers as it holds live (the
/// guard's proxy sees nothing of a replay, so its filter checks each
/// request in the tab).
pub(crate) fn hold_site(
    site: &SiteUse,
    fixed_clock: Option<ClockStart>,
    secrets: &Secrets,
    browser: &mut BrowserOptions,
    dir: &std::path::Path,
    guard: Option<&DomainGuard>,
) -> Result<Option<SiteHold>, SetupError> {
    let hold = SiteHold::open(site, secrets, dir).map_err(SetupError::Site)?;
    if let Some(hold) = &hold {
        browser.traffic = Some(hold.traffic());
        if matches!(hold, SiteHold::Replaying(_)) {
            if let Some(guard) = guard {
                browser.request_filter = Some(guard.request_filter());
            }
            if browser.cdp.is_none() {
                browser.proxy = Some(crate::browser::NO_NETWORK.to_string());
            }
        }
    }
    if let Some(start) = fixed_clock {
        browser.place.clock = Some(SiteHold::clock(hold.as_ref(), start));
    }
    Ok(hold)
}
