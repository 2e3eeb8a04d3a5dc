#!/usr/bin/env bash
# Sets up everything and runs every check and test: formatting, clippy, unit
# tests, and the integration tests against a real headless Chromium. Browser
# tests fail (they never skip) when Chromium cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase says how long it took (bash's SECONDS), so that a slow CI run
# shows where its time went.
phase_start=$SECONDS
phase() {
  echo "test: $1 took $((SECONDS - phase_start)) s" >&2
  phase_start=$SECONDS
}
# The tests' temporary files go in a folder of this run's own, removed at
# the end: among them the profile of the browser the in-process tests share,
# which lives as long as the test binary and so is never removed by it. Open
# to all (as /tmp is): the PostgreSQL servers the tests start run as the
# postgres user when the tests run as root.
test_tmp="$(mktemp -d)"
chmod 1777 "$test_tmp"
# The setup (apt, pip and npm: mostly waiting on the network) runs while
# the code is built, and is waited for before the first test.
setup_log="$test_tmp/setup.log"
scripts/setup.sh >"$setup_log" 2>&1 &
setup_pid=$!
trap 'kill "$setup_pid" 2>/dev/null || true; rm -rf "$test_tmp"' EXIT
# The corpus of saved real pages lives outside the repository: SEAMARK_CORPUS
# names its folder, ../shared/corpus beside the clone by default. Without it
# the tests that read it (their names say "corpus") are skipped, unless
# SEAMARK_REQUIRE_CORPUS=1 (CI) makes that a failure.
export SEAMARK_CORPUS="${SEAMARK_CORPUS:-$PWD/../shared/corpus}"
skip=()
if [ ! -d "$SEAMARK_CORPUS/pages" ]; then
  if [ "${SEAMARK_REQUIRE_CORPUS:-0}" = 1 ]; then
    echo "test: FAILED: the corpus of saved pages is not at $SEAMARK_CORPUS/pages (SEAMARK_REQUIRE_CORPUS=1)" >&2
    exit 1
  fi
  echo "test: skipping the corpus suite: no saved pages at $SEAMARK_CORPUS/pages (set SEAMARK_CORPUS to its folder)" >&2
  skip=(-- --skip corpus)
fi
cargo fmt --check
# Clippy lints seamark's own crates as they are built for the tests:
# clippy-driver is their compiler (what `cargo clippy` does, but with code
# generated), so each dependency is compiled once instead of being checked
# for clippy and then built again (from scratch, back to back on a 2-core
# machine: 562 s for clippy, the doc tests' build and the test build; 385 s
# for this build and the rest).
# Every target `--all-targets` lints is built; `-D warnings` reaches the
# driver as `cargo clippy -- -D warnings` hands it over. A developer's own
# `cargo clippy --all-targets -- -D warnings` checks the same.
RUSTC_WORKSPACE_WRAPPER="$(command -v clippy-driver || rustup which clippy-driver)" || {
  echo "test: FAILED: clippy-driver not found (rustup component add clippy)" >&2
  exit 1
}
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
cargo build --locked --lib --bins --tests --benches --examples
phase "formatting, clippy and the build"
# Every process the tests start carries this mark in its environment, so
# that a browser any test left behind is found afterwards (the integration
# tests check their own at the end of each test; this also covers the
# browsers tests launch in-process).
export SEAMARK_TEST_RUN="$$-$(date +%s)"
browsers_left() {
  local env pid
  for env in /proc/[0-9]*/environ; do
    pid="${env#/proc/}"; pid="${pid%/environ}"
    if tr '\0' '\n' 2>/dev/null < "$env" | grep -qx "SEAMARK_TEST_RUN=$SEAMARK_TEST_RUN" \
      && tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" | grep -q chrom; then
      echo "$pid"
    fi
  done
}
# The browser the in-process tests share ends with the test binary (its
# parent-death signal); its helpers notice a moment later: wait for them,
# bounded, before calling any a leftover.
none_left_behind() {
  local pid left tries=0
  while left=$(browsers_left) && [ -n "$left" ] && [ "$tries" -lt 50 ]; do
    sleep 0.2; tries=$((tries + 1))
  done
  [ -z "$left" ] && return 0
  for pid in $left; do
    echo "test: a browser outlived the tests: $pid $(tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" | cut -c1-160)" >&2
    kill -KILL "$pid" 2>/dev/null || true
  done
  return 1
}
setup_ok=1
wait "$setup_pid" || setup_ok=0
cat "$setup_log" >&2
if [ "$setup_ok" = 0 ]; then
  echo "test: FAILED: scripts/setup.sh failed (what it said is above)" >&2
  exit 1
fi
phase "the rest of the setup"
export TMPDIR="$test_tmp"
# Doc tests first, so that the last summary printed is the integration tests'.
cargo test --locked --doc
phase "doc tests"
cargo test --locked --lib --bins --tests "${skip[@]}"
phase "unit and integration tests"
if ! none_left_behind; then
  echo "test: FAILED: browsers were left running (listed above)" >&2
  exit 1
fi
