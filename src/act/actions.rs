//! One function per command: what a person would do, with real input where a
//! person uses the mouse or the keyboard. Each returns what it did, or a reason
//! for the model when it could not.

use std::sync::Mutex;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::dom::{BackendNodeId, SetFileInputFilesParams};
use chromiumoxide::cdp::browser_protocol::input::MouseButton;
use chromiumoxide::cdp::browser_protocol::page::{
    GetNavigationHistoryParams, NavigateToHistoryEntryParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;
use serde_json::{json, Value};

use super::locate::{call_on_element, call_on_node, focused_node, node_from_call, reach, Reach};
use super::watch::Events;
use super::{input, settle, ActOptions};
use crate::browser::link_of;
use crate::browser::Session;
use crate::commands::{Command, ImagePoint, KeyCombo, ScrollDirection, Spot};
use crate::files::UploadFolder;
use crate::perceive::{Element, Point, Rect};
use crate::safety::Danger;

/// What an action did, before the page is looked at again.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Acted {
    /// The action saw its own effect (a value typed, a scroll moved).
    Confirmed(String),
    /// Input was sent; whether it did anything shows on the page.
    Unconfirmed(String),
    /// It ran and changed nothing.
    NoEffect(String),
}

type Act = Result<Acted, String>;

/// How an element is named in messages: `button "Search"`.
fn describe(e: &Element) -> String {
    if let Some(size) = e.drawn_size() {
        format!("element {} ({} {size})", e.id, e.role)
    } else if e.name.is_empty() {
        format!("element {} ({})", e.id, e.role)
    } else {
        format!("element {} ({} \"{}\")", e.id, e.role, e.name)
    }
}

/// The reason given when the element left the page since the look.
fn gone(e: &Element) -> String {
    format!(
        "{} is no longer on the page; look at the page again",
        describe(e)
    )
}

/// The URL of the page, or "" when it has none yet.
pub(super) async fn page_url(page: &Page) -> String {
    page.url().await.ok().flatten().unwrap_or_default()
}

/// An error's words, as the outcome tells the model.
fn told(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn refused(e: impl std::fmt::Display) -> String {
    format!("the browser refused the input: {e}")
}

/// A right click, a double click or a hold (a long press on a phone) at `p`,
/// which `place` names.
async fn press_button(session: &Session, command: &Command, p: Point, place: &str) -> Act {
    let page = session.page();
    let did = match command {
        Command::RightClick { .. } => {
            input::click_with(page, p, MouseButton::Right, 1)
                .await
                .map_err(refused)?;
            format!("right-clicked {place}")
        }
        Command::DoubleClick { .. } => {
            input::click_with(page, p, MouseButton::Left, 2)
                .await
                .map_err(refused)?;
            format!("double-clicked {place}")
        }
        _ => {
            let seconds = match command {
                Command::Hold { seconds, .. } => seconds.clamp(0.0, 60.0),
                _ => 0.0,
            };
            input::hold_or_press(page, p, Duration::from_secs_f64(seconds), session.touch())
                .await
                .map_err(refused)?;
            if session.touch() {
                format!("pressed {place} for {seconds} s")
            } else {
                format!("held the button down {seconds} s on {place}")
            }
        }
    };
    Ok(Acted::Unconfirmed(did))
}

/// Where a command's spot is, in CSS pixels, and how to name it: the middle
/// of the element it names, or the point it gives.
async fn spot_point(
    session: &Session,
    spot: &Spot,
    target: Option<&Element>,
    view: Rect,
) -> Result<(Point, String), String> {
    match (spot, target) {
        (Spot::Id(_), Some(e)) => Ok((point_for(session.page(), e, view).await?, describe(e))),
        (Spot::Id(_), None) => Err("the command names no element".to_string()),
        (Spot::At(at), _) => {
            let p = super::points::to_css(*at, session.viewport()).map_err(told)?;
            Ok((p, format!("at {}", point_place(*at, p, target))))
        }
    }
}

/// A key pressed, or held down `hold` seconds.
async fn press_key(page: &Page, key: &KeyCombo, hold: Option<f64>) -> Act {
    let held = hold.map(|s| Duration::from_secs_f64(s.clamp(0.0, 60.0)));
    input::press(page, key, held).await.map_err(refused)?;
    Ok(Acted::Unconfirmed(match hold {
        Some(s) => format!("held {key} down {s} s"),
        None => format!("pressed {key}"),
    }))
}

/// Runs one command (not ANSWER, COMPLETE or STOP: those never touch the page).
pub(super) async fn perform(
    session: &Session,
    events: &Mutex<Events>,
    options: &ActOptions,
    command: &Command,
    target: Option<&Element>,
    drop_on: Option<&Element>,
) -> Act {
    let page = session.page();
    let view = crate::perceive::view_rect(session.viewport());
    let el = || target.ok_or_else(|| "the command names no element".to_string());
    match command {
        Command::Click { .. } => {
            let e = el()?;
            let p = point_for(page, e, view).await?;
            input::click_or_tap(page, p, session.touch())
                .await
                .map_err(refused)?;
            Ok(Acted::Unconfirmed(format!(
                "{} {}",
                clicked(session),
                describe(e)
            )))
        }
        Command::Hover { .. } => {
            let e = el()?;
            let p = point_for(page, e, view).await?;
            input::hover(page, p).await.map_err(refused)?;
            Ok(Acted::Unconfirmed(format!(
                "the pointer is over {}",
                describe(e)
            )))
        }
        Command::ClickAt { at }
        | Command::HoverAt { at }
        | Command::ScrollAt { at, .. }
        | Command::TypeAt { at, .. } => at_point(session, command, *at, target, view).await,
        Command::Drag { from, to, pace } => {
            let (start, _) = spot_point(session, from, target, view).await?;
            let pace = pace.map_or_else(input::Pace::default, |p| input::Pace {
                moving: Some(Duration::from_secs_f64(p.seconds.clamp(0.0, 60.0))),
                hold: Duration::from_secs_f64(p.hold.clamp(0.0, 60.0)),
            });
            drag(session, from, start, to, drop_on, pace).await
        }
        Command::RightClick { on } | Command::DoubleClick { on } | Command::Hold { on, .. } => {
            let (p, place) = spot_point(session, on, target, view).await?;
            press_button(session, command, p, &place).await
        }
        Command::Type { text, .. } => fill(page, el()?, view, text).await,
        Command::Clear { .. } => fill(page, el()?, view, "").await,
        Command::Select { option, .. } => {
            select(page, events, options, el()?, view, option, true).await
        }
        Command::Deselect { option, .. } => {
            select(page, events, options, el()?, view, option, false).await
        }
        Command::Scroll { direction, .. } => match target {
            Some(e) => scroll_container(page, e, *direction).await,
            None if session.touch() => swipe_page(page, view, *direction).await,
            None => scroll_page(page, *direction).await,
        },
        Command::Press { key, hold } => press_key(page, key, *hold).await,
        Command::Fetch { url } => fetch(session, options, url).await,
        Command::Back => back(page).await,
        Command::Wait { seconds } => {
            tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 60.0))).await;
            Ok(Acted::Confirmed(format!("waited {seconds} s")))
        }
        Command::Upload { names, .. } => upload(page, el()?, options.files.as_ref(), names).await,
        Command::Read { .. }
        | Command::Zoom { .. }
        | Command::Tab { .. }
        | Command::Checkpoint { .. }
        | Command::BackToCheckpoint { .. }
        | Command::Answer { .. }
        | Command::Ask { .. }
        | Command::Hands { .. }
        | Command::Complete { .. }
        | Command::Stop { .. } => Ok(Acted::Confirmed("nothing to do on the page".into())),
    }
}

