# SPDX-License-Identifier: Apache-2.0
"""Backward formulas of the functional softmax and log_softmax ops (written with torch ops, so
torch.compile traces them too): a loss built on kjit trains like one built on torch."""
import torch


def _setup(ctx, inputs, output) -> None:
    ctx.save_for_backward(output)
    ctx.x_dtype = inputs[0].dtype


def _softmax_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    y, grad = y.float(), grad.float()
    return (y * (grad - (grad * y).sum(-1, keepdim=True))).to(ctx.x_dtype), None


def _log_softmax_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    y, grad = y.float(), grad.float()
    return (grad - y.exp() * grad.sum(-1, keepdim=True)).to(ctx.x_dtype), None


torch.library.register_autograd("kjit::softmax", _softmax_backward, setup_context=_setup)
torch.library.register_autograd("kjit::log_softmax", _log_softmax_backward, setup_context=_setup)
