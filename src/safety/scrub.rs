//! Scrubbing what goes to the model: personal data in page text is replaced
//! by a tag (`[email]`, `[phone]`, `[card]`, `[token]`). Card numbers must pass
//! the Luhn check, so prices and dates stay.
//!
//! The rule (docs/safety.md): what the model did not ask about is hidden;
//! what is part of the task reaches it.
//! - Card numbers and credentials are hidden everywhere. A credential is a
//!   long code in a credential's shape (an API key's known prefix, a JWT)
//!   or named as one just before it ("api key", "access token", "bearer").
//!   Any other code of letters and digits (a confirmation code, an order
//!   reference, a code a page asks to copy) is shown: it was hidden before
//!   for its length alone, and a task that asks to copy it could not.
//! - Emails and phone numbers are hidden in what is sent every step (the
//!   element list, the title), and shown in what the model asked to read
//!   (READ, a downloaded file): the address on a contact page, the phone
//!   number on a resume.

use std::sync::OnceLock;

use regex::Regex;

struct Patterns {
    email: Regex,
    card: Regex,
    phone: Regex,
    token: Regex,
    /// What a credential starts with: API keys' published prefixes, a JWT.
    credential_prefix: Regex,
    /// Words that name a credential just before it.
    credential_word: Regex,
}

/// One of the fixed patterns below.
#[allow(clippy::expect_used)] // Fixed and tested (every test of this module compiles them all).
fn fixed(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a fixed pattern compiles")
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        email: fixed(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b"),
        card: fixed(r"\b(?:\d[ -]?){12,18}\d\b"),
        phone: fixed(r"(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}\b|\+\d{9,15}\b"),
        token: fixed(r"\b[A-Za-z0-9_\-]{24,}\b"),
        credential_prefix: fixed(
            r"^(?:sk|pk|rk)_(?:live|test)_|^(?:sk-|ghp_|gho_|ghu_|ghs_|github_pat_|glpat-|xox[abpr]-|AKIA|ASIA|AIza|ya29\.|eyJ)",
        )
        ,
        credential_word: fixed(
            r"(?i)(?:api[ _-]?key|access[ _-]?token|auth[ _-]?token|secret[ _-]?key|client[ _-]?secret|private[ _-]?key|bearer|session[ _-]?id)\W{0,4}$",
        )
        ,
    })
}

fn luhn(digits: &str) -> bool {
    let ds: Vec<u32> = digits.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&ds.len()) {
        return false;
    }
    let sum: u32 = ds
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Text sent every step (the element list, the title): emails, card
/// numbers, phone numbers and credentials tagged.
pub fn scrub(text: &str) -> String {
    let p = patterns();
    let t = p.email.replace_all(text, "[email]");
    let t = p.phone.replace_all(&t, |c: &regex::Captures<'_>| {
        let digits = c[0].chars().filter(char::is_ascii_digit).count();
        if (9..=15).contains(&digits) && !luhn(&c[0]) {
            "[phone]".to_string()
        } else {
            c[0].to_string()
        }
    });
    scrub_reading(&t)
}

/// Text the model asked to read (READ, a downloaded file): card numbers
/// and credentials tagged; emails and phone numbers shown.
pub fn scrub_reading(text: &str) -> String {
    let p = patterns();
    let t = p.card.replace_all(text, |c: &regex::Captures<'_>| {
        if luhn(&c[0]) {
            "[card]".to_string()
        } else {
            c[0].to_string()
        }
    });
    let mut out = String::with_capacity(t.len());
    let mut last = 0;
    for m in p.token.find_iter(&t) {
        let code = m.as_str();
        let mixed = code.chars().any(|ch| ch.is_ascii_digit())
            && code.chars().any(|ch| ch.is_ascii_alphabetic());
        let line_before = t[..m.start()].rsplit('\n').next().unwrap_or_default();
        if mixed && (p.credential_prefix.is_match(code) || p.credential_word.is_match(line_before))
        {
            out.push_str(&t[last..m.start()]);
            out.push_str("[token]");
            last = m.end();
        }
    }
    out.push_str(&t[last..]);
    out
}

/// How often each tag replaced something in `text`, scrubbed as the
/// element list is: for the figures of docs/safety.md.
pub fn tag_counts(text: &str) -> [(&'static str, usize); 4] {
    let scrubbed = scrub(text);
    ["[email]", "[phone]", "[card]", "[token]"].map(|tag| {
        let before = text.matches(tag).count();
        (tag, scrubbed.matches(tag).count().saturating_sub(before))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn personal_data_is_tagged_and_ordinary_text_stays() {
        assert_eq!(
            scrub("write to ada.lovelace@example.org now"),
            "write to [email] now"
        );
        assert_eq!(scrub("card 4111 1111 1111 1111 ok"), "card [card] ok");
        assert_eq!(scrub("call +44 20 7946 0958"), "call [phone]");
        assert_eq!(scrub("call (555) 123-4567"), "call [phone]");
        assert_eq!(
            scrub("key sk_live_51HxQ2eLkd93JdkqP0aZ ok"),
            "key [token] ok"
        );
        assert_eq!(
            scrub("API key: 9f8a7b6c5d4e3f2a1b0c9d8e7f6a ok"),
            "API key: [token] ok"
        );
        for keep in [
            "Price $1,299.00 on 2025-03-31",
            "Order 12345",
            "Data Scientist · Acme Analytics · 72 LPA",
            "data-scientist-acme-analytics-bengaluru-india",
            "[12] link \"Item 3\"",
            "4111 1111 1111 1112",
            // A code the page asks to copy is part of the task.
            "Type this code: X7K9M2P4Q8R1T6V3W5Y0Z2A4B6",
        ] {
            assert_eq!(scrub(keep), keep);
        }
    }

    #[test]
    fn what_the_model_asked_to_read_keeps_emails_and_phones_not_cards() {
        let resume = "judy.hopps@zootopia.gov (555) 123-4567 card 4111 1111 1111 1111";
        assert_eq!(
            scrub_reading(resume),
            "judy.hopps@zootopia.gov (555) 123-4567 card [card]"
        );
        assert_eq!(scrub(resume), "[email] [phone] card [card]");
    }
}
