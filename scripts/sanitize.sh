#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CPU suites, the cache suite and the install-and-link test built and run under
# AddressSanitizer and UndefinedBehaviorSanitizer (CMakePresets.json, preset "sanitize", clang),
# then each fuzzer for FUZZ_SECONDS seconds (default 20). Every target is built, so a new suite
# cannot be left out; the suites that compile hundreds of kernels are not run: NVRTC is not
# instrumented, so they would add minutes and no coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh clang libclang-rt-dev
export PATH=/usr/local/cuda/bin:$PATH
xxhash_dir=""
[ -d .deps/xxhash ] && xxhash_dir="-DKJIT_XXHASH_INCLUDE_DIR=$PWD/.deps/xxhash"
cmake --preset sanitize ${xxhash_dir:+"$xxhash_dir"} ${KJIT_CMAKE_ARGS:-} >/dev/null
cmake --build --preset sanitize -j "$(nproc)"
ctest --preset sanitize -j "$(nproc)"
FUZZ_SECONDS=${FUZZ_SECONDS:-20} bash scripts/fuzz.sh
