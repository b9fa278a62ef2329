#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shape sweep without a GPU: `sweep_shapes.py --list` with a fixed seed draws shapes with the
promised properties (sizes and widths in range, odd and prime widths, every layout, either side
misaligned alone and both, every op and dtype pair, the memory cap kept), the same ones each time;
its summary sorts results into the target classes and targets; results_report.py renders a sweep
only when there is one, with a merged sweep's note. Needs no torch. Exits non-zero naming each failed check."""
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "support"))

import expectations  # noqa: E402
import sweep_draw as draw  # noqa: E402
import sweep_summary as summary  # noqa: E402
from expectations import expect  # noqa: E402

SEED, COUNT = 20261126, 400


def share(shapes, predicate):
    return sum(1 for s in shapes if predicate(s)) / len(shapes)


def check_listing():
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "sweep_shapes.py"), "--list",
                          "--seed", str(SEED), "--count", str(COUNT)],
                         capture_output=True, text=True, timeout=120)
    expect(run.returncode == 0, f"--list exits 0 (got {run.returncode}: {run.stderr[-500:]})")
    lines = run.stdout.splitlines()
    expect(lines[:2] == [f"seed {SEED}", f"count {COUNT}"], "--list prints the seed, then the count")
    shapes = draw.draw_shapes(SEED, COUNT)
    rows = [line for line in lines if line.startswith("| ") and line[2].isdigit()]
    expect(len(rows) == COUNT, f"--list prints one row a shape ({len(rows)} of {COUNT})")
    expect(all(f"| {s['rows']}x{s['cols']} |" in row for s, row in zip(shapes, rows)),
           "--list prints the shapes draw_shapes gives for the seed")
    expect(any(line.startswith("classes: ") for line in lines), "--list counts the classes")
    again = subprocess.run([sys.executable, str(ROOT / "bench" / "sweep_shapes.py"), "--list",
                            "--count", "3"], capture_output=True, text=True, timeout=120)
    expect(again.returncode == 0 and again.stdout.startswith("seed "),
           "--list without --seed draws a seed and prints it first")
    only = subprocess.run([sys.executable, str(ROOT / "bench" / "sweep_shapes.py"), "--list",
                           "--seed", str(SEED), "--count", str(COUNT), "--only", "1,3-4"],
                          capture_output=True, text=True, timeout=120)
    kept = [line for line in only.stdout.splitlines() if line.startswith("| ") and line[2].isdigit()]
    expect(only.returncode == 0 and [row.split(" | ")[0] for row in kept] == ["| 1", "| 3", "| 4"],
           f"--only 1,3-4 keeps those shapes under their own numbers (got {kept})")
    expect(all(f"| {shapes[n]['rows']}x{shapes[n]['cols']} |" in row for n, row in zip((1, 3, 4), kept)),
           "--only keeps the shapes the seed drew under those numbers")
    bad = subprocess.run([sys.executable, str(ROOT / "bench" / "sweep_shapes.py"), "--list", "--only", "2-x"],
                         capture_output=True, text=True, timeout=120)
    expect(bad.returncode != 0 and "--only" in bad.stderr, "a bad --only is refused, naming the option")


def check_ranges(shapes):
    expect(all(draw.MIN_COLS <= s["cols"] <= draw.MAX_COLS for s in shapes), "widths in [1, 2^20]")
    expect(all(draw.MIN_ELEMENTS <= s.elements <= draw.MAX_ELEMENTS for s in shapes),
           "sizes in [2^10, 2^28] elements")
    expect(min(s["cols"] for s in shapes) < 8 and max(s["cols"] for s in shapes) > 1 << 17,
           "widths reach both ends of the range")
    small = share(shapes, lambda s: s.elements < 1 << 14)
    large = share(shapes, lambda s: s.elements >= draw.LARGE_ELEMENTS)
    expect(0.1 < small < 0.4 and 0.1 < large < 0.4,
           f"sizes spread log-uniformly (< 16K: {small:.2f}, >= 16M: {large:.2f})")
    expect(share(shapes, lambda s: s["cols"] % 2) >= 0.4, "at least 40% odd widths")
    expect(share(shapes, lambda s: draw.is_prime(s["cols"])) >= 0.2, "at least 20% prime widths")
    expect({s.target_class for s in shapes} == {"large", "narrow", "rest"}, "every class drawn")


