# SPDX-License-Identifier: Apache-2.0
"""kjit.cache in a temporary folder: inspect what precompile put there, verify finds and removes a
corrupt entry, a bundle carries every entry to another folder, prune and clear empty it."""
import pytest

import kjit

SPEC = {"ops": ["softmax"], "dtypes": ["f32", "f16"], "cols": [256, 1024], "rows": [8]}
KERNELS = 4


@pytest.fixture
def filled(cache_dir):
    assert kjit.precompile(SPEC, ["sm_90"], cache_dir=cache_dir)["compiled"] == KERNELS
    return cache_dir


def keys(cache_dir):
    return sorted(entry["path"].rsplit("/", 1)[-1] for entry in kjit.cache.inspect(cache_dir))


def test_inspect_lists_every_kernel(filled):
    entries = kjit.cache.inspect(filled)
    assert len(entries) == KERNELS
    for entry in entries:
        assert entry["kind"] == "cubin"
        assert entry["payload_bytes"] > 0
        assert entry["key"]["arch"] == "sm_90"
        assert entry["metadata"]["kernel"].startswith("kjit::")


def test_verify_removes_a_corrupt_entry(filled):
    clean = kjit.cache.verify(filled)
    assert (clean["checked"], clean["ok"], clean["removed"]) == (KERNELS, KERNELS, 0)
    victim = kjit.cache.inspect(filled)[0]["path"]
    data = bytearray(open(victim, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(victim, "wb").write(bytes(data))
    found = kjit.cache.verify(filled)
    assert (found["checked"], found["ok"], found["removed"]) == (KERNELS, KERNELS - 1, 1)
    assert any(victim.rsplit("/", 1)[-1] in reason for reason in found["reasons"])
    assert len(kjit.cache.inspect(filled)) == KERNELS - 1


def test_a_bundle_carries_every_entry(filled, tmp_path):
    bundle = tmp_path / "kernels.kjb"
    assert kjit.cache.export_bundle(bundle, filled) == KERNELS
    copy = tmp_path / "copy"
    assert kjit.cache.import_bundle(bundle, copy) == KERNELS
    assert keys(copy) == keys(filled)
    with pytest.raises(kjit.CacheError):
        kjit.cache.import_bundle(tmp_path / "missing.kjb", copy)


def test_prune_and_clear(filled):
    assert kjit.cache.prune(0, filled)["removed"] == 0  # 0 means no cap, as KJIT_CACHE_MAX_SIZE=0
    pruned = kjit.cache.prune(1, filled)
    assert pruned["removed"] == KERNELS and pruned["bytes_after"] == 0
    assert kjit.precompile(SPEC, ["sm_90"], cache_dir=filled)["compiled"] == KERNELS
    assert kjit.cache.clear(filled) == KERNELS
    assert kjit.cache.inspect(filled) == []


def test_the_environment_names_the_default_folder(filled, monkeypatch):
    monkeypatch.setenv("KJIT_CACHE_DIR", str(filled))
    assert len(kjit.cache.inspect()) == KERNELS
