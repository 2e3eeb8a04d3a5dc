#!/usr/bin/env bash
# The first minute: installs what is missing (Chromium), builds seamark, and
# runs a task end to end on a job board bundled with seamark, with recorded
# answers (no model, no key): the progress on stderr, the answer, and the run
# directory with report.html and run.gif. Arguments go to `seamark demo`
# (--model openai/gpt-4o-mini runs the same task with a real model).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --locked
exec target/release/seamark demo "$@"
