//! Finding the Chromium binary: `--chrome`, then `SEAMARK_CHROME`, then the usual names.

use std::path::{Path, PathBuf};

use super::BrowserError;

/// Names looked up on `PATH`, in order.
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// Absolute places tried after `PATH`. Debian's `/usr/bin/chromium` is a wrapper
/// script that adds flags from /etc/chromium.d; the real binary takes exactly ours,
/// so it comes first.
const PLACES: &[&str] = &[
    "/usr/lib/chromium/chromium",
    "/usr/lib/chromium-browser/chromium-browser",
    "/opt/google/chrome/chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

/// Finds Chromium: the explicit path if given, then env `SEAMARK_CHROME`, then the
/// usual install places and names on `PATH`.
pub fn find_chromium(explicit: Option<&Path>) -> Result<PathBuf, BrowserError> {
    if let Some(path) = explicit {
        return existing(path, "--chrome");
    }
    if let Some(path) = std::env::var_os("SEAMARK_CHROME").filter(|v| !v.is_empty()) {
        return existing(Path::new(&path), "SEAMARK_CHROME");
    }
    let mut tried = Vec::new();
    for place in PLACES {
        let path = Path::new(place);
        if path.is_file() {
            return Ok(path.to_path_buf());
        }
        tried.push(place.to_string());
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for name in NAMES {
        for dir in std::env::split_paths(&path_var) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
        tried.push(format!("{name} on PATH"));
    }
    Err(BrowserError::NotFound {
        tried: tried.join(", "),
    })
}

fn existing(path: &Path, from: &'static str) -> Result<PathBuf, BrowserError> {
    if path.is_file() {
        Ok(path.to_path_buf())
    } else {
        Err(BrowserError::NotAt(path.to_path_buf(), from))
    }
}
