# SPDX-License-Identifier: Apache-2.0
"""warmup(): compile and load, before a CUDA graph capture, the kernels a list of calls needs.
Inside a capture kjit never tunes, and a kernel loaded there would load in the middle of the
captured work; warmed up, every captured call is one launch."""
import math

import torch

from .._runtime import default_runtime

_OPS = ("softmax", "log_softmax", "reduce_scale", "softmax_topk", "attention")


def _attention_sizes(call, shape) -> None:
    """q's shape ([B, H, M, D] or [P, M, D]) as attention's call fields; n defaults to m."""
    if len(shape) not in (3, 4):
        raise ValueError(f"warmup: attention takes q's 3-d or 4-d shape, got {shape}")
    call["batch"], call["heads"] = shape[0], shape[1] if len(shape) == 4 else 1
    call["m"], call["d"] = shape[-2], shape[-1]
    call.setdefault("n", call["m"])


def _as_call(item):
    if isinstance(item, dict):
        call = dict(item)
    else:
        op, shape, *rest = item
        call = {"op": op, "shape": shape}
        if rest and rest[0] is not None:
            call["dtype"] = rest[0]
        if len(rest) > 1:
            call.update(rest[1])
    if call.get("op") not in _OPS:
        raise ValueError(f"warmup: op {call.get('op')!r} is not one of {', '.join(_OPS)}")
    shape = call.pop("shape")
    if isinstance(shape, torch.Tensor):  # an example tensor: its shape and dtype
        call.setdefault("dtype", shape.dtype)
        shape = shape.shape
    shape = tuple(shape)
    if call["op"] == "attention":
        _attention_sizes(call, shape)
        call.setdefault("dtype", torch.float16)
        return call
    call["rows"], call["cols"] = math.prod(shape[:-1]), shape[-1]
    call.setdefault("dtype", torch.float32)
    return call


def warmup(calls, device=None) -> list:
    """Prepares each call on ``device`` (default: torch's current device): kernels compiled or
    read from the caches, and loaded. A call is ``(op, shape, dtype[, options])`` such as
    ``("softmax_topk", (8, 128256), torch.float32, {"k": 50})``, a dict with the same keys
    (op, shape, dtype, out_dtype, k, index_dtype), or an example tensor in place of the shape.
    For attention the shape is q's and the options are its other call fields: ``("attention",
    q, None, {"bias_dtype": torch.float32, "mask_dtype": "f32", "mask_windows": 64})`` (n
    defaults to q's token count, dv to d).
    Returns what each call got (kernel, config, registers, compile time)."""
    if device is None:
        device = torch.cuda.current_device()
    elif not isinstance(device, int):
        device = torch.device(device).index or 0
    return [default_runtime().prepare(device=device, **_as_call(item)) for item in calls]
