//! The command language the model speaks (`CLICK:3`, `TYPE:5:John Smith`,
//! `SCROLL:down`, …): a typed [`Command`](crate::commands::Command), and a forgiving parser whose errors
//! are written for the model to correct itself.
//!
//! What the parser accepts, because models write it: commands inside code
//! fences or among prose and `Thought:` lines (only lines that *start* with a
//! command count), lower case, spaces after the colon, `[3]` or `#3` for an id,
//! smart quotes, a trailing period, bullets, several commands per line split by
//! `;`. What it rejects: an unknown command word, a missing or non-numeric id, a
//! direction or key it does not know, and an answer with no command at all.

mod parse;
mod reason;

use std::fmt;

pub use parse::{parse, ParseError};
pub use reason::Reason;

/// A direction to scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScrollDirection {
    /// Toward the top.
    Up,
    /// Toward the bottom.
    Down,
    /// Toward the left.
    Left,
    /// Toward the right.
    Right,
}

/// A key with its modifiers, e.g. `Ctrl+A` or `Enter`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeyCombo {
    /// Modifiers in canonical order: Ctrl, Alt, Shift, Meta.
    pub modifiers: Vec<String>,
    /// The key itself, canonical (`Enter`, `Escape`, `Tab`, `a`, `F5`, …).
    pub key: String,
}

impl fmt::Display for KeyCombo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.modifiers {
            write!(f, "{m}+")?;
        }
        write!(f, "{}", self.key)
    }
}

/// What `READ` reads.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "of", content = "arg", rename_all = "lowercase")]
pub enum ReadTarget {
    /// `READ`: the whole page.
    Page,
    /// `READ:12`: the region of element 12 (its table, list, dialog, card).
    Element(u32),
    /// `READ:"text"`: the smallest section whose heading or text holds it.
    Text(String),
    /// `READ:more`: the next part of the last reading.
    More,
    /// `READ:download:NAME`: the text of a file a download saved (a PDF's
    /// text too, page by page).
    Download(String),
    /// `READ:print`: the page as it would print (its print style sheet:
    /// what shows only on paper shows, what hides on paper hides).
    Print,
}

/// A point of the marked screenshot the model was sent, in that image's
/// pixels: `@412,230`. For what no mark covers (a canvas, a map, a chart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImagePoint {
    /// Pixels from the image's left edge.
    pub x: u32,
    /// Pixels from the image's top edge.
    pub y: u32,
}

impl std::fmt::Display for ImagePoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "@{},{}", self.x, self.y)
    }
}

/// An end of a `DRAG`: an element's mark, or a point of the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Spot {
    /// The element with this mark id.
    Id(u32),
    /// This point of the image the model was sent.
    At(ImagePoint),
}

impl std::fmt::Display for Spot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Spot::Id(id) => write!(f, "{id}"),
            Spot::At(at) => write!(f, "{at}"),
        }
    }
}

/// How a slow `DRAG` goes: the move's length and a hold before the release.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DragPace {
    /// Seconds the move from the press to the drop takes.
    pub seconds: f64,
    /// Seconds the button stays down at the drop before it lets go.
    #[serde(default)]
    pub hold: f64,
}

/// What `ZOOM` looks at closer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoomRegion {
    /// `ZOOM:12`: the element with this mark id.
    Element(u32),
    /// `ZOOM:@x1,y1:@x2,y2`: the box between two corners of the image.
    Area(ImagePoint, ImagePoint),
}

impl std::fmt::Display for ZoomRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ZoomRegion::Element(id) => write!(f, "{id}"),
            ZoomRegion::Area(a, b) => write!(f, "{a}:{b}"),
        }
    }
}

/// Where `TAB` goes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TabTarget {
    /// `TAB:2`: the tab with this number in the list of tabs (from 1).
    Number(usize),
    /// `TAB:close`: close the tab shown, back to the one before it.
    Close,
}

