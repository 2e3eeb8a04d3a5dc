//! Real input events: the mouse moves, presses and releases; keys go down and
//! up with the text they produce, so the page's listeners fire as for a person.

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchDragEventParams, DispatchDragEventType, DispatchKeyEventParams, DispatchKeyEventType,
    DispatchMouseEventParams, DispatchMouseEventType, DragData, EventDragIntercepted,
    InsertTextParams, MouseButton, SetInterceptDragsParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use futures::{FutureExt, StreamExt};

use std::time::Duration;

use crate::commands::KeyCombo;
use crate::perceive::Point;

fn mouse(kind: DispatchMouseEventType, p: Point) -> DispatchMouseEventParams {
    DispatchMouseEventParams::new(kind, p.x, p.y)
}

/// Moves the pointer to `p`.
pub(super) async fn hover(page: &Page, p: Point) -> Result<(), CdpError> {
    page.execute(mouse(DispatchMouseEventType::MouseMoved, p))
        .await?;
    Ok(())
}

/// A press or a release of `button` at `p`, the `count`-th of a quick run
/// (2: the second press of a double click).
async fn button(
    page: &Page,
    kind: DispatchMouseEventType,
    p: Point,
    button: MouseButton,
    count: i64,
) -> Result<(), CdpError> {
    // The buttons held while the event happens (the DOM's `buttons`).
    let held = match (&kind, &button) {
        (DispatchMouseEventType::MouseReleased, _) => 0,
        (_, MouseButton::Right) => 2,
        _ => 1,
    };
    let mut e = mouse(kind, p);
    e.button = Some(button);
    e.buttons = Some(held);
    e.click_count = Some(count);
    page.execute(e).await?;
    Ok(())
}

/// A click of `with` at `p` (a right click opens the context menu:
/// `contextmenu` fires), `times` in a row (2: a double click, `dblclick`
/// fires): move, then press and release each time.
pub(super) async fn click_with(
    page: &Page,
    p: Point,
    with: MouseButton,
    times: i64,
) -> Result<(), CdpError> {
    hover(page, p).await?;
    for count in 1..=times {
        for kind in [
            DispatchMouseEventType::MousePressed,
            DispatchMouseEventType::MouseReleased,
        ] {
            button(page, kind, p, with.clone(), count).await?;
        }
    }
    Ok(())
}

/// A left click at `p`: move, press, release.
pub(super) async fn click(page: &Page, p: Point) -> Result<(), CdpError> {
    click_with(page, p, MouseButton::Left, 1).await
}

/// `Input.dispatchTouchEvent` as the protocol wants it: chromiumoxide's
/// params leave out an empty list of touch points, which a `touchEnd`
/// requires.
#[derive(Debug, serde::Serialize)]
struct TouchEvent {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(rename = "touchPoints")]
    points: Vec<Point>,
}

impl chromiumoxide::Method for TouchEvent {
    fn identifier(&self) -> chromiumoxide::types::MethodId {
        "Input.dispatchTouchEvent".into()
    }
}

impl chromiumoxide::Command for TouchEvent {
    type Response = serde_json::Value;
}

/// One finger on a touch screen: down at `p`, held `time`, lifted. The page
/// gets `touchstart` and `touchend`, and from a short one the browser makes
/// the `click` a phone makes of a tap.
async fn touch(page: &Page, p: Point, time: Duration) -> Result<(), CdpError> {
    page.execute(TouchEvent {
        kind: "touchStart",
        points: vec![p],
    })
    .await?;
    tokio::time::sleep(time).await;
    page.execute(TouchEvent {
        kind: "touchEnd",
        points: Vec::new(),
    })
    .await?;
    Ok(())
}

/// A click at `p`, or on a touch screen a tap.
pub(super) async fn click_or_tap(
    page: &Page,
    p: Point,
    touch_screen: bool,
) -> Result<(), CdpError> {
    if touch_screen {
        touch(page, p, Duration::ZERO).await
    } else {
        click(page, p).await
    }
}

