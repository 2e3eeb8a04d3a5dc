//! The seamark binary as a test runs it: [`Seamark`], a fluent builder
//! whose run always checks the exit status, a working directory for several
//! runs, and a run started and left running.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::model_server::ModelServer;
use crate::processes::{net_logs_of, tmp_of, TestDir};

/// The model settings of the person running the tests, none of which may
/// reach a test's seamark.
const MODEL_VARIABLES: [&str; 6] = [
    "SEAMARK_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "SEAMARK_PRICES",
];

/// A seamark process to run: its arguments, environment, standard input and
/// the exit status it must end with (0 unless told), checked by [`Seamark::run`]
/// with what it printed shown when it differs:
///
/// ```ignore
/// Seamark::new(&["mark", "nowhere"]).fails(2).run().await.stderr_has("no such file");
/// ```
pub struct Seamark {
    args: Vec<String>,
    env: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    model: Option<String>,
    code: i32,
    limit: Duration,
}

impl Seamark {
    /// `seamark ARGS…`, in a temp dir of its own (also its TMPDIR), with no
    /// model settings of the person running the tests.
    pub fn new(args: &[&str]) -> Seamark {
        Seamark {
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Vec::new(),
            stdin: None,
            model: None,
            code: 0,
            limit: Duration::from_secs(120),
        }
    }

    /// `seamark run --json --out rec ARGS…`: a task, its result as JSON on
    /// standard output and its run directory in `rec`.
    pub fn task(args: &[&str]) -> Seamark {
        let mut all = vec!["run", "--json", "--out", "rec"];
        all.extend_from_slice(args);
        Seamark::new(&all)
    }

    /// With each `key=value` in its environment.
    pub fn envs(self, pairs: &[(&str, &str)]) -> Seamark {
        pairs.iter().fold(self, |s, (k, v)| s.env(k, v))
    }

    /// With `key=value` in its environment.
    pub fn env(mut self, key: &str, value: &str) -> Seamark {
        self.env.push((key.into(), value.into()));
        self
    }

    /// With `text` on its standard input (else none: it reads end of file).
    pub fn stdin(mut self, text: &str) -> Seamark {
        self.stdin = Some(text.as_bytes().to_vec());
        self
    }

    /// With the scripted model as its model (OpenAI's wire format).
    pub fn model(mut self, model: &ModelServer) -> Seamark {
        self.model = Some(model.base.clone());
        self
    }

    /// It must end with exit status `code`.
    pub fn fails(mut self, code: i32) -> Seamark {
        self.code = code;
        self
    }

    /// Runs it to its end (at most two minutes) and checks its exit status.
    pub async fn run(self) -> Run {
        let (code, args) = (self.code, self.args.join(" "));
        let run = self.output().await;
        assert_eq!(
            run.code(),
            Some(code),
            "seamark {args} ended with {:?}, not {code}\nstdout:\n{}\nstderr:\n{}",
            run.code(),
            run.stdout(),
            run.stderr()
        );
        run
    }

    /// Runs it to its end (at most two minutes), whatever its exit status:
    /// for the checks that read the status themselves.
    pub async fn output(self) -> Run {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let (mut cmd, dir) = command(&args);
        for var in MODEL_VARIABLES {
            cmd.env_remove(var);
        }
        if let Some(base) = &self.model {
            with_model(&mut cmd, base);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.stdin(match self.stdin {
            Some(_) => std::process::Stdio::piped(),
            None => std::process::Stdio::null(),
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
        let mut child = cmd.spawn().expect("start seamark");
        if let (Some(text), Some(mut input)) = (self.stdin, child.stdin.take()) {
            use tokio::io::AsyncWriteExt;
            input.write_all(&text).await.expect("write stdin");
        }
        let out = tokio::time::timeout(self.limit, child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("seamark {} hung", self.args.join(" ")))
            .expect("run seamark");
        Run {
            dir: Some(dir),
            out,
        }
    }
}

/// One run of the binary, with its own temp dir (also its TMPDIR, so that a
/// leftover browser profile or process would show).
pub struct Run {
    /// Its own temp dir (none for a run in a [`Workdir`]).
    dir: Option<TestDir>,
    /// What it printed, and how it ended.
    pub out: Output,
}

impl Run {
    /// What a process a test started itself printed.
    pub fn of(out: Output) -> Run {
        Run { dir: None, out }
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
    pub fn path(&self, name: &str) -> PathBuf {
        let dir = self
            .dir
            .as_ref()
            .expect("a run in a Workdir: ask the Workdir");
        dir.path().join(name)
    }
    /// The one JSON object `--json` printed.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout().trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
                self.stdout(),
                self.stderr()
            )
        })
    }
    /// Its standard error holds `text`; else the test fails showing it.
    pub fn stderr_has(&self, text: &str) -> &Run {
        assert!(
            self.stderr().contains(text),
            "stderr lacks {text:?}:\n{}",
            self.stderr()
        );
        self
    }
    /// Its standard output holds `text`; else the test fails showing it.
    pub fn stdout_has(&self, text: &str) -> &Run {
        assert!(
            self.stdout().contains(text),
            "stdout lacks {text:?}:\n{}",
            self.stdout()
        );
        self
    }
    /// The temporary browser profile is gone.
    pub fn profile_removed(&self) -> bool {
        profiles_in(&self.path("tmp")).is_empty()
    }
}

