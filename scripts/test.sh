#!/usr/bin/env bash
# Sets up everything and runs every check and test: formatting, clippy, unit
# tests, and the integration tests against a real headless Chromium. Browser
# tests fail (they never skip) when Chromium cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ ! -d ../shared/corpus/pages ]; then
  echo "test: ../shared/corpus/pages is missing (the saved real pages the corpus test reads)" >&2
  exit 1
fi
cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
# Every process the tests start carries this mark in its environment, so
# that a browser any test left behind is found afterwards (the integration
# tests check their own at the end of each test; this also covers the
# browsers tests launch in-process).
export SEAMARK_TEST_RUN="$$-$(date +%s)"
none_left_behind() {
  local env pid found=0
  for env in /proc/[0-9]*/environ; do
    pid="${env#/proc/}"; pid="${pid%/environ}"
    if tr '\0' '\n' 2>/dev/null < "$env" | grep -qx "SEAMARK_TEST_RUN=$SEAMARK_TEST_RUN" \
      && tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" | grep -q chrom; then
      echo "test: a browser outlived the tests: $pid $(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-160)" >&2
      kill -KILL "$pid" 2>/dev/null || true
      found=1
    fi
  done
  return "$found"
}
# Doc tests first, so that the last summary printed is the integration tests'.
cargo test --locked --doc
cargo test --locked --lib --bins --tests
if ! none_left_behind; then
  echo "test: FAILED: browsers were left running (listed above)" >&2
  exit 1
fi
