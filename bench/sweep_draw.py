# SPDX-License-Identifier: Apache-2.0
"""The shapes of the row-wise sweep (sweep_shapes.py), drawn from a seed, and the fixed table of
real model widths beside them. Free of torch and of any GPU, so that a list can be drawn, printed
and checked anywhere.

A shape is one call: op, input and output dtype, rows, cols, and for each side a layout (dense:
row stride = cols; padded: stride rounded up past cols to a multiple of 2..128 elements; odd: an
odd stride above cols) and an offset of 0..pack-1 elements into a larger buffer, which misaligns
that side's rows from 16 bytes (pack = 16 bytes / element size). Widths are log-uniform in
[1, 2^20], a share of them forced odd or prime; sizes are log-uniform in [2^10, 2^28] elements
(at least the width: a shape has one row or more).
"""
import math
import random

from rotation import WORKING_SET, rotation_sets

MIN_COLS, MAX_COLS = 1, 1 << 20
MIN_ELEMENTS, MAX_ELEMENTS = 1 << 10, 1 << 28
LARGE_ELEMENTS = 1 << 24  # the targets on % of copy apply from here up
NARROW_COLS = 64
VECTOR_BYTES = 16
SIZE = {"f32": 4, "bf16": 2, "f16": 2}
OPS = ("softmax", "log_softmax", "reduce_scale")

# Every (in, out) pair the C API accepts. The first five are how the ops are used; the narrowing
# and 16-bit-to-other-16-bit pairs are accepted too and get a smaller share.
PAIRS = [(("f32", "f32"), 3), (("bf16", "bf16"), 3), (("f16", "f16"), 2), (("bf16", "f32"), 2),
         (("f16", "f32"), 2), (("f32", "bf16"), 1), (("f32", "f16"), 1), (("bf16", "f16"), 0.5),
         (("f16", "bf16"), 0.5)]
WIDTH_KINDS = [("drawn", 0.40), ("odd", 0.25), ("prime", 0.25), ("multiple of 8", 0.10)]
LAYOUTS = [("dense", 0.4), ("padded", 0.3), ("odd", 0.3)]
ALIGNED_SHARE = 0.5  # of each side's offsets: 0; the rest uniform in 1..pack-1

MAX_SETS = 4096
# GPU memory one shape may take: its buffers times their rotation copies, plus what torch and the
# checks allocate beside them (extra_bytes). Leaves room on an 80 GB GPU for torch's cache.
DEFAULT_MAX_GB = 32


def is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    return all(n % d for d in range(3, math.isqrt(n) + 1, 2))


def next_prime(n):
    while not is_prime(n):
        n += 1
    return n


