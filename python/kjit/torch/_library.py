# SPDX-License-Identifier: Apache-2.0
"""torch.ops.kjit.*, registered through a torch library fragment with define/impl: a functional
op and an out variant for each, CUDA kernels that hand kjit raw pointers, strides and torch's
raw current stream, and fake kernels that allocate exactly what the CUDA ones do.

The schemas are defined here, and only here, for either set of CUDA kernels: the C++ ones of
kjit._torch_ops where that module was built (torch with CUDA at build time), else the Python
ones below. The C++ kernels hand any call off their fast path to the checked Python kernels
(CHECKED_KERNELS), so the argument checks and their messages live in _layout.py alone; the fake
kernels stay in Python for either set. KJIT_TORCH_NATIVE=0 keeps the Python kernels."""
import importlib
import os
import warnings

import torch

from .. import _kjit
from . import _attention, _layout
from ._layout import CODES, FLOATS, INDEX_DTYPES, reject

lib = torch.library.Library("kjit", "FRAGMENT")

SCHEMAS = {
    "softmax": "softmax(Tensor x, ScalarType? out_dtype=None) -> Tensor",
    "softmax_out": "softmax_out(Tensor x, Tensor(a!) out) -> ()",
    "log_softmax": "log_softmax(Tensor x, ScalarType? out_dtype=None) -> Tensor",
    "log_softmax_out": "log_softmax_out(Tensor x, Tensor(a!) out) -> ()",
    "reduce_scale": "reduce_scale(Tensor x, ScalarType? out_dtype=None) -> (Tensor, Tensor)",
    "reduce_scale_out": "reduce_scale_out(Tensor x, Tensor(a!) out, Tensor(b!)? scale=None) -> ()",
    "softmax_topk": "softmax_topk(Tensor logits, int k, float temperature=1.0, "
                    "Tensor? k_per_row=None, bool logprobs=False, bool renorm=False, "
                    "ScalarType? index_dtype=None) -> (Tensor, Tensor)",
    "softmax_topk_out": "softmax_topk_out(Tensor logits, int k, float temperature, "
                        "Tensor? k_per_row, bool logprobs, bool renorm, Tensor(a!) probs, "
                        "Tensor(b!) indices) -> ()",
    "attention": "attention(Tensor q, Tensor k, Tensor v, Tensor? bias=None, Tensor? mask=None, "
                 "float? scale=None, bool causal=False) -> Tensor",
    "attention_out": "attention_out(Tensor q, Tensor k, Tensor v, Tensor? bias, Tensor? mask, "
                     "float? scale, bool causal, Tensor(a!) out) -> ()",
}
for schema in SCHEMAS.values():
    lib.define(schema)

_SOFTMAX, _LOG_SOFTMAX, _REDUCE_SCALE = 0, 1, 2
_launch_rowwise = _kjit._launch_rowwise
_launch_topk = _kjit._launch_topk
# torch's current stream as a raw handle, without making a Stream object (what Inductor's
# generated code calls too); a torch built without CUDA never reaches the CUDA kernels.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
    lambda device: torch.cuda.current_stream(device).cuda_stream)


def _run_rowwise(op: int, x, out, scale) -> None:
    rows, cols, stride = _layout.rows_of(x, "x")
    _, _, out_stride = _layout.rows_of(out, "out")
    device = x.device.index
    _launch_rowwise(op, x.data_ptr(), stride, out.data_ptr(), out_stride, rows, cols,
                    CODES[x.dtype], CODES[out.dtype], 0 if scale is None else scale.data_ptr(),
                    _raw_stream(device), device)


def _rowwise_out(op: int, x, out, scale=None) -> None:
    _layout.check_dtype(x, "x")
    _layout.check_output(out, "out", x, x.shape, FLOATS, False)
    if scale is not None:
        _layout.check_output(scale, "scale", x, _layout.scale_shape(x), (torch.float32,), True)
    _run_rowwise(op, x, out, scale)


