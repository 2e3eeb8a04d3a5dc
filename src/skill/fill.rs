//! When a task is worded otherwise than a skill's template, one small model
//! call (text only, no page) says whether it is the same task with other
//! values, and gives them.

use crate::brain::{Brain, Prompt, Usage};

use super::{Params, Skill};

const SYSTEM: &str = "You match a person's task to a task seamark learned to do. Answer with \
one line only: a JSON object giving each parameter's value taken from the person's task, or \
NONE when the person's task is not the learned task with other values.";

/// The parameters' values for `task` if the model says it is `skill`'s task
/// with other values; the call's tokens either way.
pub async fn fill_with_model(
    brain: &mut dyn Brain,
    skill: &Skill,
    task: &str,
) -> (Result<Option<Params>, String>, Usage) {
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
        Err(e) => (Err(format!("the model failed: {e}")), Usage::default()),
    }
}

/// The values in the model's answer: every parameter, one line each, or
/// none at all for NONE.
fn read_params(answer: &str, skill: &Skill, task: &str) -> Result<Option<Params>, String> {
    let text = answer.trim().trim_matches('`').trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let json = match (text.find('{'), text.rfind('}')) {
        (Some(a), Some(b)) if a < b => &text[a..=b],
        _ => return Err(format!("the answer {text:?} is neither JSON nor NONE")),
    };
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("the answer {json:?}: {e}"))?;
    let mut params = Params::new();
    for name in &skill.params {
        let v = value[name]
            .as_str()
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("the answer gives no value for {name:?}"))?;
        params.insert(name.clone(), v);
    }
    // The values must be the task's own words: the model only points at them.
    let words = task.to_lowercase();
    if let Some((name, v)) = params
        .iter()
        .find(|(_, v)| !words.contains(&v.to_lowercase()))
    {
        return Err(format!("the value {v:?} of {name:?} is not in the task"));
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
            read("```{\"q\": \"green tea\", \"city\": \"Paris\"}```"),
            Ok(Some(Params::from([
                ("q".to_string(), "green tea".to_string()),
                ("city".to_string(), "Paris".to_string())
            ])))
        );
        assert_eq!(read("none"), Ok(None));
        assert!(read("{\"q\": \"black tea\", \"city\": \"Paris\"}")
            .unwrap_err()
            .contains("not in the task"));
        assert!(read("{\"q\": \"green tea\"}")
            .unwrap_err()
            .contains("\"city\""));
        assert!(read("sure!").is_err());
    }
}
