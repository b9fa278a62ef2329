#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds kjit into ${BUILD:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
BUILD=${BUILD:-build}
# Where libxxhash-dev is missing, a copy of xxhash.h in .deps/xxhash (git-ignored) stands in.
xxhash_dir=""
[ -d .deps/xxhash ] && xxhash_dir="-DKJIT_XXHASH_INCLUDE_DIR=$PWD/.deps/xxhash"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${xxhash_dir:+"$xxhash_dir"} \
  ${KJIT_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
