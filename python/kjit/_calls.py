# SPDX-License-Identifier: Apache-2.0
"""A call described without arrays, as the tools take it (runtime/op_tools.h): op, dtypes and
sizes, e.g. {"op": "softmax", "dtype": "bf16", "rows": 64, "cols": 4096} or {"op": "attention",
"dtype": "f16", "batch": 4096, "heads": 4, "m": 49, "n": 49, "d": 32, "bias_dtype": "f32"}."""
import json

_NAMES = {
    "float32": "f32", "f32": "f32", "fp32": "f32",
    "float16": "f16", "f16": "f16", "fp16": "f16", "half": "f16",
    "bfloat16": "bf16", "bf16": "bf16",
    "int32": "i32", "i32": "i32",
    "int64": "i64", "i64": "i64",
}


def dtype_name(dtype, argument: str) -> str:
    """'bf16' for 'bf16', 'bfloat16', torch.bfloat16, ... ; errors name ``argument``."""
    text = str(dtype)
    short = text.rsplit(".", 1)[-1].rstrip("'>")
    if short in _NAMES:
        return _NAMES[short]
    from ._errors import InvalidArgumentError

    raise InvalidArgumentError(
        f"{argument}: {text!r} is not a dtype kjit knows (float32, float16, bfloat16, int32, int64)"
    )


# Fields that hold a dtype; "none" (or None) says an optional input is absent.
_DTYPE_FIELDS = ("out_dtype", "index_dtype", "bias_dtype", "mask_dtype")


def call_json(op: str, *, rows=None, cols=None, dtype=None, out_dtype=None, index_dtype=None,
              k=None, **fields) -> str:
    """The JSON text of a call; ``fields`` are any other field of the op's call. What is not
    given takes the op's default (rows 1; dtype f32 for the row-wise ops, f16 for attention)."""
    call = {"op": op}
    if dtype is not None:
        call["dtype"] = dtype_name(dtype, "dtype")
    if rows is not None:
        call["rows"] = rows
    if cols is not None:
        call["cols"] = cols
    if out_dtype is not None:
        call["out_dtype"] = dtype_name(out_dtype, "out_dtype")
    if index_dtype is not None:
        call["index_dtype"] = dtype_name(index_dtype, "index_dtype")
    if k is not None:
        call["k"] = k
    for name, value in fields.items():
        if name in _DTYPE_FIELDS and value is not None and value != "none":
            value = dtype_name(value, name)
        if value is not None:
            call[name] = value
    return json.dumps(call)
