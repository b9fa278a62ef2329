# SPDX-License-Identifier: Apache-2.0
"""Every op and dtype against torch in float64: through the framework-neutral functions (torch
tensors through DLPack) and through torch.ops.kjit."""
import pytest

from conftest import skip_module_without_gpu

skip_module_without_gpu()
torch = pytest.importorskip("torch")

import kjit  # noqa: E402
import kjit.torch  # noqa: E402,F401
from gpu_reference import DTYPES, close, rowwise, topk  # noqa: E402

pytestmark = pytest.mark.gpu

SHAPES = [(1, 1), (3, 31), (8, 1000), (64, 4096), (2, 3, 50257), (5000,)]
ROWWISE = ("softmax", "log_softmax", "reduce_scale")


def logits(shape, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape, generator=g, device="cuda") * 3).to(dtype)


def run_neutral(op, x, **kw):
    if op == "reduce_scale":
        return kjit.reduce_scale(x, scale=True, **kw)
    return getattr(kjit, op)(x, **kw), None


def run_torch_op(op, x, out_dtype=None):
    result = getattr(torch.ops.kjit, op)(x, out_dtype)
    return result if op == "reduce_scale" else (result, None)


@pytest.mark.parametrize("op", ROWWISE)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("path", ["neutral", "torch_op"])
def test_rowwise_against_float64(op, dtype, shape, path):
    x = logits(shape, dtype)
    out, scale = run_neutral(op, x) if path == "neutral" else run_torch_op(op, x)
    assert out.shape == x.shape and out.dtype == dtype and out.device == x.device
    expected, expected_scale = rowwise(op, x)
    close(out, expected)
    if scale is not None:
        assert scale.dtype == torch.float32
        close(scale.reshape(expected_scale.shape), expected_scale)


@pytest.mark.parametrize("op", ROWWISE)
@pytest.mark.parametrize("in_dtype,out_dtype", [(torch.bfloat16, torch.float32),
                                                (torch.float32, torch.float16),
                                                (torch.float16, torch.bfloat16)], ids=str)
def test_mixed_dtypes(op, in_dtype, out_dtype):
    x = logits((16, 3000), in_dtype)
    out, _ = run_torch_op(op, x, out_dtype)
    assert out.dtype == out_dtype
    close(out, rowwise(op, x)[0])
    into = torch.empty_like(x, dtype=out_dtype)
    assert getattr(kjit, op)(x, into) is into
    close(into, rowwise(op, x)[0])


def test_strided_rows_and_in_place():
    wide = logits((32, 2048), torch.float32)
    x = wide[:, 100:1100]  # rows 2048 apart
    close(kjit.softmax(x), torch.softmax(x.double(), -1))
    out = torch.empty(32, 2048, device="cuda")[:, :1000]
    kjit.torch.log_softmax(x, out)
    close(out, torch.log_softmax(x.double(), -1))
    y = logits((16, 777), torch.bfloat16)
    expected = torch.softmax(y.double(), -1)
    kjit.softmax(y, y)
    close(y, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rows,cols,k", [(1, 32000, 50), (8, 128256, 50), (64, 1000, 1),
                                         (4, 50257, 1024), (3, 17, 17)])
@pytest.mark.parametrize("path", ["neutral", "torch_op"])
def test_softmax_topk_against_float64(dtype, rows, cols, k, path):
    x = logits((rows, cols), dtype, seed=rows + k)
    if path == "neutral":
        probs, idx = kjit.softmax_topk(x, k, temperature=0.7)
    else:
        probs, idx = torch.ops.kjit.softmax_topk(x, k, 0.7)
    expected_p, expected_i = topk(x, k, temperature=0.7)
    assert probs.shape == (rows, k) and probs.dtype == torch.float32
    assert idx.dtype == torch.int64
    assert torch.equal(idx, expected_i)
    close(probs, expected_p)


@pytest.mark.parametrize("logprobs,renorm", [(True, False), (False, True), (True, True)])
def test_softmax_topk_flags_k_per_row_and_int32(logprobs, renorm):
    x = logits((6, 4000), torch.bfloat16, seed=7)
    k_per_row = torch.tensor([0, 1, 5, 40, 64, 100], dtype=torch.int32, device="cuda")
    probs, idx = kjit.torch.softmax_topk(x, 64, temperature=1.3, k_per_row=k_per_row,
                                         logprobs=logprobs, renorm=renorm,
                                         index_dtype=torch.int32)
    expected_p, expected_i = topk(x, 64, 1.3, logprobs, renorm, k_per_row)
    assert idx.dtype == torch.int32
    kept = expected_i >= 0
    assert torch.equal(idx.long(), expected_i)
    close(probs[kept], expected_p[kept])
    assert torch.equal(probs[~kept], expected_p[~kept].float())


def test_softmax_topk_into_given_outputs_of_3d_logits():
    x = logits((2, 3, 5000), torch.float16, seed=3)
    probs = torch.empty(2, 3, 20, device="cuda")
    idx = torch.empty(2, 3, 20, dtype=torch.int32, device="cuda")
    assert kjit.softmax_topk(x, 20, probs=probs, indices=idx) == (probs, idx)
    expected_p, expected_i = topk(x, 20)
    assert torch.equal(idx.long(), expected_i)
    close(probs, expected_p)


def test_empty_batches_launch_nothing():
    x = torch.empty(0, 128, device="cuda")
    assert kjit.softmax(x).shape == (0, 128)
    assert torch.ops.kjit.softmax_topk(x, 4)[0].shape == (0, 4)


def test_errors_name_the_argument_on_the_gpu_too():
    x = logits((4, 64), torch.float32)
    with pytest.raises(kjit.InvalidArgumentError, match="^out: is on cpu"):
        kjit.torch.softmax(x, torch.empty(4, 64))
    with pytest.raises(kjit.InvalidArgumentError, match="^x: kjit.softmax runs on CUDA"):
        torch.ops.kjit.softmax(x.cpu())
    with pytest.raises(kjit.InvalidArgumentError, match="^k: 65 is larger"):
        torch.ops.kjit.softmax_topk(x, 65)
    with pytest.raises(kjit.InvalidArgumentError, match="^x: dtype float64"):
        torch.ops.kjit.log_softmax(x.double())
    with pytest.raises(kjit.InvalidArgumentError, match="^x: the last dimension must be contiguous"):
        torch.ops.kjit.softmax(x.t())
