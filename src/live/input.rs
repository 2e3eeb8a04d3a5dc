//! A person's pointer, keys and text from the live view, as the page gets
//! them: real input events at the CSS point of the viewport that matches
//! the point of the frame they pointed at, whatever the size the frame was
//! shown at. The viewer sends points as fractions of the frame, so neither
//! its size nor its device scale matters.

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    MouseButton,
};
use serde::Deserialize;

use crate::browser::{RemoteError, Screencast};

/// A mouse event's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MouseAction {
    /// A button went down.
    Down,
    /// A button came up.
    Up,
    /// The pointer moved.
    Move,
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Button {
    /// None (a move).
    #[default]
    None,
    /// The main one.
    Left,
    /// The wheel.
    Middle,
    /// The context menu's.
    Right,
}

/// A key event's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyAction {
    /// The key went down.
    Down,
    /// It came up.
    Up,
}

/// One thing a person did in the live view. Points are fractions (0 to 1)
/// of the frame's width and height.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PersonInput {
    /// A mouse button or move.
    Mouse {
        /// Down, up or move.
        action: MouseAction,
        /// Across the frame, 0 to 1.
        x: f64,
        /// Down the frame, 0 to 1.
        y: f64,
        /// The button that changed.
        #[serde(default)]
        button: Button,
        /// The buttons held (the DOM's bit field).
        #[serde(default)]
        buttons: i64,
        /// Which click of a double (2) or triple click this is.
        #[serde(default)]
        clicks: i64,
        /// Modifiers held (CDP's bits: Alt 1, Ctrl 2, Meta 4, Shift 8).
        #[serde(default)]
        modifiers: i64,
    },
    /// The wheel turned.
    Wheel {
        /// Across the frame, 0 to 1.
        x: f64,
        /// Down the frame, 0 to 1.
        y: f64,
        /// Pixels right.
        dx: f64,
        /// Pixels down.
        dy: f64,
    },
    /// A key.
    Key {
        /// Down or up.
        action: KeyAction,
        /// The DOM key value (`a`, `Enter`).
        key: String,
        /// The DOM code (`KeyA`).
        #[serde(default)]
        code: String,
        /// The key code (Windows' virtual key).
        #[serde(default)]
        key_code: i64,
        /// Modifiers held.
        #[serde(default)]
        modifiers: i64,
    },
    /// Text put in at once (pasted).
    Text {
        /// The text.
        text: String,
    },
}

/// What one input did, as the hand-over's record counts it.
#[derive(Debug, Default)]
pub(super) struct Done {
    pub clicks: usize,
    pub keys: usize,
    /// It typed (a key with text, or text put in).
    pub typed: bool,
}

/// The most characters one text input puts in.
const MAX_TEXT: usize = 10_000;

