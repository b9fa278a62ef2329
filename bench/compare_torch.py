#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kjit beside torch on the same tensors, in the same process, on the GPU.

Calls libkjit's C API through ctypes on torch tensors; checks each result against torch in
float64, then times kjit and torch the same way: many launches captured in one CUDA graph,
replayed; median of CUDA-event timings; input buffers rotate over more than twice the L2, and so
do the outputs (torch's are kept alive over as many launches: torch_timing.keeping_outputs).

usage: compare_torch.py LIBKJIT.so [--out FILE.md] [--json FILE.json] [--quick] [--only OP]
"""
import argparse
import datetime
import json
import sys

import torch

from rowwise_ctypes import KjitRowwise, torch_op
from torch_timing import WORKING_SET, copy_bandwidth, graph_time_us, keeping_outputs

SHAPES = [(65536, 128), (16384, 1024), (8192, 4096), (2048, 16384), (1024, 32000),
          (512, 65536), (64, 262144), (1, 32000), (1, 128256), (1, 151936), (8, 128256),
          (64, 128256), (32, 262144), (64, 151936)]
REDUCE_SCALE_SHAPES = [(65536, 1024), (442368, 128)]


def max_error(op, x, out):
    ref = torch_op(op)(x.double())
    got = out.double()
    finite = torch.isfinite(ref)
    if not torch.equal(torch.isnan(ref), torch.isnan(got)):
        return float("inf")
    return (got[finite] - ref[finite]).abs().max().item() if finite.any() else 0.0


def bench_case(kjit, op, dtype, rows, cols, copy_bw):
    elements = rows * cols
    bytes_moved = elements * 2 * torch.tensor([], dtype=dtype).element_size()
    sets = max(1, min(64, WORKING_SET // bytes_moved + 1))
    xs = [torch.randn(rows, cols, device="cuda", dtype=dtype) * 3 for _ in range(sets)]
    outs = [torch.empty_like(x) for x in xs]
    scales = [torch.empty(rows, device="cuda") for _ in range(sets)]
    outs[0].fill_(float("nan"))
    kjit.run(op, xs[0], outs[0], scales[0])
    torch.cuda.synchronize()
    err = max_error(op, xs[0], outs[0])
    count = max(20, sets)
    kjit_us = graph_time_us(lambda i: kjit.run(op, xs[i % sets], outs[i % sets], scales[i % sets]), count)
    reference = torch_op(op)
    torch_us = graph_time_us(keeping_outputs(lambda i: reference(xs[i % sets]), sets), count)
    gbps = bytes_moved / (kjit_us * 1e3)
    return {"op": op, "dtype": str(dtype).replace("torch.", ""), "shape": f"{rows}x{cols}",
            "rows": rows, "cols": cols, "kjit_us": kjit_us, "gbps": gbps, "pct_copy": 100 * gbps * 1e9 / copy_bw,
            "torch_us": torch_us, "speedup": torch_us / kjit_us, "max_err": err}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lib")
    parser.add_argument("--out", help="write the markdown table here")
    parser.add_argument("--json", help="write the results here as JSON (bench/results_report.py reads it)")
    parser.add_argument("--quick", action="store_true", help="skip log_softmax")
    parser.add_argument("--only", help="run only this op")
    args = parser.parse_args()
    kjit = KjitRowwise(args.lib)
    copy_bw = copy_bandwidth()
    device = torch.cuda.get_device_name()
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "device": device, "copy_gbps": copy_bw / 1e9, "torch": torch.__version__}
    results = []
    lines = [f"device: {device}; copy bandwidth {copy_bw / 1e9:.0f} GB/s (read + write); "
             f"torch {torch.__version__}", "",
             "| op | dtype | shape | kjit us | GB/s | % copy | torch us | speedup | max err |",
             "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    cases = [(op, dt, r, c) for op in ("softmax", "log_softmax")
             for dt in (torch.float32, torch.bfloat16) for r, c in SHAPES]
    cases += [("reduce_scale", dt, r, c) for dt in (torch.float32, torch.bfloat16)
              for r, c in REDUCE_SCALE_SHAPES]
    if args.quick:
        cases = [c for c in cases if c[0] != "log_softmax"]
    if args.only:
        cases = [c for c in cases if c[0] == args.only]
    for op, dtype, rows, cols in cases:
        r = bench_case(kjit, op, dtype, rows, cols, copy_bw)
        results.append(r)
        if args.json:  # rewritten after every case, so a run that dies part way keeps what it measured
            with open(args.json, "w") as f:
                json.dump({**meta, "results": results}, f, indent=1)
                f.write("\n")
        line = (f"| {r['op']} | {r['dtype']} | {r['shape']} | {r['kjit_us']:.2f} | {r['gbps']:.0f} | "
                f"{r['pct_copy']:.1f} | {r['torch_us']:.2f} | {r['speedup']:.2f}x | {r['max_err']:.1e} |")
        lines.append(line)
        print(line, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
