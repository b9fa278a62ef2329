#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: the tuner's targets. Tunes every softmax benchmark shape of at least 16M
# elements into a fresh cache (wall time per shape, compiles included), then times those shapes
# with the heuristics' picks (KJIT_TUNE=off) and with the tuned winners (KJIT_TUNE=cached).
# Logs go to $OUT (default ./out).
#   bash scripts/tune_check.sh [--skip-build]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
if [ "${1:-}" != --skip-build ]; then
  # Where libxxhash-dev is missing, a copy of xxhash.h in .deps/xxhash (git-ignored) stands in.
  xxhash_dir=""
  [ -d .deps/xxhash ] && xxhash_dir="-DKJIT_XXHASH_INCLUDE_DIR=$PWD/.deps/xxhash"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${xxhash_dir:+"$xxhash_dir"} \
    ${KJIT_CMAKE_ARGS:-} >"$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
  cmake --build "$BUILD" -j 16 >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
fi
KJIT="$BUILD/cli/kjit"
CACHE=$(mktemp -d)/kjit-tune-check
export KJIT_CACHE_DIR=$CACHE
status=0
large_shapes="16384x1024 8192x4096 2048x16384 1024x32000 512x65536 64x262144"

echo "=== tuning (fresh cache $CACHE)"
printf "| op | dtype | shape | wall s |\n|---|---|---|---|\n" >"$OUT/tune_times.md"
for dtype in f32 bf16; do
  for shape in $large_shapes; do
    rows=${shape%x*} cols=${shape#*x}
    start=$EPOCHREALTIME
    "$KJIT" tune --op softmax --dtype "$dtype" --rows "$rows" --cols "$cols" --save \
      >"$OUT/tune_one.txt" 2>&1 || status=1
    wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
    printf "| softmax | %s | %s | %.2f |\n" "$dtype" "$shape" "$wall" | tee -a "$OUT/tune_times.md"
    grep -E "winner|candidates in" "$OUT/tune_one.txt"
    cat "$OUT/tune_one.txt" >>"$OUT/tune_tables.txt"
  done
done

rm -f "$OUT/tune_one.txt"
if [ "${KJIT_SKIP_HEURISTIC_BENCH:-0}" = 0 ]; then
echo "=== heuristics (KJIT_TUNE=off)"
KJIT_TUNE=off "$BUILD/bench/kjit_bench_rowwise" --min-elements 16000000 \
  --json "$OUT/bench_heuristic.json" 2>&1 | tee "$OUT/bench_heuristic.md" || status=1
fi
echo "=== tuned (KJIT_TUNE=cached)"
KJIT_TUNE=cached "$BUILD/bench/kjit_bench_rowwise" --min-elements 16000000 \
  --json "$OUT/bench_tuned.json" 2>&1 | tee "$OUT/bench_tuned.md" || status=1
exit $status