/// One command of the model's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "command", rename_all = "lowercase")]
pub enum Command {
    /// Click element `id`.
    Click {
        /// Mark id.
        id: u32,
    },
    /// Replace the content of field `id` with `text`.
    Type {
        /// Mark id.
        id: u32,
        /// The text; may hold `{{secret:NAME}}` placeholders.
        text: String,
    },
    /// Empty field `id`.
    Clear {
        /// Mark id.
        id: u32,
    },
    /// Choose `option` in select or listbox `id`.
    Select {
        /// Mark id.
        id: u32,
        /// The option's text.
        option: String,
    },
    /// Take `option` out of the selection of list `id` (one that takes
    /// several options: SELECT adds to its selection).
    Deselect {
        /// Mark id.
        id: u32,
        /// The option's text.
        option: String,
    },
    /// Move the pointer over element `id`.
    Hover {
        /// Mark id.
        id: u32,
    },
    /// Scroll the page, or the scroll container `id`.
    Scroll {
        /// The container, or `None` for the page.
        id: Option<u32>,
        /// Which way.
        direction: ScrollDirection,
    },
    /// Press a key or a combination as a person does: the modifiers go
    /// down first, then the key, then all come up in reverse order.
    Press {
        /// The key.
        key: KeyCombo,
        /// Seconds the key is held down before it comes up (`PRESS:Space:2`);
        /// `None`: pressed and released at once.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hold: Option<f64>,
    },
    /// Open a URL.
    Fetch {
        /// The URL as written.
        url: String,
    },
    /// Go back in history.
    Back,
    /// A phase of the plan is done: keep the page (its URL, what it shows,
    /// the site's cookies and storage) as a checkpoint to come back to.
    Checkpoint {
        /// The phase, as the model names it.
        name: String,
    },
    /// `BACK:checkpoint`: back to the last checkpoint's page and state (or
    /// the one named), after a mistake.
    #[serde(rename = "back_to_checkpoint")]
    BackToCheckpoint {
        /// The checkpoint's name, or `None` for the last one kept.
        name: Option<String>,
    },
    /// Wait a number of seconds.
    Wait {
        /// Seconds (0 to 60).
        seconds: f64,
    },
    /// Attach files to file input `id`: each named in the folder the
    /// person gave for uploads (`UPLOAD:9:cv.pdf`; several, for an input
    /// that takes them, between `|`: `UPLOAD:9:a.png|b.png`).
    Upload {
        /// Mark id.
        id: u32,
        /// The files' names in the uploads folder.
        names: Vec<String>,
    },
    /// Click a point of the image the model was sent.
    ClickAt {
        /// The point.
        at: ImagePoint,
    },
    /// Move the pointer over a point of the image the model was sent.
    HoverAt {
        /// The point.
        at: ImagePoint,
    },
    /// Turn the mouse wheel at a point of the image the model was sent:
    /// what is under it scrolls (a map or a chart may zoom instead).
    ScrollAt {
        /// The point.
        at: ImagePoint,
        /// Which way.
        direction: ScrollDirection,
    },
    /// Click a point of the image the model was sent, then type there (a
    /// field drawn on a canvas, an editor with no mark).
    TypeAt {
        /// The point.
        at: ImagePoint,
        /// The text.
        text: String,
    },
    /// Press on `from`, move to `to` in steps, release there.
    Drag {
        /// Where the drag starts.
        from: Spot,
        /// Where it drops.
        to: Spot,
        /// A slow drag: how long the move takes and how long the button is
        /// held at `to` before it lets go (`DRAG:4:9:2:1`); `None`: a quick one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pace: Option<DragPace>,
    },
    /// A right click (the context menu's button) on an element or a point.
    #[serde(rename = "right_click")]
    RightClick {
        /// Where.
        on: Spot,
    },
    /// A double click on an element or a point.
    #[serde(rename = "double_click")]
    DoubleClick {
        /// Where.
        on: Spot,
    },
    /// The left button pressed on an element or a point, held `seconds`,
    /// then released (a button that acts on a long press).
    Hold {
        /// Where.
        on: Spot,
        /// How long, 0 to 60 s.
        seconds: f64,
    },
    /// Show a region closer in the next step: captured again at a larger
    /// scale, beside the screenshot.
    Zoom {
        /// Which region.
        region: ZoomRegion,
    },
    /// Show another of the session's tabs, or close the one shown.
    Tab {
        /// Which.
        to: TabTarget,
    },
    /// Read the page's content as Markdown, into the next step's page data.
    Read {
        /// What to read.
        of: ReadTarget,
    },
    /// Information the task asked for.
    Answer {
        /// The answer.
        text: String,
    },
    /// A question only the person can answer (which account, a code sent by
    /// SMS): the run waits for the answer, or ends needing it.
    Ask {
        /// The question.
        question: String,
    },
    /// A person's hands are needed in the browser (a CAPTCHA, a second
    /// factor, a login the agent was not given): the run lends them the
    /// browser and waits, or ends needing them.
    Hands {
        /// Why.
        reason: String,
    },
    /// The task is done.
    Complete {
        /// What was done.
        summary: String,
    },
    /// An impasse: a CAPTCHA, a login wall, missing information.
    Stop {
        /// Why.
        reason: String,
    },
}

