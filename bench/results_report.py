#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes bench/RESULTS.md from the files scripts/gpu_check.sh leaves in its output folder.

usage: results_report.py OUT_DIR [MORE_DIRS ...] [--out FILE]

Every input is read from the first folder that has it, so a partial run (STEPS=...) can be
completed with an earlier full run's folder; each table then states its own date and commit
where they differ from the header's. Inputs, all optional (a table without its input is left
out and named under the header):

  run.json               date and commit of the run (gpu_check.sh)
  info.log               `kjit info`: the device and the driver
  tests.log              ctest's output; tests_full.log: ctest's LastTest.log (chain counts, skips)
  bench_rowwise.json     kjit_bench_rowwise --json with KJIT_TUNE=off (the heuristics' picks)
  host_overhead.txt      kjit_bench_rowwise --host
  tune/*.json            scripts/tune_check.sh: one `kjit tune --json` log a shape, with its wall time
  bench_heuristic.json   scripts/tune_check.sh (absent when bench_rowwise.json holds those shapes)
  bench_tuned.json       scripts/tune_check.sh: the same shapes with the tuning records
  compare_torch.json     bench/compare_torch.py --json
  compare_topk.json      bench/compare_topk.py --json
  compare_attention.json bench/compare_attention.py --json (scripts/gpu_check.sh's attention step;
                         its table and targets appear only where this file is present; an
                         optional "note" says what changed in the kernels since it ran)
  sweep.json             bench/sweep_shapes.py --json (drawn shapes and real model widths; an
                         optional "note" says where the rows of a merged sweep came from)
"""
import argparse
import glob
import json
import os
import re
import sys
import textwrap

from sweep_summary import evaluate_targets as sweep_targets
from sweep_summary import section_lines as sweep_lines

TARGET_PERCENT_OF_COPY = 92.0
TARGET_TUNE_WALL_S = 2.0
TARGET_FIRST_CALL_MS = 5.0
TARGET_HOT_PATH_US = 1.0
TARGET_REDUCE_SCALE_PERCENT = 90.0
TIE_FRACTION = 0.02  # the tuner keeps an earlier config within 2% of the fastest
REDUCE_SCALE_TARGET_SHAPES = {(65536, 1024), (442368, 128)}


class Source:
    """One output folder: its files and the date and commit of the run that wrote them."""

    def __init__(self, path):
        self.path = path
        run = self.json("run.json") or {}
        self.date = run.get("date", "unknown date")
        self.commit = run.get("commit", "unknown")

    def file(self, name):
        path = os.path.join(self.path, name)
        return path if os.path.isfile(path) else None

    def text(self, name):
        path = self.file(name)
        if not path:
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def json(self, name):
        text = self.text(name)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError:
            print(f"results_report: {os.path.join(self.path, name)} is not JSON; left out",
                  file=sys.stderr)
            return None

    def stamp(self):
        return f"{self.date}, {self.commit}"


def first(sources, reader):
    """(source, value) of the first source whose reader(source) is not None."""
    for source in sources:
        value = reader(source)
        if value is not None:
            return source, value
    return None, None


def other_device(device, data):
    """' on NAME' where a table's run named a device other than the header's, else ''."""
    name = (data or {}).get("device")
    return f" on {name}" if name and name not in (device or "") else ""


def run_stamp(source, date=None):
    """'date, commit' of a table's run: its own date where it has one, else its folder's run."""
    return f"{date}, {source.commit}" if date else source.stamp()


def sweep_mark(header, device, source, sweep):
    """'date, commit, on NAME' for the sweep's target rows: the parts that differ from the header's."""
    if not sweep:
        return ""
    stamp = run_stamp(source, sweep.get("date"))
    parts = [stamp if stamp != header.stamp() else "", other_device(device, sweep).strip()]
    return ", ".join(part for part in parts if part)


def since(header, source, date=None):
    """' (date, commit)' when a table's run is not the header's, else ''."""
    stamp = run_stamp(source, date)
    return "" if stamp == header.stamp() else f" Measured {stamp}."


def wrapped(lines):
    """Prose and list items wrapped at 100 columns, as the project's other documents are; table
    rows and headings stay whole."""
    out = []
    for line in lines:
        if len(line) <= 100 or line.startswith(("|", "#")):
            out.append(line)
        else:
            indent = "  " if line.startswith("- ") else ""
            out += textwrap.wrap(line, 100, subsequent_indent=indent, break_on_hyphens=False,
                                 break_long_words=False)
    return out


def table(columns, rows):
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return lines


def fmt(value, spec, suffix=""):
    return "-" if value is None else f"{value:{spec}}{suffix}"


def dtype_name(dtype):
    return {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}.get(dtype, dtype)


def span(values, spec, suffix=""):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    low, high = min(values), max(values)
    return (f"{low:{spec}}{suffix}" if f"{low:{spec}}" == f"{high:{spec}}"
            else f"{low:{spec}}-{high:{spec}}{suffix}")


# ---- inputs -----------------------------------------------------------------------------------

def device_line(info):
    """'NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MB L2), CUDA 13.0 driver' from `kjit info`."""
    gpu = re.search(r"gpu 0: ([^,]+), (sm_\d+), (\d+) SMs,.*?(\d+) MB L2", info or "")
    driver = re.search(r"driver:\s+CUDA ([\d.]+)", info or "")
    if not gpu:
        return None
    text = f"{gpu.group(1)} ({gpu.group(2)}, {gpu.group(3)} SMs, {gpu.group(4)} MB L2)"
    return text + (f", CUDA {driver.group(1)} driver" if driver else "")


def tune_logs(source):
    """scripts/tune_check.sh's per-shape logs: {"wall_s": s, "log": kjit tune --json}."""
    logs = []
    for path in glob.glob(os.path.join(source.path, "tune", "*.json")):
        entry = source.json(os.path.relpath(path, source.path))
        if entry and isinstance(entry.get("log"), dict):
            logs.append(entry)
    # The benchmark's order: f32 before 16-bit types, many narrow rows before few wide ones.
    dtype_order = {"f32": 0, "f16": 1, "bf16": 2}
    logs.sort(key=lambda e: (dtype_order.get(e["log"].get("dtype", e["log"].get("in")), 3), -int(e["log"].get("rows") or 0)))
    return logs or None


def bench_rows(data):
    return {(r["op"], r["dtype"], r["rows"], r["cols"]): r for r in (data or {}).get("results", [])}


HOST_PATTERNS = {
    "first_call_ms": r"first call, cubin on disk, new runtime: ([\d.]+) ms",
    "hot": r"hot path: kjit_softmax ([\d.]+) us/call, bare (.+?) ([\d.]+) us/call, overhead (-?[\d.]+) us",
    "ring": r"hot path, (\S+ \S+) \((.+?)\): kjit_softmax ([\d.]+) us/call, bare ([\d.]+) us/call, "
            r"overhead (-?[\d.]+) us",
}


def host_costs(text):
    if text is None:
        return None
    found = {name: re.search(pattern, text) for name, pattern in HOST_PATTERNS.items()}
    return found if found["first_call_ms"] and found["hot"] else None


def test_summary(source):
    """(passed, total, failed names, skipped suites, chain count) from ctest's logs."""
    log = source.text("tests.log")
    if log is None:
        return None
    total = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", log)
    if not total:
        return None
    failed_count, count = int(total.group(2)), int(total.group(3))
    failed = re.findall(r"^\s*\d+ - (\S+) \(", log.split("The following tests FAILED:")[-1], re.M) \
        if failed_count else []
    full = source.text("tests_full.log") or ""
    # LastTest.log holds each test's output after a "N/M Testing: name" line.
    blocks = re.split(r"^\d+/\d+ Testing: (\S+)\s*$", full, flags=re.M)
    skipped = [name for name, body in zip(blocks[1::2], blocks[2::2]) if "GPU tests SKIPPED" in body]
    chains = re.findall(r"(\d+) chains checked", full)
    return {"passed": count - failed_count, "total": count, "failed": failed, "skipped": skipped,
            "chains": max(map(int, chains)) if chains else None}


# ---- sections ---------------------------------------------------------------------------------

def header_lines(header, device, copy_gbps, torch_version, missing):
    lines = ["# kjit benchmark results", "",
             "Written by `bench/results_report.py` from the outputs of `scripts/gpu_check.sh` "
             "(regenerate it rather than edit it). What was tried and not taken, with its "
             "measurements, is in [docs/experiments/](../docs/experiments/README.md).", ""]
    lines.append(f"- Device: {device or 'unknown'}" +
                 (f"; torch {torch_version}" if torch_version else ""))
    lines.append(f"- Date: {header.date}; commit {header.commit}")
    if copy_gbps:
        lines.append(f"- Copy bandwidth: {copy_gbps:.0f} GB/s (a 256 MB device-to-device copy, "
                     "bytes read + written; each table's % copy uses the value measured in its "
                     "own process)")
    lines += ["", "Every kernel time is a median of CUDA-event timings of many launches captured "
              "in one CUDA graph and replayed after warm-up. Inputs rotate over more than twice "
              "the L2, so each launch reads from HBM, and L2's persisting lines are reset before "
              "each timing. GB/s counts bytes read + written; `% copy` is that over the copy "
              "bandwidth measured in the same process; torch runs in the same process on the "
              "same tensors; its row-wise and attention outputs rotate as kjit's do (each launch's "
              "output is kept alive over as many launches as there are input copies: a freed "
              "output would be written again in L2 by the next launch)."]
    if missing:
        lines += ["", "Not in this run: " + ", ".join(missing) + "."]
    return lines


def targets_section(bench, heuristic, tuned, tunes, torch, topk, host, attention=None,
                    sweep=None, sweep_mark=""):
    """One row a target: met, missed or not measured, with the numbers behind it."""
    rows = []

    def add(target, ok, detail):
        rows.append((target, ("met" if ok else "**missed**") + f": {detail}" if ok is not None
                     else "not measured"))

    if host:
        first_ms = float(host["first_call_ms"].group(1))
        add(f"first call from the disk cache, new process, < {TARGET_FIRST_CALL_MS:g} ms",
            first_ms < TARGET_FIRST_CALL_MS, f"{first_ms:.2f} ms")
        hot = float(host["hot"].group(4))
        ring = float(host["ring"].group(5)) if host["ring"] else None
        add(f"hot path < {TARGET_HOT_PATH_US:g} us above a bare launch of the same kernel",
            max(hot, ring or hot) < TARGET_HOT_PATH_US,
            f"{hot:.2f} us" + (f" (a ring launch, which takes a row-claim counter, {ring:.2f} us)"
                               if ring is not None else ""))
    else:
        add("first call from the disk cache / hot path", None, "")
    if tunes:
        walls = [t["wall_s"] for t in tunes]
        add(f"tuning a softmax shape < {TARGET_TUNE_WALL_S:g} s wall (the whole `kjit tune` process)",
            max(walls) < TARGET_TUNE_WALL_S, f"{span(walls, '.2f', ' s')} over {len(walls)} shapes")
    if tuned:
        percents = [r["percent_of_copy"] for r in tuned.values()]
        below = [r for r in tuned.values() if r["percent_of_copy"] < TARGET_PERCENT_OF_COPY]
        add(f"after tuning, softmax >= {TARGET_PERCENT_OF_COPY:g}% of copy bandwidth on every shape "
            "of >= 16M elements", not below,
            f"{len(tuned) - len(below)} of {len(tuned)} shapes, {span(percents, '.1f', '%')}")
        if heuristic:
            pairs = [(heuristic[k], r) for k, r in tuned.items() if k in heuristic]
            same = sum(1 for h, t in pairs if h["config"] == t["config"])
            worst = max(t["median_us"] / h["median_us"] for h, t in pairs)
            add("after tuning, never slower than the heuristic's pick (within the tuner's 2% ties)",
                worst <= 1 + TIE_FRACTION,
                f"{same} of {len(pairs)} winners are the heuristic's pick; tuned / heuristic "
                f"time {worst:.3f} at most")
    if torch:
        for op in ("softmax", "log_softmax"):
            speedups = [r["speedup"] for r in torch if r["op"] == op]
            if speedups:
                add(f"{op} at least as fast as torch on every shape", min(speedups) >= 1.0,
                    span(speedups, ".2f", "x"))
    if bench:
        scale = [r for r in bench.values()
                 if r["op"] == "reduce_scale" and (r["rows"], r["cols"]) in REDUCE_SCALE_TARGET_SHAPES]
        if scale:
            add(f"reduce_scale >= {TARGET_REDUCE_SCALE_PERCENT:g}% of copy bandwidth on 65536x1024 "
                "and 442368x128", all(r["percent_of_copy"] >= TARGET_REDUCE_SCALE_PERCENT for r in scale),
                ", ".join(f"{r['dtype']} {r['rows']}x{r['cols']} {r['percent_of_copy']:.1f}%"
                          for r in scale))
    for t in (topk or {}).get("targets", []):
        status = t["status"]
        rows.append((f"top-K: {t['target']}",
                     {"met": "met", "missed": "**missed**"}.get(status, status) + f": {t['detail']}"))
    for t in (attention or {}).get("targets", []):
        status = t["status"]
        rows.append((f"attention: {t['target']}",
                     {"met": "met", "missed": "**missed**"}.get(status, status) + f": {t['detail']}"))
    if sweep:
        for t in sweep_targets(sweep.get("cases", []), sweep.get("models", [])):
            status = t["status"]
            rows.append((f"shape sweep: {t['target']}",
                         {"met": "met", "missed": "**missed**"}.get(status, status) +
                         f": {t['detail']}" + (f" ({sweep_mark})" if sweep_mark else "")))
    if not rows:
        return []
    return ["## Targets", "",
            "Each target, from the tables below (the C++ benchmark for reduce_scale, the tuner's "
            "tables for the 92% target).", ""] + table(["target", "result"], rows)


def tests_section(header, sources):
    lines = []
    for source in sources:
        summary = test_summary(source)
        if not summary:
            continue
        text = f"- {source.stamp()}: {summary['passed']} of {summary['total']} suites passed"
        if summary["failed"]:
            text += "; failed: " + ", ".join(summary["failed"])
        if summary["skipped"]:
            text += "; skipped on this device: " + ", ".join(summary["skipped"])
        elif source.file("tests_full.log"):
            text += "; none skipped"
        if summary["chains"] is not None:
            text += (f"; gpu_dependent_launch checked {summary['chains']} chains of a kernel and "
                     "its dependent")
        lines.append(text + ".")
    if not lines:
        return []
    return ["## Tests", "",
            "`ctest` on the device, CPU and GPU suites (the GPU suites compare every output with a "
            "CPU reference in float64). A run of part of the suites (`TESTS_REGEX`) counts only "
            "those.", ""] + lines


def bench_section(header, source, data):
    rows = bench_rows(data).values()  # in the benchmark's own order
    out = [(r["op"], r["dtype"], f"{r['rows']}x{r['cols']}", r["config"], f"{r['median_us']:.2f}",
            f"{r['gb_per_s']:.0f}", f"{r['percent_of_copy']:.1f}",
            fmt(r.get("same_size_copy_percent") or None, ".1f"),
            fmt(r.get("percent_of_same_size_copy") or None, ".1f")) for r in rows]
    return (["## C++ benchmark: the heuristics' picks", "",
             "`bench/kjit_bench_rowwise --json` with `KJIT_TUNE=off`: each shape through "
             "`kjit::Runtime` with the config the heuristics choose (no tuning records). "
             "`same-size copy %` is a device-to-device copy of the shape's bytes between the same "
             "rotating buffers, timed the same way, as a % of the copy bandwidth (small copies "
             "reach less of it); `% of same-size` is that copy's time over the kernel's."
             + since(header, source), ""] +
            table(["op", "dtype", "shape", "config", "us", "GB/s", "% copy", "same-size copy %",
                   "% of same-size"], out))


def tune_section(header, tune_source, tunes, pair_source, heuristic, tuned):
    lines = ["## Tuner", ""]
    if tunes:
        rows = []
        for entry in tunes:
            log = entry["log"]
            configs = [c.get("config", {}) for c in log.get("candidates", [])]
            kernels = {json.dumps({k: v for k, v in c.items() if k != "cluster_grid"}, sort_keys=True)
                       for c in configs}
            count = f"{len(configs)}" + (f" ({len(kernels)} kernel{'s' if len(kernels) != 1 else ''})"
                                         if len(kernels) != len(configs) else "")
            phases = log.get("phase_seconds", {})
            split = " / ".join(fmt(phases.get(p), ".2f") for p in ("setup", "compile", "check", "timing"))
            rows.append((dtype_name(log.get("dtype", log.get("in", "?"))), f"{log.get('rows')}x{log.get('cols')}", count,
                         fmt(log.get("seconds"), ".2f"), split, f"{entry['wall_s']:.2f}"))
        lines += ["`scripts/tune_check.sh`: `kjit tune --save` for every softmax benchmark shape of "
                  "16M elements or more, each into a fresh cache, so every candidate is compiled. "
                  "`tuner s` is the tuner's own time, split into setup (scratch buffers, reference) "
                  "/ compiling and loading every candidate / checking each candidate's whole output "
                  "against the reference kernel on the GPU / timing; `wall s` is the whole "
                  "`kjit tune` process, CUDA context included. Candidates that differ only in their "
                  "cluster grid share one kernel." + since(header, tune_source), ""]
        lines += table(["dtype", "shape", "candidates", "tuner s", "setup / compile / check / timing s",
                        "wall s"], rows) + [""]
    if tuned and heuristic:
        rows = []
        for key, t in tuned.items():
            h = heuristic.get(key)
            if not h:
                continue
            rows.append((t["dtype"], f"{t['rows']}x{t['cols']}", h["config"], f"{h['median_us']:.2f}",
                         f"{h['percent_of_copy']:.1f}", t["config"], f"{t['median_us']:.2f}",
                         f"{t['percent_of_copy']:.1f}", fmt(t.get("same_size_copy_percent") or None, ".1f"),
                         fmt(t.get("percent_of_same_size_copy") or None, ".1f"),
                         "yes" if t["percent_of_copy"] >= TARGET_PERCENT_OF_COPY else "**no**"))
        lines += ["The same shapes with the tuning records (`KJIT_TUNE=cached`) beside the "
                  "heuristics' picks, both timed by the C++ benchmark in one run; `>= 92%` is the "
                  "tuned winner's % of copy bandwidth." + since(header, pair_source), ""]
        lines += table(["dtype", "shape", "heuristic", "us", "% copy", "tuned winner", "us", "% copy",
                        "same-size copy %", "% of same-size", ">= 92%"], rows)
    return lines if len(lines) > 2 else []


def torch_section(header, source, data):
    rows = [(r["op"], dtype_name(r["dtype"]), r["shape"], f"{r['kjit_us']:.2f}", f"{r['gbps']:.0f}",
             f"{r['pct_copy']:.1f}", f"{r['torch_us']:.2f}", f"{r['speedup']:.2f}x",
             f"{r['max_err']:.1e}") for r in data["results"]]
    return (["## Row-wise ops beside torch", "",
             "`bench/compare_torch.py --json` with `KJIT_TUNE=off`: kjit through its C API (ctypes) "
             "and torch (`torch.softmax`, `torch.log_softmax`, `x / x.abs().amax(-1)`) on the same "
             "tensors (normal(0, 3)) in the same process. `max err` is the largest absolute "
             "difference from torch in float64 (16-bit outputs: about one ulp of the output value; "
             "log_softmax bf16 values near -10 have a ulp of 0.06). Copy bandwidth in this process: "
             f"{data.get('copy_gbps', 0):.0f} GB/s." + since(header, source, data.get("date")), ""] +
            table(["op", "dtype", "shape", "kjit us", "GB/s", "% copy", "torch us", "speedup", "max err"],
                  rows))


def topk_section(header, source, data):
    rows = [(c["V"], c["B"], c["K"], dtype_name(c["dtype"]), fmt(c["kjit_us"], ".2f"), fmt(c["torch_us"], ".2f"),
             fmt(c["speedup"], ".2f", "x"), fmt(c["floor_us"], ".2f"), fmt(c["floor_ratio"], ".2f", "x"),
             fmt(c["gbps"], ".0f"), c["check"] if c["check"] == "ok" else f"**{c['check']}**")
            for c in data["cells"]]
    lines = ["## Softmax + top-K beside torch", "",
             "`bench/compare_topk.py --json` with `KJIT_TUNE=off`: `kjit_softmax_topk` against "
             "`torch.topk(torch.softmax(x, -1, dtype=float32), K)` on the same logits (randn * 4), "
             "in the same process; every cell's output is checked against torch before it is timed "
             "(`check`). `floor` is the time to read the logits once at the copy bandwidth; GB/s "
             "counts the logits' bytes. Copy bandwidth in this process: "
             f"{data.get('copy_gbps', 0):.0f} GB/s." + since(header, source, data.get("date")), ""]
    lines += table(["V", "B", "K", "dtype", "kjit us", "torch us", "speedup", "floor us", "kjit/floor",
                    "kjit GB/s", "check"], rows)
    for t in data.get("targets", []):
        if t["status"] == "missed":
            lines += ["", f"Target missed: {t['target']}."] + [f"- {m}" for m in t["misses"]]
    problems = [c for c in data["cells"] if c.get("problems") or c.get("notes")]
    if problems:
        lines += [""] + [f"- V={c['V']} B={c['B']} K={c['K']} {c['dtype']} ({c['check']}): "
                         + "; ".join(c.get("problems", []) + c.get("notes", [])) for c in problems]
    return lines


ATTENTION_PATHS = [("eager", "bmm-softmax-bmm"), ("sdpa_math", "SDPA math"),
                   ("sdpa_efficient", "SDPA efficient"), ("sdpa_flash", "SDPA flash"),
                   ("sdpa_cudnn", "SDPA cuDNN"), ("compile", "torch.compile")]


def attention_cell(path):
    """A path's time, or why it has none (refused, n/a, skipped, missing, FAIL, ERROR)."""
    if not path:
        return "-"
    if path.get("us") is not None:
        return f"{path['us']:.1f}"
    status = path.get("status", "-")
    return f"**{status}**" if status in ("FAIL", "ERROR", "missing") else status


def attention_section(header, source, data):
    titles = dict(ATTENTION_PATHS)
    rows = []
    for r in data["runs"]:
        paths = r.get("paths", {})
        rows.append([r["case"] + ("*" if r.get("earlier") else ""), dtype_name(r["dtype"]), r["shape"],
                     f"{r['floor_us']:.1f}",
                     attention_cell(paths.get("kjit")), fmt(r.get("floor_pct"), ".0f", "%"),
                     fmt(r.get("tflops"), ".1f"), attention_cell(paths.get("seed"))] +
                    [attention_cell(paths.get(name)) for name, _ in ATTENTION_PATHS] +
                    [titles.get(r.get("best_torch"), "-"), fmt(r.get("kjit_vs_best"), ".2f", "x"),
                     fmt(r.get("kjit_err"), ".1e"), fmt(r.get("sdpa_err"), ".1e"),
                     r["check"] if r["check"] in ("ok", "skipped") else f"**{r['check']}**"])
    lines = ["## Batched small-tile attention", "",
             "`bench/compare_attention.py --json`: `kjit_attention` (C API through ctypes), seed "
             "004's kernel (one warp per 16x16 problem, WMMA, softmax through shared memory: "
             "`bench/seed_attention.cu`, only where its design reaches), torch's bmm-softmax-bmm, "
             "`scaled_dot_product_attention` under each backend (`refused` where it raises) and "
             "`torch.compile` of the eager expression, on the same tensors in the same process; "
             "times in us. Every path's output is checked against float64 on a subsample of "
             "problems first; `err` is its largest absolute error there (SDPA: torch's default "
             "dispatch). `floor` is Q, K, V, bias and mask read once and O written once at the "
             "copy bandwidth; `% of floor` is floor / kjit time; TFLOP/s counts 2*M*N*(D+Dv) a "
             "problem; `kjit / best` is kjit's time over the fastest torch path's. SDPA gets bias "
             "and mask as one [1, W*H, M, N] attn_mask made beforehand. Copy bandwidth in this "
             f"process: {data.get('copy_gbps', 0):.0f} GB/s." + since(header, source, data.get("date")) +
             (" A case marked * was measured by an earlier call of the step (`--merge`), on "
              + ", ".join(sorted({r.get("date", "an unknown date") for r in data["runs"] if r.get("earlier")}))
              + "." if any(r.get("earlier") for r in data["runs"]) else ""),
             ""]
    lines += table(["case", "dtype", "shape", "floor us", "kjit us", "% of floor", "TFLOP/s",
                    "seed us"] + [title for _, title in ATTENTION_PATHS] +
                   ["best torch", "kjit / best", "kjit err", "SDPA err", "check"], rows)
    for t in data.get("targets", []):
        if t["status"] == "missed":
            lines += ["", f"Target missed: {t['target']}."] + [f"- {m}" for m in t["misses"]]
    problems = [r for r in data["runs"] if r.get("problems") or r.get("notes")]
    if problems:
        lines += [""] + [f"- {r['case']} {dtype_name(r['dtype'])} ({r['check']}): "
                         + "; ".join(r.get("problems", []) + r.get("notes", [])) for r in problems]
    # A run older than the kernels it stands for says what changed since (an optional "note").
    if data.get("note"):
        lines += ["", data["note"]]
    return lines


def sweep_section(header, device, source, data):
    stop = (f"; the time budget stopped it after {data.get('measured')} of {data.get('count')} "
            "shapes" if data.get("stopped_early") else "")
    return (["## Shape sweep beside torch", "",
             "`bench/sweep_shapes.py --json` with `KJIT_TUNE=off`: shapes drawn from a seed "
             "(widths log-uniform in [1, 2^20] with odd and prime ones, sizes log-uniform in "
             "[2^10, 2^28] elements, dense, padded and odd row strides, input and output each "
             "offset 0..pack-1 elements from a 16-byte boundary, every op and dtype pair), then "
             "a fixed table of real model widths. kjit through its C API (ctypes) and torch on "
             "the same tensors in the same process (torch writes a new contiguous output: its ops "
             "take none); each output is checked whole against float64 before it is timed. `pack` is the widest vector the call's pointers and strides "
             "allow (kjit's rule); `kernel of this call` is the kernel kjit compiled on the "
             "shape's first call; `explain` is kjit_explain's config for the same call on "
             "contiguous, aligned buffers. "
             f"Seed {data.get('seed')}, {data.get('count')} shapes{stop}" +
             f"{other_device(device, data)}; copy bandwidth in "
             f"this process: {data.get('copy_gbps', 0):.0f} GB/s." +
             since(header, source, data.get("date")) +
             # A sweep merged from runs (same seed) says which rows came from where.
             (" " + data["note"] if data.get("note") else ""), ""] + sweep_lines(data))


def host_section(header, source, host):
    rows = [("first call of a shape whose cubin is on disk, in a new process (runtime made, "
             "context already current)", f"{float(host['first_call_ms'].group(1)):.2f} ms")]
    hot = host["hot"]
    rows.append((f"hot path, fp32 64x1000: kjit_softmax beside a bare {hot.group(2)} of the same kernel",
                 f"{hot.group(1)} / {hot.group(3)} us a call: {hot.group(4)} us above"))
    ring = host["ring"]
    if ring:
        rows.append((f"hot path, fp32 {ring.group(1).split()[-1]} ({ring.group(2)}), which also takes "
                     "a row-claim counter", f"{ring.group(3)} / {ring.group(4)} us a call: "
                                            f"{ring.group(5)} us above"))
    return (["## Host-side costs", "",
             "`bench/kjit_bench_rowwise --host`, run after an earlier process put the cubin on disk. "
             "Host time a call, kjit against a bare launch with the same launch attributes: medians "
             "of 40 batches of 100 calls that alternate between the two, the queue drained between "
             "batches." + since(header, source), ""] + table(["measure", "result"], rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", help="output folders of gpu_check.sh, first wins")
    parser.add_argument("--out", help="where to write RESULTS.md (default: OUT_DIR/RESULTS.md)")
    args = parser.parse_args()
    sources = [Source(d) for d in args.dirs]
    header = sources[0]

    _, device = first(sources, lambda s: device_line(s.text("info.log")))
    bench_src, bench = first(sources, lambda s: s.json("bench_rowwise.json"))
    host_src, host = first(sources, lambda s: host_costs(s.text("host_overhead.txt")))
    tune_src, tunes = first(sources, tune_logs)
    tuned_src, tuned = first(sources, lambda s: s.json("bench_tuned.json"))
    _, heuristic_data = first([tuned_src] if tuned_src else [],
                              lambda s: s.json("bench_heuristic.json") or s.json("bench_rowwise.json"))
    torch_src, torch_data = first(sources, lambda s: s.json("compare_torch.json"))
    topk_src, topk = first(sources, lambda s: s.json("compare_topk.json"))
    attention_src, attention = first(sources, lambda s: s.json("compare_attention.json"))

    tuned_rows, heuristic_rows = bench_rows(tuned), bench_rows(heuristic_data)
    torch_version = ((torch_data or {}).get("torch") or (topk or {}).get("torch") or
                     (attention or {}).get("torch"))
    sweep_src, sweep = first(sources, lambda s: s.json("sweep.json"))

    tuned_rows, heuristic_rows = bench_rows(tuned), bench_rows(heuristic_data)
    torch_version = ((torch_data or {}).get("torch") or (topk or {}).get("torch") or
                     (sweep or {}).get("torch"))
    copy_gbps = (bench or {}).get("copy_gb_per_s") or (torch_data or {}).get("copy_gbps")
    missing = [name for name, value in (("C++ benchmark", bench), ("host costs", host),
                                        ("tuner", tunes or tuned), ("torch comparison", torch_data),
                                        ("top-K comparison", topk)) if not value]

    lines = header_lines(header, device, copy_gbps, torch_version, missing)
    sections = [
        targets_section(bench_rows(bench), heuristic_rows, tuned_rows, tunes,
                        (torch_data or {}).get("results"), topk, host, attention, sweep,
                        sweep_mark(header, device, sweep_src, sweep)),
        tests_section(header, sources),
        bench_section(header, bench_src, bench) if bench else [],
        tune_section(header, tune_src, tunes, tuned_src, heuristic_rows, tuned_rows),
        torch_section(header, torch_src, torch_data) if torch_data else [],
        topk_section(header, topk_src, topk) if topk else [],
        attention_section(header, attention_src, attention) if attention else [],
        sweep_section(header, device, sweep_src, sweep) if sweep else [],
        host_section(header, host_src, host) if host else [],
    ]
    for section in sections:
        if section:
            lines += [""] + section
    out = args.out or os.path.join(args.dirs[0], "RESULTS.md")
    lines = wrapped(lines)
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"results_report: wrote {out} ({len(lines) + 1} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
