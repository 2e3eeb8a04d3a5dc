//! The soak (`scripts/soak.sh N`, which puts the machine under load and runs
//! this): the flows that touch the network guard, N times, each browser
//! writing its net log (`SEAMARK_NET_LOG`). It lists every request that
//! left for a host off this machine, with the service that made it, and
//! fails when there is one. Run it before stopping whenever the launch
//! flags change. Ignored in the suite, since its worth is in the count.

use std::path::Path;

use crate::model_server::{reply, say, ModelServer, Turn};
use crate::netlog::{foreign_in, logs_in, Foreign};
use crate::server::Server;
use crate::support::Seamark;
use seamark::browser::NET_LOG_ENV;

/// The runs of each flow: `SEAMARK_SOAK_RUNS`, 1 when unset.
fn runs() -> usize {
    std::env::var("SEAMARK_SOAK_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// Saved real pages marked in each round: their scripts, fonts and styles
/// come inlined, and the browser's own services start as on any page.
const PAGES: &[&str] = &["10-github-com", "06-en-wikipedia-org", "00-old-reddit-com"];

/// Fills the order form and places the order.
fn buyer() -> Turn {
    reply(|r| {
        if r.text().contains("Back to the shop") {
            return "COMPLETE:the order is placed".into();
        }
        format!(
            "TYPE:{}:Ada Lovelace\nCLICK:{}",
            r.id_of("Name"),
            r.id_of("Place order")
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the soak: scripts/soak.sh N runs it under load"]
async fn no_request_of_the_browsers_own_leaves_this_machine_over_n_rounds_of_the_guarded_flows() {
    let sites = Server::start(None).await;
    let logs = tempfile::tempdir().expect("a temp dir");
    let rounds = runs();
    let mut flows = 0;
    for round in 1..=rounds {
        let log = |flow: &str| {
            logs.path()
                .join(format!("{round:03}-{flow}"))
                .display()
                .to_string()
        };

        let model = ModelServer::start(Vec::new(), crate::signin::secret_signer).await;
        let secret = format!("ACME_PW@127.0.0.1={}", crate::signin::PW);
        let signin = crate::signin::sign_in_then_delete(&sites.url("signin.html"), &secret)
            .model(&model)
            .envs(&[(NET_LOG_ENV, &log("signin"))])
            .run()
            .await;
        assert!(
            signin.stdout().contains("needs a person's confirmation"),
            "{}",
            signin.stderr()
        );

        let model = ModelServer::start(Vec::new(), buyer).await;
        Seamark::task(&[
            "--task",
            "Order one widget for Ada Lovelace",
            "--url",
            &sites.url("order.html"),
            "--confirm",
            "allow",
            "--allow-domain",
            "127.0.0.1",
        ])
        .model(&model)
        .envs(&[(NET_LOG_ENV, &log("order"))])
        .run()
        .await;

        for page in PAGES {
            let url = sites.url(&format!("corpus/{page}/index.html"));
            Seamark::new(&["mark", &url])
                .envs(&[(NET_LOG_ENV, &log(page))])
                .run()
                .await;
        }
        let model = ModelServer::start(vec![say("COMPLETE:nothing to do")], stop).await;
        Seamark::task(&[
            "--task",
            "Look at the page",
            "--url",
            &sites.url("quiet.html"),
        ])
        .model(&model)
        .envs(&[(NET_LOG_ENV, &log("idle"))])
        .run()
        .await;
        flows += 3 + PAGES.len();
    }
    let mut browsers = 0;
    let mut foreign: Vec<Foreign> = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(logs.path())
        .expect("the net logs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    dirs.sort();
    for dir in &dirs {
        browsers += logs_in(dir);
        foreign.extend(foreign_in(dir));
    }
    println!(
        "soak: {rounds} round(s), {flows} flows, {browsers} browsers' net logs, {} foreign request(s)",
        foreign.len()
    );
    for f in &foreign {
        let flow = f
            .file
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!(
            "  {flow}: {} [{}: {}]",
            f.url,
            f.annotation.map(|a| a.to_string()).unwrap_or_default(),
            f.service()
        );
    }
    assert!(browsers >= flows, "a flow wrote no net log");
    assert!(
        foreign.is_empty(),
        "the browser reached past this machine: {foreign:#?}"
    );
}

fn stop() -> Turn {
    say("STOP:nothing more")
}