/// The button held at `p` for `time`, or on a touch screen a long press.
pub(super) async fn hold_or_press(
    page: &Page,
    p: Point,
    time: Duration,
    touch_screen: bool,
) -> Result<(), CdpError> {
    if touch_screen {
        touch(page, p, time).await
    } else {
        hold(page, p, time).await
    }
}

/// A finger's swipe from `p` that scrolls what is under it by `dx`, `dy`
/// CSS pixels (positive: right and down, as the wheel's): it goes down at
/// `p`, moves the other way in steps a frame apart (kept inside `view`, so
/// a swipe near an edge scrolls less), rests, and lifts. The rest leaves no
/// fling, so the next look sees where the page stopped. The page gets
/// every touch event of it.
pub(super) async fn swipe(
    page: &Page,
    p: Point,
    dx: f64,
    dy: f64,
    view: crate::perceive::Rect,
) -> Result<(), CdpError> {
    let end = Point {
        x: (p.x - dx).clamp(view.x + 1.0, view.x + view.w - 1.0),
        y: (p.y - dy).clamp(view.y + 1.0, view.y + view.h - 1.0),
    };
    page.execute(TouchEvent {
        kind: "touchStart",
        points: vec![p],
    })
    .await?;
    for step in 1..=DRAG_STEPS {
        let f = f64::from(step) / f64::from(DRAG_STEPS);
        let at = Point {
            x: p.x + (end.x - p.x) * f,
            y: p.y + (end.y - p.y) * f,
        };
        page.execute(TouchEvent {
            kind: "touchMove",
            points: vec![at],
        })
        .await?;
        tokio::time::sleep(FRAME).await;
    }
    tokio::time::sleep(SWIPE_REST).await;
    page.execute(TouchEvent {
        kind: "touchEnd",
        points: Vec::new(),
    })
    .await?;
    // The last move is drawn and scrolled before anyone reads where to.
    tokio::time::sleep(FRAME * 2).await;
    Ok(())
}

/// How long a swipe's finger rests before it lifts: long enough that the
/// browser sees no speed left to fling with.
const SWIPE_REST: Duration = Duration::from_millis(50);

/// The left button pressed at `p`, held for `time`, released there.
async fn hold(page: &Page, p: Point, time: Duration) -> Result<(), CdpError> {
    hover(page, p).await?;
    button(
        page,
        DispatchMouseEventType::MousePressed,
        p,
        MouseButton::Left,
        1,
    )
    .await?;
    tokio::time::sleep(time).await;
    button(
        page,
        DispatchMouseEventType::MouseReleased,
        p,
        MouseButton::Left,
        1,
    )
    .await
}

/// Turns the wheel at `p` by `dx`, `dy` CSS pixels (the pointer moves there
/// first, as a hand's would).
pub(super) async fn wheel(page: &Page, p: Point, dx: f64, dy: f64) -> Result<(), CdpError> {
    hover(page, p).await?;
    let mut e = mouse(DispatchMouseEventType::MouseWheel, p);
    e.delta_x = Some(dx);
    e.delta_y = Some(dy);
    page.execute(e).await?;
    Ok(())
}

/// Moves a quick drag makes between its press and its release.
const DRAG_STEPS: u32 = 12;

/// Time between two moves of a drag: a frame.
const FRAME: Duration = Duration::from_millis(16);

/// How a drag goes: how long the move takes (`None`: a quick one, a frame a
/// step) and how long the button is held at the drop before it lets go.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Pace {
    pub(super) moving: Option<Duration>,
    pub(super) hold: Duration,
}

