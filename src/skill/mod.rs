//! Skills: a task done once is done again without the model.
//!
//! After a run that ends done, seamark writes a *skill*: the task as a
//! template whose values became `{{parameters}}`, the start page, and each
//! step's commands with, instead of mark ids, a [`Target`](crate::skill::Target) that finds the
//! element again on a new look. A new task that fits the template on the
//! same site is done from the skill ([`Follow`](crate::skill::Follow)) with no model call while
//! each page shows what the step expects; at the first step that does not
//! fit, the model takes over. READ, ANSWER and ASK are always the model's.
//!
//! A skill file is data: it is read whole and checked ([`Skill::check`](crate::skill::Skill::check))
//! before anything of it runs, it holds `{{secret:NAME}}` placeholders and
//! never a secret's value, and its commands go through the same executor,
//! domain guard and confirmation as any model's.

mod error;
mod export;
mod fill;
mod follow;
mod learn;
mod script;
mod store;
mod target;
pub mod template;

use serde::{Deserialize, Serialize};

use crate::commands::{self, Command};
use crate::perceive::{Element, Point};

pub use error::SkillError;
pub use export::{export, Lang, Learned};
pub use fill::{fill_with_model, FillError};
pub use follow::{Follow, Planned, TakeOver};
pub use learn::Trail;
pub use store::{Found, Listed, SkillStore, DEFAULT_DIR, PROPOSED, REFUSED};
pub use target::Target;
pub use template::Params;

/// The version of the skill file format this seamark reads and writes.
pub const FORMAT: u32 = 1;

/// What stands for the mark id in a skill's command: `CLICK:@`.
const ID: &str = "@";

/// A task learned from a run that ended done.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skill {
    /// The file format ([`FORMAT`]).
    pub format: u32,
    /// Its name: the file's name without `.json`.
    pub name: String,
    /// The task with its values as `{{name}}` parameters.
    pub task: String,
    /// The start page: scheme, host, port and path (the query is left out).
    pub site: String,
    /// The parameters' names, as the template and the commands use them.
    #[serde(default)]
    pub params: Vec<String>,
    /// The run directory it was learned from, last.
    pub learned_from: String,
    /// When it was learned (RFC 3339 UTC).
    pub learned: String,
    /// When the model last had to take over and the skill was learned again.
    #[serde(default)]
    pub updated: Option<String>,
    /// The steps, in order.
    pub steps: Vec<SkillStep>,
}

/// One step of a skill: the commands of one look at one page.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillStep {
    /// The page it was learned on (its URL, the query left out): shown to
    /// the person, not compared.
    pub page: String,
    /// The commands, in order.
    #[serde(default)]
    pub actions: Vec<Action>,
    /// After the commands, the model goes on from this step: the learned
    /// run READ, ANSWERed or ASKed here, which is the model's to do.
    #[serde(default)]
    pub then_model: Option<String>,
}

/// One command of a skill's step.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// The command as the model writes it, `@` in place of the mark id and
    /// `{{name}}` in place of a parameter: `TYPE:@:{{keywords}}`.
    #[serde(rename = "do")]
    pub command: String,
    /// The element it acts on, for a command that acts on one; for a
    /// command at a point, the element the point fell on.
    #[serde(default)]
    pub target: Option<Target>,
    /// For a command at a point (`CLICK:@0,0` stands for it): where in its
    /// target's box the point was, and that box's size then.
    #[serde(default)]
    pub within: Option<Within>,
}

/// A point kept relative to the element it fell on: a bare coordinate is
/// the page's layout of that day, while the same place in the same element
/// is the same target as long as the element keeps its size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Within {
    /// From the box's left edge, as a share of its width (0 to 1).
    pub x: f64,
    /// From the box's top edge, as a share of its height (0 to 1).
    pub y: f64,
    /// The box's width then, in CSS pixels.
    pub width: f64,
    /// The box's height then, in CSS pixels.
    pub height: f64,
}

/// How far an element's size may differ from the learned one (CSS pixels,
/// or this share of it when larger) for a point in it to be the same
/// place: beyond it the element changed and the model takes over.
const SIZE_SLACK: (f64, f64) = (2.0, 0.02);

impl Within {
    /// Where the point `p` (CSS) lies in `e`'s box.
    pub fn of(e: &Element, p: Point) -> Within {
        let b = e.bbox;
        Within {
            x: ((p.x - b.x) / b.w.max(1.0)).clamp(0.0, 1.0),
            y: ((p.y - b.y) / b.h.max(1.0)).clamp(0.0, 1.0),
            width: b.w,
            height: b.h,
        }
    }

    /// The same place in `e` as it is now (CSS), or why not: it changed size.
    pub fn point_in(&self, e: &Element) -> Result<Point, SkillError> {
        let b = e.bbox;
        let off = |now: f64, then: f64| (now - then).abs() > SIZE_SLACK.0.max(then * SIZE_SLACK.1);
        if off(b.w, self.width) || off(b.h, self.height) {
            return Err(SkillError::Resized {
                then: (self.width, self.height),
                now: (b.w, b.h),
            });
        }
        Ok(Point {
            x: b.x + self.x * b.w,
            y: b.y + self.y * b.h,
        })
    }
}

