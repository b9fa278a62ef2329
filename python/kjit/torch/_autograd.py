# SPDX-License-Identifier: Apache-2.0
"""Differentiable softmax and log_softmax for kjit.torch.softmax / log_softmax: an
autograd.Function around the op (torch.compile traces it), used only when a gradient is wanted.
The ops themselves carry no autograd kernel, which would run Python on every eager call."""
import torch

_ops = torch.ops.kjit


class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, out_dtype):
        y = _ops.softmax.default(x, out_dtype)
        ctx.save_for_backward(y)
        ctx.x_dtype = x.dtype
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        y, grad = y.float(), grad.float()
        return (y * (grad - (grad * y).sum(-1, keepdim=True))).to(ctx.x_dtype), None


class LogSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, out_dtype):
        y = _ops.log_softmax.default(x, out_dtype)
        ctx.save_for_backward(y)
        ctx.x_dtype = x.dtype
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        y, grad = y.float(), grad.float()
        return (grad - y.exp() * grad.sum(-1, keepdim=True)).to(ctx.x_dtype), None


def wants_grad(x) -> bool:
    return x.requires_grad and torch.is_grad_enabled()
