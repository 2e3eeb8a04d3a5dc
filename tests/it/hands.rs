//! The rest of a person's hands on pages made for them: a double click, a
//! chord whose keys go down and up in order as a person's do, a modifier
//! alone, a slow drag held before it lets go, text of several lines into a
//! textarea (and refused in a field of one line, whose Enter submits), and a
//! batch that goes on after a change while its elements are as seen.

use seamark::records::Status::*;
use serde_json::Value;

use crate::support::{Fixture, ReportExt};

#[tokio::test]
async fn a_double_click_is_two_clicks_and_a_dblclick() {
    let mut a = Fixture::open("hands.html").await.actor().await;
    let tile = a.id("Open twice");
    a.run(&format!("DOUBLE_CLICK:{tile}"))
        .await
        .statuses(&[Done])
        .says(0, "double-clicked element");
    assert_eq!(
        a.eval("document.getElementById('tile-said').textContent")
            .await,
        "double-clicked after 2 clicks"
    );
    a.close().await;
}

#[tokio::test]
async fn a_chord_goes_down_modifiers_first_and_comes_up_in_reverse_order() {
    let mut a = Fixture::open("hands.html").await.actor().await;
    let keys = a.id("Keys");
    a.run(&format!("CLICK:{keys}\nPRESS:Control+Shift+Y\nPRESS:Shift"))
        .await
        .statuses(&[Done, NoEffect, NoEffect]);
    let log: Vec<String> =
        serde_json::from_value(a.eval("window.keyLog").await).unwrap_or_default();
    assert_eq!(
        log,
        [
            "keydown:Control:c",
            "keydown:Shift:cs",
            "keydown:y:cs",
            "keyup:y:cs",
            "keyup:Shift:c",
            "keyup:Control:",
            "keydown:Shift:s",
            "keyup:Shift:",
        ],
        "the keys as the page heard them"
    );
    a.close().await;
}

#[tokio::test]
async fn a_slow_drag_moves_for_its_time_and_holds_before_it_lets_go() {
    let mut a = Fixture::open("hands.html").await.actor().await;
    let handle = a.id("Handle");
    // The goal's middle, a point of the image (sent at the viewport's size).
    let goal = a
        .eval(
            "(() => { const r = document.getElementById('goal').getBoundingClientRect(); \
               return `@${Math.round(r.x + r.width / 2)},${Math.round(r.y + r.height / 2)}`; })()",
        )
        .await;
    let goal = goal.as_str().unwrap_or_default().to_string();
    // Quick, it is dropped and the page says how.
    a.run(&format!("DRAG:{handle}:{goal}")).await;
    let quick = a
        .eval("document.getElementById('drag-said').textContent")
        .await;
    assert!(
        quick.as_str().unwrap_or_default().starts_with("dropped"),
        "{quick}"
    );
    a.eval("document.getElementById('handle').style.left = '0px'")
        .await;
    a.look().await;
    let handle = a.id("Handle");
    a.run(&format!("DRAG:{handle}:{goal}:1.2:0.7"))
        .await
        .statuses(&[Done]);
    assert_eq!(
        a.eval("document.getElementById('drag-said').textContent")
            .await,
        "placed slowly"
    );
    a.close().await;
}

#[tokio::test]
async fn lines_go_into_a_textarea_whole_and_a_single_line_field_refuses_them() {
    let mut a = Fixture::open("hands.html").await.actor().await;
    let (subject, message) = (a.id("Subject"), a.id("Message"));
    let report = a
        .run(&format!(
            "TYPE:{subject}:\"\"\"two\nlines\"\"\"\nTYPE:{message}:x"
        ))
        .await;
    report.statuses(&[Failed]).says(0, "single-line field");
    assert_eq!(
        a.eval("document.getElementById('sent').textContent").await,
        ""
    );
    assert_eq!(a.eval("document.getElementById('subject').value").await, "");
    a.run(&format!(
        "TYPE:{message}:\"\"\"name,qty\napples,3\n\npears,4\"\"\""
    ))
    .await
    .statuses(&[Done]);
    assert_eq!(
        a.eval("document.getElementById('message').value").await,
        Value::from("name,qty\napples,3\n\npears,4")
    );
    assert_eq!(
        a.eval("document.getElementById('sent').textContent").await,
        ""
    );
    a.close().await;
}
