# SPDX-License-Identifier: Apache-2.0
"""What sweep_shapes.py measured, summed up: the distribution of % of copy bandwidth and of the
speed ratio to torch by target class, its targets met or missed, the worst shapes, the
model table. Works on the JSON's plain dicts, without torch, so that results_report.py renders
the same section from a run's file (even one cut short: everything is computed from the cases).
"""
from sweep_draw import LARGE_ELEMENTS, NARROW_COLS, target_class

MIN_PERCENT_LARGE = 90.0
MEDIAN_PERCENT_LARGE = 94.0
MIN_PERCENT_NARROW = 80.0
MIN_RATIO = 1.0
WORST = 10
CLASS_NAMES = {"large": f">= 16M elements, >= {NARROW_COLS} cols",
               "narrow": f"< {NARROW_COLS} cols", "narrow_large": f"< {NARROW_COLS} cols, >= 16M "
               "elements", "rest": f"< 16M elements, >= {NARROW_COLS} cols", "all": "every shape"}


def percentile(values, fraction):
    """Linear interpolation between the closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return None
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def timed(cases):
    """Cases whose result was right and that both sides timed."""
    return [c for c in cases if c.get("check") == "ok" and c.get("kjit_us") and c.get("torch_us")]


def class_members(cases, name):
    if name == "all":
        return list(cases)
    if name == "narrow_large":
        return [c for c in cases if c["cols"] < NARROW_COLS and c["rows"] * c["cols"] >= LARGE_ELEMENTS]
    return [c for c in cases if target_class(c["rows"], c["cols"]) == name]


def distribution(cases):
    """One row a class: counts, % of copy (min, p10, median), kjit/torch speed (min, median)."""
    rows = []
    for name in ("large", "narrow", "narrow_large", "rest", "all"):
        members = class_members(cases, name)
        good = timed(members)
        percents = [c["pct_copy"] for c in good]
        ratios = [c["ratio"] for c in good]
        rows.append({"class": name, "shapes": len(members), "timed": len(good),
                     "failed": sum(1 for c in members if c.get("check") not in ("ok", None)),
                     "min_pct": min(percents, default=None), "p10_pct": percentile(percents, 0.1),
                     "median_pct": percentile(percents, 0.5), "min_ratio": min(ratios, default=None),
                     "median_ratio": percentile(ratios, 0.5)})
    return rows


def label(case):
    return (f"{case['op']} {case['in']}->{case['out']} {case['rows']}x{case['cols']} "
            f"(strides {case['in_stride']}/{case['out_stride']}, offsets "
            f"{case['in_offset']}/{case['out_offset']})")


def threshold_target(text, members, value_of, limit, describe_worst):
    """Every member's value at least `limit`: met, missed (listing the misses) or not measured."""
    good = timed(members)
    failed = [c for c in members if c.get("check") not in ("ok", None)]
    misses = [f"{label(c)}: {describe_worst(c)}" for c in good if value_of(c) < limit]
    misses += [f"{label(c)}: {c['check']}" for c in failed]
    worst = min(good, key=value_of, default=None)
    detail = (f"{len(good) - sum(1 for c in good if value_of(c) < limit)} of {len(members)} "
              "shapes meet it")
    if worst is not None:
        detail += f"; lowest {describe_worst(worst)} at {label(worst)}"
    status = "not measured" if not good and not failed else ("missed" if misses else "met")
    return {"target": text, "status": status, "detail": detail, "misses": misses}


def evaluate_targets(cases, models):
    targets = []
    large = class_members(cases, "large")
    targets.append(threshold_target(
        f"every sweep shape of >= 16M elements and >= {NARROW_COLS} cols at >= "
        f"{MIN_PERCENT_LARGE:g}% of copy", large, lambda c: c["pct_copy"], MIN_PERCENT_LARGE,
        lambda c: f"{c['pct_copy']:.1f}%"))
    median = percentile([c["pct_copy"] for c in timed(large)], 0.5)
    targets.append({"target": f"median of those >= {MEDIAN_PERCENT_LARGE:g}% of copy",
                    "status": "not measured" if median is None else
                    ("met" if median >= MEDIAN_PERCENT_LARGE else "missed"),
                    "detail": "-" if median is None else f"{median:.1f}% over {len(timed(large))} "
                                                         "shapes", "misses": []})
    targets.append(threshold_target(
        f"every sweep shape of >= 16M elements and < {NARROW_COLS} cols at >= "
        f"{MIN_PERCENT_NARROW:g}% of copy", class_members(cases, "narrow_large"),
        lambda c: c["pct_copy"], MIN_PERCENT_NARROW, lambda c: f"{c['pct_copy']:.1f}%"))
    targets.append(threshold_target(
        "no sweep shape slower than torch", cases, lambda c: c["ratio"], MIN_RATIO,
        lambda c: f"{c['ratio']:.2f}x"))
    targets.append(threshold_target(
        "no model-table shape slower than torch", models, lambda c: c["ratio"], MIN_RATIO,
        lambda c: f"{c['ratio']:.2f}x"))
    for c in models:
        if c.get("target_us") is None:
            continue
        text = f"{c['in']} {c['rows']}x{c['cols']} {c['op']} at most {c['target_us']:g} us"
        if c.get("check") != "ok" or not c.get("kjit_us"):
            targets.append({"target": text, "status": "missed" if c.get("check") not in
                            ("ok", None) else "not measured", "detail": c.get("check", "-"),
                            "misses": []})
            continue
        targets.append({"target": text, "status": "met" if c["kjit_us"] <= c["target_us"] else
                        "missed", "detail": f"{c['kjit_us']:.1f} us", "misses": []})
    return targets


def worst(cases, key, count=WORST):
    return sorted(timed(cases), key=key)[:count]


