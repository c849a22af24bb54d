#!/usr/bin/env bash
# Installs the language servers the headless tests start (tests/language_servers.rs) into
# ~/.cache/multiedit/language-servers, from the npm registry only: typescript-language-server with a
# pinned TypeScript 5.x (the last line that ships lib/tsserver.js, which the server runs) and pyright.
# They run on the Node 24 that tests/agents/install.sh installs (typescript-language-server 6 needs
# Node 22 or later). clangd comes from Debian (.ci/run). rust-analyzer and gopls have no offline
# package here: the tests use them where they are on PATH and say they skipped them otherwise.
# Pinned versions; a later run with the same versions does nothing. Needs npm (any Node) on PATH.
set -euo pipefail
dir="${MULTIEDIT_LANGUAGE_SERVERS_DIR:-$HOME/.cache/multiedit/language-servers}"
packages=(typescript-language-server@6.0.2 typescript@5.9.3 pyright@1.1.414)
stamp="$dir/.installed"
want="${packages[*]}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$dir/node_modules/.bin/typescript-language-server" ] && [ -x "$dir/node_modules/.bin/pyright-langserver" ] && [ -f "$dir/node_modules/typescript/lib/tsserver.js" ]; then
  exit 0
fi
echo "installing language servers into $dir: $want"
mkdir -p "$dir"
# an npm_config_nodedir meant for native builds elsewhere must not leak in
unset npm_config_nodedir
[ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "${packages[@]}" </dev/null
echo "$want" >"$stamp"
