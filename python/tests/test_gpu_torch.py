# SPDX-License-Identifier: Apache-2.0
"""torch.ops.kjit.* as torch knows ops: opcheck on every op, torch.compile(fullgraph=True) of a
sampling step and of a log-softmax loss (through the differentiable kjit.torch.log_softmax,
backward included), capture and replay in a CUDA graph, torch's current stream (a side
stream), and a second device."""
import pytest

from conftest import skip_module_without_gpu

skip_module_without_gpu()
torch = pytest.importorskip("torch")

import kjit  # noqa: E402
import kjit.torch  # noqa: E402
from gpu_reference import close, topk  # noqa: E402

pytestmark = pytest.mark.gpu


def randn(*shape, dtype=torch.float32, device="cuda", requires_grad=False):
    return (torch.randn(*shape, device=device) * 2).to(dtype).requires_grad_(requires_grad)


def opcheck_samples():
    x = randn(8, 300)
    xb = randn(2, 3, 4096, dtype=torch.bfloat16)
    k_per_row = torch.tensor([1, 3, 5, 0, 8, 2, 4, 6], dtype=torch.int32, device="cuda")
    q = randn(3, 2, 16, 32, dtype=torch.float16)
    ops = torch.ops.kjit
    return [
        (ops.softmax.default, (randn(8, 300),), {}),
        (ops.softmax.default, (xb,), {"out_dtype": torch.float32}),
        (ops.log_softmax.default, (randn(4, 1000, dtype=torch.float16),), {}),
        (ops.reduce_scale.default, (xb,), {}),
        (ops.softmax_topk.default, (x, 8), {"temperature": 0.5, "k_per_row": k_per_row}),
        (ops.softmax_topk.default, (xb, 16), {"logprobs": True, "index_dtype": torch.int32}),
        (ops.softmax_out.default, (x, torch.empty_like(x)), {}),
        (ops.log_softmax_out.default, (xb, torch.empty_like(xb, dtype=torch.float32)), {}),
        (ops.reduce_scale_out.default, (x, torch.empty_like(x), torch.empty(8, device="cuda")), {}),
        (ops.reduce_scale_out.default, (x, torch.empty_like(x)), {}),
        (ops.softmax_topk_out.default,
         (x, 4, 1.0, None, False, True, torch.empty(8, 4, device="cuda"),
          torch.empty(8, 4, dtype=torch.int64, device="cuda")), {}),
        (ops.attention.default, (q, q, q), {"bias": randn(2, 16, 16), "causal": True}),
        (ops.attention_out.default, (q, q, q, None, None, 0.5, False, torch.empty_like(q)), {}),
    ]


OPCHECK_SAMPLES = 13  # len(opcheck_samples()), known before any tensor is made


@pytest.mark.parametrize("sample", range(OPCHECK_SAMPLES))
def test_opcheck(sample):
    op, args, kwargs = opcheck_samples()[sample]
    torch.library.opcheck(op, args, kwargs)


def test_every_op_is_checked():
    samples = opcheck_samples()
    assert len(samples) == OPCHECK_SAMPLES
    checked = {str(op).split(".")[1] for op, _, _ in samples}
    assert checked == set(kjit.torch._library.SCHEMAS)


def test_compile_a_sampling_step_fullgraph():
    def step(logits, temperature: float):
        probs, idx = torch.ops.kjit.softmax_topk(logits, 50, temperature)
        choice = torch.multinomial(probs, 1)
        return idx.gather(-1, choice).squeeze(-1), probs

    torch._dynamo.reset()
    compiled = torch.compile(step, fullgraph=True)
    logits = randn(16, 32000)
    tokens, probs = compiled(logits, 0.8)
    expected_p, expected_i = topk(logits, 50, 0.8)
    close(probs, expected_p)
    assert torch.isin(tokens, expected_i).all()
    assert all((expected_i[r] == tokens[r]).any() for r in range(16))


