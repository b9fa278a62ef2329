#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU host: the tuner's targets. Tunes every softmax benchmark shape of at least 16M
# elements into a fresh cache (wall time per shape, compiles included), then times those shapes
# with the heuristics' picks (KJIT_TUNE=off) and with the tuned winners (KJIT_TUNE=cached).
# Writes to $OUT (default ./out): tune/softmax_<dtype>_<shape>.json ({"wall_s": s, "log": the
# `kjit tune --json` log}), tune_times.md, bench_heuristic.json/.md and bench_tuned.json/.md,
# which bench/results_report.py reads.
#   bash scripts/tune_check.sh [--skip-build]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT/tune"
if [ "${1:-}" != --skip-build ]; then
  # Where libxxhash-dev is missing, a copy of xxhash.h in .deps/xxhash (git-ignored) stands in.
  xxhash_dir=""
  [ -d .deps/xxhash ] && xxhash_dir="-DKJIT_XXHASH_INCLUDE_DIR=$PWD/.deps/xxhash"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${xxhash_dir:+"$xxhash_dir"} \
    ${KJIT_CMAKE_ARGS:-} >"$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
  cmake --build "$BUILD" -j "$(nproc)" >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
fi
KJIT="$BUILD/cli/kjit"
CACHE=$(mktemp -d)/kjit-tune-check
export KJIT_CACHE_DIR=$CACHE
status=0
large_shapes="16384x1024 8192x4096 2048x16384 1024x32000 512x65536 64x262144"

echo "=== tuning (fresh cache $CACHE)"
printf "| op | dtype | shape | wall s | winner | heuristic |\n|---|---|---|---|---|---|\n" >"$OUT/tune_times.md"
for dtype in f32 bf16; do
  for shape in $large_shapes; do
    rows=${shape%x*} cols=${shape#*x}
    log="$OUT/tune/softmax_${dtype}_${shape}.tmp"
    start=$EPOCHREALTIME
    "$KJIT" tune --op softmax --dtype "$dtype" --rows "$rows" --cols "$cols" --save --json \
      >"$log" 2>"$OUT/tune/softmax_${dtype}_${shape}.stderr" || status=1
    wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
    { printf '{"wall_s": %s, "log": ' "$wall"; cat "$log"; printf '}\n'; } >"$OUT/tune/softmax_${dtype}_${shape}.json"
    rm -f "$log"
    summary=$(python3 - "$OUT/tune/softmax_${dtype}_${shape}.json" <<'PY'
import json, sys
try:
    log = json.load(open(sys.argv[1]))["log"]
except (ValueError, KeyError):
    print("- | - (kjit tune failed; see the .stderr file)"); sys.exit()
def name(c):  # as KernelConfig::to_string prints it
    words = [c["algorithm"]] + [f"{k}={v}" for k, v in c.items() if k not in ("algorithm", "cluster_grid")]
    return " ".join(words + (["grid=per_row"] if c.get("cluster_grid") == "per_row" else []))
print(f"{name(log['winner'])} | {name(log['heuristic'])}")
PY
)
    printf "| softmax | %s | %s | %.2f | %s |\n" "$dtype" "$shape" "$wall" "$summary" | tee -a "$OUT/tune_times.md"
  done
done

if [ "${KJIT_SKIP_HEURISTIC_BENCH:-0}" = 0 ]; then
echo "=== heuristics (KJIT_TUNE=off)"
KJIT_TUNE=off "$BUILD/bench/kjit_bench_rowwise" --min-elements 16000000 \
  --json "$OUT/bench_heuristic.json" 2>&1 | tee "$OUT/bench_heuristic.md" || status=1
fi
echo "=== tuned (KJIT_TUNE=cached)"
KJIT_TUNE=cached "$BUILD/bench/kjit_bench_rowwise" --min-elements 16000000 \
  --json "$OUT/bench_tuned.json" 2>&1 | tee "$OUT/bench_tuned.md" || status=1
exit $status
