//! The README and `docs/` show commands; each must still parse. Every
//! `seamark …` they show (in a shell block, or as inline code) is run with
//! `--help` appended, which clap answers only once every argument before it
//! parsed, and every flag a synopsis names (`[--max-chars N]`) must be in its
//! subcommand's help.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The README and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is there")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The command lines a page shows: the lines of its shell blocks (a line
/// ending in `\` joined with the next) and its inline code that starts with
/// `seamark `.
fn shown_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut fence: Option<String> = None;
    let mut pending = String::new();
    let mut prose = String::new();
    for line in text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(rest.trim().to_string()),
            };
            continue;
        }
        match fence.as_deref() {
            Some("sh" | "bash" | "") => {
                let line = line.trim().trim_start_matches("$ ");
                match line.strip_suffix('\\') {
                    Some(head) => pending.push_str(head),
                    None => {
                        pending.push_str(line);
                        lines.push(std::mem::take(&mut pending));
                    }
                }
            }
            Some(_) => {}
            None => {
                prose.push_str(line);
                prose.push(' ');
            }
        }
    }
    // Inline code may break across lines: the prose is scanned whole.
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1 && span.starts_with("seamark ") {
            lines.push(span.to_string());
        }
    }
    lines
}

/// The binary's answer to these arguments: its exit status and stdout.
fn seamark(args: &[String]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_seamark"))
        .args(args)
        .env_remove("SEAMARK_MODEL")
        .output()
        .expect("the binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// What `seamark <path> --help` says, asked once per path.
struct Helps(BTreeMap<Vec<String>, String>);

impl Helps {
    fn of(&mut self, path: &[String]) -> &str {
        self.0.entry(path.to_vec()).or_insert_with(|| {
            let mut args = path.to_vec();
            args.push("--help".into());
            let (ok, text) = seamark(&args);
            assert!(ok, "`seamark {} --help` failed:\n{text}", path.join(" "));
            text
        })
    }

    /// The subcommands `seamark <path> --help` lists.
    fn subcommands(&mut self, path: &[String]) -> BTreeSet<String> {
        let help = self.of(path);
        let Some(listed) = help.split("Commands:").nth(1) else {
            return BTreeSet::new();
        };
        listed
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_string)
            .collect()
    }
}

/// A command as shown: the subcommand path, the words after it, and whether
/// it is a synopsis (it has a placeholder) rather than a command.
struct Shown {
    path: Vec<String>,
    rest: Vec<String>,
    synopsis: bool,
}

/// The `seamark` command in a shown line, if it has one: from the first
/// `seamark` followed by a subcommand (`claude mcp add seamark -- seamark
/// mcp …` holds one) to a comment, pipe or redirection.
fn command_in(line: &str, helps: &mut Helps) -> Option<Shown> {
    let words = shlex::split(line)?;
    let top = helps.subcommands(&[]);
    let start = (0..words.len())
        .find(|&i| words[i] == "seamark" && words.get(i + 1).is_some_and(|w| top.contains(w)))?;
    let words: Vec<String> = words[start + 1..]
        .iter()
        .take_while(|w| !matches!(w.as_str(), "|" | "&&" | ";" | ">" | "2>&1"))
        .cloned()
        .collect();
    let mut path = vec![words[0].clone()];
    while let Some(next) = words.get(path.len()) {
        if !helps.subcommands(&path).contains(next) {
            break;
        }
        path.push(next.clone());
    }
    let rest = words[path.len()..].to_vec();
    let synopsis = rest.iter().any(|w| is_placeholder(w));
    Some(Shown {
        path,
        rest,
        synopsis,
    })
}

/// A word that stands for what a person fills in: `<URL>`, `[--json]`,
/// `a | b`, `N`, `RUN_DIR`, `…`.
fn is_placeholder(word: &str) -> bool {
    word.starts_with('[')
        || word.starts_with('<')
        || word == "|"
        || word.contains('…')
        || word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The flags a synopsis names: `[--id ID | --section TEXT]` names two.
fn flags(words: &[String]) -> Vec<String> {
    words
        .iter()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
        .filter(|w| w.starts_with('-') && w.len() > 1)
        .map(|w| w.split('=').next().unwrap_or(w).to_string())
        .collect()
}

/// What is wrong with the `seamark` command in a shown line: `None` when
/// the line holds none, else each flag its help lacks or why it does not
/// parse.
fn problems(line: &str, helps: &mut Helps) -> Option<Vec<String>> {
    let shown = command_in(line, helps)?;
    let mut problems = Vec::new();
    if shown.synopsis {
        let help = helps.of(&shown.path).to_string();
        for flag in flags(&shown.rest) {
            let named = help
                .split(|c: char| c.is_whitespace() || c == ',' || c == '=')
                .any(|w| w == flag);
            if !named {
                problems.push(format!(
                    "`seamark {} --help` has no {flag}",
                    shown.path.join(" ")
                ));
            }
        }
    } else {
        let mut args = shown.path;
        args.extend(shown.rest);
        args.push("--help".into());
        let (ok, text) = seamark(&args);
        if !ok {
            problems.push(format!("it does not parse:\n{text}"));
        }
    }
    Some(problems)
}

#[test]
fn every_command_the_docs_show_still_parses() {
    let mut helps = Helps(BTreeMap::new());
    let mut failures = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("read a page");
        let name = page.file_name().unwrap_or_default().to_string_lossy();
        for line in shown_lines(&text) {
            let Some(found) = problems(&line, &mut helps) else {
                continue;
            };
            checked += 1;
            failures.extend(found.iter().map(|p| format!("{name}: `{line}`: {p}")));
        }
    }
    assert!(
        failures.is_empty(),
        "commands the docs show that no longer parse:\n{}",
        failures.join("\n")
    );
    // The pages show dozens: a scan that found few is broken.
    assert!(checked > 30, "only {checked} commands found in the docs");
}

/// The checker itself: a flag seamark lacks fails it, in a command and in a
/// synopsis, so that the test above cannot pass by checking nothing.
#[test]
fn a_flag_seamark_lacks_is_caught() {
    let mut helps = Helps(BTreeMap::new());
    let mut check = |line: &str| problems(line, &mut helps).expect("a seamark command");
    assert!(check("seamark read https://example.com --max-chars 200").is_empty());
    assert!(!check("seamark read https://example.com --no-such-flag").is_empty());
    assert!(check("seamark read <URL> [--max-chars N]").is_empty());
    assert!(!check("seamark read <URL> [--no-such-flag N]").is_empty());
}

/// The relative link targets of a Markdown page: `[text](target)`, without
/// the web's (`http…`, `mailto:`) and without an anchor.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or_default().trim();
        let external = target.contains("://") || target.starts_with("mailto:");
        if !target.is_empty() && !external && !target.contains(' ') {
            links.push(target.to_string());
        }
    }
    links
}

