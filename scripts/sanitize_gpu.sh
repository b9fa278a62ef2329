#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU host: compute-sanitizer's memcheck, racecheck and synccheck over one forced call of
# every kernel family and ring layout (kjit_sanitize_cases --describe lists them), a process per
# case and tool, JOBS at once. Writes $OUT/sanitize_summary.txt (case, tool, exit status, errors,
# warnings, verdict, and the races racecheck reports) and every run's log in
# $OUT/sanitize_logs.tar.gz (the logs, the kernel cache and any unpacked sanitizer stay in
# $SANITIZE_WORK, default /tmp/kjit-sanitize). Exits non-zero when a case fails its own check or a
# tool finds an error that is not shown to be the tool's.
#   BUILD=build-gpu OUT=out bash scripts/sanitize_gpu.sh [CASE...]
# SANITIZER: the compute-sanitizer to use (default: on PATH, else /usr/local/cuda/bin).
# SANITIZER_CHECK: another compute-sanitizer, or the nvidia-cuda-sanitizer-api wheel that holds
#   one (pip download --no-deps nvidia-cuda-sanitizer-api), which runs racecheck again on the
#   cases it flagged. Reports that the other version does not repeat on the same call are listed
#   as known limits of the first, with both versions named; nothing else is.
# JOBS (default 4), TOOLS (default "memcheck racecheck synccheck"), RUN_TIMEOUT (s, default 300).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-4}
TOOLS=${TOOLS:-memcheck racecheck synccheck}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
WORK=${SANITIZE_WORK:-/tmp/kjit-sanitize}
LOGS="$WORK/logs"
SUMMARY="$OUT/sanitize_summary.txt"
mkdir -p "$OUT" "$LOGS"
rm -f "$LOGS"/*.log "$LOGS"/*.row

find_sanitizer() {
  if [ -n "${SANITIZER:-}" ]; then echo "$SANITIZER"
  elif command -v compute-sanitizer >/dev/null 2>&1; then command -v compute-sanitizer
  elif [ -x /usr/local/cuda/bin/compute-sanitizer ]; then echo /usr/local/cuda/bin/compute-sanitizer
  fi
}
# A wheel is unpacked under $WORK (its files lose their execute bits in the zip).
unpack_check_sanitizer() {
  local given=$1
  case "$given" in
    *.whl)
      local dir="$WORK/sanitizer-check"
      rm -rf "$dir" && python3 -m zipfile -e "$given" "$dir" >/dev/null || return 1
      chmod +x "$dir"/nvidia/*/compute-sanitizer/* "$dir"/nvidia/*/bin/* 2>/dev/null
      ls "$dir"/nvidia/*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1 ;;
    *) echo "$given" ;;
  esac
}
version_of() { "$1" --version 2>/dev/null | grep -i version | tail -1 | sed 's/^ *//'; }

SAN=$(find_sanitizer)
[ -n "$SAN" ] && [ -x "$SAN" ] || { echo "compute-sanitizer not found (set SANITIZER)" >&2; exit 1; }
DRIVER="$BUILD/tests/gpu/kjit_sanitize_cases"
if [ ! -x "$DRIVER" ]; then
  [ -f "$BUILD/CMakeCache.txt" ] ||
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${KJIT_CMAKE_ARGS:-} >"$WORK/configure.log" 2>&1
  cmake --build "$BUILD" --target kjit_sanitize_cases -j "$(nproc)" >"$WORK/build.log" 2>&1 ||
    { tail -30 "$WORK/build.log"; exit 1; }
fi
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || mapfile -t CASES < <("$DRIVER" --list)

# Every process shares one kernel cache: the plain runs compile, the sanitized ones load.
export KJIT_CACHE_DIR="$WORK/kernel-cache" KJIT_TUNE=off KJIT_DISK_CACHE=1
SAN_VERSION=$(version_of "$SAN")
echo "compute-sanitizer: $SAN ($SAN_VERSION); ${#CASES[@]} cases; tools: $TOOLS; $JOBS at once"

# One run: writes LOG and LOG's .row, "case tool exit errors warnings verdict".
run_one() {
  local san=$1 case=$2 tool=$3 log=$4
  local cmd=(timeout --kill-after=10 "$RUN_TIMEOUT")
  case "$tool" in
    plain) ;;
    # One launch under racecheck (its slowest tool): the kernels reuse their shared memory
    # within a launch, and a second launch only doubles the time.
    racecheck) cmd+=("$san" --tool racecheck --racecheck-report all --print-limit 20 --error-exitcode 99) ;;
    *) cmd+=("$san" --tool "$tool" --print-limit 20 --error-exitcode 99) ;;
  esac
  local launches=()
  [ "$tool" = racecheck ] && launches=(--launches 1)
  local began=$SECONDS
  "${cmd[@]}" "$DRIVER" "$case" "${launches[@]}" >"$log" 2>&1
  local rc=$? seconds=$((SECONDS - began)) errors=0 warnings=0 verdict=ok summary=""
  case "$tool" in
    plain) ;;
    racecheck) summary=$(grep 'RACECHECK SUMMARY' "$log" | tail -1) ;;
    *) summary=$(grep 'ERROR SUMMARY' "$log" | tail -1) ;;
  esac
  if [ -n "$summary" ]; then
    errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p; s/.*\(([0-9]+) errors?, ([0-9]+) warnings?\).*/\1/p' <<<"$summary")
    warnings=$(sed -nE 's/.*\(([0-9]+) errors?, ([0-9]+) warnings?\).*/\2/p' <<<"$summary")
  fi
  errors=${errors:-0} warnings=${warnings:-0}
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict=timeout
  elif ! grep -q "^$case: ok" "$log"; then verdict=case-failed
  elif [ "$errors" -gt 0 ] || [ "$warnings" -gt 0 ]; then verdict=found
  elif [ $rc -ne 0 ]; then verdict=exit-$rc
  elif [ "$tool" != plain ] && [ -z "$summary" ] && grep -q '^========= .*[Ee]rror' "$log"; then verdict=no-summary
  fi
  echo "$case $tool $rc $errors $warnings $verdict $seconds" >"$log.row"
}

