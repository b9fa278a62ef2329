# SPDX-License-Identifier: Apache-2.0
"""kjit's row-wise ops (softmax, log_softmax, reduce_scale) through the C API on torch tensors,
and what torch runs for each, for the benchmarks that put them side by side (compare_torch.py,
sweep_shapes.py)."""
import ctypes
import json

import torch

from torch_timing import DTYPES, KjitLib, current_stream_handle

OPS = ("softmax", "log_softmax", "reduce_scale")
DTYPE_NAMES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
EXPLAIN_CAPACITY = 1 << 16


class KjitRowwise(KjitLib):
    def __init__(self, path, configure=None):
        super().__init__(path, configure)
        i64, vp = ctypes.c_int64, ctypes.c_void_p
        row_args = [vp, vp, i64, vp, i64, i64, i64, ctypes.c_int, ctypes.c_int, vp]
        self.lib.kjit_softmax.argtypes = row_args
        self.lib.kjit_log_softmax.argtypes = row_args
        self.lib.kjit_reduce_scale.argtypes = [vp, vp, i64, vp, i64, vp, i64, i64,
                                               ctypes.c_int, ctypes.c_int, vp]

    def run(self, op, x, out, scale=None):
        """out = op(x) on torch's current stream; x and out are 2-D with unit column stride, any
        row stride and offset. reduce_scale writes max|x| per row to `scale` when given."""
        stream = current_stream_handle()
        rows, cols = x.shape
        dt_in, dt_out = DTYPES[x.dtype], DTYPES[out.dtype]
        if op == "reduce_scale":
            self.check(self.lib.kjit_reduce_scale(
                self.rt, x.data_ptr(), x.stride(0), out.data_ptr(), out.stride(0),
                scale.data_ptr() if scale is not None else None, rows, cols, dt_in, dt_out, stream))
        else:
            fn = self.lib.kjit_softmax if op == "softmax" else self.lib.kjit_log_softmax
            self.check(fn(self.rt, x.data_ptr(), x.stride(0), out.data_ptr(), out.stride(0),
                          rows, cols, dt_in, dt_out, stream))

    def explain(self, op, in_dtype, out_dtype, rows, cols):
        """kjit_explain's report (kernel, config, registers, ...) for the call on contiguous,
        16-byte aligned buffers: the C API describes a call without its pointers and strides."""
        fn = self.lib.kjit_explain
        fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                       ctypes.POINTER(ctypes.c_size_t)]
        call = json.dumps({"op": op, "dtype": in_dtype, "out_dtype": out_dtype, "rows": rows,
                           "cols": cols}).encode()
        report = ctypes.create_string_buffer(EXPLAIN_CAPACITY)
        length = ctypes.c_size_t()
        self.check(fn(self.rt, call, report, EXPLAIN_CAPACITY, ctypes.byref(length)))
        if length.value >= EXPLAIN_CAPACITY:
            report = ctypes.create_string_buffer(length.value + 1)
            self.check(fn(self.rt, call, report, length.value + 1, ctypes.byref(length)))
        return json.loads(report.value.decode())


def torch_op(op, out_dtype=None):
    """What a torch user writes for `op` with outputs of out_dtype (default: the input's):
    torch.softmax / torch.log_softmax (with dtype=float32 for a 16-bit input and fp32 output),
    and x / x.abs().amax(-1, keepdim=True) for reduce_scale."""
    if op in ("softmax", "log_softmax"):
        fn = torch.softmax if op == "softmax" else torch.log_softmax

        def run(x):
            if out_dtype is None or out_dtype == x.dtype:
                return fn(x, -1)
            if out_dtype == torch.float32:
                return fn(x, -1, dtype=torch.float32)
            return fn(x, -1, dtype=torch.float32).to(out_dtype)
        return run

    def scaled(x):
        if out_dtype is None or out_dtype == x.dtype:
            return x / x.abs().amax(-1, keepdim=True)
        if out_dtype == torch.float32:  # a bf16/f16 tensor over an fp32 one promotes to fp32
            return x / x.abs().amax(-1, keepdim=True).float()
        return (x.float() / x.abs().amax(-1, keepdim=True).float()).to(out_dtype)
    return scaled
