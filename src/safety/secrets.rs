//! Secrets: values the model must use without ever seeing. The model writes
//! `{{secret:NAME}}`; the executor puts the value in at the last moment, and
//! every text that leaves the process (prompts, the run directory, progress)
//! has the values replaced by their placeholders.
//!
//! `--secret NAME=VALUE`, `NAME=@FILE`, `NAME=env:VAR`; limited to domains with
//! `NAME@example.com,*.example.org=…`. A one-time code: `NAME=totp:BASE32`
//! (the seed may come from `totp:@FILE` or `totp:env:VAR` too) or
//! `NAME=otpauth://totp/…`: typing it types the code of the moment.

use std::fmt;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::domains::{DomainPattern, DomainPatternError};
use super::totp::{OneTimeCodes, TotpError};

/// Shortest secret kept out of text: shorter values would be replaced in
/// ordinary words.
const MIN_LEN: usize = 4;

/// One secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    /// Its name in `{{secret:NAME}}`.
    pub name: String,
    value: String,
    /// Hosts it may be typed on; empty means any.
    pub domains: Vec<DomainPattern>,
    /// For a one-time code: what makes the codes (`value` is its seed).
    codes: Option<OneTimeCodes>,
}

impl fmt::Debug for Secret {
    /// Never the value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secret")
            .field("name", &self.name)
            .field("domains", &self.domains)
            .finish_non_exhaustive()
    }
}

impl Secret {
    /// A secret of this name with this value as it is (no `@FILE` or `env:`
    /// reading), for values seamark holds itself, such as an API key; `None`
    /// when the value is too short to keep out of text.
    pub fn plain(name: &str, value: &str) -> Option<Secret> {
        (value.chars().count() >= MIN_LEN).then(|| Secret {
            name: name.to_string(),
            value: value.to_string(),
            domains: Vec::new(),
            codes: None,
        })
    }

    /// The placeholder the model writes.
    pub fn placeholder(&self) -> String {
        format!("{{{{secret:{}}}}}", self.name)
    }
}

/// Why a secret cannot be taken or typed. A message names the secret,
/// never its value.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// Not `NAME=SOURCE`.
    #[error("a secret is NAME=VALUE, NAME=@FILE or NAME=env:VAR (optionally NAME@domain=…)")]
    Form,
    /// A name of other characters.
    #[error("secret name {0:?}: letters, digits, _ and - only")]
    Name(String),
    /// A domain it is limited to that is none.
    #[error("secret {name}: {cause}")]
    Domain {
        /// The secret.
        name: String,
        /// The pattern's fault.
        cause: DomainPatternError,
    },
    /// Its file cannot be read.
    #[error("secret {name}: cannot read {path}: {cause}")]
    File {
        /// The secret.
        name: String,
        /// The file.
        path: String,
        /// Why.
        cause: std::io::Error,
    },
    /// Its environment variable is not set.
    #[error("secret {name}: env {var} is not set")]
    Env {
        /// The secret.
        name: String,
        /// The variable.
        var: String,
    },
    /// A one-time code's seed that is none.
    #[error("secret {name}: not a one-time code seed: {cause}")]
    Seed {
        /// The secret.
        name: String,
        /// The seed's fault.
        cause: TotpError,
    },
    /// A value too short to find in text.
    #[error(
        "secret {0}: the value is shorter than {MIN_LEN} characters, too short to keep out of text"
    )]
    Short(String),
    /// Two secrets of one name.
    #[error("secret {0} is given twice")]
    Twice(String),
    /// A `{{secret:` with no `}}`.
    #[error("an unclosed {{{{secret:…}}}} placeholder")]
    Unclosed,
    /// A placeholder that names no secret.
    #[error("there is no secret named {name}{}", if .known.is_empty() { ": none were given (--secret NAME=…)".to_string() } else { format!("; the secrets are: {}", .known.join(", ")) })]
    Unknown {
        /// The name written.
        name: String,
        /// The secrets' names.
        known: Vec<String>,
    },
    /// A secret limited to other domains.
    #[error("secret {name} may not be typed on {host} (it is limited to {limits})")]
    Elsewhere {
        /// The secret.
        name: String,
        /// The page's host.
        host: String,
        /// Its domains, as given.
        limits: String,
    },
}

