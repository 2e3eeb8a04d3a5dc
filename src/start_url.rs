//! What the user points seamark at: a URL, or a local file.

use std::path::{Path, PathBuf};

/// The schemes a start page may have: the web, a local file, a blank page
/// and an inline document. Anything else (`javascript:`, `ftp:`,
/// `chrome:`…) would leave the browser on a page it did not open, or run a
/// script instead of opening a page.
pub const START_SCHEMES: [&str; 5] = ["http", "https", "file", "about", "data"];

/// Why a target is no start page.
#[derive(Debug, thiserror::Error)]
pub enum StartUrlError {
    /// Nothing was given.
    #[error("empty URL or file name")]
    Empty,
    /// A URL of a scheme seamark does not open.
    #[error("{target}: seamark does not open {scheme}: URLs (it opens {})", START_SCHEMES.map(|s| format!("{s}:")).join(", "))]
    Scheme {
        /// What was given.
        target: String,
        /// Its scheme.
        scheme: String,
    },
    /// A URL that does not parse, or names no host.
    #[error("{target} is not a URL: {why}")]
    NotUrl {
        /// What was given.
        target: String,
        /// What is wrong with it.
        why: String,
    },
    /// A file whose absolute path cannot be found.
    #[error("cannot resolve {}: {cause}", path.display())]
    Resolve {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// A path to no file.
    #[error("{0}: no such file")]
    NoFile(String),
    /// Neither a file nor a host.
    #[error("{0}: no such file, and not a URL (write https://… or a host such as example.com)")]
    Neither(String),
}

/// Turns a command-line target into a URL: URLs with a scheme pass through, an
/// existing file becomes a `file://` URL, a bare host gets `https://`. A URL
/// that does not parse, or whose scheme is not one of [`START_SCHEMES`], is
/// an error that says why.
pub fn to_url(target: &str) -> Result<String, StartUrlError> {
    let t = target.trim();
    if t.is_empty() {
        return Err(StartUrlError::Empty);
    }
    let lower = t.to_ascii_lowercase();
    let scheme = lower.split_once(':').map(|(s, _)| s).filter(|s| {
        !s.is_empty()
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    // "localhost:8080/x" and "example.com:8443" are hosts with ports, not schemes.
    let is_host_port = |s: &str| {
        lower[s.len() + 1..].starts_with(|c: char| c.is_ascii_digit()) && !lower.contains("://")
    };
    if let Some(scheme) = scheme.filter(|s| !is_host_port(s)) {
        if !START_SCHEMES.contains(&scheme) {
            return Err(StartUrlError::Scheme {
                target: t.to_string(),
                scheme: scheme.to_string(),
            });
        }
        let not_url = |why: String| StartUrlError::NotUrl {
            target: t.to_string(),
            why,
        };
        let parsed = url::Url::parse(t).map_err(|e| not_url(e.to_string()))?;
        if matches!(scheme, "http" | "https") && parsed.host_str().is_none_or(str::is_empty) {
            return Err(not_url("it names no host".into()));
        }
        return Ok(t.to_string());
    }
    let path = Path::new(t);
    if path.exists() {
        let abs = std::fs::canonicalize(path).map_err(|cause| StartUrlError::Resolve {
            path: path.to_path_buf(),
            cause,
        })?;
        // canonicalize gives an absolute path, which is all from_file_path asks.
        return url::Url::from_file_path(&abs)
            .map(String::from)
            .map_err(|()| StartUrlError::NoFile(t.to_string()));
    }
    if (t.contains('/') && !t.contains('.')) || t.starts_with('.') || t.starts_with('/') {
        return Err(StartUrlError::NoFile(t.to_string()));
    }
    // A bare host: one that is no host ("not a url") is said to be neither.
    let host = t.split(['/', '?', '#']).next().unwrap_or_default();
    let url = format!("https://{t}");
    if host.chars().any(char::is_whitespace)
        || url::Url::parse(&url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .is_none_or(|h| h.is_empty())
    {
        return Err(StartUrlError::Neither(t.to_string()));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_files_and_hosts() {
        assert_eq!(
            to_url("http://127.0.0.1:8/x").unwrap(),
            "http://127.0.0.1:8/x"
        );
        assert_eq!(to_url("about:blank").unwrap(), "about:blank");
        assert_eq!(to_url("example.com").unwrap(), "https://example.com");
        let file = to_url("Cargo.toml").unwrap();
        assert!(
            file.starts_with("file:///") && file.ends_with("/Cargo.toml"),
            "{file}"
        );
        assert!(to_url("./missing/page.html")
            .unwrap_err()
            .to_string()
            .contains("no such file"));
        assert!(to_url("  ").is_err());
        assert_eq!(
            to_url("example.com:8443/x").unwrap(),
            "https://example.com:8443/x"
        );
        assert_eq!(to_url("data:text/html,hi").unwrap(), "data:text/html,hi");
    }

    #[test]
    fn a_file_name_with_spaces_and_hashes_becomes_an_escaped_file_url() {
        let dir = std::env::temp_dir().join(format!("seamark start {}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a #1 page.html");
        std::fs::write(&file, "<p>hi</p>").unwrap();
        let url = to_url(file.to_str().unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let tail = format!(
            "/seamark%20start%20{}/a%20%231%20page.html",
            std::process::id()
        );
        assert!(url.ends_with(&tail), "{url}");
        assert_eq!(url::Url::parse(&url).unwrap().to_file_path().unwrap(), file);
    }

    #[test]
    fn start_urls_seamark_cannot_open_are_refused_with_the_reason() {
        for (bad, why) in [
            ("ftp://x", "does not open ftp: URLs"),
            ("javascript:alert(1)", "does not open javascript: URLs"),
            ("chrome://settings", "does not open chrome: URLs"),
            ("http://[::1", "is not a URL"),
            ("http://", "is not a URL"),
            ("not a url", "no such file, and not a URL"),
        ] {
            let e = to_url(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