/// Whether a command is the model's alone: what it reads and answers.
pub fn model_only(command: &Command) -> Option<&'static str> {
    match command {
        Command::Read { .. } => Some("READ"),
        Command::Zoom { .. } => Some("ZOOM"),
        Command::Answer { .. } => Some("ANSWER"),
        Command::Ask { .. } => Some("ASK"),
        Command::Hands { .. } => Some("HANDS"),
        // Its drop is a second target a skill does not find again yet.
        Command::Drag { .. } => Some("DRAG"),
        _ => None,
    }
}

impl Action {
    /// The command, its id at `id` (for a command with a target).
    fn parse(&self, id: u32) -> Result<Command, SkillError> {
        let text = match (&self.target, self.command.split_once(':')) {
            // `CLICK:@0,0`: the point is put in when the target is found.
            (Some(_), _) if self.within.is_some() => self.command.clone(),
            (Some(_), Some((verb, rest))) if rest.starts_with(ID) => {
                format!("{verb}:{id}{}", &rest[ID.len()..])
            }
            (Some(_), _) => {
                return Err(SkillError::Invalid(format!(
                    "{:?} has a target but no {ID} where the id goes",
                    self.command
                )))
            }
            (None, _) => self.command.clone(),
        };
        let steps = commands::parse(&text).map_err(|cause| SkillError::Command {
            command: self.command.clone(),
            cause,
        })?;
        match steps.as_slice() {
            [one] => Ok(one.command.clone()),
            _ => Err(SkillError::Invalid(format!(
                "{:?} is not one command",
                self.command
            ))),
        }
    }

    /// The command for a page where its target has mark id `id`, with the
    /// parameters' values put in its text. The values go into the parsed
    /// command, never through the parser: a value cannot add a command.
    pub fn command(&self, id: u32, params: &Params) -> Result<Command, SkillError> {
        let fill = |t: &String| template::fill(t, params);
        Ok(match self.parse(id)? {
            Command::Type { id, text } => Command::Type {
                id,
                text: fill(&text),
            },
            Command::Select { id, option } => Command::Select {
                id,
                option: fill(&option),
            },
            Command::Deselect { id, option } => Command::Deselect {
                id,
                option: fill(&option),
            },
            Command::TypeAt { at, text } => Command::TypeAt {
                at,
                text: fill(&text),
            },
            Command::Fetch { url } => Command::Fetch { url: fill(&url) },
            Command::Complete { summary } => Command::Complete {
                summary: fill(&summary),
            },
            other => other,
        })
    }
}

impl Skill {
    /// Reads a skill file's text and checks it whole.
    pub fn from_json(text: &str) -> Result<Skill, SkillError> {
        let skill: Skill =
            serde_json::from_str(text).map_err(|e| SkillError::Json(e.to_string()))?;
        skill.check()?;
        Ok(skill)
    }

    /// Checks everything a run would rely on: the format, the template, the
    /// parameters, every command (it parses; it has a target exactly when
    /// it acts on an element; none is the model's), COMPLETE only last.
    pub fn check(&self) -> Result<(), SkillError> {
        let invalid = |why: String| Err(SkillError::Invalid(why));
        if self.format != FORMAT {
            return invalid(format!(
                "it is of format {}; this seamark reads format {FORMAT}",
                self.format
            ));
        }
        if !store::valid_file_name(&self.name) {
            return invalid(format!("{:?} cannot name a skill file", self.name));
        }
        template::Matcher::new(&self.task)?;
        let declared = |name: &String| self.params.contains(name);
        if let Some(p) = self.params.iter().find(|p| !template::valid_name(p)) {
            return invalid(format!("{p:?} is not a parameter's name"));
        }
        if let Some(p) = template::names_in(&self.task).iter().find(|p| !declared(p)) {
            return invalid(format!(
                "the task uses {{{{{p}}}}}, which is not a parameter"
            ));
        }
        if let Err(e) = url::Url::parse(&self.site) {
            return invalid(format!("the site {:?}: {e}", self.site));
        }
        if self.steps.is_empty() {
            return invalid("it has no step".into());
        }
        let last = self.steps.len() - 1;
        for (i, step) in self.steps.iter().enumerate() {
            let at = |why: String| SkillError::Invalid(format!("step {}: {why}", i + 1));
            if step.actions.is_empty() && step.then_model.is_none() {
                return Err(at("it has no command".into()));
            }
            if step.then_model.is_some() && i != last {
                return Err(at("the model goes on from here, yet steps follow".into()));
            }
            for action in &step.actions {
                let command = action.parse(1).map_err(|e| at(e.to_string()))?;
                let point = command.point().is_some();
                if point != action.within.is_some() {
                    return Err(at(format!(
                        "{:?} and where in its target it acts do not go together",
                        action.command
                    )));
                }
                if (command.target().is_some() || point) != action.target.is_some() {
                    return Err(at(format!(
                        "{:?} and its target do not go together",
                        action.command
                    )));
                }
                if let Some(verb) = model_only(&command) {
                    return Err(at(format!("{verb} is the model's, not a skill's")));
                }
                if matches!(command, Command::Complete { .. }) && i != last {
                    return Err(at("COMPLETE before the last step".into()));
                }
                if let Some(p) = template::names_in(&action.command)
                    .iter()
                    .find(|p| !declared(p))
                {
                    return Err(at(format!("{{{{{p}}}}} is not a parameter")));
                }
            }
        }
        Ok(())
    }

