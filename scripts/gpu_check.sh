#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU host: build, run every test (GPU suites included), the demo, the C++ benchmark,
# the tuner's targets (scripts/tune_check.sh), the comparisons with torch (softmax family;
# softmax + top-K; the row-wise ops on shapes drawn fresh from a seed and on real model widths,
# bench/sweep_shapes.py; batched small-tile attention beside torch and seed 004's kernel,
# bench/compare_attention.py) and the Python package (its tests, GPU suites included, and its host time
# beside torch's), then write $OUT/RESULTS.md from their outputs (bench/results_report.py;
# copy it to bench/RESULTS.md). Logs go to $OUT (default ./out).
#   bash scripts/gpu_check.sh [--quick]
# STEPS="build tests demo bench host tune torch topk sweep python candidates profile sanitize attention"
# (the default: all but candidates, which prints every tuning candidate's time at chosen calls,
# CANDIDATE_CALLS; profile, Nsight Compute's sections for chosen kernels, PROFILE_CALLS; and
# sanitize, compute-sanitizer over every kernel family: scripts/sanitize_gpu.sh)
# picks steps, so a run can be split over calls with a time limit; the build folder is reused.
# TESTS_REGEX narrows the tests step to the matching ctest names; TOPK_CELLS narrows the top-K
# comparison; SWEEP_ARGS goes to sweep_shapes.py (e.g. "--seed 123" repeats a sweep, "--seed 123
# --only 4,17-20" repeats some of its shapes, "--count 300 --budget-s 1200" draws more; the default
# takes about 5-6 minutes, under 9 by its budget);
# ATTENTION_CASES="NAME[:f16|bf16],..." narrows the attention comparison (names:
# compare_attention.py --list), ATTENTION_ARGS passes it more options (--no-compile, --paths,
# --merge: keep the runs an earlier call left in $OUT that this one does not redo, to split the
# table over calls), and ATTENTION_TUNE sets its KJIT_TUNE (default off: the heuristics' picks).
# KJIT_COMMIT names the commit in RESULTS.md where the tree is not a git checkout.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
status=0

