//! The tabs a session has open, as a person sees them: a list with a
//! number for each (in the order they opened, so a number stays the tab's),
//! `TAB:N` to show one, `TAB:close` to close the one shown and come back to
//! the tab before it. The domain policy holds in every tab: one whose page
//! it refuses is not shown.

use crate::records::{Outcome, Status};

use std::time::Duration;

use chromiumoxide::Page;

use super::{actions, Executor};
use crate::browser::{BrowserError, Session};
use crate::commands::{Step, TabTarget};

/// Most tabs listed for the model.
const MAX_LISTED: usize = 20;

/// One of the session's tabs, as the model is shown it.
#[derive(Debug, Clone, PartialEq)]
pub struct TabInfo {
    /// Its number, from 1.
    pub n: usize,
    /// Its page's title.
    pub title: String,
    /// Its page's URL.
    pub url: String,
    /// Whether it is the tab shown (the one commands act on).
    pub current: bool,
}

impl TabInfo {
    /// `2. "Report" · https://…/report (shown)`: the title quoted (see
    /// [`crate::quote`]).
    pub fn line(&self) -> String {
        format!(
            "{}. {} · {}{}",
            self.n,
            crate::quote::quoted(&self.title),
            self.url,
            if self.current { " (shown)" } else { "" }
        )
    }
}

/// The note that lists the tabs for the model, when there is more than one.
pub fn tabs_note(tabs: &[TabInfo]) -> Option<String> {
    (tabs.len() > 1).then(|| {
        let mut lines: Vec<String> = tabs.iter().take(MAX_LISTED).map(TabInfo::line).collect();
        if tabs.len() > MAX_LISTED {
            lines.push(format!("… and {} more", tabs.len() - MAX_LISTED));
        }
        format!(
            "open tabs (TAB:number shows one, TAB:close closes the one shown): {}",
            lines.join("; ")
        )
    })
}

/// Why a tab cannot be listed, shown or closed; told to the model.
#[derive(Debug, thiserror::Error)]
pub enum TabError {
    /// The browser did not list them.
    #[error("the tabs could not be listed: {0}")]
    List(BrowserError),
    /// A number past the last tab.
    #[error("there is no tab {n}: the tabs are numbered 1 to {count}")]
    NoTab {
        /// The number asked for.
        n: usize,
        /// How many there are.
        count: usize,
    },
    /// A tab whose page the domain policy refuses.
    #[error("tab {n} shows {url}, which {why}")]
    Refused {
        /// The tab.
        n: usize,
        /// Its page.
        url: String,
        /// Why the policy refuses it.
        why: String,
    },
    /// The last tab, which stays.
    #[error("this is the only tab: it stays open (FETCH a page instead)")]
    OnlyTab,
    /// The browser did not show it.
    #[error("the tab could not be shown: {0}")]
    Show(BrowserError),
}

impl Executor {
    /// The session's tabs in the order they opened.
    async fn ordered_tabs(&mut self, session: &Session) -> Result<Vec<Page>, TabError> {
        let pages = session.tabs().await.map_err(TabError::List)?;
        let id = |p: &Page| p.target_id().inner().clone();
        self.tab_order.retain(|t| pages.iter().any(|p| id(p) == *t));
        for p in &pages {
            if !self.tab_order.contains(&id(p)) {
                self.tab_order.push(id(p));
            }
        }
        let mut ordered = pages;
        ordered.sort_by_key(|p| self.tab_order.iter().position(|t| *t == id(p)));
        Ok(ordered)
    }

    /// The session's tabs, numbered, the shown one marked.
    pub async fn tabs(&mut self, session: &Session) -> Result<Vec<TabInfo>, TabError> {
        let shown = session.page().target_id().clone();
        let mut tabs = Vec::new();
        for (i, p) in self.ordered_tabs(session).await?.iter().enumerate() {
            let title = tokio::time::timeout(Duration::from_secs(2), p.get_title())
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .unwrap_or_default();
            tabs.push(TabInfo {
                n: i + 1,
                title,
                url: actions::page_url(p).await,
                current: *p.target_id() == shown,
            });
        }
        Ok(tabs)
    }