def worst_by_percent(cases):
    """Lowest % of copy among shapes of >= 16M elements (where % of copy has a target; smaller
    shapes are bound by the launch, not by bandwidth)."""
    return worst([c for c in cases if c["rows"] * c["cols"] >= LARGE_ELEMENTS],
                 lambda c: c["pct_copy"])


def worst_by_ratio(cases):
    return worst(cases, lambda c: c["ratio"])


def fmt(value, spec, suffix=""):
    return "-" if value is None else f"{value:{spec}}{suffix}"


def table(columns, rows):
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]


def explain_text(case):
    report = case.get("explain")
    if not report:
        return "-"
    config = report.get("config")
    if isinstance(config, dict):
        return " ".join(f"{k}={v}" for k, v in config.items())
    return str(config or report.get("kernel", "-"))


def shape_rows(cases):
    return [(c["op"], f"{c['in']}->{c['out']}", f"{c['rows']}x{c['cols']}",
             f"{c['in_stride']} ({c['in_layout']}) + {c['in_offset']}",
             f"{c['out_stride']} ({c['out_layout']}) + {c['out_offset']}", c.get("pack", "-"),
             fmt(c.get("kjit_us"), ".2f"), fmt(c.get("pct_copy"), ".1f"),
             fmt(c.get("torch_us"), ".2f"), fmt(c.get("ratio"), ".2f", "x"),
             f"`{c['kernel']}`" if c.get("kernel") else "-", explain_text(c)) for c in cases]


SHAPE_COLUMNS = ["op", "in->out", "rows x cols", "in stride (layout) + offset",
                 "out stride (layout) + offset", "pack", "kjit us", "% copy", "torch us",
                 "kjit/torch", "kernel of this call", "explain (contiguous, aligned call)"]


def target_lines(targets):
    lines = []
    for n, t in enumerate(targets, 1):
        status = {"met": "met", "missed": "**missed**"}.get(t["status"], t["status"])
        lines.append(f"{n}. {t['target']}: {status} ({t['detail']})")
        lines += [f"    - {m}" for m in t["misses"][:WORST]]
        if len(t["misses"]) > WORST:
            lines.append(f"    - and {len(t['misses']) - WORST} more")
    return lines


def distribution_lines(cases):
    rows = [(CLASS_NAMES[r["class"]], r["shapes"], r["timed"], r["failed"],
             fmt(r["min_pct"], ".1f"), fmt(r["p10_pct"], ".1f"), fmt(r["median_pct"], ".1f"),
             fmt(r["min_ratio"], ".2f", "x"), fmt(r["median_ratio"], ".2f", "x"))
            for r in distribution(cases)]
    return table(["class", "shapes", "timed", "failed", "min % copy", "p10 % copy",
                  "median % copy", "min kjit/torch", "median kjit/torch"], rows)


def model_lines(models):
    rows = [(c["group"], c["label"], c["op"], c["in"], f"{c['rows']}x{c['cols']}",
             fmt(c.get("kjit_us"), ".2f"), fmt(c.get("pct_copy"), ".1f"),
             fmt(c.get("torch_us"), ".2f"), fmt(c.get("ratio"), ".2f", "x"),
             fmt(c.get("target_us"), "g", " us"),
             c.get("check", "-") if c.get("check") in ("ok", None) else f"**{c['check']}**",
             f"`{c['kernel']}`" if c.get("kernel") else "-")
            for c in models]
    return table(["group", "model; rows", "op", "dtype", "rows x cols", "kjit us", "% copy",
                  "torch us", "kjit/torch", "target", "check", "kernel"], rows)


def problem_lines(cases):
    return [f"- {label(c)} ({c['check']}): {'; '.join(c.get('problems', []))}"
            for c in cases if c.get("check") not in ("ok", None)]


def section_lines(data):
    """The report's body (no top heading): distribution, targets, worst shapes, failures, models."""
    cases, models = data.get("cases", []), data.get("models", [])
    lines = ["### Distribution by class", "",
             "`kjit/torch` is torch's time over kjit's (above 1: kjit is faster).", ""]
    lines += distribution_lines(cases)
    first_calls = [c["first_call_ms"] for c in cases + models if c.get("first_call_ms")]
    if first_calls:
        lines += ["", f"First calls (a compile into a fresh cache, where the kernel is new): median "
                      f"{percentile(first_calls, 0.5):.0f} ms, slowest {max(first_calls):.0f} ms, "
                      f"over {len(first_calls)} shapes and model cells."]
    lines += ["", "### Targets", ""]
    lines += target_lines(evaluate_targets(cases, models))
    by_percent, by_ratio = worst_by_percent(cases), worst_by_ratio(cases)
    if by_percent:
        lines += ["", f"### Worst {len(by_percent)} by % of copy (shapes of >= 16M elements)", ""]
        lines += table(SHAPE_COLUMNS, shape_rows(by_percent))
    if by_ratio:
        lines += ["", f"### Worst {len(by_ratio)} by speed beside torch", ""]
        lines += table(SHAPE_COLUMNS, shape_rows(by_ratio))
    problems = problem_lines(cases + models)
    if problems:
        lines += ["", "### Failures", ""] + problems
    if models:
        lines += ["", "### Real model widths", "",
                  "Contiguous tensors as torch allocates them (aligned). Rows: vocabularies at 64 "
                  "(a decode step of 64 sequences) and 4096 (tokens of a prefill or training "
                  "chunk); attention scores at batch x heads x queries rows (768 = batch 64 x 12 "
                  "heads, fewer for 1024 and 4096 keys so that the scores stay under 256M "
                  "elements); hidden sizes at 16384 tokens. `target` is the time target "
                  "for that shape.", ""]
        lines += model_lines(models)
    return lines
