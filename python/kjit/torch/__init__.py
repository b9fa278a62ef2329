# SPDX-License-Identifier: Apache-2.0
"""kjit's ops as torch ops: importing kjit.torch registers torch.ops.kjit.*

    torch.ops.kjit.softmax(x, out_dtype=None) -> Tensor
    torch.ops.kjit.log_softmax(x, out_dtype=None) -> Tensor
    torch.ops.kjit.reduce_scale(x, out_dtype=None) -> (out, scale)
    torch.ops.kjit.softmax_topk(logits, k, temperature=1.0, k_per_row=None, logprobs=False,
                                renorm=False, index_dtype=None) -> (probs, indices)
    torch.ops.kjit.attention(q, k, v, bias=None, mask=None, scale=None, causal=False) -> Tensor
    and softmax_out(x, out), log_softmax_out, reduce_scale_out(x, out, scale=None),
    softmax_topk_out(logits, k, temperature, k_per_row, logprobs, renorm, probs, indices),
    attention_out(q, k, v, bias, mask, scale, causal, out).

They run on CUDA tensors, on torch's current stream, in the tensor's device, through the
default runtime; torch.compile(fullgraph=True) traces them (fake kernels allocate what the
real ones do) and CUDA graphs capture them (call warmup() first). The ops carry no autograd
kernel (it would cost every eager call); kjit.torch.softmax and log_softmax below are
differentiable.

native_ops is True where the CUDA kernels are kjit._torch_ops's C++ ones (torch's dispatcher
calls the launch with no Python in between), False where they are Python kernels (that module
was not built, KJIT_TORCH_NATIVE=0, or it failed to load: native_ops_reason says which). Both
give the same results and raise the same errors. attention has Python kernels only."""
import torch

from . import _library  # noqa: F401  (registration happens at import)
from ._autograd import LogSoftmax, Softmax, wants_grad  # noqa: E402  (after _library: it uses the ops)
from ._warmup import warmup

__all__ = ["softmax", "log_softmax", "reduce_scale", "softmax_topk", "attention", "warmup",
           "native_ops", "native_ops_reason"]

_ops = torch.ops.kjit
native_ops: bool = bool(_library.NATIVE_OPS)
native_ops_reason = _library.NATIVE_REASON


def softmax(x, out=None, *, out_dtype=None):
    """softmax along the last dimension; into ``out`` when given. Differentiable."""
    if out is None:
        if wants_grad(x):
            return Softmax.apply(x, out_dtype)
        return _ops.softmax.default(x, out_dtype)
    _ops.softmax_out.default(x, out)
    return out


def log_softmax(x, out=None, *, out_dtype=None):
    """log_softmax along the last dimension; into ``out`` when given. Differentiable."""
    if out is None:
        if wants_grad(x):
            return LogSoftmax.apply(x, out_dtype)
        return _ops.log_softmax.default(x, out_dtype)
    _ops.log_softmax_out.default(x, out)
    return out


def reduce_scale(x, out=None, *, out_dtype=None, scale=None):
    """(x / max|x|, max|x|) along the last dimension; into ``out`` (and ``scale``) when given."""
    if out is None:
        return _ops.reduce_scale.default(x, out_dtype)
    _ops.reduce_scale_out.default(x, out, scale)
    return out, scale


def softmax_topk(logits, k, *, temperature=1.0, k_per_row=None, logprobs=False, renorm=False,
                 index_dtype=None, probs=None, indices=None):
    """(probs, indices) of the k most probable entries of softmax(logits / temperature) along
    the last dimension; into ``probs`` and ``indices`` when both are given."""
    if probs is None and indices is None:
        return _ops.softmax_topk.default(logits, k, temperature, k_per_row, logprobs, renorm,
                                         index_dtype)
    _ops.softmax_topk_out.default(logits, k, temperature, k_per_row, logprobs, renorm, probs,
                                  indices)
    return probs, indices


def attention(q, k, v, *, bias=None, mask=None, scale=None, causal=False, out=None):
    """softmax(q k^T * scale + bias[h] + mask[b % W], causal) v for every batch entry b and
    head h (kjit.attention describes the shapes); into ``out`` when given. Not differentiable."""
    if out is None:
        return _ops.attention.default(q, k, v, bias, mask, scale, causal)
    _ops.attention_out.default(q, k, v, bias, mask, scale, causal, out)
    return out
