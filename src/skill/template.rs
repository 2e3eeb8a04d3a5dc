//! A task as a template: the words of the task a skill was learned from,
//! with the values that came from it as `{{name}}` parameters, and the
//! matching of a new task against it.

use std::collections::BTreeMap;

use regex::Regex;

/// The values of a skill's parameters for one task.
pub type Params = BTreeMap<String, String>;

/// The `{{name}}` parameters a text holds, in order, secrets left out.
pub fn names_in(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = &after[..end];
        if !name.starts_with("secret:") && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        rest = &after[end + 2..];
    }
    names
}

/// Whether a parameter's name is one a template may hold: lower-case
/// letters, digits and `_`, starting with a letter.
pub fn valid_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A parameter's name made of a field's name: `Job title` → `job_title`.
pub fn name_for(label: &str) -> String {
    let words: Vec<String> = label
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(3)
        .map(str::to_ascii_lowercase)
        .collect();
    let name = words.join("_");
    if valid_name(&name) {
        name
    } else {
        "value".into()
    }
}

/// Where `value` stands in `text` as whole words, ignoring case.
fn find_words(text: &str, value: &str) -> Option<(usize, usize)> {
    let (hay, needle) = (text.to_lowercase(), value.to_lowercase());
    // Lower-casing keeps byte offsets only when it keeps lengths.
    if needle.trim().is_empty() || hay.len() != text.len() || needle.len() != value.len() {
        return None;
    }
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    hay.match_indices(&needle)
        .map(|(at, m)| (at, at + m.len()))
        .find(|&(at, end)| !word(hay[..at].chars().last()) && !word(hay[end..].chars().next()))
}

/// Puts `{{name}}` in place of each value (as whole words, longest first)
/// in `text`; the values that were not there are left out of the result.
pub fn parameterize(text: &str, values: &Params) -> (String, Params) {
    let mut by_length: Vec<(&String, &String)> = values.iter().collect();
    by_length.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    let mut out = text.to_string();
    let mut used = Params::new();
    for (name, value) in by_length {
        if let Some((at, end)) = find_words(&out, value) {
            out.replace_range(at..end, &format!("{{{{{name}}}}}"));
            used.insert(name.clone(), value.clone());
        }
    }
    (out, used)
}

/// Puts each parameter's value in place of its `{{name}}`.
pub fn fill(text: &str, params: &Params) -> String {
    params.iter().fold(text.to_string(), |t, (name, value)| {
        t.replace(&format!("{{{{{name}}}}}"), value)
    })
}

/// A template compiled to match tasks.
#[derive(Debug, Clone)]
pub struct Matcher {
    regex: Regex,
    names: Vec<String>,
}

impl Matcher {
    /// Compiles a template: its words match with case and spacing folded,
    /// a final period optional; each parameter matches some words.
    pub fn new(template: &str) -> Result<Matcher, super::SkillError> {
        let mut pattern = String::from(r"(?is)^\s*");
        let mut names = Vec::new();
        let mut rest = template.trim().trim_end_matches(['.', '!']);
        let literal = |s: &str| {
            s.split_whitespace()
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(r"\s+")
        };
        let spaced = |s: &str, pattern: &mut String| {
            if s.starts_with(char::is_whitespace) {
                pattern.push_str(r"\s+");
            }
            pattern.push_str(&literal(s));
            if s.ends_with(char::is_whitespace) && !s.trim().is_empty() {
                pattern.push_str(r"\s+");
            }
        };
        while let Some(start) = rest.find("{{") {
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| super::SkillError::Unclosed(template.to_string()))?;
            let name = &after[..end];
            spaced(&rest[..start], &mut pattern);
            if !valid_name(name) {
                return Err(super::SkillError::ParamName(name.to_string()));
            }
            // Groups by position: a name used twice must match the same
            // words both times, which `matches` checks.
            pattern.push_str("(.+?)");
            names.push(name.to_string());
            rest = &after[end + 2..];
        }
        spaced(rest, &mut pattern);
        pattern.push_str(r"\s*[.!]?\s*$");
        let regex = Regex::new(&pattern).map_err(super::SkillError::Template)?;
        Ok(Matcher { regex, names })
    }

    /// The parameters' values when `task` is this template with other
    /// values.
    pub fn matches(&self, task: &str) -> Option<Params> {
        let caps = self.regex.captures(task)?;
        let mut params = Params::new();
        for (i, name) in self.names.iter().enumerate() {
            let value = caps.get(i + 1)?.as_str();
            // One line: a value is typed into one field.
            let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
            if value.is_empty() {
                return None;
            }
            match params.get(name) {
                Some(seen) if !seen.eq_ignore_ascii_case(&value) => return None,
                Some(_) => {}
                None => {
                    params.insert(name.clone(), value);
                }
            }
        }
        Some(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_from_the_task_become_parameters_and_match_other_values() {
        let task = "Search jobs for Data Scientist in India with a salary between 50 and 100 LPA";
        let (template, used) = parameterize(
            task,
            &params(&[
                ("keywords", "data scientist"),
                ("location", "India"),
                ("x", "Mars"),
            ]),
        );
        assert_eq!(
            template,
            "Search jobs for {{keywords}} in {{location}} with a salary between 50 and 100 LPA"
        );
        assert_eq!(used.len(), 2, "a value not in the task is no parameter");
        let m = Matcher::new(&template).unwrap();
        assert_eq!(
            m.matches(
                "search  jobs for Data Engineer in Pune with a salary between 50 and 100 LPA."
            ),
            Some(params(&[
                ("keywords", "Data Engineer"),
                ("location", "Pune")
            ]))
        );
        // Other words are another task.
        assert_eq!(
            m.matches("Search jobs for Data Engineer in Pune with a salary above 100 LPA"),
            None
        );
    }

    #[test]
    fn a_value_is_a_parameter_only_as_whole_words() {
        let (template, used) =
            parameterize("Flights to Indiana from India", &params(&[("to", "India")]));
        assert_eq!(template, "Flights to Indiana from {{to}}");
        assert_eq!(used.len(), 1);
    }

    #[test]
    fn names_and_fills() {
        assert_eq!(name_for("Job title, skills or company"), "job_title_skills");
        assert_eq!(name_for("★"), "value");
        assert_eq!(
            names_in("a {{x}} {{secret:PIN}} {{y}} {{x}}"),
            vec!["x", "y"]
        );
        assert_eq!(
            fill("go {{x}} {{secret:PIN}}", &params(&[("x", "now")])),
            "go now {{secret:PIN}}"
        );
        assert!(Matcher::new("a {{Bad-Name}}").is_err());
        assert!(Matcher::new("a {{open").is_err());
    }
}
