# SPDX-License-Identifier: Apache-2.0
"""torch.ops.kjit.* with whichever CUDA kernels are registered (kjit._torch_ops's C++ ones where
it is built) against the checked Python kernels called directly on the same tensors: the same
bits for every op; calls off the C++ fast path (strided rows, strided outputs) still right; and
a failure inside the launch (no kernel in the caches with KJIT_JIT=0) arriving as the same
kjit.Error subclass on both paths."""
import json
import os
import subprocess
import sys

import pytest

from conftest import skip_module_without_gpu

skip_module_without_gpu()
torch = pytest.importorskip("torch")

import kjit  # noqa: E402
import kjit.torch  # noqa: E402
from gpu_reference import close  # noqa: E402

pytestmark = pytest.mark.gpu

CHECKED = kjit.torch._library.CHECKED_KERNELS


def randn(*shape, dtype=torch.float32):
    return (torch.randn(*shape, device="cuda") * 2).to(dtype)


def functional_samples():
    k_per_row = torch.tensor([1, 3, 5, 0, 8, 2, 4, 6], dtype=torch.int32, device="cuda")
    return [
        ("softmax", (randn(8, 300),)),
        ("softmax", (randn(2, 3, 4096, dtype=torch.bfloat16), torch.float32)),
        ("log_softmax", (randn(4, 1000, dtype=torch.float16),)),
        ("log_softmax", (randn(5000),)),
        ("reduce_scale", (randn(2, 3, 4096, dtype=torch.bfloat16),)),
        ("reduce_scale", (randn(777), torch.float16)),
        ("softmax_topk", (randn(8, 300), 8, 0.5, k_per_row)),
        ("softmax_topk", (randn(2, 3, 4096, dtype=torch.bfloat16), 16, 1.0, None, True, False,
                          torch.int32)),
        ("softmax_topk", (randn(8, 32000), 50, 0.8, None, False, True)),
    ]


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def same(got, expected, name):
    """Bit for bit, but softmax_topk's probabilities (a sum whose order may differ between
    launches of the same kernel) to a few units in the last place."""
    if name.startswith("softmax_topk") and got.dtype == torch.float32:
        torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-9)
    else:
        assert torch.equal(got, expected), name


@pytest.mark.parametrize("sample", range(9))
def test_functional_ops_match_the_checked_kernels_bit_for_bit(sample):
    name, args = functional_samples()[sample]
    got = as_tuple(getattr(torch.ops.kjit, name).default(*args))
    expected = as_tuple(CHECKED[name](*args))
    for g, e in zip(got, expected):
        assert (g.shape, g.dtype, g.device, g.is_contiguous()) == (e.shape, e.dtype, e.device, True)
        same(g, e, name)


def test_out_variants_match_the_checked_kernels_bit_for_bit():
    x = randn(8, 3000, dtype=torch.bfloat16)
    for name in ("softmax_out", "log_softmax_out"):
        got, expected = torch.empty(8, 3000, device="cuda"), torch.empty(8, 3000, device="cuda")
        getattr(torch.ops.kjit, name).default(x, got)
        CHECKED[name](x, expected)
        assert torch.equal(got, expected), name
    outs = [(torch.empty_like(x), torch.empty(8, device="cuda")) for _ in range(2)]
    torch.ops.kjit.reduce_scale_out.default(x, *outs[0])
    CHECKED["reduce_scale_out"](x, *outs[1])
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])
    logits = randn(4, 50257)
    outs = [(torch.empty(4, 20, device="cuda"), torch.empty(4, 20, dtype=torch.int64,
                                                            device="cuda")) for _ in range(2)]
    torch.ops.kjit.softmax_topk_out.default(logits, 20, 0.7, None, True, True, *outs[0])
    CHECKED["softmax_topk_out"](logits, 20, 0.7, None, True, True, *outs[1])
    same(outs[0][0], outs[1][0], "softmax_topk_out")
    same(outs[0][1], outs[1][1], "softmax_topk_out")


def test_calls_off_the_fast_path_are_still_right():
    wide = randn(8, 1000)
    rows = wide[:, :600]  # rows 1000 apart: kjit reads them in place
    close(torch.ops.kjit.softmax(rows), torch.softmax(rows.double(), -1))
    out = torch.empty(8, 1200, device="cuda")[:, :600]
    torch.ops.kjit.log_softmax_out(rows, out)
    close(out, torch.log_softmax(rows.double(), -1))
    probs, idx = torch.ops.kjit.softmax_topk(rows, 5)
    assert torch.equal(idx, torch.topk(rows, 5).indices)
    with pytest.raises(kjit.InvalidArgumentError, match="^x: the last dimension must be contiguous"):
        torch.ops.kjit.softmax(wide[:, ::2])
    with pytest.raises(kjit.InvalidArgumentError, match="^out: is on cpu"):
        torch.ops.kjit.softmax_out(wide, torch.empty(8, 1000))
    with pytest.raises(kjit.InvalidArgumentError, match="^k_per_row: must be a contiguous"):
        torch.ops.kjit.softmax_topk(wide, 5, 1.0, torch.ones(3, dtype=torch.int32, device="cuda"))


NOT_FOUND = r'''
import json, torch, kjit, kjit.torch
x = torch.randn(3, 1237, device="cuda")
try:
    torch.ops.kjit.softmax(x)
    print(json.dumps({"native": kjit.torch.native_ops, "error": None}))
except Exception as error:
    print(json.dumps({"native": kjit.torch.native_ops, "error": [type(error).__name__,
          getattr(error, "status", None), "no cached cubin" in str(error)]}))
'''


@pytest.mark.parametrize("native", ["1", "0"])
def test_a_launch_failure_arrives_as_its_kjit_error(native, cache_dir):
    env = dict(os.environ, KJIT_TORCH_NATIVE=native, KJIT_JIT="0", KJIT_CACHE_DIR=str(cache_dir))
    env.pop("KJIT_CACHE_BUNDLE", None)
    done = subprocess.run([sys.executable, "-c", NOT_FOUND], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if native == "1" and not result["native"]:
        pytest.skip("C++ kernel test SKIPPED: kjit._torch_ops is not built here")
    assert result["error"] == ["NotFoundError", "not_found", True]
