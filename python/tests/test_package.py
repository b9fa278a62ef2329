# SPDX-License-Identifier: Apache-2.0
"""The package is built and importable, its version is the headers', and Runtime takes every
RuntimeOptions field by name."""
import re

import pytest

import kjit
from conftest import ROOT


def header_version():
    text = (ROOT / "runtime/include/kjit/kjit.h").read_text()
    return re.search(r'#define KJIT_VERSION_STRING "([^"]+)"', text).group(1)


def test_the_extension_is_built_and_loaded():
    assert kjit._kjit.__file__.endswith((".so", ".pyd"))
    assert callable(kjit._kjit._launch_rowwise)


def test_version_matches_the_header_and_the_library():
    assert kjit.__version__ == header_version()
    assert kjit.version() == header_version()
    assert kjit.info()["version"] == header_version()


def test_installed_metadata_matches():
    metadata = pytest.importorskip("importlib.metadata")
    try:
        assert metadata.version("kjit") == header_version()
    except metadata.PackageNotFoundError:
        pytest.skip("kjit is imported from a build tree, not an installed package")


def runtime_option_fields():
    """The fields of kjit::RuntimeOptions, read from its header."""
    text = (ROOT / "runtime/include/kjit/options.hpp").read_text()
    body = text[text.index("struct RuntimeOptions {"):text.index("static RuntimeOptions")]
    return set(re.findall(r"^\s+[\w:]+ (\w+)(?: = [^;]+)?;", body, re.MULTILINE))


def test_runtime_takes_every_option():
    fields = runtime_option_fields()
    assert len(fields) >= 8
    assert set(kjit.Runtime().options) == fields
    given = {"cache_dir": "/tmp/kjit-options", "cache_bundle": "", "disk_cache": False,
             "jit": False, "tune": "first-use", "log_level": "warn",
             "cache_max_bytes": 123 << 20, "dependent_launch": False}
    assert set(given) == fields
    assert kjit.Runtime(**given).options == given


def test_options_not_given_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("KJIT_TUNE", "off")
    monkeypatch.setenv("KJIT_CACHE_MAX_SIZE", "500M")
    options = kjit.Runtime(jit=False).options
    assert options["tune"] == "off"
    assert options["cache_max_bytes"] == 500 << 20
    assert options["jit"] is False


def test_sizes_read_as_kjit_cache_max_size_does():
    assert kjit.Runtime(cache_max_bytes="2G").options["cache_max_bytes"] == 2 << 30


def test_default_runtime_is_one_per_process():
    assert kjit.default_runtime() is kjit.default_runtime()
    assert kjit.default_runtime()._native is kjit._kjit.default_runtime()


def test_torch_is_imported_only_when_asked_for():
    import subprocess
    import sys
    code = "import sys, kjit; kjit.info(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