/// A drag as a hand makes it: press at `from`, move to `to` in steps (a
/// frame apart, so the page's handlers see each; over `pace.moving` when it
/// is slow), wait `pace.hold`, release there. When the press starts an HTML5
/// drag (a `draggable` element, a file-drop list), the browser hands the
/// drag over and its drag events are sent instead, so the page gets
/// `dragenter`, `dragover` and `drop` where a hand drops.
pub(super) async fn drag(page: &Page, from: Point, to: Point, pace: Pace) -> Result<(), CdpError> {
    let steps = pace.moving.map_or(DRAG_STEPS, |t| {
        ((t.as_secs_f64() / FRAME.as_secs_f64()).ceil() as u32).clamp(DRAG_STEPS, 3600)
    });
    let each = pace.moving.map_or(FRAME, |t| t.div_f64(f64::from(steps)));
    let held = |kind, p| {
        let mut e = mouse(kind, p);
        e.button = Some(MouseButton::Left);
        e.buttons = Some(1);
        e.click_count = Some(1);
        e
    };
    let mut handed = match page.execute(SetInterceptDragsParams::new(true)).await {
        Ok(_) => page.event_listener::<EventDragIntercepted>().await.ok(),
        Err(_) => None,
    };
    hover(page, from).await?;
    page.execute(held(DispatchMouseEventType::MousePressed, from))
        .await?;
    let mut html5: Option<DragData> = None;
    for i in 1..=steps {
        let f = f64::from(i) / f64::from(steps);
        let p = Point {
            x: from.x + (to.x - from.x) * f,
            y: from.y + (to.y - from.y) * f,
        };
        match &html5 {
            Some(data) => drag_event(page, DispatchDragEventType::DragOver, p, data).await?,
            None => {
                page.execute(held(DispatchMouseEventType::MouseMoved, p))
                    .await?;
            }
        }
        tokio::time::sleep(each).await;
        if html5.is_none() {
            if let Some(Some(event)) = handed.as_mut().and_then(|s| s.next().now_or_never()) {
                let data = event.data.clone();
                drag_event(page, DispatchDragEventType::DragEnter, p, &data).await?;
                html5 = Some(data);
            }
        }
    }
    tokio::time::sleep(pace.hold).await;
    if let Some(data) = &html5 {
        drag_event(page, DispatchDragEventType::Drop, to, data).await?;
    }
    page.execute(held(DispatchMouseEventType::MouseReleased, to))
        .await?;
    let _ = page.execute(SetInterceptDragsParams::new(false)).await;
    Ok(())
}

/// `Input.dispatchDragEvent` with files: written here because the
/// generated command leaves out an empty `items`, which the browser
/// requires.
#[derive(Debug, serde::Serialize)]
struct FileDrag<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    x: f64,
    y: f64,
    data: FileDragData<'a>,
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct FileDragData<'a> {
    items: [(); 0],
    files: &'a [String],
    /// Copy.
    drag_operations_mask: i64,
}

impl chromiumoxide::Method for FileDrag<'_> {
    fn identifier(&self) -> chromiumoxide::types::MethodId {
        "Input.dispatchDragEvent".into()
    }
}

impl chromiumoxide::Command for FileDrag<'_> {
    type Response = serde_json::Value;
}

/// Files dragged in from outside the page and dropped at `p`, as a person
/// drops them from a file manager: `dragenter` and `dragover` there, then
/// `drop` when `accepts` says the page took the drag (it called
/// `preventDefault` on `dragover`), else the drag is cancelled: a page that
/// takes no drop would have the browser open the file.
pub(super) async fn drop_files<F>(
    page: &Page,
    p: Point,
    files: &[String],
    accepts: F,
) -> Result<bool, CdpError>
where
    F: std::future::Future<Output = bool>,
{
    let event = |kind| FileDrag {
        kind,
        x: p.x,
        y: p.y,
        data: FileDragData {
            items: [],
            files,
            drag_operations_mask: 1,
        },
    };
    hover(page, p).await?;
    page.execute(event("dragEnter")).await?;
    page.execute(event("dragOver")).await?;
    let taken = accepts.await;
    page.execute(event(if taken { "drop" } else { "dragCancel" }))
        .await?;
    Ok(taken)
}

/// One event of an HTML5 drag the browser handed over.
async fn drag_event(
    page: &Page,
    kind: DispatchDragEventType,
    p: Point,
    data: &DragData,
) -> Result<(), CdpError> {
    page.execute(DispatchDragEventParams::new(kind, p.x, p.y, data.clone()))
        .await?;
    Ok(())
}

/// One key as the keyboard would send it.
#[derive(Debug, Clone, PartialEq)]
struct KeyDef {
    key: String,
    code: String,
    key_code: i64,
    /// The text the key types, if any.
    text: Option<String>,
}

