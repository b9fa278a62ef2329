#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU host: compute-sanitizer's memcheck, racecheck and synccheck over one forced call of
# every kernel family and ring layout (kjit_sanitize_cases --describe lists them), a process per
# case and tool, JOBS at once. Writes $OUT/sanitize_summary.txt (case, tool, exit status, errors,
# warnings, verdict, and the hazards racecheck reports) and every run's log in
# $OUT/sanitize_logs.tar.gz (the logs, the kernel cache, the cubins and any unpacked sanitizer
# stay in $SANITIZE_WORK, default /tmp/kjit-sanitize). Exits non-zero when a case fails its own
# check or a tool finds an error that is not shown to be the tool's.
#   BUILD=build-gpu OUT=out bash scripts/sanitize_gpu.sh [CASE...]
# Racecheck's hazards are listed by kind with their two accesses (thread, kernel offset and the
# instruction there, from the case's cubin: kjit_sanitize_cases NAME --cubin). A ring case's are
# called the tool's (verdict tool-limit) only when every one shown is a consumer thread's shared
# load or store followed by the producer thread's bulk copy of the same bytes (racecheck_hazards.py
# --producer), and racecheck reports the same kinds on tests/gpu/racecheck_probe.cu, which hands a
# chunk over the same way, correctly, and checks its data (built here with the toolkit's nvcc).
# SANITIZER: the compute-sanitizer to use (default: on PATH, else /usr/local/cuda/bin).
# NVCC, NVDISASM: the toolkit's nvcc and nvdisasm (default: on PATH, else /usr/local/cuda/bin;
#   without nvdisasm, cuobjdump -sass).
# SANITIZER_CHECK: another compute-sanitizer, or the nvidia-cuda-sanitizer-api wheel that holds
#   one (pip download --no-deps nvidia-cuda-sanitizer-api), which runs racecheck again on the
#   cases it flagged. Reports that the other version does not repeat on the same call are listed
#   as known limits of the first, with both versions named.
# JOBS (default 4), TOOLS (default "memcheck racecheck synccheck"), RUN_TIMEOUT (s, default 300),
# RACECHECK_TIMEOUT (s, default 540: racecheck is the slowest tool by far).
# RACECHECK_ANALYSIS=1: racecheck shows only the first hazards of a run (each a byte); so that a
#   tool-limit speaks for all of them, run the cases it would call so once more, reporting race
#   analysis only (every distinct set of racing instructions), and keep the verdict only where
#   every report pairs the producer's bulk copy with shared loads and stores.
# SANITIZE_REPORT_ONLY=1: run nothing; list, classify and summarize the logs already in
#   $SANITIZE_WORK/logs (the probe's too); with CUBIN_ARCH (e.g. 90) the cases' cubins are
#   compiled for that arch, which needs no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-4}
TOOLS=${TOOLS:-memcheck racecheck synccheck}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
RACECHECK_TIMEOUT=${RACECHECK_TIMEOUT:-540}
WORK=${SANITIZE_WORK:-/tmp/kjit-sanitize}
LOGS="$WORK/logs"
SUMMARY="$OUT/sanitize_summary.txt"
REPORT_ONLY=${SANITIZE_REPORT_ONLY:-}
mkdir -p "$OUT" "$LOGS"
[ -n "$REPORT_ONLY" ] || rm -f "$LOGS"/*.log "$LOGS"/*.row "$LOGS"/*.txt

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
# A toolkit program: $2 when given, else on PATH, else in /usr/local/cuda/bin.
find_tool() {
  if [ -n "${2:-}" ]; then echo "$2"
  elif command -v "$1" >/dev/null 2>&1; then command -v "$1"
  elif [ -x "/usr/local/cuda/bin/$1" ]; then echo "/usr/local/cuda/bin/$1"
  fi
}
NVCC=$(find_tool nvcc "${NVCC:-}")
NVDISASM=$(find_tool nvdisasm "${NVDISASM:-}")
CUOBJDUMP=$(find_tool cuobjdump)
# A cubin's instructions at their offsets, which racecheck's reports name.
disassemble() {
  if [ -n "$NVDISASM" ] && "$NVDISASM" -c "$1" >"$2" 2>/dev/null; then return 0; fi
  [ -n "$CUOBJDUMP" ] && "$CUOBJDUMP" -sass "$1" >"$2" 2>/dev/null
}

SAN=$(find_sanitizer)
if [ -z "$REPORT_ONLY" ] && ! { [ -n "$SAN" ] && [ -x "$SAN" ]; }; then
  echo "compute-sanitizer not found (set SANITIZER)" >&2
  exit 1
fi
DRIVER="$BUILD/tests/gpu/kjit_sanitize_cases"
# Built every time (a no-op when up to date): a driver older than its sources lacks --cubin.
[ -f "$BUILD/CMakeCache.txt" ] ||
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${KJIT_CMAKE_ARGS:-} >"$WORK/configure.log" 2>&1
cmake --build "$BUILD" --target kjit_sanitize_cases -j "$(nproc)" >"$WORK/build.log" 2>&1 ||
  { tail -30 "$WORK/build.log"; exit 1; }
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || mapfile -t CASES < <("$DRIVER" --list)

# Every process shares one kernel cache: the plain runs compile, the sanitized ones load.
export KJIT_CACHE_DIR="$WORK/kernel-cache" KJIT_TUNE=off KJIT_DISK_CACHE=1
SAN_VERSION=$( [ -n "$SAN" ] && version_of "$SAN")
SAN_VERSION=${SAN_VERSION:-"(not run here)"}
echo "compute-sanitizer: $SAN ($SAN_VERSION); ${#CASES[@]} cases; tools: $TOOLS; $JOBS at once"

RACECHECK_FLAGS=(--tool racecheck --racecheck-report all --print-limit 20 --error-exitcode 99)
# The probe's hand-offs alternate by round, so its first 20 reports show only the first kind.
PROBE_RACECHECK_FLAGS=(--tool racecheck --racecheck-report all --print-limit 4000 --error-exitcode 99)
# Racecheck's race analysis only: every distinct set of racing instructions, one report each.
ANALYSIS_FLAGS=(--tool racecheck --racecheck-report analysis --print-limit 1000 --error-exitcode 99)

# One run: writes LOG and LOG's .row, "case tool exit errors warnings verdict".
run_one() {
  local san=$1 case=$2 tool=$3 log=$4
  local limit=$RUN_TIMEOUT
  [[ "$tool" == racecheck* ]] && limit=$RACECHECK_TIMEOUT
  local cmd=(timeout --kill-after=10 "$limit")
  case "$tool" in
    plain) ;;
    # One launch under racecheck (its slowest tool): the kernels reuse their shared memory
    # within a launch, and a second launch only doubles the time.
    racecheck) cmd+=("$san" "${RACECHECK_FLAGS[@]}") ;;
    racecheck-analysis) cmd+=("$san" "${ANALYSIS_FLAGS[@]}") ;;
    *) cmd+=("$san" --tool "$tool" --print-limit 20 --error-exitcode 99) ;;
  esac
  local launches=()
  [[ "$tool" == racecheck* ]] && launches=(--launches 1)
  local began=$SECONDS
  "${cmd[@]}" "$DRIVER" "$case" "${launches[@]}" >"$log" 2>&1
  local rc=$? seconds=$((SECONDS - began)) errors=0 warnings=0 verdict=ok summary=""
  case "$tool" in
    plain) ;;
    racecheck*) summary=$(grep 'RACECHECK SUMMARY' "$log" | tail -1) ;;
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

# The probe (tests/gpu/racecheck_probe.cu), built, then run plainly and under racecheck with each
# way of arriving; logs probe-MODE.plain.log and probe-MODE.racecheck.log.
run_probe() {
  local probe="$WORK/racecheck_probe" mode
  rm -f "$probe" "$probe.sass"
  [ -n "$NVCC" ] || { echo "no nvcc (set NVCC)" >"$LOGS/probe.build.log"; return; }
  { "$NVCC" -arch=sm_90 -I. -o "$probe" tests/gpu/racecheck_probe.cu &&
    "$NVCC" -arch=sm_90 -I. -cubin -o "$probe.cubin" tests/gpu/racecheck_probe.cu; } >"$LOGS/probe.build.log" 2>&1 ||
    return
  disassemble "$probe.cubin" "$probe.sass" || rm -f "$probe.sass"
  for mode in warp thread; do
    timeout --kill-after=10 "$RUN_TIMEOUT" "$probe" "$mode" >"$LOGS/probe-$mode.plain.log" 2>&1
    timeout --kill-after=10 "$RACECHECK_TIMEOUT" "$SAN" "${PROBE_RACECHECK_FLAGS[@]}" "$probe" "$mode" \
      >"$LOGS/probe-$mode.racecheck.log" 2>&1
  done
}

# What the probe's logs show: probe_state (ok, or why not), probe_kinds (the hazard kinds
# racecheck reports on its correct warp hand-off, when all are hand-off hazards) and
# probe_thread (what it reports when every consumer thread arrives itself).
probe_state="not run" probe_kinds="" probe_thread=""
read_probe() {
  local mode producer log
  if [ ! -f "$LOGS/probe-warp.plain.log" ]; then
    [ -f "$LOGS/probe.build.log" ] && probe_state="not built: $(tail -1 "$LOGS/probe.build.log")"
    return
  fi
  for mode in warp thread; do
    log="$LOGS/probe-$mode.plain.log"
    grep -q '^probe: ok' "$log" || { probe_state="FAILED plainly ($mode): $(tail -1 "$log")"; return; }
    producer=$(sed -nE 's/.*producer thread ([0-9]+).*/\1/p' "$log")
    python3 scripts/racecheck_hazards.py "$LOGS/probe-$mode.racecheck.log" --producer "$producer" \
      $([ -s "$WORK/racecheck_probe.sass" ] && echo --sass "$WORK/racecheck_probe.sass") \
      >"$LOGS/probe-$mode.racecheck.hazards.txt" 2>&1
  done
  probe_state=ok
  probe_kinds=$(sed -n 's/^handoff: //p' "$LOGS/probe-warp.racecheck.hazards.txt" | grep -v '^none')
  local clean='RACECHECK SUMMARY: 0 hazards? displayed \(0 errors?, 0 warnings?\)'
  if grep -Eq "$clean" "$LOGS/probe-thread.racecheck.log"; then
    probe_thread=clean
  else
    probe_thread="flagged ($(sed -n 's/^handoff: //p' "$LOGS/probe-thread.racecheck.hazards.txt"))"
  fi
}