commit=${KJIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
printf '{"date": "%s", "commit": "%s", "steps": "%s"}\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" \
  "$commit" "${STEPS:-build tests demo bench host tune torch topk sweep attention python}" >"$OUT/run.json"

STEPS=${STEPS:-build tests demo bench host tune torch topk sweep attention python}
step() { echo; echo "=== $1"; }
wants() { [[ " $STEPS " == *" $1 "* ]]; }

if wants build; then
  step "configure + build"
  # Where libxxhash-dev is missing, a copy of xxhash.h in .deps/xxhash (git-ignored) stands in.
  xxhash_dir=""
  [ -d .deps/xxhash ] && xxhash_dir="-DKJIT_XXHASH_INCLUDE_DIR=$PWD/.deps/xxhash"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${xxhash_dir:+"$xxhash_dir"} \
    ${KJIT_CMAKE_ARGS:-} >"$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
  cmake --build "$BUILD" -j "$(nproc)" >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  step "kjit info"
  "$BUILD/cli/kjit" info 2>&1 | tee "$OUT/info.log"
fi

if wants tests; then
  step "tests"
  (cd "$BUILD" && ctest --output-on-failure -j 4 --timeout 900 -R "${TESTS_REGEX:-.}") >"$OUT/tests.log" 2>&1 || status=1
  # Every suite's output, passing ones included (chain counts, visible skips).
  cp "$BUILD/Testing/Temporary/LastTest.log" "$OUT/tests_full.log" 2>/dev/null
  grep -E "tests passed|tests failed|SKIPPED|Failed|\*\*\*" "$OUT/tests.log" | tail -30
fi

if wants demo; then
  step "demo"
  "$BUILD/cli/kjit" demo >"$OUT/demo.log" 2>&1 || status=1
  cat "$OUT/demo.log"
fi

if wants bench; then
  step "benchmark (C++)"
  KJIT_TUNE=off "$BUILD/bench/kjit_bench_rowwise" --json "$OUT/bench_rowwise.json" >"$OUT/bench_rowwise.md" 2>&1 || status=1
  cat "$OUT/bench_rowwise.md"
fi

if wants host; then
  step "host overhead"
  "$BUILD/bench/kjit_bench_rowwise" --host >/dev/null 2>&1  # an earlier process puts the cubin on disk
  "$BUILD/bench/kjit_bench_rowwise" --host 2>&1 | tee "$OUT/host_overhead.txt" || status=1
fi

if wants tune; then
  step "tuner targets"
  # The benchmark step's table holds the heuristics' times; without that step, time them here.
  skip_heuristic=0
  wants bench && skip_heuristic=1
  KJIT_SKIP_HEURISTIC_BENCH=$skip_heuristic BUILD="$BUILD" OUT="$OUT" bash scripts/tune_check.sh --skip-build || status=1
fi

if wants torch; then
step "compare with torch"
KJIT_TUNE=off PYTHONUNBUFFERED=1 python3 -X faulthandler bench/compare_torch.py "$BUILD/runtime/libkjit.so" \
  --out "$OUT/compare_torch.md" --json "$OUT/compare_torch.json" "$@" 2>&1 | tee "$OUT/compare_torch.log" || status=1
fi

if wants topk; then
step "compare softmax + top-K with torch"
cells=""  # compare_topk.py takes --quick but none of compare_torch.py's other options
for arg in "$@"; do [ "$arg" = --quick ] && cells=--quick; done
# TOPK_CELLS="V:B:K[:dtype],..." times only those cells.
[ -n "${TOPK_CELLS:-}" ] && cells="--cells $TOPK_CELLS"
KJIT_TUNE=off PYTHONUNBUFFERED=1 python3 -X faulthandler bench/compare_topk.py "$BUILD/runtime/libkjit.so" \
  --out "$OUT/compare_topk.md" --json "$OUT/compare_topk.json" $cells 2>&1 |
  tee "$OUT/compare_topk.log" || status=1
fi

if wants sweep; then
step "shape sweep beside torch"
sweep_args=${SWEEP_ARGS:-}
for arg in "$@"; do [ "$arg" = --quick ] && sweep_args="--count 40 --no-models $sweep_args"; done
# The seed is the log's first line: SWEEP_ARGS="--seed S" repeats the run.
KJIT_TUNE=off PYTHONUNBUFFERED=1 python3 -X faulthandler bench/sweep_shapes.py "$BUILD/runtime/libkjit.so" \
  --out "$OUT/sweep.md" --json "$OUT/sweep.json" $sweep_args 2>&1 | tee "$OUT/sweep.log" || status=1
fi

if wants python; then
  step "python package"
  # Installed with the host's own nanobind, scikit-build-core, torch, CuPy and pytest (a GPU host
  # may have no package registry), into a folder of its own; the build folder is kept.
  site=$(mktemp -d)
  # With the host's torch importable, the build includes kjit._torch_ops (the torch ops' C++
  # kernels); its configure line says whether it was built, and why not.
  if CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) python3 -m pip install -v --no-build-isolation --no-deps \
       -C build-dir="$BUILD/python-package" --target "$site" . >"$OUT/python_install.log" 2>&1; then
    grep -m1 -o "kjit._torch_ops: .*" "$OUT/python_install.log"
    (cd "$site" && PYTHONPATH="$site" PYTHONUNBUFFERED=1 python3 -m pytest -rs -p no:cacheprovider \
       "$OLDPWD/python/tests") >"$OUT/python_tests.log" 2>&1 || status=1
    tail -15 "$OUT/python_tests.log"
    # The torch suites again on the Python kernels, the ops' path where kjit._torch_ops is not built.
    (cd "$site" && KJIT_TORCH_NATIVE=0 PYTHONPATH="$site" PYTHONUNBUFFERED=1 python3 -m pytest -q -rs \
       -p no:cacheprovider "$OLDPWD/python/tests/test_gpu_torch.py" \
       "$OLDPWD/python/tests/test_gpu_torch_native.py" "$OLDPWD/python/tests/test_torch_native.py") \
       >"$OUT/python_tests_python_kernels.log" 2>&1 || status=1
    tail -3 "$OUT/python_tests_python_kernels.log"
    # Host time against torch.softmax, and GPU time in a graph (C API beside it, where built).
    libkjit=""
    [ -f "$BUILD/runtime/libkjit.so" ] && libkjit="--libkjit $BUILD/runtime/libkjit.so"
    PYTHONPATH="$site" python3 bench/python_host_overhead.py $libkjit \
      --json "$OUT/python_host_overhead.json" 2>&1 | tee "$OUT/python_host_overhead.md" || status=1
  else
    tail -30 "$OUT/python_install.log"
    status=1
  fi
  rm -rf "$site"
fi

if wants attention; then
step "compare batched small-tile attention with torch"
cases=""  # compare_attention.py takes --quick but none of compare_torch.py's other options
for arg in "$@"; do [ "$arg" = --quick ] && cases=--quick; done
[ -n "${ATTENTION_CASES:-}" ] && cases="--cases $ATTENTION_CASES"
KJIT_TUNE=${ATTENTION_TUNE:-off} PYTHONUNBUFFERED=1 python3 -X faulthandler bench/compare_attention.py "$BUILD/runtime/libkjit.so" \
  --out "$OUT/compare_attention.md" --json "$OUT/compare_attention.json" $cases ${ATTENTION_ARGS:-} 2>&1 |
  tee "$OUT/compare_attention.log" || status=1
