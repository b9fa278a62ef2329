# SPDX-License-Identifier: Apache-2.0
"""kjit.torch without a GPU: the ops are registered with their schemas, the fake kernels give
the shapes and dtypes the CUDA ones allocate (what torch.compile traces with), and a CPU tensor
is refused naming the argument. Skipped (visibly) where torch is not installed."""
import pytest

torch = pytest.importorskip("torch")

import kjit  # noqa: E402
import kjit.torch  # noqa: E402,F401
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

OPS = ("softmax", "softmax_out", "log_softmax", "log_softmax_out", "reduce_scale",
       "reduce_scale_out", "softmax_topk", "softmax_topk_out", "attention", "attention_out")


def test_every_op_is_registered_with_its_schema():
    for name in OPS:
        op = getattr(torch.ops.kjit, name).default
        assert str(op._schema).startswith(f"kjit::{name}(")
    mutable = [a.name for a in torch.ops.kjit.softmax_topk_out.default._schema.arguments
               if a.alias_info is not None and a.alias_info.is_write]
    assert mutable == ["probs", "indices"]
    mutable = [a.name for a in torch.ops.kjit.attention_out.default._schema.arguments
               if a.alias_info is not None and a.alias_info.is_write]
    assert mutable == ["out"]


def test_fake_kernels_allocate_what_the_cuda_ones_do():
    with FakeTensorMode():
        x = torch.empty(2, 3, 1000, dtype=torch.bfloat16)
        assert torch.ops.kjit.softmax(x).shape == (2, 3, 1000)
        assert torch.ops.kjit.log_softmax(x, torch.float32).dtype == torch.float32
        out, scale = torch.ops.kjit.reduce_scale(x)
        assert (out.dtype, scale.shape, scale.dtype) == (torch.bfloat16, (2, 3), torch.float32)
        probs, idx = torch.ops.kjit.softmax_topk(x, 50, index_dtype=torch.int32)
        assert (probs.shape, probs.dtype, idx.dtype) == ((2, 3, 50), torch.float32, torch.int32)
        assert probs.is_contiguous() and idx.is_contiguous()
        with pytest.raises(kjit.InvalidArgumentError, match="^k: 1001 is larger"):
            torch.ops.kjit.softmax_topk(x, 1001)
        with pytest.raises(kjit.InvalidArgumentError, match="^out: shape"):
            torch.ops.kjit.softmax_out(x, torch.empty(2, 3, 999, dtype=torch.bfloat16))


def test_cpu_tensors_are_refused_naming_the_argument():
    with pytest.raises(kjit.InvalidArgumentError, match="^x: kjit.softmax runs on CUDA tensors"):
        torch.ops.kjit.softmax(torch.zeros(2, 8))
    with pytest.raises(kjit.InvalidArgumentError, match="^logits: kjit.softmax_topk runs on CUDA"):
        kjit.torch.softmax_topk(torch.zeros(2, 8), 2)


def test_attention_fake_kernels():
    with FakeTensorMode():
        # [B, N, H, D] memory as a permuted view; the output is contiguous [B, H, M, Dv].
        q = torch.empty(8, 49, 4, 32, dtype=torch.bfloat16).permute(0, 2, 1, 3)
        v = torch.empty(8, 4, 49, 64, dtype=torch.bfloat16)
        bias = torch.empty(4, 49, 49)
        mask = torch.empty(3, 49, 49, dtype=torch.float16)
        out = torch.ops.kjit.attention(q, q, v, bias, mask, None, True)
        assert (out.shape, out.dtype, out.is_contiguous()) == ((8, 4, 49, 64), torch.bfloat16, True)
        three_d = torch.empty(100, 16, 16, dtype=torch.float16)
        assert torch.ops.kjit.attention(three_d, three_d, three_d).shape == (100, 16, 16)
        torch.ops.kjit.attention_out(q, q, v, None, None, 0.5, False, torch.empty_like(out))
        with pytest.raises(kjit.InvalidArgumentError, match="^out: shape"):
            torch.ops.kjit.attention_out(q, q, v, None, None, None, False, torch.empty_like(q))
        with pytest.raises(kjit.InvalidArgumentError, match=r"^bias: shape \(3, 49, 49\)"):
            torch.ops.kjit.attention(q, q, v, torch.empty(3, 49, 49))
        with pytest.raises(kjit.InvalidArgumentError, match="^scale: must be finite"):
            torch.ops.kjit.attention(q, q, v, None, None, float("inf"))


def attention_error(*args):
    """The error of torch.ops.kjit.attention's CUDA kernel, reached with CPU tensors."""
    cuda = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
    with pytest.raises(kjit.InvalidArgumentError) as caught:
        torch.ops.kjit.attention.default.redispatch(cuda, *args)
    return str(caught.value)


def half(*shape):
    return torch.zeros(*shape, dtype=torch.float16)


def test_attention_argument_errors_name_the_argument():
    q = half(2, 4, 49, 32)
    assert attention_error(q.float(), q, q).startswith("q: dtype float32 is not supported")
    assert attention_error(half(49, 32), q, q).startswith("q: expected a 4-d")
    assert attention_error(q, half(2, 4, 49, 64), q).startswith("k: its last dimension (64)")
    assert attention_error(q, q, half(2, 4, 50, 32)).startswith("v: has 50 tokens")
    assert attention_error(q, q, half(2, 4, 49, 24)).startswith("v: the last dimension must be")
    assert attention_error(half(2, 4, 257, 32), q, q).startswith("q: the query count")
    assert attention_error(half(2, 4, 49, 64)[..., ::2], q, q).startswith(
        "q: the last dimension must be contiguous")
    assert attention_error(q, q, q, torch.zeros(4, 49, 48)).startswith("bias: shape (4, 49, 48)")
    assert attention_error(q, q, q, None, torch.zeros(0, 49, 49)).startswith("mask: has no")
    assert attention_error(q, q, q, None, None, 1e39).startswith("scale: must be finite")


def test_attention_on_cpu_tensors_is_refused_naming_q():
    q = half(2, 4, 49, 32)
    with pytest.raises(kjit.InvalidArgumentError, match="^q: kjit.attention runs on CUDA"):
        kjit.torch.attention(q, q, q)
