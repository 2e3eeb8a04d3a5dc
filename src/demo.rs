//! The demo: a small job board bundled with seamark (`demo/site/`), served
//! on 127.0.0.1, and a recorded run of a task on it
//! (`demo/recording/journal.jsonl`: answers a careful person wrote, step by
//! step, as a model would answer). Replaying the recording shows the whole
//! loop without a model or a key; a page that no longer matches the
//! recording is a divergence, so the recording is refreshed on purpose.

use std::path::PathBuf;

use crate::serve::StaticServer;

/// The port the recording was made on: a page's URL is part of what a
/// replay compares.
pub const PORT: u16 = 47813;

/// The recorded run.
pub const RECORDING: &str = include_str!("../demo/recording/journal.jsonl");

/// The site's files.
const SITE: &[(&str, &str)] = &[
    ("index.html", include_str!("../demo/site/index.html")),
    ("results.html", include_str!("../demo/site/results.html")),
    (
        "companies.html",
        include_str!("../demo/site/companies.html"),
    ),
    ("about.html", include_str!("../demo/site/about.html")),
    ("style.css", include_str!("../demo/site/style.css")),
];

/// The demo site, served until dropped.
#[derive(Debug)]
pub struct DemoSite {
    /// Where it is served.
    pub server: StaticServer,
    _files: tempfile::TempDir,
}

impl DemoSite {
    /// Serves the site on `port` of 127.0.0.1 (0: any free one).
    pub async fn serve(port: u16) -> Result<DemoSite, String> {
        let files = tempfile::Builder::new()
            .prefix("seamark-demo-")
            .tempdir()
            .map_err(|e| format!("cannot make the demo site's folder: {e}"))?;
        for (name, text) in SITE {
            std::fs::write(files.path().join(name), text)
                .map_err(|e| format!("cannot write the demo site: {e}"))?;
        }
        let root: PathBuf = files.path().to_path_buf();
        let server = StaticServer::start_on(root, port).await.map_err(|e| {
            format!(
                "cannot serve the demo site on 127.0.0.1:{port}: {e} (the recording was made \
                 there: free the port, or give --port with --model)"
            )
        })?;
        Ok(DemoSite {
            server,
            _files: files,
        })
    }
}
