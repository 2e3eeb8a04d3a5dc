//! Skills through the binary, as a person who runs the same tasks every day
//! meets them: the demo's job search done once with the model, then with
//! other words and no model call at all; the site changed and the model
//! taking over where it differs, the skill learned again; a sign-in whose
//! skill keeps the secret's placeholder only, and whose destructive step is
//! held again under another rule; broken, ambiguous and removed skills.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::mcp::Mcp;
use crate::model_server::{between, job_seeker, ModelServer, Received, Reply, INPUT_TOKENS};
use crate::server::Server;
use crate::support::{all_bytes, records, Ran, Workdir};

/// The demo's job board, copied where a test can change it, and served.
pub(crate) struct Board {
    dir: tempfile::TempDir,
    server: seamark::serve::StaticServer,
}

impl Board {
    pub(crate) async fn serve() -> Board {
        let dir = tempfile::tempdir().expect("tempdir");
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/site");
        for entry in std::fs::read_dir(&from).expect("demo/site") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy");
        }
        let server = seamark::serve::StaticServer::start(dir.path().to_path_buf())
            .await
            .expect("serve the board");
        Board { dir, server }
    }

    pub(crate) fn start(&self) -> String {
        self.server.url("index.html")
    }

    /// The job search for `role` in `place`, run into `out`: it ends done.
    async fn search(&self, work: &Workdir, role: &str, place: &str, out: &str) -> Ran {
        let ran = run(work, &task(role, place), &self.start(), out, &[]).await;
        assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
        ran
    }

    /// Shows the results page's filters only `ms` after the page loaded, as
    /// a page that draws its controls late does.
    fn draw_filters_late(&self, ms: u32) {
        let path = self.dir.path().join("results.html");
        let page = std::fs::read_to_string(&path).expect("results.html");
        let late = format!(
            "<script>const f = document.getElementById('filters'); f.hidden = true; \
             addEventListener('load', () => setTimeout(() => {{ f.hidden = false; }}, {ms}));\
             </script></body>"
        );
        assert!(page.contains("</body>"));
        std::fs::write(&path, page.replace("</body>", &late)).expect("write");
    }

    /// Renames the search form's button, as a site's redesign does.
    pub(crate) fn rename_search_button(&self) {
        let path = self.dir.path().join("index.html");
        let page = std::fs::read_to_string(&path).expect("index.html");
        assert!(page.contains("Search jobs</button>"));
        std::fs::write(
            &path,
            page.replace("Search jobs</button>", "Find jobs</button>"),
        )
        .expect("write");
    }
}

pub(crate) fn task(role: &str, place: &str) -> String {
    format!(
        "Search jobs for the role of {role} in {place} with a salary between 50 LPA and 100 LPA"
    )
}

async fn run(work: &Workdir, task: &str, url: &str, out: &str, more: &[&str]) -> Ran {
    let mut args = vec!["run", "--json", "--task", task, "--url", url, "--out", out];
    args.extend_from_slice(more);
    work.run(&args).await
}

/// The board served, the model started, and the job search done once with
/// the model, which learns its skill.
async fn learned_once(model: fn(&Received) -> Reply) -> (Board, ModelServer, Workdir) {
    let board = Board::serve().await;
    let model = ModelServer::answering(model).await;
    let work = Workdir::new(&model);
    let first = board.search(&work, "Data Scientist", "India", "r1").await;
    assert_eq!(
        skill_files(&work).len(),
        1,
        "one skill learned: {}",
        first.stderr()
    );
    (board, model, work)
}

