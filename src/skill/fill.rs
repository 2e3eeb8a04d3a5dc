//! When a task is worded otherwise than a skill's template, one small model
//! call (text only, no page) says whether it is the same task with other
//! values, and gives them.

use crate::brain::{Brain, BrainError, Prompt, Usage};

use super::{Params, Skill};

const SYSTEM: &str = "You match a person's task to a task seamark learned to do. Answer with \
one line only: a JSON object giving each parameter's value taken from the person's task, or \
NONE when the person's task is not the learned task with other values.";

/// Why the model's values for a skill's parameters cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FillError {
    /// The model was not reached, or failed.
    #[error("the model failed: {0}")]
    Model(#[from] BrainError),
    /// Its answer holds no JSON object and is not NONE.
    #[error("the answer {0:?} is neither JSON nor NONE")]
    Neither(String),
    /// Its JSON does not parse.
    #[error("the answer {json:?}: {source}")]
    BadJson {
        /// The JSON as the model wrote it.
        json: String,
        /// Why it does not parse.
        source: serde_json::Error,
    },
    /// It gives no value for this parameter.
    #[error("the answer gives no value for {0:?}")]
    NoValue(String),
    /// A value (the second) of a parameter (the first) is not in the task's
    /// own words: the model made it up.
    #[error("the value {1:?} of {0:?} is not in the task")]
    NotInTask(String, String),
}

/// The parameters' values for `task` if the model says it is `skill`'s task
/// with other values; the call's tokens either way.
pub async fn fill_with_model(
    brain: &mut dyn Brain,
    skill: &Skill,
    task: &str,
) -> (Result<Option<Params>, FillError>, Usage) {
    let text = format!(
        "Learned task: {:?}\nParameters: {}\nThe person's task: {task:?}\n\nAnswer {{\"{}\": \"…\"}} or NONE.",
        skill.task,
        skill.params.join(", "),
        skill.params.join("\": \"…\", \""),
    );
    let prompt = Prompt {
        system: SYSTEM.into(),
        text,
        images: Vec::new(),
        step: 0,
        signature: String::new(),
    };
    match brain.answer(&prompt).await {
        Ok(reply) => (read_params(&reply.text, skill, task), reply.usage),
        Err(e) => (Err(FillError::Model(e)), Usage::default()),
    }
}

/// The values in the model's answer: every parameter, one line each, or
/// none at all for NONE.
fn read_params(answer: &str, skill: &Skill, task: &str) -> Result<Option<Params>, FillError> {
    let text = answer.trim().trim_matches('`').trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let json = match (text.find('{'), text.rfind('}')) {
        (Some(a), Some(b)) if a < b => &text[a..=b],
        _ => return Err(FillError::Neither(text.to_string())),
    };
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|source| FillError::BadJson {
            json: json.to_string(),
            source,
        })?;
    let mut params = Params::new();
    for name in &skill.params {
        let v = value[name]
            .as_str()
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|v| !v.is_empty())
            .ok_or_else(|| FillError::NoValue(name.clone()))?;
        params.insert(name.clone(), v);
    }
    // The values must be the task's own words: the model only points at them.
    let words = task.to_lowercase();
    if let Some((name, v)) = params
        .iter()
        .find(|(_, v)| !words.contains(&v.to_lowercase()))
    {
        return Err(FillError::NotInTask(name.clone(), v.clone()));
    }
    Ok(Some(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_models_values_must_be_the_tasks_words() {
        let skill = Skill {
            params: vec!["q".into(), "city".into()],
            ..crate::skill::tests::skill()
        };
        let task = "look for green tea in Paris";
        let read = |a: &str| read_params(a, &skill, task);
        assert_eq!(
            read("```{\"q\": \"green tea\", \"city\": \"Paris\"}```").unwrap(),
            Some(Params::from([
                ("q".to_string(), "green tea".to_string()),
                ("city".to_string(), "Paris".to_string())
            ]))
        );
        assert_eq!(read("none").unwrap(), None);
        assert!(read("{\"q\": \"black tea\", \"city\": \"Paris\"}")
            .unwrap_err()
            .to_string()
            .contains("not in the task"));
        assert!(read("{\"q\": \"green tea\"}")
            .unwrap_err()
            .to_string()
            .contains("\"city\""));
        assert!(read("sure!").is_err());
    }
}
