//! `seamark browser`: a browser of the person's own for seamark to work in.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use seamark::browser::{own_profile_folder, PersonalBrowser};

use super::signals::{self, Signals};
use super::UsageError;

#[derive(Debug, Args)]
pub struct BrowserCmdArgs {
    /// The profile folder (created when missing). By default the one seamark
    /// keeps for you: $XDG_DATA_HOME/seamark/browser (~/.local/share/…).
    #[arg(long, value_name = "DIR")]
    profile: Option<PathBuf>,
    /// No window (on a machine without a display).
    #[arg(long)]
    headless: bool,
    /// Chromium binary to start (else env SEAMARK_CHROME, else the usual places).
    #[arg(long, value_name = "PATH")]
    chrome: Option<PathBuf>,
}

pub async fn run(args: BrowserCmdArgs) -> anyhow::Result<ExitCode> {
    let profile = match args.profile.or_else(own_profile_folder) {
        Some(dir) => dir,
        None => {
            return Err(UsageError(
                "no folder for the profile: HOME is not set; pass --profile DIR".into(),
            )
            .into())
        }
    };
    let signals = Signals::listen();
    let mut browser = PersonalBrowser::start(args.chrome.as_deref(), &profile, args.headless)
        .await
        .map_err(|e| UsageError(e.to_string()))?;
    let folder = browser.profile.display().to_string();
    tell!(
        "seamark browser: Chromium runs with the profile {folder}, DevTools at {}.\n\
         Log in where seamark should work as you; then give seamark this browser \
         (the next line), or `--cdp auto`.\n\
         Close the browser, or press Ctrl-C here, to end it.",
        browser.ws_url
    );
    // The line to use, alone on stdout.
    show!("--cdp {}", shell_word(&folder));
    tokio::select! {
        () = browser.wait() => Ok(ExitCode::SUCCESS),
        stop = signals.first() => {
            tell!("seamark browser: ended by {}; closing the browser", stop.name());
            browser.close().await;
            Ok(signals::interrupted())
        }
    }
}

/// `word` as a shell reads it: quoted when it holds anything but plain characters.
fn shell_word(word: &str) -> String {
    if word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-~+:@".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
