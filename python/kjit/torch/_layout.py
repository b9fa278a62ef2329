# SPDX-License-Identifier: Apache-2.0
"""Reading a tensor as rows (last dimension the columns, the others counting rows), and the
outputs each op allocates: shared by the CUDA kernels and the fake ones, so what torch.compile
traces is what runs. Every error names the argument."""
import torch

from .._errors import InvalidArgumentError

# kjit_dtype codes (kjit.h).
CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.int32: 3, torch.int64: 4}
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
INDEX_DTYPES = (torch.int32, torch.int64)


def reject(argument: str, what: str):
    raise InvalidArgumentError(f"{argument}: {what}")


def check_dtype(t: torch.Tensor, name: str, allowed=FLOATS) -> None:
    if t.dtype not in allowed:
        names = ", ".join(str(d).replace("torch.", "") for d in allowed)
        reject(name, f"dtype {str(t.dtype).replace('torch.', '')} is not supported; expected {names}")


def rows_of(t: torch.Tensor, name: str):
    """(rows, cols, row stride in elements) of ``t`` read as rows."""
    if t.dim() == 0:
        reject(name, "a 0-d tensor has no rows; give it at least one dimension")
    cols = t.shape[-1]
    if cols == 0:
        reject(name, "the last dimension is empty (0 columns)")
    if t.is_contiguous():
        return t.numel() // cols, cols, cols
    if cols > 1 and t.stride(-1) != 1:
        reject(name, f"the last dimension must be contiguous (stride 1), but its stride is {t.stride(-1)}")
    row_stride, inner = cols, 0
    for dim in range(t.dim() - 2, -1, -1):
        size, stride = t.shape[dim], t.stride(dim)
        if size == 1:
            continue
        if inner == 0:
            row_stride = stride
        elif stride != inner:
            reject(name, f"its leading dimensions do not step as rows of one stride (dimension "
                         f"{dim} has stride {stride}, expected {inner}); make it contiguous first")
        inner = stride * size
    rows = t.numel() // cols
    if rows > 1 and row_stride < cols:
        reject(name, f"its rows overlap (row stride {row_stride} is less than its {cols} columns)")
    return rows, cols, row_stride


def check_output(out: torch.Tensor, name: str, like: torch.Tensor, shape, allowed, contiguous: bool):
    check_dtype(out, name, allowed)
    if tuple(out.shape) != tuple(shape):
        reject(name, f"shape {tuple(out.shape)} does not match {tuple(shape)}")
    if contiguous and not out.is_contiguous():
        reject(name, "must be contiguous")
    if out.device != like.device:
        reject(name, f"is on {out.device}, but the input is on {like.device}")


def rowwise_output(x: torch.Tensor, out_dtype) -> torch.Tensor:
    """The output softmax, log_softmax and reduce_scale allocate: contiguous, x's shape."""
    check_dtype(x, "x")
    rows_of(x, "x")
    dtype = x.dtype if out_dtype is None else out_dtype
    if dtype not in FLOATS:
        reject("out_dtype", f"{dtype} is not supported; expected float32, float16 or bfloat16")
    return torch.empty(x.shape, dtype=dtype, device=x.device)


def scale_shape(x: torch.Tensor):
    return tuple(x.shape[:-1]) if x.dim() > 1 else (1,)


def topk_outputs(logits: torch.Tensor, k: int, temperature: float, index_dtype):
    """The (probs, indices) softmax_topk allocates: contiguous, logits' shape with k last."""
    check_dtype(logits, "logits")
    _, cols, _ = rows_of(logits, "logits")
    check_topk_scalars(cols, k, temperature)
    dtype = torch.int64 if index_dtype is None else index_dtype
    if dtype not in INDEX_DTYPES:
        reject("index_dtype", f"{dtype} is not supported; expected int32 or int64")
    shape = tuple(logits.shape[:-1]) + (k,)
    return (torch.empty(shape, dtype=torch.float32, device=logits.device),
            torch.empty(shape, dtype=dtype, device=logits.device))


def check_topk_scalars(cols: int, k: int, temperature: float) -> None:
    if k < 1:
        reject("k", f"must be >= 1 (got {k})")
    if k > cols:
        reject("k", f"{k} is larger than the last dimension of logits ({cols})")
    if k > 4096:
        reject("k", f"{k} is above the maximum of 4096")
    if not (temperature > 0.0) or temperature == float("inf"):
        reject("temperature", f"must be finite and > 0 (got {temperature})")


def check_k_per_row(k_per_row, logits: torch.Tensor, rows: int) -> None:
    if k_per_row is None:
        return
    check_dtype(k_per_row, "k_per_row", (torch.int32,))
    if k_per_row.numel() != rows or not k_per_row.is_contiguous():
        reject("k_per_row", f"must be a contiguous tensor of {rows} values, one per row of logits")
    if k_per_row.device != logits.device:
        reject("k_per_row", f"is on {k_per_row.device}, but logits is on {logits.device}")