start=$SECONDS
if [ -z "$REPORT_ONLY" ]; then
  for c in "${CASES[@]}"; do echo "$c plain"; done | run_all "$SAN" ""
  echo "plain runs (compile, check): $((SECONDS - start)) s"
  [[ " $TOOLS " == *" racecheck "* ]] && run_probe
  for tool in $TOOLS; do for c in "${CASES[@]}"; do echo "$c $tool"; done; done | run_all "$SAN" ""
  echo "sanitized runs: $((SECONDS - start)) s"
fi
read_probe
probe_line="racecheck probe (tests/gpu/racecheck_probe.cu): $probe_state"
probe_line+="${probe_kinds:+; racecheck reports its hand-offs as $probe_kinds}"
probe_line+="${probe_thread:+; with thread arrivals $probe_thread}"
echo "$probe_line"

# Every case racecheck flagged: its hazards listed (LOG.hazards.txt) against its cubin's
# instructions; a ring case's are the tool's when all are hand-offs of kinds the probe shows.
declare -A tool_limit=() handoff_kinds=()
mkdir -p "$WORK/cubins"
flagged=$(awk '$2 == "racecheck" && $6 == "found" {print $1}' "$LOGS"/*.racecheck.log.row 2>/dev/null)
# The SASS of the kernel a case ran, as $WORK/cubins/CASE.sass: its cubin compiled again, kept
# only when its key is one the run stored in the kernel cache (the same kernel, so the same code).
case_sass() {
  local c=$1 sass="$WORK/cubins/$1.sass" key
  rm -f "$sass"
  "$DRIVER" "$c" --cubin "$WORK/cubins/$c.cubin" ${CUBIN_ARCH:+--arch "$CUBIN_ARCH"} >"$LOGS/$c.cubin.log" 2>&1 ||
    return
  key=$(sed -nE 's/.*, key ([0-9a-f]+),.*/\1/p' "$LOGS/$c.cubin.log")
  if [ -z "$REPORT_ONLY" ] && ! find "$KJIT_CACHE_DIR" -name "${key:-none}.bin" | grep -q .; then
    echo "no kernel-cache entry $key: not the cubin the run loaded, its instructions not named" >>"$LOGS/$c.cubin.log"
    return
  fi
  disassemble "$WORK/cubins/$c.cubin" "$sass"
}

