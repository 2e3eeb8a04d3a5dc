//! `seamark devices`: the phones and tablets `--device` can be.

use std::process::ExitCode;

use clap::Args;
use seamark::browser::DEVICES;

#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// One JSON array: each device with its screen, scale, system, touch and
    /// user agent (an Android one names Chromium 131 here; in a run, the
    /// Chromium that runs).
    #[arg(long)]
    json: bool,
}

pub fn run(args: DevicesArgs) -> anyhow::Result<ExitCode> {
    if args.json {
        let list: Vec<serde_json::Value> = DEVICES
            .iter()
            .map(|d| {
                let mut v = serde_json::json!(d);
                v["user_agent"] = d.user_agent(seamark::browser::FALLBACK_CHROME).into();
                v
            })
            .collect();
        show!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    show!(
        "{:<20} {:>10} {:>6}  {:<7} {:<8} touch",
        "device",
        "screen",
        "scale",
        "kind",
        "system"
    );
    for d in DEVICES {
        show!(
            "{:<20} {:>10} {:>6}  {:<7} {:<8} {}",
            d.name,
            format!("{}x{}", d.width, d.height),
            d.scale,
            if d.mobile { "phone" } else { "tablet" },
            match d.os {
                seamark::browser::DeviceOs::Ios => "iOS",
                seamark::browser::DeviceOs::Android => "Android",
            },
            if d.touch { "yes" } else { "no" }
        );
    }
    Ok(ExitCode::SUCCESS)
}
