//! Frames that run in processes of their own (out-of-process iframes).
//!
//! A browser that isolates sites runs a frame of another site in a renderer
//! process of its own, and the page's DevTools session does not reach into
//! it: its nodes, its scripts and its boxes answer only on a session attached
//! to the frame's own target. chromiumoxide attaches such sessions (it must,
//! to let the frames run) but keeps no handle to them, and sends commands on
//! its page sessions only. So seamark keeps a connection of its own to the
//! browser, attaches to the frame targets of the pages it drives
//! (`Target.attachToTarget` with `flatten`, as Playwright does), and sends a
//! frame's commands over it: a [`Link`] says where a frame's commands go.
//!
//! Only frames whose parent chain reaches a page seamark drives are ever
//! attached to: in a person's browser, their other tabs' frames are not
//! touched.
//!
//! When the requests of seamark's tabs are checked (domain limits in a
//! browser it attached to, see intercept.rs), the same connection has the
//! browser hold every new tab and every frame of another site in seamark's
//! tabs before its first request, turns the checks on in it, and lets it
//! run: a tab opened from seamark's is checked from its first request; a tab
//! the person opens is let go at once and detached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use chromiumoxide::cdp::browser_protocol::page::{FrameId, FrameTree, GetFrameTreeParams};
use chromiumoxide::cdp::browser_protocol::target::GetTargetsParams;
use chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId;
use chromiumoxide::error::CdpError;
use chromiumoxide::types::Command;
use chromiumoxide::Page;

use super::hold::{auto_attach, follow as follow_scripts, Filter, Sessions, Tabs};
use super::intercept::RequestFilter;
use super::side::Channel;
use super::wire::{lock, RemoteError};

/// What a command answered: its result, as chromiumoxide's responses hold it.
#[derive(Debug)]
pub struct CdpReply<T> {
    /// The command's result.
    pub result: T,
}

/// Where the protocol commands about one frame's nodes and scripts go.
#[derive(Debug, Clone)]
pub enum Link {
    /// The page's own session: its main frame and the frames in its process.
    Page(Page),
    /// The session of an out-of-process frame, on seamark's side connection.
    Remote(RemoteSession),
}

/// A session attached to an out-of-process frame's target.
#[derive(Debug, Clone)]
pub struct RemoteSession {
    channel: Arc<Channel>,
    session: String,
    target: String,
}

impl Link {
    /// Sends `cmd` where this link's frames answer.
    pub async fn execute<T: Command>(&self, cmd: T) -> Result<CdpReply<T::Response>, CdpError> {
        match self {
            Link::Page(page) => Ok(CdpReply {
                result: page.execute(cmd).await?.result,
            }),
            Link::Remote(r) => Ok(CdpReply {
                result: r
                    .channel
                    .execute(Some(&r.session), cmd)
                    .await
                    .map_err(|e| CdpError::msg(e.to_string()))?,
            }),
        }
    }

    /// The main world's script context of `frame`, one of this link's frames.
    pub async fn frame_execution_context(
        &self,
        frame: FrameId,
    ) -> Result<Option<ExecutionContextId>, CdpError> {
        match self {
            Link::Page(page) => page.frame_execution_context(frame).await,
            Link::Remote(r) => Ok(lock(&r.channel.contexts)
                .get(&(r.session.clone(), frame.inner().clone()))
                .map(|&id| ExecutionContextId::new(id))),
        }
    }

    /// The target this link's session is attached to (the page's, or the frame's).
    pub fn target_id(&self) -> &str {
        match self {
            Link::Page(page) => page.target_id().inner(),
            Link::Remote(r) => &r.target,
        }
    }

    /// Whether this is an out-of-process frame's session.
    pub fn is_remote(&self) -> bool {
        matches!(self, Link::Remote(_))
    }
}

/// Has the browser hold every new tab before its first request and tell
/// this connection (see hold.rs): a tab opened from seamark's tab must have
/// its requests checked before it sends one.
async fn watch_new_tabs(channel: &Channel) -> Result<(), RemoteError> {
    channel
        .execute(None, auto_attach(&["page"], true))
        .await
        .map(|_| ())
}

/// One browser's out-of-process frames, as seamark follows them: the side
/// connection (opened when first needed) and the sessions attached on it.
#[derive(Debug)]
pub struct RemoteFrames {
    browser_ws: String,
    /// The runtime the browser was started on, which the side connection
    /// lives on too: a session may be driven from another runtime (a program
    /// with a runtime per task, the tests with one per test), and a
    /// connection opened there would die with it, under the other sessions.
    runtime: Option<tokio::runtime::Handle>,
    channel: tokio::sync::Mutex<Option<Arc<Channel>>>,
    /// Frame target → its session on the channel.
    sessions: Sessions,
    /// What checks the frames' requests, when seamark's tabs' are checked
    /// (see intercept.rs).
    filter: Filter,
    /// seamark's tabs in this browser: the tabs they open are checked too.
    tabs: Tabs,
    /// The tabs this connection attached to itself, to have their frames
    /// attached ([`RemoteFrames::attach_frames`]): not new tabs.
    watched: Tabs,
    /// Page target → its out-of-process frames as last found.
    found: Mutex<HashMap<String, Vec<RemoteFrame>>>,
}