/// The repository stands alone: every link the README and docs/ give lands
/// on a file inside the repository (the design document once lived in
/// `../shared`, outside any clone).
#[test]
fn every_link_in_the_docs_points_inside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .expect("the repository's folder");
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("read a page");
        let folder = page.parent().expect("a page's folder");
        for link in relative_links(&text) {
            checked += 1;
            match folder.join(&link).canonicalize() {
                Ok(target) if target.starts_with(&root) => {}
                Ok(target) => broken.push(format!(
                    "{}: {link} is outside the repository ({})",
                    page.display(),
                    target.display()
                )),
                Err(e) => broken.push(format!("{}: {link}: {e}", page.display())),
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links that lead nowhere or outside:\n{}",
        broken.join("\n")
    );
    assert!(checked > 10, "only {checked} links found in the docs");
    assert_eq!(
        relative_links("[a](../x.md#top) [b](https://e.org)"),
        ["../x.md"]
    );
}

/// The files a folder's bullet of docs/layout.md names (`name.rs`,
/// `enumerate/head.js`, `report.css`, `page.html`…): from its line `- `src/folder/`…`
/// to the next bullet or paragraph.
fn named_in_bullets(page: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut named: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut folder: Option<String> = None;
    for line in page.lines() {
        if let Some(rest) = line.strip_prefix("- `src/") {
            folder = rest.split_once("/`").map(|(f, _)| f.to_string());
        } else if !line.starts_with("  ") {
            folder = None;
        }
        let Some(f) = &folder else { continue };
        for (i, code) in line.split('`').enumerate() {
            let is_file = [".rs", ".js", ".css", ".html"]
                .iter()
                .any(|e| code.ends_with(e));
            if i % 2 == 1 && is_file && !code.starts_with("src/") && !code.contains(' ') {
                named.entry(f.clone()).or_default().insert(code.to_string());
            }
        }
    }
    named
}

/// The layout page cannot drift from the tree: each folder of `src/` has a
/// bullet naming exactly its files (it once named `shrink` as a file and
/// missed target.rs, sheets.rs, recent.rs and fill.rs), and the page names
/// every top-level file as `src/name.rs`.
#[test]
fn the_layout_page_names_every_file_of_the_tree_and_no_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/layout.md")).expect("docs/layout.md");
    let named = named_in_bullets(&page);
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(root.join("src")).expect("src").flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !path.is_dir() {
            if !["lib.rs", "main.rs"].contains(&name.as_str())
                && !page.contains(&format!("`src/{name}`"))
            {
                wrong.push(format!("src/{name} is not named"));
            }
            continue;
        }
        let mut files = Vec::new();
        let mut dirs = vec![path.clone()];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).expect("a folder").flatten() {
                match e.path() {
                    p if p.is_dir() => dirs.push(p),
                    p => files.push(p),
                }
            }
        }
        let there: BTreeSet<String> = files
            .iter()
            .filter_map(|f| Some(f.strip_prefix(&path).ok()?.to_string_lossy().into_owned()))
            .filter(|f| f != "mod.rs")
            .collect();
        let mut said = named.get(&name).cloned().unwrap_or_default();
        said.remove("mod.rs");
        if !page.contains(&format!("- `src/{name}/`")) {
            wrong.push(format!("src/{name}/ has no bullet"));
        }
        for missing in there.difference(&said) {
            wrong.push(format!("src/{name}/{missing} is not named in its bullet"));
        }
        for gone in said.difference(&there) {
            wrong.push(format!("src/{name}/{gone} is named but is not there"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/layout.md and src/ differ:\n{}",
        wrong.join("\n")
    );
    assert!(named.len() > 10, "the bullets were not found: {named:?}");
}
