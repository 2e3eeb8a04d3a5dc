//! `seamark bench` as a user runs it on pages of the test server: every
//! stage measured beside its floor, the JSON it writes read back, and a
//! comparison with a baseline that fails on a stage that got worse.

use crate::support::Seamark;
use serde_json::Value;

use crate::server::Server;
use crate::support::Run;

const STAGES: [&str; 10] = [
    "screenshot",
    "enumerate",
    "perceive_screenshot",
    "mark",
    "encode",
    "perceive",
    "read",
    "first_screenshot",
    "first_perceive",
    "first_primed",
];

async fn bench(args: &[&str]) -> Run {
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    Seamark::new(&all).output().await
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[tokio::test]
async fn every_stage_of_every_page_is_measured_beside_its_floor_and_compared() {
    let server = Server::start(None).await;
    let (form, cards) = (server.url("form.html"), server.url("cards.html"));
    let ran = bench(&[
        &form, &cards, "--runs", "3", "--warmup", "0", "--json", "b.json",
    ])
    .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    let text = std::fs::read_to_string(ran.path("b.json")).expect("b.json");
    let json: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(json["format"], 1);
    let pages = json["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 2);
    for page in pages {
        assert!(page["elements"].as_u64().unwrap() > 0, "{page:#}");
        assert!(page["dom_nodes"].as_u64().unwrap() > 0);
        assert!(page["list_tokens"].as_u64().unwrap() > 0);
        let stages = page["stages"].as_array().unwrap();
        let names: Vec<&str> = stages
            .iter()
            .map(|s| s["stage"].as_str().unwrap())
            .collect();
        assert_eq!(names, STAGES);
        let samples = |name: &str| -> Vec<f64> {
            stages.iter().find(|s| s["stage"] == name).unwrap()["samples_ms"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        for s in stages {
            let v = samples(s["stage"].as_str().unwrap());
            assert_eq!(v.len(), 3, "{s:#}");
            let f = |k: &str| s[k].as_f64().unwrap();
            assert!(
                f("min_ms") <= f("median_ms")
                    && f("median_ms") <= f("p95_ms")
                    && f("p95_ms") <= f("max_ms")
            );
            assert_eq!(f("median_ms"), median(v));
            // The ratio is to the floor's median in the same run.
            let floor = median(samples(s["floor"].as_str().unwrap()));
            assert!((f("ratio") - f("median_ms") / floor).abs() < 1e-9, "{s:#}");
        }
    }
    // The table people paste has a row per stage.
    let table = ran.stdout();
    for name in STAGES {
        assert!(table.contains(&format!("| {name} |")), "{table}");
    }
    assert!(table.contains(&format!("{form}: ")), "{table}");
    // The JSON reads back as the library's report, and writes out the same.
    let report = seamark::measure::BenchReport::read(&ran.path("b.json")).expect("read back");
    assert_eq!(serde_json::to_value(&report).unwrap(), json);

    // A baseline where perception was far cheaper: this run is worse there.
    let mut doctored = json.clone();
    for s in doctored["pages"][0]["stages"].as_array_mut().unwrap() {
        if s["stage"] == "perceive" {
            s["ratio"] = 0.01.into();
        }
        if s["stage"] == "enumerate" {
            s["ratio"] = 100.0.into();
        }
    }
    let baseline = ran.path("baseline.json");
    std::fs::write(&baseline, doctored.to_string()).unwrap();
    let compared = bench(&[
        &form,
        "--runs",
        "2",
        "--warmup",
        "0",
        "--compare",
        baseline.to_str().unwrap(),
    ])
    .await;
    assert_eq!(compared.code(), Some(1), "{}", compared.stderr());
    let out = compared.stdout();
    let worse = out
        .split("worse than the baseline by more than 10%: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    assert!(worse.contains(&format!("{form} perceive (+")), "{out}");
    assert!(!worse.contains("enumerate"), "{out}");
}

#[tokio::test]
async fn bad_pages_runs_and_baselines_are_told_clearly() {
    let server = Server::start(None).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone = format!("http://127.0.0.1:{port}/");
    let form = server.url("form.html");
    let ran = bench(&[&gone, &form, "--runs", "1", "--warmup", "0"]).await;
    assert_eq!(
        ran.code(),
        Some(1),
        "a page not measured: exit 1\n{}",
        ran.stderr()
    );
    ran.stderr_has(&format!("{gone} could not be measured: cannot open {gone}"));
    assert!(
        ran.stdout().contains(&format!("| {gone} | not measured: ")),
        "{}",
        ran.stdout()
    );
    assert!(
        ran.stdout().contains(&format!("| {form} | screenshot |")),
        "the other page was measured:\n{}",
        ran.stdout()
    );

    let zero = bench(&[&form, "--runs", "0"]).await;
    assert_eq!(zero.code(), Some(2));
    zero.stderr_has("--runs must be 1 or more");

    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.json");
    std::fs::write(&old, "{\"format\": 99, \"pages\": []}").unwrap();
    let other = bench(&[&form, "--compare", old.to_str().unwrap()]).await;
    assert_eq!(other.code(), Some(2));
    assert!(
        other
            .stderr()
            .contains("is a seamark bench file of format 99; this seamark reads format 1"),
        "{}",
        other.stderr()
    );
}

#[tokio::test]
async fn mark_timings_gives_the_stages_of_its_one_perception() {
    let server = Server::start(None).await;
    let ran = Seamark::new(&[
        "mark",
        &server.url("form.html"),
        "--timings",
        "--json",
        "t.json",
        "-o",
        "m.png",
    ])
    .run()
    .await;
    let line = ran
        .stderr()
        .lines()
        .find(|l| l.starts_with("timings: perception "))
        .unwrap_or_else(|| panic!("{}", ran.stderr()))
        .to_string();
    for part in [
        "enumerate ",
        "screenshot ",
        "1 attempt",
        "mark ",
        "encode for the model ",
    ] {
        assert!(line.contains(part), "{line}");
    }
    let table: Value =
        serde_json::from_str(&std::fs::read_to_string(ran.path("t.json")).unwrap()).unwrap();
    let t = &table["timings"];
    for key in [
        "total_ms",
        "enumerate_ms",
        "screenshot_ms",
        "mark_ms",
        "encode_ms",
    ] {
        assert!(t[key].as_f64().is_some_and(|v| v > 0.0), "{key}: {t:#}");
    }
    // Without the flag, stderr has no timings line.
    let quiet = Seamark::new(&["mark", &server.url("form.html"), "-o", "m.png"])
        .run()
        .await;
    assert!(!quiet.stderr().contains("timings:"), "{}", quiet.stderr());
}

#[tokio::test]
async fn tokens_counts_what_a_step_sends_of_a_page_as_seamark_mark_does() {
    let server = Server::start(None).await;
    let form = server.url("form.html");
    let ran = bench(&["--tokens", &form, "http://127.0.0.1:1/"]).await;
    // The unreachable page is told in its row, and makes the exit 1.
    assert_eq!(ran.code(), Some(1), "{}", ran.stderr());
    let table = ran.stdout();
    assert!(
        table.contains("| http://127.0.0.1:1/ | not measured: "),
        "{table}"
    );
    // The list's figures are those `seamark mark` gives of the same page.
    let marked = Seamark::new(&["mark", &form]).run().await;
    let said = marked.stderr();
    let figures = said
        .split_once("list: ")
        .and_then(|(_, rest)| rest.split_once(" tokens (o200k_base)"))
        .map(|(f, _)| f.to_string())
        .unwrap_or_else(|| panic!("{said}"));
    let (chars, tokens) = figures.split_once(" characters, ").expect("figures");
    assert!(
        table.contains(&format!(
            "| {form} | element list | {chars} characters | {tokens} | {tokens} |"
        )),
        "{figures}\n{table}"
    );
    assert!(
        table.contains("| READ, first part | ")
            && !table.contains("| READ, first part | 0 characters"),
        "{table}"
    );
    assert!(
        table.contains("| screenshot | 1280×800 | 1,105 | 1,366 |"),
        "{table}"
    );
}
