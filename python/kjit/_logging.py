# SPDX-License-Identifier: Apache-2.0
"""kjit's log lines go to the ``kjit`` logger of Python's logging (instead of stderr). Which lines
kjit makes is its own level (KJIT_LOG_LEVEL, or Runtime(log_level=...), default warn); logging's
handlers and levels then apply as to any other logger. Lines made on kjit's worker threads reach
Python at the end of the kjit call that caused them."""
import atexit
import logging

from . import _kjit

logger = logging.getLogger("kjit")

# spdlog's levels, trace 0 .. critical 5, as logging's.
_LEVELS = (5, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)


def _emit(level: int, message: str) -> None:
    logger.log(_LEVELS[level] if 0 <= level < len(_LEVELS) else logging.ERROR, message)


def forward_to_python(enabled: bool = True) -> None:
    """Sends kjit's lines to the ``kjit`` logger (the default once kjit is imported), or with
    ``enabled=False`` back to stderr as kjit prints them on its own."""
    _kjit._set_log_handler(_emit if enabled else None)


forward_to_python(True)
# Lines made while the interpreter shuts down go to stderr, not into a half-torn-down logging.
atexit.register(forward_to_python, False)