def _checked_new(op: int, x, out_dtype):
    """softmax / log_softmax off the hot path (_kjit's): every check, strided rows."""
    out = _layout.rowwise_output(x, out_dtype)
    _run_rowwise(op, x, out, None)
    return out


def _reduce_scale(x, out_dtype=None):
    out = _layout.rowwise_output(x, out_dtype)
    scale = torch.empty(_layout.scale_shape(x), dtype=torch.float32, device=x.device)
    _run_rowwise(_REDUCE_SCALE, x, out, scale)
    return out, scale


def _run_topk(logits, k, temperature, k_per_row, logprobs, renorm, probs, indices) -> None:
    rows, cols, stride = _layout.rows_of(logits, "logits")
    _layout.check_k_per_row(k_per_row, logits, rows)
    flags = (1 if logprobs else 0) | (2 if renorm else 0)
    device = logits.device.index
    _launch_topk(logits.data_ptr(), stride, rows, cols, CODES[logits.dtype], k,
                 0 if k_per_row is None else k_per_row.data_ptr(), temperature, flags,
                 probs.data_ptr(), indices.data_ptr(), CODES[indices.dtype], _raw_stream(device),
                 device)


def _softmax_topk(logits, k, temperature=1.0, k_per_row=None, logprobs=False, renorm=False,
                  index_dtype=None):
    probs, indices = _layout.topk_outputs(logits, k, temperature, index_dtype)
    _run_topk(logits, k, temperature, k_per_row, logprobs, renorm, probs, indices)
    return probs, indices


def _softmax_topk_out(logits, k, temperature, k_per_row, logprobs, renorm, probs, indices):
    _layout.check_dtype(logits, "logits")
    _, cols, _ = _layout.rows_of(logits, "logits")
    _layout.check_topk_scalars(cols, k, temperature)
    shape = tuple(logits.shape[:-1]) + (k,)
    _layout.check_output(probs, "probs", logits, shape, (torch.float32,), True)
    _layout.check_output(indices, "indices", logits, shape, INDEX_DTYPES, True)
    _run_topk(logits, k, temperature, k_per_row, logprobs, renorm, probs, indices)


# Every check, any strided layout: the Python CUDA kernels, and what the C++ ones call off
# their fast path.
CHECKED_KERNELS = {
    "softmax": lambda x, out_dtype=None: _checked_new(_SOFTMAX, x, out_dtype),
    "softmax_out": lambda x, out: _rowwise_out(_SOFTMAX, x, out),
    "log_softmax": lambda x, out_dtype=None: _checked_new(_LOG_SOFTMAX, x, out_dtype),
    "log_softmax_out": lambda x, out: _rowwise_out(_LOG_SOFTMAX, x, out),
    "reduce_scale": _reduce_scale,
    "reduce_scale_out": lambda x, out, scale=None: _rowwise_out(_REDUCE_SCALE, x, out, scale),
    "softmax_topk": _softmax_topk,
    "softmax_topk_out": _softmax_topk_out,
    "attention": lambda q, k, v, bias=None, mask=None, scale=None, causal=False:
    _attention.attention(q, k, v, bias, mask, scale, causal, _raw_stream),
    "attention_out": lambda q, k, v, bias, mask, scale, causal, out:
    _attention.attention_out(q, k, v, bias, mask, scale, causal, out, _raw_stream),
}

# Without kjit._torch_ops, softmax and log_softmax still run from C++ inside their Python
# kernels (_kjit's torch_fast.cpp), which hands anything off its hot path back to the checked
# kernels here.
_kjit._torch_setup(torch, _raw_stream, _checked_new, _rowwise_out)
CUDA_KERNELS = dict(
    CHECKED_KERNELS,
    softmax=_kjit._torch_softmax,
    softmax_out=_kjit._torch_softmax_out,
    log_softmax=_kjit._torch_log_softmax,
    log_softmax_out=_kjit._torch_log_softmax_out,
)


