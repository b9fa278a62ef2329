# SPDX-License-Identifier: Apache-2.0
"""kjit._torch_ops, the C++ CUDA kernels of torch.ops.kjit.*: registered wherever the module was
built (kjit.torch.native_ops says so); where it is absent, or KJIT_TORCH_NATIVE=0, the Python
kernels run. Either way a call off the fast path gets the checked Python kernels' error, through
torch's dispatcher, as the same kjit.Error subclass. Without a GPU the CUDA kernels are reached
by redispatching CPU tensors to the CUDA key (they take the checked path). Skipped (visibly)
where torch is not installed."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import kjit  # noqa: E402
import kjit.torch  # noqa: E402

BUILT = importlib.util.find_spec("kjit._torch_ops") is not None
SWITCHED_OFF = os.environ.get("KJIT_TORCH_NATIVE") == "0"

# Calls of each op's CUDA kernel that its checks refuse, and the start of the refusal.
PROBE = r'''
import json
import torch
import kjit, kjit.torch

cuda = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
ops = torch.ops.kjit
f32 = lambda *shape: torch.zeros(*shape)
half = lambda *shape: torch.zeros(*shape, dtype=torch.float16)
calls = {
    "softmax": (ops.softmax, (torch.zeros(2, 8, dtype=torch.int32),)),
    "log_softmax": (ops.log_softmax, (f32(2, 8), torch.int64)),
    "softmax_out": (ops.softmax_out, (f32(2, 8), f32(2, 7))),
    "log_softmax_out": (ops.log_softmax_out, (f32(2, 8), f32(2, 8).to(torch.int32))),
    "reduce_scale": (ops.reduce_scale, (f32(()),)),
    "reduce_scale_out": (ops.reduce_scale_out, (f32(2, 8), f32(2, 8), f32(2).double())),
    "softmax_topk": (ops.softmax_topk, (f32(2, 8), 9)),
    "softmax_topk_out": (ops.softmax_topk_out, (f32(2, 8), 4, 1.0, None, False, False, f32(2, 3),
                                                torch.zeros(2, 4, dtype=torch.int64))),
    "attention": (ops.attention, (f32(2, 4, 16, 32), f32(2, 4, 16, 32), f32(2, 4, 16, 32))),
    "attention_out": (ops.attention_out, (half(2, 16, 32), half(2, 16, 32), half(2, 16, 32), None,
                                          None, None, False, half(2, 16, 16))),
}
errors = {}
for name, (op, args) in calls.items():
    try:
        op.default.redispatch(cuda, *args)
        errors[name] = None
    except Exception as error:
        errors[name] = [type(error).__name__, isinstance(error, kjit.InvalidArgumentError),
                        str(error)]
print(json.dumps({"native": kjit.torch.native_ops, "errors": errors}))
'''

EXPECTED = {
    "softmax": "x: dtype int32 is not supported",
    "log_softmax": "out_dtype: torch.int64 is not supported",
    "softmax_out": "out: shape (2, 7) does not match (2, 8)",
    "log_softmax_out": "out: dtype int32 is not supported",
    "reduce_scale": "x: a 0-d tensor has no rows",
    "reduce_scale_out": "scale: dtype float64 is not supported",
    "softmax_topk": "k: 9 is larger than the last dimension of logits (8)",
    "softmax_topk_out": "probs: shape (2, 3) does not match (2, 4)",
    "attention": "q: dtype float32 is not supported",
    "attention_out": "out: shape (2, 16, 16) does not match (2, 16, 32)",
}


def probe(native: str):
    env = dict(os.environ, KJIT_TORCH_NATIVE=native)
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_native_ops_follow_the_build():
    expected = BUILT and not SWITCHED_OFF and torch.version.cuda is not None
    assert kjit.torch.native_ops is expected, kjit.torch.native_ops_reason
    assert (kjit.torch.native_ops_reason is None) is expected
    if not BUILT and not SWITCHED_OFF and torch.version.cuda is not None:
        assert "not built" in kjit.torch.native_ops_reason
    if torch.version.cuda is None and not SWITCHED_OFF:
        assert "without CUDA" in kjit.torch.native_ops_reason


def test_the_dispatcher_holds_the_kernels_native_ops_names():
    for name in kjit.torch._library.SCHEMAS:
        table = torch._C._dispatch_dump(f"kjit::{name}")
        cuda = [line for line in table.splitlines() if line.startswith("CUDA:")]
        assert len(cuda) == 1, table
        assert ("module.cpp" in cuda[0]) is (name in kjit.torch._library.NATIVE_OPS), cuda[0]
    # Every op has C++ kernels where they are built, but attention (Python kernels only).
    python_only = {"attention", "attention_out"}
    expected = set(kjit.torch._library.SCHEMAS) - python_only if kjit.torch.native_ops else set()
    assert set(kjit.torch._library.NATIVE_OPS) == expected


@pytest.mark.parametrize("native", ["1", "0"])
def test_a_refused_call_raises_the_checked_kernels_error(native):
    if native == "1" and (not BUILT or torch.version.cuda is None):
        pytest.skip("C++ kernel test SKIPPED: kjit._torch_ops is not built here")
    result = probe(native)
    assert result["native"] is (native == "1")
    for name, start in EXPECTED.items():
        error = result["errors"][name]
        assert error is not None, f"{name}: no error"
        kind, is_invalid_argument, message = error
        assert (kind, is_invalid_argument) == ("InvalidArgumentError", True), (name, error)
        assert message.startswith(start), (name, message)


def test_in_process_the_error_is_kjits_own_class():
    cuda = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
    with pytest.raises(kjit.InvalidArgumentError, match="^x: dtype int32 is not supported") as caught:
        torch.ops.kjit.softmax.default.redispatch(cuda, torch.zeros(2, 8, dtype=torch.int32))
    assert caught.value.status == "invalid_argument"
