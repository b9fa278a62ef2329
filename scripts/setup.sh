#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what kjit builds with (Debian/Ubuntu packages; python3-dev and python3-venv for the
# Python package), unless it is already there. The CUDA Toolkit (12 or newer: NVRTC and cuda.h)
# must already be installed; it is not a Debian package. Extra package names given as arguments
# are installed too (scripts/sanitize.sh: clang).
set -euo pipefail
packages=(cmake ninja-build g++ nlohmann-json3-dev libspdlog-dev doctest-dev libcli11-dev libxxhash-dev
          python3-dev python3-venv "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
command -v nvcc >/dev/null 2>&1 || { echo "the CUDA Toolkit (nvcc, NVRTC) is required" >&2; exit 1; }