for c in $flagged; do
  sass="$WORK/cubins/$c.sass"
  case_sass "$c"
  producer=$("$DRIVER" --describe "$c" | sed -nE 's/.*, ring pack=[0-9]+ threads=([0-9]+).*/\1/p')
  python3 scripts/racecheck_hazards.py "$LOGS/$c.racecheck.log" ${producer:+--producer "$producer"} \
    $([ -s "$sass" ] && echo --sass "$sass") >"$LOGS/$c.racecheck.hazards.txt" 2>&1
  kinds=$(sed -n 's/^handoff: //p' "$LOGS/$c.racecheck.hazards.txt" | grep -v '^none')
  [ "$probe_state" = ok ] && [ -n "$kinds" ] && [ -n "$probe_kinds" ] || continue
  shared=1
  for k in $kinds; do [[ " $probe_kinds " == *" $k "* ]] || shared=0; done
  [ $shared -eq 1 ] || continue
  handoff_kinds[$c]=$kinds
  tool_limit[$c]="every hazard shown is a $kinds hand-off racecheck also reports on the probe"
done

# With RACECHECK_ANALYSIS, each hand-off verdict checked against every race racecheck found.
if [ -n "${RACECHECK_ANALYSIS:-}" ] && [ ${#handoff_kinds[@]} -gt 0 ]; then
  [ -n "$REPORT_ONLY" ] || for c in "${!handoff_kinds[@]}"; do echo "$c racecheck-analysis"; done | run_all "$SAN" ""
  for c in "${!handoff_kinds[@]}"; do
    log="$LOGS/$c.racecheck-analysis.log"
    python3 scripts/racecheck_hazards.py "$log" --analysis \
      $([ -s "$WORK/cubins/$c.sass" ] && echo --sass "$WORK/cubins/$c.sass") >"$log.txt" 2>&1
    races=$(sed -n 's/^races: //p' "$log.txt")
    if [[ "$races" == handoff* ]]; then
      tool_limit[$c]+=", as is every race racecheck's analysis found (${races#handoff })"
    else
      unset "tool_limit[$c]" "handoff_kinds[$c]"
    fi
  done
fi

# Racecheck reports that another sanitizer version does not repeat on the same call.
if [ -n "${SANITIZER_CHECK:-}" ] && [ -z "$REPORT_ONLY" ]; then
  CHECK=$(unpack_check_sanitizer "$SANITIZER_CHECK")
  if [ -n "$CHECK" ] && [ -x "$CHECK" ] && CHECK_VERSION=$(version_of "$CHECK") && [ -n "$CHECK_VERSION" ]; then
    flagged=$(for c in $flagged; do [ -n "${tool_limit[$c]:-}" ] || echo "$c"; done)
    for c in $flagged; do echo "$c racecheck"; done | run_all "$CHECK" ".check"
    for c in $flagged; do
      read -r _ _ _ errors warnings verdict _ <"$LOGS/$c.racecheck.check.log.row"
      [ "$verdict" = ok ] && tool_limit[$c]="compute-sanitizer $CHECK_VERSION reports no hazard on the same call"
    done
  else
    echo "SANITIZER_CHECK=$SANITIZER_CHECK gave no compute-sanitizer that runs here: not used"
  fi
fi

# Why the hand-off hazards are the tool's: what the probe showed, and where the ring does the same.
handoff_why() {
  echo "Why: tests/gpu/racecheck_probe.cu hands a shared-memory chunk between consumer warps and a" \
    "producer thread as the PTX memory model requires: each consumer's fence.proxy.async, __syncwarp" \
    "and lane 0's releasing mbarrier arrival (mode warp), the producer's acquiring wait, and" \
    "cp.async.bulk.wait_group.read before it refills the chunk by a bulk copy. Its data came out" \
    "right, and racecheck reports its hand-offs as $probe_kinds hazards (consumer LDS/STS, then the" \
    "producer's UBLKCP). The ring hands its chunks over through the same helpers" \
    "(kernel_sources/ring.cuh: the consumers' fence_before_bulk_copy and arrive on drained;" \
    "ring_producer's wait on drained, bulk_wait_read, then the refill's load), every consumer" \
    "thread arriving itself (the probe's mode thread), and gpu_ring_reuse" \
    "(tests/gpu/test_ring_reuse_gpu.cpp) is the stress test that fails on a real overlap."
  if [ "$probe_thread" = clean ]; then
    echo "With every consumer thread arriving itself (racecheck_probe thread) racecheck reports" \
      "nothing: it orders a thread's own accesses before its arrival, not those of the lanes whose" \
      "__syncwarp precedes lane 0's arrival."
  else
    echo "With every consumer thread arriving itself (racecheck_probe thread) racecheck reports:" \
      "${probe_thread:-nothing known}."
  fi
}

status=0
row_line() { printf '%-24s %-17s %5s %7s %8s %7s  %s\n' "$@"; }
{
  echo "compute-sanitizer $SAN_VERSION ($SAN); $((SECONDS - start)) s. The cases:"
  for c in "${CASES[@]}"; do "$DRIVER" --describe "$c" | sed 's/^/  /'; done
  echo "(tool plain: the case alone, which compiles its kernel and checks its output)"
  echo
  row_line case tool exit errors warnings seconds verdict
  for c in "${CASES[@]}"; do
    for tool in plain $TOOLS racecheck-analysis racecheck.check; do
      row="$LOGS/$c.$tool.log.row"
      if [ ! -f "$row" ]; then
        [[ " $TOOLS " == *" $tool "* ]] || [ "$tool" = plain ] || continue
        row_line "$c" "$tool" - - - - not-run
        continue
      fi
      read -r _ _ rc errors warnings verdict seconds <"$row"
      if [ "$verdict" = found ] && [ -n "${tool_limit[$c]:-}" ] &&
         { [ "$tool" = racecheck ] || [ "$tool" = racecheck-analysis ]; }; then verdict=tool-limit; fi
      [ "$tool" = racecheck.check ] && tool="racecheck (check)"
      row_line "$c" "$tool" "$rc" "$errors" "$warnings" "${seconds:--}" "$verdict"
    done
  done
  if [ "$probe_state" != "not run" ]; then
    echo
    echo "$probe_line"
  fi
  echo
  echo "Racecheck's hazards (kind x how many of those shown: the earlier access, then the later one):"
  found_any=0
  for c in "${CASES[@]}" probe-warp probe-thread; do
    listing="$LOGS/$c.racecheck.hazards.txt"
    [ -f "$listing" ] || continue
    found_any=1
    echo "  $c:"
    sed 's/^/    /' "$listing" | head -24
    [ -f "$LOGS/$c.racecheck-analysis.log" ] && [ -f "$LOGS/$c.racecheck-analysis.log.txt" ] || continue
    echo "    racecheck's race analysis:"
    sed 's/^/      /' "$LOGS/$c.racecheck-analysis.log.txt" | head -24
  done
  [ $found_any -eq 1 ] || echo "  none"
  echo
  echo "Known tool limits:"
  [ ${#tool_limit[@]} -gt 0 ] || echo "  none shown"
  for c in "${CASES[@]}"; do
    [ -n "${tool_limit[$c]:-}" ] || continue
    echo "  $c racecheck: ${tool_limit[$c]}."
    [ -n "${handoff_kinds[$c]:-}" ] && continue
    echo "    $SAN_VERSION reports the hazards above. The newer version's release notes list racecheck"
    echo "    false positives fixed since 2025.3: with mbarrier (2025.4), with indirect barrier"
    echo "    dependencies across clusters (2026.1), with mbarrier complete-tx operations (2026.3)."
  done
  if [ ${#handoff_kinds[@]} -gt 0 ]; then handoff_why | fold -s -w 96 | sed 's/ *$//; s/^/    /'; fi
} >"$SUMMARY"
# Every case's run of the first sanitizer there and ok, but for racecheck reports shown to be the
# tool's; and the probe right where it ran.
for c in "${CASES[@]}"; do
  for t in plain $TOOLS; do
    row="$LOGS/$c.$t.log.row"
    [ -f "$row" ] || { status=1; continue; }
    read -r _ tool _ _ _ verdict _ <"$row"
    [ "$verdict" = ok ] && continue
    [ "$verdict" = found ] && [ "$tool" = racecheck ] && [ -n "${tool_limit[$c]:-}" ] && continue
    status=1
  done
done
[[ "$probe_state" != FAILED* ]] || status=1
[ $status -eq 0 ] && echo "verdict: clean (or only known tool limits)" >>"$SUMMARY" ||
  echo "verdict: FINDINGS or failed runs (see the logs)" >>"$SUMMARY"
cat "$SUMMARY"
tar -czf "$OUT/sanitize_logs.tar.gz" -C "$WORK" logs 2>/dev/null
exit $status
