//! The folder UPLOAD takes files from (`--files DIR`). The model names a
//! file by its name in the folder (`cv.pdf`, `photos/me.png`); a name that
//! is a path out of it (absolute, with `..`, or through a symbolic link
//! that leads elsewhere), a name that is not a regular file, or a file that
//! is too large is refused with the reason, and nothing is attached.

use std::path::{Component, Path, PathBuf};

use super::{sha256_of, size_text};
use crate::quote::quoted;

/// Largest file UPLOAD attaches: 100 MB.
pub const MAX_UPLOAD_BYTES: u64 = 100_000_000;

/// Most files the model is shown of the folder.
pub const MAX_LISTED: usize = 30;

/// Most files counted for the listing: past it, "over N more".
const MAX_WALKED: usize = 10_000;

/// Deepest folder level listed for the model (the folder itself is 1).
const LISTED_DEPTH: usize = 3;

/// The folder the person chose for uploads, resolved once.
#[derive(Debug, Clone)]
pub struct UploadFolder {
    /// The folder as given (shown in messages).
    given: PathBuf,
    /// The folder with every symbolic link resolved: a chosen file must
    /// resolve to a place under it.
    root: PathBuf,
}

/// A file UPLOAD may attach: its name in the folder, where it really is,
/// and what the journal may say of it (never its content).
#[derive(Debug, Clone, PartialEq)]
pub struct ChosenFile {
    /// The name the model gave, in the folder (`/` between parts).
    pub name: String,
    /// The file's resolved path (given to the browser).
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes, in hex.
    pub sha256: String,
}

impl ChosenFile {
    /// `"cv.pdf" (12.3 KB, sha256 1f2e3d4c…)`: the name quoted (see
    /// [`crate::quote`]).
    pub fn describe(&self) -> String {
        format!(
            "{} ({}, sha256 {})",
            quoted(&self.name),
            size_text(self.size),
            &self.sha256[..self.sha256.len().min(12)]
        )
    }
}

/// Why the uploads folder cannot be used, or UPLOAD may not attach a file.
/// Each message is told to the model as it is, or to the person.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// `--files` names no folder seamark can open.
    #[error("--files {}: {cause}", .dir.display())]
    Folder {
        /// The folder given.
        dir: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// `--files` names a file.
    #[error("--files {}: not a folder", .0.display())]
    NotFolder(PathBuf),
    /// UPLOAD named nothing.
    #[error("UPLOAD needs a file's name")]
    NoName,
    /// A name that leads out of the folder.
    #[error(
        "{name} is outside the folder the person gave for uploads (--files {}): UPLOAD takes \
         only a file's name in it",
        .folder.display()
    )]
    Outside {
        /// The name given.
        name: String,
        /// The folder.
        folder: PathBuf,
    },
    /// No such file in it.
    #[error("there is no file {name} in the folder given for uploads (--files {})", .folder.display())]
    Missing {
        /// The name given.
        name: String,
        /// The folder.
        folder: PathBuf,
    },
    /// A link that leads out of it.
    #[error(
        "{name} is a link that leads outside the folder the person gave for uploads (--files {})",
        .folder.display()
    )]
    LinkOutside {
        /// The name given.
        name: String,
        /// The folder.
        folder: PathBuf,
    },
    /// Not a regular file.
    #[error("{0} is not a regular file (a folder, a device or a pipe): UPLOAD attaches files")]
    NotFile(String),
    /// Larger than an upload may be.
    #[error("{name} is {}: larger than the {} an upload may be", size_text(*.size), size_text(MAX_UPLOAD_BYTES))]
    TooLarge {
        /// The name given.
        name: String,
        /// Its size in bytes.
        size: u64,
    },
    /// It cannot be read.
    #[error("{name} cannot be read: {cause}")]
    Unreadable {
        /// The name given.
        name: String,
        /// Why.
        cause: std::io::Error,
    },
}

impl UploadFolder {
    /// The folder `dir`, which must exist and be a folder.
    pub fn new(dir: &Path) -> Result<UploadFolder, UploadError> {
        let root = std::fs::canonicalize(dir).map_err(|cause| UploadError::Folder {
            dir: dir.to_path_buf(),
            cause,
        })?;
        if !root.is_dir() {
            return Err(UploadError::NotFolder(dir.to_path_buf()));
        }
        Ok(UploadFolder {
            given: dir.to_path_buf(),
            root,
        })
    }

    /// The folder as the person gave it.
    pub fn path(&self) -> &Path {
        &self.given
    }

