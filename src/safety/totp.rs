//! One-time codes (RFC 6238 TOTP) as secrets: `--secret NAME=totp:BASE32` or
//! `NAME=otpauth://totp/…?secret=…`. `{{secret:NAME}}` types the code of the
//! moment; the seed and every code given out are kept out of text like any
//! secret's value.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use totp_rs::{Algorithm, Builder, Totp};

/// Fewest bytes of seed taken: 80 bits, what many sites still issue (RFC
/// 4226 asks for 128 and recommends 160).
const MIN_SEED_BYTES: usize = 10;

/// A TOTP generator and the codes it gave out.
#[derive(Debug, Clone)]
pub struct OneTimeCodes {
    totp: Totp,
    /// The seed as given (base32), to keep out of text.
    pub(crate) seed: String,
    /// Every code handed out so far, to keep out of text.
    issued: Arc<Mutex<Vec<String>>>,
}

impl PartialEq for OneTimeCodes {
    fn eq(&self, other: &Self) -> bool {
        self.totp == other.totp
    }
}

impl Eq for OneTimeCodes {}

/// Why a text is no one-time code seed. A message never holds the seed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TotpError {
    /// An `otpauth:` text that does not parse.
    #[error("not an otpauth URI ({0})")]
    NotUri(String),
    /// An `otpauth://hotp/` (or other) URI.
    #[error("only otpauth://totp/ URIs are one-time codes by time")]
    NotTotp,
    /// A parameter of the URI that is not a number.
    #[error("{key}={value} is not a number{}", if *.key == "period" { " of seconds" } else { "" })]
    NotNumber {
        /// `digits` or `period`.
        key: &'static str,
        /// What it was.
        value: String,
    },
    /// An algorithm seamark does not know.
    #[error("algorithm {0} is not SHA1, SHA256 or SHA512")]
    Algorithm(String),
    /// A URI with no seed.
    #[error("the otpauth URI has no secret")]
    NoSeed,
    /// Codes of another length.
    #[error("a code has 6 to 8 digits, not {0}")]
    Digits(u8),
    /// A period of 0.
    #[error("the period must be 1 second or more")]
    Period,
    /// A seed that is not base32.
    #[error("the seed is not base32 (letters A to Z and digits 2 to 7)")]
    NotBase32,
    /// A seed too short.
    #[error("the seed is {0} bits, fewer than the {need} a one-time code needs", need = MIN_SEED_BYTES * 8)]
    Short(usize),
}

impl OneTimeCodes {
    /// From a base32 seed (SHA-1, 6 digits, 30 s), or an `otpauth://totp/`
    /// URI with its `secret` and optional `digits`, `period` and `algorithm`.
    /// Errors never hold the seed.
    pub fn parse(spec: &str) -> Result<OneTimeCodes, TotpError> {
        let spec = spec.trim();
        if spec.starts_with("otpauth://") {
            return Self::from_uri(spec);
        }
        Self::build(spec, Algorithm::SHA1, 6, 30)
    }

    fn from_uri(uri: &str) -> Result<OneTimeCodes, TotpError> {
        let url = url::Url::parse(uri).map_err(|e| TotpError::NotUri(e.to_string()))?;
        if url.host_str() != Some("totp") {
            return Err(TotpError::NotTotp);
        }
        let mut seed = None;
        let (mut algorithm, mut digits, mut period) = (Algorithm::SHA1, 6u8, 30u64);
        for (key, value) in url.query_pairs() {
            match key.to_ascii_lowercase().as_str() {
                "secret" => seed = Some(value.into_owned()),
                "digits" => {
                    digits = value.parse().map_err(|_| TotpError::NotNumber {
                        key: "digits",
                        value: value.to_string(),
                    })?
                }
                "period" => {
                    period = value.parse().map_err(|_| TotpError::NotNumber {
                        key: "period",
                        value: value.to_string(),
                    })?
                }
                "algorithm" => {
                    algorithm = match value.to_ascii_uppercase().as_str() {
                        "SHA1" => Algorithm::SHA1,
                        "SHA256" => Algorithm::SHA256,
                        "SHA512" => Algorithm::SHA512,
                        other => return Err(TotpError::Algorithm(other.to_string())),
                    }
                }
                _ => {}
            }
        }
        let seed = seed.ok_or(TotpError::NoSeed)?;
        Self::build(&seed, algorithm, digits, period)
    }