impl std::str::FromStr for Secret {
    type Err = SecretError;

    fn from_str(spec: &str) -> Result<Self, SecretError> {
        let (head, source) = spec.split_once('=').ok_or(SecretError::Form)?;
        let (name, domains) = match head.split_once('@') {
            Some((n, d)) => (n, d),
            None => (head, ""),
        };
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(SecretError::Name(name.to_string()));
        }
        let domains = domains
            .split(',')
            .filter(|d| !d.trim().is_empty())
            .map(str::parse)
            .collect::<Result<Vec<DomainPattern>, _>>()
            .map_err(|cause| SecretError::Domain {
                name: name.to_string(),
                cause,
            })?;
        let (totp, source) = match source.strip_prefix("totp:") {
            Some(rest) => (true, rest),
            None => (source.starts_with("otpauth://"), source),
        };
        let value = if let Some(path) = source.strip_prefix('@') {
            std::fs::read_to_string(path)
                .map_err(|cause| SecretError::File {
                    name: name.to_string(),
                    path: path.to_string(),
                    cause,
                })?
                .trim_end_matches(['\n', '\r'])
                .to_string()
        } else if let Some(var) = source.strip_prefix("env:") {
            std::env::var(var).map_err(|_| SecretError::Env {
                name: name.to_string(),
                var: var.to_string(),
            })?
        } else {
            source.to_string()
        };
        if totp {
            let codes = OneTimeCodes::parse(&value).map_err(|cause| SecretError::Seed {
                name: name.to_string(),
                cause,
            })?;
            return Ok(Secret {
                name: name.to_string(),
                value: codes.seed.clone(),
                domains,
                codes: Some(codes),
            });
        }
        if value.chars().count() < MIN_LEN {
            return Err(SecretError::Short(name.to_string()));
        }
        Ok(Secret {
            name: name.to_string(),
            value,
            domains,
            codes: None,
        })
    }
}

/// The run's secrets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    list: Vec<Secret>,
}

impl Secrets {
    /// Secrets from their specs as a person writes them (`--secret
    /// NAME=SOURCE`, repeated); a spec that does not parse, or two with one
    /// name, is an error that names it without its value.
    pub fn parse_all(specs: &[String]) -> Result<Secrets, SecretError> {
        specs
            .iter()
            .map(|s| s.parse::<Secret>())
            .collect::<Result<Vec<_>, _>>()
            .and_then(Secrets::new)
    }

    /// Secrets; two with one name is an error.
    pub fn new(list: Vec<Secret>) -> Result<Secrets, SecretError> {
        for (i, s) in list.iter().enumerate() {
            if list[..i].iter().any(|t| t.name == s.name) {
                return Err(SecretError::Twice(s.name.clone()));
            }
        }
        Ok(Secrets { list })
    }

