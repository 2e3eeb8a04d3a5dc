//! The forgiving parser of the model's answers.

use super::reason::{Reason, LONGEST_CHECKPOINT_NAME};
use super::{
    kept_text, Command, DragPace, ImagePoint, KeyCombo, ReadTarget, ScrollDirection, Spot, Step,
    TabTarget, ZoomRegion,
};

/// Why an answer could not be read. The message is written for the model: it
/// names the offending text and the expected form.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// Nothing in the answer starts with a command.
    #[error(
        "no command found in the answer; write one command per line, e.g. CLICK:3, \
         TYPE:5:John Smith, SCROLL:down, ANSWER:the price is $7, or STOP:reason"
    )]
    Empty,
    /// A command was recognised but its arguments were not.
    #[error("line {line}: {reason} in {text:?}; expected {expected}")]
    Bad {
        /// 1-based line of the answer.
        line: usize,
        /// The command as written.
        text: String,
        /// What is wrong.
        reason: Reason,
        /// The form that command takes.
        expected: &'static str,
    },
}

const KEYWORDS: &[&str] = &[
    "CLICK",
    "RIGHT_CLICK",
    "DOUBLE_CLICK",
    "HOLD",
    "TYPE",
    "CLEAR",
    "SELECT",
    "DESELECT",
    "HOVER",
    "SCROLL",
    "PRESS",
    "FETCH",
    "BACK",
    "CHECKPOINT",
    "WAIT",
    "UPLOAD",
    "TAB",
    "DRAG",
    "ZOOM",
    "READ",
    "ANSWER",
    "ASK",
    "HANDS",
    "COMPLETE",
    "STOP",
];

fn expected_form(keyword: &str) -> &'static str {
    match keyword {
        "CLICK" => "CLICK:<id>, e.g. CLICK:3 or CLICK:3 \"Submit\"; or a point of the image, CLICK:@412,230",
        "RIGHT_CLICK" => "RIGHT_CLICK:<id> or RIGHT_CLICK:@x,y, e.g. RIGHT_CLICK:3",
        "DOUBLE_CLICK" => "DOUBLE_CLICK:<id> or DOUBLE_CLICK:@x,y, e.g. DOUBLE_CLICK:3",
        "HOLD" => "HOLD:<id or @x,y>:<seconds>, the left button held that long, e.g. HOLD:3:2.5",
        "TYPE" => "TYPE:<id>:<text>, e.g. TYPE:5:John Smith; or at a point, TYPE:@412,230:text; several lines between triple quotes, TYPE:5:\"\"\"line one (new line) line two\"\"\"",
        "CLEAR" => "CLEAR:<id>, e.g. CLEAR:5",
        "SELECT" => "SELECT:<id>:<option>, e.g. SELECT:7:France",
        "DESELECT" => "DESELECT:<id>:<option> (a list that takes several), e.g. DESELECT:7:France",
        "HOVER" => "HOVER:<id>, e.g. HOVER:4, or HOVER:@412,230",
        "SCROLL" => "SCROLL:up|down|left|right, or SCROLL:<id>:up|down for a scroll area, or SCROLL:@412,230:down at a point",
        "PRESS" => "PRESS:<key>, e.g. PRESS:Enter, PRESS:Escape, PRESS:Ctrl+Shift+Y, PRESS:Shift; held for seconds, PRESS:ArrowRight:1.5",
        "FETCH" => "FETCH:<url>, e.g. FETCH:https://example.com/pricing",
        "BACK" => "BACK (one page back), BACK:checkpoint (to the last checkpoint) or BACK:checkpoint:<name>",
        "CHECKPOINT" => "CHECKPOINT:<the phase done>, e.g. CHECKPOINT:search done",
        "WAIT" => "WAIT:<seconds from 0 to 60>, e.g. WAIT:2 or WAIT:0.3",
        "UPLOAD" => "UPLOAD:<id>:<file name>, a file of the uploads folder, e.g. UPLOAD:9:cv.pdf (several: UPLOAD:9:a.png|b.png)",
        "DRAG" => "DRAG:<from>:<to>, each an id or a point of the image, e.g. DRAG:4:9 or DRAG:@120,300:@640,310; slowly, DRAG:<from>:<to>:<seconds to move>:<seconds to hold before letting go>, e.g. DRAG:4:9:2:1",
        "ZOOM" => "ZOOM:<id> or ZOOM:@x1,y1:@x2,y2 (two corners of a box of the image), e.g. ZOOM:12 or ZOOM:@400,200:@600,320",
        "TAB" => "TAB:<number> (show that tab of the list of tabs) or TAB:close (close this tab)",
        "READ" => "READ (the whole page), READ:<id> (one element's region), READ:\"text\" (the section holding the text), READ:more, READ:print (the page as printed) or READ:download:<file name>",
        "ANSWER" => "ANSWER:<the information asked for>",
        "ASK" => "ASK:<a question only the person can answer>, e.g. ASK:Which account should I use?",
        "HANDS" => "HANDS:<why a person must act in the browser>, e.g. HANDS:a CAPTCHA",
        "COMPLETE" => "COMPLETE:<what was done>",
        "STOP" => "STOP:<why the task cannot go on>",
        _ => {
            "one of CLICK, RIGHT_CLICK, DOUBLE_CLICK, HOLD, TYPE, CLEAR, SELECT, DESELECT, \
              HOVER, SCROLL, PRESS, FETCH, BACK, CHECKPOINT, WAIT, UPLOAD, TAB, DRAG, ZOOM, \
              READ, ANSWER, ASK, HANDS, COMPLETE, STOP"
        }
    }
}

/// Smart quotes and look-alikes to plain ASCII; zero-width characters dropped.
fn normalize(answer: &str) -> String {
    answer
        .chars()
        .filter(|c| !matches!(c, '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{feff}'))
        .map(|c| match c {
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{ff02}' => '"',
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => '\'',
            '\u{ff1a}' => ':',
            '\u{ff1b}' => ';',
            c => c,
        })
        .collect()
}

/// Strips what models put before a command on a line: bullets, numbering,
/// quote marks, backticks, bold, and "Action:" labels.
fn strip_decoration(line: &str) -> &str {
    let mut s = line.trim();
    loop {
        let before = s;
        for prefix in [
            "- ",
            "* ",
            "• ",
            "> ",
            "`",
            "**",
            "Action:",
            "Actions:",
            "Command:",
            "Commands:",
            "action:",
            "command:",
        ] {
            if let Some(rest) = s.strip_prefix(prefix) {
                s = rest.trim_start();
            }
        }
        // "1. " or "2) "
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && digits < 4 {
            let rest = &s[digits..];
            if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
                s = r.trim_start();
            }
        }
        if s == before {
            break;
        }
    }
    s.trim_end_matches(['`']).trim_end_matches("**").trim_end()
}

