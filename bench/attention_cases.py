# SPDX-License-Identifier: Apache-2.0
"""The batched small-tile attention cases that bench/compare_attention.py times, with their floors,
work and targets, and the names of the paths timed on them. No torch here, so
`compare_attention.py --list` runs without a GPU."""
from dataclasses import dataclass

DTYPE_BYTES = {"float16": 2, "bfloat16": 2}
SDPA_BACKENDS = {"sdpa_math": "MATH", "sdpa_efficient": "EFFICIENT_ATTENTION",
                 "sdpa_flash": "FLASH_ATTENTION", "sdpa_cudnn": "CUDNN_ATTENTION"}
TORCH_PATHS = ["eager"] + list(SDPA_BACKENDS) + ["compile"]
PATHS = ["kjit", "seed"] + TORCH_PATHS  # timed, in table order; "sdpa" (default) is only checked
PATH_TITLES = {"kjit": "kjit", "seed": "seed", "eager": "bmm-softmax-bmm", "sdpa_math": "SDPA math",
               "sdpa_efficient": "SDPA efficient", "sdpa_flash": "SDPA flash",
               "sdpa_cudnn": "SDPA cuDNN", "compile": "torch.compile", "sdpa": "SDPA default"}
SWIN_MASK_VALUE = -100.0  # what Swin adds between tokens of different regions of a shifted window
SHORT_DTYPES = {"f16": "float16", "bf16": "bfloat16"}
FLOOR_COPY_GBPS = 3000.0  # the H100 copy bandwidth the floors assume: --list's default


@dataclass(frozen=True)
class Case:
    name: str
    title: str
    batch: int
    heads: int
    m: int
    n: int
    d: int
    dv: int
    mask_windows: int = 0  # 0: no mask
    bias: bool = False
    target_dtypes: tuple = ("bfloat16",)  # the dtypes the targets name; --quick runs only these
    target_us: float = None  # kjit's time target, per dtype

    def problems(self):
        return self.batch * self.heads

    def tensor_bytes(self, dtype):
        """Q, K, V read once, O written once, bias and mask read once."""
        e = DTYPE_BYTES[dtype]
        per_problem = self.m * self.d + self.n * self.d + self.n * self.dv + self.m * self.dv
        total = self.problems() * per_problem * e
        if self.bias:
            total += self.heads * self.m * self.n * e
        if self.mask_windows:
            total += self.mask_windows * self.m * self.n * e
        return total

    def floor_us(self, dtype, copy_gbps):
        """copy_gbps counts bytes read + written, as the floor's bytes do."""
        return self.tensor_bytes(dtype) / (copy_gbps * 1e3)

    def flops(self):
        """2*M*N*D for Q K^T plus 2*M*N*Dv for P V a problem (4*M*N*D when Dv = D); the softmax and
        the bias and mask additions are not counted."""
        return self.problems() * 2 * self.m * self.n * (self.d + self.dv)

    def shape_text(self):
        extras = []
        if self.bias:
            extras.append(f"bias [{self.heads},{self.m},{self.n}]")
        if self.mask_windows:
            extras.append(f"mask [{self.mask_windows},{self.m},{self.n}]")
        text = f"{self.batch}x{self.heads} {self.m}x{self.n} D={self.d}"
        if self.dv != self.d:
            text += f" Dv={self.dv}"
        return text + (" + " + " + ".join(extras) if extras else "")


CASES = [
    Case("tile16", "65536 problems, 16x16, D=16 (the seed's case)", 65536, 1, 16, 16, 16, 16,
         target_dtypes=("float16",), target_us=55.0),
    Case("window_masked", "windows 49x49, D=32, bias + shifted-window mask", 4096, 4, 49, 49, 32,
         32, mask_windows=64, bias=True, target_dtypes=("float16", "bfloat16"), target_us=85.0),
    Case("window", "windows 49x49, D=32, no bias or mask", 4096, 4, 49, 49, 32, 32,
         target_dtypes=("float16",), target_us=80.0),
    Case("s64", "64x64, D=64", 2048, 8, 64, 64, 64, 64, target_us=190.0),
    Case("s128", "128x128, D=128", 512, 8, 128, 128, 128, 128, target_us=182.0),
    Case("vit197", "197x197, D=64 (a ViT-B/16 image)", 256, 12, 197, 197, 64, 64,
         target_us=140.0),
]
CASES_BY_NAME = {c.name: c for c in CASES}


def parse_cases(text):
    """'tile16,window_masked:bf16' -> [(case, dtype)]; a name without a dtype runs both."""
    runs = []
    for item in text.split(","):
        name, _, short = item.strip().partition(":")
        if name not in CASES_BY_NAME:
            raise SystemExit(f"--cases: unknown case '{name}' (known: {', '.join(CASES_BY_NAME)})")
        if short and short not in SHORT_DTYPES:
            raise SystemExit(f"--cases: '{item}': dtype must be f16 or bf16")
        dtypes = [SHORT_DTYPES[short]] if short else list(DTYPE_BYTES)
        runs += [(CASES_BY_NAME[name], dt) for dt in dtypes]
    return runs


def runs_for(quick, listed):
    if listed:
        return parse_cases(listed)
    if quick:
        return [(c, dt) for c in CASES for dt in c.target_dtypes]
    return [(c, dt) for c in CASES for dt in DTYPE_BYTES]


def tune_call(case, dtype):
    """The case as the arguments of `kjit tune --op`: the bias and mask in the inputs' dtype."""
    short = {v: k for k, v in SHORT_DTYPES.items()}[dtype]
    fields = dict(m=case.m, n=case.n, d=case.d, dv=case.dv, heads=case.heads, batch=case.batch)
    if case.bias:
        fields["bias_dtype"] = short
    if case.mask_windows:
        fields.update(mask_windows=case.mask_windows, mask_dtype=short)
    return "attention --dtype " + short + "".join(f" --field {k}={v}" for k, v in fields.items())


def list_lines(runs, copy_gbps, seed_reasons):
    """The runs with their floors at copy_gbps; seed_reasons: case name -> why the seed's kernel
    cannot serve it (None: it can)."""
    lines = [f"floor = Q, K, V, bias and mask read once and O written once at {copy_gbps:.0f} GB/s "
             "(read + write); GFLOP = 2*M*N*(D+Dv) a problem", "",
             "| case | dtype | shape | MB moved | floor us | GFLOP | kjit target us | seed kernel |",
             "|---|---|---|---|---|---|---|---|"]
    for case, dtype in runs:
        lines.append(f"| {case.name} | {dtype} | {case.shape_text()} | "
                     f"{case.tensor_bytes(dtype) / 1e6:.1f} | {case.floor_us(dtype, copy_gbps):.1f} | "
                     f"{case.flops() / 1e9:.1f} | {case.target_us:g} | "
                     f"{seed_reasons.get(case.name) or 'yes'} |")
    return lines