impl Command {
    /// The mark id the command acts on, if any.
    pub fn target(&self) -> Option<u32> {
        match self {
            Command::Click { id }
            | Command::Type { id, .. }
            | Command::Clear { id }
            | Command::Select { id, .. }
            | Command::Deselect { id, .. }
            | Command::Hover { id }
            | Command::Upload { id, .. } => Some(*id),
            Command::Drag {
                from: Spot::Id(id), ..
            }
            | Command::RightClick { on: Spot::Id(id) }
            | Command::DoubleClick { on: Spot::Id(id) }
            | Command::Hold {
                on: Spot::Id(id), ..
            } => Some(*id),
            Command::Scroll { id, .. } => *id,
            Command::Read {
                of: ReadTarget::Element(id),
            }
            | Command::Zoom {
                region: ZoomRegion::Element(id),
            } => Some(*id),
            _ => None,
        }
    }

    /// The point of the image the command acts at, if it takes one (a
    /// DRAG's ends are its own).
    pub fn point(&self) -> Option<ImagePoint> {
        match self {
            Command::ClickAt { at }
            | Command::HoverAt { at }
            | Command::ScrollAt { at, .. }
            | Command::TypeAt { at, .. }
            | Command::RightClick { on: Spot::At(at) }
            | Command::DoubleClick { on: Spot::At(at) }
            | Command::Hold {
                on: Spot::At(at), ..
            } => Some(*at),
            _ => None,
        }
    }

    /// Whether the command acts at a point of the image (a DRAG with an
    /// end there too): its outcome says where it acted, not what it changed.
    pub fn acts_at_a_point(&self) -> bool {
        match self {
            Command::Drag { from, to, .. } => {
                matches!(from, Spot::At(_)) || matches!(to, Spot::At(_))
            }
            other => other.point().is_some(),
        }
    }

    /// The same command at another point of the image, for one that takes
    /// a point ([`Command::point`]); any other as it is.
    pub fn at_point(self, at: ImagePoint) -> Command {
        match self {
            Command::ClickAt { .. } => Command::ClickAt { at },
            Command::HoverAt { .. } => Command::HoverAt { at },
            Command::ScrollAt { direction, .. } => Command::ScrollAt { at, direction },
            Command::TypeAt { text, .. } => Command::TypeAt { at, text },
            Command::RightClick { on: Spot::At(_) } => Command::RightClick { on: Spot::At(at) },
            Command::DoubleClick { on: Spot::At(_) } => Command::DoubleClick { on: Spot::At(at) },
            Command::Hold {
                on: Spot::At(_),
                seconds,
            } => Command::Hold {
                on: Spot::At(at),
                seconds,
            },
            other => other,
        }
    }

    /// Whether the command acts on the page (every one but WAIT, CHECKPOINT, READ,
    /// ZOOM and those that answer or end the task).
    pub fn touches_page(&self) -> bool {
        !matches!(
            self,
            Command::Wait { .. }
                | Command::Checkpoint { .. }
                | Command::Read { .. }
                | Command::Zoom { .. }
                | Command::Answer { .. }
                | Command::Ask { .. }
                | Command::Hands { .. }
                | Command::Complete { .. }
                | Command::Stop { .. }
        )
    }
}

/// Most characters of the free text of a command (an ANSWER, a question, a
/// COMPLETE's summary, a STOP's reason) and of a model's whole answer kept:
/// far past any a task needs, while a runaway reply of megabytes no longer
/// makes a journal and a report of as many.
pub const MAX_TEXT_CHARS: usize = 64 * 1024;

/// `text` whole up to [`MAX_TEXT_CHARS`], else cut there with the cut said
/// (`what` it is: "answer", "reason").
pub fn kept_text(text: &str, what: &str) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        None => text.to_string(),
        Some((at, _)) => format!(
            "{}\n[cut here by seamark: the {what} had {} characters; {MAX_TEXT_CHARS} are kept]",
            &text[..at],
            text.chars().count()
        ),
    }
}

/// A parsed command with the name the model echoed for its target, if any
/// (`CLICK:3 "Submit"`), for the executor to check against the table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Step {
    /// The command.
    pub command: Command,
    /// The echoed name of the target, without quotes.
    pub echo: Option<String>,
}

