//! JavaScript dialogs (alert, confirm, prompt, beforeunload), answered from
//! the moment a session's page exists: a dialog blocks its page's scripts,
//! its load and every evaluation until it is answered, so one opened while
//! the start page loads (before any executor watches the page) once held
//! `seamark read` and `mark` for good, and a run for minutes.
//!
//! The session answers; what the answer is (OK or Cancel, a prompt's text)
//! is the executor's to say ([`crate::browser::Session::answer_dialogs`]),
//! and its watch records the dialogs for the model.

use std::sync::{Arc, Mutex, PoisonError};

use chromiumoxide::cdp::browser_protocol::page::{
    DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::Page;
use futures::StreamExt;
use tokio::task::JoinHandle;

/// How confirm and prompt dialogs are answered (an alert and a
/// beforeunload are always taken: there is nothing else to do with them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialogAnswer {
    /// OK (true) or Cancel.
    pub accept: bool,
    /// What a prompt is given when it is answered with OK.
    pub prompt_text: String,
}

impl Default for DialogAnswer {
    fn default() -> Self {
        Self {
            accept: true,
            prompt_text: String::new(),
        }
    }
}

impl DialogAnswer {
    /// Whether a dialog of this type is taken (OK) under this answer.
    pub fn accepts(&self, kind: &DialogType) -> bool {
        match kind {
            DialogType::Alert | DialogType::Beforeunload => true,
            _ => self.accept,
        }
    }
}

/// Answers the dialogs of the page it follows, with the answer of the
/// moment; stops with the session.
#[derive(Default)]
pub(super) struct DialogKeeper {
    answer: Arc<Mutex<DialogAnswer>>,
    task: Option<JoinHandle<()>>,
}

impl DialogKeeper {
    /// Answers `page`'s dialogs from now on (and no longer another's).
    pub(super) async fn follow(&mut self, page: &Page) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        let Ok(mut opened) = page.event_listener::<EventJavascriptDialogOpening>().await else {
            tracing::warn!("the page's dialogs cannot be heard: one would block it");
            return;
        };
        let (page, answer) = (page.clone(), self.answer.clone());
        self.task = Some(tokio::spawn(async move {
            while let Some(dialog) = opened.next().await {
                let now = answer
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                let accept = now.accepts(&dialog.r#type);
                let mut params = HandleJavaScriptDialogParams::new(accept);
                if accept && dialog.r#type == DialogType::Prompt {
                    params.prompt_text = Some(now.prompt_text);
                }
                if let Err(e) = page.execute(params).await {
                    tracing::debug!("a dialog could not be answered: {e}");
                }
            }
        }));
    }

    /// Answers with `answer` from now on.
    pub(super) fn set(&self, answer: DialogAnswer) {
        *self.answer.lock().unwrap_or_else(PoisonError::into_inner) = answer;
    }
}

impl Drop for DialogKeeper {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