pub fn profiles_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("seamark-profile-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The binary with these arguments, in a new temp dir that is also its TMPDIR.
pub fn command(args: &[&str]) -> (tokio::process::Command, TestDir) {
    let dir = TestDir::new();
    (command_in(dir.path(), args), dir)
}

/// The binary with these arguments in `dir`, whose `tmp/` is its TMPDIR.
pub fn command_in(dir: &Path, args: &[&str]) -> tokio::process::Command {
    let tmp = tmp_of(dir);
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_seamark"));
    cmd.current_dir(dir)
        .env("TMPDIR", &tmp)
        .env(seamark::browser::NET_LOG_ENV, net_logs_of(dir))
        .env_remove("SEAMARK_CHROME")
        .args(args);
    cmd
}

/// A working directory of its own for several runs of the binary against
/// the scripted model (files one run leaves, the next one reads).
pub struct Workdir {
    dir: TestDir,
    model: String,
}

impl Workdir {
    /// A new directory, runs in it against `model`.
    pub fn new(model: &ModelServer) -> Workdir {
        Workdir {
            dir: TestDir::new(),
            model: model.base.clone(),
        }
    }

    /// A path in the directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The binary with these arguments, to run or to start.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = command_in(self.dir.path(), args);
        with_model(&mut cmd, &self.model);
        cmd.kill_on_drop(true);
        cmd
    }

    /// Runs the binary with these arguments to its end. One that is still
    /// running after three minutes is sent SIGTERM, which makes it end the
    /// way it tells (a run's end and report, a batch's summary), and the
    /// test fails with what it printed: a hang shows where it hung.
    pub async fn run(&self, args: &[&str]) -> Ran {
        self.run_with_env(args, &[]).await
    }

    /// [`Workdir::run`], with these variables set in its environment.
    pub async fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = cmd.spawn().expect("start seamark");
        let pid = child.id().expect("a pid");
        let out = child.wait_with_output();
        tokio::pin!(out);
        let out = match tokio::time::timeout(Duration::from_secs(180), &mut out).await {
            Ok(out) => out.expect("run seamark"),
            Err(_) => {
                crate::processes::kill(&[pid], "TERM");
                // A future that ended is not waited on again (it would panic).
                let (ended, out) =
                    match tokio::time::timeout(Duration::from_secs(60), &mut out).await {
                        Ok(out) => ("ended by SIGTERM", out),
                        Err(_) => {
                            // Stuck past the signal too: what it printed still
                            // shows how far it got.
                            crate::processes::kill(&[pid], "KILL");
                            let out = tokio::time::timeout(Duration::from_secs(30), &mut out)
                                .await
                                .expect("seamark's output did not end after SIGKILL");
                            ("outlived SIGTERM by a minute, killed", out)
                        }
                    };
                let out = out.expect("run seamark");
                panic!(
                    "seamark hung: still running after 180 s, {ended}\nstdout:\n{}\nstderr:\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        };
        Run { dir: None, out }
    }
}

/// What one run of a [`Workdir`] printed: a [`Run`] whose directory is the
/// working directory's.
pub type Ran = Run;

/// Points the command at the scripted model (OpenAI's wire format), with
/// none of the user's own model settings.
pub fn with_model(cmd: &mut tokio::process::Command, model_base: &str) {
    for var in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "SEAMARK_PRICES",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("OPENAI_BASE_URL", format!("{model_base}/v1"))
        .env("SEAMARK_MODEL", "openai/scripted");
}

/// `seamark run --json --out rec` with the scripted model, started and left
/// running: for tests that interrupt or kill it. The directory is the run's
/// working directory.
pub fn spawn_with_model(model: &ModelServer, args: &[&str]) -> (tokio::process::Child, TestDir) {
    let mut all = vec!["run", "--json", "--out", "rec"];
    all.extend_from_slice(args);
    let (mut cmd, dir) = command(&all);
    with_model(&mut cmd, &model.base);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    (cmd.spawn().expect("start seamark"), dir)
}
