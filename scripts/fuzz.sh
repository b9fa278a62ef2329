#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (the "sanitize" preset: clang, ASan, UBSan) and runs each for
# FUZZ_SECONDS seconds (default 60), one after another, from its corpus in fuzz/corpus/<name>.
# New inputs go to a scratch folder, so the corpus in the repository only changes by hand
# (FUZZ_MERGE=1 merges what was found into it). A crash, a hang (10 s) or a leak stops the run
# and leaves the input in build-sanitize/fuzz-findings/. FUZZ_TARGETS picks some of: spec
# entry bundle.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-spec entry bundle}
build=build-sanitize
[ -f "$build/CMakeCache.txt" ] || cmake --preset sanitize ${KJIT_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" --target $(printf 'fuzz_%s ' $targets)
findings="$build/fuzz-findings"
mkdir -p "$findings"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for target in $targets; do
  scratch=$(mktemp -d)
  dict=()
  [ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
  echo "== fuzz_$target for ${seconds}s"
  log="$findings/$target.log"
  status=0
  "$build/fuzz/fuzz_$target" "${dict[@]}" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="$findings/$target-" "$scratch" "fuzz/corpus/$target" >"$log" 2>&1 || status=$?
  grep -E '^(#[0-9]+ +DONE|SUMMARY|stat::(number_of_executed_units|new_units_added|peak_rss_mb)|INFO: seed corpus)|ERROR|(crash|leak|timeout)-' "$log" || true
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$build/fuzz/fuzz_$target" -merge=1 "fuzz/corpus/$target" "$scratch" >/dev/null 2>&1
  fi
  rm -rf "$scratch"
  if [ "$status" -ne 0 ]; then
    echo "fuzz_$target found a problem (exit $status): see $findings" >&2
    exit 1
  fi
done