/// A command at a point of the image: a click, the pointer moved there, the
/// wheel turned there, or a click and typing there.
async fn at_point(
    session: &Session,
    command: &Command,
    at: ImagePoint,
    target: Option<&Element>,
    view: Rect,
) -> Act {
    let page = session.page();
    let p = super::points::to_css(at, session.viewport()).map_err(told)?;
    let place = point_place(at, p, target);
    match command {
        Command::HoverAt { .. } => {
            input::hover(page, p).await.map_err(refused)?;
            Ok(Acted::Unconfirmed(format!("the pointer is at {place}")))
        }
        Command::ScrollAt { direction, .. } => {
            // As far as SCROLL moves the page: most of a screen.
            let (sx, sy) = signs(*direction);
            let (dx, dy) = (f64::from(sx) * view.w * 0.8, f64::from(sy) * view.h * 0.8);
            let before = scroll_offsets_at(page, p).await;
            let turned = if session.touch() {
                input::swipe(page, p, dx, dy, view).await.map_err(refused)?;
                format!("swiped {} at {place}", direction_word(*direction).0)
            } else {
                input::wheel(page, p, dx, dy).await.map_err(refused)?;
                format!(
                    "turned the wheel {} at {place}",
                    direction_word(*direction).0
                )
            };
            // What the wheel scrolled (sideways too, which the look after
            // may not tell apart from nothing), as the wheel's smooth
            // scroll ends.
            let Some(before) = before else {
                return Ok(Acted::Unconfirmed(turned));
            };
            let mut moved = 0.0;
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let now = scroll_offsets_at(page, p).await.unwrap_or(before);
                let m = (now.0 - before.0).abs() + (now.1 - before.1).abs();
                if m > 0.0 && (m - moved).abs() < 0.5 {
                    break;
                }
                moved = m;
            }
            Ok(if moved >= 1.0 {
                Acted::Confirmed(format!("{turned}: it scrolled {moved:.0} px"))
            } else {
                Acted::Unconfirmed(turned)
            })
        }
        Command::TypeAt { text, .. } => {
            input::click_or_tap(page, p, session.touch())
                .await
                .map_err(refused)?;
            input::put_text(page, text).await.map_err(refused)?;
            Ok(Acted::Unconfirmed(format!(
                "{} at {place} and typed {} characters",
                clicked(session),
                text.chars().count()
            )))
        }
        _ => {
            input::click_or_tap(page, p, session.touch())
                .await
                .map_err(refused)?;
            Ok(Acted::Unconfirmed(format!(
                "{} at {place}",
                clicked(session)
            )))
        }
    }
}

/// How far everything that scrolls at `p` has scrolled (the element there,
/// each of its ancestors, the page): the sums of their left and top
/// offsets. `None` when the page cannot say.
async fn scroll_offsets_at(page: &Page, p: Point) -> Option<(f64, f64)> {
    let js = format!(
        "(() => {{ let x = window.scrollX, y = window.scrollY; \
         for (let e = document.elementFromPoint({}, {}); e; e = e.parentElement) \
         {{ x += e.scrollLeft; y += e.scrollTop; }} return [x, y]; }})()",
        p.x, p.y
    );
    let v: Vec<f64> = page.evaluate(js).await.ok()?.into_value().ok()?;
    match v[..] {
        [x, y] => Some((x, y)),
        _ => None,
    }
}

/// A point as the outcome names it: `@412,230 (CSS 505,282) on canvas …`.
fn point_place(at: ImagePoint, p: Point, target: Option<&Element>) -> String {
    let on = target
        .map(|e| format!(" on {}", describe(e)))
        .unwrap_or_default();
    format!("{at} (CSS {:.0},{:.0}){on}", p.x, p.y)
}

