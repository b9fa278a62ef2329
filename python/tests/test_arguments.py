# SPDX-License-Identifier: Apache-2.0
"""Every argument error names its argument, and is reported before the device is looked at, so
these run on NumPy (CPU) arrays on any machine: the device check comes last."""
import re

import numpy as np
import pytest

import kjit


def f32(*shape):
    return np.zeros(shape, np.float32)


def raises(argument, call, *args, match=None, **kwargs):
    with pytest.raises(kjit.InvalidArgumentError) as caught:
        call(*args, **kwargs)
    message = str(caught.value)
    assert re.match(rf"{argument}\b", message), message
    if match is not None:
        assert match in message, message
    assert caught.value.status == "invalid_argument"
    return message


ROWWISE = [kjit.softmax, kjit.log_softmax, kjit.reduce_scale]


@pytest.mark.parametrize("op", ROWWISE)
def test_a_cpu_array_is_refused_last(op):
    raises("x", op, f32(4, 8), match="CUDA arrays, and this one is on cpu")


@pytest.mark.parametrize("op", ROWWISE)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.uint8, np.bool_])
def test_input_dtypes_outside_the_float_ones(op, dtype):
    raises("x", op, np.zeros((4, 8), dtype), match="expected float32, float16 or bfloat16")


@pytest.mark.parametrize("op", ROWWISE)
def test_layouts_that_are_not_rows(op):
    raises("x", op, f32(4, 16)[:, ::2], match="last dimension must be contiguous")
    raises("x", op, f32(4, 5, 8).transpose(1, 0, 2), match="do not step as rows")
    raises("x", op, np.float32(1.0), match="0-d")
    raises("x", op, f32(4, 0), match="empty")
    raises("x", op, np.broadcast_to(f32(1, 8), (4, 8)), match="rows overlap")


def test_not_an_array():
    raises("x", kjit.softmax, [[1.0, 2.0]], match="speaks DLPack")


def test_outputs():
    raises("out", kjit.softmax, f32(4, 8), out=f32(4, 9), match="does not match")
    raises("out", kjit.softmax, f32(4, 8), out=np.zeros((4, 8), np.float64), match="float64")
    raises("out_dtype", kjit.softmax, f32(4, 8), out_dtype="float64")
    raises("out_dtype", kjit.softmax, f32(4, 8), out=f32(4, 8), out_dtype="bfloat16",
           match="differs")
    read_only = f32(4, 8)
    read_only.flags.writeable = False
    try:
        read_only.__dlpack__(max_version=(1, 0))
    except (BufferError, TypeError):
        pytest.skip("this NumPy cannot export a read-only array through DLPack")
    raises("out", kjit.softmax, f32(4, 8), out=read_only, match="read-only")


def test_strided_rows_pass_the_checks():
    # A slice of wider rows is a valid input: only the device check refuses it here.
    raises("x", kjit.softmax, f32(4, 16)[:, :8], match="on cpu")
    raises("x", kjit.softmax, f32(3, 4, 16)[:, :, :8].reshape(3, 4, 8), match="on cpu")


def test_reduce_scale_outputs():
    raises("scale", kjit.reduce_scale, f32(4, 8), scale=f32(5), match="does not match")
    raises("scale", kjit.reduce_scale, f32(4, 8), scale=np.zeros(4, np.float16), match="float16")
    raises("x", kjit.reduce_scale, f32(4, 8), scale=f32(4), match="on cpu")


def test_softmax_topk_arguments():
    topk = kjit.softmax_topk
    raises("logits", topk, np.zeros((4, 8), np.float64), 2, match="float64")
    raises("k", topk, f32(4, 8), 9, match="larger than the last dimension of logits (8)")
    raises("k", topk, f32(4, 8), 0, match=">= 1")
    raises("k", topk, f32(1, 5000), 4097, match="maximum of 4096")
    for temperature in (0.0, -1.0, float("nan"), float("inf")):
        raises("temperature", topk, f32(4, 8), 2, temperature=temperature)
    raises("probs", topk, f32(4, 8), 2, probs=f32(4, 3), match="does not match")
    raises("probs", topk, f32(4, 8), 2, probs=np.zeros((4, 2), np.float16))
    raises("indices", topk, f32(4, 8), 2, indices=f32(4, 2), match="expected int32 or int64")
    raises("indices", topk, f32(4, 8), 2, indices=np.zeros((2, 4), np.int64)[:, :2].T)
    raises("index_dtype", topk, f32(4, 8), 2, index_dtype="int16")
    raises("index_dtype", topk, f32(4, 8), 2, index_dtype="float32", match="int32 or int64")
    raises("index_dtype", topk, f32(4, 8), 2, index_dtype="int32",
           indices=np.zeros((4, 2), np.int64), match="differs")
    raises("k_per_row", topk, f32(4, 8), 2, k_per_row=np.zeros(4, np.int64), match="int32")
    raises("k_per_row", topk, f32(4, 8), 2, k_per_row=np.zeros(3, np.int32), match="3 values")
    raises("logits", topk, f32(4, 8), 2, k_per_row=np.zeros(4, np.int32), match="on cpu")


def test_runtime_options():
    raises("bogus", kjit.Runtime, bogus=1, match="not a runtime option")
    raises("jit", kjit.Runtime, jit=1, match="True or False")
    raises("tune", kjit.Runtime, tune="sometimes", match="off, cached, first-use")
    raises("cache_max_bytes", kjit.Runtime, cache_max_bytes="lots")
    raises("cache_max_bytes", kjit.Runtime, cache_max_bytes=-1)
    raises("cache_dir", kjit.Runtime, cache_dir=3)
    raises("log_level", kjit.Runtime, log_level="loud")


def test_call_descriptions():
    raises("op", kjit.explain, "softmax_v2", cols=8, arch="sm_90", match="not one of")
    raises("dtype", kjit.explain, "softmax", cols=8, dtype="float64", arch="sm_90")
    raises("cols", kjit.explain, "softmax", cols=0, arch="sm_90")
    raises("k", kjit.explain, "softmax_topk", cols=8, k=9, arch="sm_90")
    raises("arch", kjit.explain, "softmax", cols=8, arch="sm_9x")
    raises("arch", kjit.explain, "softmax", cols=8, arch="sm_35", match="not supported")
