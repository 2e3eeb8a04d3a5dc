//! Phones (`--device`): a page believes it runs on one (its width, pixel
//! ratio, user agent, touch points), CLICK is a tap the page hears as
//! touches, SCROLL a swipe, a point of the image lands where it shows on
//! the phone's dense screen; and a device no one knows is told.

use crate::model_server::{reply, say, ModelServer};
use crate::server::Server;
use crate::support::{centre_of, told, told_text, Seamark};

#[tokio::test]
async fn a_run_on_a_phone_taps_a_button_that_hears_only_touches_and_swipes_the_page() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| format!("CLICK:{}", r.id_of("Tap me"))),
        reply(|r| {
            let (x, y) = centre_of(r, [0, 255, 0]);
            format!("CLICK:@{x},{y}")
        }),
        say("SCROLL:down"),
        say("COMPLETE:tapped and swiped"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("device.html");
    Seamark::task(&[
        "--task",
        "Tap the button, then the green dot, then scroll down",
        "--url",
        &url,
        "--device",
        "iphone-15",
    ])
    .model(&model)
    .run()
    .await;

    // What the page believes it runs on: the iPhone 15's screen and touch.
    let device = told_text(&server, "device");
    let fields: Vec<&str> = device[0].splitn(5, '|').collect();
    assert_eq!(&fields[..4], ["393", "3", "5", "true"], "{device:?}");
    assert!(fields[4].contains("iPhone OS"), "{}", fields[4]);

    // The button that listens to touches only was tapped: touches first,
    // then the compatibility mouse events a tap leaves are not sent (the
    // page took the touchend).
    let tapped = told_text(&server, "tapped");
    assert_eq!(
        tapped.len(),
        1,
        "{:?}\n{}",
        server.log.lock().unwrap(),
        model.received()[1].text()
    );
    assert!(tapped[0].starts_with("touchstart"), "{tapped:?}");
    let said = model.received()[1].text();
    assert!(said.contains("tapped"), "{said}");

    // The dot, at a point of the image the model was sent (1179 device
    // pixels wide, shrunk), was touched where it is.
    let dots = told(&server, "dot");
    assert_eq!(dots.len(), 1, "{:?}", server.log.lock().unwrap());
    let (x, y) = dots[0];
    let want_x = 0.7 * 393.0 + 12.0;
    assert!(
        (x - want_x).abs() <= 4.0 && (y - 312.0).abs() <= 4.0,
        "the tap landed at {x},{y}; the dot's middle is at {want_x},312"
    );

    // SCROLL was a swipe: the page moved under touch moves, no wheel.
    let scrolled = told_text(&server, "scrolled");
    let last = scrolled.last().unwrap_or_else(|| {
        panic!(
            "the page did not scroll: {:?}\n{}",
            server.log.lock().unwrap(),
            model.received()[3].text()
        )
    });
    let (at, events) = last.split_once('|').unwrap();
    assert!(at.parse::<f64>().unwrap() > 300.0, "{scrolled:?}");
    assert!(
        events.contains("touchmove") && !events.contains("wheel"),
        "{events}"
    );
    let said = model.received()[3].text();
    assert!(said.contains("swiped"), "{said}");
}

#[tokio::test]
async fn an_android_phone_names_the_chromium_that_runs_and_says_it_is_mobile() {
    let server = Server::start(None).await;
    let run = Seamark::new(&[
        "mark",
        &server.url("device.html"),
        "--device",
        "Pixel 8",
        "--json",
        "table.json",
    ])
    .run()
    .await;
    let device = told_text(&server, "device");
    let fields: Vec<&str> = device[0].splitn(5, '|').collect();
    assert_eq!(&fields[..3], ["412", "2.625", "5"], "{device:?}");
    let ua = fields[4];
    assert!(
        ua.contains("Android 14; Pixel 8") && ua.contains("Mobile Safari"),
        "{ua}"
    );
    // The Chromium that runs, not a made-up one.
    assert!(!ua.contains("Chrome/131."), "{ua}");
    let out: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.path("table.json")).unwrap()).unwrap();
    assert_eq!(out["viewport"]["width"], 412, "{out}");
}

#[tokio::test]
async fn an_unknown_device_or_one_with_a_viewport_is_a_usage_error() {
    let run = Seamark::new(&["mark", "about:blank", "--device", "Nokia 3310"])
        .fails(2)
        .run()
        .await;
    run.stderr_has("no device is called \"Nokia 3310\"")
        .stderr_has("iPhone 15");
    let run = Seamark::new(&[
        "mark",
        "about:blank",
        "--device",
        "pixel-8",
        "--viewport",
        "800x600",
    ])
    .fails(2)
    .run()
    .await;
    run.stderr_has("cannot be used with");

    let list = Seamark::new(&["devices"]).run().await;
    assert!(
        list.stdout().contains("iPhone 15") && list.stdout().contains("393x852"),
        "{}",
        list.stdout()
    );
    let json = Seamark::new(&["devices", "--json"]).run().await;
    let devices: Vec<serde_json::Value> = serde_json::from_str(&json.stdout()).unwrap();
    assert!(devices
        .iter()
        .all(|d| d["user_agent"].is_string() && d["width"].is_u64()));
}
