#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kjit_attention beside torch and seed 004's kernel on batched small-tile attention, on the GPU.

O[b,h] = softmax(Q K^T * scale + bias[h] + mask[b % W]) V for many small problems. In one process
on the same tensors: kjit (C API through ctypes), the seed's one-warp-per-16x16 kernel where its
design reaches (bench/seed_attention.cu), torch's bmm-softmax-bmm, scaled_dot_product_attention
under each backend (math, efficient, flash, cudnn; "refused" where one raises) and torch.compile
of the eager expression. Every path's output is checked against a float64 reference on a subsample
of problems before it is timed; times are medians of CUDA-event timings of many launches captured
in one CUDA graph, inputs rotating over more than twice the L2; the floor is Q, K, V, bias and mask
read once and O written once at the copy bandwidth measured in the same run.
Exits 1 when kjit's result is wrong, kjit fails, or libkjit lacks the op; torch's results and
missed speed targets are reported, not fatal.

usage: compare_attention.py LIBKJIT.so [--out FILE.md] [--json FILE.json] [--merge]
                            [--quick | --cases NAME[:f16|bf16],...] [--no-compile] [--paths P,...]
       compare_attention.py --list [--copy-gbps GBPS]      (no GPU: the cases and their floors)
"""
import argparse
import ctypes
import datetime
import json
import math
import os
import sys
import time

import seed_attention
from attention_args import AttentionArgs
from attention_cases import (CASES, DTYPE_BYTES, FLOOR_COPY_GBPS, PATH_TITLES, PATHS,
                             SWIN_MASK_VALUE, TORCH_PATHS, list_lines, runs_for, tune_call)

FAILED = ("FAIL", "ERROR", "missing")  # kjit states that make the exit status 1

COLUMNS = (["case", "dtype", "floor us", "kjit us", "% of floor", "kjit TFLOP/s", "seed us"] +
           [PATH_TITLES[p] + " us" for p in TORCH_PATHS] +
           ["best torch", "kjit / best", "kjit err", "SDPA err", "check"])
TABLE_HEAD = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]


def new_run(case, dtype, copy_gbps):
    return {"case": case.name, "title": case.title, "shape": case.shape_text(), "dtype": dtype,
            "copy_gbps": copy_gbps, "floor_us": case.floor_us(dtype, copy_gbps),
            "gflop": case.flops() / 1e9, "target_us": case.target_us, "paths": {}, "check": "ok", "problems": [], "notes": [],
            "kjit_us": None, "floor_pct": None, "tflops": None, "best_torch": None,
            "best_torch_us": None, "kjit_vs_best": None, "kjit_err": None, "sdpa_err": None}


def summarize(run):
    """The row's derived numbers from its paths; JSON has no inf, so a non-finite error (an
    unwritten or NaN output) becomes None with the reason in the path's note."""
    paths = run["paths"]
    for p in paths.values():
        if p.get("err") is not None and not math.isfinite(p["err"]):
            p["err"], p["note"] = None, ((p.get("note") or "") + " non-finite output").strip()
    kjit = paths.get("kjit", {"status": "ERROR", "note": "not run"})
    if kjit["status"] != "ok":
        run["check"] = kjit["status"]
        if kjit["status"] != "skipped":
            run["problems"].append(f"kjit {kjit['status']}: {kjit.get('note')}")
    run["kjit_us"], run["kjit_err"] = kjit.get("us"), kjit.get("err")
    run["sdpa_err"] = paths.get("sdpa", {}).get("err")
    timed = [(p["us"], name) for name, p in paths.items() if name in TORCH_PATHS and p.get("us")]
    if timed:
        run["best_torch_us"], run["best_torch"] = min(timed)
    if run["kjit_us"]:
        run["floor_pct"] = 100.0 * run["floor_us"] / run["kjit_us"]
        run["tflops"] = run["gflop"] / run["kjit_us"] * 1e3  # GFLOP / us = 1000 TFLOP/s
        if run["best_torch_us"]:
            run["kjit_vs_best"] = run["kjit_us"] / run["best_torch_us"]
    for name in ["seed"] + TORCH_PATHS + ["sdpa"]:
        p = paths.get(name)
        if p and p["status"] not in ("ok", "n/a", "skipped", "checked"):
            run["notes"].append(f"{PATH_TITLES[name]} {p['status']}: {p.get('note')}")
    return run