/// The command keyword a segment starts with, and the rest after the colon.
/// `None` when the segment is prose.
fn keyword_of(segment: &str) -> Option<(&'static str, &str)> {
    let word_len = segment
        .find(|c: char| !c.is_ascii_alphabetic() && c != '_' && c != '-')
        .unwrap_or(segment.len());
    let word = &segment[..word_len];
    let rest = &segment[word_len..];
    // `RIGHT-CLICK`, `RightClick` and `DBLCLICK` are how models spell them too.
    let upper = word.to_ascii_uppercase().replace('-', "_");
    let upper = match upper.as_str() {
        "RIGHTCLICK" => "RIGHT_CLICK",
        "DOUBLECLICK" | "DBLCLICK" | "DBL_CLICK" => "DOUBLE_CLICK",
        other => other,
    };
    let keyword = KEYWORDS.iter().find(|k| **k == upper)?;
    let rest_trim = rest.trim_start();
    if let Some(args) = rest_trim.strip_prefix(':') {
        return Some((keyword, args.trim_start()));
    }
    if (*keyword == "BACK" || *keyword == "READ") && rest.trim().trim_end_matches('.').is_empty() {
        return Some((keyword, ""));
    }
    // "CLICK 3" or "CLICK [3]": a colon left out before an id.
    if !rest.is_empty()
        && rest.starts_with(char::is_whitespace)
        && rest_trim.starts_with(|c: char| c.is_ascii_digit() || c == '[' || c == '#')
    {
        return Some((keyword, rest_trim));
    }
    None
}

/// An ALL-CAPS word and a colon followed by an id, a point, or a word
/// right after the colon (`KEYDOWN:Control`, `SWIPE:@4,5`): a command the
/// language lacks, not prose. (A label with a space after its colon,
/// `NOTE: the form is long`, stays prose.)
fn unknown_command(segment: &str) -> Option<&str> {
    let (word, rest) = segment.split_once(':')?;
    let tight = rest.starts_with(|c: char| !c.is_whitespace());
    let rest = rest.trim_start();
    let looks_like_id =
        rest.starts_with(|c: char| c.is_ascii_digit() || c == '[' || c == '#' || c == '@');
    (word.len() >= 3
        && word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        && (looks_like_id || tight))
        .then_some(word)
}

/// Splits a line at `;` where the next part starts with a command, so that a
/// `;` inside typed text stays in the text.
fn segments(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in line.match_indices(';') {
        let next = line[i + 1..].trim_start();
        if keyword_of(strip_decoration(next)).is_some() {
            out.push(line[start..i].trim());
            start = i + 1;
        }
    }
    out.push(line[start..].trim());
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

/// Parses an id written as `3`, `[3]`, `#3` or `[#3]`, optionally followed by
/// an echoed name in quotes. Returns (id, echo).
fn id_and_echo(text: &str) -> Result<(u32, Option<String>), Reason> {
    let t = text.trim().trim_end_matches('.');
    let (head, echo) = match t.find('"') {
        Some(q) => {
            let name = t[q + 1..].trim_end();
            let name = name.strip_suffix('"').ok_or(Reason::QuoteNotClosed)?;
            (t[..q].trim(), Some(name.to_string()))
        }
        None => (t, None),
    };
    let core = head
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_start_matches('#')
        .trim();
    if core.is_empty() {
        return Err(Reason::IdMissing);
    }
    let id: u32 = core
        .parse()
        .map_err(|_| Reason::NotAnId(core.to_string()))?;
    if id == 0 {
        return Err(Reason::IdZero);
    }
    Ok((id, echo))
}

/// A TYPE's text, unquoted, at most [`MAX_TYPED_CHARS`] long.
fn typed_text(rest: &str) -> Result<String, Reason> {
    let text = unquote(rest);
    let length = text.chars().count();
    if length > MAX_TYPED_CHARS {
        return Err(Reason::TypedTooLong(length, MAX_TYPED_CHARS));
    }
    Ok(text)
}

/// At most this much of a command the model wrote is echoed in an error.
const ECHOED: usize = 200;

/// A command as an error echoes it: its start, with the cut said.
fn echoed(segment: &str) -> String {
    let count = segment.chars().count();
    if count <= ECHOED {
        return segment.to_string();
    }
    let start: String = segment.chars().take(ECHOED).collect();
    format!("{start}… ({count} characters)")
}

/// Text argument: surrounding quotes removed, nothing else touched.
fn unquote(text: &str) -> String {
    let t = text.trim();
    // Text of several lines between triple quotes keeps its lines as written.
    if let Some(inner) = t.strip_prefix(TRIPLE).and_then(|r| r.strip_suffix(TRIPLE)) {
        return inner
            .trim_start_matches('\n')
            .trim_end_matches('\n')
            .to_string();
    }
    for q in ['"', '\''] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return t[1..t.len() - 1].to_string();
        }
    }
    t.to_string()
}

fn direction(word: &str) -> Option<ScrollDirection> {
    match word
        .trim()
        .trim_end_matches('.')
        .to_ascii_lowercase()
        .as_str()
    {
        "up" => Some(ScrollDirection::Up),
        "down" => Some(ScrollDirection::Down),
        "left" => Some(ScrollDirection::Left),
        "right" => Some(ScrollDirection::Right),
        _ => None,
    }
}

/// Named keys, lower-case spelling → canonical name.
const KEYS: &[(&str, &str)] = &[
    ("enter", "Enter"),
    ("return", "Enter"),
    ("escape", "Escape"),
    ("esc", "Escape"),
    ("tab", "Tab"),
    ("backspace", "Backspace"),
    ("delete", "Delete"),
    ("del", "Delete"),
    ("space", " "),
    ("spacebar", " "),
    ("arrowup", "ArrowUp"),
    ("up", "ArrowUp"),
    ("arrowdown", "ArrowDown"),
    ("down", "ArrowDown"),
    ("arrowleft", "ArrowLeft"),
    ("left", "ArrowLeft"),
    ("arrowright", "ArrowRight"),
    ("right", "ArrowRight"),
    ("pageup", "PageUp"),
    ("pagedown", "PageDown"),
    ("home", "Home"),
    ("end", "End"),
    ("insert", "Insert"),
    // A modifier pressed alone (`PRESS:Shift`), or as the key of a chord.
    ("shift", "Shift"),
    ("ctrl", "Control"),
    ("control", "Control"),
    ("alt", "Alt"),
    ("option", "Alt"),
    ("meta", "Meta"),
    ("cmd", "Meta"),
];