/// Named keys: (key, code, Windows key code, text).
const NAMED: &[(&str, &str, i64, &str)] = &[
    ("Enter", "Enter", 13, "\r"),
    ("Tab", "Tab", 9, ""),
    ("Escape", "Escape", 27, ""),
    ("Backspace", "Backspace", 8, ""),
    ("Delete", "Delete", 46, ""),
    (" ", "Space", 32, " "),
    ("ArrowUp", "ArrowUp", 38, ""),
    ("ArrowDown", "ArrowDown", 40, ""),
    ("ArrowLeft", "ArrowLeft", 37, ""),
    ("ArrowRight", "ArrowRight", 39, ""),
    ("PageUp", "PageUp", 33, ""),
    ("PageDown", "PageDown", 34, ""),
    ("Home", "Home", 36, ""),
    ("End", "End", 35, ""),
    ("Insert", "Insert", 45, ""),
    ("Shift", "ShiftLeft", 16, ""),
    ("Control", "ControlLeft", 17, ""),
    ("Alt", "AltLeft", 18, ""),
    ("Meta", "MetaLeft", 91, ""),
];

fn key_def(key: &str) -> KeyDef {
    if let Some((k, code, kc, text)) = NAMED.iter().find(|(k, ..)| *k == key) {
        return KeyDef {
            key: (*k).to_string(),
            code: (*code).to_string(),
            key_code: *kc,
            text: (!text.is_empty()).then(|| (*text).to_string()),
        };
    }
    if let Some(n) = key
        .strip_prefix('F')
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| (1..=12).contains(n))
    {
        return KeyDef {
            key: key.to_string(),
            code: key.to_string(),
            key_code: 111 + n,
            text: None,
        };
    }
    let mut chars = key.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        // Not one character: sent as a key name with no text.
        return KeyDef {
            key: key.to_string(),
            code: String::new(),
            key_code: 0,
            text: None,
        };
    };
    let (code, key_code) = match c {
        'a'..='z' | 'A'..='Z' => (
            format!("Key{}", c.to_ascii_uppercase()),
            i64::from(c.to_ascii_uppercase() as u8),
        ),
        '0'..='9' => (format!("Digit{c}"), i64::from(c as u8)),
        _ => (String::new(), 0),
    };
    KeyDef {
        key: c.to_string(),
        code,
        key_code,
        text: Some(c.to_string()),
    }
}

/// The CDP modifier bit field: Alt=1, Ctrl=2, Meta=4, Shift=8.
fn modifier_bits(modifiers: &[String]) -> i64 {
    modifiers
        .iter()
        .map(|m| match m.as_str() {
            "Alt" => 1,
            "Ctrl" => 2,
            "Meta" => 4,
            "Shift" => 8,
            _ => 0,
        })
        .sum()
}

/// Editing commands for shortcuts, which Chromium does not derive from key
/// events sent over CDP on every platform.
fn editing_command(combo: &KeyCombo) -> Option<&'static str> {
    let ctrl = combo.modifiers.iter().any(|m| m == "Ctrl" || m == "Meta");
    let shift = combo.modifiers.iter().any(|m| m == "Shift");
    if !ctrl {
        return None;
    }
    Some(match (combo.key.to_ascii_lowercase().as_str(), shift) {
        ("a", false) => "selectAll",
        ("c", false) => "copy",
        ("x", false) => "cut",
        ("v", false) => "paste",
        ("z", false) => "undo",
        ("z", true) | ("y", false) => "redo",
        _ => return None,
    })
}

/// One key going down, with the modifiers held then (its own among them
/// when it is one) and the editing command a shortcut carries.
async fn key_down(
    page: &Page,
    def: &KeyDef,
    modifiers: i64,
    command: Option<&str>,
) -> Result<(), CdpError> {
    page.execute(down_event(def, modifiers, command)).await?;
    Ok(())
}