/// The page a run ended on.
fn final_url(run_dir: &Path) -> String {
    let steps = records(run_dir, "step");
    let last = steps.last().expect("a step");
    last["url_after"]
        .as_str()
        .or(last["url"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The run was the skill's four steps, and the model was not called since
/// it had been called `calls` times.
fn assert_done_from_the_skill(model: &ModelServer, calls: usize, ran: &Ran) {
    assert_eq!(
        model.received().len(),
        calls,
        "no model call: {}",
        ran.stderr()
    );
    assert_eq!(ran.json()["skill"]["steps"], 4, "{}", ran.json());
}

fn skill_files(work: &Workdir) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(work.path("skills"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    files
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

#[tokio::test]
async fn a_task_done_once_is_done_again_without_the_model_and_the_model_takes_over_where_the_site_changed(
) {
    let board = Board::serve().await;
    let model = ModelServer::answering(job_seeker).await;
    let work = Workdir::new(&model);

    // Once with the model: done, and learned.
    let first = board.search(&work, "Data Scientist", "India", "r1").await;
    let calls = model.received().len();
    assert_eq!(calls, 4, "the model did every step: {}", first.stderr());
    let files = skill_files(&work);
    assert_eq!(files.len(), 1, "one skill learned: {}", first.stderr());
    let skill = read_json(&files[0]);
    assert_eq!(
        skill["task"],
        "Search jobs for the role of {{keywords}} in {{location}} with a salary between 50 LPA \
         and 100 LPA"
    );
    assert_eq!(skill["steps"][0]["actions"][0]["do"], "TYPE:@:{{keywords}}");
    let said = first.json()["skill"]["learned"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(files[0].ends_with(&said), "{said}");

    // Other words: done from the skill to the end, and no model call.
    let second = board.search(&work, "Data Engineer", "Pune", "r2").await;
    assert_done_from_the_skill(&model, calls, &second);
    let v = second.json();
    assert_eq!(v["status"], "done");
    assert_eq!(v["tokens"]["input"], 0);
    assert_eq!(v["cost_usd"], 0.0, "no model call costs nothing: {v}");
    // The page shows the new search, filtered.
    let url = final_url(&work.path("r2"));
    assert!(
        url.contains("q=Data+Engineer&l=Pune&salary=50-75&salary=75-100"),
        "{url}"
    );
    second.stderr_has("from skill");
    let html = std::fs::read_to_string(work.path("r2/report.html")).expect("report");
    assert!(
        html.contains("with no model call"),
        "the report marks skill steps"
    );
    assert!(
        html.contains("following skill"),
        "the report says which skill"
    );
    assert!(records(&work.path("r2"), "step")
        .iter()
        .all(|s| s["skill"]["step"].is_number()));

    // The site changed: the model takes over at that step, the run still
    // succeeds, and the skill is learned again.
    board.rename_search_button();
    let third = board.search(&work, "Data Analyst", "Delhi", "r3").await;
    let v = third.json();
    assert!(model.received().len() > calls, "the model took over");
    let why = v["skill"]["took_over"].as_str().unwrap_or_default();
    assert!(
        why.contains("button \"Search jobs\" is not on the page"),
        "{v}"
    );
    let took = records(&work.path("r3"), "step");
    assert!(took[0]["skill"]["took_over"].is_string(), "{}", took[0]);
    // The model was told where the skill stopped and why.
    let told = model.received()[calls].text();
    assert!(told.contains("stops following it here"), "{told}");
    third.stderr_has("the model took over");
    let files = skill_files(&work);
    assert_eq!(files.len(), 1, "the same skill, updated");
    let updated = read_json(&files[0]);
    assert!(updated["updated"].is_string(), "{updated:#}");
    assert_eq!(updated["learned"], skill["learned"]);
    assert!(updated.to_string().contains("Find jobs"), "{updated:#}");
    assert!(!updated.to_string().contains("Search jobs\""));

    // And the updated skill does the changed site alone.
    let calls = model.received().len();
    let fourth = board.search(&work, "Designer", "Mumbai", "r4").await;
    assert_eq!(model.received().len(), calls, "{}", fourth.stderr());
    assert!(final_url(&work.path("r4")).contains("q=Designer&l=Mumbai"));
}

const PW: &str = "hunter2-Acme-7731";

/// Signs in with the secret, deletes the account, says it is done; stops
/// when a step was held.
fn account_closer(r: &Received) -> Reply {
    let text = r.text();
    Reply::Text(if text.contains("HELD") {
        "STOP:deleting the account needs a person's confirmation".into()
    } else if r.url().contains("account-deleted") {
        "COMPLETE:the account is deleted".into()
    } else if text.contains("\"Delete account\"") {
        format!("CLICK:{}", r.id_of("Delete account"))
    } else {
        crate::signin::sign_in(r)
    })
}

#[tokio::test]
async fn a_skill_keeps_the_secrets_placeholder_only_and_its_destructive_step_is_held_again() {
    let server = Server::start(None).await;
    let model = ModelServer::answering(account_closer).await;
    let work = Workdir::new(&model);
    let secret = format!("ACME_PW@127.0.0.1={PW}");
    let task =
        "Sign in as ada with the password stored as the secret ACME_PW, then delete the account";
    let url = server.url("signin.html");
    let args =
        |confirm: &'static str| ["--secret", &secret, "--confirm", confirm].map(String::from);
    let allow = args("allow");
    let allow: Vec<&str> = allow.iter().map(String::as_str).collect();
    let learned = run(&work, task, &url, "r1", &allow).await;
    assert_eq!(learned.code(), Some(0), "{}", learned.stderr());
    assert_eq!(server.posted("/account-deleted.html").len(), 1);
    let files = skill_files(&work);
    assert_eq!(files.len(), 1, "{}", learned.stderr());
    let text = std::fs::read_to_string(&files[0]).expect("skill");
    assert!(text.contains("{{secret:ACME_PW}}"), "{text}");
    for (name, bytes) in all_bytes(&work.path("skills")) {
        assert!(
            !bytes.windows(PW.len()).any(|w| w == PW.as_bytes()),
            "{name} holds the secret"
        );
    }

    // Under --confirm deny the skill's delete is held, as the model's was
    // held before: the account stays, and the model takes over.
    let calls = model.received().len();
    let deny = args("deny");
    let deny: Vec<&str> = deny.iter().map(String::as_str).collect();
    let held = run(&work, task, &url, "r2", &deny).await;
    assert_eq!(held.code(), Some(1), "{}", held.stderr());
    assert_eq!(
        server.posted("/account-deleted.html").len(),
        1,
        "the skill's delete ran under deny"
    );
    // The sign-in went through from the skill with the secret typed.
    assert_eq!(server.posted("/signed-in.html").len(), 2);
    let steps = records(&work.path("r2"), "step");
    assert_eq!(steps[0]["skill"]["step"], 1, "{}", steps[0]);
    assert_eq!(steps[1]["skill"]["step"], 2, "{}", steps[1]);
    assert_eq!(steps[1]["report"]["confirmations"][0]["allowed"], false);
    assert!(steps[2]["skill"]["took_over"]
        .as_str()
        .is_some_and(|w| w.contains("did not run as learned")));
    assert_eq!(
        model.received().len(),
        calls + 1,
        "the model took over once"
    );
    assert!(!held.stderr().contains(PW));
}

#[tokio::test]
async fn broken_and_ambiguous_skills_are_told_and_never_run() {
    let (board, model, work) = learned_once(job_seeker).await;
    let learned = skill_files(&work).remove(0);
    let name = learned
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();

    // A garbage file and a skill cut short are told and left alone.
    std::fs::write(work.path("skills/garbage.json"), "{{{ not json").expect("write");
    let whole = std::fs::read_to_string(&learned).expect("skill");
    std::fs::write(work.path("skills/cut.json"), &whole[..whole.len() / 2]).expect("write");
    let listed = work.run(&["skill", "list"]).await;
    assert_eq!(listed.code(), Some(0), "{}", listed.stderr());
    let out = listed.stdout();
    assert!(out.contains("garbage.json  broken, never run"), "{out}");
    assert!(out.contains("cut.json  broken, never run"), "{out}");
    assert!(
        out.contains(&format!("{name}  4 steps  keywords, location")),
        "{out}"
    );

    // A copy under another name: two skills fit, none is followed.
    let mut copy: Value = serde_json::from_str(&whole).expect("JSON");
    copy["name"] = "copy".into();
    std::fs::write(work.path("skills/copy.json"), copy.to_string()).expect("write");
    let calls = model.received().len();
    let both = board.search(&work, "Data Engineer", "Pune", "r2").await;
    let err = both.stderr();
    assert!(err.contains("garbage.json is ignored"), "{err}");
    assert!(err.contains("all fit this task: none is followed"), "{err}");
    let steps = records(&work.path("r2"), "step");
    assert!(steps.iter().all(|s| s["skill"].is_null()));
    assert_eq!(
        model.received().len(),
        calls + steps.len(),
        "the model did it all"
    );
    assert_eq!(skill_files(&work).len(), 4, "nothing learned from it");

    // Removed: the one left is followed again.
    let removed = work.run(&["skill", "rm", "copy"]).await;
    assert_eq!(removed.code(), Some(0), "{}", removed.stderr());
    assert!(!work.path("skills/copy.json").exists());
    let missing = work.run(&["skill", "rm", "copy"]).await;
    assert_eq!(missing.code(), Some(2));
    missing.stderr_has("no skill \"copy\"");
    let shown = work.run(&["skill", "show", &name]).await;
    assert!(
        shown
            .stdout()
            .contains("TYPE:@:{{keywords}}  on textbox \"Keywords\""),
        "{}",
        shown.stdout()
    );
    let calls = model.received().len();
    board.search(&work, "Data Engineer", "Pune", "r3").await;
    assert_eq!(model.received().len(), calls);

    // --no-skills: the model does every step, and nothing is learned.
    let off = run(
        &work,
        &task("Designer", "Pune"),
        &board.start(),
        "r4",
        &["--no-skills"],
    )
    .await;
    assert_eq!(off.code(), Some(0), "{}", off.stderr());
    let steps = records(&work.path("r4"), "step").len();
    assert_eq!(model.received().len(), calls + steps);
    assert_eq!(skill_files(&work).len(), 3, "nothing learned");
}

/// The job seeker, who also says which values a task worded otherwise has
/// (`Find R jobs in P paying …`) when asked to fill a skill's parameters.
fn job_seeker_who_fills(r: &Received) -> Reply {
    let text = r.text();
    let Some((_, asked)) = text.split_once("The person's task: \"") else {
        return job_seeker(r);
    };
    Reply::Text(
        serde_json::json!({
            "keywords": between(asked, "Find ", " jobs in "),
            "location": between(asked, " jobs in ", " paying"),
        })
        .to_string(),
    )
}

/// A skill's commands settle briskly; a page that draws the next step's
/// targets later than that is looked at again, after the usual wait, until
/// they show (a few seconds at most), before the model is asked to take
/// over.
#[tokio::test]
async fn a_skill_page_that_draws_its_targets_late_is_looked_at_again_not_handed_over() {
    let (board, model, work) = learned_once(job_seeker).await;
    let calls = model.received().len();
    board.draw_filters_late(800);
    let second = board.search(&work, "Data Engineer", "Pune", "r2").await;
    assert_done_from_the_skill(&model, calls, &second);
    let url = final_url(&work.path("r2"));
    assert!(url.contains("salary=50-75&salary=75-100"), "{url}");
}

#[tokio::test]
async fn a_task_worded_otherwise_costs_one_small_model_call_to_fill_the_skill() {
    let (board, model, work) = learned_once(job_seeker_who_fills).await;
    let calls = model.received().len();
    let asked = "Find Product Manager jobs in Chennai paying between 50 and 100 LPA";
    let second = run(&work, asked, &board.start(), "r2", &[]).await;
    assert_eq!(second.code(), Some(0), "{}", second.stderr());
    // One call, with no image, and the run's tokens count it.
    let received = model.received();
    assert_eq!(received.len(), calls + 1, "{}", second.stderr());
    assert!(received[calls].images().is_empty());
    assert_eq!(second.json()["tokens"]["input"], INPUT_TOKENS);
    assert!(final_url(&work.path("r2")).contains("q=Product+Manager&l=Chennai"));
}

#[tokio::test]
async fn a_batch_learns_a_run_that_passes_its_check_and_follows_it_after() {
    let board = Board::serve().await;
    let model = ModelServer::answering(job_seeker).await;
    let work = Workdir::new(&model);
    let line = |id: &str, role: &str, place: &str| {
        serde_json::json!({
            "id": id,
            "task": task(role, place),
            "url": board.start(),
            "check": {"url_contains": "salary=75-100"},
        })
        .to_string()
    };
    let tasks = [
        line("first", "Data Scientist", "India"),
        line("again", "Data Engineer", "Pune"),
    ];
    std::fs::write(work.path("tasks.jsonl"), tasks.join("\n")).expect("tasks");
    let ran = work
        .run(&[
            "batch",
            "tasks.jsonl",
            "--concurrency",
            "1",
            "--skills",
            "learned",
            "--out",
            "b",
        ])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    let results: Vec<Value> = std::fs::read_to_string(work.path("b/results.jsonl"))
        .expect("results")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert!(results.iter().all(|r| r["passed"] == true), "{results:?}");
    let again = work.path("b/runs/again/1");
    assert!(records(&again, "step")
        .iter()
        .all(|s| s["skill"]["step"].is_number()));
    // The first run's steps were the model's, the second's none: so the
    // results and the summary count the model calls.
    let first_steps = records(&work.path("b/runs/first/1"), "step").len();
    assert_eq!(model.received().len(), first_steps);
    let calls: Vec<&Value> = results.iter().map(|r| &r["model_calls"]).collect();
    assert_eq!(calls, [&Value::from(first_steps), &Value::from(0)]);
    assert!(
        ran.stdout()
            .contains(&format!("{first_steps} model calls (")),
        "{}",
        ran.stdout()
    );
    assert_eq!(
        std::fs::read_dir(work.path("learned"))
            .expect("skills")
            .count(),
        1
    );
}

#[tokio::test]
async fn an_mcp_client_does_a_learned_task_with_the_skill_tool() {
    let (board, model, work) = learned_once(job_seeker).await;
    let calls = model.received().len();
    let skills = work.path("skills");
    let mcp = Mcp::stdio(&["--skills", skills.to_str().unwrap_or_default()]).await;
    let asked = serde_json::json!({"task": task("Data Engineer", "Pune"), "url": board.start()});
    let done = mcp.call("skill", asked).await;
    assert!(!done.is_error, "{}", done.text);
    assert!(
        done.text
            .contains("4 steps with no model call; the task is done"),
        "{}",
        done.text
    );
    assert!(
        done.text
            .contains("q=Data+Engineer&l=Pune&salary=50-75&salary=75-100"),
        "the page after it: {}",
        done.text
    );
    let other = serde_json::json!({"task": "Post a job ad for a Designer", "url": board.start()});
    let refused = mcp.call("skill", other).await;
    assert!(refused.is_error);
    assert!(
        refused.text.contains("this site's skills do"),
        "{}",
        refused.text
    );
    let dir = mcp.close().await;
    let steps = records(&dir.path().join("rec"), "step");
    assert_eq!(steps.len(), 4);
    assert!(steps.iter().all(|s| s["skill"]["step"].is_number()));
    assert_eq!(model.received().len(), calls, "no model call");
}

#[tokio::test]
async fn under_review_skills_a_learned_skill_waits_for_skill_approve_before_it_is_followed() {
    let board = Board::serve().await;
    let model = ModelServer::answering(job_seeker).await;
    let work = Workdir::new(&model);
    let review = ["--review-skills"];
    let first = run(
        &work,
        &task("Data Scientist", "India"),
        &board.start(),
        "r1",
        &review,
    )
    .await;
    assert_eq!(first.code(), Some(0), "{}", first.stderr());
    assert!(skill_files(&work).is_empty(), "nothing followed is learned");
    let proposed: Vec<PathBuf> = std::fs::read_dir(work.path("skills/proposed"))
        .expect("the proposals")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert_eq!(proposed.len(), 1, "{proposed:?}");
    let name = proposed[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // Not followed while it waits: the model does the task again.
    let calls = model.received().len();
    let second = run(
        &work,
        &task("Data Engineer", "Pune"),
        &board.start(),
        "r2",
        &review,
    )
    .await;
    assert_eq!(second.code(), Some(0), "{}", second.stderr());
    assert!(model.received().len() > calls, "the model was called");
    let listed = work.run(&["skill", "list"]).await;
    listed.stdout_has(&format!("{name}  proposed"));
    // Approved: followed from then on, with no model call.
    let approved = work.run(&["skill", "approve", &name]).await;
    assert_eq!(approved.code(), Some(0), "{}", approved.stderr());
    assert_eq!(skill_files(&work).len(), 1);
    let calls = model.received().len();
    let third = run(
        &work,
        &task("Analyst", "Delhi"),
        &board.start(),
        "r3",
        &review,
    )
    .await;
    assert_eq!(third.code(), Some(0), "{}", third.stderr());
    assert_eq!(model.received().len(), calls, "no model call");
    assert_eq!(third.json()["skill"]["followed"], name.as_str());
    assert_eq!(third.json()["status"], "done");
}
