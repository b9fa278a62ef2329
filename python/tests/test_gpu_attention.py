# SPDX-License-Identifier: Apache-2.0
"""kjit.attention and torch.ops.kjit.attention against torch in float64: window attention with
a relative-position bias and a shifted-window mask (problem b uses mask[b % W]), causal, fully
masked rows (zeros), [B, N, H, D] buffers as permuted views (q, k and v interleaved too), 3-d
problems; the runtime's own checks naming the Python argument; torch.library.opcheck,
torch.compile(fullgraph=True) and CUDA graph capture."""
import math

import pytest

from conftest import skip_module_without_gpu

skip_module_without_gpu()
torch = pytest.importorskip("torch")

import kjit  # noqa: E402
import kjit.torch  # noqa: E402

pytestmark = pytest.mark.gpu

HALVES = (torch.float16, torch.bfloat16)
# Each dtype's unit roundoff (the kernel rounds P to the dtype for P V, and the output).
EPS = {torch.float16: 1.0 / 2048, torch.bfloat16: 1.0 / 256}


def randn(*shape, dtype=torch.float16, seed=0, scale=1.0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(*shape, generator=g, device="cuda") * scale).to(dtype)


def shifted_mask(windows, m, n, dtype=torch.float32, seed=1):
    """0 or -inf per entry, as a shifted-window mask is; about a quarter masked."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    masked = torch.rand(windows, m, n, generator=g, device="cuda") < 0.25
    return torch.where(masked, float("-inf"), 0.0).to(dtype)


def reference(q, k, v, bias=None, mask=None, scale=None, causal=False):
    """(out, magnitude) in float64: magnitude = softmax |v|, the size each output row sums."""
    three_d = q.dim() == 3
    q64, k64, v64 = (t.double().unsqueeze(1) if three_d else t.double() for t in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q64 @ k64.transpose(-1, -2) * scale
    if bias is not None:
        s = s + bias.double()
    if mask is not None:
        windows = torch.arange(q.shape[0], device=q.device) % mask.shape[0]
        s = s + mask.double()[windows].unsqueeze(1)
    if causal:
        m, n = s.shape[-2:]
        later = torch.ones(m, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(later, float("-inf"))
    dead = torch.isneginf(s).all(-1, keepdim=True)
    p = torch.softmax(s.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
    out, magnitude = p @ v64, p @ v64.abs()
    return (out.squeeze(1), magnitude.squeeze(1)) if three_d else (out, magnitude)


def check(out, want, magnitude):
    """Within twice the unit roundoff of the output's size plus the size it sums."""
    eps = EPS[out.dtype]
    bound = 2 * eps * (want.abs() + magnitude) + 1e-6
    excess = (out.double() - want).abs() - bound
    assert not torch.isnan(out).any()
    assert excess.max().item() <= 0, f"off by {excess.max().item()} beyond the bound"


def run(path, q, k, v, out=None, **kw):
    if path == "neutral":
        return kjit.attention(q, k, v, out=out, **kw)
    if out is None:
        return torch.ops.kjit.attention(q, k, v, kw.get("bias"), kw.get("mask"), kw.get("scale"),
                                        kw.get("causal", False))
    torch.ops.kjit.attention_out(q, k, v, kw.get("bias"), kw.get("mask"), kw.get("scale"),
                                 kw.get("causal", False), out)
    return out


