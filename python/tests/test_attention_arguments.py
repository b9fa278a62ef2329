# SPDX-License-Identifier: Apache-2.0
"""kjit.attention's argument errors name the Python argument (q, k, v, bias, mask, scale, out),
including the runtime's own checks, which speak of C++ fields (o, m, dv, bias_dtype, ...); and
the tools take attention's call. Runs on NumPy (CPU) arrays and without a GPU: the device check
comes last, and the runtime's checks run before any device is entered."""
import json
import re

import numpy as np
import pytest

import kjit
from kjit import _kjit
from kjit._calls import call_json

F16, F32, BF16, I32 = 1, 0, 2, 3  # kjit_dtype codes


def f16(*shape):
    return np.zeros(shape, np.float16)


def raises(argument, call, *args, match=None, field=False, **kwargs):
    """The call refused, its message starting "argument: " (a call field, ``field``: the
    field's name as a word)."""
    with pytest.raises(kjit.InvalidArgumentError) as caught:
        call(*args, **kwargs)
    message = str(caught.value)
    assert re.match(rf"{argument}\b" if field else rf"{argument}:", message), message
    if match is not None:
        assert match in message, message
    assert caught.value.status == "invalid_argument"
    return message


def qkv(b=2, h=4, m=49, n=49, d=32, dv=None):
    return f16(b, h, m, d), f16(b, h, n, d), f16(b, h, n, dv or d)


def test_valid_calls_are_refused_only_for_the_device():
    q, k, v = qkv()
    raises("q", kjit.attention, q, k, v, match="CUDA arrays, and this one is on cpu")
    bias, mask = np.zeros((4, 49, 49), np.float32), f16(64, 49, 49)
    raises("q", kjit.attention, q, k, v, bias=bias, mask=mask, causal=True, scale=0.1,
           out=f16(2, 4, 49, 32), match="on cpu")
    # [B, N, H, D] memory as a permuted view, 3-d problems, different d and dv.
    permuted = f16(2, 49, 4, 32).transpose(0, 2, 1, 3)
    raises("q", kjit.attention, permuted, permuted, permuted, match="on cpu")
    raises("q", kjit.attention, f16(8, 16, 64), f16(8, 7, 64), f16(8, 7, 128), match="on cpu")


def test_dtypes():
    q, k, v = qkv()
    raises("q", kjit.attention, q.astype(np.float32), k, v, match="expected float16 or bfloat16")
    raises("k", kjit.attention, q, k.astype(np.float32), v, match="float32 is not supported")
    raises("v", kjit.attention, q, k, v.astype(np.float64), match="float64")
    raises("bias", kjit.attention, q, k, v, bias=np.zeros((4, 49, 49), np.float64),
           match="expected float32, float16 or bfloat16")
    raises("mask", kjit.attention, q, k, v, mask=np.zeros((1, 49, 49), np.int32))
    raises("out", kjit.attention, q, k, v, out=np.zeros((2, 4, 49, 32), np.float32))


def test_shapes():
    q, k, v = qkv()
    raises("q", kjit.attention, f16(49, 32), k, v, match="4-d [batch, heads, tokens, dim] or 3-d")
    raises("k", kjit.attention, q, f16(8, 49, 32), v, match="4-d array like q")
    raises("k", kjit.attention, q, f16(3, 4, 49, 32), v, match="leading dimensions")
    raises("v", kjit.attention, q, k, f16(2, 2, 49, 32), match="leading dimensions")
    raises("k", kjit.attention, q, f16(2, 4, 49, 64), v, match="last dimension (64) differs")
    raises("v", kjit.attention, q, k, f16(2, 4, 48, 32), match="48 tokens")
    raises("q", kjit.attention, *qkv(m=257), match="query count")
    raises("k", kjit.attention, *qkv(n=0), match="key count")
    raises("q", kjit.attention, *qkv(d=24), match="16, 32, 64 or 128 (got 24)")
    raises("v", kjit.attention, *qkv(dv=8), match="(got 8)")
    raises("q", kjit.attention, f16(2, 0, 49, 32), f16(2, 0, 49, 32), f16(2, 0, 49, 32),
           match="no heads")
    raises("out", kjit.attention, q, k, v, out=f16(2, 4, 49, 16), match="(2, 4, 49, 32)")
    raises("out", kjit.attention, q, k, v, out=f16(2, 49, 4, 32), match="does not match")