/// DRAG from `start` (CSS pixels, where `from` is) to `to`: a point, or the
/// centre of the element to drop on.
async fn drag(
    session: &Session,
    from: &Spot,
    start: Point,
    to: &Spot,
    drop_on: Option<&Element>,
    pace: input::Pace,
) -> Act {
    let end = match (to, drop_on) {
        (Spot::At(at), _) => super::points::to_css(*at, session.viewport()).map_err(told)?,
        (Spot::Id(_), Some(e)) => centre_in_view(e)?,
        (Spot::Id(id), None) => return Err(format!("there is no element {id} to drop on")),
    };
    input::drag(session.page(), start, end, pace)
        .await
        .map_err(refused)?;
    Ok(Acted::Unconfirmed(format!(
        "dragged from {from} (CSS {:.0},{:.0}) to {to} (CSS {:.0},{:.0})",
        start.x, start.y, end.x, end.y
    )))
}

/// Watches the page's `dragover` events from here on: the last one's
/// `defaultPrevented`, read at the window after the page's own handlers,
/// says whether the page takes the drop.
const WATCH_DRAGOVER_JS: &str = r#"function() {
  window.__seamarkDropTaken = false;
  if (!window.__seamarkDropWatch) {
    window.__seamarkDropWatch = true;
    window.addEventListener('dragover', (e) => { window.__seamarkDropTaken = e.defaultPrevented; });
  }
}"#;

/// UPLOAD onto an element that is no file input: the files are dropped on
/// it as from a file manager, when the page takes a drop there.
async fn drop_on(page: &Page, e: &Element, chosen: &[crate::files::ChosenFile]) -> Act {
    let view_p = centre_in_view(e)?;
    call_on_element(page, e, WATCH_DRAGOVER_JS, Vec::new())
        .await
        .ok_or_else(|| gone(e))?;
    // Asked in the drop zone's own window (its frame's).
    let accepts = async {
        call_on_node(
            &link_of(page, &e.frame),
            e.backend_node_id,
            "function() { return window.__seamarkDropTaken === true; }",
            Vec::new(),
        )
        .await
            == Some(Value::Bool(true))
    };
    let files: Vec<String> = chosen
        .iter()
        .map(|c| c.path.to_string_lossy().into_owned())
        .collect();
    let taken = input::drop_files(page, view_p, &files, accepts)
        .await
        .map_err(refused)?;
    let what: Vec<String> = chosen.iter().map(|c| c.describe()).collect();
    if !taken {
        return Err(format!(
            "{} is neither a file input nor a place that takes files dropped on it: nothing \
             was attached",
            describe(e)
        ));
    }
    Ok(Acted::Unconfirmed(format!(
        "dropped {} on {}",
        what.join(", "),
        describe(e)
    )))
}

/// The middle of the part of `e` in view, where a drag drops on it.
fn centre_in_view(e: &Element) -> Result<Point, String> {
    let r = e
        .visible
        .ok_or_else(|| format!("{} is not in view: scroll to it first", describe(e)))?;
    Ok(Point {
        x: r.x + r.w / 2.0,
        y: r.y + r.h / 2.0,
    })
}

const DANGER_JS: &str = r#"function(pressEnter) {
  const t = s => (s || '').replace(/\s+/g, ' ').trim();
  const form = this.form || (this.closest && this.closest('form'));
  const tag = this.tagName || '';
  const type = ((this.getAttribute && this.getAttribute('type')) || '').toLowerCase();
  const submits = !!form && (pressEnter ? (tag === 'INPUT' || tag === 'SELECT' || tag === 'BUTTON')
    : (tag === 'BUTTON' && (type === '' || type === 'submit')) || (tag === 'INPUT' && (type === 'submit' || type === 'image')));
  const passwords = submits ? [...form.querySelectorAll('input[type=password]')] : [];
  const payment = submits && !!form.querySelector('[autocomplete^="cc-"], input[name*="card" i], input[name*="cvv" i], input[name*="cvc" i], input[id*="card" i]');
  const formName = form ? t([form.getAttribute('aria-label'), form.getAttribute('name'), form.id].filter(Boolean).join(' ')) : '';
  return { submits, password: passwords.length > 0, passwords_filled: passwords.filter(p => p.value.length > 0).length,
           payment, form: formName, text: t(this.innerText || this.value || (this.getAttribute && this.getAttribute('aria-label')) || '').slice(0, 200) };
}"#;

/// What a CLICK on `target`, or an Enter in the focused field, would set off.
pub(super) async fn danger(
    page: &Page,
    command: &Command,
    target: Option<&Element>,
) -> Option<Danger> {
    let value = match (command, target) {
        (
            Command::Click { .. }
            | Command::ClickAt { .. }
            | Command::TypeAt { .. }
            | Command::DoubleClick { .. }
            | Command::Hold { .. },
            Some(e),
        ) => call_on_element(page, e, DANGER_JS, vec![json!(false)]).await?,
        (Command::Press { key, .. }, _) if key.key == "Enter" => {
            let (frame, focused) = focused_node(page).await?;
            call_on_node(
                &link_of(page, &frame),
                focused,
                DANGER_JS,
                vec![json!(true)],
            )
            .await?
        }
        _ => return None,
    };
    serde_json::from_value(value).ok()
}

/// The form a submit button or the focused field belongs to.
const FORM_OF_JS: &str =
    "function() { return this.form || (this.closest && this.closest('form')) || null; }";

/// The form of a password field that holds exactly `v`.
const PASSWORD_FORM_JS: &str = r#"function(v) {
  return this.tagName === 'INPUT' && this.type === 'password' && this.value === v
    ? (this.form || this.closest('form')) : null;
}"#;