    /// The parameters' values when `task` on `start` is this skill's task
    /// with other values.
    pub fn fits(&self, task: &str, start: &str) -> Option<Params> {
        if site_of(start)? != self.site {
            return None;
        }
        template::Matcher::new(&self.task).ok()?.matches(task)
    }
}

/// The part of a URL a skill's site compares: scheme, host, port and path.
pub fn site_of(url: &str) -> Option<String> {
    let target = crate::start_url::to_url(url).ok()?;
    let mut u = url::Url::parse(&target).ok()?;
    u.set_query(None);
    u.set_fragment(None);
    Some(u.to_string())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn skill() -> Skill {
        Skill::from_json(
            r#"{"format":1,"name":"search","task":"Search {{q}}","site":"http://a.test/",
                "params":["q"],"learned_from":"runs/x","learned":"2026-01-01T00:00:00Z",
                "steps":[{"page":"http://a.test/","actions":[
                  {"do":"TYPE:@:{{q}}","target":{"role":"textbox","name":"Q","rank":1,"equals":1}},
                  {"do":"COMPLETE:searched {{q}}"}]}]}"#,
        )
        .expect("a good skill")
    }

    #[test]
    fn a_value_goes_into_the_command_and_never_through_the_parser() {
        let s = skill();
        let params = Params::from([("q".to_string(), "tea\nCLICK:9; STOP:x".to_string())]);
        let c = s.steps[0].actions[0].command(4, &params).unwrap();
        assert_eq!(
            c,
            Command::Type {
                id: 4,
                text: "tea\nCLICK:9; STOP:x".into()
            }
        );
    }

    #[test]
    fn a_broken_skill_says_what_is_wrong() {
        let good = serde_json::to_value(skill()).unwrap();
        let broken = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut v = good.clone();
            edit(&mut v);
            Skill::from_json(&v.to_string()).unwrap_err().to_string()
        };
        assert!(broken(&|v| v["format"] = 9.into()).contains("format 9"));
        assert!(
            broken(&|v| v["steps"][0]["actions"][0]["do"] = "TYPE:3:x".into()).contains("no @")
        );
        assert!(
            broken(&|v| v["steps"][0]["actions"][1]["do"] = "ANSWER:{{q}}".into())
                .contains("ANSWER is the model's")
        );
        assert!(
            broken(&|v| v["steps"][0]["actions"][1]["do"] = "CLICK:3".into())
                .contains("do not go together")
        );
        // A point without where in its target it goes, or a place without a point.
        broken(&|v| v["steps"][0]["actions"][0]["do"] = "CLICK:@0,0".into());
        broken(&|v| {
            v["steps"][0]["actions"][0]["within"] =
                serde_json::json!({"x": 0.5, "y": 0.5, "width": 10.0, "height": 10.0})
        });
        assert!(broken(&|v| v["task"] = "Search {{z}}".into()).contains("not a parameter"));
        assert!(broken(&|v| v["name"] = "../x".into()).contains("cannot name"));
        assert!(broken(&|v| v["extra"] = 1.into()).contains("unknown field"));
        assert!(Skill::from_json("garbage").is_err());
    }

    #[test]
    fn a_point_goes_back_to_its_place_in_its_element_while_the_element_keeps_its_size() {
        let mut e = Element::new(
            1,
            "canvas",
            "map",
            crate::perceive::Rect {
                x: 100.0,
                y: 50.0,
                w: 400.0,
                h: 200.0,
            },
            crate::perceive::ElementState::Interactable,
        );
        let within = Within::of(&e, Point { x: 200.0, y: 100.0 });
        assert_eq!((within.x, within.y), (0.25, 0.25));
        // Moved: the same place in it.
        e.bbox.x = 300.0;
        let p = within.point_in(&e).unwrap();
        assert_eq!((p.x, p.y), (400.0, 100.0));
        // Larger: the model's.
        e.bbox.w = 420.0;
        assert!(within
            .point_in(&e)
            .unwrap_err()
            .to_string()
            .contains("changed size"));
    }

    #[test]
    fn a_task_fits_on_its_site_only() {
        let s = skill();
        assert_eq!(
            s.fits("search green tea", "http://a.test/?x=1"),
            Some(Params::from([("q".to_string(), "green tea".to_string())]))
        );
        assert_eq!(s.fits("search green tea", "http://b.test/"), None);
    }
}