    /// These secrets and `more`; a name given twice is an error.
    pub fn and(&self, more: Vec<Secret>) -> Result<Secrets, SecretError> {
        Secrets::new(self.list.iter().cloned().chain(more).collect())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Their names.
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|s| s.name.as_str()).collect()
    }

    /// Whether `text` names a secret placeholder.
    pub fn has_placeholder(text: &str) -> bool {
        text.contains("{{secret:")
    }

    /// The names of the placeholders in `text`, in order.
    pub fn placeholder_names(text: &str) -> Vec<String> {
        text.split("{{secret:")
            .skip(1)
            .filter_map(|rest| rest.split_once("}}").map(|(n, _)| n.trim().to_string()))
            .collect()
    }

    /// The names of the secrets that may be typed on `host`.
    pub fn allowed_on(&self, host: &str) -> Vec<&str> {
        self.list
            .iter()
            .filter(|s| s.domains.is_empty() || s.domains.iter().any(|d| d.matches(host)))
            .map(|s| s.name.as_str())
            .collect()
    }

    /// Puts the values into `text` for typing on `host`. Errors name the
    /// placeholder, never a value.
    pub fn fill(&self, text: &str, host: &str) -> Result<String, SecretError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{secret:") {
            out.push_str(&rest[..start]);
            let after = &rest[start + "{{secret:".len()..];
            let end = after.find("}}").ok_or(SecretError::Unclosed)?;
            let name = after[..end].trim();
            let secret =
                self.list
                    .iter()
                    .find(|s| s.name == name)
                    .ok_or_else(|| SecretError::Unknown {
                        name: name.to_string(),
                        known: self.names().iter().map(|n| n.to_string()).collect(),
                    })?;
            if !secret.domains.is_empty() && !secret.domains.iter().any(|d| d.matches(host)) {
                return Err(SecretError::Elsewhere {
                    name: name.to_string(),
                    host: host.to_string(),
                    limits: (secret.domains.iter())
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            match &secret.codes {
                Some(codes) => out.push_str(&codes.current()),
                None => out.push_str(&secret.value),
            }
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// Every value to keep out of text, with its placeholder: each secret's
    /// value and, for a one-time code, every code given out; longest first,
    /// so that a value that contains another is replaced whole.
    ///
    /// Each value also as it reads in a URL (a form sent by GET, a link a
    /// script built): `p@ss word` is `p%40ss+word` in a query; and reversed,
    /// as a page's script (or a check's expression) may hand it back.
    fn values(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = Vec::new();
        for s in &self.list {
            let mut raw = vec![s.value.clone()];
            if let Some(codes) = &s.codes {
                raw.extend(codes.issued());
            }
            for value in raw {
                for encoded in encodings(&value) {
                    if encoded != value && !all.iter().any(|(v, _)| *v == encoded) {
                        all.push((encoded, s.placeholder()));
                    }
                }
                all.push((value, s.placeholder()));
            }
        }
        all.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        all
    }

    /// `text` with every secret value replaced by its placeholder.
    pub fn redact(&self, text: &str) -> String {
        replace_values(&self.values(), text)
    }

    /// `bytes` with every secret value replaced by its placeholder, for a
    /// body that is not text (an image, a file sent): the values as bytes.
    pub fn redact_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for (value, placeholder) in self.values() {
            let value = value.as_bytes();
            let mut kept = Vec::with_capacity(out.len());
            let mut rest = out.as_slice();
            while let Some(at) = rest.windows(value.len()).position(|w| w == value) {
                kept.extend_from_slice(&rest[..at]);
                kept.extend_from_slice(placeholder.as_bytes());
                rest = &rest[at + value.len()..];
            }
            kept.extend_from_slice(rest);
            out = kept;
        }
        out
    }

    /// Whether `text` holds a secret value.
    pub fn reveals(&self, text: &str) -> bool {
        self.values().iter().any(|(v, _)| text.contains(v))
    }

    /// `value` as JSON with every string redacted, object keys included, and
    /// nothing else: a secret that looks like a number (a PIN) never breaks
    /// the JSON around a number that holds its digits.
    pub fn redacted_json(&self, value: &impl Serialize) -> Result<Value, serde_json::Error> {
        let mut json = serde_json::to_value(value)?;
        let values = self.values();
        if !values.is_empty() {
            redact_strings(&values, &mut json);
        }
        Ok(json)
    }

    /// A copy of `value` with its strings redacted, to show or give back; an
    /// error when the copy no longer reads as a `T` (a secret that equals one
    /// of its words), so that the caller never falls back to the original.
    pub fn redacted<T: Serialize + DeserializeOwned>(
        &self,
        value: &T,
    ) -> Result<T, serde_json::Error> {
        serde_json::from_value(self.redacted_json(value)?)
    }
}

/// The forms a value takes where a page or a program writes it, besides
/// itself: in a form and in a link (percent-encoded), reversed, in base64
/// (standard and URL-safe, and as the middle of a longer base64 text, such
/// as `user:password` in a Basic authorization), in hex, and in HTML (its
/// special characters escaped, or every character as a numeric
/// reference).
pub fn encodings(value: &str) -> Vec<String> {
    let bytes = value.as_bytes();
    let mut out = vec![
        url::form_urlencoded::byte_serialize(bytes).collect(),
        utf8_percent_encode(value, URI_COMPONENT).to_string(),
        value.chars().rev().collect(),
        hex(bytes, false),
        hex(bytes, true),
        value
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;"),
        value.chars().map(|c| format!("&#{};", c as u32)).collect(),
        value
            .chars()
            .map(|c| format!("&#x{:x};", c as u32))
            .collect(),
    ];
    out.extend(base64_forms(bytes));
    out.retain(|f| f.len() >= MIN_LEN);
    out.dedup();
    out
}

fn hex(bytes: &[u8], upper: bool) -> String {
    bytes
        .iter()
        .map(|b| {
            if upper {
                format!("{b:02X}")
            } else {
                format!("{b:02x}")
            }
        })
        .collect()
}

/// `bytes` in base64 wherever they stand in a longer text: at each of the
/// three offsets a group of three bytes can start at, the characters that
/// the bytes alone decide (standard and URL-safe alphabets).
fn base64_forms(bytes: &[u8]) -> Vec<String> {
    use base64::Engine;
    let mut forms = Vec::new();
    for offset in 0..3usize {
        let mut shifted = vec![0u8; offset];
        shifted.extend_from_slice(bytes);
        let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&shifted);
        // A character covers bits [6p, 6p + 6): it is the value's alone
        // when those bits all are.
        let first = (8 * offset).div_ceil(6);
        let end = (8 * (offset + bytes.len())) / 6;
        // Shorter, a fragment would be found in any long base64 text (an
        // image in a page) and cut it.
        if let Some(middle) = encoded
            .get(first..end.min(encoded.len()))
            .filter(|m| m.len() >= 8)
        {
            forms.push(middle.to_string());
            forms.push(middle.replace('+', "-").replace('/', "_"));
        }
    }
    // The value alone, padded, as most encoders write it.
    forms.push(base64::engine::general_purpose::STANDARD.encode(bytes));
    forms
}

/// `text` with each of `values` replaced by its placeholder, also where it
/// reads as inside JSON (`"` and `\` escaped).
fn replace_values(values: &[(String, String)], text: &str) -> String {
    let mut out = text.to_string();
    for (value, placeholder) in values {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), placeholder);
        }
        let escaped = serde_json::to_string(value).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        if escaped != value && out.contains(escaped) {
            out = out.replace(escaped, placeholder);
        }
    }
    out
}

