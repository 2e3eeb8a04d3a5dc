//! Perception on the fixture pages: every expected element found with the right
//! name and state, no decoy, nothing twice, and the page left untouched.

use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use seamark::browser::{BrowserOptions, Session};
use seamark::perceive::{self, Direction, ElementState, PerceiveOptions};

use crate::support::{walking_every_part, within_screens, Fixture, Seen};

#[tokio::test]
async fn form_controls_get_their_accessible_names_values_and_roles() {
    let fx = Fixture::open("form.html").await;
    let seen = fx.perceive().await;
    seen.no_duplicates().ids_are_dense();
    seen.named("Email address").role("textbox").interactable();
    seen.named("Full name")
        .role("textbox")
        .value("Ada Lovelace");
    let pw = seen
        .named("Password")
        .role("textbox")
        .interactable()
        .element();
    assert_eq!(pw.input_type.as_deref(), Some("password"));
    assert_eq!(
        pw.value, None,
        "a password's value never leaves the browser"
    );
    assert_eq!(pw.has_value, Some(true));
    let json = serde_json::to_string(&seen.obs.table).unwrap();
    assert!(
        !json.contains("s3cret-value"),
        "password value leaked into the table"
    );
    seen.named("Search the site").role("searchbox");
    seen.named("Promo code").role("textbox");
    seen.named("Phone number").role("textbox");
    seen.named("Age").role("spinbutton").value("36");
    seen.named("Birthday").role("textbox");
    seen.named("Volume").role("slider");
    let country = seen
        .named("Country")
        .role("combobox")
        .value("France")
        .element();
    assert_eq!(country.options, vec!["India", "France", "Japan"]);
    seen.named("About you").role("textbox").value("Hello");
    seen.named("Send me news").role("checkbox").checked(true);
    seen.named("Free plan").role("radio").checked(false);
    seen.named("Pro plan").role("radio").checked(true);
    seen.named("Your CV").role("file");
    seen.named("Notes").role("textbox").value("Draft note");
    let summary = seen.named("More options").role("button").element();
    assert_eq!(summary.expanded, Some(false));
    let submit = seen
        .named("Create account")
        .role("button")
        .interactable()
        .element();
    assert_eq!(
        submit.value, None,
        "a submit button's value is its name, not a value"
    );
    seen.named("Start over").role("button");
    let terms = seen.named("Terms of service").role("link").element();
    assert!(terms.href.as_deref().is_some_and(|h| h.ends_with("/terms")));
    seen.named("Privacy policy").role("link");
    assert_eq!(seen.obs.title, "Sign up");
    assert!(seen.obs.url.ends_with("/form.html"));
    assert_eq!(seen.obs.table.len(), 21, "{}", seen.list());
    fx.close().await;
}

#[tokio::test]
async fn a_button_under_a_cookie_banner_is_occluded_by_the_banner() {
    let fx = Fixture::open("cookie.html").await;
    let seen = fx.perceive().await;
    seen.named("Buy now")
        .occluded_by("dialog \"Cookie consent\"");
    seen.named("Add to wishlist").occluded_by("Cookie consent");
    seen.named("Accept all").interactable();
    seen.named("Reject").interactable();
    seen.named("Top link").interactable();
    let line = seen.list();
    assert!(
        line.contains("button \"Buy now\" occluded by dialog \"Cookie consent\""),
        "{line}"
    );
    fx.close().await;
}

#[tokio::test]
async fn a_modal_covers_the_page_behind_it() {
    let fx = Fixture::open("modal.html").await;
    let seen = fx.perceive().await;
    seen.named("Open settings").occluded_by("Newsletter");
    seen.named("Home").occluded_by("");
    seen.named("Your email").interactable();
    seen.named("Subscribe").interactable();
    seen.named("Close").interactable();
    fx.close().await;
}

#[tokio::test]
async fn a_sticky_header_covers_links_after_a_scroll() {
    let fx = Fixture::open("sticky.html").await;
    let seen = fx.perceive().await;
    seen.named("Link one").interactable();
    // Scroll so that "Link one" sits under the 80px header, "Link two" just below it.
    fx.eval("window.scrollTo(0, 400 + 80 - 60)").await;
    let seen = fx.perceive().await;
    seen.named("Link one").occluded_by("header");
    seen.named("Link two").interactable();
    seen.named("Home").interactable();
    assert_eq!(seen.obs.scroll.y, 420.0);
    fx.close().await;
}

#[tokio::test]
async fn elements_off_the_viewport_say_which_way_to_scroll() {
    let fx = Fixture::open("offscreen.html").await;
    fx.eval("window.scrollTo(900, 900)").await;
    let seen = fx.perceive().await;
    seen.named("Visible").offscreen(Direction::Above);
    seen.named("Below").offscreen(Direction::Below);
    seen.named("Right").offscreen(Direction::Above);
    fx.eval("window.scrollTo(900, 0)").await;
    let seen = fx.perceive().await;
    seen.named("Visible").offscreen(Direction::Left);
    seen.named("Right").interactable();
    fx.eval("window.scrollTo(0, 0)").await;
    let seen = fx.perceive().await;
    seen.no_duplicates();
    seen.named("Visible").interactable();
    seen.named("Below").offscreen(Direction::Below);
    seen.named("Right").offscreen(Direction::Right);
    // Inside the scroll container: the first items show, the rest are below.
    seen.named("Item 1").interactable();
    let item6 = seen.named("Item 6").offscreen(Direction::Below).element();
    assert!(matches!(
        item6.state,
        ElementState::Offscreen {
            in_container: true,
            ..
        }
    ));
    // Clipped by overflow:hidden with no way to scroll: not listed at all.
    seen.absent("Clipped away");
    fx.close().await;
}

#[tokio::test]
async fn same_and_cross_origin_iframes_are_enumerated_in_page_coordinates() {
    let fx = Fixture::open("frames.html").await;
    let seen = fx.perceive().await;
    seen.no_duplicates();
    let top = seen.named("Top button").interactable().element();
    let same = seen.named("Button in same frame").interactable().element();
    let cross = seen.named("Button in cross frame").interactable().element();
    assert_ne!(same.frame, top.frame);
    assert_ne!(cross.frame, same.frame);
    // Listener-only elements count in frames too.
    for who in ["same", "cross"] {
        let span = seen
            .named(&format!("Listener span in {who} frame"))
            .role("clickable")
            .interactable()
            .element();
        assert_ne!(span.frame, top.frame);
    }
    assert!(
        fx.other.was_requested("/frame-inner.html"),
        "cross-origin frame not loaded"
    );
    // Boxes are in top-level coordinates: the same-origin frame sits below the top
    // button, the cross-origin frame below that.
    assert!(same.bbox.y > top.bbox.y + top.bbox.h);
    assert!(cross.bbox.y > same.bbox.y + 100.0);
    assert_eq!(
        seen.obs
            .table
            .elements
            .iter()
            .filter(|e| e.name == "Frame link")
            .count(),
        2
    );
    fx.close().await;
}

