#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: set up, build, then `kjit demo`. Without a GPU it JIT-compiles the kernels the
# heuristics pick for the benchmark shapes for ${KJIT_DEMO_ARCH:-sm_90} and prints what it
# built; on a GPU it also runs and times them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD=${BUILD:-build}
"$BUILD/cli/kjit" info
echo
if "$BUILD/cli/kjit" info | grep -q "gpu 0"; then
  "$BUILD/cli/kjit" demo
else
  "$BUILD/cli/kjit" demo --arch "${KJIT_DEMO_ARCH:-sm_90}"
fi
