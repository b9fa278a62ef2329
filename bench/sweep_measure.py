# SPDX-License-Identifier: Apache-2.0
"""One shape of the sweep on the GPU: buffers laid out as the shape says, kjit's first call,
its result checked, then kjit and torch timed on the same tensors (sweep_shapes.py)."""
import random
import re
import time

import torch

from rowwise_ctypes import torch_op
from sweep_draw import SIZE, call_pack
from torch_timing import graph_time_us, launches_for

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
BITS = {2: torch.int16, 4: torch.int32}
INPUT_SCALE = 3.0  # normal(0, 3), as compare_torch.py
SENTINEL = -4242.0  # what the output buffers hold before the call: untouched outside the view
REPLAY_US = 2000.0  # one graph replay of a few ms: long beside the event resolution
MAX_LAUNCHES = 4096
CHECK_CHUNK = 1 << 24  # elements of the output compared with torch at a time
REFERENCE_ELEMENTS = 1 << 21  # elements of the rows checked in float64
TORCH_RTOL = 2e-4
MANTISSA_BITS = {torch.bfloat16: 7, torch.float16: 10}
DEVICE = "cuda"
COMPILING = re.compile(r"compiling (.+) for sm_\d+")


def allowed_error(op, dtype, ref):
    """How far an output of `dtype` may be from `ref`, element by element: fp32 1e-6 + 1e-5|ref|
    (log_softmax 1e-5 + 1e-6|ref|), 16-bit about one ulp of the value or the fp32 bound, as the
    C++ suites' check_element (tests/support/reference.h)."""
    size = ref.abs()
    bound = 1e-5 + 1e-6 * size if op == "log_softmax" else 1e-6 + 1e-5 * size
    if dtype in MANTISSA_BITS:
        bound = torch.maximum(bound, 1.5 * 2.0 ** -MANTISSA_BITS[dtype] * size + 2.0 ** -24)
    return bound


def reference(op, x, out_dtype=None):
    """op(x) with outputs of out_dtype (default: x's; float64 for the exact check), as torch
    computes it; reduce_scale in fp32 (float64 for float64) and a row of zeros kept zero, as kjit
    does, where x / 0 would give NaN."""
    if op != "reduce_scale":
        return torch_op(op, out_dtype)(x)
    wide = x.to(torch.float64 if x.dtype == torch.float64 else torch.float32)
    scale = wide.abs().amax(-1, keepdim=True)
    result = torch.where(scale > 0, wide / scale, torch.zeros_like(wide))
    return result.to(out_dtype or x.dtype)


class Buffers:
    """One allocation a side, holding `sets` copies of the shape's rows at its stride and offset."""

    def __init__(self, shape):
        self.shape = shape
        self.sets = shape.sets
        rows, cols = shape["rows"], shape["cols"]
        self.span_in, self.span_out = shape.span("in"), shape.span("out")
        dt_in, dt_out = TORCH_DTYPES[shape["in"]], TORCH_DTYPES[shape["out"]]
        self.x = torch.empty(self.sets * self.span_in, dtype=dt_in, device=DEVICE)
        self.x.normal_(0.0, INPUT_SCALE)
        self.y = torch.full((self.sets * self.span_out,), SENTINEL, dtype=dt_out, device=DEVICE)
        self.sentinel_bits = self.y[:1].view(BITS[SIZE[shape["out"]]]).item()
        self.xs = [self.x.as_strided((rows, cols), (shape["in_stride"], 1),
                                     s * self.span_in + shape["in_offset"]) for s in range(self.sets)]
        self.ys = [self.y.as_strided((rows, cols), (shape["out_stride"], 1),
                                     s * self.span_out + shape["out_offset"])
                   for s in range(self.sets)]

    def pack(self):
        s = self.shape
        return call_pack(s["in"], s["out"], s["rows"], self.xs[0].data_ptr(), self.ys[0].data_ptr(),
                         s["in_stride"], s["out_stride"])

    def writes_outside(self):
        """Output elements outside the first copy's view that no longer hold the sentinel."""
        s = self.shape
        bits = self.y.view(BITS[SIZE[s["out"]]])
        start, stride, rows, cols = s["out_offset"], s["out_stride"], s["rows"], s["cols"]
        end = start + rows * stride
        pieces = [bits[:start], bits[end:], bits[start:end].view(rows, stride)[:, cols:]]
        return sum(int((p != self.sentinel_bits).sum().item()) for p in pieces if p.numel())


def first_bad(mask, got, want, row_of=lambda row: row):
    """The first mismatch, its row numbered in the whole tensor by row_of."""
    row, col = mask.nonzero()[0].tolist()
    return (f"row {row_of(row)} col {col}: got {got[row, col].item():.6g}, want "
            f"{want[row, col].item():.6g}")


