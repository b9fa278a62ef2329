# SPDX-License-Identifier: Apache-2.0
"""Where there is no CUDA driver, calls that need the GPU raise kjit.NoDriverError saying so, and
everything else works. Skipped (visibly) where a driver is present."""
import pytest

import kjit

pytestmark = pytest.mark.skipif(kjit.info()["driver"] is not None,
                                reason="no-driver tests SKIPPED: a CUDA driver is here")


def expect_no_driver(call, *args, **kwargs):
    with pytest.raises(kjit.NoDriverError, match="no CUDA driver") as caught:
        call(*args, **kwargs)
    assert caught.value.status == "no_driver"
    assert isinstance(caught.value, kjit.Error) and isinstance(caught.value, RuntimeError)


def test_gpu_calls_say_there_is_no_driver():
    rt = kjit.Runtime()
    expect_no_driver(rt.prepare, "softmax", cols=1000, rows=4)
    expect_no_driver(rt.prepare, "softmax_topk", cols=1000, k=8)
    expect_no_driver(rt.tune, "log_softmax", cols=1000, rows=4)
    expect_no_driver(kjit.default_runtime().prepare, "reduce_scale", cols=64)


def test_info_says_why():
    info = kjit.info()
    assert info["gpus"] == []
    assert "no CUDA driver" in info["no_driver"]


def test_the_tools_still_work(cache_dir):
    assert kjit.explain("softmax", cols=1000, arch="sm_90")["kernel"]
    spec = {"ops": ["softmax"], "dtypes": ["f32"], "cols": [100], "rows": [1]}
    assert kjit.precompile(spec, ["sm_90"], cache_dir=cache_dir)["compiled"] == 1
