//! What the user points seamark at: a URL, or a local file.

use std::path::Path;

/// The schemes a start page may have: the web, a local file, a blank page
/// and an inline document. Anything else (`javascript:`, `ftp:`,
/// `chrome:`…) would leave the browser on a page it did not open, or run a
/// script instead of opening a page.
pub const START_SCHEMES: [&str; 5] = ["http", "https", "file", "about", "data"];

/// Turns a command-line target into a URL: URLs with a scheme pass through, an
/// existing file becomes a `file://` URL, a bare host gets `https://`. A URL
/// that does not parse, or whose scheme is not one of [`START_SCHEMES`], is
/// an error that says why.
pub fn to_url(target: &str) -> Result<String, String> {
    let t = target.trim();
    if t.is_empty() {
        return Err("empty URL or file name".into());
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
            return Err(format!(
                "{t}: seamark does not open {scheme}: URLs (it opens {})",
                START_SCHEMES.map(|s| format!("{s}:")).join(", ")
            ));
        }
        let parsed = url::Url::parse(t).map_err(|e| format!("{t} is not a URL: {e}"))?;
        if matches!(scheme, "http" | "https") && parsed.host_str().is_none_or(str::is_empty) {
            return Err(format!("{t} is not a URL: it names no host"));
        }
        return Ok(t.to_string());
    }
    let path = Path::new(t);
    if path.exists() {
        let abs = std::fs::canonicalize(path)
            .map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
        return Ok(format!("file://{}", percent_path(&abs.to_string_lossy())));
    }
    if (t.contains('/') && !t.contains('.')) || t.starts_with('.') || t.starts_with('/') {
        return Err(format!("{t}: no such file"));
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
        return Err(format!(
            "{t}: no such file, and not a URL (write https://… or a host such as example.com)"
        ));
    }
    Ok(url)
}

/// Escapes the characters a file path may hold that a URL may not.
fn percent_path(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for b in p.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
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
            .contains("no such file"));
        assert!(to_url("  ").is_err());
        assert_eq!(
            to_url("example.com:8443/x").unwrap(),
            "https://example.com:8443/x"
        );
        assert_eq!(to_url("data:text/html,hi").unwrap(), "data:text/html,hi");
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
            let e = to_url(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
