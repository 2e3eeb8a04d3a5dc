//! The person at the terminal: the model's questions put to them, a
//! destructive action held for their yes, and a run's progress on stderr.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use seamark::agent::{Asker, Progress, StepRecord};
use seamark::safety::{Confirmer, Hold};

/// Puts the model's questions to the person at the terminal, and hands the
/// browser over for a CAPTCHA.
pub struct TerminalAsker;

impl TerminalAsker {
    /// Shows `text` and reads a line (`None` when the input ended), one
    /// question at a time.
    fn prompt(text: &str) -> Option<String> {
        let _one_at_a_time = ASKING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Self::show_and_read(text)
    }

    /// Shows `text` and reads a line, with [`ASKING`] held by the caller.
    fn show_and_read(text: &str) -> Option<String> {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{text}");
        let _ = err.flush();
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
        }
    }
}

impl Asker for TerminalAsker {
    fn ask(&self, question: &str) -> Option<String> {
        let _one_at_a_time = ASKING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let answer = Self::show_and_read(&format!(
            "\nseamark asks: {question}\n(an answer that starts with ! is kept secret; \
             ! alone types it without showing it)\n> "
        ))?;
        if answer != "!" {
            return Some(answer);
        }
        // Read with the terminal's echo off, so the secret is never on the
        // screen, in its scrollback or in a recording of the terminal.
        rpassword::prompt_password("secret (not shown): ")
            .ok()
            .map(|secret| format!("!{secret}"))
    }

    fn hand_over(&self, what: &str) -> bool {
        Self::prompt(&format!("\nseamark: {what} ")).is_some()
    }
}

/// Asks the person at the terminal before a destructive action, one
/// question at a time (a batch's runs may ask at once).
pub struct TerminalConfirmer;

/// Held while a question is on the terminal.
static ASKING: Mutex<()> = Mutex::new(());

impl Confirmer for TerminalConfirmer {
    fn confirm(&self, hold: &Hold) -> bool {
        let _one_at_a_time = ASKING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "\nseamark wants to {} on {} at {}\n  because {}.",
            hold.command, hold.element, hold.url, hold.why
        );
        if let Some(shot) = &hold.screenshot {
            let _ = writeln!(err, "  The page: {}", shot.display());
        }
        let _ = write!(err, "Go ahead? [y/N] ");
        let _ = err.flush();
        let mut answer = String::new();
        if std::io::stdin().read_line(&mut answer).is_err() {
            return false;
        }
        matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    }
}

/// Progress on stderr: a line per step and per command; a spinner while the
/// model thinks when stderr is a terminal, plain lines when it is not.
pub struct TermProgress {
    tty: bool,
    spinner: Mutex<Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>>,
}

impl TermProgress {
    /// Progress for this terminal (plain lines when stderr is none).
    pub fn new() -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            spinner: Mutex::new(None),
        }
    }

    fn stop_spinner(&self) {
        let taken = self.spinner.lock().ok().and_then(|mut s| s.take());
        if let Some((stop, handle)) = taken {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
    }
}

impl Progress for TermProgress {
    fn thinking(&self, step: usize, max_steps: usize, url: &str) {
        tell!("step {step}/{max_steps} · {url}");
        if !self.tty {
            return;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
            let mut i = 0;
            while !flag.load(Ordering::Relaxed) {
                eprint!("\r  {} thinking…", FRAMES[i % FRAMES.len()]);
                i += 1;
                std::thread::sleep(Duration::from_millis(120));
            }
            eprint!("\r\x1b[2K");
        });
        if let Ok(mut s) = self.spinner.lock() {
            *s = Some((stop, handle));
        }
    }

    fn following(&self, step: usize, max_steps: usize, url: &str, skill: &str) {
        tell!("step {step}/{max_steps} · {url} · from skill {skill} (no model call)");
    }

    fn skill_note(&self, note: &str) {
        tell!("seamark: {note}");
    }

    fn answered(&self, _step: usize) {
        // Off before a question or a confirmation can be put on the line.
        self.stop_spinner();
    }

    fn step(&self, record: &StepRecord, _max_steps: usize) {
        self.stop_spinner();
        if let Some(why) = record.skill.as_ref().and_then(|m| m.took_over.as_ref()) {
            tell!("  the model took over from the skill: {why}");
        }
        if let Some(e) = &record.parse_error {
            tell!("  unreadable answer: {e}");
        }
        if let Some(report) = &record.report {
            for o in &report.outcomes {
                tell!("  {}", o.line());
            }
            if !report.dropped.is_empty() {
                tell!("  not run: {}", report.dropped.join("; "));
            }
        }
        if let Some(d) = &record.divergence {
            tell!("  diverged: {d}");
        }
        if let Some(e) = &record.error {
            tell!("  {e}");
        }
        let cost = record
            .spend
            .cost_usd
            .map(|c| format!(" · ${c:.4}"))
            .unwrap_or_default();
        tell!(
            "  tokens: {} in, {} out{cost}",
            record.spend.tokens.input,
            record.spend.tokens.output
        );
    }
}
