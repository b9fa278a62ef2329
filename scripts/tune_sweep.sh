#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU: tunes every benchmark shape and prints, per shape, the winner and the heuristic's
# pick (full tables under $OUT/tune/). Used to check and improve the heuristics.
#   BUILD=build-gpu bash scripts/tune_sweep.sh [f32 bf16]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT/tune"
dtypes=${*:-f32 bf16}
shapes="65536x128 16384x1024 8192x4096 2048x16384 1024x32000 512x65536 64x262144 1x32000 1x128256 1x151936 8x128256 64x128256"
for dtype in $dtypes; do
  for shape in $shapes; do
    rows=${shape%x*}; cols=${shape#*x}
    log="$OUT/tune/softmax_${dtype}_${shape}.txt"
    "$BUILD/cli/kjit" tune --op softmax --dtype "$dtype" --rows "$rows" --cols "$cols" >"$log" 2>&1
    echo "== $dtype $shape: $(grep -E '^\* winner' "$log" || tail -1 "$log")"
    grep -E '^(\*|h|\*h) ' "$log" | cut -c1-110
    grep -E '^ ' "$log" | sed -n 1,2p | cut -c1-110
  done
done