def test_layouts():
    q, k, v = qkv()
    raises("q", kjit.attention, f16(2, 4, 49, 64)[..., ::2], k, v,
           match="last dimension must be contiguous")
    raises("v", kjit.attention, q, k, f16(2, 4, 49, 64)[..., ::2], match="stride is 2")
    raises("bias", kjit.attention, q, k, v, bias=np.zeros((4, 49, 98), np.float32)[..., ::2],
           match="last dimension must be contiguous")


def test_bias_and_mask_shapes():
    q, k, v = qkv(n=16)
    raises("bias", kjit.attention, q, k, v, bias=np.zeros((3, 49, 16), np.float32),
           match="[heads, m, n] = (4, 49, 16)")
    raises("bias", kjit.attention, q, k, v, bias=np.zeros((49, 16), np.float32))
    raises("bias", kjit.attention, q, k, v, bias=np.zeros((4, 16, 49), np.float32))
    raises("mask", kjit.attention, q, k, v, mask=f16(64, 49, 17), match="[windows, m, n]")
    raises("mask", kjit.attention, q, k, v, mask=f16(0, 49, 16), match="no windows")
    # Any window count: problem b uses mask[b % W].
    raises("q", kjit.attention, q, k, v, mask=f16(7, 49, 16), match="on cpu")
    # A bias broadcast over heads (stride 0) is a valid layout.
    shared = np.broadcast_to(np.zeros((1, 49, 16), np.float32), (4, 49, 16))
    raises("q", kjit.attention, q, k, v, bias=shared, match="on cpu")


def test_scale():
    q, k, v = qkv()
    for scale in (float("nan"), float("inf"), -float("inf"), 1e39):
        raises("scale", kjit.attention, q, k, v, scale=scale, match="must be finite")
    raises("scale", kjit.attention, q, k, v, scale="big", match="expected a number")


def launch(q=0x10000, k=0x20000, v=0x30000, o=0x40000, bias=0, mask=0,
           sizes=(2, 4, 16, 16, 32, 32, 1), strides=None, dtypes=(F16, F32, F32), scale=0.5):
    """_launch_attention (the torch ops' path) on addresses that are never touched: the
    runtime's checks refuse the call before any device is entered."""
    batch, heads, m, n, d, dv, _ = sizes
    if strides is None:
        strides = (heads * m * d, m * d, d, heads * n * d, n * d, d, heads * n * dv, n * dv, dv,
                   heads * m * dv, m * dv, dv, m * n, n, m * n, n)
    _kjit._launch_attention(q, k, v, o, bias, mask, sizes, strides, dtypes, scale, False, 0, 0)


def test_the_runtime_checks_speak_of_the_python_arguments():
    strides = list((4 * 16 * 32, 16 * 32, 32) * 4 + (256, 16, 256, 16))
    strides[2] = 36
    raises("q", launch, strides=strides, match="row stride (36) is not a multiple of 8")
    raises("out", launch, o=0x10000, match="overlaps q")
    raises("out", launch, o=0x40002, match="16 bytes")
    raises("k", launch, k=0x20008)
    raises("q", launch, sizes=(2, 4, 300, 16, 32, 32, 1), match="m must be in 1..256")
    raises("k", launch, sizes=(2, 4, 16, 0, 32, 32, 1), match="n must be in")
    raises("v", launch, sizes=(2, 4, 16, 16, 32, 24, 1), match="dv must be")
    raises("q", launch, sizes=(2, 0, 16, 16, 32, 32, 1), match="heads")
    raises("q", launch, dtypes=(F32, F32, F32), match="f16 or bf16")
    raises("bias", launch, bias=0x50000, dtypes=(F16, I32, F32), match="bias_dtype")
    raises("bias", launch, bias=0x50002, dtypes=(F16, F32, F32), match="aligned")
    raises("mask", launch, mask=0x60000, sizes=(2, 4, 16, 16, 32, 32, 0), match="mask_windows")
    raises("scale", launch, scale=float("inf"), match="must be finite")


