//! A skill as code a team owns: a Playwright script, in Python or
//! TypeScript, that does the skill's steps without seamark.
//!
//! The skill's parameters become the script's arguments (the learned
//! values their defaults); a `{{secret:NAME}}` is read from the environment
//! variable `SECRET_<NAME>` when the script runs, and never written into
//! it; each target becomes a locator by its role and name (else its text),
//! its rank among equals, and its frame; the learned run's checks become
//! assertions at the end. A step the skill leaves to the model (READ,
//! ANSWER, a point on no element) is a `TODO` that fails when reached.
//!
//! Expressions are written once for both languages: a string literal in
//! JSON's syntax, `args.name` and `secret("NAME")` read the same in Python
//! and in TypeScript.

use std::path::Path;

use super::script::{comment_words, lit, python, typescript};
use super::{template, Action, Skill, Target, Within};
use crate::check::Check;
use crate::commands::{Command, ScrollDirection, Spot};

/// The language of an exported script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Python, with `playwright.sync_api`.
    Python,
    /// TypeScript, with the `playwright` package.
    TypeScript,
}

impl std::str::FromStr for Lang {
    type Err = crate::errors::UnknownWord;
    fn from_str(s: &str) -> Result<Lang, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "python" | "py" => Ok(Lang::Python),
            "typescript" | "ts" => Ok(Lang::TypeScript),
            other => Err(crate::errors::UnknownWord::new(
                other,
                "--lang",
                "python or typescript",
            )),
        }
    }
}

/// ARIA roles Playwright's `get_by_role` finds; any other role seamark
/// gives (a clickable `div`) is found by its text.
const ARIA_ROLES: [&str; 22] = [
    "button",
    "checkbox",
    "combobox",
    "link",
    "listbox",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "radio",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "textbox",
    "treeitem",
    "gridcell",
    "cell",
    "row",
    "heading",
    "img",
];

