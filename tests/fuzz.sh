#!/usr/bin/env bash
# Bounded fuzzing for CI: each fuzz target in fuzz/ runs for a fixed time and the script exits non-zero
# on any crash, engine/reference difference or input taking over 30 s (the input is left in fuzz/artifacts/<target>/; copy it
# to fuzz/regressions/ so `cargo test --test it differential::` replays it for good).
#
#   tests/fuzz.sh                 # 60 s in all
#   FUZZ_SECONDS=600 tests/fuzz.sh
#
# Under CI (CI=true) the run is reproducible: a fixed seed (FUZZ_SEED) and a fixed number of runs per
# target, with the time only as a cap, so the inputs CI tries are the ones a developer's run of the same
# commit tried. Elsewhere every run explores from a new seed.
#
# Needs cargo-fuzz (installed here if missing). It runs on the stable toolchain with RUSTC_BOOTSTRAP=1,
# without a sanitizer (the engine is safe Rust; debug assertions stay on). The committed corpus is
# read, never grown: new inputs go to a scratch folder.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

total=${FUZZ_SECONDS:-60}
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1
flags=(--sanitizer none --debug-assertions)
cargo fuzz build "${flags[@]}"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Most of the time goes to the differential target; the JSON and patch targets look for panics
# (and, for patches, for a written text that is not the composed replacements).
run() {
    local target=$1 seconds=$2 runs=$3
    local fixed=()
    if [ "${CI:-}" = "true" ]; then
        fixed=(-seed="${FUZZ_SEED:-20261122}" -runs="$runs")
    fi
    mkdir -p "$scratch/$target" "corpus/$target"
    echo "fuzz.sh: $target for ${seconds}s ${fixed[*]}"
    cargo fuzz run "${flags[@]}" "$target" "$scratch/$target" "corpus/$target" -- "${fixed[@]}" \
        -max_total_time="$seconds" -max_len=512 -timeout=30 -print_final_stats=1 2>&1 | grep -v -E '^#[0-9]+|# Uses: [0-9]+$' || {
        echo "fuzz.sh: $target FAILED; see fuzz/artifacts/$target/" >&2
        return 1
    }
}
status=0
# The run counts fit in the time on this project's CI machine (about 1,000, 150,000 and 10,000 to 25,000 inputs a second).
run differential $((total * 2 / 3)) 40000 || status=1
run plan_json $((total / 6)) 1000000 || status=1
run patch_text $((total - total * 2 / 3 - total / 6)) 100000 || status=1
if [ $status -eq 0 ]; then echo "fuzz: 3 passed, 0 failed"; else echo "fuzz: failed"; fi
exit $status
