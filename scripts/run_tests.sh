#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Set up, build, run every test (the C++ suites, then the Python package's). GPU suites skip with
# a visible message where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD=${BUILD:-build}
(cd "$BUILD" && ctest --output-on-failure -j "$(nproc)" --timeout 900)
bash scripts/python_tests.sh
