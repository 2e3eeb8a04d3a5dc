//! MiniWoB++ tasks (vendor/miniwob), solved from the element table alone: the
//! test reads the instruction, finds the element it names in the table, and the
//! executor acts on it by id. The page itself scores the episode, so a target
//! missing from the table, misnamed, or clicked at a point that misses it fails.

use seamark::perceive::{element_list, Element};
use seamark::records::Status;

use crate::support::{Actor, Fixture, ReportExt};

/// Every episode starts from this seed: the same task each run.
const SEED: &str = "seamark";

/// One episode of a task, with an executor on the page.
struct Episode {
    actor: Actor,
    instruction: String,
}

impl Episode {
    /// Opens a task, starts an episode and looks once.
    async fn start(task: &str) -> Episode {
        let fx = Fixture::open(&format!("miniwob/miniwob/{task}.html")).await;
        let instruction = fx
            .eval(&format!(
                "Math.seedrandom('{SEED}'); core.EPISODE_MAX_TIME = 2000000; \
                 core.startEpisodeReal(); core.getUtterance()"
            ))
            .await;
        let instruction = instruction.as_str().unwrap_or_default().to_string();
        assert!(!instruction.is_empty(), "{task}: no instruction");
        Episode {
            actor: fx.actor().await,
            instruction,
        }
    }

    /// What the instruction says between `before` (at its start) and `after`.
    fn between(&self, before: &str, after: &str) -> String {
        let rest = self.instruction.strip_prefix(before).unwrap_or_default();
        rest.split(after).next().unwrap_or_default().to_string()
    }

    /// The words the instruction puts in double quotes.
    fn quoted(&self) -> Vec<&str> {
        self.instruction.split('"').skip(1).step_by(2).collect()
    }

    /// The first element in a new look with this role and name. Each command
    /// gets a look of its own, as after a batch the page cut short: the
    /// countdown MiniWoB shows ticks every second, which the executor takes for
    /// a change of the page.
    async fn find(&mut self, role: &str, name: &str) -> u32 {
        self.find_where(&format!("{role} {name:?}"), |e| {
            e.role == role && e.name == name
        })
        .await
    }

    /// The first element in a new look that `pick` accepts.
    async fn find_where(&mut self, what: &str, pick: impl Fn(&Element) -> bool) -> u32 {
        let obs = self.actor.look().await;
        let found = obs.table.elements.iter().find(|e| pick(e)).map(|e| e.id);
        found.unwrap_or_else(|| {
            panic!(
                "no {what} for {:?}:\n{}",
                self.instruction,
                element_list(&obs.table, usize::MAX)
            )
        })
    }

    /// Clicks the first element with this role and name.
    async fn click(&mut self, role: &str, name: &str) {
        let id = self.find(role, name).await;
        self.run(&format!("CLICK:{id}")).await;
    }

    /// Runs one command; it must have done what it says.
    async fn run(&mut self, command: &str) {
        let report = self.actor.run(command).await;
        let outcome = report.outcome(0);
        assert!(
            matches!(outcome.status, Status::Done),
            "{command}: {}",
            report.feedback()
        );
    }

    /// The page's own score of the episode: 1 for a solved task.
    async fn solved(self) {
        let reward = self.actor.eval("WOB_RAW_REWARD_GLOBAL").await;
        let reason = self.actor.eval("String(WOB_REWARD_REASON)").await;
        self.actor.close().await;
        assert_eq!(
            reward.as_f64(),
            Some(1.0),
            "{:?}: {reason}",
            self.instruction
        );
    }
}

#[tokio::test]
async fn click_link_spans_that_act_as_links_are_listed_by_their_text() {
    let mut ep = Episode::start("click-link").await;
    let name = ep.quoted()[0].to_string();
    ep.click("clickable", &name).await;
    ep.solved().await;
}

#[tokio::test]
async fn click_button_the_named_button_among_others() {
    let mut ep = Episode::start("click-button").await;
    let name = ep.quoted()[0].to_string();
    ep.click("button", &name).await;
    ep.solved().await;
}

