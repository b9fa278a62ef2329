# SPDX-License-Identifier: Apache-2.0
"""What kjit asks of the array frameworks: a new output array, made by the input's own framework
on the input's device (torch tensors get torch tensors, CuPy arrays CuPy arrays), and the stream
to run on (the framework's current stream). Other producers (JAX, ...) cannot be written into
through DLPack: pass ``out=`` (for JAX inputs, say a torch or CuPy array); they run on the
stream given, else on the legacy default stream after the input is ready."""
import importlib

from . import _kjit


def _framework(array) -> str:
    return type(array).__module__.split(".", 1)[0]


def allocate(like, shape, dtype: str):
    framework = _framework(like)
    if framework == "torch":
        torch = importlib.import_module("torch")
        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if framework == "cupy":
        cupy = importlib.import_module("cupy")
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    raise TypeError(
        f"out: kjit allocates outputs through torch and CuPy only; for a {type(like).__name__} "
        "input pass the output arrays yourself (out=, probs=/indices=, scale=)"
    )


def stream_of(like, stream) -> int:
    """A CUstream handle as an int: from ``stream`` when given, else ``like``'s framework's."""
    if stream is not None:
        for attribute in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
            if hasattr(stream, attribute):
                return int(getattr(stream, attribute))
        if hasattr(stream, "__cuda_stream__"):  # the CUDA stream protocol: (version, handle)
            return int(stream.__cuda_stream__()[1])
        raise TypeError(f"stream: expected an int handle or a stream object, got {type(stream).__name__}")
    framework = _framework(like)
    if framework == "torch":
        torch = importlib.import_module("torch")
        return torch._C._cuda_getCurrentRawStream(like.device.index)
    if framework == "cupy":
        cupy = importlib.import_module("cupy")
        with cupy.cuda.Device(like.device.id):
            return cupy.cuda.get_current_stream().ptr
    if hasattr(like, "block_until_ready"):  # JAX: its own streams are not exposed
        like.block_until_ready()
    return 0


_kjit._set_array_hooks(allocate, stream_of)