# Runs "case tool" pairs from stdin, JOBS at once, with sanitizer $1 and log suffix $2.
run_all() {
  local san=$1 suffix=$2 case tool
  while read -r case tool; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    run_one "$san" "$case" "$tool" "$LOGS/$case.$tool$suffix.log" &
  done
  wait
}

start=$SECONDS
for c in "${CASES[@]}"; do echo "$c plain"; done | run_all "$SAN" ""
echo "plain runs (compile, check): $((SECONDS - start)) s"
for tool in $TOOLS; do for c in "${CASES[@]}"; do echo "$c $tool"; done; done | run_all "$SAN" ""
echo "sanitized runs: $((SECONDS - start)) s"

# Racecheck reports that another sanitizer version does not repeat on the same call.
declare -A tool_limit=()
if [ -n "${SANITIZER_CHECK:-}" ]; then
  CHECK=$(unpack_check_sanitizer "$SANITIZER_CHECK")
  if [ -n "$CHECK" ] && [ -x "$CHECK" ] && CHECK_VERSION=$(version_of "$CHECK") && [ -n "$CHECK_VERSION" ]; then
    flagged=$(awk '$2 == "racecheck" && $6 == "found" {print $1}' "$LOGS"/*.racecheck.log.row 2>/dev/null)
    for c in $flagged; do echo "$c racecheck"; done | run_all "$CHECK" ".check"
    for c in $flagged; do
      read -r _ _ _ errors warnings verdict _ <"$LOGS/$c.racecheck.check.log.row"
      [ "$verdict" = ok ] && tool_limit[$c]="compute-sanitizer $CHECK_VERSION reports no hazard on the same call"
    done
  else
    echo "SANITIZER_CHECK=$SANITIZER_CHECK gave no compute-sanitizer that runs here: not used"
  fi
fi

status=0
row_line() { printf '%-24s %-17s %5s %7s %8s %7s  %s\n' "$@"; }
{
  echo "compute-sanitizer $SAN_VERSION ($SAN); $((SECONDS - start)) s. The cases:"
  for c in "${CASES[@]}"; do "$DRIVER" --describe "$c" | sed 's/^/  /'; done
  echo "(tool plain: the case alone, which compiles its kernel and checks its output)"
  echo
  row_line case tool exit errors warnings seconds verdict
  for c in "${CASES[@]}"; do
    for tool in plain $TOOLS racecheck.check; do
      row="$LOGS/$c.$tool.log.row"
      if [ ! -f "$row" ]; then
        [ "$tool" = racecheck.check ] && continue
        row_line "$c" "$tool" - - - - not-run
        continue
      fi
      read -r _ _ rc errors warnings verdict seconds <"$row"
      if [ "$verdict" = found ] && [ "$tool" = racecheck ] && [ -n "${tool_limit[$c]:-}" ]; then verdict=tool-limit; fi
      [ "$tool" = racecheck.check ] && tool="racecheck (check)"
      row_line "$c" "$tool" "$rc" "$errors" "$warnings" "${seconds:--}" "$verdict"
    done
  done
  echo
  echo "Races racecheck reported (analysis: the earlier access, then the later one):"
  found_any=0
  for c in "${CASES[@]}"; do
    log="$LOGS/$c.racecheck.log"
    [ -f "$log" ] && grep -q 'Race reported between' "$log" || continue
    found_any=1
    echo "  $c:"
    grep -A1 'Race reported between' "$log" | grep -v '^--$' | sed 's/^=* */    /' | head -12
  done
  [ $found_any -eq 1 ] || echo "  none"
  echo
  echo "Known tool limits:"
  if [ ${#tool_limit[@]} -eq 0 ]; then
    echo "  none shown"
  else
    for c in "${!tool_limit[@]}"; do
      echo "  $c racecheck: ${tool_limit[$c]}, where $SAN_VERSION reports the races above. The newer"
      echo "    version's release notes list racecheck false positives fixed since 2025.3: with mbarrier"
      echo "    (2025.4), with indirect barrier dependencies across clusters (2026.1), with mbarrier"
      echo "    complete-tx operations (2026.3)."
    done
  fi
} >"$SUMMARY"
# Every run of the first sanitizer ok, but for racecheck reports shown to be the tool's.
while read -r c tool rc errors warnings verdict _; do
  [ "$verdict" = ok ] && continue
  [ "$verdict" = found ] && [ "$tool" = racecheck ] && [ -n "${tool_limit[$c]:-}" ] && continue
  status=1
done < <(cat "$LOGS"/*.plain.log.row $(for t in $TOOLS; do ls "$LOGS"/*."$t".log.row 2>/dev/null; done) 2>/dev/null)
expected=$(( ${#CASES[@]} * (1 + $(wc -w <<<"$TOOLS")) ))
[ "$(ls "$LOGS"/*.log.row 2>/dev/null | grep -vc '\.check\.log\.row$')" -eq "$expected" ] || status=1
[ $status -eq 0 ] && echo "verdict: clean (or only known tool limits)" >>"$SUMMARY" ||
  echo "verdict: FINDINGS or failed runs (see the logs)" >>"$SUMMARY"
cat "$SUMMARY"
tar -czf "$OUT/sanitize_logs.tar.gz" -C "$WORK" logs 2>/dev/null
exit $status
