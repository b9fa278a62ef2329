# SPDX-License-Identifier: Apache-2.0
"""kjit.Runtime: the ops on any CUDA array that speaks DLPack (torch, CuPy, JAX, ...), and the
tools that need a GPU (prepare, tune)."""
import json

from . import _kjit
from ._calls import call_json


def _device(device) -> int:
    if device is None:
        return 0
    return device if isinstance(device, int) else int(getattr(device, "index", None) or 0)


class Runtime:
    """Compiled kernels of every device it served. ``Runtime(**options)`` takes every runtime
    option by name (cache_dir, cache_bundle, disk_cache, jit, tune, log_level, cache_max_bytes,
    dependent_launch); what is not given comes from the KJIT_* environment variables. One
    runtime per process is the intended use: see default_runtime().

    The ops read the last dimension of an array as columns and every other one as rows (the
    rows may be strided: a slice of a larger array works; the last dimension must be
    contiguous). Missing outputs are allocated through the input's framework on its device;
    ``stream`` (an int handle or a torch/CuPy stream) defaults to that framework's current
    stream. Each argument error names the argument."""

    def __init__(self, _native=None, **options):
        self._native = _native if _native is not None else _kjit.Runtime(**options)

    @property
    def options(self) -> dict:
        """The options, as Runtime(**options) takes them."""
        return self._native.options

    def softmax(self, x, out=None, *, out_dtype=None, stream=None):
        """out = softmax(x) along the last dimension (float32, float16 or bfloat16, any mix)."""
        return self._native._softmax(x, out, out_dtype, stream)

    def log_softmax(self, x, out=None, *, out_dtype=None, stream=None):
        """out = log_softmax(x) along the last dimension."""
        return self._native._log_softmax(x, out, out_dtype, stream)

    def reduce_scale(self, x, out=None, *, out_dtype=None, scale=None, stream=None):
        """out = x / max|x| along the last dimension (a row of zeros stays zeros). ``scale``:
        None, True (allocate it) or a float32 array of x's shape without its last dimension,
        which receives max|x| per row; with one, returns (out, scale)."""
        return self._native._reduce_scale(x, out, out_dtype, scale, stream)

    def softmax_topk(self, logits, k, *, temperature=1.0, k_per_row=None, logprobs=False,
                     renorm=False, index_dtype=None, probs=None, indices=None, stream=None):
        """p = softmax(logits / temperature) along the last dimension, then its k largest values
        sorted descending (ties in ascending index order): returns (probs, indices), float32
        and int64 (or ``index_dtype`` int32) of logits' shape with k last. ``k_per_row``
        (int32, one per row) keeps only each row's first values (the rest: index -1,
        probability 0); ``logprobs`` gives log-probabilities, ``renorm`` renormalizes the k."""
        return self._native._softmax_topk(logits, k, temperature, k_per_row, logprobs, renorm,
                                          index_dtype, probs, indices, stream)

    def attention(self, q, k, v, *, bias=None, mask=None, scale=None, causal=False, out=None,
                  stream=None):
        """out = softmax(q k^T * scale + bias[h] + mask[b % W], causal) v for every batch entry
        b and head h in one launch. q [B, H, M, D], k [B, H, N, D], v [B, H, N, Dv] (or 3-d
        [P, M, D], ..., one head each), float16 or bfloat16 alike, at any batch, head and row
        strides with a contiguous last dimension (a [B, N, H, D] buffer as a permuted view
        works); M and N 1..256, D and Dv 16, 32, 64 or 128. ``bias`` [H, M, N] and ``mask``
        [W, M, N] (problem b uses mask[b % W]) are additive, float32, float16 or bfloat16.
        ``scale`` defaults to 1/sqrt(D); ``causal`` masks key j > query i. A row whose keys are
        all masked (-inf) gives zeros. Returns ``out`` (q's shape with Dv last; allocated
        contiguous through q's framework when not given)."""
        return self._native._attention(q, k, v, bias, mask, scale, causal, out, stream)

    def prepare(self, op, *, cols=None, rows=None, dtype=None, out_dtype=None, index_dtype=None,
                k=None, device=None, **fields) -> dict:
        """Compiles (or finds in the caches) and loads the kernel a call needs on ``device``
        (an index, default 0), launching nothing, so that the call (inside a CUDA graph
        capture too) starts at once. Returns what was chosen: kernel, config, arch, registers,
        shared memory, spills, compile time. The call is given as kjit.explain takes it."""
        call = call_json(op, rows=rows, cols=cols, dtype=dtype, out_dtype=out_dtype,
                         index_dtype=index_dtype, k=k, **fields)
        return json.loads(self._native._prepare(call, _device(device)))

    def tune(self, op, *, cols=None, rows=None, dtype=None, out_dtype=None, index_dtype=None,
             k=None, device=None, save=False, reuse_record=True, **fields) -> dict:
        """Tunes the call's class on ``device`` now: every candidate config compiled, checked
        against the reference kernel and timed. Returns every candidate (the winner marked);
        ``save`` stores the winner as the class's tuning record (used from then on, in this
        process and on disk)."""
        call = call_json(op, rows=rows, cols=cols, dtype=dtype, out_dtype=out_dtype,
                         index_dtype=index_dtype, k=k, **fields)
        return json.loads(self._native._tune(call, _device(device), save, reuse_record))

    def __repr__(self) -> str:
        return f"kjit.Runtime({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"


_default = None


def default_runtime() -> Runtime:
    """The process's runtime (options from the environment), made on first use; the module
    functions (kjit.softmax, ...) and kjit.torch's ops use it."""
    global _default
    if _default is None:
        _default = Runtime(_native=_kjit.default_runtime())
    return _default
