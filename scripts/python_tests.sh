#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Python package with pip (scikit-build-core, from this CMake project), installs it
# into a virtual environment (build-python/venv; nanobind, scikit-build-core, pytest and NumPy
# come from PyPI the first time) and runs its tests. GPU tests skip with a visible reason where
# there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
venv=${KJIT_PYTHON_VENV:-build-python/venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
python="$(cd "$venv" && pwd)/bin/python"
if ! "$python" -c "import nanobind, scikit_build_core, pytest, numpy" 2>/dev/null; then
  "$python" -m pip install -q nanobind scikit-build-core pytest numpy
fi
# The build folder is kept, so a second run rebuilds only what changed.
CMAKE_ARGS="${KJIT_CMAKE_ARGS:-}" "$python" -m pip install -q --no-build-isolation --no-deps \
  -C build-dir=build-python/build .
# From outside the source tree, so the installed package is the one imported.
cd build-python
"$python" -m pytest -q -rs ../python/tests