fn key_combo(text: &str) -> Result<KeyCombo, Reason> {
    let t = text.trim().trim_end_matches('.').trim();
    if t.is_empty() {
        return Err(Reason::KeyMissing);
    }
    let parts: Vec<&str> = t.split('+').map(str::trim).collect();
    let (key, mods) = parts.split_last().ok_or(Reason::KeyMissing)?;
    let mut modifiers = Vec::new();
    for m in mods {
        let canon = match m.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => "Ctrl",
            "alt" | "option" => "Alt",
            "shift" => "Shift",
            "meta" | "cmd" | "command" | "super" | "win" => "Meta",
            other => return Err(Reason::NotAModifier(other.to_string())),
        };
        if !modifiers.iter().any(|x| x == canon) {
            modifiers.push(canon.to_string());
        }
    }
    let order = ["Ctrl", "Alt", "Shift", "Meta"];
    modifiers.sort_by_key(|m| order.iter().position(|o| o == m));
    let lower = key.to_ascii_lowercase();
    let key = if let Some((_, canon)) = KEYS.iter().find(|(k, _)| *k == lower) {
        canon.to_string()
    } else if key.chars().count() == 1 {
        if modifiers.is_empty() {
            key.to_string()
        } else {
            lower
        }
    } else if lower.len() <= 3
        && lower.starts_with('f')
        && lower[1..]
            .parse::<u8>()
            .is_ok_and(|n| (1..=12).contains(&n))
    {
        lower.to_ascii_uppercase()
    } else {
        return Err(Reason::UnknownKey(key.to_string()));
    };
    Ok(KeyCombo { modifiers, key })
}

fn seconds(text: &str) -> Result<f64, Reason> {
    let t = text.trim().trim_end_matches('.').to_ascii_lowercase();
    let number = t
        .trim_end_matches("seconds")
        .trim_end_matches("second")
        .trim_end_matches("secs")
        .trim_end_matches("sec")
        .trim_end_matches('s')
        .trim();
    let v: f64 = number.parse().map_err(|_| Reason::NotSeconds(t.clone()))?;
    if !(0.0..=60.0).contains(&v) {
        return Err(Reason::SecondsOutOfRange(v));
    }
    Ok(v)
}

/// Splits `<id>:<rest>` (the id may carry an echo).
/// An end of a DRAG: `12` or `@412,230`.
fn spot(text: &str) -> Result<Spot, Reason> {
    let t = text.trim();
    if t.starts_with('@') {
        return image_point(t).map(Spot::At);
    }
    t.trim_start_matches(['[', '#'])
        .trim_end_matches(']')
        .parse::<u32>()
        .map(Spot::Id)
        .map_err(|_| Reason::NotASpot(t.to_string()))
}

/// Where a mouse command acts: an id with an optional echoed name
/// (`3 "Show"`) or a point (`@412,230`).
fn spot_and_echo(text: &str) -> Result<(Spot, Option<String>), Reason> {
    if text.trim_start().starts_with('@') {
        return image_point(text).map(|at| (Spot::At(at), None));
    }
    id_and_echo(text).map(|(id, echo)| (Spot::Id(id), echo))
}

/// `HOLD:<id or @x,y>:<seconds>`.
fn hold(args: &str) -> Result<Step, Reason> {
    let t = args.trim().trim_end_matches('.').trim();
    let (on, echo, rest) = if t.starts_with('@') {
        let (at, rest) = t.split_once(':').ok_or(Reason::HoldHowLong)?;
        (Spot::At(image_point(at)?), None, rest)
    } else {
        let (id, echo, rest) = id_then(t).map_err(|_| Reason::HoldHowLong)?;
        (Spot::Id(id), echo, rest)
    };
    Ok(Step {
        command: Command::Hold {
            on,
            seconds: seconds(rest)?,
        },
        echo,
    })
}

/// `PRESS:<key>` or `PRESS:<key>:<seconds held>` (`PRESS::` is the colon key).
fn press(args: &str) -> Result<Command, Reason> {
    let t = args.trim().trim_end_matches('.').trim();
    let (key, hold) = match t.rsplit_once(':') {
        Some((key, s)) if !key.trim().is_empty() => (key, Some(seconds(s)?)),
        _ => (t, None),
    };
    Ok(Command::Press {
        key: key_combo(key)?,
        hold,
    })
}

/// `DRAG:<from>:<to>`, or slowly: `DRAG:<from>:<to>:<seconds>[:<hold>]`.
fn drag(args: &str) -> Result<Command, Reason> {
    let t = args.trim().trim_end_matches('.').trim();
    let parts: Vec<&str> = t.split(':').collect();
    let pace = match parts.get(2..).unwrap_or_default() {
        [] => None,
        [s] => Some(DragPace {
            seconds: seconds(s)?,
            hold: 0.0,
        }),
        [s, h] => Some(DragPace {
            seconds: seconds(s)?,
            hold: seconds(h)?,
        }),
        _ => return Err(Reason::DragTooManyParts),
    };
    match parts.as_slice() {
        [from, to, ..] => Ok(Command::Drag {
            from: spot(from)?,
            to: spot(to)?,
            pace,
        }),
        _ => Err(Reason::DragEnds),
    }
}

/// `@412,230`: a point of the image the model was sent.
fn image_point(text: &str) -> Result<ImagePoint, Reason> {
    let t = text.trim().trim_end_matches('.').trim();
    let bad = || Reason::NotAPoint(t.to_string());
    let (x, y) = t
        .strip_prefix('@')
        .and_then(|xy| xy.split_once(','))
        .ok_or_else(bad)?;
    let number = |v: &str| {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0 && *n < 100_000.0)
            .map(|n| n.round() as u32)
    };
    match (number(x), number(y)) {
        (Some(x), Some(y)) => Ok(ImagePoint { x, y }),
        _ => Err(bad()),
    }
}

fn id_then(args: &str) -> Result<(u32, Option<String>, &str), Reason> {
    // The id part ends at the first ':' outside quotes.
    let mut in_quotes = false;
    for (i, c) in args.char_indices() {
        match c {
            '"' => in_quotes = !in_quotes,
            ':' if !in_quotes => {
                let (id, echo) = id_and_echo(&args[..i])?;
                return Ok((id, echo, &args[i + 1..]));
            }
            _ => {}
        }
    }
    Err(Reason::NothingAfterId)
}