#[tokio::test]
async fn three_hundred_listener_only_elements_are_all_found() {
    let fx = Fixture::open("clickables.html").await;
    fx.eval(
        "document.body.innerHTML = [...Array(300).keys()].map(i => `<span>S${i}</span>`).join(' '); \
         for (const s of document.querySelectorAll('span')) s.addEventListener('click', () => {})",
    )
    .await;
    let seen = fx.perceive().await;
    seen.no_duplicates();
    for i in [0, 150, 299] {
        seen.named(&format!("S{i}"))
            .role("clickable")
            .interactable();
    }
    let spans = seen
        .obs
        .table
        .elements
        .iter()
        .filter(|e| e.role == "clickable" && e.name.starts_with('S'))
        .count();
    assert_eq!(spans, 300, "{}", seen.list());
    fx.close().await;
}

#[tokio::test]
async fn open_and_closed_shadow_roots_are_pierced() {
    let fx = Fixture::open("shadow.html").await;
    let seen = fx.perceive().await;
    seen.no_duplicates();
    seen.named("Open shadow button")
        .role("button")
        .interactable();
    seen.named("Open shadow input")
        .role("textbox")
        .interactable();
    seen.named("Closed shadow link").role("link").interactable();
    seen.named("Nested closed button")
        .role("button")
        .interactable();
    // A listener-only element counts inside a closed root too.
    seen.named("Closed listener span")
        .role("clickable")
        .interactable();
    fx.close().await;
}

#[tokio::test]
async fn listener_and_pointer_elements_are_found_once_innermost_meaningful() {
    let fx = Fixture::open("clickables.html").await;
    let seen = fx.perceive().await;
    seen.no_duplicates();
    seen.named("Listener div").role("clickable").interactable();
    seen.named("Mousedown span").role("clickable");
    seen.named("Pointerdown div").role("clickable");
    seen.named("Onclick attribute").role("clickable");
    seen.named("Pointer card with nested parts")
        .role("clickable");
    seen.absent("Pointer card with nested parts ");
    seen.named("Focusable div").role("clickable");
    seen.named("Role button").role("button");
    seen.named("Inner real button").role("button");
    seen.absent("Delegating wrapper");
    seen.named("Link with pointer child").role("link");
    // The nested pointer spans are not listed on their own.
    for part in ["with nested", "Pointer card"] {
        let n = seen
            .obs
            .table
            .elements
            .iter()
            .filter(|e| e.name.starts_with(part))
            .count();
        assert!(n <= 1, "{part} listed {n} times:\n{}", seen.list());
    }
    fx.close().await;
}

#[tokio::test]
async fn a_grid_of_sixteen_checkboxes_is_listed_in_reading_order() {
    let fx = Fixture::open("checkboxes.html").await;
    let seen = fx.perceive().await;
    seen.no_duplicates();
    let boxes = seen.with_role("checkbox");
    assert_eq!(boxes.len(), 16, "{}", seen.list());
    for (i, e) in boxes.iter().enumerate() {
        assert_eq!(
            e.name,
            format!("Topping {}", i + 1),
            "reading order broken:\n{}",
            seen.list()
        );
        assert_eq!(e.checked, Some((i + 1) % 4 == 0));
        assert!(e.is_interactable());
    }
    fx.close().await;
}

#[tokio::test]
async fn typing_into_an_autocomplete_makes_options_appear_and_changes_the_signature() {
    let fx = Fixture::open("flights.html").await;
    let first = fx.perceive().await;
    first.named("From").role("textbox");
    first.absent("Paris");
    // A person typing: real key events through CDP.
    fx.eval("document.getElementById('from').focus()").await;
    fx.session
        .page()
        .execute(chromiumoxide::cdp::browser_protocol::input::InsertTextParams::new("Pa"))
        .await
        .unwrap();
    let second = fx.perceive().await;
    second.named("Paris").role("option").interactable();
    second.named("Palermo").role("option");
    second.named("From").value("Pa");
    assert_ne!(first.obs.signature, second.obs.signature);
    fx.close().await;
}

#[tokio::test]
async fn the_signature_ignores_scrolling_and_repaints_but_not_new_text() {
    let fx = Fixture::open("sticky.html").await;
    let a = fx.perceive().await;
    let b = fx.perceive().await;
    assert_eq!(
        a.obs.signature, b.obs.signature,
        "same page, same signature"
    );
    fx.eval("window.scrollTo(0, 300)").await;
    let c = fx.perceive().await;
    assert_eq!(
        a.obs.signature, c.obs.signature,
        "a scroll is not a new page"
    );
    fx.eval("document.body.appendChild(document.createElement('p')).textContent = 'New text'")
        .await;
    let d = fx.perceive().await;
    assert_ne!(
        a.obs.signature, d.obs.signature,
        "new visible text is a change"
    );
    fx.close().await;
}

#[tokio::test]
async fn a_quiet_page_keeps_its_text_from_the_last_look() {
    let fx = Fixture::open("quiet.html").await;
    let page = fx.session.page();
    // As the executor glances after a command and the agent perceives at the
    // next step, with nothing happening in between.
    let mut glance = perceive::glance(page, fx.session.viewport(), &PerceiveOptions::default())
        .await
        .unwrap();
    let look = fx.perceive().await;
    // The look's nodes were told (see `Fixture::perceive`); the glance's are
    // told now, from the registry that numbered both.
    perceive::identify(page, &mut glance.table.elements)
        .await
        .unwrap();
    assert!(
        look.obs.timings.reused >= 1,
        "the page text was read again on a page where nothing happened"
    );
    assert_eq!(look.obs.timings.tables_kept, 1, "the table was built again");
    assert_eq!(glance.signature, look.obs.signature);
    assert_eq!(
        format!("{:?}", glance.table),
        format!("{:?}", look.obs.table),
        "the kept table is not the one the last look built"
    );
    // A scroll moves every box: nothing is kept, though the page is the same.
    fx.eval("window.scrollTo(0, 300)").await;
    let scrolled = fx.perceive().await;
    assert_eq!(scrolled.obs.timings.reused, 0, "kept across a scroll");
    assert_eq!(scrolled.obs.timings.tables_kept, 0);
    assert_eq!(scrolled.obs.signature, look.obs.signature);
    let again = fx.perceive().await;
    assert!(again.obs.timings.reused >= 1);
    assert_eq!(again.obs.timings.tables_kept, 1);
    fx.close().await;
}

