//! The browser layer: finds and launches Chromium (or attaches to one over CDP),
//! owns the page, and navigates. Nothing else in seamark talks to chromiumoxide's
//! launch API.

mod camera;
mod consent;
mod device;
mod devtools;
mod dialogs;
mod error;
mod evaluate;
mod find;
mod hit;
mod hold;
mod intercept;
mod launch;
mod options;
mod personal;
mod place;
mod pool;
mod remote;
mod screencast;
mod session;
mod shared;
mod side;
mod traffic;
mod viewport;
mod wire;

pub use launch::tie_to_this_process;

pub use camera::{browser_version, close_look, screenshot, Region};
pub use consent::{consent_note, Consent, ConsentOutcome, ConsentRecord};
pub use device::{Device, DeviceOs, UnknownDevice, DEVICES, FALLBACK_CHROME};
pub use devtools::{
    own_profile_folder, usual_folders, ActivePortFault, DevTools, DevToolsError, ACTIVE_PORT_FILE,
};
pub use dialogs::DialogAnswer;
pub use error::BrowserError;
pub use evaluate::{evaluate, EvalError};
pub use find::find_chromium;
pub use hit::{Hit, HitTester};
pub use intercept::RequestFilter;
pub use launch::NET_LOG_ENV;
pub use options::{BrowserOptions, NO_NETWORK};
pub use personal::PersonalBrowser;
pub use place::{local_time, PageClock, Place, PlaceError};
pub use pool::Pool;
pub(crate) use remote::{found_frames, link_of, remote_frame, remote_frames};
pub use remote::{CdpReply, Link, RemoteSession};
pub use screencast::{ScreenFrame, Screencast};
pub use session::{Navigation, Session};
pub use shared::{profile_holder, sandboxed, SharedBrowser};
pub use traffic::{Answer, Asked, Exchange, Got, Responder, Tap, Traffic, MAX_BODY};
pub use viewport::{DeviceScale, Viewport};
pub use wire::RemoteError;
