//! [`Reason`]: why a command's arguments could not be read. Each message is
//! written for the model, which reads it with the form the command takes
//! (see [`crate::commands::ParseError`]) and writes the command again.

/// The longest name a checkpoint may have, in characters.
pub(super) const LONGEST_CHECKPOINT_NAME: usize = 80;

/// Why a command's arguments could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Reason {
    /// An echoed name opens a quote it does not close.
    #[error("the quoted name is not closed")]
    QuoteNotClosed,
    /// No element id where one belongs.
    #[error("the element id is missing")]
    IdMissing,
    /// Something else where an element id belongs.
    #[error("{0:?} is not an element id (a number from the list)")]
    NotAnId(String),
    /// Element id 0.
    #[error("element ids start at 1")]
    IdZero,
    /// Nothing after an id where a value belongs.
    #[error("the part after the id is missing (a ':' and a value)")]
    NothingAfterId,
    /// Neither an id nor a point.
    #[error("{0:?} is neither an id nor a point (@x,y)")]
    NotASpot(String),
    /// A point of the image that is not one.
    #[error("{0:?} is no point: write @x,y in the image's pixels, e.g. @412,230")]
    NotAPoint(String),
    /// PRESS with no key.
    #[error("the key is missing")]
    KeyMissing,
    /// A modifier of a chord that is none.
    #[error("{0:?} is not a modifier (Ctrl, Alt, Shift, Meta)")]
    NotAModifier(String),
    /// A key seamark has no name for.
    #[error(
        "{0:?} is not a key seamark knows (Enter, Escape, Tab, Backspace, Delete, Space, \
         arrows, PageUp, PageDown, Home, End, Insert, F1-F12, Shift, Control, Alt, Meta, \
         or one character)"
    )]
    UnknownKey(String),
    /// A duration that is no number.
    #[error("{0:?} is not a number of seconds")]
    NotSeconds(String),
    /// A duration past what a command may wait or hold.
    #[error("{0} seconds is outside 0 to 60")]
    SecondsOutOfRange(f64),
    /// A direction that is none.
    #[error("{0:?} is not a direction (up, down, left, right)")]
    NotADirection(String),
    /// HOLD without how long.
    #[error("HOLD needs how long: HOLD:<id or @x,y>:<seconds>")]
    HoldHowLong,
    /// DRAG with more than four parts.
    #[error("DRAG takes at most four parts: <from>:<to>:<seconds>:<hold>")]
    DragTooManyParts,
    /// DRAG without both its ends.
    #[error("DRAG needs where it starts and where it drops: DRAG:<from>:<to>")]
    DragEnds,
    /// ZOOM on a box with one corner.
    #[error("ZOOM on a box needs its two corners: ZOOM:@x1,y1:@x2,y2")]
    ZoomCorners,
    /// TYPE at a point without its text.
    #[error("TYPE at a point needs the text: TYPE:@x,y:text")]
    TypeAtNoText,
    /// SCROLL at a point without its direction.
    #[error("SCROLL at a point needs a direction: SCROLL:@x,y:down")]
    ScrollAtNoDirection,
    /// BACK followed by something other than `checkpoint`.
    #[error("BACK takes nothing after it, or checkpoint: {0:?} is neither")]
    BackTakes(String),
    /// CHECKPOINT with no name.
    #[error("the checkpoint's name is missing")]
    CheckpointNameMissing,
    /// A checkpoint's name longer than 80 characters.
    #[error(
        "the checkpoint's name is longer than {} characters; name the phase in a few words",
        LONGEST_CHECKPOINT_NAME
    )]
    CheckpointNameLong,
    /// UPLOAD with no file.
    #[error("the file's name is missing")]
    FileNameMissing,
    /// SELECT or DESELECT with no option.
    #[error("the option is missing")]
    OptionMissing,
    /// READ:download: with no file.
    #[error("the downloaded file's name is missing")]
    DownloadNameMissing,
    /// READ:"" .
    #[error("the text to look for is empty")]
    TextToFindEmpty,
    /// FETCH of something that is no URL.
    #[error("{0:?} is not a URL")]
    NotAUrl(String),
    /// TAB of something that is no tab.
    #[error("{0:?} is no tab: give its number (from 1) or close")]
    NotATab(String),
    /// ANSWER, ASK or STOP with nothing after it: which one's text.
    #[error("the {0} is empty")]
    Empty(&'static str),
    /// A TYPE's text of several lines whose closing `"""` never came.
    #[error(
        "the text opened with \"\"\" is not closed within {0} lines: close it with \"\"\" \
         (nothing of it was typed)"
    )]
    TypedNotClosed(usize),
    /// A TYPE's text longer than can be typed.
    #[error("the text is {0} characters long: at most {1} are typed in one TYPE")]
    TypedTooLong(usize, usize),
    /// An ALL-CAPS word the language lacks, written as a command.
    #[error("{0} is not a command")]
    NotACommand(String),
}
