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

/// Why the demo site cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// Its files cannot be written.
    #[error("cannot write the demo site: {0}")]
    Files(std::io::Error),
    /// Its port is taken.
    #[error(
        "cannot serve the demo site on 127.0.0.1:{port}: {cause} (the recording was made there: \
         free the port, or give --port with --model)"
    )]
    Port {
        /// The port.
        port: u16,
        /// Why.
        cause: std::io::Error,
    },
}

impl DemoSite {
    /// Serves the site on `port` of 127.0.0.1 (0: any free one).
    pub async fn serve(port: u16) -> Result<DemoSite, DemoError> {
        let files = tempfile::Builder::new()
            .prefix("seamark-demo-")
            .tempdir()
            .map_err(DemoError::Files)?;
        for (name, text) in SITE {
            std::fs::write(files.path().join(name), text).map_err(DemoError::Files)?;
        }
        let root: PathBuf = files.path().to_path_buf();
        let server = StaticServer::start_on(root, port)
            .await
            .map_err(|cause| DemoError::Port { port, cause })?;
        Ok(DemoSite {
            server,
            _files: files,
        })
    }
}