/// The form a CLICK on `target`, or an Enter in the focused field, submits:
/// its frame and its node.
pub(super) async fn form_of(
    page: &Page,
    command: &Command,
    target: Option<&Element>,
) -> Option<(String, i64)> {
    let (frame, node) = match (command, target) {
        (Command::Click { .. } | Command::ClickAt { .. }, Some(e)) => {
            (e.frame.clone(), e.backend_node_id)
        }
        (Command::Press { .. }, _) => focused_node(page).await?,
        _ => return None,
    };
    let form = node_from_call(&link_of(page, &frame), node, FORM_OF_JS, Vec::new()).await?;
    Some((frame, form))
}

/// The URL of the document node `node` of frame `frame` is in: a field in
/// a frame of another site sends what is typed there to that site, not to
/// the page's.
pub(super) async fn document_url(page: &Page, frame: &str, node: i64) -> Option<String> {
    let url = call_on_node(
        &link_of(page, frame),
        node,
        "function() { return this.ownerDocument ? this.ownerDocument.URL : document.URL; }",
        Vec::new(),
    )
    .await?;
    url.as_str().map(str::to_string)
}

/// The form whose password field `node` (in frame `frame`) holds `value`,
/// if it does now.
pub(super) async fn password_form(page: &Page, frame: &str, node: i64, value: &str) -> Option<i64> {
    node_from_call(
        &link_of(page, frame),
        node,
        PASSWORD_FORM_JS,
        vec![json!(value)],
    )
    .await
}

/// Whether the element is disabled now (it may have changed since perception).
const DISABLED_JS: &str = r#"function() {
  return !!(this.disabled || this.getAttribute && this.getAttribute('aria-disabled') === 'true'
    || (this.closest && this.closest('fieldset:disabled')));
}"#;

/// A point where a click reaches the element, or why there is none.
async fn point_for(page: &Page, e: &Element, view: Rect) -> Result<Point, String> {
    if call_on_element(page, e, DISABLED_JS, Vec::new()).await == Some(Value::Bool(true)) {
        return Err(format!(
            "{} is disabled; something else must come first (fill required fields, pick an option)",
            describe(e)
        ));
    }
    match reach(page, e.backend_node_id, &e.frame, view).await {
        Reach::At(p) => Ok(p),
        Reach::Covered { by } => Err(format!(
            "{} is covered by {by}, which would get the click; nothing was clicked. Deal with the cover first (close, accept or dismiss it)",
            describe(e)
        )),
        Reach::NoBox => Err(format!(
            "{} has no visible box now (hidden or collapsed)",
            describe(e)
        )),
        Reach::Gone => Err(gone(e)),
    }
}

/// What kind of field the element is, and its state.
const FIELD_JS: &str = r#"function() {
  const tag = this.tagName ? this.tagName.toLowerCase() : '';
  const type = (this.getAttribute && (this.getAttribute('type') || '') || '').toLowerCase();
  const text = ['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number'];
  const set = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
  let kind = 'none';
  if (this.isContentEditable) kind = 'editable';
  else if (tag === 'textarea') kind = 'text';
  else if (tag === 'input' && text.includes(type)) kind = 'text';
  else if (tag === 'input' && set.includes(type)) kind = 'set';
  return { kind, type, readonly: !!this.readOnly, disabled: !!this.disabled,
           empty: this.isContentEditable ? this.textContent.length === 0 : !(this.value || '').length };
}"#;

/// Gives the field the keyboard focus if the click did not (a label in the way).
const FOCUS_JS: &str = r#"function() {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  if (a === this || this.contains(a)) return true;
  this.focus();
  return document.activeElement === this || (this.getRootNode().activeElement === this);
}"#;

/// Selects the field's whole content, so the next key replaces it.
const SELECT_CONTENT_JS: &str = r#"function() {
  if (this.isContentEditable) {
    const r = document.createRange(); r.selectNodeContents(this);
    const s = getSelection(); s.removeAllRanges(); s.addRange(r);
  } else { this.select(); }
}"#;

const VALUE_JS: &str = r#"function() {
  return this.isContentEditable ? this.innerText.replace(/\n$/, '') : String(this.value);
}"#;

/// Sets the value of a field people fill with a picker (date, color, range),
/// as the picker does: the value, then input and change events.
const SET_VALUE_JS: &str = r#"function(v) {
  const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  set.call(this, v);
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return this.value;
}"#;

/// The form a picker field's value is written in.
fn value_format(input_type: &str) -> &'static str {
    match input_type {
        "date" => "YYYY-MM-DD, e.g. 2025-03-31",
        "time" => "HH:MM, e.g. 09:30",
        "datetime-local" => "YYYY-MM-DDTHH:MM, e.g. 2025-03-31T09:30",
        "month" => "YYYY-MM, e.g. 2025-03",
        "week" => "YYYY-Www, e.g. 2025-W14",
        "color" => "#rrggbb, e.g. #ff8800",
        _ => "a number within the slider's range",
    }
}

