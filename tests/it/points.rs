//! Beyond the marks: a point of the image the model was sent
//! (`CLICK:@x,y`) lands where the image shows it, whatever the shrink, and
//! a point outside the image clicks nothing.
use base64::Engine;
use seamark::records::Status;

use crate::model_server::{reply, say, ModelServer, Received};
use crate::server::Server;
use crate::support::{centre_of, told, Seamark};

#[tokio::test]
async fn a_click_at_a_point_of_the_image_lands_on_the_dot_at_any_size() {
    // The last one renders at device scale 2: a 2560×1600 screenshot, shrunk.
    for (viewport, scale) in [("1280x800", "1"), ("1920x1080", "1"), ("1280x800", "2")] {
        let server = Server::start(None).await;
        let script = vec![
            reply(|r| {
                let (x, y) = centre_of(r, [0, 255, 0]);
                format!("CLICK:@{x},{y}")
            }),
            say("COMPLETE:clicked the dot"),
        ];
        let model = ModelServer::start(script, || say("STOP:no more answers")).await;
        let url = server.url("canvas.html");
        Seamark::task(&[
            "--task",
            "Click the green dot",
            "--url",
            &url,
            "--viewport",
            viewport,
            "--scale",
            scale,
        ])
        .model(&model)
        .run()
        .await;
        let dot = told(&server, "dot")[0];
        let clicks = told(&server, "click");
        assert_eq!(clicks.len(), 1, "{viewport}: {clicks:?}");
        let (dx, dy) = (clicks[0].0 - dot.0, clicks[0].1 - dot.1);
        assert!(
            dx.abs() <= 2.0 && dy.abs() <= 2.0,
            "{viewport} at scale {scale}: the click landed at {:?}, the dot is at {dot:?}",
            clicks[0]
        );
        let said = model.received()[1].text();
        assert!(said.contains("clicked at @"), "{said}");
    }
}

