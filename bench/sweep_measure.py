# SPDX-License-Identifier: Apache-2.0
"""One shape of the sweep on the GPU: buffers laid out as the shape says, kjit's first call,
its result checked, then kjit and torch timed on the same tensors (sweep_shapes.py)."""
import re
import time

import torch

from rowwise_ctypes import torch_op
from sweep_draw import SIZE, call_pack
from torch_timing import graph_time_us, keeping_outputs, launches_for

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
BITS = {2: torch.int16, 4: torch.int32}
INPUT_SCALE = 3.0  # normal(0, 3), as compare_torch.py
SENTINEL = -4242.0  # what the output buffers hold before the call: untouched outside the view
REPLAY_US = 2000.0  # one graph replay of a few ms: long beside the event resolution
MAX_LAUNCHES = 4096
CHECK_CHUNK = 1 << 23  # elements checked at a time (float64 temporaries of 64 MB each)
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


def reference(op, x):
    """op(x) in x's dtype (float64 for the check); reduce_scale keeps a row of zeros zero, as
    kjit does, where x / 0 would give NaN."""
    if op != "reduce_scale":
        return torch_op(op)(x)
    scale = x.abs().amax(-1, keepdim=True)
    return torch.where(scale > 0, x / scale, torch.zeros_like(x))


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


def compare_in_float64(op, x, y):
    """Elements of kjit's y off a float64 reference of op(x) by more than allowed_error, over
    the whole tensor, chunk by chunk of rows; and the first of them."""
    rows, cols = x.shape
    step = max(1, CHECK_CHUNK // cols)
    bad, example = 0, None
    for r0 in range(0, rows, step):
        want = reference(op, x[r0:r0 + step].double())
        got = y[r0:r0 + step].double()
        mask = ~((got - want).abs() <= allowed_error(op, y.dtype, want))
        count = int(mask.sum().item())
        if count and example is None:
            example = first_bad(mask, got, want, lambda row: row + r0)
        bad += count
    return bad, example


def check(case, op, buffers):
    """FAIL with the problems when kjit wrote outside the output tensor or a wrong value."""
    outside = buffers.writes_outside()
    if outside:
        case["problems"].append(f"{outside} elements written outside the output tensor")
    bad, example = compare_in_float64(op, buffers.xs[0], buffers.ys[0])
    if bad:
        case["problems"].append(f"{bad} of {buffers.xs[0].numel()} elements off the float64 "
                                f"reference (first: {example})")
    case["check"] = "FAIL" if case["problems"] else "ok"


def time_calls(enqueue, sets):
    launches = launches_for(enqueue, REPLAY_US, sets, max(sets, MAX_LAUNCHES))
    return graph_time_us(enqueue, launches)


_kernels = {}  # dispatch key -> the kernel its first call compiled


def kernel_of(new_lines, case):
    """The kernel of the call: the one its first call compiled (a "compiling" log line), else the
    one an earlier call with the same dispatch key compiled (op, dtypes, cols, rows bucket, pack:
    kjit's dispatch table key), else None (a kernel another key compiled first)."""
    key = (case["op"], case["in"], case["out"], case["cols"], (case["rows"] - 1).bit_length(),
           case["pack"])
    compiled = [m.group(1) for _, text in new_lines for m in [COMPILING.search(text)] if m]
    if compiled:
        _kernels[key] = compiled[-1]
    return _kernels.get(key)


def measure(kjit, shape, copy_bw):
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
    case["kernel"] = kernel_of(kjit.log_lines[lines_before:], case)
    check(case, op, buffers)
    if case["check"] != "ok":
        return case
    sets = buffers.sets
    case["kjit_us"] = time_calls(lambda i: kjit.run(op, buffers.xs[i % sets], buffers.ys[i % sets]),
                                 sets)
    reference_op = torch_op(op, out_dtype)
    try:
        torch_call = keeping_outputs(lambda i: reference_op(buffers.xs[i % sets]), sets)
        case["torch_us"] = time_calls(torch_call, sets)
    except RuntimeError as e:  # the baseline failing says nothing about kjit
        case["notes"].append(f"torch not timed: {e}")
        return case
    # Anything else kjit said meanwhile (e.g. that ring launches ran out of row-claim counters).
    case["notes"] += [text for _, text in kjit.log_lines[lines_before:]
                      if not COMPILING.search(text)]
    case["gbps"] = shape.touched_bytes / (case["kjit_us"] * 1e3)
    case["pct_copy"] = 100 * case["gbps"] * 1e9 / copy_bw
    case["ratio"] = case["torch_us"] / case["kjit_us"]
    return case