/// TYPE (and CLEAR, with no text): focus by a real click, select what is there,
/// delete it with a real Backspace, type the text (key by key where the
/// page listens for keys: see `input::put_text`).
async fn fill(page: &Page, e: &Element, view: Rect, text: &str) -> Act {
    let info = call_on_element(page, e, FIELD_JS, Vec::new())
        .await
        .ok_or_else(|| gone(e))?;
    let kind = info["kind"].as_str().unwrap_or("none");
    let input_type = info["type"].as_str().unwrap_or("");
    if kind == "none" {
        return Err(format!(
            "{} is not a text field; TYPE and CLEAR work on text fields, text areas and editable areas",
            describe(e)
        ));
    }
    if info["disabled"] == Value::Bool(true) || info["readonly"] == Value::Bool(true) {
        return Err(format!("{} is read-only or disabled", describe(e)));
    }
    // Lines go into a textarea or an editable area; in a field of one line
    // the break would be an Enter, which submits its form.
    if text.contains('\n') && kind != "editable" && !e.tag.eq_ignore_ascii_case("textarea") {
        return Err(format!(
            "{} is a single-line field: a line break there would submit its form, and nothing \
             was typed; type one line (then PRESS:Enter to submit), or the lines into a textarea",
            describe(e)
        ));
    }
    let p = point_for(page, e, view).await?;
    input::click(page, p).await.map_err(refused)?;
    call_on_element(page, e, FOCUS_JS, Vec::new()).await;
    if kind == "set" {
        let now = call_on_element(page, e, SET_VALUE_JS, vec![json!(text)]).await;
        return match now.as_ref().and_then(Value::as_str) {
            Some(v) if v == text || text.is_empty() => {
                Ok(Acted::Confirmed(format!("set {} to \"{v}\"", describe(e))))
            }
            _ => Err(format!(
                "\"{text}\" is not a valid value for {} ({input_type}); write it as {}",
                describe(e),
                value_format(input_type)
            )),
        };
    }
    let was_empty = info["empty"] == Value::Bool(true);
    if text.is_empty() && was_empty {
        return Ok(Acted::NoEffect(format!(
            "{} was already empty",
            describe(e)
        )));
    }
    if !was_empty {
        call_on_element(page, e, SELECT_CONTENT_JS, Vec::new()).await;
        input::press(
            page,
            &crate::commands::KeyCombo {
                modifiers: Vec::new(),
                key: "Backspace".into(),
            },
            None,
        )
        .await
        .map_err(refused)?;
    }
    input::put_text(page, text).await.map_err(refused)?;
    if text.is_empty() {
        return Ok(Acted::Confirmed(format!("cleared {}", describe(e))));
    }
    let secret = input_type == "password";
    let value = call_on_element(page, e, VALUE_JS, Vec::new()).await;
    let value = value.as_ref().and_then(Value::as_str).unwrap_or_default();
    Ok(Acted::Confirmed(if secret {
        format!(
            "typed {} characters into {}",
            text.chars().count(),
            describe(e)
        )
    } else if value == text {
        format!("typed \"{text}\" into {}", describe(e))
    } else {
        format!(
            "typed \"{text}\" into {}, which now holds \"{value}\" (the page changed what was typed)",
            describe(e)
        )
    }))
}

/// A native select's options, which are selected and whether it takes
/// several, or the role of a custom one and whether it takes several.
const SELECT_INFO_JS: &str = r#"function() {
  const t = s => s.replace(/\s+/g, ' ').trim();
  if (this.tagName === 'SELECT')
    return { native: true, multiple: this.multiple,
             options: Array.from(this.options).map(o => t(o.text)),
             chosen: Array.from(this.options).map(o => o.selected) };
  return { native: false, role: this.getAttribute('role') || '',
           multiple: this.getAttribute('aria-multiselectable') === 'true' };
}"#;

/// Selects option `i` of a native select (with `on` false, takes it out of a
/// multiple select's selection), as its popup would, and returns the texts
/// of the options selected now.
const CHOOSE_NATIVE_JS: &str = r#"function(i, on) {
  this.focus();
  if (this.multiple) this.options[i].selected = on; else this.selectedIndex = i;
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return Array.from(this.selectedOptions).map(o => o.text.replace(/\s+/g, ' ').trim());
}"#;

