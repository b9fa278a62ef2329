# SPDX-License-Identifier: Apache-2.0
"""kjit: JIT-compiled GPU kernels for the softmax family (softmax, log_softmax, reduce_scale,
fused softmax + top-K) and batched small-tile attention on any CUDA array that speaks DLPack,
and as torch ops (kjit.torch).

    import kjit
    probs = kjit.softmax(x)                     # x: a torch, CuPy or JAX CUDA array
    p, idx = kjit.softmax_topk(logits, k=50, temperature=0.8)
    o = kjit.attention(q, k, v, bias=rel_pos_bias, mask=shift_mask)
    import kjit.torch                           # torch.ops.kjit.*, torch.compile, CUDA graphs

Without a GPU the tools still work: kjit.explain / compile / precompile (name an arch),
kjit.cache.*, kjit.info()."""
import importlib

from . import _kjit
from ._errors import (CacheError, CompileError, Error, InvalidArgumentError, InvalidConfigError,
                      NoDriverError, NotFoundError, OutOfResourcesError)
from . import _logging, _arrays  # noqa: F401  (log forwarding and array hooks, set at import)
from ._logging import forward_to_python
from ._runtime import Runtime, default_runtime
from ._tools import compile, explain, info, precompile
from . import cache

__version__ = _kjit.__version__
version = _kjit.version

__all__ = [
    "Runtime", "default_runtime", "softmax", "log_softmax", "reduce_scale", "softmax_topk",
    "attention", "explain", "compile", "precompile", "info", "cache", "version",
    "forward_to_python",
    "Error", "InvalidArgumentError", "InvalidConfigError", "NoDriverError", "CompileError",
    "CacheError", "NotFoundError", "OutOfResourcesError",
]


def softmax(x, out=None, *, out_dtype=None, stream=None):
    """Runtime.softmax on the default runtime."""
    return default_runtime().softmax(x, out, out_dtype=out_dtype, stream=stream)


def log_softmax(x, out=None, *, out_dtype=None, stream=None):
    """Runtime.log_softmax on the default runtime."""
    return default_runtime().log_softmax(x, out, out_dtype=out_dtype, stream=stream)


def reduce_scale(x, out=None, *, out_dtype=None, scale=None, stream=None):
    """Runtime.reduce_scale on the default runtime."""
    return default_runtime().reduce_scale(x, out, out_dtype=out_dtype, scale=scale, stream=stream)


def softmax_topk(logits, k, **options):
    """Runtime.softmax_topk on the default runtime."""
    return default_runtime().softmax_topk(logits, k, **options)


def attention(q, k, v, *, bias=None, mask=None, scale=None, causal=False, out=None, stream=None):
    """Runtime.attention on the default runtime."""
    return default_runtime().attention(q, k, v, bias=bias, mask=mask, scale=scale, causal=causal,
                                       out=out, stream=stream)


def __getattr__(name):
    # kjit.torch imports torch: only when asked for.
    if name == "torch":
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'kjit' has no attribute {name!r}")