/// `BACK`, `BACK:checkpoint` or `BACK:checkpoint:<name>`.
fn back(args: &str) -> Result<Command, Reason> {
    let t = args.trim().trim_end_matches('.').trim();
    if t.is_empty() {
        return Ok(Command::Back);
    }
    let (word, name) = t.split_once(':').unwrap_or((t, ""));
    if !word.trim().eq_ignore_ascii_case("checkpoint") {
        return Err(Reason::BackTakes(t.to_string()));
    }
    let name = match name.trim() {
        "" => None,
        n => Some(checkpoint_name(n)?),
    };
    Ok(Command::BackToCheckpoint { name })
}

/// A checkpoint's name: the phase, unquoted, on one line, not too long.
fn checkpoint_name(args: &str) -> Result<String, Reason> {
    let name = unquote(args.trim().trim_end_matches('.').trim());
    if name.trim().is_empty() {
        return Err(Reason::CheckpointNameMissing);
    }
    if name.chars().count() > LONGEST_CHECKPOINT_NAME {
        return Err(Reason::CheckpointNameLong);
    }
    Ok(name.trim().to_string())
}

fn command(keyword: &str, args: &str) -> Result<Step, Reason> {
    let at_point = args.trim_start().starts_with('@');
    match keyword {
        "CLICK" | "HOVER" | "TYPE" | "SCROLL" | "ZOOM" if at_point => {
            point_command(keyword, args).map(plain)
        }
        "CLICK" | "CLEAR" | "HOVER" | "ZOOM" => {
            let (id, echo) = id_and_echo(args)?;
            let command = match keyword {
                "CLICK" => Command::Click { id },
                "CLEAR" => Command::Clear { id },
                "ZOOM" => Command::Zoom {
                    region: ZoomRegion::Element(id),
                },
                _ => Command::Hover { id },
            };
            Ok(Step { command, echo })
        }
        "TYPE" | "SELECT" | "DESELECT" | "UPLOAD" => {
            let (id, echo, rest) = id_then(args)?;
            let command = value_command(keyword, id, rest)?;
            Ok(Step { command, echo })
        }
        "RIGHT_CLICK" | "DOUBLE_CLICK" => {
            let (on, echo) = spot_and_echo(args)?;
            let command = if keyword == "RIGHT_CLICK" {
                Command::RightClick { on }
            } else {
                Command::DoubleClick { on }
            };
            Ok(Step { command, echo })
        }
        "HOLD" => hold(args),
        "SCROLL" => scroll(args),
        "READ" => read(args),
        _ => other_command(keyword, args).map(plain),
    }
}

/// A step whose command names no element (the model echoed no name).
fn plain(command: Command) -> Step {
    Step {
        command,
        echo: None,
    }
}

/// A command at a point of the image: `CLICK:@x,y`, `HOVER:@x,y`,
/// `TYPE:@x,y:text`, `SCROLL:@x,y:down`, `ZOOM:@x1,y1:@x2,y2`.
fn point_command(keyword: &str, args: &str) -> Result<Command, Reason> {
    match keyword {
        "CLICK" => Ok(Command::ClickAt {
            at: image_point(args)?,
        }),
        "HOVER" => Ok(Command::HoverAt {
            at: image_point(args)?,
        }),
        "ZOOM" => {
            let t = args.trim().trim_end_matches('.').trim();
            let (a, b) = t.split_once(':').ok_or(Reason::ZoomCorners)?;
            Ok(Command::Zoom {
                region: ZoomRegion::Area(image_point(a)?, image_point(b)?),
            })
        }
        _ => {
            // `@x,y` holds no colon: the point ends at the first one.
            let (at, rest) = args.split_once(':').ok_or(if keyword == "TYPE" {
                Reason::TypeAtNoText
            } else {
                Reason::ScrollAtNoDirection
            })?;
            let at = image_point(at)?;
            Ok(if keyword == "TYPE" {
                Command::TypeAt {
                    at,
                    text: typed_text(rest)?,
                }
            } else {
                Command::ScrollAt {
                    at,
                    direction: direction(rest).ok_or_else(|| not_a_direction(rest))?,
                }
            })
        }
    }
}

/// What a direction that is none is told.
fn not_a_direction(text: &str) -> Reason {
    Reason::NotADirection(text.trim().to_string())
}

/// A command that gives an element a value: `TYPE:id:text`,
/// `SELECT:id:option`, `DESELECT:id:option`, `UPLOAD:id:a.pdf|b.png`.
fn value_command(keyword: &str, id: u32, rest: &str) -> Result<Command, Reason> {
    match keyword {
        "TYPE" => Ok(Command::Type {
            id,
            text: typed_text(rest)?,
        }),
        "UPLOAD" => {
            let names: Vec<String> = unquote(rest)
                .split('|')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect();
            if names.is_empty() {
                return Err(Reason::FileNameMissing);
            }
            Ok(Command::Upload { id, names })
        }
        _ => {
            let option = unquote(rest.trim_end_matches('.'));
            if option.is_empty() {
                return Err(Reason::OptionMissing);
            }
            Ok(if keyword == "SELECT" {
                Command::Select { id, option }
            } else {
                Command::Deselect { id, option }
            })
        }
    }
}

/// `SCROLL:down` (the page) or `SCROLL:id:down` (an element).
fn scroll(args: &str) -> Result<Step, Reason> {
    if let Some(direction) = direction(args) {
        return Ok(plain(Command::Scroll {
            id: None,
            direction,
        }));
    }
    let (id, echo, dir) = id_then(args).map_err(|_| not_a_direction(args))?;
    let direction = direction(dir).ok_or_else(|| not_a_direction(dir))?;
    Ok(Step {
        command: Command::Scroll {
            id: Some(id),
            direction,
        },
        echo,
    })
}

