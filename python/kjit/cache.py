# SPDX-License-Identifier: Apache-2.0
"""The disk cache's maintenance, as ``kjit inspect`` and ``kjit cache`` do it. ``cache_dir``
None means the environment's folder (KJIT_CACHE_DIR, else $XDG_CACHE_HOME/kjit, else
~/.cache/kjit). No GPU needed."""
import json
import os

from . import _kjit


def _dir(cache_dir) -> str:
    return os.fspath(cache_dir) if cache_dir else ""


def inspect(cache_dir=None) -> list:
    """Every valid entry, oldest first: kind ("cubin" or "tune"), key fields, metadata (kernel,
    arch, registers, compile time, ...), payload size, age and file."""
    return json.loads(_kjit._cache_inspect(_dir(cache_dir)))["entries"]


def verify(cache_dir=None) -> dict:
    """Checks every entry and removes the bad ones: {"checked", "ok", "removed", "reasons"}.
    Everything was sound when ok == checked."""
    return json.loads(_kjit._cache_verify(_dir(cache_dir)))


def prune(max_bytes, cache_dir=None) -> dict:
    """Removes least recently used entries until at most ``max_bytes`` remain."""
    return json.loads(_kjit._cache_prune(_dir(cache_dir), int(max_bytes)))


def clear(cache_dir=None) -> int:
    """Removes every entry; returns how many."""
    return _kjit._cache_clear(_dir(cache_dir))


def export_bundle(path, cache_dir=None) -> int:
    """Writes every entry into one bundle file (for KJIT_CACHE_BUNDLE); returns how many."""
    return _kjit._cache_export(_dir(cache_dir), os.fspath(path))


def import_bundle(path, cache_dir=None) -> int:
    """Adds every entry of a bundle file to the cache; returns how many."""
    return _kjit._cache_import(_dir(cache_dir), os.fspath(path))
