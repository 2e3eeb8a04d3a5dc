#!/usr/bin/env bash
# Vendors DuckDuckGo's autoconsent (npm @duckduckgo/autoconsent, MPL-2.0)
# into vendor/autoconsent: the content script made for a driver that
# answers its messages (dist/autoconsent.playwright.js), the rules (compact
# for rejecting, full for accepting: the compact ones leave out the steps
# that accept) and the licence. seamark builds them into its binary
# (src/browser/consent.rs). Usage: scripts/update-autoconsent.sh [VERSION]
set -euo pipefail

version="${1:-16.23.0}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/vendor/autoconsent"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "@duckduckgo/autoconsent@$version" >/dev/null)
tar -xzf "$work"/duckduckgo-autoconsent-*.tgz -C "$work"
pkg="$work/package"
mkdir -p "$dest"
cp "$pkg/dist/autoconsent.playwright.js" "$dest/"
cp "$pkg/rules/compact-rules.json" "$pkg/rules/rules.json" "$pkg/LICENSE" "$dest/"
sed -i "s/^Version: .*/Version: $version/" "$dest/SEAMARK.md"
echo "vendored @duckduckgo/autoconsent $version into $dest" >&2