    /// Shows tab `n`: what the model is told, or why not.
    pub async fn switch_tab(
        &mut self,
        session: &mut Session,
        n: usize,
    ) -> Result<String, TabError> {
        let tabs = self.ordered_tabs(session).await?;
        let Some(page) = n.checked_sub(1).and_then(|i| tabs.get(i)).cloned() else {
            return Err(TabError::NoTab {
                n,
                count: tabs.len(),
            });
        };
        if page.target_id() == session.page().target_id() {
            return Ok(format!("tab {n} is the one shown already"));
        }
        let url = actions::page_url(&page).await;
        if let Some(why) = self.options.domains.url_refusal(&url) {
            return Err(TabError::Refused { n, url, why });
        }
        let old = session.page().clone();
        self.show(session, page).await?;
        self.previous_pages
            .retain(|p| p.target_id() != session.page().target_id());
        self.previous_pages.push(old);
        Ok(format!("switched to tab {n}: {url}"))
    }

    /// Closes the tab shown and shows the one before it (the tab it came
    /// from, else the one listed before it): what the model is told.
    pub async fn close_tab(&mut self, session: &mut Session) -> Result<String, TabError> {
        let tabs = self.ordered_tabs(session).await?;
        let shown = session.page().clone();
        let at = tabs
            .iter()
            .position(|p| p.target_id() == shown.target_id())
            .unwrap_or(0);
        let open = |p: &Page| tabs.iter().any(|t| t.target_id() == p.target_id());
        let came_from = loop {
            match self.previous_pages.pop() {
                Some(p) if open(&p) && p.target_id() != shown.target_id() => break Some(p),
                Some(_) => continue,
                None => break None,
            }
        };
        let Some(back) = came_from.or_else(|| {
            tabs.iter()
                .enumerate()
                .filter(|(i, _)| *i != at)
                .min_by_key(|(i, _)| if *i < at { at - i } else { i - at + tabs.len() })
                .map(|(_, p)| p.clone())
        }) else {
            return Err(TabError::OnlyTab);
        };
        let closed_url = actions::page_url(&shown).await;
        self.show(session, back).await?;
        let _ = tokio::time::timeout(Duration::from_secs(2), shown.close()).await;
        let url = actions::page_url(session.page()).await;
        let n = self
            .ordered_tabs(session)
            .await?
            .iter()
            .position(|p| p.target_id() == session.page().target_id())
            .map_or(0, |i| i + 1);
        Ok(format!(
            "closed the tab of {closed_url}; tab {n} is shown: {url}"
        ))
    }

    /// Makes `page` the one the session shows and the executor watches.
    async fn show(&mut self, session: &mut Session, page: Page) -> Result<(), TabError> {
        let _ = page.bring_to_front().await;
        session.switch_to(page).await.map_err(TabError::Show)?;
        self.watch_shown_page(session).await;
        self.stale = Some("another tab is shown".into());
        self.last = None;
        self.settle(session, self.options.settle_timeout).await;
        Ok(())
    }

    /// Runs `TAB:N` or `TAB:close`.
    pub(super) async fn tab(
        &mut self,
        session: &mut Session,
        step: &Step,
        to: &TabTarget,
    ) -> Outcome {
        let before = session.page().target_id().clone();
        let done = match to {
            TabTarget::Number(n) => self.switch_tab(session, *n).await,
            TabTarget::Close => self.close_tab(session).await,
        };
        match done {
            Ok(message) => {
                let mut outcome = Outcome::new(step, Status::Done, message);
                outcome.page_changed = *session.page().target_id() != before;
                outcome
            }
            Err(why) => Outcome::new(step, Status::Failed, why.to_string()),
        }
    }
}
