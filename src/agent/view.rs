//! What a model is shown of one observation, under a run's privacy rules:
//! the element list and title (values only where the agent typed them, never
//! a secret, personal data scrubbed), the marked screenshot with password and
//! secret fields painted over, and the note naming the secrets it may type.
//! The agent loop and the MCP server show pages through these alike.

use crate::records::ZoomRequest;

use crate::act::Executor;
use crate::brain::Image;
use crate::browser::{Region, Session};
use crate::files::UploadFolder;
use crate::mark::{self, MarkStyle};
use crate::perceive::{Observation, Rect};
use crate::safety::Secrets;

use super::prompt::{self, Privacy};

/// One observation as the model gets it.
pub(crate) struct ModelView {
    /// The element list.
    pub elements: String,
    /// The page title, as the model may read it.
    pub title: String,
    /// The placeholders of the secrets the person gave for this page's host.
    pub usable_secrets: Vec<String>,
    /// The marked screenshot at full size, as the run directory keeps it.
    pub full_png: Vec<u8>,
    /// The marked screenshot as sent: shrunk to the long edge models take.
    pub sent: Image,
    /// The boxes (CSS pixels) painted over in it: password fields and
    /// fields holding a secret, which the live view hides too.
    pub hidden: Vec<crate::perceive::Rect>,
}

/// What the model may read of pages the executor acts on: values only where
/// it typed them, never a secret, personal data scrubbed when asked.
pub(crate) fn privacy<'a>(exec: &'a Executor, secrets: &'a Secrets, scrub: bool) -> Privacy<'a> {
    let (typed, secret_nodes) = exec.typed_nodes();
    Privacy {
        typed,
        secret_nodes,
        scrub,
        secrets,
    }
}

/// Why the model cannot be shown what it asked to see.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// A screenshot that could not be marked (which one, and why).
    #[error("{0} could not be marked: {1}")]
    Mark(&'static str, mark::MarkError),
    /// A marked image that could not be encoded for the model.
    #[error("the marked image could not be encoded: {0}")]
    Encode(mark::EncodeError),
    /// The close look could not be captured.
    #[error("{0}")]
    Capture(crate::browser::BrowserError),
    /// A downloaded file that could not be read.
    #[error("{0}")]
    Unreadable(std::io::Error),
    /// A downloaded file that is no image.
    #[error("it is no image that can be decoded: {0}")]
    NoImage(image::ImageError),
}

/// Shows an observation the executor made: its list, title and marked image.
pub(crate) fn model_view(
    obs: &Observation,
    exec: &Executor,
    secrets: &Secrets,
    scrub: bool,
    list_cap: usize,
) -> Result<ModelView, ViewError> {
    let privacy = privacy(exec, secrets, scrub);
    let elements = prompt::model_list(obs, list_cap, &privacy);
    let title = privacy.text(&obs.title);
    let hide = hidden(obs, exec, secrets);
    let (full_png, sent) = marked(obs, &hide)?;
    let usable_secrets = secrets
        .allowed_on(&crate::act::host_of(&obs.url))
        .iter()
        .map(|n| format!("{{{{secret:{n}}}}}"))
        .collect();
    Ok(ModelView {
        elements,
        title,
        usable_secrets,
        full_png,
        sent,
        hidden: hide,
    })
}

/// The boxes no image shows (CSS pixels): password fields and fields
/// holding a secret.
fn hidden(obs: &Observation, exec: &Executor, secrets: &Secrets) -> Vec<Rect> {
    let (_, secret_nodes) = exec.typed_nodes();
    obs.table
        .elements
        .iter()
        .filter(|e| {
            e.input_type.as_deref() == Some("password")
                || secret_nodes.contains(&e.backend_node_id)
                || e.value.as_deref().is_some_and(|v| secrets.reveals(v))
        })
        .filter_map(|e| e.visible.or(Some(e.bbox)))
        .collect()
}

/// A close look (`ZOOM`) as the model gets it.
pub(crate) struct CloseLookView {
    /// The region of the viewport, in CSS pixels.
    pub region: Rect,
    /// The viewport it was taken in.
    pub viewport: crate::browser::Viewport,
    /// Marked, at full size, as the run directory keeps it.
    pub full_png: Vec<u8>,
    /// Marked, as sent.
    pub sent: Image,
}

