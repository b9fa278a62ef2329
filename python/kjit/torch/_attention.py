# SPDX-License-Identifier: Apache-2.0
"""torch.ops.kjit.attention's checks, output and launch: the checks and the allocation are
shared by the CUDA kernel and the fake one, so what torch.compile traces is what runs. The
launch hands kjit raw pointers, strides and torch's raw current stream. Every error names the
argument (the runtime's own checks, of alignment and stride multiples, are renamed the same way
by the extension)."""
import math

import torch

from .. import _kjit
from ._layout import CODES, FLOATS, check_dtype, reject

HALVES = (torch.float16, torch.bfloat16)
_DIMS = (16, 32, 64, 128)
_MAX_TOKENS = 256


def _as_problems(t: torch.Tensor, name: str, ndim: int):
    """(batch, heads, rows, cols) and (batch, head, row) strides of a 4-d or 3-d operand."""
    check_dtype(t, name, HALVES)
    if ndim == 0 and t.dim() not in (3, 4):
        reject(name, "expected a 4-d [batch, heads, tokens, dim] or 3-d [problems, tokens, dim] "
                     f"tensor, got shape {tuple(t.shape)}")
    if ndim and t.dim() != ndim:
        reject(name, f"expected a {ndim}-d tensor like q, got shape {tuple(t.shape)}")
    if t.numel() and t.shape[-1] > 1 and t.stride(-1) != 1:
        reject(name, f"the last dimension must be contiguous (stride 1), but its stride is "
                     f"{t.stride(-1)}")
    if t.dim() == 4:
        return tuple(t.shape), (t.stride(0), t.stride(1), t.stride(2))
    return (t.shape[0], 1, t.shape[1], t.shape[2]), (t.stride(0), 0, t.stride(1))


def _tokens(count: int, name: str, what: str) -> None:
    if not 1 <= count <= _MAX_TOKENS:
        reject(name, f"{what} (dimension -2) must be in 1..{_MAX_TOKENS} (got {count})")


def _dim(count: int, name: str) -> None:
    if count not in _DIMS:
        reject(name, f"the last dimension must be 16, 32, 64 or 128 (got {count})")


def _addend(t, name: str, expected, like: torch.Tensor):
    """bias [H, M, N] or mask [W, M, N] (``expected`` with None for the free count)."""
    if t is None:
        return 0, (0, 0), 0
    check_dtype(t, name, FLOATS)
    shape = tuple(t.shape)
    if len(shape) != 3 or any(e is not None and s != e for s, e in zip(shape, expected)):
        layout = "[heads, m, n]" if expected[0] is not None else "[windows, m, n]"
        shown = tuple(shape[0] if e is None and len(shape) == 3 else e for e in expected)
        reject(name, f"shape {shape} does not match {layout} = {shown} (from q and k)")
    if shape[0] < 1:
        reject(name, "has no windows (its first dimension is 0)")
    if shape[2] > 1 and t.stride(2) != 1:
        reject(name, f"the last dimension must be contiguous (stride 1), but its stride is "
                     f"{t.stride(2)}")
    if t.device != like.device:
        reject(name, f"is on {t.device}, but q is on {like.device}")
    return shape[0], (t.stride(0), t.stride(1)), CODES[t.dtype]


# Half a unit in the last place above float32's largest value: from here on, it rounds to inf.
_FLOAT32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103


def _finite_in_float32(value: float) -> bool:
    return abs(value) < _FLOAT32_OVERFLOW


def check(q, k, v, bias, mask, scale):
    """Every check but the runtime's; returns what the launch needs."""
    (b, h, m, d), q_strides = _as_problems(q, "q", 0)
    (kb, kh, n, kd), k_strides = _as_problems(k, "k", q.dim())
    (vb, vh, vn, dv), v_strides = _as_problems(v, "v", q.dim())
    if h < 1:
        reject("q", "has no heads (dimension 1 is 0)")
    _tokens(m, "q", "the query count")
    _dim(d, "q")
    for t, name in ((k, "k"), (v, "v")):
        if t.dtype != q.dtype:
            reject(name, f"dtype {str(t.dtype).replace('torch.', '')} differs from q's "
                         f"{str(q.dtype).replace('torch.', '')}")
        if tuple(t.shape[:-2]) != tuple(q.shape[:-2]):
            reject(name, f"shape {tuple(t.shape)} does not match q's {tuple(q.shape)} in its "
                         "leading dimensions")
        if t.device != q.device:
            reject(name, f"is on {t.device}, but q is on {q.device}")
    _tokens(n, "k", "the key count")
    if kd != d:
        reject("k", f"its last dimension ({kd}) differs from q's ({d})")
    if vn != n:
        reject("v", f"has {vn} tokens (dimension -2), but k has {n}")
    _dim(dv, "v")
    heads, bias_strides, bias_code = _addend(bias, "bias", (h, m, n), q)
    windows, mask_strides, mask_code = _addend(mask, "mask", (None, m, n), q)
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    elif not _finite_in_float32(scale):
        reject("scale", f"must be finite in float32 (got {scale})")
    return {"sizes": (b, h, m, n, d, dv, max(windows, 1)),
            "strides": q_strides + k_strides + v_strides,
            "addend_strides": bias_strides + mask_strides,
            "dtypes": (CODES[q.dtype], bias_code, mask_code), "scale": float(scale)}


def output_shape(q, v):
    return tuple(q.shape[:-1]) + (v.shape[-1],)


def new_output(q, k, v, bias, mask, scale):
    """The output the functional op allocates: contiguous, q's shape with v's last dimension."""
    check(q, k, v, bias, mask, scale)
    return torch.empty(output_shape(q, v), dtype=q.dtype, device=q.device)


def check_out(q, v, out) -> tuple:
    check_dtype(out, "out", HALVES)
    if tuple(out.shape) != output_shape(q, v):
        reject("out", f"shape {tuple(out.shape)} does not match {output_shape(q, v)} (q's shape "
                      "with v's last dimension)")
    if out.dtype != q.dtype:
        reject("out", f"dtype {str(out.dtype).replace('torch.', '')} differs from q's "
                      f"{str(q.dtype).replace('torch.', '')}")
    if out.device != q.device:
        reject("out", f"is on {out.device}, but q is on {q.device}")
    return _as_problems(out, "out", q.dim())[1]


_launch = _kjit._launch_attention


def _run_checked(call, q, k, v, bias, mask, causal, out, o_strides, raw_stream) -> None:
    device = q.device.index
    _launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
            0 if bias is None else bias.data_ptr(), 0 if mask is None else mask.data_ptr(),
            call["sizes"], call["strides"] + o_strides + call["addend_strides"], call["dtypes"],
            call["scale"], causal, raw_stream(device), device)


def attention(q, k, v, bias, mask, scale, causal, raw_stream):
    """The functional op's CUDA kernel."""
    call = check(q, k, v, bias, mask, scale)
    out = torch.empty(output_shape(q, v), dtype=q.dtype, device=q.device)
    _run_checked(call, q, k, v, bias, mask, causal, out, _as_problems(out, "out", q.dim())[1],
                 raw_stream)
    return out


def attention_out(q, k, v, bias, mask, scale, causal, out, raw_stream) -> None:
    """The out variant's CUDA kernel."""
    call = check(q, k, v, bias, mask, scale)
    o_strides = check_out(q, v, out)
    _run_checked(call, q, k, v, bias, mask, causal, out, o_strides, raw_stream)


def fake_attention_out(q, k, v, bias, mask, scale, causal, out) -> None:
    check(q, k, v, bias, mask, scale)
    check_out(q, v, out)