impl Lang {
    /// A method's name: Playwright's Python API is snake_case, its
    /// JavaScript API camelCase.
    fn method(self, snake: &str) -> String {
        match self {
            Lang::Python => snake.to_string(),
            Lang::TypeScript => {
                let mut out = String::new();
                let mut up = false;
                for c in snake.chars() {
                    if c == '_' {
                        up = true;
                    } else if up {
                        out.extend(c.to_uppercase());
                        up = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    /// A call of `method` on `on`, awaited in TypeScript.
    fn call(self, on: &str, method: &str, args: &str) -> String {
        let call = format!("{on}.{}({args})", self.method(method));
        match self {
            Lang::Python => call,
            Lang::TypeScript => format!("await {call}"),
        }
    }

    /// Keyword options: `, name="x", exact=True` or `, { name: "x", exact: true }`.
    fn options(self, pairs: &[(&str, String)]) -> String {
        if pairs.is_empty() {
            return String::new();
        }
        match self {
            Lang::Python => pairs
                .iter()
                .map(|(k, v)| format!(", {k}={}", py_value(v)))
                .collect(),
            Lang::TypeScript => format!(
                ", {{ {} }}",
                pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {v}", self.method(k)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn comment(self) -> &'static str {
        match self {
            Lang::Python => "#",
            Lang::TypeScript => "//",
        }
    }

    /// A statement line (TypeScript's end in `;`).
    fn stmt(self, expr: &str) -> String {
        match self {
            Lang::Python => expr.to_string(),
            Lang::TypeScript => format!("{expr};"),
        }
    }

    /// A statement line that calls `method` on `on`.
    fn line(self, on: &str, method: &str, args: &str) -> String {
        self.stmt(&self.call(on, method, args))
    }
}

/// `true`/`false` as Python writes them; anything else as it is.
fn py_value(v: &str) -> &str {
    match v {
        "true" => "True",
        "false" => "False",
        other => other,
    }
}

/// Python's keywords: no attribute may be named so (`args.from` is a
/// syntax error).
const PYTHON_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The script's own options, which no parameter may take.
const OWN_OPTIONS: [&str; 5] = ["url", "files", "headful", "timeout", "help"];

/// A parameter's name in a script, the same in both languages (its flag
/// `--NAME` and `args.NAME`): a skill's parameter is a lower-case letter,
/// then letters, digits and `_` (Skill::check), so only a keyword or one of
/// the script's own options needs a change: an `_` after it.
fn script_param(name: &str) -> String {
    if PYTHON_KEYWORDS.contains(&name) || OWN_OPTIONS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// A text that may hold `{{param}}` and `{{secret:NAME}}`, as an
/// expression: literals, `args.param` and `secret("NAME")` joined by `+`.
fn text_expr(text: &str, params: &[String]) -> String {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let inner = rest[start + 2..start + len].trim();
        let part = if let Some(name) = inner.strip_prefix("secret:") {
            Some(format!("secret({})", lit(name.trim())))
        } else if params.iter().any(|p| p == inner) {
            Some(format!("args.{}", script_param(inner)))
        } else {
            None
        };
        match part {
            Some(part) => {
                if start > 0 {
                    parts.push(lit(&rest[..start]));
                }
                parts.push(part);
            }
            None => parts.push(lit(&rest[..start + len + 2])),
        }
        rest = &rest[start + len + 2..];
    }
    if !rest.is_empty() || parts.is_empty() {
        parts.push(lit(rest));
    }
    parts.join(" + ")
}

/// The locator of a target: by role and name (else its text), its rank
/// among equals, in its frame.
fn locator(lang: Lang, t: &Target) -> Result<String, String> {
    let root = if t.frame > 0 {
        format!(
            "page.{}(\"iframe\").nth({})",
            lang.method("frame_locator"),
            t.frame - 1
        )
    } else {
        "page".to_string()
    };
    let exact = ("exact", "true".to_string());
    let by = if ARIA_ROLES.contains(&t.role.as_str()) && !t.name.trim().is_empty() {
        format!(
            "{root}.{}({}{})",
            lang.method("get_by_role"),
            lit(&t.role),
            lang.options(&[("name", lit(&t.name)), exact])
        )
    } else if ARIA_ROLES.contains(&t.role.as_str()) {
        format!("{root}.{}({})", lang.method("get_by_role"), lit(&t.role))
    } else if !t.name.trim().is_empty() {
        format!(
            "{root}.{}({}{})",
            lang.method("get_by_text"),
            lit(&t.name),
            lang.options(&[exact])
        )
    } else {
        return Err(format!(
            "a {} with no name{} has no locator",
            t.role,
            t.hint
                .as_deref()
                .map(|h| format!(" (it looked like {h:?})"))
                .unwrap_or_default()
        ));
    };
    Ok(if t.equals > 1 {
        format!("{by}.nth({})", t.rank.saturating_sub(1))
    } else {
        by
    })
}

/// A point in a target's box, as Playwright's `position` option.
fn position(lang: Lang, within: &Within) -> (&'static str, String) {
    let (x, y) = (within.x * within.width, within.y * within.height);
    (
        "position",
        match lang {
            Lang::Python => format!("{{\"x\": {x:.1}, \"y\": {y:.1}}}"),
            Lang::TypeScript => format!("{{ x: {x:.1}, y: {y:.1} }}"),
        },
    )
}

/// What the script does for one of the skill's commands: its lines.
fn action_lines(lang: Lang, action: &Action, params: &[String]) -> Result<Vec<String>, String> {
    let command = action.parse(1).map_err(|e| e.to_string())?;
    if let Some(lines) = page_lines(lang, &command, params) {
        return Ok(lines);
    }
    let target = action
        .target
        .as_ref()
        .map(|t| locator(lang, t))
        .transpose()?;
    let on = |what: &str| {
        target
            .clone()
            .ok_or_else(|| format!("{what} has no target"))
    };
    // A call's options, with the point within the target if there is one,
    // as its arguments (the leading ", " left out).
    let at = |mut pairs: Vec<(&str, String)>| {
        pairs.extend(action.within.as_ref().map(|w| position(lang, w)));
        lang.options(&pairs)
            .get(2..)
            .unwrap_or_default()
            .to_string()
    };
    let line = |on: &str, method: &str, args: &str| lang.line(on, method, args);
    let text = |t: &str| text_expr(t, params);
    Ok(match command {
        Command::Click { .. } => vec![line(&on("CLICK")?, "click", "")],
        Command::ClickAt { .. } => {
            vec![line(&on("a click at a point")?, "click", &at(vec![]))]
        }
        Command::Type { text: t, .. } => vec![line(&on("TYPE")?, "fill", &text(&t))],
        Command::TypeAt { text: t, .. } => {
            let l = on("TYPE at a point")?;
            vec![
                line(&l, "click", &at(vec![])),
                line("page.keyboard", "type", &text(&t)),
            ]
        }
        Command::Clear { .. } => vec![line(&on("CLEAR")?, "clear", "")],
        Command::Select { option, .. } => {
            vec![lang.stmt(&match lang {
                Lang::Python => format!("choose({}, {})", on("SELECT")?, text(&option)),
                Lang::TypeScript => format!("await choose({}, {})", on("SELECT")?, text(&option)),
            })]
        }
        Command::Hover { .. } => vec![line(&on("HOVER")?, "hover", "")],
        Command::HoverAt { .. } => vec![line(&on("HOVER at a point")?, "hover", &at(vec![]))],
        Command::RightClick { on: spot } | Command::DoubleClick { on: spot }
            if matches!(spot, Spot::At(_)) && action.within.is_none() =>
        {
            return Err("a point on no element is the model's".into())
        }
        Command::RightClick { .. } => {
            let opts = at(vec![("button", lit("right"))]);
            vec![line(&on("RIGHT_CLICK")?, "click", &opts)]
        }
        Command::DoubleClick { .. } => {
            vec![line(&on("DOUBLE_CLICK")?, "dblclick", &at(vec![]))]
        }
        Command::Hold { seconds, .. } => vec![
            line(&on("HOLD")?, "hover", ""),
            line("page.mouse", "down", ""),
            pause(lang, seconds),
            line("page.mouse", "up", ""),
        ],
        Command::Scroll { id: Some(_), .. } => {
            vec![line(&on("SCROLL")?, "scroll_into_view_if_needed", "")]
        }
        Command::Upload { names, .. } => {
            let files: Vec<String> = names
                .iter()
                .map(|n| format!("files_path({})", lit(n)))
                .collect();
            vec![line(
                &on("UPLOAD")?,
                "set_input_files",
                &format!("[{}]", files.join(", ")),
            )]
        }
        Command::Complete { .. } => Vec::new(),
        other => return Err(format!("{} is the model's to do", verb(&other))),
    })
}

/// What the script does for a command on the page as a whole (no target):
/// its lines, or `None` for a command on an element.
fn page_lines(lang: Lang, command: &Command, params: &[String]) -> Option<Vec<String>> {
    let key_lit = match command {
        Command::Press { key, .. } => lit(&key.to_string()),
        _ => String::new(),
    };
    Some(match command {
        Command::Scroll {
            id: None,
            direction,
        }
        | Command::ScrollAt { direction, .. } => {
            let (dx, dy) = match direction {
                ScrollDirection::Up => (0, -600),
                ScrollDirection::Down => (0, 600),
                ScrollDirection::Left => (-600, 0),
                ScrollDirection::Right => (600, 0),
            };
            vec![lang.line("page.mouse", "wheel", &format!("{dx}, {dy}"))]
        }
        Command::Press { hold: None, .. } => {
            vec![lang.line("page.keyboard", "press", &key_lit)]
        }
        Command::Press { hold: Some(s), .. } => vec![
            lang.line("page.keyboard", "down", &key_lit),
            pause(lang, *s),
            lang.line("page.keyboard", "up", &key_lit),
        ],
        Command::Fetch { url } => vec![lang.line("page", "goto", &text_expr(url, params))],
        Command::Back => vec![lang.line("page", "go_back", "")],
        Command::Wait { seconds } => vec![pause(lang, *seconds)],
        _ => return None,
    })
}

/// A line that waits `seconds`.
fn pause(lang: Lang, seconds: f64) -> String {
    lang.line(
        "page",
        "wait_for_timeout",
        &format!("{:.0}", seconds * 1000.0),
    )
}

/// A command's verb, for a TODO.
fn verb(command: &Command) -> String {
    serde_json::to_value(command)
        .ok()
        .and_then(|v| v["command"].as_str().map(str::to_ascii_uppercase))
        .unwrap_or_else(|| "this command".into())
}

/// A check of the learned run as an assertion at the end, or a TODO for
/// one about the answer (there is no answer without the model).
fn assertion(lang: Lang, check: &Check) -> String {
    let want = lit(check.wanted());
    let (cond, what) = match (check, lang) {
        (Check::UrlContains(_), Lang::Python) => (format!("{want} in page.url"), "the URL"),
        (Check::UrlContains(_), Lang::TypeScript) => {
            (format!("page.url().includes({want})"), "the URL")
        }
        (Check::TextContains(_), Lang::Python) => (
            format!("{want}.lower() in page.inner_text(\"body\").lower()"),
            "the page's text",
        ),
        (Check::TextContains(_), Lang::TypeScript) => (
            format!(
                "(await page.innerText(\"body\")).toLowerCase().includes({want}.toLowerCase())"
            ),
            "the page's text",
        ),
        (Check::Js(_), Lang::Python) => (format!("page.evaluate({want})"), "the expression"),
        (Check::Js(_), Lang::TypeScript) => {
            (format!("await page.evaluate({want})"), "the expression")
        }
        (Check::AnswerContains(_) | Check::AnswerRegex(_), _) => {
            return format!(
                "{} the run's answer was checked ({} {}): a script gives no answer",
                lang.comment(),
                check.kind(),
                comment_words(check.wanted())
            )
        }
    };
    let message = lit(&format!("{what} should hold {}", check.wanted()));
    match lang {
        Lang::Python => format!("assert {cond}, {message}"),
        Lang::TypeScript => format!("if (!({cond})) throw new Error({message});"),
    }
}

/// What an export knows of the run the skill was learned from.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// The parameters' values in the learned task.
    pub values: template::Params,
    /// The checks the learned run had to pass.
    pub checks: Vec<Check>,
}

impl Learned {
    /// Read from the skill's last run directory, when it is still there.
    pub fn of(skill: &Skill) -> Learned {
        let Ok(records) = crate::journal::read_records(Path::new(&skill.learned_from)) else {
            return Learned::default();
        };
        let Some(start) = records.iter().find(|r| r["kind"] == "start") else {
            return Learned::default();
        };
        let values = template::Matcher::new(&skill.task)
            .ok()
            .and_then(|m| m.matches(start["task"].as_str().unwrap_or_default()))
            .unwrap_or_default();
        let checks = serde_json::from_value(start["policy"]["expect"].clone()).unwrap_or_default();
        Learned { values, checks }
    }
}

/// The learned run's checks as assertions on the page.
fn checks(lang: Lang, learned: &Learned, body: &mut Vec<String>) {
    if learned.checks.is_empty() {
        return;
    }
    body.push(String::new());
    body.push(format!("{} the learned run's checks", lang.comment()));
    body.push(lang.stmt(&lang.call("page", "wait_for_load_state", "")));
    body.extend(learned.checks.iter().map(|ch| assertion(lang, ch)));
}

/// The skill as a Playwright script in `lang`.
pub fn export(skill: &Skill, lang: Lang, learned: &Learned) -> String {
    let mut body = Vec::new();
    let c = lang.comment();
    for (i, step) in skill.steps.iter().enumerate() {
        body.push(String::new());
        body.push(format!(
            "{c} step {} · {}",
            i + 1,
            comment_words(&step.page)
        ));
        for action in &step.actions {
            if let Some(t) = &action.target {
                if !t.near.is_empty() {
                    body.push(format!("{c} near {}", comment_words(&t.near.join(", "))));
                }
            }
            match action_lines(lang, action, &skill.params) {
                Ok(lines) => body.extend(lines),
                Err(why) => body.push(lang.stmt(&format!(
                    "todo({})",
                    lit(&format!("{}: {why}", action.command))
                ))),
            }
        }
        let last = i + 1 == skill.steps.len();
        if last {
            // The final page is checked before the model's last word on it.
            checks(lang, learned, &mut body);
        }
        if let Some(why) = &step.then_model {
            body.push(lang.stmt(&format!(
                "todo({})",
                lit(&format!("the model went on here: {why}"))
            )));
        }
    }
    let args: Vec<(String, Option<String>)> = skill
        .params
        .iter()
        .map(|p| (script_param(p), learned.values.get(p).cloned()))
        .collect();
    match lang {
        Lang::Python => python(skill, &args, &body),
        Lang::TypeScript => typescript(skill, &args, &body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_with_parameters_and_secrets_is_one_expression_in_both_languages() {
        let params = vec!["subject".to_string()];
        assert_eq!(
            text_expr("Re: {{subject}}!", &params),
            "\"Re: \" + args.subject + \"!\""
        );
        assert_eq!(text_expr("{{secret:pw}}", &params), "secret(\"pw\")");
        assert_eq!(text_expr("{{other}}", &params), "\"{{other}}\"");
        assert_eq!(text_expr("", &params), "\"\"");
    }

    #[test]
    fn a_name_with_a_line_break_stays_in_its_comment() {
        let named = "Tea\nimport os; os.system('x')\u{2028}process.exit(1)";
        let words = comment_words(named);
        assert!(
            !words.contains('\n') && !words.contains('\u{2028}'),
            "{words}"
        );
        assert!(words.starts_with("Tea import os"), "{words}");
        let check = Check::AnswerContains("a\nb".into());
        assert_eq!(assertion(Lang::Python, &check).lines().count(), 1);
    }

    #[test]
    fn a_target_is_found_by_role_and_name_then_text_then_rank_in_its_frame() {
        let t = Target {
            role: "button".into(),
            name: "Add".into(),
            input_type: None,
            hint: None,
            near: vec!["Tea".into()],
            rank: 2,
            equals: 3,
            frame: 1,
        };
        assert_eq!(
            locator(Lang::Python, &t).unwrap(),
            "page.frame_locator(\"iframe\").nth(0).get_by_role(\"button\", name=\"Add\", exact=True).nth(1)"
        );
        assert_eq!(
            locator(Lang::TypeScript, &t).unwrap(),
            "page.frameLocator(\"iframe\").nth(0).getByRole(\"button\", { name: \"Add\", exact: true }).nth(1)"
        );
        let div = Target {
            role: "clickable".into(),
            name: String::new(),
            hint: Some("trash".into()),
            equals: 1,
            rank: 1,
            frame: 0,
            ..t
        };
        assert!(locator(Lang::Python, &div).unwrap_err().contains("trash"));
        assert_eq!("ts".parse::<Lang>(), Ok(Lang::TypeScript));
        assert!("go".parse::<Lang>().is_err());
    }
}