# ---- reporting --------------------------------------------------------------------------------

def fmt(value, spec, suffix=""):
    return "-" if value is None else f"{value:{spec}}{suffix}"


def path_cell(p):
    if p is None:
        return "-"
    if p.get("us") is not None:
        return f"{p['us']:.1f}"
    return f"**{p['status']}**" if p["status"] in FAILED else p["status"]


def table_row(run):
    paths = run["paths"]
    values = [run["case"] + ("*" if run.get("earlier") else ""), run["dtype"].replace("float", "f"),
              f"{run['floor_us']:.1f}", path_cell(paths.get("kjit")),
              fmt(run["floor_pct"], ".0f", "%"), fmt(run["tflops"], ".1f"),
              path_cell(paths.get("seed"))]
    values += [path_cell(paths.get(p)) for p in TORCH_PATHS]
    values += [PATH_TITLES.get(run["best_torch"], "-"), fmt(run["kjit_vs_best"], ".2f", "x"),
               fmt(run["kjit_err"], ".1e"), fmt(run["sdpa_err"], ".1e"),
               f"**{run['check']}**" if run["check"] in FAILED else run["check"]]
    return "| " + " | ".join(values) + " |"


def run_label(run):
    return f"{run['case']} {run['dtype']}"


def evaluate_targets(runs):
    """The targets, each met, missed or not measured, with the numbers behind it."""
    targets = []

    def add(text, results):
        misses = [detail for ok, detail in results if not ok]
        status = "not measured" if not results else ("missed" if misses else "met")
        # A missed target names what missed; a met one, every number behind it.
        detail = "; ".join(misses) if misses else "; ".join(d for _, d in results)
        targets.append({"target": text, "status": status, "detail": detail, "misses": misses})

    def kjit_time(r):
        return fmt(r["kjit_us"], ".1f", " us") if r["check"] == "ok" else r["check"]

    for case_name in dict.fromkeys(r["case"] for r in runs):
        mine = [r for r in runs if r["case"] == case_name]
        limit = mine[0]["target_us"]
        add(f"{case_name}: kjit at most {limit:g} us",
            [(r["check"] == "ok" and r["kjit_us"] is not None and r["kjit_us"] <= limit,
              f"{r['dtype']} {kjit_time(r)}") for r in mine])

    def versus_best(r):
        if r["check"] != "ok" or r["kjit_vs_best"] is None:
            return f"{run_label(r)}: {r['check'] if r['check'] != 'ok' else 'no timed torch path'}"
        return (f"{run_label(r)}: {r['kjit_vs_best']:.2f}x the time of "
                f"{PATH_TITLES[r['best_torch']]}")

    add("kjit faster than every torch path that accepts the case",
        [(r["check"] == "ok" and r["kjit_vs_best"] is not None and r["kjit_vs_best"] < 1.0,
          versus_best(r)) for r in runs])
    add("kjit's max error against float64 no larger than SDPA's (torch's default dispatch)",
        [(r["kjit_err"] is not None and r["sdpa_err"] is not None and r["kjit_err"] <= r["sdpa_err"],
          f"{run_label(r)}: kjit {fmt(r['kjit_err'], '.1e')}, SDPA {fmt(r['sdpa_err'], '.1e')}")
         for r in runs])
    return targets


def target_lines(targets):
    lines = ["## targets", ""]
    for n, t in enumerate(targets, 1):
        lines.append(f"{n}. {t['target']}: **{t['status']}** ({t['detail']})")
    return lines


