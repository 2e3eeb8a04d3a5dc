//! WebGames through the binary, as a user runs it: `seamark batch --webgames`
//! serves the built suite and reads its task file, and a scripted oracle that
//! reads only what seamark sends (the task, the element list, what READ gave,
//! the clock line) solves one variant of each capability the suite asks for:
//! a right click, a press held, a key chord, today's date, the page as
//! printed, a downloaded PDF, three buttons against the clock, and the
//! towers of Hanoi in at most three model calls. The app itself decides: it
//! shows its password only when the challenge is solved, and a run passes
//! when its answer holds it.

use regex::Regex;
use serde_json::Value;

use crate::model_server::{ModelServer, Received, Reply};
use crate::server::webgames_dir;
use crate::support::Workdir;

/// The password a solved challenge shows, in what READ gave.
fn password_in(read: &str) -> Option<String> {
    let re = Regex::new(r"(?i)password(?: is)?:[\s*]*([A-Za-z0-9_]{6,})").ok()?;
    re.captures(read).map(|c| c[1].to_string())
}

/// Whether an earlier step of this run ran a command starting so.
fn did(r: &Received, command: &str) -> bool {
    let text = r.text();
    let history = text
        .split_once("# Steps so far")
        .and_then(|(_, rest)| rest.split_once("# Current page"))
        .map(|(h, _)| h.to_string())
        .unwrap_or_default();
    history.contains(command)
}

/// The only id of a role in the list (a button with no name).
fn only(r: &Received, role: &str) -> u32 {
    let text = r.text();
    let ids: Vec<u32> = text
        .lines()
        .filter(|l| l.starts_with('[') && l.contains(&format!("] {role}")))
        .filter_map(|l| l[1..].split(']').next()?.parse().ok())
        .collect();
    assert_eq!(ids.len(), 1, "one {role} in:\n{text}");
    ids[0]
}

/// The moves of the towers of Hanoi of `n` disks from peg `a` to peg `c`.
fn hanoi(n: u32, a: u32, b: u32, c: u32, moves: &mut Vec<(u32, u32)>) {
    if n > 0 {
        hanoi(n - 1, a, c, b, moves);
        moves.push((a, c));
        hanoi(n - 1, b, a, c, moves);
    }
}