#[tokio::test]
async fn a_look_taken_while_the_page_is_primed_waits_for_the_prime_and_keeps_its_work() {
    let fx = Fixture::open("quiet.html").await;
    let (page, viewport) = (fx.session.page(), fx.session.viewport());
    let options = PerceiveOptions::default();
    assert!(
        perceive::prime(page, viewport, &options).await,
        "a document never looked at was not primed"
    );
    assert!(
        !perceive::prime(page, viewport, &options).await,
        "a second prime started beside the first"
    );
    // At once, while the prime may still run: the look waits for it, and
    // finds the table it built (a look beside it would build its own).
    let primed = fx.perceive().await;
    assert_eq!(
        primed.obs.timings.tables_kept, 1,
        "the prime's work was lost"
    );
    assert!(
        !perceive::prime(page, viewport, &options).await,
        "a document looked at was primed again"
    );
    // The same page loaded anew and looked at cold: the same look.
    fx.goto("quiet.html").await;
    let cold = fx.perceive().await;
    assert_eq!(cold.obs.timings.tables_kept, 0);
    assert_eq!(primed.obs.signature, cold.obs.signature);
    assert_eq!(
        perceive::element_list(&primed.obs.table, perceive::DEFAULT_LIST_CAP),
        perceive::element_list(&cold.obs.table, perceive::DEFAULT_LIST_CAP)
    );
    fx.close().await;
}

/// The quiet page, looked at twice: the second look kept the first's table.
async fn quiet_page_looked_at_twice() -> (Fixture, Seen) {
    let fx = Fixture::open("quiet.html").await;
    fx.perceive().await;
    let second = fx.perceive().await;
    assert_eq!(
        second.obs.timings.tables_kept, 1,
        "the table was built again"
    );
    (fx, second)
}

#[tokio::test]
async fn a_kept_table_still_reads_values_a_script_set_without_an_event() {
    let (fx, before) = quiet_page_looked_at_twice().await;
    before.named("Name").value("");
    before.named("Agree").checked(false);
    before.named("Size").value("Small");
    // Properties set by a script: no mutation, no event, nothing the watcher
    // counts. The table may be kept, but not what the controls hold.
    fx.eval(
        "document.getElementById('name').value = 'Set by a script'; \
         document.getElementById('agree').checked = true; \
         document.getElementById('size').value = 'Large'; 1",
    )
    .await;
    let after = fx.perceive().await;
    assert_eq!(after.obs.timings.tables_kept, 1, "something was counted");
    after.named("Name").value("Set by a script");
    after.named("Agree").checked(true);
    after.named("Size").value("Large");
    fx.close().await;
}

#[tokio::test]
async fn an_element_that_loaded_is_a_change() {
    let (fx, _) = quiet_page_looked_at_twice().await;
    // An image or a frame that finished loading may have moved boxes or
    // changed what it shows. Its `load` stops at the document: it never
    // reaches the window, where the other events are counted.
    fx.eval("document.getElementById('trigger').dispatchEvent(new Event('load')); 1")
        .await;
    let after = fx.perceive().await;
    assert_eq!(after.obs.timings.tables_kept, 0, "a load went unseen");
    assert_eq!(after.obs.timings.reused, 0);
    fx.close().await;
}

#[tokio::test]
async fn a_box_moved_by_an_edited_rule_is_looked_at_anew() {
    let (fx, before) = quiet_page_looked_at_twice().await;
    let x = before.named("Moved by a rule").element().bbox.x;
    // A rule edited in place through the CSSOM: neither a mutation nor an
    // event, and the stylesheets' position rules and the document's size
    // stay the same. Only the boxes tell.
    fx.eval(
        "[...document.styleSheets[0].cssRules].find((r) => r.selectorText === '#moved').style.marginLeft = '40px'; 1",
    )
    .await;
    let after = fx.perceive().await;
    assert_eq!(
        after.obs.timings.tables_kept, 0,
        "a table with a moved box was kept"
    );
    let moved = after.named("Moved by a rule").element().bbox.x;
    let now = fx
        .eval("document.getElementById('moved').getBoundingClientRect().x")
        .await
        .as_f64()
        .unwrap();
    assert!(now > x + 30.0, "the rule did not move the button");
    assert_eq!(moved, now, "the table keeps the button where it was");
    fx.close().await;
}

#[tokio::test]
async fn text_shown_without_a_dom_mutation_is_still_a_change() {
    let fx = Fixture::open("quiet.html").await;
    let mut last = fx.perceive().await;
    // Each change shows or hides text and nothing else: only the page text
    // tells it, so a look that kept the text from the look before would miss it.
    let changes = [
        ("a hover", "MOUSE #trigger"),
        ("a focus", "document.getElementById('name').focus()"),
        ("a checked box", "document.getElementById('agree').click()"),
        ("a popover", "document.getElementById('pop').showPopover()"),
        (
            "a new stylesheet rule",
            "document.styleSheets[0].insertRule('#styled{display:none}', document.styleSheets[0].cssRules.length)",
        ),
        (
            "a style attribute",
            "document.getElementById('inline').style.display = 'none'",
        ),
    ];
    for (what, how) in changes {
        let quiet = fx.perceive().await;
        assert!(
            quiet.obs.timings.reused >= 1,
            "before {what}: nothing was kept"
        );
        assert_eq!(quiet.obs.signature, last.obs.signature);
        if let Some(selector) = how.strip_prefix("MOUSE ") {
            let at = fx
                .eval(&format!(
                    "(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect(); \
                     return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
                ))
                .await;
            let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
            page_mouse(&fx, MouseMoved, x, y).await;
        } else {
            fx.eval(how).await;
        }
        let after = fx.perceive().await;
        assert_eq!(
            after.obs.timings.reused, 0,
            "after {what}: the old text was kept"
        );
        assert_ne!(
            after.obs.signature, quiet.obs.signature,
            "{what} changed the text and not the signature"
        );
        last = after;
    }
    fx.close().await;
}

/// In quiet-sealed-inner.html, shown at the page's top-left corner: where to
/// point to hover, focus the field, check the box, open the popover, and
/// reach the scroll pane.
const TRIGGER: (f64, f64) = (90.0, 25.0);
const FIELD: (f64, f64) = (80.0, 72.0);
const CHECKBOX: (f64, f64) = (20.0, 120.0);
const OPENER: (f64, f64) = (90.0, 175.0);
const PANE: (f64, f64) = (150.0, 250.0);

#[tokio::test]
async fn a_sealed_frame_keeps_its_work_until_a_person_does_something_in_it() {
    // No script runs in the frame, and none can reach it: no listener of
    // seamark's hears what a person does there. The states it changes are
    // read on each look instead.
    let fx = Fixture::open("quiet-sealed.html").await;
    page_mouse(&fx, MouseMoved, 650.0, 540.0).await;
    let mut last = fx.perceive().await;
    for (what, kind, (x, y)) in [
        ("a hover", MouseMoved, TRIGGER),
        ("a focus", MousePressed, FIELD),
        ("a checked box", MousePressed, CHECKBOX),
        ("a popover", MousePressed, OPENER),
    ] {
        let quiet = fx.perceive().await;
        assert_eq!(
            quiet.obs.timings.tables_kept, 2,
            "before {what}: the work was done again"
        );
        assert_eq!(quiet.obs.signature, last.obs.signature);
        page_mouse(&fx, kind, x, y).await;
        let after = fx.perceive().await;
        assert!(
            after.obs.timings.tables_kept < 2,
            "after {what}: the last look was kept"
        );
        assert_ne!(
            after.obs.signature, quiet.obs.signature,
            "{what} changed the text and not the signature"
        );
        last = after;
    }
    fx.close().await;
}