/// The event of [`key_down`].
fn down_event(def: &KeyDef, modifiers: i64, command: Option<&str>) -> DispatchKeyEventParams {
    // A shortcut with Ctrl, Alt or Meta types nothing; Shift alone still types.
    let text = if modifiers & 0b0111 != 0 {
        None
    } else if modifiers & 8 != 0 {
        def.text.as_ref().map(|t| t.to_uppercase())
    } else {
        def.text.clone()
    };
    let mut down = DispatchKeyEventParams::new(if text.is_some() {
        DispatchKeyEventType::KeyDown
    } else {
        DispatchKeyEventType::RawKeyDown
    });
    down.key = Some(def.key.clone());
    down.code = Some(def.code.clone()).filter(|c| !c.is_empty());
    down.windows_virtual_key_code = Some(def.key_code).filter(|&k| k != 0);
    down.native_virtual_key_code = down.windows_virtual_key_code;
    down.modifiers = Some(modifiers);
    down.unmodified_text = def.text.clone();
    down.text = text;
    down.commands = command.map(|c| vec![c.to_string()]);
    down
}

/// One key coming up, with the modifiers still held.
async fn key_up(page: &Page, def: &KeyDef, modifiers: i64) -> Result<(), CdpError> {
    page.execute(up_event(def, modifiers)).await?;
    Ok(())
}

/// The event of [`key_up`].
fn up_event(def: &KeyDef, modifiers: i64) -> DispatchKeyEventParams {
    let mut up = DispatchKeyEventParams::new(DispatchKeyEventType::KeyUp);
    up.key = Some(def.key.clone());
    up.code = Some(def.code.clone()).filter(|c| !c.is_empty());
    up.windows_virtual_key_code = Some(def.key_code).filter(|&k| k != 0);
    up.native_virtual_key_code = up.windows_virtual_key_code;
    up.modifiers = Some(modifiers);
    up
}

/// The DOM key name of a modifier (`Ctrl` → `Control`).
fn modifier_key(modifier: &str) -> &str {
    match modifier {
        "Ctrl" => "Control",
        other => other,
    }
}

/// The modifier bit a key sets while it is down (0 for any other key).
fn own_bit(key: &str) -> i64 {
    match key {
        "Control" => modifier_bits(&["Ctrl".into()]),
        "Alt" | "Shift" | "Meta" => modifier_bits(&[key.into()]),
        _ => 0,
    }
}

/// Between two keys of a chord: a page that re-renders on each keydown
/// (a React state of the keys held) hears the next one after it has.
const CHORD_GAP: Duration = Duration::from_millis(20);

/// Presses a key or a combination as a person does: each modifier goes
/// down (in order, with the bits of those already held), then the key,
/// held for `hold` if given, then all come up in reverse order.
pub(super) async fn press(
    page: &Page,
    combo: &KeyCombo,
    hold: Option<Duration>,
) -> Result<(), CdpError> {
    let mut held = 0;
    let mut down = Vec::new();
    for m in &combo.modifiers {
        let def = key_def(modifier_key(m));
        held |= own_bit(&def.key);
        key_down(page, &def, held, None).await?;
        down.push(def);
        tokio::time::sleep(CHORD_GAP).await;
    }
    let def = key_def(&combo.key);
    key_down(page, &def, held | own_bit(&def.key), editing_command(combo)).await?;
    if let Some(hold) = hold {
        tokio::time::sleep(hold).await;
    } else if !down.is_empty() {
        tokio::time::sleep(CHORD_GAP).await;
    }
    key_up(page, &def, held).await?;
    for def in down.iter().rev() {
        held &= !own_bit(&def.key);
        tokio::time::sleep(CHORD_GAP).await;
        key_up(page, def, held).await?;
    }
    Ok(())
}

/// Types text one character at a time with key events; a newline is Enter.
/// The events are sent together, in order, and answered in that order: the
/// renderer still takes each key down and up in turn, with the page's
/// handlers run between them, while the wait of a round trip per event
/// (some 3 ms each) goes.
pub(super) async fn type_text(page: &Page, text: &str) -> Result<(), CdpError> {
    let events = text.chars().flat_map(|c| {
        let def = match c {
            '\n' => key_def("Enter"),
            '\t' => key_def("Tab"),
            c => key_def(&c.to_string()),
        };
        [down_event(&def, 0, None), up_event(&def, 0)]
    });
    futures::future::try_join_all(events.map(|e| page.execute(e))).await?;
    Ok(())
}

