# SPDX-License-Identifier: Apache-2.0
"""warmup(): compile and load, before a CUDA graph capture, the kernels a list of calls needs.
Inside a capture kjit never tunes, and a kernel loaded there would load in the middle of the
captured work; warmed up, every captured call is one launch."""
import math

import torch

from .._runtime import default_runtime

_OPS = ("softmax", "log_softmax", "reduce_scale", "softmax_topk")


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
    call["rows"], call["cols"] = math.prod(shape[:-1]), shape[-1]
    call.setdefault("dtype", torch.float32)
    return call


def warmup(calls, device=None) -> list:
    """Prepares each call on ``device`` (default: torch's current device): kernels compiled or
    read from the caches, and loaded. A call is ``(op, shape, dtype[, options])`` such as
    ``("softmax_topk", (8, 128256), torch.float32, {"k": 50})``, a dict with the same keys
    (op, shape, dtype, out_dtype, k, index_dtype), or an example tensor in place of the shape.
    Returns what each call got (kernel, config, registers, compile time)."""
    if device is None:
        device = torch.cuda.current_device()
    elif not isinstance(device, int):
        device = torch.device(device).index or 0
    return [default_runtime().prepare(device=device, **_as_call(item)) for item in calls]
