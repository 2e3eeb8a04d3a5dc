//! The tasks of a batch: one JSON object per line of a JSONL file, every line
//! checked before anything runs.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::check::Check;
use crate::safety::Secret;
use crate::schema::AnswerSchema;

/// One task of a batch (a line of `TASKS.jsonl`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Names the task in results and run directories: letters, digits, `.`,
    /// `_` and `-`, unique in the file.
    pub id: String,
    /// What to do, in plain words.
    pub task: String,
    /// Where to start: a URL, or a local HTML file (relative to the tasks file).
    pub url: String,
    /// How the run is scored; without one, by its own ending (done or not).
    #[serde(default)]
    pub check: Option<Check>,
    /// What must hold before the run's COMPLETE is taken, as `--expect-*`
    /// gives it: a run that ends done held them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Check>,
    /// Most steps, instead of the batch's `--max-steps`.
    #[serde(default)]
    pub max_steps: Option<usize>,
    /// Most seconds, instead of the batch's `--max-time`.
    #[serde(default)]
    pub max_time: Option<f64>,
    /// The JSON Schema the answer must follow (as `--schema` gives it).
    #[serde(default)]
    pub schema: Option<serde_json::Value>,
    /// Secrets of this task, in `--secret`'s form: `NAME=env:VAR`,
    /// `NAME=@FILE`, `NAME@example.com=…` (a value written here is a secret in
    /// a file: prefer `env:` or `@FILE`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// JavaScript run in the start page once it has loaded, before the first
    /// step: the state the task starts from (MiniWoB++ starts its episode so).
    #[serde(default)]
    pub setup: Option<String>,
    /// A recording (HAR 1.2, in the tasks file's folder) that answers the
    /// run instead of the network: a fixture (`seamark fixture`).
    #[serde(default)]
    pub site: Option<String>,
    /// The pages' clock fixed: `recording` (where the recording began) or a
    /// time in UTC.
    #[serde(default)]
    pub fixed_clock: Option<String>,
}

/// A line of a tasks file that cannot be run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// 1-based.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Why a tasks file cannot be run: every bad line, or no task at all.
#[derive(Debug, thiserror::Error)]
pub enum TasksError {
    /// The file could not be read.
    #[error("cannot read the tasks file {path}: {cause}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        cause: std::io::Error,
    },
    /// Lines that cannot be run.
    #[error("{file}: {} bad line{}, nothing was run:\n  {}", .errors.len(),
        if .errors.len() == 1 { "" } else { "s" },
        .errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n  "))]
    Lines {
        /// The file, as named.
        file: String,
        /// Each bad line.
        errors: Vec<LineError>,
    },
    /// No line holds a task.
    #[error("{0}: no tasks (one JSON object per line: {{\"id\": …, \"task\": …, \"url\": …}})")]
    Empty(String),
}

/// Which local files a tasks file's start URLs may open. A tasks file is
/// input from outside: a line's `file:///etc/passwd` would show the file to
/// the model as the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalFiles {
    /// Files in the tasks file's folder (or below it): pages written for
    /// the tasks, as seamark's own tasks files name them.
    InFolder,
    /// None: a public suite's tasks are on the web.
    Refused,
    /// Any: the person said so (`--local-files`).
    Any,
}

