//! The skills folder: one JSON file per skill, read whole and checked,
//! written whole (a new file renamed over the old one).

use super::error::SkillError;
use std::path::{Path, PathBuf};

use super::{template::Params, Skill};

/// The folder `seamark run` keeps skills in, beside `runs/`.
pub const DEFAULT_DIR: &str = "skills";

/// Whether `name` can name a skill file: letters, digits, `-` and `_`.
pub(super) fn valid_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 80
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The subfolder of a skills folder where learned skills wait for a
/// person's approval (`--review-skills`): none of them is followed.
pub const PROPOSED: &str = "proposed";

/// The subfolder where refused skills are kept, so that what was refused
/// stays seen.
pub const REFUSED: &str = "refused";

/// A skills folder.
#[derive(Debug, Clone)]
pub struct SkillStore {
    dir: PathBuf,
    /// What a run learns is proposed, not used until approved.
    review: bool,
}

/// One file of the folder: its skill, or why it cannot be used.
#[derive(Debug)]
pub struct Listed {
    /// The file.
    pub path: PathBuf,
    /// The skill, or what is wrong with the file.
    pub skill: Result<Skill, SkillError>,
}

/// What the folder has for a task.
#[derive(Debug, Clone)]
pub enum Found {
    /// No skill of this site does this task.
    Nothing,
    /// One skill does it, with these values.
    One(Box<Skill>, Params),
    /// Several do: none is used, the person should remove all but one.
    Several(Vec<String>),
    /// Skills of this site whose task is worded otherwise: the model may
    /// say whether the task is theirs with other values.
    SameSite(Vec<Skill>),
}

impl SkillStore {
    /// The folder (made when a skill is first written).
    pub fn new(dir: impl Into<PathBuf>) -> SkillStore {
        SkillStore {
            dir: dir.into(),
            review: false,
        }
    }

    /// The same folder, whose learned skills wait in [`PROPOSED`] for a
    /// person's approval when `review` is set.
    pub fn reviewed(self, review: bool) -> SkillStore {
        SkillStore { review, ..self }
    }

    /// Where a run's learned skill goes: the folder itself, or its
    /// proposals when learning is reviewed.
    pub fn learn_into(&self) -> SkillStore {
        if self.review {
            SkillStore::new(self.dir.join(PROPOSED))
        } else {
            self.clone()
        }
    }

    /// Approves a proposed skill: it moves into the folder (over the one it
    /// replaces), and is followed from then on.
    pub fn approve(&self, name: &str) -> Result<PathBuf, SkillError> {
        let proposed = SkillStore::new(self.dir.join(PROPOSED));
        let skill = proposed.get(name)?;
        let path = self.save(&skill)?;
        proposed.remove(name)?;
        Ok(path)
    }

    /// Refuses a proposed skill: it is kept in [`REFUSED`], never followed.
    pub fn refuse(&self, name: &str) -> Result<PathBuf, SkillError> {
        let proposed = SkillStore::new(self.dir.join(PROPOSED));
        let skill = proposed.get(name)?;
        let path = SkillStore::new(self.dir.join(REFUSED)).save(&skill)?;
        proposed.remove(name)?;
        Ok(path)
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the skill named `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    /// Every `.json` file of the folder, by name, each read and checked
    /// (a folder that is not there holds none).
    pub fn list(&self) -> Vec<Listed> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let skill = read(&path);
                Listed { path, skill }
            })
            .collect()
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Result<Skill, SkillError> {
        if !valid_file_name(name) {
            return Err(SkillError::BadName(name.to_string()));
        }
        let path = self.path(name);
        if !path.is_file() {
            return Err(SkillError::NotFound {
                name: name.to_string(),
                dir: self.dir.clone(),
            });
        }
        read(&path)
    }

    /// What the folder has for `task` from `start`, among `listed`.
    pub fn find(listed: &[Listed], task: &str, start: &str) -> Found {
        let site = super::site_of(start);
        let skills: Vec<&Skill> = listed
            .iter()
            .filter_map(|l| l.skill.as_ref().ok())
            .collect();
        let mut fitting: Vec<(&Skill, Params)> = skills
            .iter()
            .filter_map(|s| s.fits(task, start).map(|p| (*s, p)))
            .collect();
        match fitting.len() {
            0 => {
                let same: Vec<Skill> = skills
                    .into_iter()
                    .filter(|s| site.as_deref() == Some(s.site.as_str()))
                    .cloned()
                    .collect();
                if same.is_empty() {
                    Found::Nothing
                } else {
                    Found::SameSite(same)
                }
            }
            1 => {
                let (skill, params) = fitting.remove(0);
                Found::One(Box::new(skill.clone()), params)
            }
            _ => Found::Several(fitting.iter().map(|(s, _)| s.name.clone()).collect()),
        }
    }

    /// A name for a new skill of `task` that no file has yet.
    pub fn free_name(&self, task: &str) -> String {
        let base = crate::journal::slug(task);
        let mut name = base.clone();
        for n in 2.. {
            if !self.path(&name).exists() {
                break;
            }
            name = format!("{base}-{n}");
        }
        name
    }

    /// Writes a skill (checked first) to its file, whole.
    pub fn save(&self, skill: &Skill) -> Result<PathBuf, SkillError> {
        skill.check()?;
        std::fs::create_dir_all(&self.dir).map_err(|cause| SkillError::File {
            path: self.dir.clone(),
            cause,
        })?;
        let path = self.path(&skill.name);
        let text =
            serde_json::to_string_pretty(skill).map_err(|e| SkillError::Json(e.to_string()))?;
        let partial = self.dir.join(format!(".{}.json.partial", skill.name));
        std::fs::write(&partial, text + "\n")
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|cause| SkillError::File {
                path: path.clone(),
                cause,
            })?;
        Ok(path)
    }

    /// Removes the skill named `name`.
    pub fn remove(&self, name: &str) -> Result<PathBuf, SkillError> {
        if !valid_file_name(name) {
            return Err(SkillError::BadName(name.to_string()));
        }
        let path = self.path(name);
        std::fs::remove_file(&path).map_err(|cause| match cause.kind() {
            std::io::ErrorKind::NotFound => SkillError::NotFound {
                name: name.to_string(),
                dir: self.dir.clone(),
            },
            _ => SkillError::File {
                path: path.clone(),
                cause,
            },
        })?;
        Ok(path)
    }
}

/// The largest skill file read: a learned skill of a 30-step run is a few
/// kilobytes; a file far past that is not one, and is refused before it is
/// read (a 300 MB file in the folder once took 623 MB of memory to refuse).
pub const MAX_SKILL_BYTES: u64 = 1024 * 1024;

/// A skill file, read whole and checked; its name must be its file's.
fn read(path: &Path) -> Result<Skill, SkillError> {
    let unreadable = |cause| SkillError::File {
        path: path.to_path_buf(),
        cause,
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        // A FIFO or a device would be waited on, or read without end.
        return Err(unreadable(std::io::Error::other(
            "it is not a regular file",
        )));
    }
    let size = meta.len();
    if size > MAX_SKILL_BYTES {
        return Err(SkillError::TooLarge {
            size,
            max: MAX_SKILL_BYTES,
        });
    }
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    let skill = Skill::from_json(&text)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if skill.name != stem {
        return Err(SkillError::Invalid(format!(
            "it names itself {:?}, not {stem:?} as its file",
            skill.name
        )));
    }
    Ok(skill)
}
