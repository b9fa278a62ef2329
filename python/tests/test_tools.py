# SPDX-License-Identifier: Apache-2.0
"""explain, compile and precompile work from a call's description, with no GPU when an arch is
named, and agree with one another."""
import json

import pytest

import kjit
from conftest import gpu_reason

SPEC = {"ops": ["softmax", "log_softmax"], "dtypes": ["f32", "bf16"], "cols": [128, 4096],
        "rows": [64]}
SPEC_KERNELS = 8  # every combination is a distinct kernel


@pytest.mark.parametrize("op,extra", [
    ("softmax", {"dtype": "bf16"}),
    ("log_softmax", {"dtype": "f16", "out_dtype": "f32"}),
    ("reduce_scale", {"dtype": "f32"}),
    ("softmax_topk", {"dtype": "f32", "k": 50, "index_dtype": "int32"}),
])
def test_explain_plans_every_op_for_an_arch(op, extra):
    plan = kjit.explain(op, cols=32000, rows=8, arch="sm_90", **extra)
    assert plan["arch"] == "sm_90"
    assert plan["planned"]["op"] == op
    assert plan["planned"]["cols"] == 32000
    assert plan["kernel"].startswith("kjit::")
    assert plan["block"] > 0
    assert isinstance(plan["config"], dict) and plan["config"]["algorithm"]


def test_explain_takes_framework_dtype_names():
    assert (kjit.explain("softmax", cols=1000, dtype="bfloat16", arch="sm_80")["kernel"] ==
            kjit.explain("softmax", cols=1000, dtype="bf16", arch="sm_80")["kernel"])


def test_explain_forces_an_algorithm():
    plan = kjit.explain("softmax", cols=4096, rows=64, arch="sm_90", algorithm="block_smem")
    assert plan["config"]["algorithm"] == "block_smem"
    with pytest.raises(kjit.InvalidArgumentError, match="algorithm"):
        kjit.explain("softmax", cols=4096, arch="sm_90", algorithm="teleport")


@pytest.mark.skipif(gpu_reason() is None, reason="a GPU is here: explain plans for it")
def test_without_a_gpu_an_arch_is_needed():
    with pytest.raises(kjit.InvalidArgumentError, match="arch: no GPU here"):
        kjit.explain("softmax", cols=4096)


def test_compile_reports_resources():
    report = kjit.compile("softmax_topk", cols=32000, rows=4, k=50, arch="sm_90")
    assert report["kernel"] == kjit.explain("softmax_topk", cols=32000, rows=4, k=50,
                                            arch="sm_90")["kernel"]
    assert report["registers"] > 0
    assert report["cubin_bytes"] > 1000
    assert report["compile_ms"] > 0
    assert len(report["kernel_key"]) >= 16


def test_precompile_fills_a_folder_then_finds_it_full(cache_dir):
    first = kjit.precompile(SPEC, ["sm_80", "sm_90"], cache_dir=cache_dir, jobs=2)
    assert first["failed"] == []
    assert first["kernels"] == 2 * SPEC_KERNELS
    assert first["compiled"] == 2 * SPEC_KERNELS
    assert first["cache_dir"] == str(cache_dir)
    again = kjit.precompile(json.dumps(SPEC), "sm_80,sm_90", cache_dir=cache_dir)
    assert (again["compiled"], again["cached"]) == (0, 2 * SPEC_KERNELS)
    assert len(kjit.cache.inspect(cache_dir)) == 2 * SPEC_KERNELS


def test_precompile_reads_a_spec_file(tmp_path, cache_dir):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"ops": ["softmax_topk"], "dtypes": ["f32"], "cols": [32000],
                                "rows": [1], "k": [50]}))
    out = kjit.precompile(spec, ["sm_90"], cache_dir=cache_dir)
    assert (out["kernels"], out["compiled"]) == (1, 1)


def test_precompile_names_what_is_wrong(cache_dir):
    with pytest.raises(kjit.InvalidArgumentError, match="spec"):
        kjit.precompile({"ops": ["softmax"], "dtypes": ["f32"]}, ["sm_90"], cache_dir=cache_dir)
    with pytest.raises(kjit.InvalidArgumentError, match="archs"):
        kjit.precompile(SPEC, ["sm_1"], cache_dir=cache_dir)


def test_info_lists_nvrtc_targets():
    info = kjit.info()
    assert "sm_90" in info["archs"]
    assert info["nvrtc"]