def report_lines(header, runs, targets):
    lines = header + TABLE_HEAD + [table_row(r) for r in runs]
    troubled = [r for r in runs if r["problems"] or r["notes"]]
    if troubled:
        lines += ["", "## problems and refusals", ""]
        lines += [f"- {run_label(r)}: {'; '.join(r['problems'] + r['notes'])}" for r in troubled]
    if targets:
        lines += [""] + target_lines(targets)
    return lines


def write_outputs(args, header, meta, runs, targets):
    """Rewritten after every run, so a run that dies part way still leaves what it measured."""
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(report_lines(header, runs, targets)) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**meta, "runs": runs, "targets": targets}, f, indent=1)
            f.write("\n")


def header_lines(meta):
    return [f"date: {meta['date']}",
            f"device: {meta['device']} (L2 {meta['l2_mb']:.0f} MB); copy bandwidth "
            f"{meta['copy_gbps']:.0f} GB/s (read + write); torch {meta['torch']}; seed kernel "
            f"via {meta['seed_via'] or '-'}; kjit: {meta['kjit']}",
            f"Q, K, V randn, scale 1/sqrt(D), bias randn, Swin's shifted-window mask (0 / "
            f"{SWIN_MASK_VALUE:g}); SDPA gets bias + mask as one [1, W*H, M, N] attn_mask made "
            f"beforehand; inputs rotate over {meta['working_set_mb']:.0f} MB or more, and torch's "
            "outputs over as many buffers (torch_timing.keeping_outputs); "
            "floor = Q, K, V, bias, mask read once + O written once at the copy bandwidth; "
            "% of floor = floor / kjit time; TFLOP/s = 2*M*N*(D+Dv) a problem / kjit time; "
            "kjit / best = kjit time / the fastest torch path's; err = max |out - float64| over "
            "a subsample of problems; a case marked * was measured by an earlier call (--merge), "
            "with its own copy bandwidth", ""]


# ---- main -------------------------------------------------------------------------------------

def earlier_runs(path):
    """The runs of an earlier --json file, for --merge: a full table split over several processes
    (each under a time limit). Missing or unreadable: none."""
    if not path or not os.path.isfile(path):
        return []
    try:
        with open(path) as f:
            return json.load(f).get("runs", [])
    except (OSError, ValueError):
        return []


def merged(earlier, runs):
    """earlier's runs that this process did not redo, then this process's, in the table's order."""
    redone = {(r["case"], r["dtype"]) for r in runs}
    kept = [dict(r, earlier=True) for r in earlier if (r["case"], r["dtype"]) not in redone]
    order = {(c.name, dt): i for i, (c, dt) in enumerate((c, dt) for c in CASES for dt in DTYPE_BYTES)}
    return sorted(kept + runs, key=lambda r: order.get((r["case"], r["dtype"]), len(order)))

def list_cases(runs, copy_gbps):
    reasons = {c.name: seed_attention.unsupported(c.m, c.n, c.d, c.dv, c.bias, bool(c.mask_windows),
                                                  False) for c, _ in runs}
    print("\n".join(list_lines(runs, copy_gbps, reasons)))
    print(f"\nkjit_attention_args: {ctypes.sizeof(AttentionArgs)} bytes")


