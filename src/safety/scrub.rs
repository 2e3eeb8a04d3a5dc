//! Scrubbing what goes to the model: personal data in page text is replaced
//! by a tag (`[email]`, `[phone]`, `[card]`, `[token]`). Card numbers must pass
//! the Luhn check, so prices and dates stay.

use std::sync::OnceLock;

use regex::Regex;

struct Patterns {
    email: Regex,
    card: Regex,
    phone: Regex,
    token: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        // These are fixed, tested patterns: they always compile.
        email: Regex::new(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b").expect("a fixed pattern"),
        card: Regex::new(r"\b(?:\d[ -]?){12,18}\d\b").expect("a fixed pattern"),
        phone: Regex::new(r"(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}\b|\+\d{9,15}\b").expect("a fixed pattern"),
        token: Regex::new(r"\b[A-Za-z0-9_\-]{24,}\b").expect("a fixed pattern"),
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

/// `text` with emails, card numbers, phone numbers and token-like strings tagged.
pub fn scrub(text: &str) -> String {
    let p = patterns();
    let t = p.email.replace_all(text, "[email]");
    let t = p.card.replace_all(&t, |c: &regex::Captures<'_>| {
        if luhn(&c[0]) {
            "[card]".to_string()
        } else {
            c[0].to_string()
        }
    });
    let t = p.phone.replace_all(&t, |c: &regex::Captures<'_>| {
        let digits = c[0].chars().filter(char::is_ascii_digit).count();
        if (9..=15).contains(&digits) {
            "[phone]".to_string()
        } else {
            c[0].to_string()
        }
    });
    let t = p.token.replace_all(&t, |c: &regex::Captures<'_>| {
        let s = &c[0];
        let mixed =
            s.chars().any(|ch| ch.is_ascii_digit()) && s.chars().any(|ch| ch.is_ascii_alphabetic());
        if mixed {
            "[token]".to_string()
        } else {
            s.to_string()
        }
    });
    t.into_owned()
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
        for keep in [
            "Price $1,299.00 on 2025-03-31",
            "Order 12345",
            "Data Scientist · Acme Analytics · 72 LPA",
            "data-scientist-acme-analytics-bengaluru-india",
            "[12] link \"Item 3\"",
            "4111 1111 1111 1112",
        ] {
            assert_eq!(scrub(keep), keep);
        }
    }
}
