# SPDX-License-Identifier: Apache-2.0
"""kjit's exceptions: every failure of the library arrives as one of these, with the library's
status name in ``.status`` and any long diagnostic (an NVRTC log) in ``.detail``."""
from . import _kjit


class Error(RuntimeError):
    """A kjit call failed; ``status`` names why (kjit_status as text), ``detail`` may hold a log."""

    status = "internal"
    detail = ""


class InvalidArgumentError(Error, ValueError):
    """An argument is wrong; the message starts with its name (``x: ...``, ``k: ...``)."""

    status = "invalid_argument"


class InvalidConfigError(InvalidArgumentError):
    """A forced config or algorithm cannot run the call."""

    status = "invalid_config"


class NoDriverError(Error):
    """No CUDA driver (libcuda.so.1) here: GPU calls cannot run; the admin tools still work."""

    status = "no_driver"


class CompileError(Error):
    """NVRTC rejected a kernel; ``detail`` holds its log."""

    status = "compile"


class CacheError(Error):
    """A cache folder or bundle could not be read or written."""

    status = "cache_io"


class NotFoundError(Error):
    """Something asked for is not there (a kernel missing from every cache with jit=False)."""

    status = "not_found"


class OutOfResourcesError(Error, MemoryError):
    """The GPU or the host ran out of memory or another resource."""

    status = "out_of_resources"


_kjit._set_error_types(
    Error,
    {
        "invalid_argument": InvalidArgumentError,
        "invalid_config": InvalidConfigError,
        "no_driver": NoDriverError,
        "compile": CompileError,
        "cache_io": CacheError,
        "not_found": NotFoundError,
        "out_of_resources": OutOfResourcesError,
    },
)
