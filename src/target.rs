//! What the user points seamark at: a URL, or a local file.

use std::path::Path;

/// Turns a command-line target into a URL: URLs with a scheme pass through, an
/// existing file becomes a `file://` URL, a bare host gets `https://`.
pub fn to_url(target: &str) -> Result<String, String> {
    let t = target.trim();
    if t.is_empty() {
        return Err("empty URL or file name".into());
    }
    let lower = t.to_ascii_lowercase();
    let has_scheme = lower.contains("://")
        || ["about:", "data:", "file:", "chrome:"]
            .iter()
            .any(|s| lower.starts_with(s));
    if has_scheme {
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
    Ok(format!("https://{t}"))
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
    }
}