def check_layouts(shapes):
    for side in ("in", "out"):
        expect({s[f"{side}_layout"] for s in shapes} == {"dense", "padded", "odd"},
               f"every {side} layout drawn")
        expect(all(s[f"{side}_stride"] == s["cols"] for s in shapes if s[f"{side}_layout"] == "dense"),
               f"dense {side} strides equal the width")
        expect(all(s[f"{side}_stride"] > s["cols"] for s in shapes
                   if s[f"{side}_layout"] != "dense"), f"padded and odd {side} strides pass the width")
        expect(all(s[f"{side}_stride"] % 2 for s in shapes if s[f"{side}_layout"] == "odd"),
               f"odd {side} strides are odd")
        expect(all(0 <= s[f"{side}_offset"] < draw.pack_of(s[side]) for s in shapes),
               f"{side} offsets in 0..pack-1")
    kinds = {draw.misalignment(s) for s in shapes}
    expect(kinds == {"none", "in", "out", "both"},
           f"input alone, output alone, both and neither misaligned ({sorted(kinds)})")
    expect({s["op"] for s in shapes} == set(draw.OPS), "every op drawn")
    expect({(s["in"], s["out"]) for s in shapes} == {pair for pair, _ in draw.PAIRS},
           "every dtype pair drawn")
    expect(any(s.pack == 1 for s in shapes) and any(s.pack == 16 // draw.SIZE[s["in"]]
                                                     for s in shapes), "scalar and full packs")


def check_memory():
    for gb in (draw.DEFAULT_MAX_GB, 3):
        shapes = draw.draw_shapes(SEED, COUNT, gb << 30)
        expect(all(s.footprint_bytes <= gb << 30 for s in shapes),
               f"every footprint within a {gb} GB cap")
        if gb == 3:
            expect(any(s["capped"] for s in shapes), "a small cap cuts rows")
    expect(all(s.sets * s.touched_bytes >= 2 * (50 << 20) or s.sets == draw.MAX_SETS
               for s in draw.draw_shapes(SEED, COUNT)), "rotation passes twice an H100's L2")


def check_pack_rule():
    expect(draw.call_pack("f32", "f32", 8, 0, 0, 64, 64) == 4, "aligned fp32: pack 4")
    expect(draw.call_pack("bf16", "bf16", 8, 8, 0, 64, 64) == 4, "bf16 8 bytes in: pack 4")
    expect(draw.call_pack("bf16", "f32", 8, 0, 0, 64, 64) == 4, "bf16 -> fp32: fp32's pack")
    expect(draw.call_pack("f16", "f16", 8, 0, 0, 63, 64) == 1, "an odd stride: pack 1")
    expect(draw.call_pack("f16", "f16", 1, 0, 0, 63, 64) == 8, "one row: strides do not count")


def check_repeatable():
    first = draw.draw_shapes(SEED, 50)
    expect(first == draw.draw_shapes(SEED, 50), "the same seed draws the same shapes")
    expect(first != draw.draw_shapes(SEED + 1, 50), "another seed draws other shapes")
    expect(draw.draw_shapes(SEED, 60)[:50] == first, "a larger count extends the same list")


def case(rows, cols, pct, ratio, check="ok", **extra):
    shape = draw.dense("softmax", "bf16", "bf16", rows, cols, "x", "x")
    return dict(shape, check=check, problems=[] if check == "ok" else ["wrong"], notes=[],
                kjit_us=10.0, torch_us=10.0 * ratio, pct_copy=pct, ratio=ratio, **extra)