/// `READ`, `READ:more`, `READ:download:NAME`, `READ:id` or `READ:"text"`.
fn read(args: &str) -> Result<Step, Reason> {
    let t = args.trim().trim_end_matches('.').trim();
    let of = if t.is_empty() {
        ReadTarget::Page
    } else if t.eq_ignore_ascii_case("more") {
        ReadTarget::More
    } else if t.eq_ignore_ascii_case("print") {
        ReadTarget::Print
    } else if let Some(name) = t
        .get(..9)
        .filter(|p| p.eq_ignore_ascii_case("download:"))
        .map(|_| unquote(&t[9..]))
    {
        if name.trim().is_empty() {
            return Err(Reason::DownloadNameMissing);
        }
        ReadTarget::Download(name.trim().to_string())
    } else if t.starts_with(|c: char| c.is_ascii_digit() || c == '[' || c == '#') {
        let (id, echo) = id_and_echo(t)?;
        return Ok(Step {
            command: Command::Read {
                of: ReadTarget::Element(id),
            },
            echo,
        });
    } else {
        let text = unquote(t);
        if text.trim().is_empty() {
            return Err(Reason::TextToFindEmpty);
        }
        ReadTarget::Text(text)
    };
    Ok(plain(Command::Read { of }))
}

/// The commands that name neither an element nor a point: keys, pages,
/// tabs, phases, waits, and the commands that answer or end the task.
fn other_command(keyword: &str, args: &str) -> Result<Command, Reason> {
    Ok(match keyword {
        "PRESS" => press(args)?,
        "FETCH" => {
            let url = unquote(args.trim().trim_end_matches('.'));
            if url.is_empty() || url.contains(char::is_whitespace) || !url.contains(['.', ':']) {
                return Err(Reason::NotAUrl(url));
            }
            Command::Fetch { url }
        }
        "BACK" => back(args)?,
        "DRAG" => drag(args)?,
        "TAB" => {
            let t = args.trim().trim_end_matches('.').trim();
            let to = if t.eq_ignore_ascii_case("close") {
                TabTarget::Close
            } else {
                match t.trim_start_matches('#').parse::<usize>() {
                    Ok(n) if n >= 1 => TabTarget::Number(n),
                    _ => return Err(Reason::NotATab(t.to_string())),
                }
            };
            Command::Tab { to }
        }
        "CHECKPOINT" => Command::Checkpoint {
            name: checkpoint_name(args)?,
        },
        "WAIT" => Command::Wait {
            seconds: seconds(args)?,
        },
        "ANSWER" => {
            let text = kept_text(args.trim(), "answer");
            if text.is_empty() {
                return Err(Reason::Empty("answer"));
            }
            Command::Answer { text }
        }
        "ASK" => {
            let question = kept_text(args.trim(), "question");
            if question.is_empty() {
                return Err(Reason::Empty("question"));
            }
            Command::Ask { question }
        }
        "HANDS" => {
            let reason = kept_text(args.trim(), "reason");
            if reason.is_empty() {
                return Err(Reason::Empty("reason"));
            }
            Command::Hands { reason }
        }
        "COMPLETE" => Command::Complete {
            summary: kept_text(args.trim(), "summary"),
        },
        _ => {
            let reason = kept_text(args.trim(), "reason");
            if reason.is_empty() {
                return Err(Reason::Empty("reason"));
            }
            Command::Stop { reason }
        }
    })
}

/// What opens and closes a TYPE's text of several lines.
const TRIPLE: &str = "\"\"\"";

/// Most lines a typed text may span.
const MAX_TYPED_LINES: usize = 2_000;

/// The longest text one TYPE types, in characters.
pub const MAX_TYPED_CHARS: usize = 100_000;

/// A `TYPE` whose text opens with `"""` (and does not close on its line)
/// and goes on over the next lines to the closing `"""`: the whole command
/// as one segment, and how many of `rest` it took; or why it cannot be, when
/// it never closes. None for a TYPE of one line: `"""` inside a text (not
/// at its start) opens nothing.
fn typed_block(line: &str, rest: &[&str]) -> Option<Result<(String, usize), Reason>> {
    let (keyword, args) = keyword_of(line)?;
    let (_, text) = args.split_once(':')?;
    let text = text.trim_start();
    if keyword != "TYPE" || !text.starts_with(TRIPLE) || text.matches(TRIPLE).count() != 1 {
        return None;
    }
    let mut whole = line.to_string();
    for (i, raw) in rest.iter().enumerate().take(MAX_TYPED_LINES) {
        whole.push('\n');
        whole.push_str(raw);
        if raw.contains(TRIPLE) {
            return Some(Ok((whole, i + 1)));
        }
    }
    Some(Err(Reason::TypedNotClosed(MAX_TYPED_LINES.min(rest.len()))))
}

/// Most lines a JSON answer may span.
const MAX_JSON_LINES: usize = 500;

/// Whether `text` holds a whole JSON object or array: the brackets it opens
/// (outside strings) close again. None when it opens none.
fn json_closed(text: &str) -> Option<bool> {
    let (mut depth, mut opened, mut in_string, mut escaped) = (0i64, false, false, false);
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                depth += 1;
                opened = true;
            }
            '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    opened.then_some(depth <= 0)
}