    /// The folder with its links resolved (what a resumed run opens again).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file the model named, if UPLOAD may attach it; else why not.
    pub fn choose(&self, name: &str) -> Result<ChosenFile, UploadError> {
        let name = name.trim();
        // A name as the listing quotes it (`"cv.pdf"`, `"a\nb.txt"`) is
        // taken as the name it quotes.
        let unquoted = (name.len() > 1 && name.starts_with('"') && name.ends_with('"'))
            .then(|| serde_json::from_str::<String>(name).ok())
            .flatten();
        let name = unquoted.as_deref().unwrap_or(name);
        if name.is_empty() {
            return Err(UploadError::NoName);
        }
        let asked = Path::new(name);
        let outside = || UploadError::Outside {
            name: name.to_string(),
            folder: self.given.clone(),
        };
        for part in asked.components() {
            match part {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                    return Err(outside())
                }
            }
        }
        let real =
            std::fs::canonicalize(self.root.join(asked)).map_err(|_| UploadError::Missing {
                name: name.to_string(),
                folder: self.given.clone(),
            })?;
        if !real.starts_with(&self.root) {
            return Err(UploadError::LinkOutside {
                name: name.to_string(),
                folder: self.given.clone(),
            });
        }
        let unreadable = |cause| UploadError::Unreadable {
            name: name.to_string(),
            cause,
        };
        let meta = std::fs::metadata(&real).map_err(unreadable)?;
        if !meta.is_file() {
            return Err(UploadError::NotFile(name.to_string()));
        }
        if meta.len() > MAX_UPLOAD_BYTES {
            return Err(UploadError::TooLarge {
                name: name.to_string(),
                size: meta.len(),
            });
        }
        let sha256 = sha256_of(&real).map_err(unreadable)?;
        let name = asked
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("/");
        Ok(ChosenFile {
            name,
            path: real,
            size: meta.len(),
            sha256,
        })
    }

    /// The files the model may name, sorted, at most [`MAX_LISTED`], with
    /// their sizes: `"cv.pdf" (12.3 KB), "photos/me.png" (2.0 KB)`; then how
    /// many more there are (counted up to `MAX_WALKED`).
    pub fn listing(&self) -> String {
        let mut found = Vec::new();
        self.walk(&self.root, "", 1, &mut found);
        found.sort();
        let more = found.len().saturating_sub(MAX_LISTED);
        let more = if found.len() >= MAX_WALKED {
            format!("over {}", crate::figures::thousands(more as u64))
        } else {
            crate::figures::thousands(more as u64)
        };
        let mut text = found
            .iter()
            .take(MAX_LISTED)
            .map(|(name, size)| format!("{} ({})", quoted(name), size_text(*size)))
            .collect::<Vec<_>>()
            .join(", ");
        if found.is_empty() {
            text.push_str("(the folder is empty)");
        } else if found.len() > MAX_LISTED {
            text.push_str(&format!(" and {more} more"));
        }
        text
    }

    /// Collects the files UPLOAD would take under `dir`, named from the root.
    fn walk(&self, dir: &Path, prefix: &str, depth: usize, out: &mut Vec<(String, u64)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            let Ok(real) = std::fs::canonicalize(entry.path()) else {
                continue;
            };
            if !real.starts_with(&self.root) {
                continue;
            }
            match std::fs::metadata(&real) {
                Ok(m) if m.is_file() && m.len() <= MAX_UPLOAD_BYTES => out.push((name, m.len())),
                Ok(m) if m.is_dir() && depth < LISTED_DEPTH && real != self.root => {
                    self.walk(&real, &format!("{name}/"), depth + 1, out)
                }
                _ => {}
            }
            // A folder of millions of files is not counted to its end.
            if out.len() >= MAX_WALKED {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> (tempfile::TempDir, UploadFolder) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cv.txt"), "hello").unwrap();
        std::fs::create_dir(dir.path().join("photos")).unwrap();
        std::fs::write(dir.path().join("photos/me.png"), [1u8, 2, 3]).unwrap();
        let folder = UploadFolder::new(dir.path()).unwrap();
        (dir, folder)
    }

    #[test]
    fn a_file_in_the_folder_is_chosen_by_its_name() {
        let (_dir, folder) = folder();
        let cv = folder.choose("cv.txt").unwrap();
        assert_eq!((cv.name.as_str(), cv.size), ("cv.txt", 5));
        assert_eq!(
            cv.sha256,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(
            folder.choose("./photos/me.png").unwrap().name,
            "photos/me.png"
        );
        assert_eq!(folder.listing(), r#""cv.txt" (5 B), "photos/me.png" (3 B)"#);
        // A name as the listing quotes it is the name.
        assert_eq!(folder.choose(r#""cv.txt""#).unwrap().name, "cv.txt");
    }

    #[test]
    fn paths_out_of_the_folder_are_refused() {
        let (dir, folder) = folder();
        for name in ["/etc/passwd", "../cv.txt", "photos/../../x", "photos/.."] {
            let why = folder.choose(name).unwrap_err().to_string();
            assert!(
                why.contains("outside the folder") && why.contains("--files"),
                "{why}"
            );
        }
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("passwd")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
        for name in ["passwd", "etc/passwd"] {
            let why = folder.choose(name).unwrap_err().to_string();
            assert!(why.contains("leads outside"), "{why}");
        }
        assert!(!folder.listing().contains("passwd"), "{}", folder.listing());
        assert!(folder
            .choose("photos")
            .unwrap_err()
            .to_string()
            .contains("not a regular file"));
        assert!(folder
            .choose("nope.pdf")
            .unwrap_err()
            .to_string()
            .contains("there is no file"));
    }

    #[test]
    fn a_folder_that_is_not_there_is_an_error() {
        assert!(UploadFolder::new(Path::new("/no/such/folder")).is_err());
    }
}
