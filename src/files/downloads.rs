//! What a download becomes: a file of the run's under a name the site
//! cannot steer out of its folder, and a record of it for every result.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::size_text;

/// Longest file name kept, in characters (the extension is kept whole).
const MAX_NAME_CHARS: usize = 100;

/// A file a download saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DownloadedFile {
    /// Its name in the downloads folder, after sanitizing.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its type, from its name (`text/csv`).
    pub mime: String,
    /// The SHA-256 of its bytes, in hex.
    pub sha256: String,
    /// Where it came from.
    pub url: String,
}

impl DownloadedFile {
    /// `"report.csv" (36 B, text/csv)`: what the model is told, the name
    /// quoted (see [`crate::quote`]).
    pub fn describe(&self) -> String {
        format!(
            "{} ({}, {})",
            crate::quote::quoted(&self.name),
            size_text(self.size),
            self.mime
        )
    }

    /// Whether its text may be read (CSV, JSON, plain text, Markdown…).
    pub fn is_text(&self) -> bool {
        self.mime.starts_with("text/") || self.mime == "application/json"
    }

    /// Whether it is an image the model can be shown (PNG, JPEG, GIF, WebP).
    pub fn is_image(&self) -> bool {
        matches!(
            self.mime.as_str(),
            "image/png" | "image/jpeg" | "image/gif" | "image/webp"
        )
    }
}

/// A name the site suggested, made safe to save: its last part only (no
/// folder separators), no control characters nor characters file systems
/// refuse, no leading dot (no hidden file, no `..`), at most
/// `MAX_NAME_CHARS` characters; `download` when nothing is left.
pub fn safe_file_name(suggested: &str) -> String {
    let last = suggested.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control())
        .map(|c| match c {
            ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c => c,
        })
        .collect();
    let cleaned = cleaned
        .trim()
        .trim_start_matches(['.', ' '])
        .trim_end_matches(['.', ' ']);
    let mut name = cleaned.to_string();
    if name.chars().count() > MAX_NAME_CHARS {
        let (stem, ext) = split_extension(&name);
        let keep = MAX_NAME_CHARS.saturating_sub(ext.chars().count());
        name = stem.chars().take(keep).collect::<String>() + ext;
    }
    if name.is_empty() {
        "download".into()
    } else {
        name
    }
}

/// `report.csv` → (`report`, `.csv`); a name without a dot has no extension.
fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= 10 => name.split_at(i),
        _ => (name, ""),
    }
}

/// A path in `dir` for `name` that no file has yet: `report.csv`, then
/// `report (2).csv`, `report (3).csv`…
pub fn unique_path(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = split_extension(name);
    (2..)
        .map(|n| dir.join(format!("{stem} ({n}){ext}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

/// The type a file's name says it holds (by its extension, as
/// `mime_guess` knows them), `application/octet-stream` when it says none.
pub fn mime_of(name: &str) -> &'static str {
    mime_guess::from_path(name)
        .first_raw()
        .unwrap_or("application/octet-stream")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_site_cannot_leave_the_folder_nor_hide() {
        for (suggested, safe) in [
            ("report.csv", "report.csv"),
            ("../../x", "x"),
            ("..\\..\\boot.ini", "boot.ini"),
            (".bashrc", "bashrc"),
            ("..", "download"),
            ("", "download"),
            ("a\u{7}b\nc.txt", "abc.txt"),
            ("what?.txt", "what_.txt"),
        ] {
            assert_eq!(safe_file_name(suggested), safe, "{suggested:?}");
        }
        let long = format!("{}.csv", "a".repeat(300));
        let safe = safe_file_name(&long);
        assert_eq!(safe.chars().count(), MAX_NAME_CHARS);
        assert!(safe.ends_with(".csv"));
    }

    #[test]
    fn a_name_taken_gets_a_number() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(unique_path(dir.path(), "r.csv"), dir.path().join("r.csv"));
        std::fs::write(dir.path().join("r.csv"), "").unwrap();
        assert_eq!(
            unique_path(dir.path(), "r.csv"),
            dir.path().join("r (2).csv")
        );
    }

    #[test]
    fn types_come_from_the_name() {
        assert_eq!(mime_of("a.CSV"), "text/csv");
        assert_eq!(mime_of("noext"), "application/octet-stream");
    }
}