/// The visible options of a custom dropdown or listbox: those it controls or
/// owns, its own, or else every visible option on the page (an open popup is
/// often elsewhere in the DOM). With an index, returns that option's node.
const CUSTOM_OPTIONS_JS: &str = r#"function(i) {
  const root = this.getRootNode();
  const byId = id => (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
  const ids = ((this.getAttribute('aria-controls') || '') + ' ' + (this.getAttribute('aria-owns') || '')).split(/\s+/).filter(Boolean);
  const sel = '[role=option],[role=menuitem],[role=menuitemradio],[role=treeitem]';
  const visible = el => { const r = el.getBoundingClientRect(); const cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none'; };
  let opts = [];
  for (const s of ids.map(byId).filter(Boolean)) opts.push(...s.querySelectorAll(sel));
  if (!opts.length) opts = [...this.querySelectorAll(sel)];
  if (!opts.length) opts = [...(root.querySelectorAll ? root : document).querySelectorAll(sel)];
  opts = opts.filter(visible);
  if (i === undefined || i === null) return opts.map(o => [o.textContent.replace(/\s+/g, ' ').trim(),
    o.getAttribute('aria-selected') === 'true' || o.getAttribute('aria-checked') === 'true']);
  return opts[i];
}"#;

/// Finds `wanted` among option texts: exact, then ignoring case, then the one
/// option that starts with it. Ambiguity is no match.
pub fn match_option(options: &[String], wanted: &str) -> Option<usize> {
    let w = wanted.trim();
    if let Some(i) = options.iter().position(|o| o == w) {
        return Some(i);
    }
    let lw = w.to_lowercase();
    if let Some(i) = options.iter().position(|o| o.to_lowercase() == lw) {
        return Some(i);
    }
    let starts: Vec<usize> = options
        .iter()
        .enumerate()
        .filter(|(_, o)| !lw.is_empty() && o.to_lowercase().starts_with(&lw))
        .map(|(i, _)| i)
        .collect();
    (starts.len() == 1).then(|| starts[0])
}

fn list_options(options: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut s = options
        .iter()
        .take(SHOWN)
        .map(|o| format!("\"{o}\""))
        .collect::<Vec<_>>()
        .join(", ");
    if options.len() > SHOWN {
        s.push_str(&format!(" and {} more", options.len() - SHOWN));
    }
    s
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|o| o.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The options as (text, selected) pairs, from `[[text, selected], …]`.
fn option_states(v: &Value) -> Vec<(String, bool)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|o| Some((o.get(0)?.as_str()?.to_string(), o.get(1)?.as_bool()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The options selected now, as the model reads them ("none" for none).
fn selected_now(texts: &[String]) -> String {
    if texts.is_empty() {
        "none".into()
    } else {
        list_options(texts)
    }
}

/// SELECT (`add` true) and DESELECT: a native select is set as its popup
/// would set it; a custom dropdown is opened with a real click and its option
/// clicked. A list that takes several options keeps its selection: SELECT
/// adds an option to it, DESELECT takes one out.
async fn select(
    page: &Page,
    events: &Mutex<Events>,
    options: &ActOptions,
    e: &Element,
    view: Rect,
    wanted: &str,
    add: bool,
) -> Act {
    let info = call_on_element(page, e, SELECT_INFO_JS, Vec::new())
        .await
        .ok_or_else(|| gone(e))?;
    let choice = Choice {
        wanted,
        add,
        multiple: info["multiple"] == Value::Bool(true),
    };
    if !add && !choice.multiple {
        return Err(format!(
            "{} is not a list that takes several options: DESELECT works only on those (to change a single choice, SELECT another option)",
            describe(e)
        ));
    }
    if info["native"] == Value::Bool(true) {
        return select_native(page, e, view, &info, &choice).await;
    }
    // A custom dropdown: open it unless it is a listbox showing its options.
    if info["role"].as_str() != Some("listbox") {
        let p = point_for(page, e, view).await?;
        let opened = std::time::SystemTime::now();
        input::click(page, p).await.map_err(refused)?;
        settle::settle(
            page,
            events,
            settle::Quiet::usual(options.quiet),
            options.settle_timeout,
            opened,
            None,
        )
        .await;
    }
    select_custom(page, e, view, &choice).await
}

/// What SELECT or DESELECT asks of a list.
struct Choice<'a> {
    /// The option, as the model named it.
    wanted: &'a str,
    /// Selected (SELECT) rather than taken out (DESELECT).
    add: bool,
    /// The list takes several options.
    multiple: bool,
}

impl Choice<'_> {
    /// The option named, among `opts`, or why none is.
    fn find(&self, e: &Element, opts: &[String]) -> Result<usize, String> {
        match_option(opts, self.wanted).ok_or_else(|| {
            format!(
                "{} has no option \"{}\"; its options are: {}",
                describe(e),
                self.wanted,
                list_options(opts)
            )
        })
    }

    /// The option already is as asked: nothing to do.
    fn unchanged(&self, option: &str) -> Acted {
        Acted::NoEffect(if self.add {
            format!("\"{option}\" was already selected")
        } else {
            format!("\"{option}\" was not selected")
        })
    }
}

/// SELECT or DESELECT in a native `<select>`: the option chosen in the page,
/// and what is selected now.
async fn select_native(
    page: &Page,
    e: &Element,
    view: Rect,
    info: &Value,
    choice: &Choice<'_>,
) -> Act {
    let opts = strings(&info["options"]);
    let chosen: Vec<bool> = info["chosen"]
        .as_array()
        .map(|a| a.iter().map(|v| v == &Value::Bool(true)).collect())
        .unwrap_or_default();
    let i = choice.find(e, &opts)?;
    if chosen.get(i).copied() == Some(choice.add) {
        return Ok(choice.unchanged(&opts[i]));
    }
    point_for(page, e, view).await?;
    let now = strings(
        &call_on_element(page, e, CHOOSE_NATIVE_JS, vec![json!(i), json!(choice.add)])
            .await
            .unwrap_or(Value::Null),
    );
    Ok(Acted::Confirmed(match (choice.multiple, choice.add) {
        (false, _) => format!("selected \"{}\" in {}", opts[i], describe(e)),
        (true, true) => format!(
            "added \"{}\" to the selection of {}; selected now: {}",
            opts[i],
            describe(e),
            selected_now(&now)
        ),
        (true, false) => format!(
            "took \"{}\" out of the selection of {}; selected now: {}",
            opts[i],
            describe(e),
            selected_now(&now)
        ),
    }))
}

/// SELECT or DESELECT in a custom list (open): a real click on the option.
async fn select_custom(page: &Page, e: &Element, view: Rect, choice: &Choice<'_>) -> Act {
    let states = option_states(
        &call_on_element(page, e, CUSTOM_OPTIONS_JS, Vec::new())
            .await
            .unwrap_or(Value::Null),
    );
    if states.is_empty() {
        return Err(format!(
            "{} showed no options (no role=option elements appeared); try CLICK on it and look",
            describe(e)
        ));
    }
    let opts: Vec<String> = states.iter().map(|(t, _)| t.clone()).collect();
    let i = choice.find(e, &opts)?;
    // In a list that takes several, a click on an option toggles it.
    if choice.multiple && states[i].1 == choice.add {
        return Ok(choice.unchanged(&opts[i]));
    }
    let option = node_from_call(
        &link_of(page, &e.frame),
        e.backend_node_id,
        CUSTOM_OPTIONS_JS,
        vec![json!(i)],
    )
    .await
    .ok_or("the option disappeared before it could be clicked")?;
    let p = match reach(page, option, &e.frame, view).await {
        Reach::At(p) => p,
        Reach::Covered { by } => return Err(format!("option \"{}\" is covered by {by}", opts[i])),
        Reach::NoBox | Reach::Gone => {
            return Err(format!("option \"{}\" could not be reached", opts[i]))
        }
    };
    input::click(page, p).await.map_err(refused)?;
    Ok(Acted::Unconfirmed(if choice.add {
        format!("chose \"{}\" in {}", opts[i], describe(e))
    } else {
        format!("clicked \"{}\" to take it out of {}", opts[i], describe(e))
    }))
}

/// Signs of a scroll direction: (x, y).
fn signs(d: ScrollDirection) -> (i32, i32) {
    match d {
        ScrollDirection::Up => (0, -1),
        ScrollDirection::Down => (0, 1),
        ScrollDirection::Left => (-1, 0),
        ScrollDirection::Right => (1, 0),
    }
}

fn direction_word(d: ScrollDirection) -> (&'static str, &'static str) {
    match d {
        ScrollDirection::Up => ("up", "top"),
        ScrollDirection::Down => ("down", "bottom"),
        ScrollDirection::Left => ("left", "left edge"),
        ScrollDirection::Right => ("right", "right edge"),
    }
}

/// Reports a scroll from [moved x, moved y, at x, at y, max x, max y].
fn scrolled(what: &str, d: ScrollDirection, v: &Value) -> Act {
    let n = |i: usize| v.get(i).and_then(Value::as_f64).unwrap_or(0.0).round();
    let (word, end) = direction_word(d);
    let vertical = matches!(d, ScrollDirection::Up | ScrollDirection::Down);
    let (moved, at, max) = if vertical {
        (n(1), n(3), n(5))
    } else {
        (n(0), n(2), n(4))
    };
    if moved == 0.0 {
        return Ok(Acted::NoEffect(if max <= 0.0 {
            format!("{what} does not scroll that way")
        } else {
            format!("{what} is already at the {end}")
        }));
    }
    Ok(Acted::Confirmed(format!(
        "scrolled {what} {word} by {} px (now at {at} of {max})",
        moved.abs()
    )))
}

/// What a click is called where it happened: a tap on a touch screen.
fn clicked(session: &Session) -> &'static str {
    if session.touch() {
        "tapped"
    } else {
        "clicked"
    }
}

/// Where the page has scrolled to, and how far it can: `[x, y, max x,
/// max y]`.
const PAGE_SCROLL_JS: &str = "(() => { const s = document.scrollingElement || \
    document.documentElement; return [scrollX, scrollY, Math.max(0, s.scrollWidth - innerWidth), \
    Math.max(0, s.scrollHeight - innerHeight)]; })()";

async fn page_scroll(page: &Page) -> Result<[f64; 4], String> {
    let mut params = EvaluateParams::new(PAGE_SCROLL_JS);
    params.return_by_value = Some(true);
    let reply = page.execute(params).await.map_err(refused)?;
    let v = reply.result.result.value.clone().unwrap_or(Value::Null);
    let n = |i: usize| v.get(i).and_then(Value::as_f64).unwrap_or(0.0);
    Ok([n(0), n(1), n(2), n(3)])
}

/// On a touch screen: scrolls the page by most of a screen with a finger's
/// swipe from the middle of the viewport.
async fn swipe_page(page: &Page, view: Rect, d: ScrollDirection) -> Act {
    let (sx, sy) = signs(d);
    let before = page_scroll(page).await?;
    let (dx, dy) = (f64::from(sx) * view.w * 0.8, f64::from(sy) * view.h * 0.8);
    // From a tenth of the screen past the middle, so the finger's travel
    // stays on the screen.
    let from = Point {
        x: view.w / 2.0 + dx / 2.0,
        y: view.h / 2.0 + dy / 2.0,
    };
    input::swipe(page, from, dx, dy, view)
        .await
        .map_err(refused)?;
    let after = page_scroll(page).await?;
    let v = json!([
        after[0] - before[0],
        after[1] - before[1],
        after[0],
        after[1],
        after[2],
        after[3]
    ]);
    scrolled("the page", d, &v).map(|acted| match acted {
        Acted::Confirmed(done) => Acted::Confirmed(format!("swiped: {done}")),
        other => other,
    })
}

/// Scrolls the page by most of a screen, instantly, so the next look is exact.
async fn scroll_page(page: &Page, d: ScrollDirection) -> Act {
    let (dx, dy) = signs(d);
    let mut params = EvaluateParams::new(format!(
        "(() => {{ const b = [scrollX, scrollY]; \
         scrollBy({{ left: {dx} * innerWidth * 0.8, top: {dy} * innerHeight * 0.8, behavior: 'instant' }}); \
         const s = document.scrollingElement || document.documentElement; \
         return [scrollX - b[0], scrollY - b[1], scrollX, scrollY, \
                 Math.max(0, s.scrollWidth - innerWidth), Math.max(0, s.scrollHeight - innerHeight)]; }})()"
    ));
    params.return_by_value = Some(true);
    let reply = page.execute(params).await.map_err(refused)?;
    let v = reply.result.result.value.clone().unwrap_or(Value::Null);
    scrolled("the page", d, &v)
}

/// Scrolls the scroll area that holds the element (or is it).
const SCROLL_AREA_JS: &str = r#"function(dx, dy) {
  const can = e => { const cs = getComputedStyle(e);
    return dy ? /(auto|scroll|overlay)/.test(cs.overflowY) && e.scrollHeight > e.clientHeight
              : /(auto|scroll|overlay)/.test(cs.overflowX) && e.scrollWidth > e.clientWidth; };
  let e = this.nodeType === 1 ? this : this.parentElement;
  while (e && !can(e)) e = e.parentElement || (e.getRootNode().host || null);
  if (!e || e === document.documentElement || e === document.body) return null;
  const b = [e.scrollLeft, e.scrollTop];
  e.scrollBy({ left: dx * e.clientWidth * 0.8, top: dy * e.clientHeight * 0.8, behavior: 'instant' });
  return [e.scrollLeft - b[0], e.scrollTop - b[1], e.scrollLeft, e.scrollTop,
          e.scrollWidth - e.clientWidth, e.scrollHeight - e.clientHeight];
}"#;

