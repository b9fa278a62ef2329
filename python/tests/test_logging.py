# SPDX-License-Identifier: Apache-2.0
"""kjit's log lines reach Python's logging (the ``kjit`` logger), those of its worker threads
too, and go back to stderr when asked."""
import logging

import pytest

import kjit


@pytest.fixture
def debug_level():
    kjit.Runtime(log_level="debug")  # the level is the process's
    yield
    kjit.Runtime(log_level="warn")


def test_lines_reach_the_kjit_logger(debug_level, caplog, cache_dir):
    spec = {"ops": ["log_softmax"], "dtypes": ["f32"], "cols": [320], "rows": [2]}
    with caplog.at_level(logging.DEBUG, logger="kjit"):
        kjit.precompile(spec, ["sm_90"], cache_dir=cache_dir, jobs=2)  # compiled on a worker thread
    lines = [r for r in caplog.records if r.name == "kjit"]
    assert any("compiled kjit::" in r.getMessage() and r.levelno == logging.DEBUG for r in lines)
    assert any("compiling" in r.getMessage() and r.levelno == logging.INFO for r in lines)


def test_lines_go_to_stderr_when_asked(debug_level, caplog, capfd, cache_dir):
    spec = {"ops": ["softmax"], "dtypes": ["f16"], "cols": [96], "rows": [2]}
    kjit.forward_to_python(False)
    try:
        with caplog.at_level(logging.DEBUG, logger="kjit"):
            kjit.precompile(spec, ["sm_90"], cache_dir=cache_dir)
    finally:
        kjit.forward_to_python(True)
    assert not [r for r in caplog.records if r.name == "kjit"]
    assert "[kjit D] compiled kjit::" in capfd.readouterr().err
