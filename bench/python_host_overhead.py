#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Host time of one eager call of torch.ops.kjit.softmax beside torch.softmax on the same small
tensor, in one process, and the GPU time of each inside a CUDA graph (kjit's also through the C
API when a libkjit is given). Where kjit._torch_ops is built the op runs its C++ kernel; the
Python kernel kjit.torch falls back to is timed beside it, registered under a second namespace
(torch.ops.kjit_python) with the same schema.

Host time: batches of calls, no synchronization inside a batch, the sides alternating batch by
batch so that the host's drift falls on both; the median batch's time per call. The tensor is
small enough that the GPU keeps up, so the batch time is the host's.

usage: python_host_overhead.py [--shape 8x1000] [--batches 200] [--libkjit PATH] [--json FILE]
"""
import argparse
import ctypes
import json
import statistics
import sys
import time

import torch

import kjit
import kjit.torch  # noqa: F401  (registers torch.ops.kjit)
from torch_timing import current_stream_handle, graph_time_us

BATCH = 100


def host_us_per_call(sides, batches):
    """{name: median per-call microseconds} over alternating batches of BATCH calls."""
    times = {name: [] for name in sides}
    for _ in range(batches):
        for name, call in sides.items():
            start = time.perf_counter_ns()
            for _ in range(BATCH):
                call()
            times[name].append((time.perf_counter_ns() - start) / 1e3 / BATCH)
        torch.cuda.synchronize()
    return {name: statistics.median(t) for name, t in times.items()}


def c_api_softmax(path, x, out):
    """kjit_softmax through ctypes on the same tensors, for the graph timing."""
    lib = ctypes.CDLL(path)
    rt = ctypes.c_void_p()
    assert lib.kjit_runtime_create(ctypes.byref(rt)) == 0
    i64, vp = ctypes.c_int64, ctypes.c_void_p
    lib.kjit_softmax.argtypes = [vp, vp, i64, vp, i64, i64, i64, ctypes.c_int, ctypes.c_int, vp]
    rows, cols = x.shape
    return lambda: lib.kjit_softmax(rt, x.data_ptr(), cols, out.data_ptr(), cols, rows, cols, 0,
                                    0, current_stream_handle())


def python_kernel_softmax():
    """softmax with kjit.torch's Python CUDA kernel (what torch.ops.kjit.softmax runs without
    kjit._torch_ops): the library (keep it alive) and the op."""
    from kjit.torch import _library
    lib = torch.library.Library("kjit_python", "DEF")
    lib.define(_library.SCHEMAS["softmax"])
    lib.impl("softmax", _library.CUDA_KERNELS["softmax"], "CUDA")
    return lib, torch.ops.kjit_python.softmax.default


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="8x1000", help="ROWSxCOLS, fp32")
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--libkjit", help="libkjit.so, to time the C API in a graph too")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    rows, cols = (int(v) for v in args.shape.split("x"))
    x = torch.randn(rows, cols, device="cuda")
    out = torch.empty_like(x)
    softmax, softmax_out = torch.ops.kjit.softmax.default, torch.ops.kjit.softmax_out.default
    torch.testing.assert_close(softmax(x), torch.softmax(x, -1))

    native = kjit.torch.native_ops
    op_name = f"torch.ops.kjit.softmax ({'C++' if native else 'Python'} kernel)"
    sides = {
        "torch.softmax": lambda: torch.softmax(x, -1),
        op_name: lambda: softmax(x),
        "torch.ops.kjit.softmax_out": lambda: softmax_out(x, out),
        "kjit.softmax (DLPack)": lambda: kjit.softmax(x, out),
    }
    if native:
        _keep, python_softmax = python_kernel_softmax()
        torch.testing.assert_close(python_softmax(x), softmax(x), rtol=0, atol=0)
        sides["torch.ops.kjit_python.softmax (Python kernel)"] = lambda: python_softmax(x)
    host = host_us_per_call(sides, args.batches)
    gpu = {
        "torch.softmax": graph_time_us(lambda i: torch.softmax(x, -1, out=None), 20),
        "torch.ops.kjit.softmax_out": graph_time_us(lambda i: softmax_out(x, out), 20),
    }
    if args.libkjit:
        c_call = c_api_softmax(args.libkjit, x, out)
        gpu["kjit_softmax (C API)"] = graph_time_us(lambda i: c_call(), 20)

    print(f"fp32 {rows}x{cols} on {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"kjit {kjit.__version__}, torch.ops.kjit's CUDA kernels in "
          f"{'C++ (kjit._torch_ops)' if native else 'Python: ' + str(kjit.torch.native_ops_reason)}\n")
    print("| call | host us / call (eager) | GPU us / launch (in a graph) |")
    print("| --- | ---: | ---: |")
    for name in list(host) + [n for n in gpu if n not in host]:
        h, g = host.get(name), gpu.get(name)
        print(f"| {name} | {'-' if h is None else f'{h:.2f}'} | {'-' if g is None else f'{g:.2f}'} |")
    verdict = host[op_name] <= host["torch.softmax"]
    print(f"\ntarget (torch.ops.kjit.softmax host time <= torch.softmax's): "
          f"{'met' if verdict else 'not met'} ({host[op_name]:.2f} against "
          f"{host['torch.softmax']:.2f} us)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"shape": [rows, cols], "device": torch.cuda.get_device_name(),
                       "torch": torch.__version__, "native_ops": native, "host_us": host,
                       "graph_gpu_us": gpu,
                       "target_met": verdict}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
