# SPDX-License-Identifier: Apache-2.0
"""The tools that need no arrays and, given an arch, no GPU: what a call gets (explain), its
kernel compiled (compile), a spec's kernels put into a cache folder for deployment
(precompile), and what this machine has (info)."""
import json
import os

from . import _kjit
from ._calls import call_json


def explain(op: str, *, cols=None, rows=None, dtype=None, out_dtype=None, index_dtype=None,
            k=None, arch=None, algorithm: str = "auto", **fields) -> dict:
    """The kernel the heuristics pick for a call (config, kernel, launch shape), compiling
    nothing. The row-wise ops take ``cols`` (and ``rows``, default 1); attention takes its call
    fields instead: batch, heads, m, n, d, dv, bias_dtype, mask_dtype, mask_windows, causal
    (``dtype`` defaults to f32 for the row-wise ops, f16 for attention). ``arch`` (e.g.
    "sm_90") plans for that target without a GPU; None plans for this GPU. ``algorithm`` forces
    one of the op's algorithms instead."""
    call = call_json(op, rows=rows, cols=cols, dtype=dtype, out_dtype=out_dtype,
                     index_dtype=index_dtype, k=k, **fields)
    return json.loads(_kjit._explain(call, arch or "", algorithm))


def compile(op: str, *, cols=None, rows=None, dtype=None, out_dtype=None, index_dtype=None,
            k=None, arch=None, algorithm: str = "auto", **fields) -> dict:
    """explain(), then the kernel compiled with NVRTC for ``arch`` (no GPU needed): its
    registers, shared memory, spills, cubin size and compile time. Caches nothing."""
    call = call_json(op, rows=rows, cols=cols, dtype=dtype, out_dtype=out_dtype,
                     index_dtype=index_dtype, k=k, **fields)
    return json.loads(_kjit._compile(call, arch or "", algorithm))


def precompile(spec, archs=None, *, cache_dir=None, jobs: int = 0) -> dict:
    """Compiles the kernels every call of ``spec`` needs, for each of ``archs`` (e.g.
    ["sm_80", "sm_90"]; None: this GPU's), into ``cache_dir`` (None: the environment's cache
    folder), on ``jobs`` threads (0: one per core). No GPU needed. ``spec`` is a spec as
    ``kjit precompile --spec`` reads it: a dict such as {"ops": ["softmax"], "dtypes": ["bf16"],
    "cols": [32000], "rows": [1, 64]}, a list of them, JSON text, or a path to a JSON file.
    Returns the counts; ``failed`` lists the kernels that did not compile."""
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and not spec.lstrip().startswith(("{", "["))):
        with open(spec, encoding="utf-8") as f:
            text = f.read()
    elif isinstance(spec, str):
        text = spec
    else:
        text = json.dumps(spec)
    if isinstance(archs, str):
        archs = archs.split(",")
    return json.loads(_kjit._precompile(text, list(archs or []),
                                        os.fspath(cache_dir) if cache_dir else "", jobs))


def info() -> dict:
    """kjit's version, NVRTC's version and targets, the driver and each GPU (``no_driver`` says
    why there are none)."""
    return json.loads(_kjit._info())