impl RemoteFrames {
    /// For the browser whose DevTools endpoint is `browser_ws`.
    pub fn new(browser_ws: &str) -> Arc<RemoteFrames> {
        Arc::new(RemoteFrames {
            browser_ws: browser_ws.to_string(),
            runtime: tokio::runtime::Handle::try_current().ok(),
            channel: tokio::sync::Mutex::default(),
            sessions: Sessions::default(),
            filter: Filter::default(),
            tabs: Tabs::default(),
            watched: Tabs::default(),
            found: Mutex::default(),
        })
    }

    /// Checks the requests of every frame attached from now on with `filter`,
    /// and of every tab seamark's tabs open, from its first request.
    pub async fn check_requests(&self, filter: RequestFilter) -> Result<(), RemoteError> {
        let first = lock(&self.filter).replace(filter).is_none();
        let channel = self.channel().await?;
        if first {
            watch_new_tabs(&channel).await?;
        }
        Ok(())
    }

    async fn channel(&self) -> Result<Arc<Channel>, RemoteError> {
        let mut slot = self.channel.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| !c.reader.is_finished()) {
            return Ok(c.clone());
        }
        lock(&self.sessions).clear();
        let open = Channel::open(
            self.browser_ws.clone(),
            self.filter.clone(),
            self.tabs.clone(),
            self.sessions.clone(),
            self.watched.clone(),
        );
        let opened = match &self.runtime {
            Some(runtime) => runtime
                .spawn(open)
                .await
                .map_err(|e| RemoteError::NotOpened(e.to_string()))??,
            None => open.await?,
        };
        if lock(&self.filter).is_some() {
            watch_new_tabs(&opened).await?;
        }
        *slot = Some(opened.clone());
        Ok(opened)
    }

    /// Has the browser attach the frames of other sites in `page` to this
    /// connection as they start, and those already there at once: each is
    /// followed as hold.rs's `new_frame` says. A first look at a page then finds its
    /// frames' sessions ready, instead of attaching to each one (27-72 ms on
    /// felixge.de's saved page, two sandboxed frames in processes of their
    /// own). When the requests are checked, the frames are held until their
    /// checks are on, so that the first request of each is checked too.
    /// Frames this misses are attached on first use (see
    /// [`RemoteFrames::session`]).
    pub async fn attach_frames(&self, page: &Page) -> Result<(), RemoteError> {
        let channel = self.channel().await?;
        let target = page.target_id().inner();
        {
            let mut watched = lock(&self.watched);
            if !watched.contains(target) {
                watched.push(target.clone());
            }
        }
        let session = channel.attach(target).await?;
        let hold = lock(&self.filter).is_some();
        // A checked tab's workers are held too: their WebSockets are sealed
        // before they run (see intercept.rs).
        let kinds: &[&str] = if hold {
            &["iframe", "worker"]
        } else {
            &["iframe"]
        };
        channel
            .execute(Some(&session), auto_attach(kinds, hold))
            .await
            .map(|_| ())
    }

    /// The session of frame target `target`, attached (and its scripts
    /// followed) on first use.
    async fn session(&self, channel: &Arc<Channel>, target: &str) -> Result<String, RemoteError> {
        if let Some(s) = lock(&self.sessions).get(target) {
            return Ok(s.clone());
        }
        let session = channel.attach(target).await?;
        // Contexts come as events before this answers.
        let guard = lock(&self.filter).clone();
        follow_scripts(&channel.wire, &session, guard.as_ref()).await?;
        lock(&self.sessions).insert(target.to_string(), session.clone());
        Ok(session)
    }
}

/// A frame of a page that runs in a process of its own, or in the process of
/// one that does.
#[derive(Debug, Clone)]
pub struct RemoteFrame {
    /// Its frame id.
    pub id: String,
    /// The frame it is in.
    pub parent: String,
    /// Where its commands go.
    pub link: Link,
    /// Whether it is the root of its process's part of the page (its owner
    /// element is in another process, the parent's).
    pub is_root: bool,
}

/// Which browser's frames each driven page's are: page target → its browser's.
static PAGES: Mutex<Vec<(String, Weak<RemoteFrames>)>> = Mutex::new(Vec::new());