def measure(args, runs_wanted):
    # torch only from here: --list runs without it.
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        raise SystemExit("compare_attention.py: no torch here (--list runs without it)") from None
    if not torch.cuda.is_available():
        raise SystemExit("compare_attention.py: torch sees no CUDA device (--list runs without one)")
    from attention_paths import SeedKernels, open_kjit, run_case  # noqa: PLC0415
    from torch_timing import WORKING_SET, copy_bandwidth  # noqa: PLC0415

    kjit, kjit_missing = open_kjit(args.lib)
    copy_gbps = copy_bandwidth() / 1e9
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2_bytes = getattr(props, "L2_cache_size", 0)
    working_set = max(WORKING_SET, 2 * l2_bytes + (16 << 20))
    seeds = SeedKernels("sm_{}{}".format(*torch.cuda.get_device_capability()))
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "device": torch.cuda.get_device_name(), "l2_mb": l2_bytes / 2**20,
            "copy_gbps": copy_gbps, "torch": torch.__version__,
            "working_set_mb": working_set / 2**20, "quick": args.quick, "listed_cases": args.cases,
            "kjit": "loaded" if kjit else kjit_missing, "seed_via": None,
            "paths": sorted(args.wanted, key=PATHS.index)}
    print("\n".join(header_lines(meta) + TABLE_HEAD), flush=True)

    earlier = earlier_runs(args.json) if args.merge else []
    runs = []
    for index, (case, dtype) in enumerate(runs_wanted):
        if index and args.cool_s > 0:
            time.sleep(args.cool_s)  # back to back, the GPU heats and every path slows
        run = new_run(case, dtype, copy_gbps)
        run["date"] = meta["date"]
        started = time.monotonic()
        try:
            torch.cuda.empty_cache()
            run.update(run_case(case, dtype, kjit, kjit_missing, seeds, working_set, args.wanted))
        except Exception as e:  # noqa: BLE001 - one broken run must not hide the others
            run["paths"]["kjit"] = {"us": None, "err": None, "status": "ERROR",
                                    "note": f"the run failed: {type(e).__name__}: {e}"}
        run["seconds"] = time.monotonic() - started  # for splitting a table over time-limited calls
        runs.append(summarize(run))
        meta["seed_via"] = seeds.via
        for line in run["problems"] + run["notes"]:
            print(f"note {run_label(run)}: {line}", flush=True)
        print(table_row(run) + f" ({run['seconds']:.0f} s)", flush=True)
        write_outputs(args, header_lines(meta), meta, merged(earlier, runs), [])

    all_runs = merged(earlier, runs)
    targets = evaluate_targets(all_runs)
    print("\n" + "\n".join(target_lines(targets)), flush=True)
    write_outputs(args, header_lines(meta), meta, all_runs, targets)
    return 1 if any(r["check"] in FAILED for r in runs) else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lib", nargs="?", help="path to libkjit.so")
    parser.add_argument("--out", help="write the markdown table and targets here")
    parser.add_argument("--json", help="write the runs and targets here as JSON")
    parser.add_argument("--quick", action="store_true", help="each case in its target dtypes only")
    parser.add_argument("--cases", help="only these: NAME[:f16|bf16],... (no dtype: both)")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--paths", help=f"time only these: {','.join(PATHS)} (default: all)")
    parser.add_argument("--cool-s", type=float, default=10.0,
                        help="seconds idle before each case after the first (default 10): run back to "
                             "back, the cases heat the GPU and the later ones, torch's paths as much "
                             "as kjit, ran up to 2.6x slower on an H100 at 84 C")
    parser.add_argument("--merge", action="store_true",
                        help="keep the runs already in --json that this call does not redo, so "
                             "that one table can be measured over several calls")
    parser.add_argument("--list", "--dry-run", action="store_true", dest="list",
                        help="print the cases and their floors; no GPU or torch needed")
    parser.add_argument("--tune-calls", action="store_true",
                        help="print each wanted run as `kjit tune --op` arguments, ';' apart")
    parser.add_argument("--copy-gbps", type=float, default=FLOOR_COPY_GBPS,
                        help="copy bandwidth for --list's floors, GB/s read + write (default: "
                             "the H100's measured)")
    args = parser.parse_args()
    runs_wanted = runs_for(args.quick, args.cases)
    args.wanted = set(args.paths.split(",") if args.paths else PATHS)
    if args.wanted - set(PATHS):
        parser.error(f"--paths: unknown {', '.join(sorted(args.wanted - set(PATHS)))} "
                     f"(known: {', '.join(PATHS)})")
    if args.no_compile:
        args.wanted.discard("compile")
    if args.list:
        list_cases(runs_wanted, args.copy_gbps)
        return 0
    if args.tune_calls:
        print("; ".join(tune_call(case, dtype) for case, dtype in runs_wanted))
        return 0
    if not args.lib:
        parser.error("the path to libkjit.so is required (or --list)")
    return measure(args, runs_wanted)


if __name__ == "__main__":
    sys.exit(main())