def test_compile_a_log_softmax_loss_fullgraph_with_backward():
    def loss(logits, target):
        return torch.nn.functional.nll_loss(kjit.torch.log_softmax(logits), target)

    torch._dynamo.reset()
    compiled = torch.compile(loss, fullgraph=True)
    logits = randn(64, 5000, requires_grad=True)
    target = torch.randint(0, 5000, (64,), device="cuda")
    value = compiled(logits, target)
    value.backward()
    reference_logits = logits.detach().double().requires_grad_(True)
    reference = torch.nn.functional.cross_entropy(reference_logits, target)
    reference.backward()
    torch.testing.assert_close(value.double(), reference, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(logits.grad.double(), reference_logits.grad, rtol=1e-4, atol=1e-8)


def test_softmax_backward_matches_torch():
    x = randn(32, 777, requires_grad=True)
    g = randn(32, 777)
    (kjit.torch.softmax(x) * g).sum().backward()
    x64 = x.detach().double().requires_grad_(True)
    (torch.softmax(x64, -1) * g.double()).sum().backward()
    torch.testing.assert_close(x.grad.double(), x64.grad, rtol=1e-4, atol=1e-7)


def test_capture_and_replay_in_a_cuda_graph():
    x = randn(64, 4096, dtype=torch.bfloat16)
    logits = randn(8, 128256)
    reports = kjit.torch.warmup([("softmax", x), ("softmax_topk", logits, None, {"k": 50}),
                                 {"op": "reduce_scale", "shape": (64, 4096),
                                  "dtype": torch.bfloat16}])
    assert len(reports) == 3 and all(r["kernel"].startswith("kjit::") for r in reports)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = kjit.torch.softmax(x)
        probs, idx = kjit.torch.softmax_topk(logits, 50)
        scaled, scale = torch.ops.kjit.reduce_scale(x)
    for seed in range(3):
        torch.manual_seed(seed)
        x.copy_(randn(64, 4096, dtype=torch.bfloat16))
        logits.copy_(randn(8, 128256))
        graph.replay()
        torch.cuda.synchronize()
        close(y, torch.softmax(x.double(), -1))
        expected_p, expected_i = topk(logits, 50)
        assert torch.equal(idx, expected_i)
        close(probs, expected_p)
        close(scale, x.double().abs().amax(-1))


def busy_stream_then(stream, work):
    """Runs `work` on `stream` behind a long sleep: work put on any other stream would run first
    and read its input before it is written."""
    source = randn(16, 2000)
    x = torch.zeros(16, 2000, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(100_000_000)
        x.copy_(source)
        out = work(x)
    stream.synchronize()
    return source, out


def test_runs_on_torchs_current_stream():
    side = torch.cuda.Stream()
    source, out = busy_stream_then(side, torch.ops.kjit.softmax)
    close(out, torch.softmax(source.double(), -1))
    source, out = busy_stream_then(side, lambda x: kjit.log_softmax(x))
    close(out, torch.log_softmax(source.double(), -1))


def test_runs_on_the_stream_given():
    side = torch.cuda.Stream()
    source, out = busy_stream_then(side, lambda x: kjit.softmax(x, stream=side))
    close(out, torch.softmax(source.double(), -1))
    source, out = busy_stream_then(side, lambda x: kjit.softmax(x, stream=side.cuda_stream))
    close(out, torch.softmax(source.double(), -1))


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2,
                    reason="second-device test SKIPPED: fewer than 2 GPUs")
def test_a_second_device():
    torch.cuda.set_device(0)
    x = randn(8, 3000, device="cuda:1")
    y = torch.ops.kjit.softmax(x)
    assert y.device == x.device
    close(y, torch.softmax(x.double(), -1))
    probs, idx = kjit.softmax_topk(x, 10)
    assert probs.device == x.device
    assert torch.equal(idx, topk(x, 10)[1])
    assert torch.cuda.current_device() == 0
    with torch.cuda.device(1):
        z = randn(8, 3000, device="cuda:0")
        close(torch.ops.kjit.log_softmax(z), torch.log_softmax(z.double(), -1))
        assert torch.cuda.current_device() == 1