def test_call_json_of_attention():
    call = json.loads(call_json("attention", batch=4096, heads=4, m=49, n=49, d=32,
                                bias_dtype="float32", mask_dtype="bf16", mask_windows=64,
                                causal=False))
    assert call == {"op": "attention", "batch": 4096, "heads": 4, "m": 49, "n": 49, "d": 32,
                    "bias_dtype": "f32", "mask_dtype": "bf16", "mask_windows": 64,
                    "causal": False}
    assert json.loads(call_json("attention", dtype="bfloat16", m=16, n=16, d=16,
                                bias_dtype=None, mask_dtype="none")) == {
        "op": "attention", "dtype": "bf16", "m": 16, "n": 16, "d": 16, "mask_dtype": "none"}
    raises("bias_dtype", call_json, "attention", m=16, n=16, d=16, bias_dtype="float64")


WINDOW = dict(batch=4096, heads=4, m=49, n=49, d=32, bias_dtype="f32", mask_dtype="f32",
              mask_windows=64)


def test_explain_plans_attention_for_an_arch():
    plan = kjit.explain("attention", arch="sm_90", **WINDOW)
    assert plan["arch"] == "sm_90"
    assert plan["planned"]["op"] == "attention"
    assert (plan["planned"]["m"], plan["planned"]["n"], plan["planned"]["d"]) == (49, 49, 32)
    assert plan["planned"]["dtype"] == "f16"  # attention's default dtype
    assert plan["kernel"].startswith("kjit::attention_tile")
    assert plan["block"] > 0
    causal = kjit.explain("attention", arch="sm_90", causal=True, **WINDOW)
    assert causal["kernel"] != plan["kernel"]
    bf16 = kjit.explain("attention", arch="sm_90", dtype="bfloat16", **WINDOW)
    assert bf16["kernel"] != plan["kernel"]


def test_explain_names_bad_attention_fields():
    raises("m", kjit.explain, "attention", m=300, n=49, d=32, arch="sm_90", field=True)
    raises("d", kjit.explain, "attention", m=49, n=49, d=24, arch="sm_90", field=True)
    raises("dtype", kjit.explain, "attention", m=49, n=49, d=32, dtype="f32", arch="sm_90",
           field=True)
    raises("algorithm", kjit.explain, "attention", m=49, n=49, d=32, arch="sm_90",
           algorithm="block_smem", field=True)


def test_compile_attention_reports_resources():
    report = kjit.compile("attention", arch="sm_80", dtype="bf16", batch=256, heads=12, m=197,
                          n=197, d=64)
    assert report["arch"] == "sm_80"
    assert report["kernel"].startswith("kjit::attention_tile")
    assert report["registers"] > 0
    assert report["cubin_bytes"] > 1000


def test_precompile_an_attention_spec(cache_dir):
    spec = {"ops": ["attention"], "dtypes": ["f16"], "batch": [4096], "heads": [4], "m": [49],
            "n": [49], "d": [32], "bias_dtype": ["f32"], "mask_dtype": ["f32"],
            "mask_windows": [64]}
    first = kjit.precompile(spec, ["sm_90"], cache_dir=cache_dir, jobs=1)
    assert first["failed"] == []
    assert (first["kernels"], first["compiled"]) == (1, 1)
    assert len(kjit.cache.inspect(cache_dir)) == 1
    again = kjit.precompile(spec, ["sm_90"], cache_dir=cache_dir, jobs=1)
    assert (again["compiled"], again["cached"]) == (0, 1)