/// SCROLL at a point turns the wheel over what the image shows there (a
/// map zooms), TYPE at a point clicks there and types.
#[tokio::test]
async fn the_wheel_turns_and_keys_are_typed_at_a_point_of_the_image() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| {
            let (x, y) = centre_of(r, [0, 255, 0]);
            format!("SCROLL:@{x},{y}:down")
        }),
        reply(|r| {
            let (x, y) = centre_of(r, [0, 255, 0]);
            format!("TYPE:@{x},{y}:Oslo")
        }),
        say("COMPLETE:zoomed and typed"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("canvas.html");
    let run = Seamark::task(&[
        "--task",
        "Zoom in at the dot, type Oslo there",
        "--url",
        &url,
    ])
    .model(&model)
    .run()
    .await;
    let dot = told(&server, "dot")[0];
    let log = server.log.lock().unwrap().clone();
    let wheel: Vec<&str> = log
        .iter()
        .filter_map(|l| l.split_once("/log?wheel=").map(|(_, v)| v))
        .collect();
    assert_eq!(wheel.len(), 1, "{log:?}");
    let (x, rest) = wheel[0].split_once(',').unwrap();
    let (y, dy) = rest.split_once("&dy=").unwrap();
    let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
    assert!(
        (x - dot.0).abs() <= 2.0 && (y - dot.1).abs() <= 2.0,
        "{wheel:?} vs {dot:?}"
    );
    assert_eq!(dy, "1", "the wheel turned down");
    let clicks = told(&server, "click");
    assert_eq!(clicks.len(), 1, "TYPE at a point clicks once: {clicks:?}");
    let keys: String = log
        .iter()
        .filter_map(|l| l.split_once("/log?key=").map(|(_, k)| k))
        .collect();
    assert_eq!(keys, "Oslo");
    let said = model.received()[1].text();
    assert!(said.contains("turned the wheel down at @"), "{said}");
    // What a command at a point changed is not told in words: the next
    // step also sees the page before it.
    assert_eq!(model.received()[1].images().len(), 2);
    assert!(
        said.contains("the first image is the page before your last commands"),
        "{said}"
    );
    // The report draws each point on its step's screenshot.
    let (x, y) = centre_of(&model.received()[0], [0, 255, 0]);
    let report = std::fs::read_to_string(run.path("rec/report.html")).unwrap();
    let ring = format!(r#"<circle cx="{x}.5" cy="{y}.5""#);
    assert_eq!(report.matches(&ring).count(), 2, "one per step: {report}");
}

/// The image at `index` of a request, decoded.
fn image_at(r: &Received, index: usize) -> image::RgbImage {
    let png = base64::engine::general_purpose::STANDARD
        .decode(&r.images()[index])
        .expect("base64");
    image::load_from_memory(&png).expect("a PNG").to_rgb8()
}

/// ZOOM on a box around the dot: the next request carries, before its
/// screenshot, the box captured again at eight times the size (the dot,
/// 18 CSS px across, is about 144 px across in it), and is told so.
#[tokio::test]
async fn a_zoom_shows_the_region_enlarged_in_the_next_request() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| {
            let (x, y) = centre_of(r, [0, 255, 0]);
            format!("ZOOM:@{},{}:@{},{}", x - 40, y - 25, x + 40, y + 25)
        }),
        say("COMPLETE:looked closer"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("canvas.html");
    let run = Seamark::new(&[
        "run",
        "--json",
        "--out",
        "rec",
        "--task",
        "Look closer at the dot",
        "--url",
        &url,
    ])
    .model(&model)
    .run()
    .await;
    let second = &model.received()[1];
    let images = second.images();
    // The close look, then this step's screenshot (a ZOOM changes nothing:
    // the one before is not sent).
    assert_eq!(images.len(), 2);
    let look = image_at(second, 0);
    assert_eq!(look.dimensions(), (640, 400), "80×50 CSS px at 8×");
    let lime: Vec<u32> = look
        .enumerate_pixels()
        .filter(|(_, _, p)| p[0] < 40 && p[1] > 215 && p[2] < 40)
        .map(|(x, _, _)| x)
        .collect();
    let across = lime.iter().max().unwrap() - lime.iter().min().unwrap() + 1;
    assert!(
        (130..=158).contains(&across),
        "the dot is {across} px across"
    );
    // The screenshot stays last, at its own size.
    assert_eq!(image_at(second, 1).dimensions(), (1280, 800));
    let text = second.text();
    assert!(text.contains("CLOSE LOOK"), "{text}");
    assert!(text.contains("magnified 8.0×"), "{text}");
    assert!(run.path("rec/step-002-zoom.png").is_file());
    // The journal names it, and the report draws the box on step 1's image.
    let journal = std::fs::read_to_string(run.path("rec/journal.jsonl")).unwrap();
    assert!(
        journal.contains("\"close_look\":\"step-002-zoom.png\""),
        "{journal}"
    );
    // Its tokens count as any image's: the step sent two.
    assert!(journal.contains("\"images\":2"), "{journal}");
    let report = std::fs::read_to_string(run.path("rec/report.html")).unwrap();
    assert!(report.contains(r#"<rect class="zoom""#), "{report}");
    assert!(
        report.contains(r#"<a href="step-002-zoom.png">"#),
        "{report}"
    );
}

#[tokio::test]
async fn a_point_outside_the_image_is_refused_and_the_page_hears_no_click() {
    let server = Server::start(None).await;
    let script = vec![say("CLICK:@1568,10"), say("STOP:missed")];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("canvas.html");
    let run = Seamark::task(&[
        "--task",
        "Click the dot",
        "--url",
        &url,
        "--viewport",
        "1920x1080",
    ])
    .model(&model)
    .fails(1)
    .run()
    .await;
    assert_eq!(run.json()["success"], false, "{}", run.stderr());
    let said = model.received()[1].text();
    assert!(
        said.contains("is outside the image you were sent (1568×882"),
        "{said}"
    );
    assert!(told(&server, "click").is_empty());
}

#[tokio::test]
async fn a_shape_on_a_canvas_is_dragged_into_its_zone_and_a_slider_is_dragged() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| {
            let ((sx, sy), (zx, zy)) = (centre_of(r, [0, 0, 255]), centre_of(r, [0, 255, 0]));
            format!("DRAG:@{sx},{sy}:@{zx},{zy}")
        }),
        // The slider's thumb, by its mark, to a point past its right end
        // on its row (as the image shows the slider at 60 to 460, row 700).
        reply(|r| format!("DRAG:{}:@470,708", r.id_of("Volume"))),
        say("COMPLETE:dragged"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("drag.html");
    Seamark::task(&["--task", "Drag the square into the zone", "--url", &url])
        .model(&model)
        .run()
        .await;
    let log = server.log.lock().unwrap().clone();
    assert!(
        log.iter().any(|l| l.ends_with("/log?dropped=in")),
        "{log:?}"
    );
    let slider: Vec<u32> = log
        .iter()
        .filter_map(|l| {
            l.split_once("/log?slider=")
                .and_then(|(_, v)| v.parse().ok())
        })
        .collect();
    assert!(slider.last().is_some_and(|v| *v >= 95), "{slider:?}");
}

/// A point is guarded as the element it falls on: a click at the middle
/// of "Delete account" is put to the confirmation guard as `CLICK:id` is
/// (the fixture's policy allows, and the guard's decision is recorded).
#[tokio::test]
async fn a_click_at_a_point_on_a_destructive_button_goes_through_the_guard_as_its_id_would() {
    use crate::support::{Fixture, ReportExt};
    let mut a = Fixture::open("delete.html").await.actor().await;
    let obs = a.look().await;
    let delete = obs
        .table
        .elements
        .iter()
        .find(|e| e.name == "Delete account")
        .expect("the button");
    let r = delete.visible.unwrap_or(delete.bbox);
    // At 1280×800 the image is sent as it is: a pixel is a CSS pixel.
    let (x, y) = ((r.x + r.w / 2.0) as u32, (r.y + r.h / 2.0) as u32);
    let report = a.run(&format!("CLICK:@{x},{y}")).await;
    // The fixture's policy allows: the guard's decision is recorded.
    report.statuses(&[Status::Done]);
    assert_eq!(report.confirmations.len(), 1, "{report:?}");
    let held = &report.confirmations[0].hold;
    assert_eq!(held.command, format!("CLICK:@{x},{y}"));
    assert_eq!(held.element, "button \"Delete account\"");
    assert!(held.why.contains("delete"), "{}", held.why);
    a.close().await;
}

#[tokio::test]
async fn a_draggable_list_is_reordered_by_dragging_one_item_onto_another() {
    let server = Server::start(None).await;
    let script = vec![
        reply(|r| format!("DRAG:{}:{}", r.id_of("Cherries"), r.id_of("Apples"))),
        say("COMPLETE:cherries first"),
    ];
    let model = ModelServer::start(script, || say("STOP:no more answers")).await;
    let url = server.url("reorder.html");
    Seamark::task(&["--task", "Put cherries first", "--url", &url])
        .model(&model)
        .run()
        .await;
    let prompt = model.received()[0].text();
    assert!(prompt.contains("draggable \"Cherries\""), "{prompt}");
    let log = server.log.lock().unwrap().clone();
    assert!(
        log.iter()
            .any(|l| l.ends_with("/log?order=Cherries,Apples,Bananas")),
        "{log:?}"
    );
}

/// Clicks the dot it sees, then ends.
fn dot_clicker(r: &Received) -> crate::model_server::Reply {
    let text = if r.text().contains("clicked at @") {
        "COMPLETE:clicked the dot".to_string()
    } else {
        let (x, y) = centre_of(r, [0, 255, 0]);
        format!("CLICK:@{x},{y}")
    };
    crate::model_server::Reply::Text(text)
}

/// A skill keeps a point as a place in the element it fell on: done again
/// without the model while that element keeps its size (the dot is hit
/// again), and handed to the model once the element changed size (the
/// canvas fills a smaller viewport: the same place would miss).
#[tokio::test]
async fn a_skill_replays_a_point_in_its_element_and_hands_over_when_the_element_changed() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(dot_clicker).await;
    let work = crate::support::Workdir::new(&model);
    let url = server.url("canvas.html");
    let run = |out: &'static str, viewport: &'static str| {
        let url = url.clone();
        let work = &work;
        async move {
            let args = [
                "run",
                "--json",
                "--task",
                "Click the green dot",
                "--url",
                &url,
                "--out",
                out,
                "--viewport",
                viewport,
            ];
            let ran = work.run(&args).await;
            assert_eq!(ran.code(), Some(0), "{out}: {}", ran.stderr());
            ran
        }
    };
    let hit = |n: usize| {
        let dots = told(&server, "dot");
        let clicks = told(&server, "click");
        let (dot, click) = (dots[n], clicks[n]);
        assert!(
            (click.0 - dot.0).abs() <= 2.0 && (click.1 - dot.1).abs() <= 2.0,
            "click {n} at {click:?}, the dot at {dot:?}"
        );
    };
    run("r1", "1280x800").await;
    let calls = model.received().len();
    assert_eq!(calls, 2);
    hit(0);
    let skill = std::fs::read_dir(work.path("skills"))
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.path().extension().is_some_and(|x| x == "json"))
        .expect("a skill learned");
    let text = std::fs::read_to_string(skill.path()).unwrap();
    assert!(text.contains("\"do\": \"CLICK:@0,0\""), "{text}");
    assert!(text.contains("\"within\""), "{text}");

    // The same layout: from the skill, no model call, the dot hit.
    let second = run("r2", "1280x800").await;
    assert_eq!(model.received().len(), calls, "{}", second.stderr());
    hit(1);

    // A smaller viewport, a smaller canvas: the model takes over, told why.
    let third = run("r3", "1000x700").await;
    let v = third.json();
    let why = v["skill"]["took_over"].as_str().unwrap_or_default();
    assert!(why.contains("changed size"), "{v}");
    assert!(model.received().len() > calls);
    hit(2);
}