    fn build(
        seed: &str,
        algorithm: Algorithm,
        digits: u8,
        period: u64,
    ) -> Result<OneTimeCodes, TotpError> {
        if !(6..=8).contains(&digits) {
            return Err(TotpError::Digits(digits));
        }
        if period == 0 {
            return Err(TotpError::Period);
        }
        // Seeds are shown in groups, in either case, sometimes padded.
        let clean: String = seed
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-' && *c != '=')
            .collect::<String>()
            .to_ascii_uppercase();
        let bytes = totp_rs::Secret::try_from_base32(&clean).map_err(|_| TotpError::NotBase32)?;
        if bytes.as_ref().len() < MIN_SEED_BYTES {
            return Err(TotpError::Short(bytes.as_ref().len() * 8));
        }
        let totp = Builder::new()
            .with_algorithm(algorithm)
            .with_digits(digits)
            .with_step_duration(period)
            .with_secret(bytes)
            .build_noncompliant();
        Ok(OneTimeCodes {
            totp,
            seed: clean,
            issued: Arc::default(),
        })
    }

    /// The code at `unix_seconds`.
    pub fn code_at(&self, unix_seconds: u64) -> String {
        self.totp.generate(unix_seconds).to_string()
    }

    /// The code of this moment, remembered to keep it out of text.
    pub fn current(&self) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let code = self.code_at(now);
        if let Ok(mut issued) = self.issued.lock() {
            if !issued.contains(&code) {
                issued.push(code.clone());
            }
        }
        code
    }

    /// The codes given out so far.
    pub fn issued(&self) -> Vec<String> {
        self.issued.lock().map(|i| i.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238, appendix B: the seeds are "1234567890" repeated to the hash's
    /// size, the codes 8 digits, the period 30 s.
    #[test]
    fn the_rfc_6238_test_vectors() {
        let seed = |n: usize| {
            let bytes: Vec<u8> = b"1234567890".iter().copied().cycle().take(n).collect();
            totp_rs::Secret::from(bytes).to_base32()
        };
        let uri = |algorithm: &str, n: usize| {
            format!(
                "otpauth://totp/test?secret={}&digits=8&algorithm={algorithm}",
                seed(n)
            )
        };
        let vectors: [(u64, &str, &str, &str); 6] = [
            (59, "94287082", "46119246", "90693936"),
            (1111111109, "07081804", "68084774", "25091201"),
            (1111111111, "14050471", "67062674", "99943326"),
            (1234567890, "89005924", "91819424", "93441116"),
            (2000000000, "69279037", "90698825", "38618901"),
            (20000000000, "65353130", "77737706", "47863826"),
        ];
        let sha1 = OneTimeCodes::parse(&uri("SHA1", 20)).unwrap();
        let sha256 = OneTimeCodes::parse(&uri("SHA256", 32)).unwrap();
        let sha512 = OneTimeCodes::parse(&uri("SHA512", 64)).unwrap();
        for (t, a, b, c) in vectors {
            assert_eq!(sha1.code_at(t), a, "SHA1 at {t}");
            assert_eq!(sha256.code_at(t), b, "SHA256 at {t}");
            assert_eq!(sha512.code_at(t), c, "SHA512 at {t}");
        }
    }

    #[test]
    fn a_plain_seed_is_six_digits_every_thirty_seconds_and_codes_are_remembered() {
        let codes = OneTimeCodes::parse("gezd gnbv gy3t qojq gezd gnbv gy3t qojq").unwrap();
        assert_eq!(codes.code_at(59), "287082");
        let now = codes.current();
        assert_eq!(now.len(), 6);
        assert_eq!(codes.issued(), vec![now]);
    }

    #[test]
    fn bad_seeds_are_refused_without_showing_them() {
        let err = OneTimeCodes::parse("not base32 at all 1!")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not base32"), "{err}");
        assert!(!err.contains("at all"), "{err}");
        assert!(OneTimeCodes::parse("GEZDGNBV")
            .unwrap_err()
            .to_string()
            .contains("40 bits"));
        let err = OneTimeCodes::parse("otpauth://totp/x?secret=GEZDGNBVGY3TQOJQGEZD&digits=10")
            .unwrap_err()
            .to_string();
        assert!(err.contains("6 to 8 digits"), "{err}");
        assert!(OneTimeCodes::parse("otpauth://hotp/x?secret=GEZDGNBVGY3TQOJQGEZD").is_err());
        assert!(OneTimeCodes::parse("otpauth://totp/x?digits=6")
            .unwrap_err()
            .to_string()
            .contains("no secret"));
    }
}
