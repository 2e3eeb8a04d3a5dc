//! What a run left in its directory: its journal's records, the refusals
//! it recorded, its files.

use std::path::Path;

use serde_json::Value;

/// The journal's records of one kind.
pub fn records(dir: &Path, kind: &str) -> Vec<Value> {
    seamark::journal::read_records(dir)
        .expect("journal")
        .into_iter()
        .filter(|r| r["kind"] == kind)
        .collect()
}

/// The targets of every refusal a run recorded: during its commands, and
/// while its pages loaded between them.
pub fn blocked_targets(dir: &Path) -> Vec<String> {
    records(dir, "step")
        .iter()
        .flat_map(|s| {
            let mut all = s["report"]["blocked"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            all.extend(s["blocked"].as_array().cloned().unwrap_or_default());
            all
        })
        .filter_map(|b| b["target"].as_str().map(str::to_string))
        .collect()
}

/// Every file of a directory, as bytes.
pub fn all_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .expect("run dir")
        .filter_map(|e| e.ok())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect()
}

/// Standard base64, decoded (an image a model was sent).
pub fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("base64")
}