PATHS = ["neutral", "torch_op"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("addend_dtype", (torch.float32, torch.float16, torch.bfloat16), ids=str)
def test_window_attention_with_bias_and_mask(path, dtype, addend_dtype):
    b, h, tokens, d = 10, 3, 49, 32  # 4 windows: b % 4 does not divide evenly on purpose
    q, k, v = (randn(b, h, tokens, d, dtype=dtype, seed=s) for s in range(3))
    bias = randn(h, tokens, tokens, dtype=addend_dtype, seed=3)
    mask = shifted_mask(4, tokens, tokens, addend_dtype)
    out = run(path, q, k, v, bias=bias, mask=mask)
    assert (out.shape, out.dtype, out.is_contiguous()) == ((b, h, tokens, d), dtype, True)
    check(out, *reference(q, k, v, bias, mask))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("m,n,d,dv", [(1, 1, 16, 16), (7, 100, 64, 128), (16, 16, 16, 16),
                                      (128, 128, 128, 128), (197, 197, 64, 64), (256, 49, 32, 64)])
def test_shapes_and_causal(path, m, n, d, dv):
    for causal in (False, True):
        q = randn(3, 2, m, d, seed=1, dtype=torch.bfloat16)
        k = randn(3, 2, n, d, seed=2, dtype=torch.bfloat16)
        v = randn(3, 2, n, dv, seed=3, dtype=torch.bfloat16)
        out = run(path, q, k, v, causal=causal, scale=0.3)
        assert out.shape == (3, 2, m, dv)
        check(out, *reference(q, k, v, scale=0.3, causal=causal))


@pytest.mark.parametrize("path", PATHS)
def test_three_d_problems(path):
    q, k, v = (randn(4099, 16, 16, seed=s) for s in range(3))  # the seed's 16x16 tiles, odd count
    bias = randn(1, 16, 16, seed=4, dtype=torch.float32)
    out = run(path, q, k, v, bias=bias, causal=True)
    assert out.shape == (4099, 16, 16)
    check(out, *reference(q, k, v, bias, causal=True))


@pytest.mark.parametrize("path", PATHS)
def test_fully_masked_rows_give_zeros(path):
    q, k, v = (randn(6, 2, 49, 32, seed=s) for s in range(3))
    mask = shifted_mask(3, 49, 49)
    mask[1, 5] = float("-inf")   # row 5 of problems 1 and 4
    mask[2, :, :] = float("-inf")  # every row of problems 2 and 5
    out = run(path, q, k, v, mask=mask)
    assert torch.equal(out[[1, 4], :, 5], torch.zeros_like(out[[1, 4], :, 5]))
    assert torch.equal(out[[2, 5]], torch.zeros_like(out[[2, 5]]))
    check(out, *reference(q, k, v, mask=mask))


@pytest.mark.parametrize("path", PATHS)
def test_permuted_views_of_bnhd_buffers(path):
    b, n, h, d = 5, 64, 4, 64
    qkv = randn(b, n, 3, h, d, seed=7)  # q, k and v interleaved, as a fused projection writes
    q, k, v = (qkv[:, :, i].permute(0, 2, 1, 3) for i in range(3))
    assert not q.is_contiguous()
    bias = randn(h, n, n, seed=8, dtype=torch.float32)
    out_buffer = torch.full((b, n, h, d), float("nan"), dtype=torch.float16, device="cuda")
    out = run(path, q, k, v, out=out_buffer.permute(0, 2, 1, 3), bias=bias, causal=True)
    want, magnitude = reference(q, k, v, bias, causal=True)
    check(out, want, magnitude)
    check(out_buffer.permute(0, 2, 1, 3), want, magnitude)
    separate = run(path, q, k, v, bias=bias, causal=True)
    assert torch.equal(separate, out)


def test_bias_broadcast_over_heads_and_the_default_scale():
    q, k, v = (randn(4, 8, 49, 32, seed=s) for s in range(3))
    bias = randn(1, 49, 49, seed=5, dtype=torch.float32).expand(8, 49, 49)
    out = kjit.attention(q, k, v, bias=bias)
    check(out, *reference(q, k, v, bias))
    explicit = kjit.attention(q, k, v, bias=bias.contiguous(), scale=1 / math.sqrt(32))
    assert torch.equal(out, explicit)


def test_the_runtimes_checks_name_the_python_argument():
    wide = randn(2, 4, 16, 36)
    q = wide[..., :32]  # rows 36 apart: not a whole number of 16-byte copies
    k = v = randn(2, 4, 16, 32)
    for call in (lambda: kjit.attention(q, k, v),
                 lambda: torch.ops.kjit.attention(q, k, v)):
        with pytest.raises(kjit.InvalidArgumentError, match=r"^q: row stride \(36\)"):
            call()
    storage = torch.empty(2 * 4 * 16 * 32 + 1, dtype=torch.float16, device="cuda")
    out = storage[1:].view(2, 4, 16, 32)  # 2 bytes past a 16-byte boundary
    with pytest.raises(kjit.InvalidArgumentError, match="^out: .*16 bytes"):
        kjit.attention(k, k, v, out=out)
    with pytest.raises(kjit.InvalidArgumentError, match="^out: overlaps"):
        torch.ops.kjit.attention_out(k, k, v, None, None, None, False, v)
    with pytest.raises(kjit.InvalidArgumentError, match="^k: dtype bfloat16 differs"):
        kjit.torch.attention(k, k.bfloat16(), v)
    with pytest.raises(kjit.InvalidArgumentError, match="^mask: is on cpu"):
        kjit.torch.attention(k, k, v, mask=torch.zeros(1, 16, 16))


def test_opcheck():
    q, k, v = (randn(6, 2, 49, 32, seed=s) for s in range(3))
    bias = randn(2, 49, 49, seed=3, dtype=torch.float32)
    mask = shifted_mask(3, 49, 49, torch.float16)
    ops = torch.ops.kjit
    torch.library.opcheck(ops.attention.default, (q, k, v), {"bias": bias, "mask": mask})
    torch.library.opcheck(ops.attention.default, (q, k, v), {"scale": 0.5, "causal": True})
    buffer = randn(6, 49, 2, 32, seed=9)
    out = torch.empty_like(buffer).permute(0, 2, 1, 3)
    torch.library.opcheck(ops.attention_out.default,
                          (buffer.permute(0, 2, 1, 3), k, v, bias, None, None, False, out))


def test_compile_a_window_attention_block_fullgraph():
    heads, tokens, d = 4, 49, 32

    def block(qkv, bias, mask):
        # A fused projection's output [windows, tokens, 3 * heads * d] seen as q, k, v views.
        parts = qkv.view(qkv.shape[0], tokens, 3, heads, d)
        q, k, v = (parts[:, :, i].permute(0, 2, 1, 3) for i in range(3))
        o = torch.ops.kjit.attention(q, k, v, bias, mask)
        return o.permute(0, 2, 1, 3).reshape(qkv.shape[0], tokens, heads * d) * 2

    torch._dynamo.reset()
    compiled = torch.compile(block, fullgraph=True)
    qkv = randn(64, tokens, 3 * heads * d, seed=1)
    bias = randn(heads, tokens, tokens, seed=3, dtype=torch.float32)
    mask = shifted_mask(16, tokens, tokens)
    got = compiled(qkv, bias, mask) / 2
    parts = qkv.view(64, tokens, 3, heads, d)
    q, k, v = (parts[:, :, i].permute(0, 2, 1, 3) for i in range(3))
    want, magnitude = reference(q, k, v, bias, mask)
    check(got.view(64, tokens, heads, d).permute(0, 2, 1, 3), want, magnitude)


def test_capture_and_replay_in_a_cuda_graph():
    q, k, v = (randn(512, 4, 49, 32, seed=s) for s in range(3))
    bias = randn(4, 49, 49, seed=3, dtype=torch.float32)
    mask = shifted_mask(64, 49, 49)
    fields = {"bias_dtype": torch.float32, "mask_dtype": "f32", "mask_windows": 64}
    reports = kjit.torch.warmup([("attention", q, None, fields),
                                 ("attention", q, None, dict(fields, causal=True))])
    assert all(r["kernel"].startswith("kjit::attention_tile") for r in reports)
    assert reports[0]["kernel"] != reports[1]["kernel"]
    out = torch.empty_like(q)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        functional = torch.ops.kjit.attention(q, k, v, bias, mask)
        kjit.torch.attention(q, k, v, bias=bias, mask=mask, causal=True, out=out)
    for seed in range(3):
        for i, t in enumerate((q, k, v)):
            t.copy_(randn(*t.shape, seed=10 * seed + i))
        graph.replay()
        torch.cuda.synchronize()
        check(functional, *reference(q, k, v, bias, mask))
        check(out, *reference(q, k, v, bias, mask, causal=True))


def test_runs_on_torchs_current_stream():
    q, k, v = (randn(256, 4, 64, 64, seed=s) for s in range(3))
    source = q.clone()
    q.zero_()
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)
        q.copy_(source)
        first = kjit.attention(q, k, v)
        second = torch.ops.kjit.attention(q, k, v)
    side.synchronize()
    want = reference(source, k, v)
    check(first, *want)
    check(second, *want)
