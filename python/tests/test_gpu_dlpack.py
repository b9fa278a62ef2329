# SPDX-License-Identifier: Apache-2.0
"""Arrays of other frameworks through DLPack: CuPy arrays in and out (allocated by CuPy, on
CuPy's current stream), and JAX arrays in with outputs given."""
import os

import numpy as np
import pytest

import kjit
from conftest import skip_module_without_gpu

skip_module_without_gpu()
pytestmark = pytest.mark.gpu


def softmax64(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_cupy_arrays():
    cp = pytest.importorskip("cupy")
    x = cp.random.standard_normal((8, 3000), dtype=cp.float32) * 3
    y = kjit.softmax(x)
    assert isinstance(y, cp.ndarray) and y.dtype == cp.float32 and y.shape == x.shape
    np.testing.assert_allclose(cp.asnumpy(y), softmax64(cp.asnumpy(x)), rtol=2e-5, atol=1e-7)
    half = x.astype(cp.float16)
    out = cp.empty((8, 3000), dtype=cp.float32)
    assert kjit.log_softmax(half, out) is out
    expected = np.log(softmax64(cp.asnumpy(half)))
    np.testing.assert_allclose(cp.asnumpy(out), expected, rtol=2e-5, atol=1e-5)
    scaled, scale = kjit.reduce_scale(x, scale=True)
    assert isinstance(scale, cp.ndarray) and scale.shape == (8,)
    np.testing.assert_allclose(cp.asnumpy(scale), np.abs(cp.asnumpy(x)).max(-1), rtol=1e-6)


def test_cupy_topk_on_a_cupy_stream():
    cp = pytest.importorskip("cupy")
    x = cp.random.standard_normal((4, 32000), dtype=cp.float32)
    with cp.cuda.Stream(non_blocking=True) as stream:
        probs, idx = kjit.softmax_topk(x, 25, index_dtype="int32")
        stream.synchronize()
    host = cp.asnumpy(x).astype(np.float64)
    expected = np.argsort(-host, axis=-1, kind="stable")[:, :25]
    assert idx.dtype == cp.int32
    np.testing.assert_array_equal(cp.asnumpy(idx), expected)
    np.testing.assert_allclose(cp.asnumpy(probs), np.take_along_axis(softmax64(host), expected, -1),
                               rtol=2e-5, atol=1e-8)


def test_jax_arrays_in_with_outputs_given():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    torch = pytest.importorskip("torch")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX test SKIPPED: JAX sees no GPU")
    x = jax.device_put(np.random.default_rng(0).standard_normal((4, 1000), np.float32) * 3,
                       jax.devices("gpu")[0])
    out = torch.empty(4, 1000, device="cuda")
    assert kjit.softmax(x, out) is out
    torch.cuda.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), softmax64(np.asarray(x)), rtol=2e-5, atol=1e-7)
    with pytest.raises(TypeError, match="out: kjit allocates outputs through torch and CuPy"):
        kjit.softmax(x)


def attention64(q, k, v, bias):
    """float64 attention of [B, H, M, D] NumPy arrays with a [H, M, N] bias, scale 1/sqrt(D)."""
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1]) + bias.astype(np.float64)
    return softmax64(s) @ v


def test_cupy_attention_on_a_permuted_buffer():
    cp = pytest.importorskip("cupy")
    buffer = cp.random.standard_normal((6, 49, 3, 4, 32), dtype=cp.float32).astype(cp.float16)
    q, k, v = (buffer[:, :, i].transpose(0, 2, 1, 3) for i in range(3))  # [B, H, N, D] views
    bias = cp.random.standard_normal((4, 49, 49), dtype=cp.float32)
    out = kjit.attention(q, k, v, bias=bias)
    assert isinstance(out, cp.ndarray) and out.dtype == cp.float16 and out.shape == (6, 4, 49, 32)
    expected = attention64(*(cp.asnumpy(t) for t in (q, k, v, bias)))
    # fp16 rounding of P and of the output; test_gpu_attention.py holds the exact bound.
    np.testing.assert_allclose(cp.asnumpy(out).astype(np.float64), expected, rtol=1e-2,
                               atol=1e-2)