#[tokio::test]
async fn a_scroll_inside_a_sealed_frame_keeps_nothing_of_the_last_look() {
    let fx = Fixture::open("quiet-sealed.html").await;
    page_mouse(&fx, MouseMoved, PANE.0, PANE.1).await;
    fx.perceive().await;
    assert_eq!(fx.perceive().await.obs.timings.tables_kept, 2);
    // A change the frame's states tell, made inside it: what the page alone keeps.
    page_mouse(&fx, MousePressed, CHECKBOX.0, CHECKBOX.1).await;
    let changed = fx.perceive().await;
    assert_eq!(changed.obs.timings.tables_kept, 1);
    page_mouse(&fx, MouseMoved, PANE.0, PANE.1).await;
    fx.perceive().await;
    assert_eq!(fx.perceive().await.obs.timings.tables_kept, 2);
    // The wheel where the pointer already is: no state changes, only the
    // boxes in the pane move. The spot checks' verdict was taken at the old
    // scroll: nothing of the frame's last look may be kept.
    let y = changed.named("In the pane 3").element().bbox.y;
    page_mouse(&fx, MouseWheel, PANE.0, PANE.1).await;
    let mut scrolled = fx.perceive().await;
    for _ in 0..20 {
        if scrolled.named("In the pane 3").element().bbox.y < y {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        scrolled = fx.perceive().await;
    }
    assert!(
        scrolled.named("In the pane 3").element().bbox.y < y,
        "the pane did not scroll"
    );
    assert_eq!(
        scrolled.obs.timings.tables_kept, 1,
        "the moved table was kept"
    );
    assert_eq!(
        scrolled.obs.timings.reused, changed.obs.timings.reused,
        "the frame kept work from before the scroll"
    );
    fx.close().await;
}

#[tokio::test]
async fn a_frame_without_scripts_that_its_parent_can_edit_keeps_nothing() {
    // Its parent's scripts reach into it, and no observer of the frame's
    // hears them: a table kept there would miss their edits.
    let fx = Fixture::open("quiet-framed.html").await;
    fx.perceive().await;
    let quiet = fx.perceive().await;
    assert_eq!(
        quiet.obs.timings.tables_kept, 1,
        "the frame's table was kept"
    );
    fx.eval(
        "document.querySelector('iframe').contentDocument.getElementById('styled').firstChild.data = 'Edited'; 1",
    )
    .await;
    let after = fx.perceive().await;
    assert_ne!(
        after.obs.signature, quiet.obs.signature,
        "the edit was missed"
    );
    fx.close().await;
}

use chromiumoxide::cdp::browser_protocol::input::DispatchMouseEventType::{
    self, MouseMoved, MousePressed, MouseWheel,
};

/// Does with the mouse what a person would, at (`x`, `y`): moves it there,
/// clicks there (pressed: pressed and released), or turns the wheel a notch
/// down there.
async fn page_mouse(fx: &Fixture, kind: DispatchMouseEventType, x: f64, y: f64) {
    use chromiumoxide::cdp::browser_protocol::input::{DispatchMouseEventParams, MouseButton};
    let page = fx.session.page();
    let event = |kind: DispatchMouseEventType| {
        let wheel = matches!(kind, MouseWheel);
        let button = !wheel && !matches!(kind, MouseMoved);
        let mut e = DispatchMouseEventParams::new(kind, x, y);
        if button {
            e.button = Some(MouseButton::Left);
            e.click_count = Some(1);
        }
        if wheel {
            e.delta_x = Some(0.0);
            e.delta_y = Some(20.0);
        }
        e
    };
    let kinds = match kind {
        MousePressed => vec![MousePressed, DispatchMouseEventType::MouseReleased],
        other => vec![other],
    };
    for k in kinds {
        page.execute(event(k)).await.unwrap();
    }
}

#[tokio::test]
async fn a_field_without_a_label_is_told_by_the_text_beside_it() {
    let fx = Fixture::open("unlabelled.html").await;
    let seen = fx.perceive().await;
    for (line, id) in [
        ("textbox hint \"Full name:\"", "full"),
        ("combobox hint \"City\"", "city"),
        ("textbox hint \"shortlink:\"", "short"),
        ("checkbox hint \"Remember me\"", "remember"),
    ] {
        let e = seen.with_id(&fx, id).await;
        assert!(e.name.is_empty(), "{id} has no name of its own");
        assert!(
            perceive::line(e).contains(line),
            "{id}: {}",
            perceive::line(e)
        );
    }
    // Not a paragraph, not across another control, not hidden words, not the
    // sentence above the field's box.
    for id in ["long", "past-button", "past-hidden", "below-sentence"] {
        let e = seen.with_id(&fx, id).await;
        assert_eq!(e.hint, None, "{id}: {}", perceive::line(e));
    }
    fx.close().await;
}

#[tokio::test]
async fn a_clickable_row_around_icons_is_a_control_but_a_wrapper_is_not() {
    let fx = Fixture::open("cards.html").await;
    let seen = fx.perceive().await;
    // The rows open their e-mail: nothing else in the table does.
    seen.named("Jeanne Lunch on Friday?")
        .role("clickable")
        .interactable();
    seen.named("Rebe Quarterly report")
        .role("clickable")
        .interactable();
    let icons: Vec<_> = seen
        .with_role("clickable")
        .into_iter()
        .filter_map(|e| e.hint.as_deref())
        .collect();
    assert_eq!(
        icons.iter().filter(|h| **h == "star").count(),
        2,
        "{icons:?}"
    );
    assert_eq!(
        icons.iter().filter(|h| **h == "trash").count(),
        2,
        "{icons:?}"
    );
    // Around a link with words: the link is the control. Barely bigger than
    // the icon it holds, or half the screen: no card either.
    seen.named("Read the story").role("link");
    seen.absent("and more words")
        .absent("A big clickable panel")
        .absent("x");
    seen.no_duplicates();
    fx.close().await;
}

#[tokio::test]
async fn hidden_decoys_are_never_listed() {
    let fx = Fixture::open("decoys.html").await;
    let seen = fx.perceive().await;
    seen.named("Real button").interactable();
    seen.absent("Decoy");
    assert_eq!(seen.obs.table.len(), 1, "{}", seen.list());
    fx.close().await;
}

#[tokio::test]
async fn disabled_controls_are_listed_as_disabled() {
    let fx = Fixture::open("disabled.html").await;
    let seen = fx.perceive().await;
    seen.named("Disabled button").disabled();
    seen.named("Disabled input").disabled();
    seen.named("Disabled select").disabled();
    seen.named("ARIA disabled").disabled();
    seen.named("Inside disabled fieldset").disabled();
    seen.named("Enabled button").interactable();
    assert!(
        seen.list()
            .contains("[1] button \"Disabled button\" disabled"),
        "{}",
        seen.list()
    );
    fx.close().await;
}

#[tokio::test]
async fn transformed_elements_get_their_painted_boxes() {
    let fx = Fixture::open("transforms.html").await;
    let seen = fx.perceive().await;
    let rotated = seen.named("Rotated").interactable().element();
    // Rotation grows the axis-aligned box beyond 160×40.
    assert!(
        rotated.bbox.w > 160.0 && rotated.bbox.h > 40.0,
        "{rotated:?}"
    );
    let scaled = seen.named("Scaled").interactable().element();
    assert!((scaled.bbox.w - 240.0).abs() < 1.0, "{scaled:?}");
    let moved = seen.named("Translated").interactable().element();
    assert!(moved.bbox.x > 300.0, "{moved:?}");
    let link = seen.named("Moved link").interactable().element();
    assert!(link.bbox.x >= 640.0, "{link:?}");
    fx.close().await;
}

#[tokio::test]
async fn links_scrolled_past_in_a_scroll_area_stay_listed_as_offscreen_above() {
    // Regression: they were taken for off-canvas decoys (above the document's
    // top), and one hidden just behind the area's border was listed as occluded.
    let fx = Fixture::open("scroller.html").await;
    fx.eval("document.getElementById('feed').scrollTop = 120")
        .await;
    let seen = fx.perceive().await;
    for item in ["Item 1", "Item 2", "Item 3"] {
        let e = seen.named(item).offscreen(Direction::Above).element();
        assert!(
            matches!(
                e.state,
                ElementState::Offscreen {
                    in_container: true,
                    ..
                }
            ),
            "{e:?}"
        );
    }
    seen.named("Item 5").interactable();
    seen.named("Item 8").offscreen(Direction::Below);
    fx.close().await;
}

#[tokio::test]
async fn perceiving_again_and_again_uses_one_hidden_world_per_document() {
    // The mutation counter lives in one isolated world per document: its
    // observer must not be set up again by every perception.
    use chromiumoxide::cdp::js_protocol::runtime::EventExecutionContextCreated;
    use futures::StreamExt;
    let fx = Fixture::open("form.html").await;
    let mut created = fx
        .session
        .page()
        .event_listener::<EventExecutionContextCreated>()
        .await
        .expect("listen");
    for _ in 0..5 {
        fx.perceive().await;
    }
    fx.goto("cookie.html").await;
    for _ in 0..3 {
        fx.perceive().await;
    }
    let mut worlds = 0;
    while let Ok(Some(e)) =
        tokio::time::timeout(std::time::Duration::from_millis(300), created.next()).await
    {
        if e.context.name == "seamark-watch" {
            worlds += 1;
        }
    }
    assert_eq!(worlds, 2, "one world per document, not one per perception");
    fx.close().await;
}

#[tokio::test]
async fn node_identities_stay_right_when_nodes_come_and_go_between_perceptions() {
    // Node identities are learned once per document: a later perception sends
    // only the nodes not seen before. An element seen before keeps its node, a
    // new one gets its own, and none gets a neighbor's.
    let fx = Fixture::open("form.html").await;
    fx.eval(
        "document.body.innerHTML = [...Array(12).keys()]\
         .map(i => `<button>Old ${i}</button>`).join(' ')",
    )
    .await;
    let first = fx.perceive().await;
    fx.eval(
        "const b = document.querySelectorAll('button'); b[3].remove(); b[7].remove(); \
         for (let i = 0; i < 5; i++) \
         document.body.insertAdjacentHTML('afterbegin', `<button>New ${i}</button> `)",
    )
    .await;
    let second = fx.perceive().await;
    second.no_duplicates();
    assert_eq!(second.obs.table.elements.len(), 15, "{}", second.list());
    for e in &second.obs.table.elements {
        assert_eq!(
            fx.node_text(e.backend_node_id).await,
            e.name,
            "element [{}] points at another node",
            e.id
        );
        if let Some(before) = first.obs.table.elements.iter().find(|b| b.name == e.name) {
            assert_eq!(before.backend_node_id, e.backend_node_id, "{}", e.name);
        }
    }
    fx.close().await;
}

#[tokio::test]
async fn links_on_screen_at_the_bottom_of_a_feed_longer_than_the_cap_are_found() {
    // 6,000 links: more candidates than the default cap of 5,000. Scrolled to
    // the bottom, the first 5,000 used to fill the cap and the screen came out
    // empty.
    let fx = Fixture::open("links").await;
    fx.eval("window.scrollTo(0, document.body.scrollHeight)")
        .await;
    // Walking every part of the page, the cap is reached; skipping the far
    // parts, it is not.
    for (options, told) in [
        (walking_every_part(), "cap"),
        (PerceiveOptions::default(), "distant parts"),
    ] {
        let seen = fx.perceive_with(&options).await;
        seen.named("Item 5999").interactable();
        seen.named("Item 5990").interactable();
        assert!(
            seen.obs.notes.iter().any(|n| n.contains(told)),
            "{told} is told: {:?}",
            seen.obs.notes
        );
    }
    fx.close().await;
}

#[tokio::test]
async fn far_parts_of_a_long_page_are_not_walked_but_what_they_place_in_view_is_found() {
    let fx = Fixture::open("long.html").await;
    fx.eval("document.getElementById('pop').showPopover()")
        .await;
    // The chat launcher is placed by a stylesheet from the other origin, which
    // the page cannot read: the first look walks every part and fetches the
    // sheet's text; from the second on, far parts are skipped.
    let first = fx.perceive().await;
    assert!(
        !first.obs.notes.iter().any(|n| n.contains("distant parts")),
        "{:?}",
        first.obs.notes
    );
    first.named("Chat with us").interactable();
    for y in [0, 4000, 8700] {
        fx.eval(&format!("window.scrollTo(0, {y})")).await;
        let skipping = fx.perceive().await;
        let walked = fx.perceive_with(&walking_every_part()).await;
        assert!(
            skipping
                .obs
                .notes
                .iter()
                .any(|n| n.contains("distant parts")),
            "at {y}: {:?}",
            skipping.obs.notes
        );
        // In view, the same elements, boxes, states and click points.
        let in_view = |seen: &Seen| {
            seen.obs
                .table
                .elements
                .iter()
                .filter(|e| !matches!(e.state, ElementState::Offscreen { .. }))
                .map(row)
                .collect::<Vec<_>>()
        };
        assert_eq!(in_view(&skipping), in_view(&walked), "at {y}");
        // Offscreen: only what the whole walk found too, and all it found
        // within two screens.
        let nodes = |seen: &Seen| {
            seen.obs
                .table
                .elements
                .iter()
                .map(|e| e.backend_node_id)
                .collect::<std::collections::HashSet<_>>()
        };
        let (near, all) = (nodes(&skipping), nodes(&walked));
        let extra: Vec<_> = skipping
            .obs
            .table
            .elements
            .iter()
            .filter(|e| !all.contains(&e.backend_node_id))
            .map(row)
            .collect();
        assert!(extra.is_empty(), "at {y}: {extra:#?}");
        for e in walked
            .obs
            .table
            .elements
            .iter()
            .filter(|e| within_screens(e, 2.0))
        {
            assert!(near.contains(&e.backend_node_id), "at {y}: {e:?} missing");
        }
        // Fixed in the footer, fixed by an inline style, in the top layer.
        skipping.named("Chat with us").interactable();
        skipping.named("Inline fixed vote").interactable();
        skipping.named("Popover button").interactable();
        if y == 0 {
            // Absolutely positioned against the page from the 61st post.
            skipping.named("Pinned vote").interactable();
            skipping.named("Upvote 2").interactable();
            // In the footer, twenty screens down.
            skipping.absent("Late fixed vote");
        }
        if y == 8700 {
            // Overflowing a 20 px box that lies far above.
            skipping.named("Spilled vote").interactable();
        }
    }
    // The rules are read again when a stylesheet changes.
    fx.eval(
        "window.scrollTo(0, 0); \
         document.querySelector('style').sheet.insertRule('.late{position:fixed;left:400px;top:8px}', 0)",
    )
    .await;
    fx.perceive().await.named("Late fixed vote").interactable();
    fx.close().await;
}

#[tokio::test]
async fn layers_that_paint_over_controls_are_found_without_hit_testing_every_control() {
    // The analysis alone (no spot checks), and as perception runs it.
    let trusted = PerceiveOptions {
        spot_checks: 0,
        ..PerceiveOptions::default()
    };
    for options in [trusted, PerceiveOptions::default()] {
        let fx = Fixture::open("overlays.html").await;
        let seen = fx.perceive_with(&options).await;
        // A stretched link's ::after covers its card; a control lifted above it is not.
        seen.named("Read the story").interactable();
        seen.named("Share").occluded_by("Read the story");
        seen.named("Like").interactable();
        // A positioned veil over a section that is not the link's ancestor.
        seen.named("Saving draft").occluded_by("");
        // pointer-events:none lets clicks through to what lies below.
        seen.named("Ghost button").occluded_by("");
        seen.named("Plain link").interactable();
        // A control can be a layer too: a fixed chat button over a link.
        seen.named("Terms").occluded_by("Chat with us");
        seen.named("Chat with us").interactable();
        // A static element's ::after hides from the analysis; hit tests on a
        // sample of what it clears (here: all of it) catch the disagreement.
        if options.spot_checks > 0 {
            seen.named("Deal of the day").occluded_by("");
        }
        // A modal dialog's backdrop lies outside the dialog's box and covers the page.
        fx.eval("document.getElementById('ask').showModal()").await;
        let seen = fx.perceive_with(&options).await;
        seen.named("Stay").interactable();
        seen.named("Plain link").occluded_by("Really leave?");
        seen.named("Like").occluded_by("Really leave?");
        fx.close().await;
    }
}

#[tokio::test]
async fn yielding_to_the_page_between_enumeration_steps_changes_nothing_in_the_table() {
    let fx = Fixture::open("dense").await;
    // The 2,500 controls of the dense page take several milliseconds to
    // enumerate; a yield every microsecond splits the run at every step.
    let table = |seen: &Seen| {
        seen.obs
            .table
            .elements
            .iter()
            .map(|e| format!("{} {}", e.id, row(e)))
            .collect::<Vec<_>>()
    };
    let whole = fx
        .perceive_with(&PerceiveOptions {
            yield_ms: 0.0,
            ..PerceiveOptions::default()
        })
        .await;
    let split = fx
        .perceive_with(&PerceiveOptions {
            yield_ms: 0.001,
            ..PerceiveOptions::default()
        })
        .await;
    assert!(whole.obs.table.len() > 700, "{}", whole.obs.table.len());
    assert_eq!(table(&whole), table(&split));
    assert_eq!(whole.obs.signature, split.obs.signature);
    fx.close().await;
}

#[tokio::test]
async fn screenshots_show_the_page_seamark_drives_as_it_is_now() {
    let fx = Fixture::open("form.html").await;
    let corner = |png: &[u8]| {
        let img = seamark::mark::decode(png).expect("a PNG");
        *img.get_pixel(2, 2)
    };
    for (css, rgb) in [
        ("rgb(255, 0, 0)", [255, 0, 0]),
        ("rgb(0, 0, 255)", [0, 0, 255]),
    ] {
        fx.eval(&format!(
            "document.documentElement.style.background = '{css}'; \
             document.body.style.background = '{css}'"
        ))
        .await;
        let png = fx.session.screenshot().await.expect("screenshot");
        assert_eq!(corner(&png).0, rgb, "screenshot after painting {css}");
        let seen = fx.perceive().await;
        assert_eq!(
            corner(&seen.obs.screenshot_png).0,
            rgb,
            "perception after {css}"
        );
    }
    // Another tab takes over (a crashed page is replaced so): the screenshot
    // follows it, a blank white page.
    let mut fx = fx;
    fx.session.replace_page().await.expect("fresh tab");
    let png = fx
        .session
        .screenshot()
        .await
        .expect("screenshot of the new tab");
    assert_eq!(corner(&png).0, [255, 255, 255]);
    fx.close().await;
}

/// A browser reached through a proxy that serves only its browser endpoint
/// (as some hosted browsers do): no camera can be opened, and screenshots go
/// over the page's own connection.
#[tokio::test]
async fn without_a_camera_the_page_connection_takes_the_screenshots() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let fx = Fixture::open("form.html").await;
    let browser_ws = url::Url::parse(fx.session.browser().websocket_address()).unwrap();
    let upstream = format!(
        "{}:{}",
        browser_ws.host_str().unwrap(),
        browser_ws.port().unwrap()
    );
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_addr = proxy.local_addr().unwrap();
    let refused = Arc::new(AtomicUsize::new(0));
    let refusals = refused.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = proxy.accept().await {
            let upstream = upstream.clone();
            let refusals = refusals.clone();
            tokio::spawn(async move {
                // The request head, then either a refusal or a plain pipe.
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                if String::from_utf8_lossy(&head).contains(" /devtools/page/") {
                    refusals.fetch_add(1, Ordering::SeqCst);
                    let _ = client
                        .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                        .await;
                    return;
                }
                let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await else {
                    return;
                };
                if server.write_all(&head).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    let attached = Session::start(&BrowserOptions {
        cdp: Some(format!("ws://{proxy_addr}{}", browser_ws.path())),
        ..BrowserOptions::default()
    })
    .await
    .expect("attach through the proxy");
    attached
        .navigate(&fx.server.url("form.html"), Duration::from_secs(20))
        .await
        .expect("open the form");
    let mut paint = EvaluateParams::new(
        "document.documentElement.style.background = document.body.style.background = 'rgb(255, 0, 0)'",
    );
    paint.return_by_value = Some(true);
    attached.page().execute(paint).await.expect("paint");
    let corner = |png: &[u8]| seamark::mark::decode(png).expect("a PNG").get_pixel(2, 2).0;
    let png = attached.screenshot().await.expect("screenshot");
    assert_eq!(corner(&png), [255, 0, 0]);
    let obs = perceive::perceive(&attached, &PerceiveOptions::default())
        .await
        .expect("perceive");
    assert_eq!(corner(&obs.screenshot_png), [255, 0, 0]);
    assert!(obs.table.len() >= 5, "{}", obs.table.len());
    assert_eq!(
        refused.load(Ordering::SeqCst),
        1,
        "the camera is asked for once per page, then not again"
    );
    attached.close().await;
    fx.close().await;
}

/// One element as two perceptions of the same page must agree on it: node,
/// name, role, state, box and click point.
fn row(e: &seamark::perceive::Element) -> String {
    let b = e.bbox;
    format!(
        "{} {:?} {} {:?} {:.1},{:.1},{:.1},{:.1} {:?}",
        e.backend_node_id, e.name, e.role, e.state, b.x, b.y, b.w, b.h, e.click_point
    )
}

#[tokio::test]
async fn a_menu_item_or_tab_drawn_around_a_link_is_listed_once_and_groups_are_not_controls() {
    // An <li role=menuitem> around an <a> of the same name was listed twice,
    // and the menubar around them once more, named by all its items' text.
    let fx = Fixture::open("menus.html").await;
    let seen = fx.perceive().await;
    seen.no_duplicates();
    for (name, role) in [
        ("Used cars", "menuitem"),
        ("Overview", "tab"),
        ("Specs", "tab"),
    ] {
        // Listed once: the link itself (the click must reach it), with the
        // item's role.
        let e = seen.named(name).element();
        assert_eq!((e.tag.as_str(), e.role.as_str()), ("a", role), "{name}");
    }
    seen.named("Overview").interactable();
    assert_eq!(seen.named("Overview").element().selected, Some(true));
    assert_eq!(seen.named("Specs").element().selected, Some(false));
    // Two links in one item: both, and the item too (it is neither).
    seen.named("Docs").role("link");
    seen.named("API").role("link");
    seen.named("Docs API").role("menuitem");
    seen.named("Small").role("radio").checked(true);
    seen.named("Large").role("radio");
    for group in ["menubar", "tablist", "radiogroup"] {
        assert!(
            !seen.obs.table.elements.iter().any(|e| e.role == group),
            "{group}: {}",
            seen.list()
        );
    }
    seen.named("Empty tree").role("tree").interactable();
    fx.close().await;
}

#[tokio::test]
async fn a_data_grids_cells_are_not_controls_but_a_date_pickers_days_are() {
    // Every cell of github's file list was listed (79 "gridcell" lines,
    // some nameless), beside the links they hold.
    let fx = Fixture::open("grids.html").await;
    let seen = fx.perceive().await;
    seen.named("src").role("link").interactable();
    seen.named("#186").role("link");
    seen.absent("days ago");
    seen.named("1").role("gridcell").interactable();
    seen.named("2").role("gridcell").interactable();
    assert_eq!(seen.with_role("gridcell").len(), 2, "{}", seen.list());
    fx.close().await;
}

#[tokio::test]
async fn a_click_point_half_a_pixel_above_a_cover_is_taken_on_a_whole_pixel() {
    // The link's middle, y = 179.5, is clear; the protocol's hit test (and a
    // click there) lands on pixel row 180, where the breadcrumb paints over
    // it. Perception called it interactable at 179.5 (phys.org's share bar).
    use chromiumoxide::cdp::browser_protocol::dom::GetNodeForLocationParams;
    // The analysis alone (spot checks would catch it here, but on a page with
    // many controls they sample), and as perception runs it.
    let fx = Fixture::open("halfpixel.html").await;
    let trusted = PerceiveOptions {
        spot_checks: 0,
        ..PerceiveOptions::default()
    };
    for seen in [fx.perceive_with(&trusted).await, fx.perceive().await] {
        for name in ["Email", "Biology"] {
            let e = seen.named(name).interactable().element();
            let p = e.click_point.expect("a click point");
            assert_eq!((p.x.fract(), p.y.fract()), (0.0, 0.0), "{name} at {p:?}");
            let hit = fx
                .session
                .page()
                .execute(GetNodeForLocationParams::new(
                    p.x.round() as i64,
                    p.y.round() as i64,
                ))
                .await
                .expect("hit test");
            assert_eq!(
                fx.node_text(*hit.result.backend_node_id.inner()).await,
                name,
                "{name} at {p:?}"
            );
        }
    }
    fx.close().await;
}

#[tokio::test]
async fn a_name_leaves_out_what_is_not_rendered_and_keeps_boxes_apart() {
    // Reddit's join button read "JoinedLeave" (its "Leave" shows only on
    // hover), and autotrader's "Close to market averageRead more…".
    let fx = Fixture::open("names.html").await;
    let seen = fx.perceive().await;
    seen.named("Joined").role("button");
    seen.absent("Leave");
    seen.named("Close to market average Read more")
        .role("button");
    seen.named("4.9(29 reviews)").role("link");
    seen.named("Shown").role("button");
    seen.absent("Secret");
    // Text hidden for the eye but not for a screen reader is the name.
    seen.named("Close dialog ×").role("button");
    fx.close().await;
}

#[tokio::test]
async fn links_of_one_name_to_one_address_are_listed_once() {
    // An author's avatar and name, both linking the author's page, were two
    // lines and two marks for one way to go (vice.com, engadget.com).
    let fx = Fixture::open("names.html").await;
    let seen = fx.perceive().await;
    let count = |name: &str, href_end: &str| {
        seen.obs
            .table
            .elements
            .iter()
            .filter(|e| e.name == name && e.href.as_deref().is_some_and(|h| h.ends_with(href_end)))
            .count()
    };
    assert_eq!(count("Chloe Xiang", "/author/chloe"), 1, "{}", seen.list());
    assert_eq!(
        count("Chloe Xiang", "/author/chloe-x"),
        1,
        "{}",
        seen.list()
    );
    assert_eq!(count("Reply", "#"), 2, "{}", seen.list());
    fx.close().await;
}

#[tokio::test]
async fn an_icon_without_a_name_is_hinted_by_the_words_its_code_gives_it() {
    // A hamburger drawn by a div, and an SVG close button, were a bare
    // "clickable" and "button" (spectrum.ieee.org's menu toggle).
    let fx = Fixture::open("names.html").await;
    let seen = fx.perceive().await;
    // A hint from the vocabulary words in their classes and in the symbol
    // their SVG draws (not from the ids of its drawing's parts, which a
    // design tool names); none from words outside it. The three are the page's
    // only nameless elements, one of each tag.
    let hint_of = |tag: &str| {
        seen.obs
            .table
            .elements
            .iter()
            .find(|e| e.name.is_empty() && e.tag == tag)
            .unwrap_or_else(|| panic!("no nameless {tag}: {}", seen.list()))
            .hint
            .clone()
    };
    assert_eq!(hint_of("div").as_deref(), Some("menu toggle"));
    assert_eq!(hint_of("button").as_deref(), Some("close"));
    assert_eq!(hint_of("span"), None);
    assert!(
        seen.list().contains("clickable hint \"menu toggle\""),
        "{}",
        seen.list()
    );
    fx.close().await;
}

#[tokio::test]
async fn a_frame_of_another_site_is_perceived_in_the_browser_seamark_launches() {
    // Launched with site isolation on, the frame is in a process of its own.
    let fx = Fixture::open("frames-site.html").await;
    let seen = fx.perceive().await;
    seen.named("Top button").interactable();
    seen.named("Button in site frame").interactable();
    assert!(
        !seen.obs.notes.iter().any(|n| n.contains("another site")),
        "{:?}",
        seen.obs.notes
    );
    fx.close().await;
}

#[tokio::test]
async fn a_worker_in_a_frame_of_another_site_is_not_held_at_its_start() {
    // The frames of seamark's tabs are attached as they start, and theirs in
    // turn: a worker's target, attached and held the same way, waited for a
    // debugger that never came, and the frame never got its answer.
    let fx = Fixture::open("worker-frame.html").await;
    let mut answered = false;
    for _ in 0..50 {
        let seen = fx.perceive().await;
        if seen
            .obs
            .table
            .elements
            .iter()
            .any(|e| e.name == "Worker answered")
        {
            answered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(answered, "the frame's worker never answered");
    fx.close().await;
}

#[tokio::test]
async fn a_frame_that_moves_between_sites_is_followed_in_and_out_of_its_own_process() {
    // A frame's target keeps its id across navigations while its session
    // goes with its process: a session kept past it answered "Session with
    // given id not found", and the frame was skipped.
    let fx = Fixture::open("frames-site.html").await;
    fx.perceive()
        .await
        .named("Button in site frame")
        .interactable();
    let localhost = fx.other.base.replace("127.0.0.1", "localhost");
    for (src, who) in [
        ("frame-inner.html?who=same".to_string(), "same"),
        (format!("{localhost}/frame-inner.html?who=back"), "back"),
        (format!("{localhost}/frame-inner.html?who=again"), "again"),
    ] {
        fx.eval(&format!(
            "new Promise((done) => {{ const f = document.getElementById('site'); \
             f.addEventListener('load', () => done(true), {{ once: true }}); f.src = '{src}'; }})"
        ))
        .await;
        let seen = fx.perceive().await;
        seen.named(&format!("Button in {who} frame")).interactable();
        assert!(
            !seen.obs.notes.iter().any(|n| n.contains("skipped")),
            "{:?}",
            seen.obs.notes
        );
    }
    fx.close().await;
}

#[tokio::test]
async fn a_frame_another_site_runs_in_its_own_process_is_perceived_when_attached() {
    // A browser started without seamark's flags isolates sites: the frame
    // from localhost is in another process than the page from 127.0.0.1, out
    // of the page connection's reach. It used to be left out, then named in a
    // note; its elements are now read over the frame's own session.
    let fx = Fixture::open("form.html").await;
    let (mut browser, ws, _profile) = crate::support::running_chromium().await;
    let attached = Session::start(&BrowserOptions {
        cdp: Some(ws),
        ..BrowserOptions::default()
    })
    .await
    .expect("attach");
    attached
        .navigate(&fx.server.url("frames-site.html"), Duration::from_secs(20))
        .await
        .expect("open the page");
    let obs = perceive::perceive(&attached, &PerceiveOptions::default())
        .await
        .expect("perceive");
    let names: Vec<&str> = obs.table.elements.iter().map(|e| e.name.as_str()).collect();
    assert!(names.contains(&"Top button"), "{names:?}");
    let button = obs
        .table
        .elements
        .iter()
        .find(|e| e.name == "Button in site frame")
        .unwrap_or_else(|| panic!("the frame's button is missing: {names:?} {:?}", obs.notes));
    assert!(button.is_interactable(), "{button:?}");
    // In the page's coordinates: inside the iframe's box (20 px margin, a
    // button's height below the top button, a 2 px border).
    let frame_box = attached
        .page()
        .evaluate("JSON.stringify(document.getElementById('site').getBoundingClientRect())")
        .await
        .expect("frame box")
        .into_value::<String>()
        .expect("a string");
    let frame_box: serde_json::Value = serde_json::from_str(&frame_box).expect("json");
    let (fx0, fy0) = (
        frame_box["x"].as_f64().unwrap(),
        frame_box["y"].as_f64().unwrap(),
    );
    assert!(
        button.bbox.x > fx0 && button.bbox.y > fy0 && button.bbox.y < fy0 + 124.0,
        "{:?} in {frame_box}",
        button.bbox
    );
    assert!(
        !obs.notes.iter().any(|n| n.contains("another site")),
        "{:?}",
        obs.notes
    );
    attached.close().await;
    browser.kill().await.expect("stop Chromium");
    fx.close().await;
}

#[tokio::test]
async fn a_frame_sandboxed_without_scripts_is_perceived_without_waiting_for_its_tasks() {
    // Its tasks never run: the enumerator's yields waited there until the
    // command timed out (30 s) and the frame was skipped.
    let fx = Fixture::open("sandboxed.html").await;
    let seen = fx.perceive().await;
    seen.named("Outside link").interactable();
    seen.named("Sandboxed 0").role("button").interactable();
    assert!(
        !seen.obs.notes.iter().any(|n| n.contains("skipped")),
        "{:?}",
        seen.obs.notes
    );
    fx.close().await;
}

#[tokio::test]
async fn a_touch_target_beside_a_button_is_not_a_line_of_its_own() {
    // support.google.com: every Material button has a nameless, pointer-cursor
    // "touch target" sibling a little larger than it, listed as `clickable`
    // (occluded by the button's label when in view).
    let fx = Fixture::open("touch.html").await;
    let seen = fx.perceive().await;
    seen.named("Back").role("button").interactable();
    seen.named("Action items").role("button").interactable();
    seen.named("Same question")
        .role("button")
        .offscreen(Direction::Below);
    // The card's click area is far larger than its button: it does something else.
    seen.named("Like").role("button").interactable();
    let nameless = seen.with_role("clickable");
    assert_eq!(nameless.len(), 1, "{}", seen.list());
    assert!(nameless[0].bbox.w >= 399.0, "{}", seen.list());
    fx.close().await;
}