/// Whether the focused element of the top document, an element on its way
/// up (through shadow roots), the document or its window listens for keys;
/// yes when the focus is in a frame, whose listeners this does not see.
/// DevTools' `getEventListeners` sees every listener, inline ones too, and
/// those of seamark's own world (its count of changes, left out by name);
/// it is there only for an expression evaluated with the command line API.
const KEYS_HEARD_JS: &str = r#"(() => {
  const keyed = t => {
    const l = getEventListeners(t);
    return ['keydown', 'keypress', 'keyup']
      .some(k => (l[k] || []).some(x => x.listener.name !== '__seamarkBump'));
  };
  let n = document.activeElement;
  while (n && n.shadowRoot && n.shadowRoot.activeElement) n = n.shadowRoot.activeElement;
  if (n && (n.tagName === 'IFRAME' || n.tagName === 'FRAME')) return true;
  for (; n; n = n.parentNode || n.host) if (keyed(n)) return true;
  return keyed(window);
})()"#;

/// The longest text typed key by key; a longer one is pasted.
const PASTED: usize = 2_000;

/// Types `text` where the focus is. Where nothing
/// listens for keys (asked of DevTools, see [`KEYS_HEARD_JS`]), key events
/// would tell the page nothing that the text's `beforeinput` and `input`
/// events do not: the text goes in at once, as a paste or an input method
/// puts it (one event, where key by key took some 2 ms an event in the
/// renderer). Where anything listens, or the page cannot say, or the text
/// holds a line break or a tab (keys with effects of their own), it is
/// typed key by key ([`type_text`]).
///
/// A text longer than [`PASTED`] characters goes in at once whatever the
/// page hears, as a person pastes it: key by key, 68 KB took minutes and
/// timed the browser's input out.
pub(super) async fn put_text(page: &Page, text: &str) -> Result<(), CdpError> {
    if text.is_empty() {
        return Ok(());
    }
    let pasted = text.chars().count() > PASTED;
    if !pasted && (text.contains(['\n', '\t']) || keys_heard(page).await) {
        return type_text(page, text).await;
    }
    page.execute(InsertTextParams::new(text)).await?;
    Ok(())
}

/// Whether the top document hears keys where the focus is; yes when it
/// cannot say (a page of its own `getEventListeners`, say).
async fn keys_heard(page: &Page) -> bool {
    let mut ask = EvaluateParams::new(KEYS_HEARD_JS);
    ask.include_command_line_api = Some(true);
    ask.return_by_value = Some(true);
    ask.silent = Some(true);
    match page.execute(ask).await {
        Ok(reply) if reply.result.exception_details.is_none() => {
            reply.result.result.value != Some(serde_json::Value::Bool(false))
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn combo(mods: &[&str], key: &str) -> KeyCombo {
        KeyCombo {
            modifiers: mods.iter().map(|m| m.to_string()).collect(),
            key: key.to_string(),
        }
    }

    #[test]
    fn keys_get_codes_and_text() {
        let enter = key_def("Enter");
        assert_eq!((enter.key_code, enter.text.as_deref()), (13, Some("\r")));
        let a = key_def("a");
        assert_eq!((a.code.as_str(), a.key_code), ("KeyA", 65));
        let seven = key_def("7");
        assert_eq!((seven.code.as_str(), seven.key_code), ("Digit7", 55));
        assert_eq!(key_def("F5").key_code, 116);
        let e = key_def("é");
        assert_eq!((e.key_code, e.text.as_deref()), (0, Some("é")));
        assert_eq!(key_def("Escape").text, None);
    }

    #[test]
    fn modifiers_and_shortcuts() {
        assert_eq!(modifier_bits(&["Ctrl".into(), "Shift".into()]), 10);
        assert_eq!(editing_command(&combo(&["Ctrl"], "a")), Some("selectAll"));
        assert_eq!(
            editing_command(&combo(&["Ctrl", "Shift"], "z")),
            Some("redo")
        );
        assert_eq!(editing_command(&combo(&[], "a")), None);
        assert_eq!(editing_command(&combo(&["Ctrl"], "q")), None);
    }
}
