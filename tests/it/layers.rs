//! The house's layers: each module of `src/` imports only modules below it,
//! so that a newcomer can read them from the bottom up, and so does each
//! file of a folder among its siblings. A circle (the report taking the
//! journal's records from the agent that calls it; the node registry taking
//! the reader's script from the reader that stands on it; act's settle and
//! watch each taking the other's) fails here with the modules that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules each top-level module names as `crate::<module>`
/// in code (comments, doc comments included, do not count).
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a file");
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let text = std::fs::read_to_string(&file).expect("read a source file");
        let uses = graph.entry(module.clone()).or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (at, _) in code.match_indices("crate::") {
                let name: String = code[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    uses.insert(name);
                }
            }
        }
    }
    graph
}

/// A path of imports from `from` back to itself, if there is one.
fn circle_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().expect("a path is never empty");
        for next in graph.get(last).into_iter().flatten() {
            if next == from {
                let mut circle = path.clone();
                circle.push(from.to_string());
                return Some(circle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    None
}

/// For each folder of `src/`, the files (by name, `mod.rs` aside: it holds
/// what its files share) each file names as `super::<file>` or
/// `crate::<folder>::<file>`.
fn sibling_imports(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut folders = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(src) else {
        return folders;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let folder = entry.file_name().to_string_lossy().into_owned();
        let mut files = Vec::new();
        sources(&dir, &mut files);
        let names: BTreeSet<String> = files
            .iter()
            .filter(|f| f.parent() == Some(dir.as_path()))
            .filter_map(|f| Some(f.file_stem()?.to_string_lossy().into_owned()))
            .filter(|n| n != "mod")
            .collect();
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for name in &names {
            let text = std::fs::read_to_string(dir.join(format!("{name}.rs"))).expect("a file");
            let uses = graph.entry(name.clone()).or_default();
            for line in text.lines() {
                let code = line.split("//").next().unwrap_or("");
                for prefix in ["super::".to_string(), format!("crate::{folder}::")] {
                    for (at, _) in code.match_indices(&prefix) {
                        let next: String = code[at + prefix.len()..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if names.contains(&next) && next != *name {
                            uses.insert(next);
                        }
                    }
                }
            }
        }
        folders.insert(folder, graph);
    }
    folders
}

#[test]
fn no_file_of_a_folder_imports_a_sibling_that_imports_it_back() {
    let folders = sibling_imports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        folders.contains_key("act"),
        "the folders were found: {folders:?}"
    );
    let circles: Vec<String> = folders
        .iter()
        .flat_map(|(folder, graph)| {
            graph
                .keys()
                .filter_map(|f| circle_through(graph, f))
                .map(move |c| format!("{folder}: {}", c.join(" → ")))
        })
        .collect();
    assert!(
        circles.is_empty(),
        "import circles between the files of a folder:\n{}",
        circles.join("\n")
    );
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = imports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "the modules were found: {graph:?}");
    let circles: Vec<String> = graph
        .keys()
        .filter_map(|m| circle_through(&graph, m))
        .map(|c| c.join(" → "))
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// The journal's records sit below everything that writes or reads them:
/// records and the report name none of the executor, skills, the loop, batch
/// or MCP (records once took `BatchReport` from act and `StepMark` from
/// skill, and the report its outcomes from act).
#[test]
fn the_records_and_the_report_import_nothing_that_writes_them() {
    let graph = imports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let writers = ["act", "skill", "agent", "batch", "mcp", "cli"];
    for reader in ["records", "report", "journal"] {
        let above: Vec<&String> = graph
            .get(reader)
            .map(|uses| {
                uses.iter()
                    .filter(|m| writers.contains(&m.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        assert!(above.is_empty(), "{reader} imports {above:?}");
    }
}