def check_summary():
    cases = [case(1 << 14, 1 << 10, 95.0, 1.2), case(1 << 16, 1 << 10, 91.0, 1.1),
             case(1 << 20, 33, 85.0, 1.5), case(100, 100, 5.0, 0.9),
             case(200, 100, 5.0, 1.0, check="FAIL")]
    rows = {r["class"]: r for r in summary.distribution(cases)}
    expect(rows["large"]["shapes"] == 2 and rows["narrow"]["shapes"] == 1 and
           rows["rest"]["shapes"] == 2 and rows["all"]["shapes"] == 5, "classes split the cases")
    expect(rows["rest"]["failed"] == 1 and rows["rest"]["timed"] == 1, "a failed case is not timed")
    expect(abs(rows["large"]["median_pct"] - 93.0) < 1e-9, "the median interpolates")
    expect(abs(summary.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 0.1) - 2.0) < 1e-9,
           "the 10th percentile")
    targets = {t["target"]: t["status"] for t in summary.evaluate_targets(cases, [])}
    statuses = list(targets.values())
    expect(statuses[:4] == ["met", "missed", "met", "missed"],
           f"targets: 90% met, median 94% missed, narrow 80% met, slower than torch missed "
           f"({statuses[:4]})")
    expect(statuses[4] == "not measured", "no model table: not measured")
    timed_model = case(4096, 50257, 60.0, 0.7, target_us=305.0)
    model_targets = summary.evaluate_targets([], [timed_model])
    expect(model_targets[-1]["status"] == "met" and "10.0 us" in model_targets[-1]["detail"],
           "a model time target is judged on kjit's time")
    lines = summary.section_lines({"cases": cases, "models": [timed_model]})
    expect(any(line.startswith("### Failures") for line in lines), "failures are listed")
    expect(any("Worst" in line for line in lines), "worst shapes are listed")


def check_report():
    report = ROOT / "bench" / "results_report.py"
    with tempfile.TemporaryDirectory() as folder:
        out = pathlib.Path(folder)
        (out / "run.json").write_text('{"date": "2026-01-01 00:00 UTC", "commit": "abc"}\n')
        subprocess.run([sys.executable, str(report), folder], check=True, capture_output=True)
        without = (out / "RESULTS.md").read_text()
        expect("Shape sweep" not in without and "shape sweep" not in without,
               "no sweep section without sweep.json")
        data = {"date": "2026-01-01 00:00 UTC", "seed": SEED, "count": 5, "copy_gbps": 3000.0,
                "torch": "2.x", "cases": [case(1 << 14, 1 << 10, 95.0, 1.2)], "models": []}
        (out / "sweep.json").write_text(json.dumps(data))
        subprocess.run([sys.executable, str(report), folder], check=True, capture_output=True)
        with_sweep = (out / "RESULTS.md").read_text()
        expect("## Shape sweep beside torch" in with_sweep and f"Seed {SEED}" in with_sweep,
               "a sweep section with sweep.json")
        expect("shape sweep: every sweep shape" in with_sweep, "the sweep's targets in the table")
        data["note"] = "Some rows are from another run."
        (out / "sweep.json").write_text(json.dumps(data))
        subprocess.run([sys.executable, str(report), folder], check=True, capture_output=True)
        flat = " ".join((out / "RESULTS.md").read_text().split())  # the report wraps its lines
        expect("Some rows are from another run." in flat, "a merged sweep's note in its section")
        expect("on NVIDIA" not in flat, "no device named where the sweep names none")
        (out / "info.log").write_text("gpu 0: NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 50 MB L2\n")
        data["device"] = "NVIDIA H200"
        (out / "sweep.json").write_text(json.dumps(data))
        subprocess.run([sys.executable, str(report), folder], check=True, capture_output=True)
        flat = " ".join((out / "RESULTS.md").read_text().split())
        expect("shapes on NVIDIA H200" in flat and "(on NVIDIA H200)" in flat,
               "a sweep run on another device than the header's names it, in its section and targets")
        (out / "info.log").unlink()
        attention = {"date": "2026-01-01 00:00 UTC", "copy_gbps": 3000.0, "runs": [],
                     "note": "Since then the kernels changed."}
        (out / "compare_attention.json").write_text(json.dumps(attention))
        subprocess.run([sys.executable, str(report), folder], check=True, capture_output=True)
        flat = " ".join((out / "RESULTS.md").read_text().split())
        expect("Batched small-tile attention" in flat and "Since then the kernels changed." in flat,
               "an attention run's note in its section")


def main():
    shapes = draw.draw_shapes(SEED, COUNT)
    check_listing()
    check_ranges(shapes)
    check_layouts(shapes)
    check_memory()
    check_pack_rule()
    check_repeatable()
    check_summary()
    check_report()
    return expectations.summary()


if __name__ == "__main__":
    sys.exit(main())
