//! `seamark skill list|show|rm|export|approve|refuse`: the skills a folder
//! holds, one of them in full, removing one, and a person's decision on a
//! proposed one (in the folder, or on a `seamark serve`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use seamark::skill::{Skill, SkillStore, DEFAULT_DIR};

use super::UsageError;

#[derive(Debug, Args)]
pub struct SkillArgs {
    #[command(subcommand)]
    command: SkillCommand,
    /// The skills folder.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DIR, global = true)]
    skills: PathBuf,
}

#[derive(Debug, Subcommand)]
enum SkillCommand {
    /// Every skill of the folder: its name, steps, parameters, site and
    /// task; files that cannot be used are listed with the reason.
    List,
    /// One skill in full: its task, site, parameters and each step's
    /// commands with the element each acts on.
    Show {
        /// The skill's name (its file's name without .json).
        name: String,
        /// Print the skill file as it is (JSON).
        #[arg(long)]
        json: bool,
    },
    /// Remove a skill: the next run of its task asks the model again.
    Rm {
        /// The skill's name.
        name: String,
    },
    /// Approve a proposed skill (learned under --review-skills, or by a
    /// session of a `seamark serve`): the next run of its task follows it.
    Approve {
        /// The skill's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Refuse a proposed skill: it is kept as refused, and never followed.
    Refuse {
        /// The skill's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Write a skill as a Playwright script a team owns: its parameters as
    /// arguments (the learned values as defaults), secrets from
    /// SECRET_<NAME>, its targets as locators, the learned run's checks as
    /// assertions, and a failing TODO where the model took over.
    Export {
        /// The skill's name.
        name: String,
        /// python or typescript.
        #[arg(long, value_name = "LANG", default_value = "python")]
        lang: seamark::skill::Lang,
        /// Write the script here (else to stdout).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

/// Where a decision goes: a server's skills, else the folder's.
#[derive(Debug, Args)]
struct ServerArgs {
    /// The `seamark serve` whose skill it is (else the skills folder's).
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// Its token (else env SEAMARK_TOKEN).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
}

/// A person's decision on a proposed skill, in the folder or on a server.
async fn decide(
    store: &SkillStore,
    name: &str,
    server: ServerArgs,
    approve: bool,
) -> anyhow::Result<ExitCode> {
    let verb = if approve { "approved" } else { "refused" };
    if let Some(base) = server.server {
        let token = server.token.or_else(|| std::env::var("SEAMARK_TOKEN").ok());
        let client = seamark::coworker::Client::new(&base, token)
            .map_err(|e| UsageError(format!("--server: {e}")))?;
        client.decide_skill(name, approve).await?;
        show!("{verb} skill {name} on {base}");
        return Ok(ExitCode::SUCCESS);
    }
    let decided = if approve {
        store.approve(name)
    } else {
        store.refuse(name)
    };
    let path = decided.map_err(UsageError::of)?;
    show!("{verb} skill {name}: {}", path.display());
    Ok(ExitCode::SUCCESS)
}

pub async fn run(args: SkillArgs) -> anyhow::Result<ExitCode> {
    let store = SkillStore::new(&args.skills);
    match args.command {
        SkillCommand::Approve { name, server } => decide(&store, &name, server, true).await,
        SkillCommand::Refuse { name, server } => decide(&store, &name, server, false).await,
        SkillCommand::List => list(&store),
        SkillCommand::Show { name, json } => {
            let skill = store.get(&name).map_err(UsageError::of)?;
            if json {
                show!("{}", serde_json::to_string_pretty(&skill)?);
            } else {
                print!("{}", super::terminal::inert(&shown(&skill)));
            }
            Ok(ExitCode::SUCCESS)
        }
        SkillCommand::Export { name, lang, out } => {
            let skill = store.get(&name).map_err(UsageError::of)?;
            let learned = seamark::skill::Learned::of(&skill);
            let script = seamark::skill::export(&skill, lang, &learned);
            match out {
                Some(path) => {
                    std::fs::write(&path, script)
                        .map_err(|e| UsageError(format!("--out {}: {e}", path.display())))?;
                    tell!("seamark: {name} written to {}", path.display());
                }
                None => print!("{script}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        SkillCommand::Rm { name } => {
            let path = store.remove(&name).map_err(UsageError::of)?;
            show!("removed {}", path.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn list(store: &SkillStore) -> anyhow::Result<ExitCode> {
    let listed = store.list();
    let proposed = SkillStore::new(store.dir().join(seamark::skill::PROPOSED)).list();
    for l in &proposed {
        if let Ok(s) = &l.skill {
            show!(
                "{}  proposed, waits for approval (seamark skill approve {})\n    {}",
                s.name,
                s.name,
                s.task
            );
        }
    }
    if listed.is_empty() {
        show!(
            "no skills in {} (a run that ends done is learned there)",
            store.dir().display()
        );
    }
    for l in &listed {
        match &l.skill {
            Ok(s) => show!(
                "{}  {} steps  {}  {}\n    {}",
                s.name,
                s.steps.len(),
                match s.params.as_slice() {
                    [] => "no parameters".to_string(),
                    p => p.join(", "),
                },
                s.site,
                s.task
            ),
            Err(why) => show!("{}  broken, never run: {why}", l.path.display()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A skill as a person reads it.
fn shown(s: &Skill) -> String {
    let mut out = format!("skill {}\ntask: {}\nsite: {}\n", s.name, s.task, s.site);
    if !s.params.is_empty() {
        out.push_str(&format!("parameters: {}\n", s.params.join(", ")));
    }
    out.push_str(&format!("learned: {} from {}\n", s.learned, s.learned_from));
    if let Some(u) = &s.updated {
        out.push_str(&format!("updated: {u} (the model took over)\n"));
    }
    for (i, step) in s.steps.iter().enumerate() {
        out.push_str(&format!("step {} on {}\n", i + 1, step.page));
        for a in &step.actions {
            match &a.target {
                Some(t) => out.push_str(&format!(
                    "  {}  on {} (rank {} of {})\n",
                    a.command,
                    t.describe_text(),
                    t.rank,
                    t.equals
                )),
                None => out.push_str(&format!("  {}\n", a.command)),
            }
        }
        if let Some(verb) = &step.then_model {
            out.push_str(&format!("  then the model goes on ({verb})\n"));
        }
    }
    out
}
