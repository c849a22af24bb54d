#!/usr/bin/env bash
# Runs the shipped example: a three-edit rename plan applied to a copy of examples/greeting.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The release build takes a few minutes the first time: say so, and let cargo show its progress.
echo "== building multiedit (release): a few minutes the first time, seconds after"
cargo build --release --manifest-path "$here/../Cargo.toml"
bin="$here/../target/release/multiedit"
work=$(mktemp -d)
cp "$here/greeting.txt" "$work/greeting.txt"
# Plans name files by absolute path: point the example's plan at the copy.
sed "s|\"examples/greeting.txt\"|\"$work/greeting.txt\"|" "$here/rename.multiedit.json" > "$work/plan.json"
echo "== dry run (nothing written):"
"$bin" apply --dry-run "$work/plan.json"
echo "== apply:"
"$bin" apply "$work/plan.json"
echo "== $work/greeting.txt now reads:"
cat "$work/greeting.txt"
