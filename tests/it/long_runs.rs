//! A long run's prompt does not grow with it: the last steps in full, the
//! older ones folded to a line each and the oldest into ranges, and what the
//! loop's rules need (a refusal, a checkpoint, the person's answer) still
//! there however old it is.

use crate::model_server::{reply, Received};
use crate::support::Task;
use seamark::safety::DomainPolicy;

/// Keeps a checkpoint and marks the first button, asks the person a
/// question, fetches a page the domain policy refuses, then marks one
/// button a step (reading the next one's id off the list, as a model
/// would), and says COMPLETE at step 31.
fn one_mark_a_step(r: &Received) -> String {
    match r.step() {
        1 => format!("CHECKPOINT:start\nCLICK:{}", r.id_of("Mark 1")),
        2 => "ASK:Which colour should the marks be?".into(),
        3 => "FETCH:http://localhost:9/prices".into(),
        4..=30 => format!("CLICK:{}", r.id_of(&r.first_named("button", "Mark "))),
        _ => "COMPLETE:marked 28 buttons".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thirty_step_run_keeps_the_refusal_the_checkpoint_and_the_answer_in_its_prompt() {
    let done = Task::new("Mark the buttons one at a time", "marks.html")
        .max_steps(32)
        .person_answers("teal")
        .with(|o| {
            o.act.domains = DomainPolicy {
                allow: vec!["127.0.0.1".parse().expect("pattern")],
                block: Vec::new(),
            }
        })
        .run(Vec::new(), || reply(one_mark_a_step))
        .await;
    assert_eq!(
        done.result.status,
        seamark::agent::RunStatus::Done,
        "{}",
        done.result.reason
    );
    let prompts = done.model.received();
    let last = prompts
        .iter()
        .find(|r| r.step() == 31)
        .expect("a prompt for step 31")
        .text();
    let history = crate::model_server::between(&last, "# Steps so far", "# Result of your last");
    // The page: every click of the run marked its button.
    for n in 1..=28 {
        assert!(
            last.contains(&format!("\"Marked {n}\"")),
            "Mark {n} was not marked:\n{last}"
        );
    }
    assert!(last.contains("\"Mark 29\""), "{last}");
    // What the rules need, 28 and 29 steps back.
    assert!(
        last.contains("Checkpoints kept") && last.contains("\"start\" at step 1"),
        "{last}"
    );
    assert!(
        history.contains("the person answered \"Which colour should the marks be?\": teal"),
        "{history}"
    );
    assert!(
        history.contains("FETCH:http://localhost:9/prices → REFUSED"),
        "{history}"
    );
    // Steps 4–19 folded into one range that counts them right, 20–25 a line
    // each, the last five in full; no step is missing.
    assert!(
        history.contains("steps 4–19 (16 steps): clicked element"),
        "{history}"
    );
    assert!(history.contains("… clicked element"), "{history}");
    assert!(history.contains("\nstep 20: clicked element"), "{history}");
    assert!(history.contains("\nstep 25: clicked element"), "{history}");
    assert!(history.contains("\nstep 26 · http://"), "{history}");
    assert!(history.contains("\nstep 30 · http://"), "{history}");
    assert!(!history.contains("not shown"), "{history}");
    // Each click's change was told in words: no step sent the page before it.
    for r in &prompts {
        assert_eq!(r.images().len(), 1, "step {}", r.step());
    }
}