/// The oracle: what a model that reads well would answer, by challenge.
fn oracle(r: &Received) -> Reply {
    let read = r.reading();
    let url = r.url();
    let challenge = url.rsplit('/').next().unwrap_or_default().to_string();
    let task = r.task();
    // Print-reveal's first password (the printed one) is typed, not given.
    if challenge != "print-reveal" || did(r, "TYPE:") {
        if let Some(pw) = password_in(&read) {
            return Reply::Text(format!("ANSWER:{pw}\nCOMPLETE:the password is {pw}"));
        }
    }
    let answer = match challenge.as_str() {
        "right-click" => format!("RIGHT_CLICK:{}\nREAD", r.id_of("Show Password")),
        c if c.starts_with("button-hold") => {
            let seconds: f64 = Regex::new(r"for exactly (\d+) seconds?")
                .ok()
                .and_then(|re| re.captures(&task)?.get(1)?.as_str().parse().ok())
                .unwrap_or_else(|| panic!("no time in {task:?}"));
            format!("HOLD:{}:{}\nREAD", only(r, "button"), seconds + 0.4)
        }
        "key-combo" if read.is_empty() => "READ".to_string(),
        "key-combo" => {
            let combo = Regex::new(r"(?:(?:Control|Shift|Alt|Meta) \+ )+[A-Z0-9]")
                .ok()
                .and_then(|re| re.find(&read).map(|m| m.as_str().replace(" + ", "+")))
                .unwrap_or_else(|| panic!("no key combination in {read}"));
            format!("PRESS:{combo}\nREAD")
        }
        "date" => {
            let now = r
                .text()
                .lines()
                .find_map(|l| l.strip_prefix("Now: "))
                .map(|l| l[..10].to_string())
                .unwrap_or_else(|| panic!("no Now: line in {}", r.text()));
            let field = r.first_named("textbox", "Enter today's date");
            format!(
                "TYPE:{}:{now}\nCLICK:{}\nREAD",
                r.id_of(&field),
                r.id_of("Check Date")
            )
        }
        "print-reveal" if !did(r, "READ:print") => "READ:print".to_string(),
        "print-reveal" => {
            let printed =
                password_in(&read).unwrap_or_else(|| panic!("no password printed: {read}"));
            format!(
                "TYPE:{}:{printed}\nCLICK:{}\nREAD",
                r.id_of("Enter the password from the PDF..."),
                r.id_of("Verify Password")
            )
        }
        "resume-challenge" if !did(r, "CLICK:") => {
            format!("CLICK:{}", r.id_of("Download Resume PDF"))
        }
        "resume-challenge" if read.is_empty() && did(r, "READ:download") => "READ".to_string(),
        "resume-challenge" if read.is_empty() => {
            let name = Regex::new(r#""([^"]+\.pdf)""#)
                .ok()
                .and_then(|re| Some(re.captures(&r.text())?[1].to_string()))
                .unwrap_or_else(|| panic!("no PDF downloaded: {}", r.text()));
            format!("READ:download:{name}")
        }
        // The form was sent and the page was read before it answered.
        "resume-challenge" if !read.contains("The PDF ") => "WAIT:1\nREAD".to_string(),
        "resume-challenge" => resume_form(r, &read),
        // Each button shows only once the one before it is clicked, so each
        // is a look of its own: the easy variant's ten seconds, not the hard
        // one's three, which two looks on a loaded machine can overrun.
        "click-cubed-easy" => {
            let list = r
                .text()
                .split_once("<page_data>")
                .map(|(_, page)| page.to_string())
                .unwrap_or_default();
            let button = ["Click First!", "Click Second!", "Click Third!"]
                .into_iter()
                .find(|b| list.contains(&format!("button \"{b}\"")));
            match button {
                Some(b) if b == "Click Third!" => format!("CLICK:{}\nREAD", r.id_of(b)),
                Some(b) => format!("CLICK:{}", r.id_of(b)),
                None => "READ".to_string(),
            }
        }
        "towers-of-hanoi-easy" => {
            let disks: u32 = Regex::new(r"Stack (\d+) disks")
                .ok()
                .and_then(|re| re.captures(&task)?.get(1)?.as_str().parse().ok())
                .unwrap_or_else(|| panic!("no disks in {task:?}"));
            // The pegs' buttons, left to right: the list's first three.
            let pegs: Vec<u32> = r
                .text()
                .lines()
                .filter(|l| l.contains("button \"Select"))
                .filter_map(|l| l[1..].split(']').next()?.parse().ok())
                .collect();
            assert_eq!(pegs.len(), 3, "three pegs in {}", r.text());
            let mut moves = Vec::new();
            hanoi(disks, 0, 1, 2, &mut moves);
            let clicks: Vec<String> = moves
                .iter()
                .flat_map(|(from, to)| [pegs[*from as usize], pegs[*to as usize]])
                .map(|id| format!("CLICK:{id}"))
                .collect();
            format!("{}\nREAD", clicks.join("\n"))
        }
        other => panic!("no oracle for {other}: {}", r.text()),
    };
    Reply::Text(answer)
}

/// The resume's fields, filled from the PDF's text as READ gave it, as a
/// reader finds them: the name on top, the lines that are an email and a
/// phone number, the university and its degree, the latest job, the first
/// skill of each kind, the first project.
fn resume_form(r: &Received, pdf: &str) -> String {
    let lines: Vec<&str> = pdf
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("---") && !l.starts_with("```"))
        .filter(|l| !l.starts_with("The PDF"))
        .collect();
    let find = |what: &str, pick: &dyn Fn(&str) -> bool| -> usize {
        lines
            .iter()
            .position(|l| pick(l))
            .unwrap_or_else(|| panic!("no {what} in the PDF's text:\n{pdf}"))
    };
    let email = Regex::new(r"^\S+@\S+\.\w+$").expect("a pattern");
    let phone = Regex::new(r"^\(\d{3}\) \d{3}-\d{4}$").expect("a pattern");
    let university = find("university", &|l| l.contains("University"));
    let job = find("work experience", &|l| l == "Work Experience") + 1;
    // A job's dates sit on its title's line, at the right.
    let dates = Regex::new(r"\s+\d{4} - (?:\d{4}|Present)$").expect("a pattern");
    let project = find("projects", &|l| l == "Key Projects") + 1;
    let skill = |kind: &str| -> String {
        let at = find(kind, &|l| l.starts_with(&format!("{kind}:")));
        lines[at][kind.len() + 1..]
            .split(',')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let values = [
        ("Full Name", lines[0].to_string()),
        (
            "Email Address",
            lines[find("email", &|l| email.is_match(l))].to_string(),
        ),
        (
            "Phone Number",
            lines[find("phone", &|l| phone.is_match(l))].to_string(),
        ),
        ("University/College", lines[university].to_string()),
        ("Degree", lines[university + 1].to_string()),
        ("Current Employer", lines[job].to_string()),
        (
            "Current Job Title",
            dates.replace(lines[job + 1], "").to_string(),
        ),
        ("Investigation Skill", skill("Investigation")),
        ("Technology Skill", skill("Technology")),
        ("Communication Skill", skill("Communication")),
        ("Featured Project Name", lines[project].to_string()),
    ];
    let mut commands: Vec<String> = values
        .iter()
        .map(|(field, value)| format!("TYPE:{}:{value}", r.id_of(field)))
        .collect();
    commands.push(format!("CLICK:{}", r.id_of("Submit Answers")));
    commands.push("READ".into());
    commands.join("\n")
}

/// The challenges the oracle solves, one per capability.
const SOLVED: &[&str] = &[
    "right-click",
    "button-hold-easy",
    "key-combo",
    "date",
    "print-reveal",
    "resume-challenge",
    "click-cubed-easy",
    "towers-of-hanoi-easy",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_oracle_that_reads_what_seamark_sends_solves_each_capability_webgames_asks_for() {
    let model = ModelServer::answering(oracle).await;
    let work = Workdir::new(&model);
    let suite = webgames_dir();
    let ran = work
        .run(&[
            "batch",
            "--webgames",
            &suite.to_string_lossy(),
            "--tasks",
            &SOLVED.join(","),
            "--timezone",
            "UTC",
            "--concurrency",
            "2",
            "--max-steps",
            "8",
            "--out",
            "wg",
            "--json",
        ])
        .await;
    let results: Vec<Value> = std::fs::read_to_string(work.path("wg/results.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let failed: Vec<String> = results
        .iter()
        .filter(|r| r["passed"] != true)
        .map(|r| r.to_string())
        .collect();
    let last_prompts: Vec<String> = SOLVED
        .iter()
        .filter_map(|c| {
            let seen = model.received();
            let last = seen
                .iter()
                .rev()
                .find(|r| r.url().ends_with(&format!("/{c}")))?;
            Some(format!("--- {c}, the last prompt:\n{}", last.text()))
        })
        .collect();
    assert!(
        failed.is_empty() && results.len() == SOLVED.len(),
        "{} of {} ran; failed: {failed:#?}\nstderr:\n{}\n{}",
        results.len(),
        SOLVED.len(),
        ran.stderr(),
        last_prompts.join("\n")
    );
    // The towers of Hanoi: 14 clicks in one reply, which went on after
    // each move, then the password read: at most three model calls.
    let towers = model
        .received()
        .iter()
        .filter(|r| r.url().ends_with("/towers-of-hanoi-easy"))
        .count();
    assert!(towers <= 3, "the towers took {towers} model calls");
}
