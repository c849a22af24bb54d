#!/usr/bin/env bash
# The engine crate stays pure (ARCHITECTURE.md, invariant 1): its dependency tree (normal and build)
# holds no async runtime, LSP, MCP or I/O crate. The same check on the server crate must find them,
# so a broken `cargo tree` call cannot pass unnoticed.
#   bash tests/engine_deps.sh        Last line: `engine deps: N passed, M failed`.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
forbidden='^(tokio|tower|tower-lsp-server|ls-types|lsp-types|rmcp|libc|tempfile|getrandom|clap|toml_edit|ropey) '
passed=0 failed=0
tree() { cargo tree --locked -p "$1" -e normal,build --prefix none --format '{p}' 2>&1; }
engine=$(tree multiedit-engine) || { echo "$engine"; echo "engine deps: 0 passed, 1 failed"; exit 1; }
if found=$(grep -E "$forbidden" <<<"$engine" | sort -u) && [ -n "$found" ]; then
  echo "FAIL multiedit-engine depends on crates the pure engine must not use:"; echo "$found"; failed=$((failed + 1))
else
  echo "ok   multiedit-engine: $(sort -u <<<"$engine" | wc -l) crates, none of tokio, tower-lsp-server, rmcp, libc, tempfile"; passed=$((passed + 1))
fi
server=$(tree multiedit)
if grep -qE '^tokio ' <<<"$server" && grep -qE '^tower-lsp-server ' <<<"$server" && grep -qE '^rmcp ' <<<"$server"; then
  echo "ok   control: the same check finds tokio, tower-lsp-server and rmcp under multiedit"; passed=$((passed + 1))
else
  echo "FAIL control: the check does not see the server's tokio, tower-lsp-server and rmcp"; failed=$((failed + 1))
fi
echo "engine deps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
