#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kjit's row-wise ops beside torch on shapes drawn fresh each run, and on real model widths.

Draws --count shapes from a seed (printed first; --seed repeats a run): widths log-uniform from 1
to 2^20 with a share of odd and prime widths, sizes log-uniform from 2^10 to 2^28 elements, dense,
padded and odd row strides, input and output each offset 0..pack-1 elements from a 16-byte
boundary, every op and every dtype pair the C API accepts (sweep_draw.py). Then, on the GPU, the
fixed table of model widths first and the drawn shapes after it, each shape so: kjit's first call
(compiled into a fresh disk cache unless --cache-dir names one); its whole output checked against
a float64 reference (stricter than torch's output would be) and for writes outside the output
tensor; then kjit (libkjit's C API through ctypes) and torch on the same input tensors (torch
writes a new contiguous output: its ops take none), each timed as many launches captured in one
CUDA graph and replayed (median of CUDA-event timings after warm-up), inputs rotating over more
than twice the L2, and outputs too (torch's kept alive over as many launches:
torch_timing.keeping_outputs). % of copy is over the copy bandwidth measured in the same process. Reports the
distribution by target class, the targets, and the worst 10 shapes by % of copy and by
speed beside torch (with kjit's kernel and kjit_explain's config).

The defaults (250 shapes after the model table's 111 cells) are meant to take about 5-6 minutes
on an H100: about 0.8 s a shape, estimated from a first call's NVRTC compile (80-280 ms a kernel
on an H100 host, docs/experiments/tuning.md), the buffers, the float64 check and two graphs.
--budget-s (500 s) stops drawing new shapes in time, and the report says how many were measured.
Exits 1 when a result is wrong or kjit fails; missed targets are reported, not fatal.

usage: sweep_shapes.py LIBKJIT.so [--seed S] [--count N] [--json FILE] [--out FILE.md]
       sweep_shapes.py --list [--seed S] [--count N]     (no GPU, no torch needed)
"""
import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import time

from sweep_draw import DEFAULT_MAX_GB, describe, draw_shapes, listing, model_shapes, new_seed
from sweep_summary import section_lines, worst_by_percent, worst_by_ratio

DEFAULT_COUNT = 250
DEFAULT_BUDGET_S = 500  # with start-up and the explains after it, under 10 minutes


def shape_numbers(text):
    """"3,17,40-45" as a set of shape numbers."""
    numbers = set()
    try:
        for part in text.split(","):
            first, _, last = part.partition("-")
            numbers.update(range(int(first), int(last or first) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of numbers and ranges (e.g. 3,17,40-45)")
    return numbers


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lib", nargs="?", help="path to libkjit.so (not needed with --list)")
    parser.add_argument("--seed", type=int, help="repeat the run of this seed (default: a new one)")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT, help="shapes to draw")
    parser.add_argument("--max-gb", type=float, default=DEFAULT_MAX_GB,
                        help="GPU memory one shape may take, rotation copies included; rows are "
                             "cut to fit")
    parser.add_argument("--list", action="store_true", help="print the drawn shapes and exit")
    parser.add_argument("--json", help="write the cases, models and meta here as JSON "
                                       "(bench/results_report.py reads it)")
    parser.add_argument("--out", help="write the markdown report here")
    parser.add_argument("--no-models", action="store_true", help="skip the model-width table")
    parser.add_argument("--only", type=shape_numbers, help="measure only these of the drawn shapes, "
                        "numbered as --list prints them (e.g. 3,17,40-45), to repeat a few of a run")
    parser.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S,
                        help="draw no new shape after this many seconds from the start")
    parser.add_argument("--cache-dir", help="kjit's disk cache (default: a fresh one, removed at "
                                            "the end, so that every first call compiles)")
    args = parser.parse_args(argv)
    if not args.list and not args.lib:
        parser.error("the path to libkjit.so is needed unless --list")
    if args.count < 0:
        parser.error("--count must be >= 0")
    return args


def open_kjit(path, cache_dir):
    from rowwise_ctypes import KjitRowwise

    def configure(options):
        options.cache_dir = cache_dir.encode()
        options.disk_cache = 1
        if (options.log_level or b"") not in (b"trace", b"debug"):
            options.log_level = b"info"  # "compiling <kernel>" lines name each call's kernel

    kjit = KjitRowwise(path, configure)
    kjit.capture_log()
    return kjit


def progress(start, done, total, case):
    head = f"[{time.monotonic() - start:5.0f} s] {done}/{total} {describe(case)}"
    if case["check"] != "ok":
        return f"{head}: {case['check']} {'; '.join(case['problems'] + case['notes'])}"
    if case.get("ratio") is None:
        return f"{head}: kjit {case['kjit_us']:.2f} us; {'; '.join(case['notes'])}"
    return (f"{head}: kjit {case['kjit_us']:.2f} us ({case['pct_copy']:.1f}% copy), torch "
            f"{case['torch_us']:.2f} us, {case['ratio']:.2f}x, first call "
            f"{case['first_call_ms']:.0f} ms" + "".join(f"; {n}" for n in case["notes"]))


def run_one(kjit, shape, copy_bw):
    import torch
    from sweep_measure import measure
    try:
        return measure(kjit, shape, copy_bw)
    except Exception as e:  # noqa: BLE001 - one broken shape must not hide the others
        return dict(shape, check="ERROR", problems=[f"{type(e).__name__}: {e}"], notes=[],
                    elements=shape.elements, target_class=shape.target_class)
    finally:
        torch.cuda.empty_cache()  # the shape's buffers and graph pools


def add_explains(kjit, cases):
    """kjit_explain's report for each of the worst shapes (the config for the same call on
    contiguous, aligned buffers; the kernel this call ran is its `kernel`)."""
    for case in {id(c): c for c in worst_by_percent(cases) + worst_by_ratio(cases)}.values():
        try:
            case["explain"] = kjit.explain(case["op"], case["in"], case["out"], case["rows"],
                                           case["cols"])
        except RuntimeError as e:
            case["notes"].append(f"explain: {e}")


def write_outputs(args, meta, cases, models):
    data = {**meta, "cases": cases, "models": models}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    return data


def header_lines(meta):
    stop = (f"; stopped drawing after {meta['measured']} of {meta['count']} shapes "
            f"(--budget-s {meta['budget_s']:g})" if meta.get("stopped_early") else "")
    return [f"date: {meta['date']}", f"device: {meta['device']}; copy bandwidth "
            f"{meta['copy_gbps']:.0f} GB/s (read + write); torch {meta['torch']}",
            f"seed {meta['seed']}, {meta['count']} shapes{stop}" +
            (f" (only those numbered {', '.join(map(str, meta['only']))})" if "only" in meta else "") +
            (f"; wall time {meta['wall_s']:.0f} s" if "wall_s" in meta else ""), ""]


def measure_all(args, seed, shapes):
    import torch
    from torch_timing import copy_bandwidth

    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="kjit-sweep-cache-")
    try:
        kjit = open_kjit(args.lib, cache_dir)
        start = time.monotonic()
        copy_bw = copy_bandwidth()
        meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "device": torch.cuda.get_device_name(), "copy_gbps": copy_bw / 1e9,
                "torch": torch.__version__, "seed": seed, "count": len(shapes),
                "max_gb": args.max_gb, "budget_s": args.budget_s, "measured": 0,
                "stopped_early": False, "kjit_tune": os.environ.get("KJIT_TUNE", ""),
                "cache": "given" if args.cache_dir else "fresh"}
        if args.only is not None:
            meta["only"] = sorted(args.only)
        print("\n".join(header_lines(meta)), flush=True)
        cases, models = [], []
        fixed = [] if args.no_models else model_shapes()
        for n, shape in enumerate(fixed):
            models.append(run_one(kjit, shape, copy_bw))
            print(progress(start, n + 1, len(fixed), models[-1]), flush=True)
            write_outputs(args, meta, cases, models)
        for n, shape in enumerate(shapes):
            if time.monotonic() - start > args.budget_s:
                meta["stopped_early"] = True
                break
            cases.append(run_one(kjit, shape, copy_bw))
            meta["measured"] = len(cases)
            print(progress(start, n + 1, len(shapes), cases[-1]), flush=True)
            write_outputs(args, meta, cases, models)
        add_explains(kjit, cases)
        meta["wall_s"] = time.monotonic() - start
        return meta, cases, models
    finally:
        if not args.cache_dir:
            shutil.rmtree(cache_dir, ignore_errors=True)


def main(argv=None):
    args = parse_args(argv)
    seed = new_seed() if args.seed is None else args.seed
    print(f"seed {seed}", flush=True)
    max_bytes = int(args.max_gb * (1 << 30))
    shapes = draw_shapes(seed, args.count, max_bytes)
    if args.only is not None:
        shapes = [shape for shape in shapes if shape["number"] in args.only]
    if args.list:
        print("\n".join(listing(seed, shapes, max_bytes)[1:]))
        return 0
    meta, cases, models = measure_all(args, seed, shapes)
    data = write_outputs(args, meta, cases, models)
    lines = header_lines(meta) + section_lines(data)
    print("\n" + "\n".join(lines), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if any(c["check"] != "ok" for c in cases + models) else 0


if __name__ == "__main__":
    sys.exit(main())
