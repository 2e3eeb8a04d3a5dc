#!/usr/bin/env bash
# Sets up everything and marks a bundled page: prints its element list and
# writes marked.png (the screenshot with numbered boxes) and marked.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --locked -- mark tests/sites/form.html -o marked.png --json marked.json
