//! Which URLs `FETCH` may open: absolute or relative to the page, and only of
//! the schemes allowed (http and https by default). `javascript:` would run the
//! model's code in the page, `data:` and `blob:` open content no site served,
//! and `file:` reads the local disk: all refused unless allowed by name.

use url::Url;

/// The schemes `FETCH` opens unless told otherwise.
pub const DEFAULT_FETCH_SCHEMES: &[&str] = &["http", "https"];

/// The host of a URL, "" when it has none (`about:blank`, `data:`): what
/// secrets and the domain policy are matched against.
pub fn host_of(url: &str) -> String {
    Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default()
}

/// Why FETCH cannot open what the model wrote; told to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchUrlError {
    /// Nothing.
    #[error("the URL is empty")]
    Empty,
    /// Not a URL, even against the page's.
    #[error("{written:?} is not a URL ({cause})")]
    NotUrl {
        /// What the model wrote.
        written: String,
        /// The parser's words.
        cause: url::ParseError,
    },
    /// A scheme the run does not open.
    #[error(
        "{scheme}: URLs are refused (allowed: {allowed}); open pages by their http(s) address"
    )]
    Scheme {
        /// Its scheme.
        scheme: String,
        /// Those allowed, as a list.
        allowed: String,
    },
    /// A web URL with no host.
    #[error("{0:?} has no host")]
    NoHost(String),
}

/// Resolves `written` against the page's URL and checks its scheme.
pub fn fetch_target(
    written: &str,
    page_url: &str,
    schemes: &[String],
) -> Result<Url, FetchUrlError> {
    let written = written.trim();
    if written.is_empty() {
        return Err(FetchUrlError::Empty);
    }
    let not_url = |cause| FetchUrlError::NotUrl {
        written: written.to_string(),
        cause,
    };
    let parsed = match Url::parse(written) {
        Ok(u) => u,
        Err(url::ParseError::RelativeUrlWithoutBase) => Url::parse(page_url)
            .and_then(|base| base.join(written))
            .map_err(not_url)?,
        Err(e) => return Err(not_url(e)),
    };
    let scheme = parsed.scheme();
    if !schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
        return Err(FetchUrlError::Scheme {
            scheme: scheme.to_string(),
            allowed: schemes.join(", "),
        });
    }
    if matches!(scheme, "http" | "https") && parsed.host_str().is_none_or(str::is_empty) {
        return Err(FetchUrlError::NoHost(written.to_string()));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Vec<String> {
        DEFAULT_FETCH_SCHEMES
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn absolute_and_relative_urls_resolve() {
        let base = "http://127.0.0.1:8080/shop/list.html?q=1";
        assert_eq!(
            fetch_target("https://example.com/a", base, &defaults())
                .unwrap()
                .as_str(),
            "https://example.com/a"
        );
        assert_eq!(
            fetch_target("/pricing", base, &defaults())
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8080/pricing"
        );
        assert_eq!(
            fetch_target("item.html", base, &defaults())
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8080/shop/item.html"
        );
    }

    #[test]
    fn dangerous_schemes_are_refused_by_default() {
        let base = "http://127.0.0.1/";
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<h1>x</h1>",
            "file:///etc/passwd",
            "blob:http://127.0.0.1/uuid",
            "chrome://settings",
        ] {
            let err = fetch_target(bad, base, &defaults())
                .unwrap_err()
                .to_string();
            assert!(err.contains("refused"), "{bad}: {err}");
        }
        let files = vec!["file".to_string()];
        assert!(fetch_target("file:///tmp/x.html", base, &files).is_ok());
    }

    #[test]
    fn malformed_urls_are_errors() {
        for bad in ["", "http://", "http://[::1", "https:// spaced host"] {
            assert!(
                fetch_target(bad, "about:blank", &defaults()).is_err(),
                "{bad:?}"
            );
        }
    }
}
