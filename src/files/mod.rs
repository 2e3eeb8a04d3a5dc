//! The person's files and the site's: what UPLOAD may attach (only files in
//! the folder the person chose with `--files`, never a path the model
//! makes up) and what a download becomes (a file of the run's, under a name
//! that cannot escape its folder, within a size cap, named in every result).
//!
//! Page text steers models, so a page can ask for `~/.ssh/id_rsa`: the
//! folder is the boundary, checked after every symlink is resolved.

pub mod downloads;
pub mod uploads;

pub use downloads::DownloadedFile;
pub use uploads::{ChosenFile, UploadError, UploadFolder};

/// A size as people read it: `36 B`, `12.3 KB`, `4.0 MB`.
pub fn size_text(bytes: u64) -> String {
    const KB: f64 = 1000.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else if b < KB * KB * KB {
        format!("{:.1} MB", b / (KB * KB))
    } else {
        format!("{:.1} GB", b / (KB * KB * KB))
    }
}

/// The nearest part of `path` that exists (itself, or a folder above it),
/// or `.` when none does: what is made at `path` is made below it.
pub fn nearest_existing(path: &std::path::Path) -> &std::path::Path {
    path.ancestors()
        .find(|p| !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_ok())
        .unwrap_or(std::path::Path::new("."))
}

/// The SHA-256 of a file's bytes, in hex, read in pieces (a file may be
/// large).
pub fn sha256_of(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        context.update(&buf[..n]);
    }
    Ok(context
        .finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_existing_part_of_a_path_is_where_folders_are_made() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(nearest_existing(&dir.path().join("a/b/c")), dir.path());
        let missing = std::path::Path::new("no-such-folder-of-seamark/runs");
        assert_eq!(nearest_existing(missing), std::path::Path::new("."));
    }

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(size_text(36), "36 B");
        assert_eq!(size_text(12_345), "12.3 KB");
        assert_eq!(size_text(4_000_000), "4.0 MB");
    }

    #[test]
    fn the_hash_is_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("abc");
        std::fs::write(&path, "abc").unwrap();
        assert_eq!(
            sha256_of(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
