#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds kjit into ${BUILD:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${KJIT_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
