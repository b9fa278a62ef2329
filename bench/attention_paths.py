# SPDX-License-Identifier: Apache-2.0
"""The attention paths bench/compare_attention.py times, on torch tensors: kjit_attention through
ctypes, seed 004's kernel, torch's bmm-softmax-bmm, scaled_dot_product_attention per backend and
torch.compile; the inputs they share, the float64 check, and one run of a case in one dtype."""
import ctypes
import math
import re
import warnings

import torch
import torch.nn.functional as F

import seed_attention
from attention_args import TENSORS, AttentionArgs
from attention_cases import PATHS, SDPA_BACKENDS, SWIN_MASK_VALUE
from torch_timing import (DTYPES, KjitLib, current_stream_handle, graph_time_us, keeping_outputs,
                          launches_for)

DEVICE = "cuda"
REPLAY_US = 3000.0  # one graph replay of a few ms: long beside the event resolution
MAX_LAUNCHES = 2048
REFERENCE_ELEMENTS = 1 << 25  # float64 scores of the checked subsample: 256 MB at most
MAX_CHECKED_BATCHES = 256
# kjit's and the seed's largest error against float64 on the subsample: a wrong tile is off by
# O(1). Accuracy beside SDPA's is a target of its own, on the same numbers.
CHECK_TOLERANCE = {"float16": 1e-2, "bfloat16": 6e-2}
CHECKED_PATHS = ("kjit", "seed")  # the paths whose outputs land in the set's own buffer


# ---- kjit through ctypes ----------------------------------------------------------------------

class KjitAttention(KjitLib):
    def __init__(self, path):
        # The op's absence is the likelier failure while it is new: say so before the runtime,
        # whose failure (no driver) would hide it.
        if not hasattr(ctypes.CDLL(path), "kjit_attention"):
            raise AttributeError(f"{path} has no kjit_attention: a libkjit built before the op?")
        super().__init__(path)
        fn = self.lib.kjit_attention
        fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(AttentionArgs), ctypes.c_void_p]
        fn.restype = ctypes.c_int
        self.attention_fn = fn

    def attention(self, args):
        """On torch's current stream (the capture stream while a graph is being captured)."""
        self.check(self.attention_fn(self.rt, ctypes.byref(args), current_stream_handle()))


def open_kjit(path):
    """(KjitAttention, None) or (None, why not): a missing op is a row of the table, not a crash."""
    try:
        return KjitAttention(path), None
    except (OSError, AttributeError, RuntimeError) as e:
        return None, f"{type(e).__name__}: {e}"


def strides(x, count):
    return (ctypes.c_int64 * count)(*x.stride()[:count])


def kjit_args(t, scale):
    """The argument struct for one tensor set, writing the set's own output."""
    q, k, v, o = (t[name] for name in TENSORS)
    a = AttentionArgs()
    a.struct_size = ctypes.sizeof(AttentionArgs)
    a.q, a.k, a.v, a.o = (x.data_ptr() for x in (q, k, v, o))
    a.batch, a.heads, a.m, a.d = q.shape
    a.n, a.dv = k.shape[2], v.shape[3]
    a.q_strides, a.k_strides, a.v_strides, a.o_strides = (strides(x, 3) for x in (q, k, v, o))
    a.dtype = a.bias_dtype = a.mask_dtype = DTYPES[q.dtype]  # bias's and mask's unread when NULL
    bias, mask = t["bias"], t["mask"]
    if bias is not None:
        a.bias, a.bias_dtype, a.bias_strides = bias.data_ptr(), DTYPES[bias.dtype], strides(bias, 2)
    if mask is not None:
        a.mask, a.mask_dtype, a.mask_strides = mask.data_ptr(), DTYPES[mask.dtype], strides(mask, 2)
        a.mask_windows = mask.shape[0]
    a.scale, a.causal = scale, 0
    return a


# ---- inputs -----------------------------------------------------------------------------------

