# SPDX-License-Identifier: Apache-2.0
"""Shared by the suites: the repository root, whether a GPU is here, and a fresh cache folder.
GPU tests carry the `gpu` marker and are skipped with a visible reason where there is none."""
import pathlib

import pytest

import kjit

ROOT = pathlib.Path(__file__).resolve().parents[2]


def gpu_reason():
    """Why GPU tests cannot run here, or None when they can."""
    info = kjit.info()
    if info["driver"] is None:
        return "GPU tests SKIPPED: " + info.get("no_driver", "no CUDA driver")
    if not info["gpus"]:
        return "GPU tests SKIPPED: no CUDA device"
    return None


def skip_module_without_gpu():
    """For a GPU suite's first line: skips the whole module, with the reason, where no GPU is."""
    reason = gpu_reason()
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)


def pytest_collection_modifyitems(config, items):
    reason = gpu_reason()
    if reason is None:
        return
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def cache_dir(tmp_path):
    """A fresh, private cache folder."""
    path = tmp_path / "cache"
    path.mkdir(mode=0o700)
    return path