async fn scroll_container(page: &Page, e: &Element, d: ScrollDirection) -> Act {
    let (dx, dy) = signs(d);
    let v = call_on_element(page, e, SCROLL_AREA_JS, vec![json!(dx), json!(dy)])
        .await
        .ok_or_else(|| gone(e))?;
    if v.is_null() {
        return Err(format!(
            "{} is not in an area that scrolls {}; use SCROLL:{} for the page",
            describe(e),
            direction_word(d).0,
            direction_word(d).0
        ));
    }
    scrolled(&format!("the area of {}", describe(e)), d, &v)
}

/// FETCH of a URL the executor's guard already resolved and checked.
async fn fetch(session: &Session, options: &ActOptions, url: &str) -> Act {
    let nav = session
        .navigate(url, options.navigation_timeout)
        .await
        .map_err(|e| e.to_string())?;
    let mut message = format!("opened {url}");
    if let Some(status) = nav.status.filter(|s| *s >= 400) {
        message.push_str(&format!(" (HTTP {status}: an error page)"));
    }
    if nav.load_timed_out {
        message.push_str(" (it had not finished loading)");
    }
    Ok(Acted::Unconfirmed(message))
}

pub(super) async fn back(page: &Page) -> Act {
    let history = page
        .execute(GetNavigationHistoryParams::default())
        .await
        .map_err(refused)?;
    let index = usize::try_from(history.result.current_index).unwrap_or(0);
    let Some(entry) = index
        .checked_sub(1)
        .and_then(|i| history.result.entries.get(i))
    else {
        return Ok(Acted::NoEffect(
            "there is no earlier page in this tab".into(),
        ));
    };
    page.execute(NavigateToHistoryEntryParams::new(entry.id))
        .await
        .map_err(refused)?;
    Ok(Acted::Unconfirmed(format!("went back to {}", entry.url)))
}