impl CloseLookView {
    /// What the model is told of it: `which` names the close look among the
    /// images, `screenshot` the screenshot.
    pub fn note(&self, which: &str, screenshot: &str) -> String {
        let r = self.region;
        format!(
            "CLOSE LOOK: {which} CSS {:.0},{:.0} {:.0}×{:.0} of {screenshot}, {}, with the same \
             marks. Points (@x,y) always refer to the screenshot, never to the close look",
            r.x,
            r.y,
            r.w,
            r.h,
            crate::act::magnification_words(r, self.viewport)
        )
    }
}

/// Takes the close look a `ZOOM` asked for: the region captured again at
/// the scale that fills the image size (the browser renders it anew), the
/// observation's marks drawn on it, what no image shows painted over.
pub(crate) async fn close_look(
    session: &Session,
    exec: &Executor,
    secrets: &Secrets,
    obs: &Observation,
    zoom: ZoomRequest,
) -> Result<CloseLookView, ViewError> {
    let r = zoom.region;
    let px_per_css = mark::close_look_scale(r.w, r.h, mark::DEFAULT_LONG_EDGE);
    let region = Region {
        x: r.x,
        y: r.y,
        w: r.w,
        h: r.h,
    };
    let viewport = session.viewport();
    let png = crate::browser::close_look(session.page(), region, px_per_css, viewport.scale.get())
        .await
        .map_err(ViewError::Capture)?;
    let style = MarkStyle::default();
    let hide = hidden(obs, exec, secrets);
    let image = mark::mark_close_look(&png, &obs.table.elements, r, px_per_css, &hide, &style)
        .map_err(|e| ViewError::Mark("the close look", e))?;
    let (full_png, sent) = encoded(&image, &style)?;
    Ok(CloseLookView {
        region: r,
        viewport,
        full_png,
        sent,
    })
}

impl ModelView {
    /// The note telling the model which secrets it may type here, if any.
    pub fn secrets_note(&self) -> Option<String> {
        (!self.usable_secrets.is_empty()).then(|| {
            format!(
                "secrets the person gave for this site, to type as they are written here (you \
                 never see their values): {}",
                self.usable_secrets.join(", ")
            )
        })
    }
}

/// What UPLOAD may attach: the files of the folder the person gave, on
/// every page (a zone that takes dropped files has no file input to tell
/// it); without a folder, on a page with a file input, that there is none.
pub(crate) fn files_note(obs: &Observation, files: Option<&UploadFolder>) -> Option<String> {
    if let Some(folder) = files {
        return Some(format!(
            "files you may UPLOAD (by name, from the folder the person gave; onto a file input, \
             or onto a place that takes files dropped on it): {}",
            folder.listing()
        ));
    }
    let has_file_input = obs
        .table
        .elements
        .iter()
        .any(|e| e.input_type.as_deref() == Some("file"));
    has_file_input.then(|| {
        "this page takes files, but the person gave no folder for uploads: UPLOAD is refused \
         (if the task needs a file, STOP and say so)"
            .into()
    })
}

/// The marked screenshot as PNG at full size, and as sent to a model.
fn marked(obs: &Observation, hide: &[Rect]) -> Result<(Vec<u8>, Image), ViewError> {
    let style = MarkStyle::default();
    let image = mark::mark_observation(obs, &style, hide)
        .map_err(|e| ViewError::Mark("the screenshot", e))?;
    encoded(&image, &style)
}

/// A marked image as PNG at full size, and as sent to a model.
/// A downloaded image as the model is shown it: decoded (a corrupt file
/// is an error), shrunk to the size a screenshot is sent at.
pub(crate) fn shown_file(path: &std::path::Path) -> Result<Image, ViewError> {
    let image = image::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .map_err(ViewError::Unreadable)?
        .decode()
        .map_err(ViewError::NoImage)?
        .to_rgb8();
    encoded(&image, &MarkStyle::default()).map(|(_, sent)| sent)
}

fn encoded(image: &image::RgbImage, style: &MarkStyle) -> Result<(Vec<u8>, Image), ViewError> {
    let long_edge = style.send_long_edge.unwrap_or(mark::DEFAULT_LONG_EDGE);
    let (png, base64) = mark::for_model(image, long_edge).map_err(ViewError::Encode)?;
    Ok((
        png,
        Image {
            media_type: "image/png".into(),
            base64,
        },
    ))
}
