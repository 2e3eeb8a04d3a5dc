//! `seamark doctor`: checks what a run needs and says what to do.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use seamark::doctor::{self, Examination, Health};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The model to call once with a tiny request (`provider/model`; else
    /// env SEAMARK_MODEL). Skipped when its key is not set.
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Check this browser to attach to (as `run --cdp` takes it), instead of
    /// whether `--cdp auto` would find one.
    #[arg(long, value_name = "TARGET")]
    cdp: Option<String>,
    /// The Chromium binary to check (else env SEAMARK_CHROME, else the
    /// usual places, as a run finds it).
    #[arg(long, value_name = "PATH")]
    chrome: Option<PathBuf>,
    /// Where run directories go (as `run --out`).
    #[arg(long, value_name = "DIR", default_value = "runs")]
    out: PathBuf,
    /// Make what is missing and safe to make: `seamark browser`'s profile
    /// folder and the runs folder. Nothing else is ever changed.
    #[arg(long)]
    fix: bool,
    /// Call nothing over the network: the model is not asked.
    #[arg(long)]
    offline: bool,
    /// One JSON object: every check, and counts of warnings and failures.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let examination = Examination {
        chrome: args.chrome,
        // As a run finds it; none is no error here, but a check skipped.
        model: super::run::model_name(args.model.as_ref()).ok(),
        cdp: args.cdp,
        runs: args.out,
        fix: args.fix,
        offline: args.offline,
    };
    let findings = doctor::examine(&examination).await;
    let count = |h: Health| findings.iter().filter(|f| f.health == h).count();
    let (failed, warnings) = (count(Health::Failed), count(Health::Warning));
    if args.json {
        show!(
            "{}",
            serde_json::json!({
                "checks": findings,
                "failed": failed,
                "warnings": warnings,
            })
        );
    } else {
        for f in &findings {
            let word = match f.health {
                Health::Ok => "ok",
                Health::Warning => "warning",
                Health::Failed => "FAILED",
                Health::Skipped => "skipped",
            };
            show!("{word:>8}  {:<8} {}", f.check, f.found);
            if let Some(todo) = &f.todo {
                show!("{:>8}  {:<8} → {todo}", "", "");
            }
        }
        show!();
        show!(
            "{}",
            match (failed, warnings) {
                (0, 0) => "seamark is ready.".to_string(),
                (0, w) => format!("seamark is ready, with {w} warning{}.", plural(w)),
                (f, _) => format!("{f} check{} failed: a run would fail.", plural(f)),
            }
        );
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