def _register_native():
    """Registers kjit._torch_ops's C++ CUDA kernels; returns (the ops they took, None), or
    (no ops, why not). A module that is there but does not load or register warns."""
    if os.environ.get("KJIT_TORCH_NATIVE", "1") == "0":
        return frozenset(), "KJIT_TORCH_NATIVE=0"
    if torch.version.cuda is None:  # the module links torch's CUDA libraries: do not load it
        return frozenset(), f"torch {torch.__version__} is built without CUDA"
    try:
        native = importlib.import_module("kjit._torch_ops")
    except ModuleNotFoundError as error:
        if error.name != "kjit._torch_ops":
            raise
        return frozenset(), ("kjit._torch_ops is not built for this Python (it is built where "
                             "the build's Python imports torch with CUDA: pip install "
                             "--no-build-isolation)")
    except ImportError as error:
        reason = f"kjit._torch_ops does not load ({error})"
    else:
        try:
            return frozenset(native._register(_kjit._native_api(), CHECKED_KERNELS)), None
        except Exception as error:  # noqa: BLE001  (the Python kernels still work)
            reason = f"kjit._torch_ops does not register ({type(error).__name__}: {error})"
    warnings.warn(f"kjit.torch: {reason}; the ops keep their Python kernels", RuntimeWarning,
                  stacklevel=2)
    return frozenset(), reason


NATIVE_OPS, NATIVE_REASON = _register_native()


def _fake_rowwise_out(x, out, scale=None) -> None:
    _layout.check_dtype(x, "x")
    _layout.rows_of(x, "x")
    _layout.check_output(out, "out", x, x.shape, FLOATS, False)
    if scale is not None:
        _layout.check_output(scale, "scale", x, _layout.scale_shape(x), (torch.float32,), True)


def _fake_reduce_scale(x, out_dtype=None):
    out = _layout.rowwise_output(x, out_dtype)
    return out, torch.empty(_layout.scale_shape(x), dtype=torch.float32, device=x.device)


def _fake_softmax_topk_out(logits, k, temperature, k_per_row, logprobs, renorm, probs, indices):
    _layout.check_dtype(logits, "logits")
    rows, cols, _ = _layout.rows_of(logits, "logits")
    _layout.check_topk_scalars(cols, k, temperature)
    _layout.check_k_per_row(k_per_row, logits, rows)
    shape = tuple(logits.shape[:-1]) + (k,)
    _layout.check_output(probs, "probs", logits, shape, (torch.float32,), True)
    _layout.check_output(indices, "indices", logits, shape, INDEX_DTYPES, True)


FAKE_KERNELS = {
    "softmax": lambda x, out_dtype=None: _layout.rowwise_output(x, out_dtype),
    "softmax_out": _fake_rowwise_out,
    "log_softmax": lambda x, out_dtype=None: _layout.rowwise_output(x, out_dtype),
    "log_softmax_out": _fake_rowwise_out,
    "reduce_scale": _fake_reduce_scale,
    "reduce_scale_out": _fake_rowwise_out,
    "softmax_topk": lambda logits, k, temperature=1.0, k_per_row=None, logprobs=False,
    renorm=False, index_dtype=None: _layout.topk_outputs(logits, k, temperature, index_dtype),
    "softmax_topk_out": _fake_softmax_topk_out,
    "attention": lambda q, k, v, bias=None, mask=None, scale=None, causal=False:
    _attention.new_output(q, k, v, bias, mask, scale),
    "attention_out": _attention.fake_attention_out,
}


def _not_on_cuda(name: str):
    argument = ("logits" if name.startswith("softmax_topk") else
                "q" if name.startswith("attention") else "x")

    def kernel(*args, **kwargs):
        device = args[0].device if args and isinstance(args[0], torch.Tensor) else "?"
        reject(argument, f"kjit.{name} runs on CUDA tensors, and this one is on {device}")

    return kernel


for _name in SCHEMAS:
    if _name not in NATIVE_OPS:
        lib.impl(_name, CUDA_KERNELS[_name], "CUDA")
    lib.impl(_name, _not_on_cuda(_name), "CPU")
    torch.library.register_fake(f"kjit::{_name}", FAKE_KERNELS[_name], lib=lib)