fi

if wants candidates; then
  step "every candidate's time at chosen calls (kjit tune --full --time-all)"
  # CANDIDATE_CALLS: calls separated by ';', each the arguments of `kjit tune` after --op.
  # The default: the widths that issue targets name (misaligned vocabularies, dense narrow
  # rows: peeled and flat_tile candidates beside the pick), softmax + top-K at a few shapes and
  # every attention case of bench/compare_attention.py.
  default_calls="softmax --dtype bf16 --rows 4096 --cols 50257; softmax --dtype bf16 --rows 8192 --cols 32001;
    softmax --dtype f16 --rows 65536 --cols 49; softmax --dtype f32 --rows 100000 --cols 96;
    softmax --dtype bf16 --rows 100000 --cols 100; log_softmax --dtype f16 --rows 65536 --cols 49;
    softmax --dtype bf16 --out-dtype f32 --rows 65536 --cols 77; softmax --dtype f16 --rows 1000000 --cols 7;
    softmax --dtype f32 --rows 262144 --cols 33; softmax --dtype bf16 --rows 65536 --cols 197;
    softmax --dtype bf16 --rows 9083932 --cols 17; softmax --dtype bf16 --rows 274 --cols 800977;
    softmax_topk --dtype f32 --rows 8 --cols 128256 --k 50; softmax_topk --dtype bf16 --rows 256 --cols 128256 --k 50;
    $(python3 bench/compare_attention.py --tune-calls --quick)"
  cache=$(mktemp -d)
  # One line first: `read` takes a single line, and the list spans several.
  IFS=';' read -ra calls <<<"$(tr '\n' ' ' <<<"${CANDIDATE_CALLS:-$default_calls}")"
  for call in "${calls[@]}"; do
    call=$(echo $call)  # one line, single spaces
    [ -n "$call" ] || continue
    echo "--- kjit tune --op $call" | tee -a "$OUT/candidates.log"
    # --time-all: slow candidates timed in full too, not judged by one cold sample.
    # shellcheck disable=SC2086
    timeout 300 "$BUILD/cli/kjit" tune --full --time-all --op $call --cache-dir "$cache" 2>&1 |
      tee -a "$OUT/candidates.log" || status=1
  done
  rm -rf "$cache"
fi
if wants profile; then
  step "Nsight Compute over chosen kernels (ncu)"
  # PROFILE_CALLS: entries separated by ';', each "REGEX @ ARGS": the first launch whose demangled
  # name matches REGEX within `kjit tune --full --op ARGS`. The tuner runs its reference config
  # first, so a bare "attention_tile" is narrowed to the pick's own warps, problems and stages
  # (`kjit compile`). The default profiles the pick of every attention case of
  # bench/compare_attention.py.
  default_profile=$(python3 bench/compare_attention.py --tune-calls --quick | tr ';' '\n' |
    sed 's/^ */attention_tile @ /' | tr '\n' ';')
  cache=$(mktemp -d)
  IFS=';' read -ra entries <<<"$(tr '\n' ' ' <<<"${PROFILE_CALLS:-$default_profile}")"
  sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
    --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
  for entry in "${entries[@]}"; do
    read -r regex <<<"${entry%%@*}"  # trimmed, and never globbed
    read -r args <<<"${entry#*@}"
    [ -n "$args" ] || continue
    if [ "$regex" = attention_tile ]; then
      # shellcheck disable=SC2086
      read -r warps problems stages <<<"$("$BUILD/cli/kjit" compile --op $args 2>/dev/null |
        sed -n 's/^config: *attention warps=\([0-9]*\) problems=\([0-9]*\) stages=\([0-9]*\).*/\1 \2 \3/p')"
      [ -n "${stages:-}" ] && regex="attention_tile<.*\\(int\\)$warps, \\(int\\)$problems, \\(int\\)$stages>"
    fi
    echo "--- $regex in kjit tune --op $args" | tee -a "$OUT/profile.log"
    # shellcheck disable=SC2086
    timeout 300 ncu --clock-control none --kernel-name-base demangled -k "regex:$regex" -c 1 $sections \
      "$BUILD/cli/kjit" tune --full --op $args --cache-dir "$cache" >>"$OUT/profile.log" 2>&1 || status=1
  done
  grep -E "^---|attention_tile<|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|Compute \(SM\)|Issue Slots Busy|Warp Cycles Per Issued" "$OUT/profile.log" | head -200
  rm -rf "$cache"
fi
if wants sanitize; then
  step "compute-sanitizer: memcheck, racecheck, synccheck"
  BUILD="$BUILD" OUT="$OUT" bash scripts/sanitize_gpu.sh || status=1
fi

step "RESULTS.md"
python3 bench/results_report.py "$OUT" --out "$OUT/RESULTS.md" || status=1
exit $status
