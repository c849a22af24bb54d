#!/usr/bin/env bash
# Every test of the project, in one command (the README's test command; .ci/run installs what it needs
# and calls this). Runs: the Rust tests (engine, CLI, language server, Neovim, reliability), a check
# that the benches compile, a bounded differential fuzzing run, the VS Code extension's unit and
# end-to-end tests in real VS Code, and the release packages (crate, wheel, npm) built and installed (tests/packaging.sh).
# Exits non-zero when anything failed; the last line sums up the suites.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TERM_COLOR=never
# Under CI the build is done once and thrown away: no incremental caches and line tables only (still
# enough for a panic's backtrace, in the tests and in a fuzzing crash) keep target/debug at 1.2 GB
# instead of 4.6 GB, on machines whose disk may be nearly full (a CI run once failed with "No space
# left on device"). The release binary the packages ship is stripped anyway.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL=0 \
    CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}" \
    CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}"
fi
echo "disk: $(df -h --output=avail . | tail -1 | tr -d ' ') free where the build goes"

results=()
failed=0
run() {
  local name=$1; shift
  echo "==== $name: $*"
  local t0=$(date +%s)
  if "$@"; then results+=("$name: ok ($(( $(date +%s) - t0 )) s)")
  else results+=("$name: FAILED ($(( $(date +%s) - t0 )) s)"); failed=$((failed + 1)); fi
}

# The code as it is kept: formatted, clippy's warnings denied (the one lint allowed in places,
# clippy::too_many_arguments, is allowed at each function with the reason its arguments stay apart),
# and docs whose links and HTML hold (rustdoc with warnings denied, private items included).
run "format" cargo fmt --all -- --check
run "clippy" cargo clippy --workspace --all-targets -- -D warnings
run "rustdoc" env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --document-private-items
run "rust tests" cargo test --workspace --no-fail-fast
# The benches are not run here (their figures are docs/performance.md's), but they must keep compiling.
run "benches compile" cargo check --workspace --benches
# The engine crate depends on no async runtime, LSP or MCP crate (ARCHITECTURE.md, invariant 1).
run "engine deps" bash tests/engine_deps.sh
run "fuzzing" bash tests/fuzz.sh
run "vscode" bash tests/vscode/run.sh
run "packaging" bash tests/packaging.sh

echo "==== summary"
echo "disk: target/ holds $(du -sh target 2>/dev/null | cut -f1), $(df -h --output=avail . | tail -1 | tr -d ' ') left free"
printf '%s\n' "${results[@]}"
echo "suites: $(( ${#results[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