/// Reads a task file's text: a UTF-8 byte order mark at its start (as some
/// editors write) is no part of the first line.
pub(crate) fn read_text(path: &Path) -> Result<String, TasksError> {
    let text = std::fs::read_to_string(path).map_err(|source| TasksError::Read {
        path: path.display().to_string(),
        cause: source,
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Reads and checks a tasks file; relative file URLs are taken from its
/// folder, and local files are opened as `local` says.
pub fn read_tasks(path: &Path, local: LocalFiles) -> Result<Vec<TaskSpec>, TasksError> {
    let text = read_text(path)?;
    parse_tasks(
        &text,
        &path.display().to_string(),
        path.parent().unwrap_or(Path::new(".")),
        local,
    )
}

/// Parses and checks the lines of a tasks file (named `file` in messages,
/// its folder `base`); blank lines are skipped. Every line is checked, and
/// all the bad ones are told at once.
pub fn parse_tasks(
    text: &str,
    file: &str,
    base: &Path,
    local: LocalFiles,
) -> Result<Vec<TaskSpec>, TasksError> {
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let mut bad = |message: String| {
            errors.push(LineError { line: n, message });
        };
        let mut spec: TaskSpec = match serde_json::from_str(line) {
            Ok(s) => s,
            Err(e) => {
                bad(json_error(&e, line));
                continue;
            }
        };
        let problems = spec_problems(&mut spec, base, local);
        if let Some(&first) = ids.get(&spec.id) {
            bad(format!("id {:?} is used on line {first} already", spec.id));
        } else if !spec.id.is_empty() {
            ids.insert(spec.id.clone(), n);
        }
        if problems.is_empty() {
            tasks.push(spec);
        }
        for p in problems {
            bad(p);
        }
    }
    if !errors.is_empty() {
        return Err(TasksError::Lines {
            file: file.to_string(),
            errors,
        });
    }
    if tasks.is_empty() {
        return Err(TasksError::Empty(file.to_string()));
    }
    Ok(tasks)
}

/// A JSON error on one line, without serde's "line 1" (the line is told
/// apart) and with what the line starts with when it is no JSON at all.
fn json_error(e: &serde_json::Error, line: &str) -> String {
    let what = e.to_string();
    let what = match what.rsplit_once(" at line 1 column ") {
        Some((head, col)) => format!("{head} (column {col})"),
        None => what,
    };
    if e.is_syntax() || e.is_eof() {
        let start: String = line.trim().chars().take(40).collect();
        format!("not a JSON object: {what}: {start:?}")
    } else {
        what
    }
}

/// `url` when it is no local file, or one `local` lets a task open (in
/// `base`, the tasks file's folder, for [`LocalFiles::InFolder`]); else why not.
fn local_file_allowed(url: String, base: &Path, local: LocalFiles) -> Result<String, String> {
    let Some(path) = url::Url::parse(&url)
        .ok()
        .filter(|u| u.scheme() == "file")
        .map(|u| u.to_file_path().unwrap_or_default())
    else {
        return Ok(url);
    };
    let allow = "--local-files lets a task open any local file";
    let inside = || {
        let (Ok(file), Ok(folder)) = (path.canonicalize(), base.canonicalize()) else {
            return false;
        };
        file.starts_with(folder)
    };
    match local {
        LocalFiles::Any => Ok(url),
        LocalFiles::InFolder if inside() => Ok(url),
        LocalFiles::InFolder => Err(format!(
            "{url}: a task opens local files only in its tasks file's folder ({allow})"
        )),
        LocalFiles::Refused => Err(format!(
            "{url}: a suite's task opens no local file ({allow})"
        )),
    }
}

/// What keeps a parsed task from running; its file URL is made absolute.
/// What is wrong with a check, if anything: an empty one, or a regular
/// expression that is none.
fn check_problem(check: &Check) -> Option<String> {
    match check {
        Check::AnswerRegex(r) => regex::Regex::new(r).err().map(|e| {
            // The parser's message draws the pattern over lines; its last
            // line says what is wrong.
            let text = e.to_string();
            let why = text
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .trim()
                .trim_start_matches("error: ")
                .to_string();
            format!("answer_regex {r:?} is not a regular expression: {why}")
        }),
        c if c.wanted().trim().is_empty() => Some(format!("the {} check is empty", c.kind())),
        _ => None,
    }
}

/// A line's recording, as a path: a file in the tasks file's folder (or
/// below it) that reads as a HAR, unless local files are the person's to
/// allow (`--local-files`); a public suite names none.
fn recording_allowed(site: &str, base: &Path, local: LocalFiles) -> Result<String, String> {
    let path = base.join(site.trim());
    if local == LocalFiles::Refused {
        return Err("this suite's tasks are on the web: a recording is not read".into());
    }
    let found = std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if local == LocalFiles::InFolder {
        let folder = std::fs::canonicalize(base).map_err(|e| format!("{}: {e}", base.display()))?;
        if !found.starts_with(&folder) {
            return Err(format!(
                "{} is outside the tasks file's folder (--local-files allows it)",
                found.display()
            ));
        }
    }
    crate::site::read_har(&found).map_err(|e| e.to_string())?;
    Ok(found.to_string_lossy().into_owned())
}

fn spec_problems(spec: &mut TaskSpec, base: &Path, local: LocalFiles) -> Vec<String> {
    let mut out = Vec::new();
    if let Err(e) = valid_id(&spec.id) {
        out.push(e.to_string());
    }
    if spec.task.trim().is_empty() {
        out.push("the task is empty".into());
    }
    if spec.url.trim().is_empty() {
        out.push("the url is empty".into());
    } else {
        // A file beside the tasks file, as the file names it.
        let beside = base.join(spec.url.trim());
        let target = if !spec.url.contains(':') && beside.is_file() {
            beside.to_string_lossy().into_owned()
        } else {
            spec.url.clone()
        };
        match crate::start_url::to_url(&target) {
            Ok(u) => match local_file_allowed(u, base, local) {
                Ok(u) => spec.url = u,
                Err(e) => out.push(format!("bad url: {e}")),
            },
            Err(e) => out.push(format!("bad url: {e}")),
        }
    }
    for (what, check) in spec
        .check
        .iter()
        .map(|c| ("", c))
        .chain(spec.expect.iter().map(|c| ("expect: ", c)))
    {
        if let Some(e) = check_problem(check) {
            out.push(format!("{what}{e}"));
        }
    }
    if spec.max_steps == Some(0) {
        out.push("max_steps must be 1 or more".into());
    }
    if spec.max_time.is_some_and(|t| !(t > 0.0 && t.is_finite())) {
        out.push("max_time must be a number of seconds above 0".into());
    }
    if let Some(schema) = &spec.schema {
        if let Err(e) = AnswerSchema::new(schema.clone()) {
            out.push(format!("schema: {e}"));
        }
    }
    for s in &spec.secrets {
        if let Err(e) = s.parse::<Secret>() {
            out.push(format!("secrets: {e}"));
        }
    }
    if let Some(site) = spec.site.take() {
        match recording_allowed(&site, base, local) {
            Ok(path) => spec.site = Some(path),
            Err(e) => out.push(format!("site: {e}")),
        }
    }
    if let Some(clock) = &spec.fixed_clock {
        if let Err(e) = crate::site::ClockStart::parse(clock, spec.site.is_some()) {
            out.push(format!("fixed_clock: {e}"));
        }
    }
    out
}

/// Why a task id cannot name a directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// Nothing.
    #[error("the id is empty")]
    Empty,
    /// Too long a name.
    #[error("the id is longer than 100 characters")]
    TooLong,
    /// Other characters, or a leading dot.
    #[error("id {0:?} may hold only letters, digits, '.', '_' and '-' (and not start with '.')")]
    Characters(String),
}

/// Checks a task id: it names a directory, so it is kept plain.
pub fn valid_id(id: &str) -> Result<(), IdError> {
    if id.is_empty() {
        return Err(IdError::Empty);
    }
    if id.len() > 100 {
        return Err(IdError::TooLong);
    }
    if id.starts_with('.')
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(IdError::Characters(id.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<TaskSpec>, TasksError> {
        parse_tasks(text, "tasks.jsonl", Path::new("."), LocalFiles::InFolder)
    }

    #[test]
    fn a_lines_recording_is_read_from_the_folder_only_and_must_be_a_har() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("suite");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(dir.path().join("outside.har"), "{}").unwrap();
        std::fs::write(folder.join("broken.har"), "{\"log\": 1}").unwrap();
        let line = |site: &str, clock: &str| {
            format!(
                "{{\"id\":\"a\",\"task\":\"t\",\"url\":\"http://s.test/\",\"site\":{site:?}{clock}}}"
            )
        };
        let problems = |text: String, local: LocalFiles| match parse_tasks(
            &text,
            "tasks.jsonl",
            &folder,
            local,
        ) {
            Err(TasksError::Lines { errors, .. }) => errors
                .into_iter()
                .map(|e| e.message)
                .collect::<Vec<_>>()
                .join("; "),
            other => format!("{other:?}"),
        };
        let outside = problems(line("../outside.har", ""), LocalFiles::InFolder);
        assert!(
            outside.contains("outside the tasks file's folder"),
            "{outside}"
        );
        let web = problems(line("broken.har", ""), LocalFiles::Refused);
        assert!(web.contains("a recording is not read"), "{web}");
        let broken = problems(line("broken.har", ""), LocalFiles::InFolder);
        assert!(broken.contains("is not a HAR 1.2 recording"), "{broken}");
        let clock = problems(
            line("broken.har", ",\"fixed_clock\":\"soon\""),
            LocalFiles::InFolder,
        );
        assert!(clock.contains("fixed_clock: \"soon\" is not"), "{clock}");
    }

    fn errors(text: &str) -> Vec<String> {
        match parse(text) {
            Err(TasksError::Lines { errors, .. }) => errors.iter().map(|e| e.to_string()).collect(),
            other => panic!("expected bad lines, got {other:?}"),
        }
    }

    #[test]
    fn a_good_file_parses_with_every_check_kind() {
        let tasks = parse(
            r#"{"id": "a", "task": "t", "url": "http://x/", "check": {"url_contains": "/done"}}

{"id": "b", "task": "t", "url": "http://x/", "check": {"js": "1 + 1 == 2"}, "max_steps": 4}
{"id": "c", "task": "t", "url": "http://x/", "check": {"answer_regex": "^\\d+$"}, "secrets": ["pw=env:HOME"]}"#,
        )
        .unwrap();
        assert_eq!(tasks.len(), 3);
        assert_eq!(tasks[0].check, Some(Check::UrlContains("/done".into())));
        assert_eq!(tasks[1].max_steps, Some(4));
        assert_eq!(
            tasks[2].check.as_ref().map(Check::kind),
            Some("answer_regex")
        );
    }

    #[test]
    fn every_bad_line_is_told_with_its_number() {
        let errs = errors(
            "{\"id\": \"a\", \"task\": \"t\", \"url\": \"http://x/\"}\n\
             not json at all\n\
             {\"id\": \"b\", \"task\": \"t\"}\n\
             {\"id\": \"c\", \"task\": \"t\", \"url\": \"http://x/\", \"check\": {\"title_is\": \"x\"}}\n\
             {\"id\": \"a\", \"task\": \"t\", \"url\": \"http://x/\"}\n\
             {\"id\": \"d e\", \"task\": \"\", \"url\": \"http://x/\", \"check\": {\"answer_regex\": \"(\"}}\n",
        );
        assert_eq!(errs.len(), 7, "{errs:#?}");
        assert!(
            errs[0].starts_with("line 2: not a JSON object"),
            "{errs:#?}"
        );
        assert!(
            errs[1].starts_with("line 3: missing field `url`"),
            "{errs:#?}"
        );
        assert!(
            errs[2].starts_with("line 4: unknown variant `title_is`, expected one of"),
            "{errs:#?}"
        );
        assert!(errs[2].contains("`url_contains`"), "{errs:#?}");
        assert_eq!(errs[3], "line 5: id \"a\" is used on line 1 already");
        assert!(
            errs[4].starts_with("line 6: id \"d e\" may hold only"),
            "{errs:#?}"
        );
        assert_eq!(errs[5], "line 6: the task is empty");
        assert_eq!(
            errs[6],
            "line 6: answer_regex \"(\" is not a regular expression: unclosed group"
        );
    }

    #[test]
    fn an_unknown_field_is_refused_rather_than_ignored() {
        let errs = errors(r#"{"id": "a", "task": "t", "url": "http://x/", "chek": {"js": "1"}}"#);
        assert!(errs[0].contains("unknown field `chek`"), "{errs:#?}");
    }

    #[test]
    fn a_file_with_no_task_is_refused() {
        assert!(matches!(parse("\n  \n"), Err(TasksError::Empty(_))));
    }
}