/// An `ANSWER:` whose JSON value goes on over the next lines (or starts on
/// the next line, in a code fence): the answer's text and how many of
/// `rest` it took. None for an answer of one line.
fn json_answer(line: &str, rest: &[&str]) -> Option<(String, usize)> {
    let (keyword, args) = keyword_of(line)?;
    if keyword != "ANSWER" {
        return None;
    }
    let head = args.trim().trim_start_matches('`');
    let head = head.strip_prefix("json").unwrap_or(head).trim();
    let mut text = String::from(head);
    match json_closed(head) {
        Some(true) => return None,
        Some(false) => {}
        // Nothing yet: the value may start on the next line, fenced.
        None if head.is_empty() => {}
        None => return None,
    }
    for (i, raw) in rest.iter().enumerate().take(MAX_JSON_LINES) {
        let t = raw.trim();
        if t.starts_with("```") {
            if json_closed(&text) == Some(true) {
                return Some((text, i + 1));
            }
            continue;
        }
        if text.is_empty() && !t.starts_with(['{', '[']) {
            return None;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(raw);
        if json_closed(&text) == Some(true) {
            // A closing fence right after belongs to the answer.
            let fence = rest.get(i + 1).is_some_and(|l| l.trim().starts_with("```"));
            return Some((text.trim().to_string(), i + 1 + usize::from(fence)));
        }
    }
    None
}

/// Parses a model's answer into steps, in order.
pub fn parse(answer: &str) -> Result<Vec<Step>, ParseError> {
    let text = normalize(answer);
    let mut steps = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut skip = 0;
    for (n, raw) in lines.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        let line = strip_decoration(raw);
        if let Some((json, used)) = json_answer(line, &lines[n + 1..]) {
            steps.push(Step {
                command: Command::Answer { text: json },
                echo: None,
            });
            skip = used;
            continue;
        }
        if line.starts_with("```") || line.is_empty() {
            continue;
        }
        let block;
        let segments = match typed_block(line, &lines[n + 1..]) {
            Some(Ok((whole, used))) => {
                skip = used;
                block = whole;
                vec![block.as_str()]
            }
            Some(Err(reason)) => {
                return Err(ParseError::Bad {
                    line: n + 1,
                    text: echoed(line),
                    reason,
                    expected: expected_form("TYPE"),
                })
            }
            None => segments(line),
        };
        for segment in segments {
            let segment = strip_decoration(segment);
            match keyword_of(segment) {
                Some((keyword, args)) => {
                    let step = command(keyword, args).map_err(|reason| ParseError::Bad {
                        line: n + 1,
                        text: echoed(segment),
                        reason,
                        expected: expected_form(keyword),
                    })?;
                    steps.push(step);
                }
                None => {
                    if let Some(word) = unknown_command(segment) {
                        return Err(ParseError::Bad {
                            line: n + 1,
                            text: echoed(segment),
                            reason: Reason::NotACommand(word.to_string()),
                            expected: expected_form(""),
                        });
                    }
                    // Prose, a Thought: line, a heading: not a command.
                }
            }
        }
    }
    if steps.is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_names_why_a_person_must_act_and_wants_a_reason() {
        assert_eq!(
            one("HANDS: a CAPTCHA"),
            Command::Hands {
                reason: "a CAPTCHA".into()
            }
        );
        assert_eq!(one("hands:a login").to_string(), "HANDS:a login");
        assert!(!one("HANDS:x").touches_page());
        assert!(parse("HANDS:").is_err());
    }

    #[test]
    fn an_answer_of_json_may_span_lines_and_fences() {
        let steps = parse("ANSWER: [\n  {\"plan\": \"Free\", \"price\": 0},\n  {\"plan\": \"Pro; max\"}\n]\nCOMPLETE:done").unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(
            steps[0].command,
            Command::Answer {
                text: "[\n  {\"plan\": \"Free\", \"price\": 0},\n  {\"plan\": \"Pro; max\"}\n]"
                    .into()
            }
        );
        let steps = parse("ANSWER:\n```json\n{\"a\": \"}\"}\n```\nCOMPLETE:x").unwrap();
        assert_eq!(
            steps[0].command,
            Command::Answer {
                text: "{\"a\": \"}\"}".into()
            }
        );
        assert_eq!(steps.len(), 2);
        // One line stays one line; an answer of prose is untouched.
        assert_eq!(
            one("ANSWER:{\"a\": 1}"),
            Command::Answer {
                text: "{\"a\": 1}".into()
            }
        );
        assert_eq!(
            one("ANSWER: $7 per month"),
            Command::Answer {
                text: "$7 per month".into()
            }
        );
        // An empty answer with nothing after it is still an error.
        assert!(parse("ANSWER:").is_err());
        // READ in every form.
        assert_eq!(
            one("READ"),
            Command::Read {
                of: ReadTarget::Page
            }
        );
        assert_eq!(
            one("read:more"),
            Command::Read {
                of: ReadTarget::More
            }
        );
        assert_eq!(
            one("READ:[12]"),
            Command::Read {
                of: ReadTarget::Element(12)
            }
        );
        assert_eq!(
            one("READ:\"Pricing FAQ\""),
            Command::Read {
                of: ReadTarget::Text("Pricing FAQ".into())
            }
        );
        assert!(parse("READ:\"\"").is_err());
    }

    fn one(answer: &str) -> Command {
        let steps = parse(answer).unwrap_or_else(|e| panic!("{answer:?}: {e}"));
        assert_eq!(steps.len(), 1, "{answer:?}: {steps:?}");
        steps[0].command.clone()
    }

    #[test]
    fn the_hands_commands_take_their_spellings_and_their_bounds() {
        assert_eq!(
            one("right-click: [3]"),
            Command::RightClick { on: Spot::Id(3) }
        );
        assert_eq!(
            one("DoubleClick:@4,5"),
            Command::DoubleClick {
                on: Spot::At(ImagePoint { x: 4, y: 5 })
            }
        );
        let held = parse("HOLD:3 \"Hold me\":3 seconds").unwrap();
        assert_eq!(held[0].echo.as_deref(), Some("Hold me"));
        assert_eq!(
            held[0].command,
            Command::Hold {
                on: Spot::Id(3),
                seconds: 3.0
            }
        );
        assert!(parse("HOLD:3").is_err());
        assert!(parse("HOLD:3:61").is_err());
        assert!(parse("PRESS:Space:99").is_err());
        assert!(parse("DRAG:1:2:3:4:5").is_err());
        assert_eq!(
            one("PRESS::"),
            Command::Press {
                key: KeyCombo {
                    modifiers: vec![],
                    key: ":".into()
                },
                hold: None
            }
        );
    }

    #[test]
    fn text_of_several_lines_is_typed_whole_between_triple_quotes() {
        let steps = parse("TYPE:5:\"\"\"name,qty\napples,3\n\npears; 4\"\"\"\nCLICK:6").unwrap();
        assert_eq!(
            steps[0].command,
            Command::Type {
                id: 5,
                text: "name,qty\napples,3\n\npears; 4".into()
            }
        );
        assert_eq!(steps[1].command, Command::Click { id: 6 });
        // An unclosed block types nothing, and says why.
        let open = parse("TYPE:5:\"\"\"abc\nCLICK:6").unwrap_err().to_string();
        assert!(open.contains("not closed within 1 lines"), "{open}");
    }

    #[test]
    fn triple_quotes_inside_a_text_open_no_block_of_lines() {
        let steps = parse("TYPE:1:a\"\"\"b\nTYPE:3:c\"\"\"d").unwrap();
        assert_eq!(steps.len(), 2, "{steps:?}");
        assert_eq!(
            steps[1].command,
            Command::Type {
                id: 3,
                text: "c\"\"\"d".into()
            }
        );
    }

    #[test]
    fn a_text_of_700_lines_is_typed_whole_and_one_too_long_is_refused_echoed_short() {
        let lines: Vec<String> = (0..700)
            .map(|n| format!("line {n:03} {}", "x".repeat(90)))
            .collect();
        let text = lines.join("\n");
        let steps = parse(&format!("TYPE:2:\"\"\"{text}\"\"\"\nCLICK:3")).unwrap();
        assert_eq!(steps[0].command, Command::Type { id: 2, text });
        assert_eq!(steps[1].command, Command::Click { id: 3 });
        let long = format!("TYPE:2:{}", "y".repeat(1 << 20));
        let said = parse(&long).unwrap_err().to_string();
        assert!(
            said.contains("at most 100000"),
            "{}",
            &said[..200.min(said.len())]
        );
        assert!(said.len() < 1_000, "{} bytes", said.len());
        let unclosed = format!("TYPE:2:\"\"\"{}", "z\n".repeat(3_000));
        let said = parse(&unclosed).unwrap_err().to_string();
        assert!(said.contains("not closed within 2000 lines"), "{said}");
    }

    #[test]
    fn a_command_the_language_lacks_is_told_not_dropped_as_prose() {
        for line in ["KEYDOWN:Control", "MOUSE_DOWN:@3,4", "SWIPE:12"] {
            let err = parse(&format!("{line}\nPRESS:y")).unwrap_err().to_string();
            assert!(err.contains("is not a command"), "{line}: {err}");
        }
        // A label of prose with a space after its colon stays prose.
        assert_eq!(parse("NOTE: the form is long\nCLICK:3").unwrap().len(), 1);
    }

    #[test]
    fn the_canonical_form_of_every_command_parses_back_to_it() {
        for written in [
            "CLICK:3",
            "TYPE:5:John Smith",
            "CLEAR:5",
            "SELECT:7:France",
            "DESELECT:7:France",
            "HOVER:4",
            "SCROLL:down",
            "SCROLL:4:up",
            "PRESS:Ctrl+a",
            "PRESS:Enter",
            "FETCH:https://example.com/a?b=c",
            "BACK",
            "CHECKPOINT:search done",
            "BACK:checkpoint",
            "BACK:checkpoint:search done",
            "WAIT:2.5",
            "UPLOAD:9:cv.pdf",
            "UPLOAD:9:a.png|photos/b.png",
            "ANSWER:the price is $7",
            "COMPLETE:done",
            "STOP:a CAPTCHA",
            "RIGHT_CLICK:3",
            "RIGHT_CLICK:@40,50",
            "DOUBLE_CLICK:3",
            "DOUBLE_CLICK:@40,50",
            "HOLD:3:2.5",
            "HOLD:@40,50:3",
            "PRESS:Ctrl+Shift+y",
            "PRESS:Shift",
            "PRESS:Control",
            "PRESS:ArrowRight:1.5",
            "DRAG:4:9:2:1",
            "DRAG:@1,2:9:0.5:0",
            "READ:print",
            "TYPE:5:\"\"\"first line\nsecond line\"\"\"",
        ] {
            let steps = parse(written).unwrap();
            assert_eq!(steps[0].to_string(), written);
            assert_eq!(parse(&steps[0].to_string()).unwrap(), steps);
        }
        let echoed = parse("click: [3] \"Submit\"").unwrap();
        assert_eq!(echoed[0].to_string(), "CLICK:3 \"Submit\"");
    }

    #[test]
    fn every_command_on_an_element_parses() {
        assert_eq!(one("CLICK:3"), Command::Click { id: 3 });
        assert_eq!(
            one("TYPE:5:John Smith"),
            Command::Type {
                id: 5,
                text: "John Smith".into()
            }
        );
        assert_eq!(one("CLEAR:5"), Command::Clear { id: 5 });
        assert_eq!(
            one("SELECT:7:France"),
            Command::Select {
                id: 7,
                option: "France".into()
            }
        );
        assert_eq!(one("HOVER:4"), Command::Hover { id: 4 });
        assert_eq!(
            one("SCROLL:down"),
            Command::Scroll {
                id: None,
                direction: ScrollDirection::Down
            }
        );
        assert_eq!(
            one("SCROLL:12:up"),
            Command::Scroll {
                id: Some(12),
                direction: ScrollDirection::Up
            }
        );
        assert_eq!(
            one("PRESS:Enter"),
            Command::Press {
                key: KeyCombo {
                    modifiers: vec![],
                    key: "Enter".into()
                },
                hold: None,
            }
        );
        assert_eq!(
            one("PRESS:shift+ctrl+A"),
            Command::Press {
                key: KeyCombo {
                    modifiers: vec!["Ctrl".into(), "Shift".into()],
                    key: "a".into()
                },
                hold: None,
            }
        );
    }

    #[test]
    fn every_command_without_an_element_parses() {
        assert_eq!(
            one("FETCH:https://example.com/pricing"),
            Command::Fetch {
                url: "https://example.com/pricing".into()
            }
        );
        assert_eq!(one("BACK"), Command::Back);
        assert_eq!(
            one("checkpoint: \"filters set\"."),
            Command::Checkpoint {
                name: "filters set".into()
            }
        );
        assert_eq!(
            one("BACK: Checkpoint"),
            Command::BackToCheckpoint { name: None }
        );
        assert_eq!(
            one("BACK:checkpoint: search"),
            Command::BackToCheckpoint {
                name: Some("search".into())
            }
        );
        assert!(parse("BACK:search").is_err());
        assert!(parse("CHECKPOINT:").is_err());
        assert!(parse(&format!("CHECKPOINT:{}", "x".repeat(81))).is_err());
        assert_eq!(one("WAIT:2.5"), Command::Wait { seconds: 2.5 });
        assert_eq!(
            one("UPLOAD:9:cv.pdf"),
            Command::Upload {
                id: 9,
                names: vec!["cv.pdf".into()]
            }
        );
        assert_eq!(
            one("UPLOAD:9:\"a.png | b.png\""),
            Command::Upload {
                id: 9,
                names: vec!["a.png".into(), "b.png".into()]
            }
        );
        assert!(parse("UPLOAD:9:|").is_err());
        assert_eq!(
            one("ANSWER:The Pro plan costs $7 per user"),
            Command::Answer {
                text: "The Pro plan costs $7 per user".into()
            }
        );
        assert_eq!(
            one("COMPLETE:Searched the jobs"),
            Command::Complete {
                summary: "Searched the jobs".into()
            }
        );
        assert_eq!(
            one("STOP:a CAPTCHA blocks the page"),
            Command::Stop {
                reason: "a CAPTCHA blocks the page".into()
            }
        );
    }

    #[test]
    fn what_models_really_write_is_accepted() {
        for answer in [
            "CLICK: 3",
            "CLICK:[3]",
            "click:3",
            "Click:#3",
            "CLICK:3.",
            "CLICK 3",
            "```\nCLICK:3\n```",
            "Thought: the submit button is 3.\nCLICK:3",
            "- CLICK:3",
            "1. CLICK:3",
            "`CLICK:3`",
            "**CLICK:3**",
            "Action: CLICK:3",
            "I will press the button now.\n\nCLICK:3\n\nThat should submit the form.",
        ] {
            assert_eq!(one(answer), Command::Click { id: 3 }, "{answer:?}");
        }
    }

    #[test]
    fn an_echoed_name_is_kept_for_the_check_and_smart_quotes_are_plain() {
        let steps = parse("CLICK:3 \u{201c}Submit\u{201d}").unwrap();
        assert_eq!(steps[0].command, Command::Click { id: 3 });
        assert_eq!(steps[0].echo.as_deref(), Some("Submit"));
        let steps = parse("TYPE:5 \"Email\":ada@example.com").unwrap();
        assert_eq!(steps[0].echo.as_deref(), Some("Email"));
        assert_eq!(
            steps[0].command,
            Command::Type {
                id: 5,
                text: "ada@example.com".into()
            }
        );
    }

    #[test]
    fn several_commands_run_in_order_and_a_semicolon_in_text_stays_in_the_text() {
        let steps = parse("TYPE:2:Paris; CLICK:4\nPRESS:Enter").unwrap();
        let commands: Vec<Command> = steps.into_iter().map(|s| s.command).collect();
        assert_eq!(
            commands,
            vec![
                Command::Type {
                    id: 2,
                    text: "Paris".into()
                },
                Command::Click { id: 4 },
                Command::Press {
                    key: KeyCombo {
                        modifiers: vec![],
                        key: "Enter".into()
                    },
                    hold: None,
                },
            ]
        );
        assert_eq!(
            one("TYPE:2:fish; chips and peas"),
            Command::Type {
                id: 2,
                text: "fish; chips and peas".into()
            }
        );
        assert_eq!(
            one("TYPE:2:time: 10:30"),
            Command::Type {
                id: 2,
                text: "time: 10:30".into()
            }
        );
    }

    #[test]
    fn errors_name_the_text_and_the_expected_form() {
        let err = parse("CLICK:submit").unwrap_err().to_string();
        assert!(err.contains("\"submit\" is not an element id"), "{err}");
        assert!(err.contains("expected CLICK:<id>"), "{err}");
        assert!(err.starts_with("line 1:"), "{err}");
        let err = parse("Thought\nSCROLL:sideways").unwrap_err().to_string();
        assert!(
            err.starts_with("line 2:") && err.contains("not a direction"),
            "{err}"
        );
        let err = parse("TYPE:5").unwrap_err().to_string();
        assert!(err.contains("expected TYPE:<id>:<text>"), "{err}");
        let err = parse("TAP:3").unwrap_err().to_string();
        assert!(err.contains("TAP is not a command"), "{err}");
        let err = parse("WAIT:600").unwrap_err().to_string();
        assert!(err.contains("outside 0 to 60"), "{err}");
        let err = parse("PRESS:Hyper+Q").unwrap_err().to_string();
        assert!(err.contains("not a modifier"), "{err}");
        assert_eq!(parse("I think we are done here."), Err(ParseError::Empty));
        assert_eq!(parse("Click on the Submit button"), Err(ParseError::Empty));
        assert_eq!(parse(""), Err(ParseError::Empty));
    }

    #[test]
    fn every_point_form_parses_and_prints_back() {
        let at = ImagePoint { x: 412, y: 230 };
        for (text, command) in [
            ("CLICK:@412,230", Command::ClickAt { at }),
            ("HOVER:@412,230", Command::HoverAt { at }),
            (
                "SCROLL:@412,230:down",
                Command::ScrollAt {
                    at,
                    direction: ScrollDirection::Down,
                },
            ),
            (
                "TYPE:@412,230:Paris: 2 nights",
                Command::TypeAt {
                    at,
                    text: "Paris: 2 nights".into(),
                },
            ),
            (
                "ZOOM:@412,230:@500,300",
                Command::Zoom {
                    region: ZoomRegion::Area(at, ImagePoint { x: 500, y: 300 }),
                },
            ),
            (
                "ZOOM:12",
                Command::Zoom {
                    region: ZoomRegion::Element(12),
                },
            ),
            (
                "DRAG:@412,230:7",
                Command::Drag {
                    from: Spot::At(at),
                    to: Spot::Id(7),
                    pace: None,
                },
            ),
        ] {
            let steps = parse(text).unwrap();
            assert_eq!(steps[0].command, command, "{text}");
            assert_eq!(command.to_string(), text);
        }
        for bad in [
            "SCROLL:@412,230",
            "SCROLL:@412,230:sideways",
            "TYPE:@412",
            "CLICK:@a,b",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    /// A fixed pseudo-random sequence, so a failure reproduces.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, bound: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) as usize) % bound.max(1)
        }
    }

    #[test]
    fn the_parser_never_panics_on_any_input() {
        let pieces = [
            "CLICK",
            "TYPE",
            "SCROLL",
            "PRESS",
            "BACK",
            "CHECKPOINT",
            "WAIT",
            "SELECT",
            "ANSWER",
            ":",
            ";",
            "\n",
            " ",
            "\"",
            "[",
            "]",
            "#",
            "3",
            "0",
            "99999999999",
            "-1",
            "+",
            "ctrl",
            "é",
            "\u{201c}",
            "```",
            "- ",
            "1. ",
            "up",
            "x",
            ".",
            "\u{200b}",
            "\u{ff1a}",
            "🙂",
        ];
        let mut rng = Lcg(0x5eed);
        for _ in 0..20_000 {
            let n = rng.next(12);
            let answer: String = (0..n).map(|_| pieces[rng.next(pieces.len())]).collect();
            let _ = parse(&answer);
        }
        for _ in 0..5_000 {
            let bytes: Vec<u8> = (0..rng.next(40)).map(|_| rng.next(256) as u8).collect();
            let _ = parse(&String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn a_command_acts_at_a_point_only_when_it_takes_one() {
        let at = |c: &str| parse(c).unwrap()[0].command.acts_at_a_point();
        assert!(at("CLICK:@10,20"));
        assert!(at("SCROLL:@10,20:down"));
        assert!(at("DRAG:3:@40,50"));
        assert!(!at("CLICK:3"));
        assert!(!at("DRAG:3:7"));
        assert!(!at("ZOOM:@1,1:@50,50"));
        // Text that holds ":@" is no point.
        assert!(!at("TYPE:5:me:@home"));
    }
}
