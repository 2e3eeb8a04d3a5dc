#!/usr/bin/env bash
# The soak: runs the flows that touch the network guard N times (default 5)
# under CPU load, each browser writing Chromium's net log, and reports every
# request that left for a host off this machine with the service that made
# it (its traffic annotation). Fails when there is one.
#
#   scripts/soak.sh [N]
#
# Run it before stopping whenever the browser's launch flags or preferences
# change (src/browser/mod.rs). SOAK_LOAD=0 runs it without the load.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
case "$runs" in
  ''|*[!0-9]*) echo "soak: N must be a number of rounds, not '$runs'" >&2; exit 2 ;;
esac

load_pids=()
stop_load() {
  for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop_load EXIT

cargo test --locked --test it --no-run >/dev/null 2>&1 || cargo test --locked --test it --no-run
if [ "${SOAK_LOAD:-1}" != 0 ]; then
  # One busy loop per core: the browser and seamark compete for the CPU as
  # they do beside a build. Ended when the soak ends.
  for _ in $(seq "$(nproc)"); do
    ( while :; do :; done ) &
    load_pids+=("$!")
  done
  echo "soak: $runs round(s) under load ($(nproc) busy loops)" >&2
fi
SEAMARK_SOAK_RUNS="$runs" cargo test --locked --test it soak:: -- --ignored --nocapture --test-threads 1
