//! Text for a terminal. What a page, a model, a file name or a server says
//! is shown, never obeyed: a control character in it (the ESC that starts a
//! colour, title or clear-screen sequence, BEL, a carriage return that
//! overwrites the line) is written as its escape, `\u{1b}`.

use std::borrow::Cow;

/// `text` with each control character but newline and tab written as its
/// escape (C0 and C1 alike: U+009B starts a sequence as ESC `[` does).
pub fn inert(text: &str) -> Cow<'_, str> {
    let live = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(live) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if live(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `eprintln!`, its text made [`inert`].
macro_rules! tell {
    () => { eprintln!() };
    ($($arg:tt)*) => { eprintln!("{}", $crate::cli::terminal::inert(&format!($($arg)*))) };
}

/// `println!`, its text made [`inert`].
macro_rules! show {
    () => { println!() };
    ($($arg:tt)*) => { println!("{}", $crate::cli::terminal::inert(&format!($($arg)*))) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_that_retitles_and_clears_the_terminal_is_shown_inert() {
        let name = "\u{1b}]0;pwned-title\u{7}\u{1b}[2J\u{1b}[31mred\u{9b}1m\r";
        let shown = inert(name);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert_eq!(
            shown,
            "\\u{1b}]0;pwned-title\\u{7}\\u{1b}[2J\\u{1b}[31mred\\u{9b}1m\\u{d}"
        );
        assert_eq!(inert("two\nlines\tand a tab"), "two\nlines\tand a tab");
    }
}
