//! A page whose script runs without end. Its renderer answers nothing while
//! the script runs: every call seamark makes to it (a look, a click's
//! checks) would wait out its timeout, one after the other, and a step
//! never ended. So while the executor works on a page, a watchdog asks the
//! page a trivial question now and then; when no answer comes in time, the
//! script that holds the page is stopped (`Runtime.terminateExecution`,
//! which the browser carries out beside the busy thread), the calls
//! waiting behind it are answered, and the model is told.

use std::future::Future;
use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, TerminateExecutionParams};
use chromiumoxide::Page;

/// How long the executor works before the page is first asked, and between
/// two questions.
const ASK_EVERY: Duration = Duration::from_secs(4);

/// How long the page has to answer: a page that answers nothing for this
/// long while no load is under way runs a script that does not end.
const ANSWER_WITHIN: Duration = Duration::from_secs(4);

/// Whether `page` answers a trivial question within [`ANSWER_WITHIN`]. An
/// error is an answer too: a document going away in a navigation says so
/// at once, and its new one is not held by a script.
async fn answers(page: &Page) -> bool {
    let question = EvaluateParams::builder().expression("1").build();
    let Ok(question) = question else {
        return true;
    };
    tokio::time::timeout(ANSWER_WITHIN, page.execute(question))
        .await
        .is_ok()
}

/// Runs `work` on `page`, stopping any script that holds the page for good
/// meanwhile: the result, and what was stopped, in words for the model.
pub(super) async fn watched<T>(page: &Page, work: impl Future<Output = T>) -> (T, Option<String>) {
    // On the heap: a look's and a batch's futures are large, and this one
    // held them inline overflowed a test thread's stack (2 MB) in a debug
    // build.
    let mut work = Box::pin(work);
    let mut stopped = 0u32;
    loop {
        // The page is asked beside the work, never instead of it: the work
        // keeps its own timers. (A crashed page answers neither the question
        // nor the stop; asked in turn, they once held a batch for 38 s.)
        let watch = async {
            tokio::time::sleep(ASK_EVERY).await;
            if answers(page).await {
                return false;
            }
            tracing::warn!("the page answers nothing: its running script is stopped");
            let stop = page.execute(TerminateExecutionParams::default());
            matches!(tokio::time::timeout(ANSWER_WITHIN, stop).await, Ok(Ok(_)))
        };
        tokio::select! {
            done = &mut work => {
                let said = (stopped > 0).then(|| {
                    format!(
                        "a script of the page ran without end and held it (it answered nothing \
                         for {} s); seamark stopped it{}: the page may not work as it should",
                        ASK_EVERY.as_secs() + ANSWER_WITHIN.as_secs(),
                        if stopped > 1 { format!(", {stopped} times") } else { String::new() }
                    )
                });
                return (done, said);
            }
            was_stopped = watch => stopped += u32::from(was_stopped),
        }
    }
}