/// The CSS point of a fraction of a frame of `size` (CSS pixels).
fn point(x: f64, y: f64, size: (f64, f64)) -> (f64, f64) {
    let clamp = |v: f64| {
        if v.is_finite() {
            v.clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    (clamp(x) * size.0, clamp(y) * size.1)
}

/// Sends `input` to the page of `cast`, whose frames show `size` CSS pixels.
pub(super) async fn dispatch(
    cast: &Screencast,
    input: &PersonInput,
    size: (f64, f64),
) -> Result<Done, RemoteError> {
    match input {
        PersonInput::Mouse {
            action,
            x,
            y,
            button,
            buttons,
            clicks,
            modifiers,
        } => {
            let (x, y) = point(*x, *y, size);
            let kind = match action {
                MouseAction::Down => DispatchMouseEventType::MousePressed,
                MouseAction::Up => DispatchMouseEventType::MouseReleased,
                MouseAction::Move => DispatchMouseEventType::MouseMoved,
            };
            let mut event = DispatchMouseEventParams::new(kind, x, y);
            event.button = Some(cdp_button(*action, *button, *buttons));
            event.buttons = Some(*buttons);
            event.modifiers = Some(*modifiers);
            if *action != MouseAction::Move {
                event.click_count = Some((*clicks).clamp(1, 3));
            }
            cast.mouse(event).await?;
            Ok(Done {
                clicks: usize::from(*action == MouseAction::Up),
                ..Done::default()
            })
        }
        PersonInput::Wheel { x, y, dx, dy } => {
            let (x, y) = point(*x, *y, size);
            let mut event = DispatchMouseEventParams::new(DispatchMouseEventType::MouseWheel, x, y);
            event.delta_x = Some(finite(*dx));
            event.delta_y = Some(finite(*dy));
            cast.mouse(event).await?;
            Ok(Done::default())
        }
        PersonInput::Key {
            action,
            key,
            code,
            key_code,
            modifiers,
        } => {
            let event = key_event(*action, key, code, *key_code, *modifiers);
            let typed = event.text.is_some();
            cast.key(event).await?;
            Ok(Done {
                keys: usize::from(*action == KeyAction::Down),
                typed,
                ..Done::default()
            })
        }
        PersonInput::Text { text } => {
            let text: String = text.chars().take(MAX_TEXT).collect();
            cast.insert_text(&text).await?;
            Ok(Done {
                typed: !text.is_empty(),
                ..Done::default()
            })
        }
    }
}

/// The button an event names: a move names the one held (a drag), as a
/// person's pointer does; a press or release the one that changed.
fn cdp_button(action: MouseAction, button: Button, buttons: i64) -> MouseButton {
    let held = match action {
        MouseAction::Move if buttons & 1 != 0 => Button::Left,
        MouseAction::Move if buttons & 2 != 0 => Button::Right,
        MouseAction::Move if buttons & 4 != 0 => Button::Middle,
        MouseAction::Move => Button::None,
        _ => button,
    };
    match held {
        Button::None => MouseButton::None,
        Button::Left => MouseButton::Left,
        Button::Middle => MouseButton::Middle,
        Button::Right => MouseButton::Right,
    }
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v.clamp(-10_000.0, 10_000.0)
    } else {
        0.0
    }
}

/// The key event of a key a person pressed: a key of one character types it
/// unless Ctrl, Alt or Meta is held; Enter types a return.
fn key_event(
    action: KeyAction,
    key: &str,
    code: &str,
    key_code: i64,
    modifiers: i64,
) -> DispatchKeyEventParams {
    let mut chars = key.chars();
    let one = matches!((chars.next(), chars.next()), (Some(_), None));
    let text = match key {
        "Enter" => Some("\r".to_string()),
        _ if one && modifiers & 0b0111 == 0 => Some(key.to_string()),
        _ => None,
    };
    let kind = match (action, &text) {
        (KeyAction::Up, _) => DispatchKeyEventType::KeyUp,
        (KeyAction::Down, Some(_)) => DispatchKeyEventType::KeyDown,
        (KeyAction::Down, None) => DispatchKeyEventType::RawKeyDown,
    };
    let mut event = DispatchKeyEventParams::new(kind);
    event.key = Some(key.chars().take(32).collect());
    event.code = Some(code.chars().take(32).collect()).filter(|c: &String| !c.is_empty());
    event.windows_virtual_key_code = Some(key_code).filter(|&k| (1..=255).contains(&k));
    event.native_virtual_key_code = event.windows_virtual_key_code;
    event.modifiers = Some(modifiers & 0b1111);
    if action == KeyAction::Down {
        event.unmodified_text = text.clone();
        event.text = text;
    }
    event
}

/// The field that has the focus, by its label (never its value): what the
/// record says a person typed into.
const FOCUSED_FIELD: &str = r#"(() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  if (!e || e === document.body || e === document.documentElement) return '';
  const label = e.labels && e.labels.length ? e.labels[0].innerText : '';
  const name = e.getAttribute('aria-label') || label || e.getAttribute('placeholder')
    || e.getAttribute('name') || e.id || '';
  const kind = e.tagName.toLowerCase() + (e.type && e.type !== e.tagName.toLowerCase() ? ' ' + e.type : '');
  const said = name.replace(/\s+/g, ' ').trim().slice(0, 80);
  return said ? `"${said}" (${kind})` : kind;
})()"#;

/// The field a person's typing went to, described.
pub(super) async fn focused_field(cast: &Screencast) -> Option<String> {
    let value = cast.evaluate(FOCUSED_FIELD).await.ok()?;
    value
        .as_str()
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(120).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_of_the_frame_is_the_same_fraction_of_the_viewport() {
        assert_eq!(point(0.5, 0.25, (1280.0, 800.0)), (640.0, 200.0));
        assert_eq!(point(-3.0, 7.0, (390.0, 844.0)), (0.0, 844.0));
        assert_eq!(point(f64::NAN, 0.5, (100.0, 100.0)), (0.0, 50.0));
    }

    #[test]
    fn a_move_with_a_button_held_is_a_drag_of_that_button() {
        use MouseAction::*;
        assert_eq!(cdp_button(Move, Button::None, 1), MouseButton::Left);
        assert_eq!(cdp_button(Move, Button::None, 2), MouseButton::Right);
        assert_eq!(cdp_button(Move, Button::None, 0), MouseButton::None);
        assert_eq!(cdp_button(Down, Button::Right, 2), MouseButton::Right);
        assert_eq!(cdp_button(Up, Button::Left, 0), MouseButton::Left);
    }

    #[test]
    fn a_character_types_itself_unless_a_shortcut_is_held() {
        let a = key_event(KeyAction::Down, "a", "KeyA", 65, 0);
        assert_eq!(a.text.as_deref(), Some("a"));
        assert_eq!(a.r#type, DispatchKeyEventType::KeyDown);
        let copy = key_event(KeyAction::Down, "c", "KeyC", 67, 2);
        assert_eq!(copy.text, None);
        assert_eq!(copy.r#type, DispatchKeyEventType::RawKeyDown);
        let enter = key_event(KeyAction::Down, "Enter", "Enter", 13, 0);
        assert_eq!(enter.text.as_deref(), Some("\r"));
        let up = key_event(KeyAction::Up, "a", "KeyA", 65, 0);
        assert_eq!(up.text, None);
        assert_eq!(up.r#type, DispatchKeyEventType::KeyUp);
    }

    #[test]
    fn the_viewers_events_are_read_from_their_json() {
        let click: PersonInput = serde_json::from_str(
            r#"{"kind":"mouse","action":"down","x":0.5,"y":0.5,"button":"left","buttons":1,"clicks":1}"#,
        )
        .unwrap();
        assert!(matches!(
            click,
            PersonInput::Mouse {
                action: MouseAction::Down,
                button: Button::Left,
                ..
            }
        ));
        assert!(serde_json::from_str::<PersonInput>(r#"{"kind":"shell","cmd":"id"}"#).is_err());
    }
}
