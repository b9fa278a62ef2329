#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kjit's fused softmax + top-K beside torch.topk(torch.softmax(x)) on the same tensors, on the GPU.

Calls kjit_softmax_topk through ctypes on torch tensors; checks each cell's result against torch
once, then times kjit and torch the same way: many launches captured in one CUDA graph, replayed;
median of CUDA-event timings after warm-up; logits rotate over more than twice the L2. The
read-once floor is the time to read the logits once at the copy bandwidth measured in the same run.
Exits 1 when a cell's result is wrong or kjit fails; missed speed targets are reported, not fatal.

usage: compare_topk.py LIBKJIT.so [--out FILE.md] [--json FILE.json] [--quick | --cells V:B:K[:dtype],...]
"""
import argparse
import ctypes
import datetime
import json
import sys

import torch

from torch_timing import (DTYPES, I64, WORKING_SET, KjitLib, copy_bandwidth,
                          current_stream_handle, graph_time_us, launches_for)

VOCABS = (32000, 50257, 128256, 151936)
BATCHES = (1, 8, 64, 256)
KS = (1, 50, 256, 1024)
BF16_VOCABS = (128256,)
# 16-bit logits at many rows: every vocabulary in fp16 and bf16, K up to 256.
HALF_BATCHES = (64, 256)
HALF_KS = (50, 256)
QUICK_CELLS = [(128256, b, k, torch.float32) for b in (1, 8, 256) for k in (50, 1024)]

DEVICE = "cuda"
LOGIT_SCALE = 4.0  # randn * 4: a peaked distribution, like a language model's logits
REPLAY_US = 3000.0  # aim for one graph replay of a few ms: long beside the event resolution
MAX_LAUNCHES = 4096  # bounds capture time and graph size for the fastest cells
# Probabilities match torch's to this relative tolerance. Ranks whose torch probabilities lie
# closer than that to a neighbour's count as tied: their order may legitimately differ.
PROB_RTOL = 1e-4
PROB_ATOL = 1e-12  # far below any top-1024 probability of these inputs (>= ~1e-6)

SPEEDUP_TARGET = 5.0
SMALL_BATCH_TARGET_US = 10.0
FLOOR_TARGET = 1.4
LARGE_K_TARGET = 1.5
HALF_FLOOR_TARGET = 1.5

COLUMNS = ["V", "B", "K", "dtype", "kjit us", "torch us", "speedup", "floor us", "kjit/floor",
           "kjit GB/s", "check"]


class KjitTopk(KjitLib):
    def __init__(self, path):
        super().__init__(path)
        try:
            fn = self.lib.kjit_softmax_topk
        except AttributeError:
            raise SystemExit(f"{path} has no kjit_softmax_topk: a libkjit built before the op?"
                             ) from None
        i64, i32, vp = ctypes.c_int64, ctypes.c_int32, ctypes.c_void_p
        # rt, logits, row_stride, rows, cols, in_dtype, k, k_per_row, temperature, flags,
        # probs_out, idx_out, idx_dtype, stream. Declared so that the temperature goes as a C
        # float (untyped, ctypes would pass a double) and k as a 32-bit int.
        fn.argtypes = [vp, vp, i64, i64, i64, ctypes.c_int, i32, vp, ctypes.c_float,
                       ctypes.c_uint32, vp, vp, ctypes.c_int, vp]
        fn.restype = ctypes.c_int
        self.softmax_topk_fn = fn

    def softmax_topk(self, logits, k, probs, idx):
        """probs [rows, k] fp32, idx [rows, k] int64 <- top-k of softmax(logits), on torch's
        current stream (the capture stream while a graph is being captured)."""
        rows, cols = logits.shape
        assert logits.stride(1) == 1 and probs.is_contiguous() and idx.is_contiguous()
        self.check(self.softmax_topk_fn(
            self.rt, logits.data_ptr(), logits.stride(0), rows, cols, DTYPES[logits.dtype], k,
            None, 1.0, 0, probs.data_ptr(), idx.data_ptr(), I64, current_stream_handle()))


def torch_softmax_topk(x, k):
    return torch.topk(torch.softmax(x, -1, dtype=torch.float32), k, dim=-1, sorted=True)


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def cell_label(cell):
    return f"V={cell['V']} B={cell['B']} K={cell['K']} {cell['dtype']}"


def count(mask):
    return int(mask.sum().item())


def check_topk(x, k, probs, idx):
    """What is wrong with kjit's (probs, idx) for the logits x; empty when nothing is.

    Indices are not compared with torch's one by one: torch.topk picks any of equal values while
    kjit documents ascending index order, bf16 logits tie often, and two fp32 softmaxes may order
    probabilities a rounding apart differently. So the checks are on values rank by rank, on each
    probability against the softmax at its own index, on the order, and on indices only at ranks
    that stand clearly apart from their neighbours in torch's result.
    """
    problems = []
    rows, vocab = x.shape
    nonfinite = ~torch.isfinite(probs)
    if nonfinite.any():
        problems.append(f"{count(nonfinite)} non-finite probabilities")
    outside = (idx < 0) | (idx >= vocab)
    if outside.any():
        # Everything below looks the logits up at kjit's indices.
        problems.append(f"{count(outside)} indices outside [0, {vocab})")
        return problems
    in_order = idx.sort(dim=1).values
    repeated = (in_order[:, 1:] == in_order[:, :-1]).any(dim=1)
    if repeated.any():
        problems.append(f"repeated indices in {count(repeated)} rows")

    # The same probability at every rank as torch: the right set, up to near-ties.
    ref_probs, ref_idx = torch_softmax_topk(x, min(k + 1, vocab))
    close = torch.isclose(probs, ref_probs[:, :k], rtol=PROB_RTOL, atol=PROB_ATOL)
    if not close.all():
        rel = ((probs - ref_probs[:, :k]).abs() / ref_probs[:, :k]).max().item()
        problems.append(f"{count(~close)} probabilities differ from torch's rank by rank "
                        f"(largest relative difference {rel:.1e})")

    # Each probability is the softmax at its own index (in float64).
    own = torch.softmax(x.double(), -1).gather(1, idx)
    close = torch.isclose(probs.double(), own, rtol=PROB_RTOL, atol=PROB_ATOL)
    if not close.all():
        rel = ((probs.double() - own).abs() / own).max().item()
        problems.append(f"{count(~close)} probabilities are not the softmax at their index "
                        f"(largest relative difference {rel:.1e})")

    # Order: probabilities and the logits behind them non-increasing, equal logits in ascending
    # index order. Two logits an ulp or so apart can give the same fp32 probability (exp2 of a
    # rounded product): either order of those is accepted, by logit or by index.
    logits = x.gather(1, idx).float()
    p0, p1 = probs[:, :-1], probs[:, 1:]
    g0, g1 = logits[:, :-1], logits[:, 1:]
    i0, i1 = idx[:, :-1], idx[:, 1:]
    if (p0 < p1).any():
        problems.append(f"{count(p0 < p1)} probabilities above the one before them")
    rising = (g0 < g1) & (p0 != p1)
    if rising.any():
        problems.append(f"{count(rising)} logits above the one before them")
    tie_misordered = (g0 == g1) & (i0 > i1)
    if tie_misordered.any():
        problems.append(f"{count(tie_misordered)} equal logits not in ascending index order")

    # At the cut: logits equal to the last one kept must be kept lowest index first.
    kept = torch.zeros(rows, vocab, dtype=torch.bool, device=x.device).scatter_(1, idx, True)
    at_cut = x == x.gather(1, idx[:, -1:])
    column = torch.arange(vocab, device=x.device)
    last_kept = torch.where(kept & at_cut, column, -1).amax(dim=1, keepdim=True)
    passed_over = at_cut & ~kept & (column < last_kept)
    if passed_over.any():
        problems.append(f"{count(passed_over.any(dim=1))} rows keep a higher index over an equal "
                        f"lower one at the cut")

    # Indices equal torch's wherever torch's probability stands apart from both neighbours.
    apart = (ref_probs[:, :-1] - ref_probs[:, 1:]) > PROB_RTOL * ref_probs[:, :-1]
    edge = torch.ones(rows, 1, dtype=torch.bool, device=x.device)
    apart = torch.cat([edge, apart, edge], dim=1)  # apart[:, j]: rank j-1 vs rank j
    untied = apart[:, :k] & apart[:, 1:k + 1]
    differ = untied & (idx != ref_idx[:, :k])
    if differ.any():
        problems.append(f"{count(differ)} untied ranks with another index than torch's")
    return problems


def time_launches(enqueue, copies):
    """Per-launch microseconds of enqueue over the rotating inputs (at least one pass over all)."""
    launches = launches_for(enqueue, REPLAY_US, copies, max(copies, MAX_LAUNCHES))
    return graph_time_us(enqueue, launches)


def new_cell(vocab, batch, k, dtype):
    return {"V": vocab, "B": batch, "K": k, "dtype": dtype_name(dtype), "kjit_us": None,
            "torch_us": None, "speedup": None, "floor_us": None, "floor_ratio": None,
            "gbps": None, "check": "ok", "problems": [], "notes": []}


def run_cell(kjit, vocab, batch, k, dtype, copy_bw, working_set):
    cell = new_cell(vocab, batch, k, dtype)
    logits_bytes = batch * vocab * torch.tensor([], dtype=dtype).element_size()
    cell["floor_us"] = logits_bytes / copy_bw * 1e6
    # Separate tensors, as a model's logits are each step: every one starts aligned.
    copies = max(2, -(-working_set // logits_bytes))
    xs = [torch.randn(batch, vocab, device=DEVICE, dtype=dtype) * LOGIT_SCALE
          for _ in range(copies)]
    # Poisoned, so that a launch that writes nothing cannot pass the check.
    probs = torch.full((batch, k), float("nan"), device=DEVICE)
    idx = torch.full((batch, k), -2, dtype=torch.int64, device=DEVICE)
    try:
        kjit.softmax_topk(xs[0], k, probs, idx)
        torch.cuda.synchronize()
    except RuntimeError as e:
        cell["check"] = "ERROR"
        cell["problems"].append(str(e))
        return cell
    cell["problems"] = check_topk(xs[0], k, probs, idx)
    if cell["problems"]:
        cell["check"] = "FAIL"

    try:
        cell["kjit_us"] = time_launches(lambda i: kjit.softmax_topk(xs[i % copies], k, probs, idx),
                                        copies)
    except RuntimeError as e:
        cell["check"] = "ERROR"
        cell["problems"].append(f"timing kjit: {e}")
        return cell
    cell["gbps"] = logits_bytes / (cell["kjit_us"] * 1e3)
    cell["floor_ratio"] = cell["kjit_us"] / cell["floor_us"]
    try:
        cell["torch_us"] = time_launches(lambda i: torch_softmax_topk(xs[i % copies], k), copies)
        cell["speedup"] = cell["torch_us"] / cell["kjit_us"]
    except RuntimeError as e:
        # The baseline failing says nothing about kjit: note it, leave the cell's check alone.
        cell["notes"].append(f"torch not timed: {e}")
    return cell


def parse_cells(text):
    """'128256:8:1024,128256:256:50:bf16' -> cells; dtype f32 (default), bf16 or f16."""
    names = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    cells = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] not in names):
            raise SystemExit(f"--cells: '{item}' is not V:B:K or V:B:K:dtype (f32, bf16, f16)")
        vocab, batch, k = (int(p) for p in parts[:3])
        cells.append((vocab, batch, k, names[parts[3] if len(parts) == 4 else "f32"]))
    return cells


def cells_to_run(quick, listed):
    if listed:
        return parse_cells(listed)
    if quick:
        return QUICK_CELLS
    cells = []
    for vocab in VOCABS:
        dtypes = [torch.float32] + ([torch.bfloat16] if vocab in BF16_VOCABS else [])
        for dtype in dtypes:
            cells += [(vocab, batch, k, dtype) for batch in BATCHES for k in KS]
    for dtype in (torch.float16, torch.bfloat16):
        for vocab in VOCABS:
            cells += [(vocab, batch, k, dtype) for batch in HALF_BATCHES for k in HALF_KS
                      if (vocab, batch, k, dtype) not in cells]
    return cells


def fmt(value, spec, suffix=""):
    return "-" if value is None else f"{value:{spec}}{suffix}"


def table_row(cell):
    values = [str(cell["V"]), str(cell["B"]), str(cell["K"]), cell["dtype"],
              fmt(cell["kjit_us"], ".2f"), fmt(cell["torch_us"], ".2f"),
              fmt(cell["speedup"], ".2f", "x"), fmt(cell["floor_us"], ".2f"),
              fmt(cell["floor_ratio"], ".2f", "x"), fmt(cell["gbps"], ".0f"),
              cell["check"] if cell["check"] == "ok" else f"**{cell['check']}**"]
    return "| " + " | ".join(values) + " |"


def evaluate_targets(cells):
    """Each target of the op: met, missed or not measured (its cells were not run), with numbers."""
    def find(vocab, batch, k, dtype="float32"):
        return next((c for c in cells if (c["V"], c["B"], c["K"], c["dtype"]) ==
                     (vocab, batch, k, dtype)), None)

    def why_untimed(cell):
        # A wrong result is not a fast one: failed cells miss every target they are part of.
        return cell["check"] if cell["check"] != "ok" else "not timed"

    def kjit_time(cell):
        if cell["check"] != "ok" or cell["kjit_us"] is None:
            return why_untimed(cell)
        return f"{cell['kjit_us']:.2f} us"

    def torch_untimed(cell):
        kjit_timed = cell["check"] == "ok" and cell["kjit_us"] is not None
        return "torch not timed" if kjit_timed else why_untimed(cell)

    targets = []

    def each_cell_target(text, group, key, limit, sign, extreme, untimed):
        """Every cell of `group` within `limit` of `key`: sign -1 where lower values miss (the
        worst is the lowest), +1 where higher ones do (the worst is the largest)."""
        misses, worst = [], None
        for c in group:
            if c["check"] != "ok" or c[key] is None:
                misses.append(f"{cell_label(c)}: {untimed(c)}")
                continue
            if worst is None or sign * c[key] > sign * worst[key]:
                worst = c
            if sign * c[key] > sign * limit:
                misses.append(f"{cell_label(c)}: {c[key]:.2f}x")
        detail = (f"{len(group) - len(misses)} of {len(group)} cells" +
                  (f"; {extreme} {worst[key]:.2f}x at {cell_label(worst)}" if worst else ""))
        targets.append({"target": text,
                        "status": "not measured" if not group else ("missed" if misses else "met"),
                        "detail": detail, "misses": misses})

    each_cell_target(f"kjit >= {SPEEDUP_TARGET:g}x torch on every cell", cells, "speedup",
                     SPEEDUP_TARGET, -1, "lowest", torch_untimed)

    def single_cell_target(text, wanted, value_of, limit, describe):
        parts, misses, measured = [], [], True
        for key in wanted:
            c = find(*key)
            if c is None:
                measured = False
                parts.append(f"V={key[0]} B={key[1]} K={key[2]}: not run")
            elif c["check"] != "ok" or value_of(c) is None:
                misses.append(cell_label(c))
                parts.append(f"{cell_label(c)}: {why_untimed(c)}")
            else:
                if value_of(c) > limit:
                    misses.append(cell_label(c))
                parts.append(describe(c))
        status = "missed" if misses else ("met" if measured else "not measured")
        targets.append({"target": text, "status": status, "detail": "; ".join(parts),
                        "misses": misses})

    single_cell_target(
        f"B=1 and B=8, V=128256, K=50 float32 under {SMALL_BATCH_TARGET_US:g} us",
        [(128256, 1, 50), (128256, 8, 50)], lambda c: c["kjit_us"], SMALL_BATCH_TARGET_US,
        lambda c: f"B={c['B']} {c['kjit_us']:.2f} us")
    single_cell_target(
        f"B=256, V=128256, K=50 float32 within {FLOOR_TARGET:g}x of the read-once floor",
        [(128256, 256, 50)], lambda c: c["floor_ratio"], FLOOR_TARGET,
        lambda c: f"kjit {c['kjit_us']:.2f} us, floor {c['floor_us']:.2f} us: "
                  f"{c['floor_ratio']:.2f}x")

    misses, worst, pairs = [], None, 0
    for small in cells:
        if small["K"] != 50:
            continue
        large = find(small["V"], small["B"], 1024, small["dtype"])
        if large is None:
            continue
        pairs += 1
        name = f"V={small['V']} B={small['B']} {small['dtype']}"
        if any(c["check"] != "ok" or c["kjit_us"] is None for c in (small, large)):
            misses.append(f"{name}: K=1024 {kjit_time(large)}, K=50 {kjit_time(small)}")
            continue
        ratio = large["kjit_us"] / small["kjit_us"]
        if worst is None or ratio > worst[0]:
            worst = (ratio, name)
        if ratio > LARGE_K_TARGET:
            misses.append(f"{name}: K=1024 {large['kjit_us']:.2f} us, K=50 "
                          f"{small['kjit_us']:.2f} us: {ratio:.2f}x")
    detail = (f"{pairs - len(misses)} of {pairs} (V, B, dtype)" +
              (f"; largest {worst[0]:.2f}x at {worst[1]}" if worst else ""))
    targets.append({"target": f"K=1024 within {LARGE_K_TARGET:g}x of K=50 at the same "
                              f"(V, B, dtype)",
                    "status": "not measured" if not pairs else ("missed" if misses else "met"),
                    "detail": detail, "misses": misses})

    half = [c for c in cells if c["dtype"] in ("float16", "bfloat16") and 64 <= c["B"] <= 256
            and c["K"] <= 256]
    each_cell_target(f"fp16 and bf16 logits, 64 to 256 rows, K <= 256: within "
                     f"{HALF_FLOOR_TARGET:g}x of the read-once floor", half, "floor_ratio",
                     HALF_FLOOR_TARGET, 1, "largest", why_untimed)
    return targets


TABLE_HEAD = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]


def target_lines(targets):
    lines = ["## targets", ""]
    for n, t in enumerate(targets, 1):
        lines.append(f"{n}. {t['target']}: **{t['status']}** ({t['detail']})")
        if t["status"] == "missed":
            lines += [f"    - {m}" for m in t["misses"]]
    return lines


def report_lines(header, cells, targets):
    lines = header + TABLE_HEAD + [table_row(c) for c in cells]
    troubled = [c for c in cells if c["problems"] or c["notes"]]
    if troubled:
        lines += ["", "## problems", ""]
        lines += [f"- {cell_label(c)} ({c['check']}): {'; '.join(c['problems'] + c['notes'])}"
                  for c in troubled]
    if targets:
        lines += [""] + target_lines(targets)
    return lines


def write_outputs(args, header, meta, cells, targets):
    """Rewritten after every cell, so a run that dies part way still leaves what it measured."""
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(report_lines(header, cells, targets)) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**meta, "cells": cells, "targets": targets}, f, indent=1)
            f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lib", help="path to libkjit.so")
    parser.add_argument("--out", help="write the markdown table and targets here")
    parser.add_argument("--json", help="write the cells and targets here as JSON")
    parser.add_argument("--quick", action="store_true",
                        help="V=128256, B in {1, 8, 256}, K in {50, 1024}, float32 only")
    parser.add_argument("--cells", help="only these cells: V:B:K[:dtype],... (dtype f32, bf16, f16)")
    args = parser.parse_args()

    kjit = KjitTopk(args.lib)
    copy_bw = copy_bandwidth()
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2_bytes = getattr(props, "L2_cache_size", 0)
    working_set = max(WORKING_SET, 2 * l2_bytes + (16 << 20))
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "device": torch.cuda.get_device_name(), "l2_mb": l2_bytes / 2**20,
            "copy_gbps": copy_bw / 1e9, "torch": torch.__version__,
            "working_set_mb": working_set / 2**20, "quick": args.quick,
            "listed_cells": args.cells}
    header = [f"date: {meta['date']}",
              f"device: {meta['device']} (L2 {meta['l2_mb']:.0f} MB); copy bandwidth "
              f"{meta['copy_gbps']:.0f} GB/s (read + write); torch {meta['torch']}",
              f"logits randn * {LOGIT_SCALE:g}, rotating over {meta['working_set_mb']:.0f} MB or "
              f"more; floor = logits bytes / copy bandwidth; GB/s counts logits bytes read", ""]
    print("\n".join(header + TABLE_HEAD), flush=True)

    cells = []
    for vocab, batch, k, dtype in cells_to_run(args.quick, args.cells):
        try:
            torch.cuda.empty_cache()  # the previous cell's tensors and graph pools
            cell = run_cell(kjit, vocab, batch, k, dtype, copy_bw, working_set)
        except Exception as e:  # noqa: BLE001 - one broken cell must not hide the others
            cell = new_cell(vocab, batch, k, dtype)
            cell["check"] = "ERROR"
            cell["problems"].append(f"{type(e).__name__}: {e}")
        cells.append(cell)
        if cell["check"] != "ok":
            print(f"{cell['check']} {cell_label(cell)}: {'; '.join(cell['problems'])}", flush=True)
        for note in cell["notes"]:
            print(f"note {cell_label(cell)}: {note}", flush=True)
        print(table_row(cell), flush=True)
        write_outputs(args, header, meta, cells, [])

    targets = evaluate_targets(cells)
    print("\n" + "\n".join(target_lines(targets)), flush=True)
    write_outputs(args, header, meta, cells, targets)
    return 1 if any(c["check"] != "ok" for c in cells) else 0


if __name__ == "__main__":
    sys.exit(main())