/// Notes that `page` lives in the browser `frames` follows.
pub fn follow(page: &Page, frames: &Arc<RemoteFrames>) {
    {
        let mut tabs = lock(&frames.tabs);
        let target = page.target_id().inner();
        if !tabs.contains(target) {
            tabs.push(target.clone());
        }
    }
    let mut pages = lock(&PAGES);
    pages.retain(|(_, w)| w.strong_count() > 0);
    let target = page.target_id().inner().clone();
    pages.retain(|(t, _)| *t != target);
    pages.push((target, Arc::downgrade(frames)));
}

fn frames_of(page: &Page) -> Option<Arc<RemoteFrames>> {
    let target = page.target_id().inner();
    lock(&PAGES)
        .iter()
        .find(|(t, _)| t == target)
        .and_then(|(_, w)| w.upgrade())
}

/// The frames of `page` in processes of their own (and in theirs), parents
/// before children. `known` are the frames the page's own session holds.
/// Empty when the page has none, or seamark does not drive it through a
/// session (nothing to attach with). An error when some could not be
/// followed: the connection could not be opened, or a frame not attached to.
pub async fn remote_frames(page: &Page, known: &[String]) -> Result<Vec<RemoteFrame>, RemoteError> {
    let Some(frames) = frames_of(page) else {
        return Ok(Vec::new());
    };
    let mut missed = None;
    let channel = frames.channel().await?;
    let targets = channel.execute(None, GetTargetsParams::default()).await?;
    let iframes: Vec<(String, String)> = targets
        .target_infos
        .iter()
        .filter(|t| t.r#type == "iframe")
        .filter_map(|t| {
            Some((
                t.target_id.inner().clone(),
                t.parent_frame_id.as_ref()?.inner().clone(),
            ))
        })
        .collect();
    let mut ours: Vec<String> = known.to_vec();
    let mut out = Vec::new();
    // A frame's target is found once its parent is known: until no frame is added.
    loop {
        let before = out.len();
        for (target, parent) in &iframes {
            // The page's own session may list a frame of another process
            // too (as a frame without a document): it is taken from here.
            if out.iter().any(|f: &RemoteFrame| f.id == *target) || !ours.contains(parent) {
                continue;
            }
            let session = match frames.session(&channel, target).await {
                Ok(s) => s,
                Err(e) => {
                    missed = Some(RemoteError::Frame {
                        target: target.clone(),
                        cause: Box::new(e),
                    });
                    continue;
                }
            };
            let link = Link::Remote(RemoteSession {
                channel: channel.clone(),
                session: session.clone(),
                target: target.clone(),
            });
            ours.push(target.clone());
            out.push(RemoteFrame {
                id: target.clone(),
                parent: parent.clone(),
                link: link.clone(),
                is_root: true,
            });
            // The frames in its process below it.
            if let Ok(tree) = channel
                .execute(Some(&session), GetFrameTreeParams::default())
                .await
            {
                frames_below(&tree.frame_tree, target, &link, &mut out, &mut ours);
            }
        }
        if out.len() == before {
            break;
        }
    }
    lock(&frames.found).insert(page.target_id().inner().clone(), out.clone());
    match missed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The frames below `root` in its process, from its frame tree `tree`,
/// added to `out` (and their ids to `ours`), each reached through `link`.
fn frames_below(
    tree: &FrameTree,
    root: &str,
    link: &Link,
    out: &mut Vec<RemoteFrame>,
    ours: &mut Vec<String>,
) {
    let mut pending = vec![(tree, root.to_string())];
    while let Some((node, parent)) = pending.pop() {
        for child in node.child_frames.iter().flatten() {
            let id = child.frame.id.inner();
            if out.iter().any(|f| f.id == *id) {
                continue;
            }
            ours.push(id.clone());
            out.push(RemoteFrame {
                id: id.clone(),
                parent: parent.clone(),
                link: link.clone(),
                is_root: false,
            });
            pending.push((child, id.clone()));
        }
    }
}

/// The out-of-process frames of `page` as last found (those followed).
pub fn found_frames(page: &Page) -> Vec<RemoteFrame> {
    frames_of(page)
        .and_then(|frames| lock(&frames.found).get(page.target_id().inner()).cloned())
        .unwrap_or_default()
}

/// The out-of-process frame `frame` of `page` as last found, if it is one.
pub fn remote_frame(page: &Page, frame: &str) -> Option<RemoteFrame> {
    let frames = frames_of(page)?;
    let found = lock(&frames.found);
    found
        .get(page.target_id().inner())?
        .iter()
        .find(|f| f.id == frame)
        .cloned()
}

/// Where the commands about frame `frame` of `page` go: its process's
/// session when it runs in one of its own, else the page's.
pub fn link_of(page: &Page, frame: &str) -> Link {
    remote_frame(page, frame).map_or_else(|| Link::Page(page.clone()), |f| f.link)
}
