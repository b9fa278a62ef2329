# SPDX-License-Identifier: Apache-2.0
"""References for the GPU suites, computed by torch in float64, and tolerances by output dtype."""
import torch

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# (rtol, atol) by output dtype: a few units in the last place of that dtype.
TOLERANCE = {torch.float32: (2e-5, 1e-6), torch.float16: (2e-3, 1e-5),
             torch.bfloat16: (1.6e-2, 1e-5)}


def close(actual, expected):
    """actual against a float64 reference rounded to actual's dtype."""
    rtol, atol = TOLERANCE[actual.dtype]
    torch.testing.assert_close(actual.double(), expected.to(actual.dtype).double(), rtol=rtol,
                               atol=atol, equal_nan=True)


def rowwise(op: str, x):
    x64 = x.double()
    if op == "softmax":
        return torch.softmax(x64, -1), None
    if op == "log_softmax":
        return torch.log_softmax(x64, -1), None
    scale = x64.abs().amax(-1, keepdim=True)
    return torch.where(scale > 0, x64 / scale, torch.zeros_like(x64)), scale.squeeze(-1)


def topk(logits, k, temperature=1.0, logprobs=False, renorm=False, k_per_row=None):
    """(probs, indices) as kjit defines them: the k largest, ties in ascending index order."""
    x64 = logits.double() / temperature
    order = torch.sort(-x64, dim=-1, stable=True).indices[..., :k]
    p = torch.softmax(x64, -1).gather(-1, order)
    keep = torch.ones_like(p, dtype=torch.bool)
    if k_per_row is not None:  # a row keeps its first k_per_row slots; renorm is over those
        slot = torch.arange(k, device=logits.device).expand(p.shape)
        keep = slot < k_per_row.clamp(0, k).reshape(p.shape[:-1] + (1,)).long()
        p = torch.where(keep, p, torch.zeros_like(p))
    if renorm:
        p = p / p.sum(-1, keepdim=True)
    out = p.log() if logprobs else p
    out = torch.where(keep, out, torch.full_like(out, float("-inf") if logprobs else 0.0))
    return out, torch.where(keep, order, torch.full_like(order, -1))