/// Replaces `values` in every string of `json` and in its objects' keys.
fn redact_strings(values: &[(String, String)], json: &mut Value) {
    match json {
        Value::String(text) => {
            if values.iter().any(|(v, _)| text.contains(v.as_str())) {
                *text = replace_values(values, text);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(values, v)),
        Value::Object(fields) => {
            *fields = std::mem::take(fields)
                .into_iter()
                .map(|(key, mut v)| {
                    redact_strings(values, &mut v);
                    (replace_values(values, &key), v)
                })
                .collect();
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// What `encodeURIComponent` leaves as it is; everything else is escaped.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(specs: &[&str]) -> Secrets {
        Secrets::new(specs.iter().map(|s| s.parse().unwrap()).collect()).unwrap()
    }

    #[test]
    fn a_one_time_code_types_the_code_of_the_moment_and_keeps_it_out_of_text() {
        let s = secrets(&["otp@bank.test=totp:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"]);
        let typed = s.fill("{{secret:otp}}", "bank.test").unwrap();
        assert_eq!(typed.len(), 6);
        assert!(typed.chars().all(|c| c.is_ascii_digit()));
        assert_eq!(
            s.redact(&format!("code {typed} sent")),
            "code {{secret:otp}} sent"
        );
        assert!(s.reveals(&typed));
        assert!(!s
            .redact("seed GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
            .contains("GEZD"));
        assert!(s.fill("{{secret:otp}}", "evil.test").is_err());
        let err = "otp=totp:hunter2!"
            .parse::<Secret>()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not a one-time code seed") && !err.contains("hunter2"),
            "{err}"
        );
        let uri = "otp=otpauth://totp/Bank:ada?secret=GEZDGNBVGY3TQOJQGEZD&issuer=Bank&digits=8";
        let typed = secrets(&[uri]).fill("{{secret:otp}}", "x").unwrap();
        assert_eq!(typed.len(), 8);
    }

    #[test]
    fn values_come_from_text_files_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pw");
        std::fs::write(&f, "from-a-file\n").unwrap();
        let s = secrets(&["a=plain-value", &format!("b=@{}", f.display())]);
        assert_eq!(
            s.fill("{{secret:a}}/{{secret:b}}", "x").unwrap(),
            "plain-value/from-a-file"
        );
        assert!("c=env:SEAMARK_NO_SUCH_VAR_42"
            .parse::<Secret>()
            .unwrap_err()
            .to_string()
            .contains("is not set"));
        assert!("bad name=x1234".parse::<Secret>().is_err());
        assert!("short=abc"
            .parse::<Secret>()
            .unwrap_err()
            .to_string()
            .contains("too short"));
        assert!("novalue".parse::<Secret>().is_err());
    }

    #[test]
    fn unknown_names_and_other_domains_are_refused_without_the_value() {
        let s = secrets(&["pw@*.bank.test=hunter2-long"]);
        assert_eq!(
            s.fill("{{secret:pw}}", "www.bank.test").unwrap(),
            "hunter2-long"
        );
        let err = s
            .fill("{{secret:pw}}", "evil.test")
            .unwrap_err()
            .to_string();
        assert!(err.contains("may not be typed on evil.test"), "{err}");
        assert!(!err.contains("hunter2"));
        assert_eq!(s.allowed_on("www.bank.test"), vec!["pw"]);
        assert!(s.allowed_on("evil.test").is_empty());
        assert_eq!(
            Secrets::placeholder_names("{{secret:pw}} and {{secret: pin }}"),
            vec!["pw", "pin"]
        );
        let err = s.fill("{{secret:token}}", "www.bank.test").unwrap_err();
        assert_eq!(
            err.to_string(),
            "there is no secret named token; the secrets are: pw"
        );
        assert!(format!("{s:?}").contains("pw") && !format!("{s:?}").contains("hunter2"));
    }

    #[test]
    fn redaction_replaces_every_value() {
        let s = secrets(&["pw=hunter2-long", "pin=hunter2-long-extended"]);
        assert_eq!(
            s.redact("a hunter2-long-extended b hunter2-long"),
            "a {{secret:pin}} b {{secret:pw}}"
        );
        assert!(s.reveals("xx hunter2-long"));
        let quoted = secrets(&["q=pa\"ss\\word"]);
        let json = serde_json::to_string(&serde_json::json!({"v": "pa\"ss\\word"})).unwrap();
        assert_eq!(quoted.redact(&json), r#"{"v":"{{secret:q}}"}"#);
        assert!(!s.reveals("nothing here"));
    }

    #[test]
    fn a_pin_among_the_numbers_of_a_record_leaves_its_json_whole() {
        let s = secrets(&["pin=4821"]);
        let record = serde_json::json!({
            "step": 1, "prompt_chars": 54821, "url": "https://bank.test/?pin=4821",
            "notes": ["typed 4821"], "4821": true,
        });
        let json = s.redacted_json(&record).unwrap();
        assert_eq!(json["prompt_chars"], 54821, "a number is left as it is");
        assert_eq!(json["url"], "https://bank.test/?pin={{secret:pin}}");
        assert_eq!(json["notes"][0], "typed {{secret:pin}}");
        assert_eq!(json["{{secret:pin}}"], true);
        // Redacted as a whole text, the same record would no longer be JSON.
        let text = s.redact(&record.to_string());
        assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
    }

    #[test]
    fn a_secret_is_redacted_as_it_reads_in_a_url_too() {
        let s = secrets(&["pw=p@ss word!"]);
        for url in [
            "https://a.test/login?pw=p%40ss+word%21",
            "https://a.test/login?pw=p%40ss%20word!",
        ] {
            assert!(s.reveals(url), "{url}");
            assert_eq!(
                s.redact(url),
                "https://a.test/login?pw={{secret:pw}}",
                "{url}"
            );
        }
    }
}
