#!/usr/bin/env bash
# Sets up what seamark needs on a fresh Debian machine: Chromium (Debian's
# package) when no Chromium is found, and, for the tests, zsh, fish and man
# (the completion scripts and man pages are checked by them), PostgreSQL
# (Debian's package: the tests start servers of their own from it, for
# `seamark serve --db postgres://…`) and the official MCP Python SDK (PyPI's
# `mcp`) that drives `seamark mcp` as people's clients do.
# Rust and cargo must already be there.
set -euo pipefail

have_chromium() {
  [ -n "${SEAMARK_CHROME:-}" ] && [ -x "$SEAMARK_CHROME" ] && return 0
  [ -x /usr/lib/chromium/chromium ] && return 0
  command -v chromium >/dev/null 2>&1 && return 0
  command -v chromium-browser >/dev/null 2>&1 && return 0
  command -v google-chrome >/dev/null 2>&1 && return 0
  return 1
}

have_postgres() {
  compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null
}

missing=()
have_chromium || missing+=(chromium)
have_postgres || missing+=(postgresql)
# The toolbox test: the shells check seamark's completion scripts (`zsh -n`,
# `fish -n`), and `man -l` renders its pages.
command -v zsh >/dev/null 2>&1 || missing+=(zsh)
command -v fish >/dev/null 2>&1 || missing+=(fish)
command -v man >/dev/null 2>&1 || missing+=(man-db)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing Debian's ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! have_postgres; then
  echo "setup: PostgreSQL is still missing after installing it" >&2
  exit 1
fi
if ! have_chromium; then
  echo "setup: Chromium is still missing after installing it" >&2
  exit 1
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo not found: install Rust (rustup)" >&2; exit 1; }

# The interop test (tests/interop/mcp_client.py) drives seamark with the
# official MCP Python SDK.
if ! python3 -c 'import mcp.client.streamable_http' >/dev/null 2>&1; then
  echo "setup: installing the MCP Python SDK (PyPI's mcp) for the interop test" >&2
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore 'mcp>=2.3,<3' >&2
fi

# The skill-export test (tests/it/fixtures.rs) runs an exported Python
# script with Playwright from PyPI on the system Chromium (no browser of its
# own is downloaded), and type-checks a TypeScript export with tsc from npm.
if ! python3 -c 'import playwright.sync_api' >/dev/null 2>&1; then
  echo "setup: installing Playwright for Python (PyPI's playwright) for the skill-export test" >&2
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore 'playwright>=1.50,<2' >&2
fi
ts_dir="${SEAMARK_TS_DIR:-$HOME/.cache/seamark/ts-export}"
if [ ! -x "$ts_dir/node_modules/.bin/tsc" ] && command -v npm >/dev/null 2>&1; then
  echo "setup: installing typescript, playwright and @types/node (npm) into $ts_dir for the skill-export test" >&2
  mkdir -p "$ts_dir"
  (cd "$ts_dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund \
    'typescript@5' 'playwright@1' '@types/node@20' >&2)
fi
