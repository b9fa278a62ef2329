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
       "reduce_scale_out", "softmax_topk", "softmax_topk_out")


def test_every_op_is_registered_with_its_schema():
    for name in OPS:
        op = getattr(torch.ops.kjit, name).default
        assert str(op._schema).startswith(f"kjit::{name}(")
    mutable = [a.name for a in torch.ops.kjit.softmax_topk_out.default._schema.arguments
               if a.alias_info is not None and a.alias_info.is_write]
    assert mutable == ["probs", "indices"]


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