def round_up(value, multiple):
    return -(-value // multiple) * multiple


def pack_of(dtype):
    return VECTOR_BYTES // SIZE[dtype]


class Shape(dict):
    """One call of the sweep or of the model table, as a dict (it goes to JSON as is)."""

    @property
    def elements(self):
        return self["rows"] * self["cols"]

    def span(self, side):
        """Elements one rotation copy of a side's buffer takes: the offset, every row at its
        stride, and a guard of one vector past the end (writes there are caught)."""
        stride, offset = self[f"{side}_stride"], self[f"{side}_offset"]
        return round_up(offset + self["rows"] * stride + VECTOR_BYTES, 64)

    @property
    def touched_bytes(self):
        return self.elements * (SIZE[self["in"]] + SIZE[self["out"]])

    @property
    def sets(self):
        return rotation_sets(self.touched_bytes, MAX_SETS)

    @property
    def buffer_bytes(self):
        return self.sets * sum(self.span(side) * SIZE[self[side]] for side in ("in", "out"))

    @property
    def extra_bytes(self):
        """torch's output, reduce_scale's |x| and a padded input's contiguous copy, the checks'
        temporaries (row chunks of 16M elements in float64), with some slack."""
        widest = max(4, SIZE[self["in"]], SIZE[self["out"]])
        return 3 * self.elements * widest + (1 << 30)

    @property
    def footprint_bytes(self):
        return self.buffer_bytes + self.extra_bytes

    @property
    def pack(self):
        """The widest pack kjit's rule (runtime/ops/rowwise/rowwise_problem.cpp, max_pack_for)
        allows this call, for buffers that start 16-byte aligned before the offsets."""
        return call_pack(self["in"], self["out"], self["rows"], self["in_offset"] * SIZE[self["in"]],
                         self["out_offset"] * SIZE[self["out"]], self["in_stride"], self["out_stride"])

    @property
    def target_class(self):
        return target_class(self["rows"], self["cols"])


def call_pack(in_dtype, out_dtype, rows, in_address, out_address, in_stride, out_stride):
    """Widest power-of-two pack (elements, at most 16 bytes of the wider type) that both
    addresses and, for more than one row, both row strides allow: kjit's rule for the call."""
    in_size, out_size = SIZE[in_dtype], SIZE[out_dtype]
    pack = VECTOR_BYTES // max(in_size, out_size)
    while pack > 1:
        pointers = in_address % (pack * in_size) == 0 and out_address % (pack * out_size) == 0
        strides = rows <= 1 or (in_stride % pack == 0 and out_stride % pack == 0)
        if pointers and strides:
            return pack
        pack //= 2
    return 1


def target_class(rows, cols):
    """The target classes: "large" (>= 16M elements and >= 64 columns), "narrow" (< 64
    columns, any size) and "rest"."""
    if cols < NARROW_COLS:
        return "narrow"
    return "large" if rows * cols >= LARGE_ELEMENTS else "rest"


def weighted(rng, choices):
    values, weights = zip(*choices)
    return rng.choices(values, weights)[0]


def log_uniform_int(rng, low, high):
    """An integer in [low, high], its logarithm uniform."""
    return min(high, int(math.exp(rng.uniform(math.log(low), math.log(high + 1)))))


def draw_width(rng):
    cols = log_uniform_int(rng, MIN_COLS, MAX_COLS)
    kind = weighted(rng, WIDTH_KINDS)
    if kind == "odd":
        cols |= 1
    elif kind == "prime":
        cols = next_prime(max(2, cols))
    elif kind == "multiple of 8":
        cols = round_up(cols, 8)
    return min(cols, MAX_COLS), kind


def draw_stride(rng, cols, layout):
    if layout == "dense":
        return cols
    if layout == "padded":  # as a slice of a wider tensor whose rows are rounded up
        multiple = rng.choice((2, 8, 16, 64, 128))
        multiple = min(multiple, max(2, 1 << (cols - 1).bit_length()))
        return round_up(cols + 1, multiple)
    extra = rng.randint(1, max(1, cols // 16))
    stride = cols + extra
    return stride if stride % 2 else stride + 1


def draw_offset(rng, dtype):
    if rng.random() < ALIGNED_SHARE:
        return 0
    return rng.randint(1, pack_of(dtype) - 1)


def draw_shape(rng, max_bytes):
    cols, width_kind = draw_width(rng)
    (in_dtype, out_dtype) = weighted(rng, PAIRS)
    size = log_uniform_int(rng, max(MIN_ELEMENTS, cols), MAX_ELEMENTS)
    rows = max(1, -(-MIN_ELEMENTS // cols), round(size / cols))
    rows = min(rows, MAX_ELEMENTS // cols)
    shape = Shape(op=rng.choice(OPS), **{"in": in_dtype, "out": out_dtype}, rows=rows, cols=cols,
                  width_kind=width_kind, capped=False)
    for side, dtype in (("in", in_dtype), ("out", out_dtype)):
        layout = weighted(rng, LAYOUTS)
        shape[f"{side}_layout"] = layout
        shape[f"{side}_stride"] = draw_stride(rng, cols, layout)
        shape[f"{side}_offset"] = draw_offset(rng, dtype)
    while shape.footprint_bytes > max_bytes and shape["rows"] > 1:
        shape["rows"] = max(1, shape["rows"] * 3 // 4)
        shape["capped"] = True
    return shape


def draw_shapes(seed, count, max_bytes=DEFAULT_MAX_GB << 30):
    """`count` shapes from `seed`: the same seed and count give the same shapes."""
    rng = random.Random(seed)
    shapes = [draw_shape(rng, max_bytes) for _ in range(count)]
    for number, shape in enumerate(shapes):
        shape["number"] = number  # what --only names, kept when a run measures only some
    return shapes


def new_seed():
    return random.SystemRandom().randrange(1 << 32)


def dense(op, in_dtype, out_dtype, rows, cols, group, label):
    return Shape(op=op, **{"in": in_dtype, "out": out_dtype}, rows=rows, cols=cols,
                 width_kind="model", capped=False, in_layout="dense", in_stride=cols,
                 in_offset=0, out_layout="dense", out_stride=cols, out_offset=0, group=group,
                 label=label)


VOCABULARIES = [(30522, "BERT"), (32000, "Llama 2"), (32001, "Llama 2 + pad token"),
                (32128, "T5"), (50257, "GPT-2"), (50304, "GPT-2 padded to 64"),
                (128256, "Llama 3"), (151936, "Qwen2"), (152064, "Qwen2 72B"), (256000, "Gemma")]
VOCAB_ROWS = [(64, "a decode step of 64 sequences"), (4096, "4096 tokens of prefill or training")]
# Self-attention scores: rows = batch * heads * queries, queries = keys = cols.
ATTENTION = [(49, 768, "Swin 7x7 window"), (64, 768, "8x8 patches"), (77, 768, "CLIP text"),
             (197, 768, "ViT-B/16 at 224"), (257, 768, "ViT-L/14 at 224"),
             (577, 768, "ViT-L/14 at 336"), (1024, 256, "1024 tokens"),
             (4096, 16, "a 64x64 latent (batch 2, 8 heads)")]
HIDDEN = [(768, "BERT-base / ViT-B hidden"), (1000, "ImageNet classes"), (4096, "Llama 7B hidden")]
HIDDEN_ROWS = 16384  # tokens: 8 sequences of 2048
# The four shapes with a time target (us), each a softmax.
TIME_TARGETS = [("bf16", 4096, 50257, 305.0), ("bf16", 8192, 32001, 390.0),
                 ("f16", 65536, 49, 6.0), ("f32", 100000, 96, 28.0)]
MODEL_DTYPES = ("bf16", "f32")


def model_shapes():
    """The fixed table: vocabularies (softmax, log_softmax), attention scores (softmax) and hidden
    sizes (softmax, reduce_scale), bf16 and fp32, contiguous and aligned as torch allocates them;
    then the target shapes not already among them."""
    shapes = []
    for dtype in MODEL_DTYPES:
        for cols, model in VOCABULARIES:
            for rows, why in VOCAB_ROWS:
                for op in ("softmax", "log_softmax"):
                    shapes.append(dense(op, dtype, dtype, rows, cols, "vocabulary",
                                        f"{model}; {why}"))
        for cols, batch_heads, model in ATTENTION:
            shapes.append(dense("softmax", dtype, dtype, batch_heads * cols, cols, "attention",
                                f"{model}; batch x heads = {batch_heads}, {cols} queries"))
        for cols, model in HIDDEN:
            for op in ("softmax", "reduce_scale"):
                shapes.append(dense(op, dtype, dtype, HIDDEN_ROWS, cols, "hidden",
                                    f"{model}; {HIDDEN_ROWS} tokens"))
    for dtype, rows, cols, target_us in TIME_TARGETS:
        found = [s for s in shapes if (s["op"], s["in"], s["rows"], s["cols"]) ==
                 ("softmax", dtype, rows, cols)]
        if not found:
            found = [dense("softmax", dtype, dtype, rows, cols, "time target", "a shape with a time target")]
            shapes += found
        found[0]["target_us"] = target_us
    return shapes


def misalignment(shape):
    """Which sides start off a 16-byte boundary: "none", "in", "out" or "both"."""
    sides = [s for s in ("in", "out") if shape[f"{s}_offset"] % pack_of(shape[s])]
    return {0: "none", 2: "both"}.get(len(sides), sides[0] if sides else "none")


def describe(shape):
    """One line that names everything about the call."""
    text = (f"{shape['op']} {shape['in']}->{shape['out']} {shape['rows']}x{shape['cols']}, "
            f"in stride {shape['in_stride']} ({shape['in_layout']}) offset {shape['in_offset']}, "
            f"out stride {shape['out_stride']} ({shape['out_layout']}) offset "
            f"{shape['out_offset']}")
    return text


def listing(seed, shapes, max_bytes):
    """The --list text: the seed, every shape, then counts by class, width kind and alignment."""
    lines = [f"seed {seed}", f"count {len(shapes)}", "",
             "| # | op | in->out | rows x cols | elements | class | width | in stride (layout) "
             "+ offset | out stride (layout) + offset | pack | sets | GB |",
             "|" + "---|" * 12]
    for s in shapes:
        lines.append(
            f"| {s['number']} | {s['op']} | {s['in']}->{s['out']} | {s['rows']}x{s['cols']} | "
            f"{s.elements} | {s.target_class} | {s['width_kind']} | {s['in_stride']} "
            f"({s['in_layout']}) + {s['in_offset']} | {s['out_stride']} ({s['out_layout']}) + "
            f"{s['out_offset']} | {s.pack} | {s.sets} | {s.footprint_bytes / 2**30:.2f} |")
    lines += ["", "classes: " + counts(shapes, lambda s: s.target_class),
              "large-size narrow shapes (>= 16M elements, < 64 cols): "
              f"{sum(1 for s in shapes if s.target_class == 'narrow' and s.elements >= LARGE_ELEMENTS)}",
              "ops: " + counts(shapes, lambda s: s["op"]),
              "dtypes: " + counts(shapes, lambda s: f"{s['in']}->{s['out']}"),
              "width kinds: " + counts(shapes, lambda s: s["width_kind"]),
              f"odd widths: {sum(1 for s in shapes if s['cols'] % 2)}, prime widths: "
              f"{sum(1 for s in shapes if is_prime(s['cols']))}",
              "misaligned sides: " + counts(shapes, misalignment),
              "layouts (in/out): " + counts(shapes, lambda s: f"{s['in_layout']}/{s['out_layout']}"),
              f"largest footprint {max((s.footprint_bytes for s in shapes), default=0) / 2**30:.2f} GB "
              f"of a cap of {max_bytes / 2**30:.0f} GB; rows cut to fit: "
              f"{sum(1 for s in shapes if s['capped'])}; rotation over {WORKING_SET >> 20} MB "
              f"(at most {MAX_SETS} copies)"]
    return lines


def counts(shapes, key):
    tally = {}
    for s in shapes:
        tally[key(s)] = tally.get(key(s), 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(tally.items(), key=lambda kv: -kv[1]))