def torch_tolerance(op, dtype, want):
    """Twice the bound (both results are rounded) and 2e-4 of the value (and of 1 for
    log_softmax) for torch's own error: its fp32 sum over a row of a million elements can be off
    by 1e-4. Broken rows, shifts or stale data are off by far more; the float64 check holds kjit
    to the bound itself."""
    slack = want.abs() + (1.0 if op == "log_softmax" else 0.0)
    return 2 * allowed_error(op, dtype, want) + TORCH_RTOL * slack


def compare_with_torch(op, x, y):
    """Mismatches of kjit's y against torch's result on the same x, chunk by chunk of rows."""
    rows, cols = x.shape
    step = max(1, CHECK_CHUNK // cols)
    bad, example = 0, None
    for r0 in range(0, rows, step):
        want = reference(op, x[r0:r0 + step], y.dtype).double()
        got = y[r0:r0 + step].double()
        mask = ~((got - want).abs() <= torch_tolerance(op, y.dtype, want))
        count = int(mask.sum().item())
        if count and example is None:
            example = first_bad(mask, got, want, lambda row: row + r0)
        bad += count
    return bad, example


def compare_in_float64(op, x, y, rng):
    """Mismatches against a float64 reference on the first and last rows and a random sample."""
    rows, cols = x.shape
    wanted = max(1, REFERENCE_ELEMENTS // cols)
    picked = sorted({0, rows - 1} | set(rng.sample(range(rows), min(rows, wanted))))
    index = torch.tensor(picked, device=DEVICE)
    want = reference(op, x.index_select(0, index).double())
    got = y.index_select(0, index).double()
    mask = ~((got - want).abs() <= allowed_error(op, y.dtype, want))
    count = int(mask.sum().item())
    example = first_bad(mask, got, want, picked.__getitem__) if count else None
    return count, example, len(picked)


def check(case, op, buffers, seed):
    x, y = buffers.xs[0], buffers.ys[0]
    outside = buffers.writes_outside()
    if outside:
        case["problems"].append(f"{outside} elements written outside the output tensor")
    bad, example = compare_with_torch(op, x, y)
    if bad:
        case["problems"].append(f"{bad} elements differ from torch's (first: {example})")
    bad, example, rows = compare_in_float64(op, x, y, random.Random(seed))
    if bad:
        case["problems"].append(f"{bad} elements of {rows} rows differ from float64 (first: "
                                f"{example})")
    case["check"] = "FAIL" if case["problems"] else "ok"


def time_calls(enqueue, sets):
    launches = launches_for(enqueue, REPLAY_US, sets, max(sets, MAX_LAUNCHES))
    return graph_time_us(enqueue, launches)


def measure(kjit, shape, copy_bw, seed):
    """The shape's case: the shape's fields plus pack, first_call_ms, kernel, check, problems,
    kjit_us, torch_us, gbps, pct_copy, ratio (torch_us / kjit_us)."""
    case = dict(shape, check="ERROR", problems=[], notes=[], elements=shape.elements,
                target_class=shape.target_class)
    op, out_dtype = shape["op"], TORCH_DTYPES[shape["out"]]
    buffers = Buffers(shape)
    case["pack"] = buffers.pack()
    lines_before = len(kjit.log_lines)
    torch.cuda.synchronize()
    start = time.perf_counter()
    kjit.run(op, buffers.xs[0], buffers.ys[0])
    torch.cuda.synchronize()
    case["first_call_ms"] = (time.perf_counter() - start) * 1e3
    compiled = [m.group(1) for _, text in kjit.log_lines[lines_before:]
                for m in [COMPILING.search(text)] if m]
    case["kernel"] = compiled[-1] if compiled else None
    check(case, op, buffers, seed)
    if case["check"] != "ok":
        return case
    sets = buffers.sets
    case["kjit_us"] = time_calls(lambda i: kjit.run(op, buffers.xs[i % sets], buffers.ys[i % sets]),
                                 sets)
    reference_op = torch_op(op, out_dtype)
    try:
        case["torch_us"] = time_calls(lambda i: reference_op(buffers.xs[i % sets]), sets)
    except RuntimeError as e:  # the baseline failing says nothing about kjit
        case["notes"].append(f"torch not timed: {e}")
        return case
    case["gbps"] = shape.touched_bytes / (case["kjit_us"] * 1e3)
    case["pct_copy"] = 100 * case["gbps"] * 1e9 / copy_bw
    case["ratio"] = case["torch_us"] / case["kjit_us"]
    return case
