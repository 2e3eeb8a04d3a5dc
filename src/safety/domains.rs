//! Domain limits: `--allow-domain` and `--block-domain` patterns, matched
//! against a URL's host. `example.com` is that host; `*.example.com` is that
//! host and every subdomain; `*` is every host. Ports and schemes play no part.

use std::fmt;

/// One host pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    /// The host or suffix, lower case.
    host: String,
    /// `*.` prefix: subdomains match too.
    wildcard: bool,
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.wildcard, self.host.is_empty()) {
            (true, true) => write!(f, "*"),
            (true, false) => write!(f, "*.{}", self.host),
            _ => write!(f, "{}", self.host),
        }
    }
}

/// Why a text is no domain pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} is not a domain pattern ({why}); write example.com, *.example.com or *")]
pub struct DomainPatternError {
    /// What was given.
    pub given: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl std::str::FromStr for DomainPattern {
    type Err = DomainPatternError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let bad = |why: &'static str| {
            Err(DomainPatternError {
                given: s.to_string(),
                why,
            })
        };
        if t.is_empty() {
            return bad("it is empty");
        }
        if t == "*" {
            return Ok(DomainPattern {
                host: String::new(),
                wildcard: true,
            });
        }
        if t.contains("://") || t.contains('/') {
            return bad("a domain, not a URL");
        }
        let (wildcard, host) = match t.strip_prefix("*.") {
            Some(rest) => (true, rest.to_string()),
            None => (false, t.clone()),
        };
        if host.contains('*') {
            return bad("a * only goes first, as in *.example.com");
        }
        let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.';
        if host.is_empty()
            || !host.chars().all(ok_char)
            || host.starts_with('.')
            || host.ends_with('.')
            || host.contains("..")
        {
            return bad("letters, digits, dots and hyphens only");
        }
        Ok(DomainPattern { host, wildcard })
    }
}

impl DomainPattern {
    /// Whether the host matches.
    pub fn matches(&self, host: &str) -> bool {
        let h = host.trim_end_matches('.').to_ascii_lowercase();
        let h = h.trim_start_matches('[').trim_end_matches(']');
        if self.wildcard && self.host.is_empty() {
            return true;
        }
        h == self.host || (self.wildcard && h.ends_with(&format!(".{}", self.host)))
    }
}

/// The allow and block lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainPolicy {
    /// When not empty, only these hosts may be reached.
    pub allow: Vec<DomainPattern>,
    /// These hosts are never reached.
    pub block: Vec<DomainPattern>,
}

impl DomainPolicy {
    /// Whether any limit is set.
    pub fn is_active(&self) -> bool {
        !self.allow.is_empty() || !self.block.is_empty()
    }

    /// Why a host may not be reached, or `None` when it may.
    pub fn refusal(&self, host: &str) -> Option<String> {
        if let Some(p) = self.block.iter().find(|p| p.matches(host)) {
            return Some(format!("{host} is blocked (--block-domain {p})"));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| p.matches(host)) {
            let list: Vec<String> = self.allow.iter().map(ToString::to_string).collect();
            return Some(format!(
                "{host} is outside the allowed domains ({})",
                list.join(", ")
            ));
        }
        None
    }

    /// Why a URL may not be opened, or `None`. URLs without a host (`about:`,
    /// `data:`, `blob:`, `file:`, `javascript:`) are refused once a limit is
    /// set: they are the usual ways around one.
    pub fn url_refusal(&self, url: &str) -> Option<String> {
        if !self.is_active() {
            return None;
        }
        match url::Url::parse(url) {
            Ok(u) if u.scheme() == "about" && u.path() == "blank" => None,
            Ok(u) => match u.host_str() {
                Some(host) if matches!(u.scheme(), "http" | "https" | "ws" | "wss") => {
                    self.refusal(host)
                }
                _ => Some(format!(
                    "{}: URLs are refused while domains are limited",
                    u.scheme()
                )),
            },
            Err(e) => Some(format!("{url:?} is not a URL ({e})")),
        }
    }

    /// The script that holds this policy in a page of a browser seamark
    /// attached to, for the routes its request interception does not see
    /// (WebSockets, WebTransport, WebRTC, service workers): `seal.js` with
    /// the patterns in it.
    pub fn seal_script(&self) -> String {
        let patterns = |list: &[DomainPattern]| -> Vec<serde_json::Value> {
            list.iter()
                .map(|p| serde_json::json!({ "host": p.host, "wildcard": p.wildcard }))
                .collect()
        };
        let policy = serde_json::json!({
            "allow": patterns(&self.allow),
            "block": patterns(&self.block),
        });
        include_str!("seal.js").replace("__POLICY__", &policy.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> DomainPattern {
        s.parse().unwrap()
    }

    #[test]
    fn patterns_match_hosts_and_subdomains() {
        assert!(p("example.com").matches("example.com"));
        assert!(p("example.com").matches("EXAMPLE.com."));
        assert!(!p("example.com").matches("www.example.com"));
        assert!(p("*.example.com").matches("www.example.com"));
        assert!(p("*.example.com").matches("example.com"));
        assert!(!p("*.example.com").matches("badexample.com"));
        assert!(!p("*.example.com").matches("example.com.evil.net"));
        assert!(p("*").matches("anything.org"));
        assert!(p("127.0.0.1").matches("127.0.0.1"));
    }

    #[test]
    fn malformed_patterns_say_why() {
        for bad in [
            "",
            "https://example.com",
            "example.com/path",
            "ex*ample.com",
            "*.",
            "a..b",
            "ex ample.com",
            "*.*.com",
        ] {
            let err = bad.parse::<DomainPattern>().unwrap_err().to_string();
            assert!(err.contains("is not a domain pattern"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn block_wins_and_allow_limits() {
        let policy = DomainPolicy {
            allow: vec![p("*.shop.test")],
            block: vec![p("admin.shop.test")],
        };
        assert_eq!(policy.refusal("www.shop.test"), None);
        assert!(policy
            .refusal("admin.shop.test")
            .unwrap()
            .contains("blocked"));
        assert!(policy
            .refusal("evil.test")
            .unwrap()
            .contains("outside the allowed domains (*.shop.test)"));
        assert!(policy
            .url_refusal("data:text/html,hi")
            .unwrap()
            .contains("data: URLs are refused"));
        assert!(policy.url_refusal("javascript:alert(1)").is_some());
        assert!(policy.url_refusal("file:///etc/passwd").is_some());
        assert!(policy
            .url_refusal("blob:https://www.shop.test/uuid")
            .is_some());
        assert_eq!(policy.url_refusal("https://www.shop.test/cart"), None);
        assert_eq!(policy.url_refusal("about:blank"), None);
        assert_eq!(DomainPolicy::default().url_refusal("data:x"), None);
    }
}