#[tokio::test]
async fn click_checkboxes_each_named_box_then_submit() {
    let mut ep = Episode::start("click-checkboxes").await;
    // "Select kWD, 29hX, WMa, ff and click Submit." (or "Select nothing and …").
    let names = ep.between("Select ", " and click Submit");
    for name in names.split(", ").filter(|n| *n != "nothing") {
        ep.click("checkbox", name).await;
    }
    ep.click("button", "Submit").await;
    ep.solved().await;
}

#[tokio::test]
async fn click_option_a_radio_named_by_its_label_then_submit() {
    let mut ep = Episode::start("click-option").await;
    let name = ep.between("Select ", " and click Submit");
    ep.click("radio", &name).await;
    ep.click("button", "Submit").await;
    ep.solved().await;
}

#[tokio::test]
async fn enter_text_typed_into_the_only_field_then_submit() {
    let mut ep = Episode::start("enter-text").await;
    let text = ep.quoted()[0].to_string();
    let field = ep.find("textbox", "").await;
    ep.run(&format!("TYPE:{field}:{text}")).await;
    ep.click("button", "Submit").await;
    ep.solved().await;
}

#[tokio::test]
async fn click_tab_tabs_are_listed_as_tabs() {
    let mut ep = Episode::start("click-tab").await;
    // "Click on Tab #3."
    let name = ep.between("Click on ", ".");
    ep.click("tab", &name).await;
    ep.solved().await;
}

#[tokio::test]
async fn click_dialog_the_close_button_of_a_jquery_dialog() {
    let mut ep = Episode::start("click-dialog").await;
    ep.click("button", "Close").await;
    ep.solved().await;
}

#[tokio::test]
async fn focus_text_a_click_into_the_field() {
    let mut ep = Episode::start("focus-text").await;
    ep.click("textbox", "").await;
    ep.solved().await;
}

#[tokio::test]
async fn login_user_fields_told_by_the_labels_beside_them() {
    let mut ep = Episode::start("login-user").await;
    // The labels are not tied to the fields: each field's hint is its label.
    let quoted: Vec<String> = ep.quoted().iter().map(|q| q.to_string()).collect();
    for (hint, text) in ["Username", "Password"].iter().zip(&quoted) {
        let field = ep
            .find_where(&format!("field hinted {hint}"), |e| {
                e.role == "textbox" && e.hint.as_deref() == Some(hint)
            })
            .await;
        ep.run(&format!("TYPE:{field}:{text}")).await;
    }
    ep.click("button", "Login").await;
    ep.solved().await;
}

#[tokio::test]
async fn choose_list_an_option_of_a_select() {
    let mut ep = Episode::start("choose-list").await;
    // "Select Nicaragua from the list and click Submit."
    let option = ep.between("Select ", " from the list");
    let list = ep.find("combobox", "").await;
    ep.run(&format!("SELECT:{list}:{option}")).await;
    ep.click("button", "Submit").await;
    ep.solved().await;
}

#[tokio::test]
async fn email_inbox_forward_an_email_opened_by_its_row() {
    let mut ep = Episode::start("email-inbox-forward").await;
    // "Find the email by Jeanne and forward that email to Norah."
    let sender = ep.between("Find the email by ", " and forward");
    let to = ep.between(
        &format!("Find the email by {sender} and forward that email to "),
        ".",
    );
    let row = ep
        .find_where(&format!("the row of {sender}'s e-mail"), |e| {
            e.role == "clickable" && e.name.starts_with(&format!("{sender} "))
        })
        .await;
    ep.run(&format!("CLICK:{row}")).await;
    ep.click("clickable", "Forward").await;
    let field = ep
        .find_where("the field beside \"to:\"", |e| {
            e.role == "textbox" && e.hint.as_deref() == Some("to:")
        })
        .await;
    ep.run(&format!("TYPE:{field}:{to}")).await;
    let send = ep
        .find_where("the send icon", |e| {
            e.hint.as_deref() == Some("send forward")
        })
        .await;
    ep.run(&format!("CLICK:{send}")).await;
    ep.solved().await;
}