/// The canonical written form, as the model is taught to write it
/// (`CLICK:3`, `TYPE:5:John Smith`, `SCROLL:4:down`, `PRESS:Ctrl+A`).
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = |d: &ScrollDirection| match d {
            ScrollDirection::Up => "up",
            ScrollDirection::Down => "down",
            ScrollDirection::Left => "left",
            ScrollDirection::Right => "right",
        };
        match self {
            Command::Click { id } => write!(f, "CLICK:{id}"),
            Command::Type { id, text } if text.contains('\n') => {
                write!(f, "TYPE:{id}:\"\"\"{text}\"\"\"")
            }
            Command::Type { id, text } => write!(f, "TYPE:{id}:{text}"),
            Command::Clear { id } => write!(f, "CLEAR:{id}"),
            Command::Select { id, option } => write!(f, "SELECT:{id}:{option}"),
            Command::Deselect { id, option } => write!(f, "DESELECT:{id}:{option}"),
            Command::Hover { id } => write!(f, "HOVER:{id}"),
            Command::Scroll {
                id: None,
                direction,
            } => write!(f, "SCROLL:{}", dir(direction)),
            Command::Scroll {
                id: Some(id),
                direction,
            } => write!(f, "SCROLL:{id}:{}", dir(direction)),
            Command::Press { key, hold: None } => write!(f, "PRESS:{key}"),
            Command::Press { key, hold: Some(s) } => write!(f, "PRESS:{key}:{s}"),
            Command::Fetch { url } => write!(f, "FETCH:{url}"),
            Command::Back => write!(f, "BACK"),
            Command::Checkpoint { name } => write!(f, "CHECKPOINT:{name}"),
            Command::BackToCheckpoint { name: None } => write!(f, "BACK:checkpoint"),
            Command::BackToCheckpoint { name: Some(name) } => {
                write!(f, "BACK:checkpoint:{name}")
            }
            Command::Wait { seconds } => write!(f, "WAIT:{seconds}"),
            Command::Upload { id, names } => write!(f, "UPLOAD:{id}:{}", names.join("|")),
            Command::Read { of } => match of {
                ReadTarget::Page => write!(f, "READ"),
                ReadTarget::Element(id) => write!(f, "READ:{id}"),
                ReadTarget::Text(text) => write!(f, "READ:\"{text}\""),
                ReadTarget::More => write!(f, "READ:more"),
                ReadTarget::Download(name) => write!(f, "READ:download:{name}"),
                ReadTarget::Print => write!(f, "READ:print"),
            },
            Command::ClickAt { at } => write!(f, "CLICK:{at}"),
            Command::Drag {
                from,
                to,
                pace: None,
            } => write!(f, "DRAG:{from}:{to}"),
            Command::Drag {
                from,
                to,
                pace: Some(p),
            } => write!(f, "DRAG:{from}:{to}:{}:{}", p.seconds, p.hold),
            Command::RightClick { on } => write!(f, "RIGHT_CLICK:{on}"),
            Command::DoubleClick { on } => write!(f, "DOUBLE_CLICK:{on}"),
            Command::Hold { on, seconds } => write!(f, "HOLD:{on}:{seconds}"),
            Command::HoverAt { at } => write!(f, "HOVER:{at}"),
            Command::ScrollAt { at, direction } => write!(f, "SCROLL:{at}:{}", dir(direction)),
            Command::TypeAt { at, text } if text.contains('\n') => {
                write!(f, "TYPE:{at}:\"\"\"{text}\"\"\"")
            }
            Command::TypeAt { at, text } => write!(f, "TYPE:{at}:{text}"),
            Command::Zoom { region } => write!(f, "ZOOM:{region}"),
            Command::Tab { to } => match to {
                TabTarget::Number(n) => write!(f, "TAB:{n}"),
                TabTarget::Close => write!(f, "TAB:close"),
            },
            Command::Answer { text } => write!(f, "ANSWER:{text}"),
            Command::Ask { question } => write!(f, "ASK:{question}"),
            Command::Hands { reason } => write!(f, "HANDS:{reason}"),
            Command::Complete { summary } => write!(f, "COMPLETE:{summary}"),
            Command::Stop { reason } => write!(f, "STOP:{reason}"),
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.echo {
            Some(name) => write!(f, "{} \"{name}\"", self.command),
            None => write!(f, "{}", self.command),
        }
    }
}
