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
# Doc tests first, so that the last summary printed is the integration tests'.
cargo test --locked --doc
cargo test --locked --lib --bins --tests