def swin_shift_mask(windows, tokens):
    """Swin's shifted-window mask, [windows, tokens, tokens]: the windows of a square image shifted
    by half a window, 0 between tokens of one region, SWIN_MASK_VALUE across regions."""
    side, size = math.isqrt(windows), math.isqrt(tokens)
    if side * side != windows or size * size != tokens:
        raise ValueError(f"a shifted-window mask needs square numbers ({windows}, {tokens})")
    shift = size // 2
    region = torch.zeros(side * size, side * size, device=DEVICE)
    label = 0
    for rows in (slice(0, -size), slice(-size, -shift), slice(-shift, None)):
        for cols in (slice(0, -size), slice(-size, -shift), slice(-shift, None)):
            region[rows, cols] = label
            label += 1
    per_window = region.view(side, size, side, size).permute(0, 2, 1, 3).reshape(windows, tokens)
    differ = per_window[:, None, :] != per_window[:, :, None]
    return torch.where(differ, SWIN_MASK_VALUE, 0.0)


def padded_rows(x):
    """x in memory whose rows start every 16 elements: the layout SDPA's memory-efficient kernel
    wants for attn_mask; given another, torch pads a copy on every call."""
    n = x.shape[-1]
    storage = torch.empty(*x.shape[:-1], -(-n // 16) * 16, dtype=x.dtype, device=x.device)
    view = storage[..., :n]
    view.copy_(x)
    return view


def shared_inputs(case, dtype):
    """bias [H, M, N], mask [W, M, N] and the one additive attn_mask SDPA takes, 4-d as every
    backend accepts it: [1, W * H, M, N] (bias and mask; bias and mask are a model's constants, so
    the combined copy is made once, outside the timing) or [1, H, M, N] (bias alone)."""
    bias = mask = sdpa_mask = None
    if case.bias:
        bias = torch.randn(case.heads, case.m, case.n, device=DEVICE).to(dtype)
    if case.mask_windows:
        mask = swin_shift_mask(case.mask_windows, case.m).to(dtype)
        both = mask[:, None] + (bias[None] if bias is not None else 0)  # [W, H, M, N]
        sdpa_mask = padded_rows(both.reshape(1, -1, case.m, case.n))
    elif bias is not None:
        sdpa_mask = padded_rows(bias.unsqueeze(0))
    return bias, mask, sdpa_mask


def new_tensor_set(case, dtype, bias, mask, sdpa_mask):
    shape = (case.batch, case.heads)
    return {"q": torch.randn(*shape, case.m, case.d, device=DEVICE, dtype=dtype),
            "k": torch.randn(*shape, case.n, case.d, device=DEVICE, dtype=dtype),
            "v": torch.randn(*shape, case.n, case.dv, device=DEVICE, dtype=dtype),
            "o": torch.full((*shape, case.m, case.dv), math.nan, device=DEVICE, dtype=dtype),
            "bias": bias, "mask": mask, "sdpa_mask": sdpa_mask}


# ---- the paths --------------------------------------------------------------------------------

def eager_attention(q, k, v, bias, mask, scale):
    """torch's bmm-softmax-bmm, as window attention writes it (Swin); batch b uses window b % W."""
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if bias is not None:
        s = s + bias
    if mask is not None:
        b, h, m, n = s.shape
        windows = mask.shape[0]
        s = (s.view(b // windows, windows, h, m, n) + mask.unsqueeze(1)).view(b, h, m, n)
    return torch.matmul(torch.softmax(s, -1), v)


def sdpa_attention(t, scale, backend=None):
    """SDPA on the set t (default dispatch, or one backend). With a mask the batch is folded as
    [B / W, W * H], so that the combined [1, W * H, M, N] attn_mask broadcasts over the first dim."""
    q, k, v = t["q"], t["k"], t["v"]
    if t["mask"] is not None:
        folded = (q.shape[0] // t["mask"].shape[0], -1)
        q, k, v = (x.reshape(*folded, *x.shape[2:]) for x in (q, k, v))
    if backend is None:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=t["sdpa_mask"], scale=scale)
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415 - torch >= 2.3
    with sdpa_kernel([getattr(SDPBackend, backend)]):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=t["sdpa_mask"], scale=scale)


def seed_launch(seed, t, scale):
    b, h = t["q"].shape[:2]
    seed.launch(str(t["q"].dtype).replace("torch.", ""), *(t[x].data_ptr() for x in TENSORS), b, h,
                {x: t[x].stride()[:3] for x in TENSORS}, scale,
                torch.cuda.current_stream().cuda_stream)


def path_calls(sets, scale, kjit, seed, wanted):
    """name -> enqueue(i), which runs the path on set i % len(sets), for the wanted paths at hand
    (kjit and seed where they are not None)."""
    def on_set(fn):
        return lambda i: fn(sets[i % len(sets)])

    def eager_on(fn):
        return on_set(lambda t: fn(t["q"], t["k"], t["v"], t["bias"], t["mask"], scale))

    calls = {}
    if kjit is not None:
        structs = [kjit_args(t, scale) for t in sets]  # built once: the timed call is the launch
        calls["kjit"] = lambda i: kjit.attention(structs[i % len(sets)])
    if seed is not None:
        calls["seed"] = on_set(lambda t: seed_launch(seed, t, scale))
    calls["eager"] = eager_on(eager_attention)
    for name, backend in SDPA_BACKENDS.items():
        calls[name] = on_set(lambda t, b=backend: sdpa_attention(t, scale, b))
    if "compile" in wanted:
        torch._dynamo.reset()  # a fresh compile for this shape, never a dynamic-shape kernel
        calls["compile"] = eager_on(torch.compile(eager_attention, dynamic=False))
    return {name: call for name, call in calls.items() if name in wanted}


# ---- checking ---------------------------------------------------------------------------------

def checked_batches(case):
    """Batch indices whose problems are compared with float64: consecutive ones from the start
    (every mask window in turn) and the last ones (the end of the grid)."""
    count = max(4, min(MAX_CHECKED_BATCHES, REFERENCE_ELEMENTS // (case.heads * case.m * case.n)))
    count = min(count, case.batch)
    tail = count // 4
    idx = sorted(set(range(count - tail)) | set(range(case.batch - tail, case.batch)))
    return torch.tensor(idx, device=DEVICE)


def reference(t, idx, scale):
    q, k, v = (t[x][idx].double() for x in "qkv")
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if t["bias"] is not None:
        s = s + t["bias"].double()
    if t["mask"] is not None:
        s = s + t["mask"].double()[idx % t["mask"].shape[0]].unsqueeze(1)
    return torch.matmul(torch.softmax(s, -1), v)


def max_error(out, ref, idx, shape):
    """Largest |out - ref| on the subsample; inf when any output anywhere is not finite (a NaN,
    or the poison of an output a launch left unwritten)."""
    out = out.reshape(shape)
    if not torch.isfinite(out).all():
        return math.inf
    return (out[idx].double() - ref).abs().max().item()


def probe(call):
    """(output, None) from one eager call, or (None, why) when it raises. SDPA says why a backend
    refuses in warnings; those are folded into the reason."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = call()
            torch.cuda.synchronize()
            return out, None
        except Exception as e:  # noqa: BLE001 - any failure of one path is that path's cell
            first_line = (str(e).splitlines() or [""])[0]
            reasons = [str(w.message) for w in caught] + [f"{type(e).__name__}: {first_line}"]
            text = re.sub(r"\s*\(Triggered internally at [^)]*\)", "", " ".join(reasons))
            return None, " ".join(text.split())[:500]


def time_launches(enqueue, copies):
    launches = launches_for(enqueue, REPLAY_US, copies, max(copies, MAX_LAUNCHES))
    return graph_time_us(enqueue, launches)


def measure_path(name, call, sets, dtype, ref, idx):
    """{"us", "err", "status", "note"}: the output of set 0 checked, then the path timed. kjit and
    the seed write set 0's poisoned output buffer; torch's paths return theirs."""
    entry = {"us": None, "err": None, "status": "ok"}
    if name in CHECKED_PATHS:
        sets[0]["o"].fill_(math.nan)

        def run_once():
            call(0)
            return sets[0]["o"]
    else:
        def run_once():
            return call(0)
    out, why = probe(run_once)
    if why is not None:
        refused = name.startswith("sdpa_")
        entry["status"], entry["note"] = ("refused" if refused else "ERROR"), why
        return entry
    entry["err"] = max_error(out, ref, idx, sets[0]["o"].shape)
    del out
    if name in CHECKED_PATHS and not entry["err"] <= CHECK_TOLERANCE[dtype]:
        entry["status"] = "FAIL"
        entry["note"] = (f"max error {entry['err']:.2e} against float64 above "
                         f"{CHECK_TOLERANCE[dtype]:g}")
        return entry
    try:
        # torch's paths allocate O: their last outputs are kept, so that their writes rotate over
        # as many buffers as kjit's and the seed's do (torch_timing.keeping_outputs).
        timed = call if name in CHECKED_PATHS else keeping_outputs(call, len(sets))
        entry["us"] = time_launches(timed, len(sets))
    except Exception as e:  # noqa: BLE001 - a path that fails in a graph is a cell, not a crash
        entry["status"], entry["note"] = "ERROR", f"timing: {type(e).__name__}: {str(e)[:300]}"
    return entry


# ---- one run: a case in one dtype --------------------------------------------------------------

class SeedKernels:
    """seed_attention.SeedAttention per (D, Dv), built on first use; a build failure is kept as
    the reason for every run that would have used it."""

    def __init__(self, arch):
        self.arch, self.built, self.via = arch, {}, None

    def get(self, case):
        """(SeedAttention, None), or (None, the path's entry: "n/a" or "ERROR" and why)."""
        why = seed_attention.unsupported(case.m, case.n, case.d, case.dv, case.bias,
                                         bool(case.mask_windows), False)
        if why:
            return None, {"us": None, "err": None, "status": "n/a", "note": why}
        key = (case.d, case.dv)
        if key not in self.built:
            try:
                self.built[key] = seed_attention.SeedAttention(case.d, case.dv, self.arch)
                self.via = self.via or self.built[key].via
            except Exception as e:  # noqa: BLE001 - the baseline failing says nothing of kjit
                self.built[key] = f"building the seed kernel: {type(e).__name__}: {str(e)[:300]}"
        seed = self.built[key]
        if isinstance(seed, str):
            return None, {"us": None, "err": None, "status": "ERROR", "note": seed}
        return seed, None


def run_case(case, dtype, kjit, kjit_missing, seeds, working_set, wanted):
    """{"paths": {name: entry}}: the wanted paths (names of PATHS) of the case in this dtype
    ("float16" or "bfloat16"), checked and timed; the others "skipped". SDPA's default dispatch
    is always checked, for the accuracy target."""
    torch_dtype = getattr(torch, dtype)
    copies = max(2, -(-working_set // case.tensor_bytes(dtype)))
    torch.manual_seed(0)
    bias, mask, sdpa_mask = shared_inputs(case, torch_dtype)
    sets = [new_tensor_set(case, torch_dtype, bias, mask, sdpa_mask) for _ in range(copies)]
    scale = ctypes.c_float(1.0 / math.sqrt(case.d)).value  # the float kjit receives, everywhere
    idx = checked_batches(case)
    ref = reference(sets[0], idx, scale)

    paths = {name: {"us": None, "err": None, "status": "skipped"} for name in PATHS
             if name not in wanted}
    seed, seed_entry = seeds.get(case) if "seed" in wanted else (None, None)
    if seed_entry:
        paths["seed"] = seed_entry
    if kjit is None and "kjit" in wanted:
        paths["kjit"] = {"us": None, "err": None, "status": "missing", "note": kjit_missing}
    calls = path_calls(sets, scale, kjit, seed, wanted)
    for name in PATHS:
        if name in calls:
            paths[name] = measure_path(name, calls[name], sets, dtype, ref, idx)
            torch.cuda.empty_cache()
    out, why = probe(lambda: sdpa_attention(sets[0], scale))
    err = None if why else max_error(out, ref, idx, sets[0]["o"].shape)
    paths["sdpa"] = {"us": None, "err": err, "status": "refused" if why else "checked", "note": why}
    return {"paths": paths, "copies": copies, "checked_batches": len(idx)}