/// `multiple` or `single` for a file input, else nothing.
const FILE_INPUT_JS: &str = "function() { \
    if (this.tagName !== 'INPUT' || (this.type || '').toLowerCase() !== 'file') return null; \
    return this.multiple ? 'multiple' : 'single'; }";

async fn upload(page: &Page, e: &Element, folder: Option<&UploadFolder>, names: &[String]) -> Act {
    // Refused before the page is touched: without a folder nothing is
    // attached, whatever the page asks.
    let Some(folder) = folder else {
        return Err(format!(
            "nothing attached: UPLOAD takes files only from a folder the person chose, and none \
             was given (seamark run --files DIR); {} was not read",
            names.join(", ")
        ));
    };
    let chosen = names
        .iter()
        .map(|n| folder.choose(n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| format!("nothing attached: {why}"))?;
    // A label drawn for a hidden file input acts for it.
    let node = e.control_node_id.unwrap_or(e.backend_node_id);
    let link = link_of(page, &e.frame);
    match call_on_node(&link, node, FILE_INPUT_JS, Vec::new()).await {
        Some(Value::String(kind)) if kind == "multiple" || chosen.len() == 1 => {}
        Some(Value::String(kind)) if kind == "single" => {
            return Err(format!(
                "{} takes one file: UPLOAD one of {}",
                describe(e),
                names.join(", ")
            ))
        }
        // No file input: a zone that takes files dropped on it, if it does.
        Some(_) => return drop_on(page, e, &chosen).await,
        None => return Err(gone(e)),
    }
    link.execute(
        SetFileInputFilesParams::builder()
            .files(
                chosen
                    .iter()
                    .map(|c| c.path.to_string_lossy().into_owned())
                    .collect::<Vec<_>>(),
            )
            .backend_node_id(BackendNodeId::new(node))
            .build()
            .map_err(|e| e.to_string())?,
    )
    .await
    .map_err(refused)?;
    let what: Vec<String> = chosen.iter().map(|c| c.describe()).collect();
    Ok(Acted::Confirmed(format!(
        "attached {} to {}",
        what.join(", "),
        describe(e)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_match_exactly_then_loosely_never_ambiguously() {
        let o = opts(&["India", "Indonesia", "France", "Japan"]);
        assert_eq!(match_option(&o, "France"), Some(2));
        assert_eq!(match_option(&o, "france "), Some(2));
        assert_eq!(match_option(&o, "Jap"), Some(3));
        assert_eq!(match_option(&o, "Ind"), None, "India or Indonesia?");
        assert_eq!(match_option(&o, "India"), Some(0));
        assert_eq!(match_option(&o, "Spain"), None);
        assert_eq!(match_option(&o, ""), None);
    }

    #[test]
    fn scroll_reports_distance_or_the_edge() {
        let moved = json!([0, 640, 0, 640, 0, 2400]);
        assert_eq!(
            scrolled("the page", ScrollDirection::Down, &moved),
            Ok(Acted::Confirmed(
                "scrolled the page down by 640 px (now at 640 of 2400)".into()
            ))
        );
        let stuck = json!([0, 0, 0, 2400, 0, 2400]);
        assert_eq!(
            scrolled("the page", ScrollDirection::Down, &stuck),
            Ok(Acted::NoEffect("the page is already at the bottom".into()))
        );
        let flat = json!([0, 0, 0, 0, 0, 0]);
        assert_eq!(
            scrolled("the page", ScrollDirection::Up, &flat),
            Ok(Acted::NoEffect("the page does not scroll that way".into()))
        );
    }
}
