#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The dependency rule (ARCHITECTURE.md): each layer of the library includes only itself and the
layers below it. Reads every #include "..." of the library's sources and exits non-zero naming
each one that reaches up or sideways."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Layer of a path (first match wins) and what each layer may include besides itself.
LAYERS = [
    ("kernels", r"kernel_sources/"),
    ("base", r"runtime/include/kjit/|runtime/(status|env|log|types|config|once_map|parallel_for|bounded_json)\.(h|cpp)$"),
    ("driver", r"runtime/driver/"),
    ("cache", r"cache/"),
    ("compiler", r"runtime/compiler/"),
    ("launch", r"runtime/launch/"),
    ("autotune", r"autotune/|runtime/ops/.*_scratch\.(h|cpp)$"),
    ("runtime", r"runtime/ops/.*_api\.cpp$"),
    ("ops", r"runtime/ops/"),
    ("runtime", r"runtime/"),
]
ALLOWED = {
    "kernels": {"base"},  # only kjit/row_op.hpp, which is embedded beside the kernel sources
    "base": set(),
    "driver": {"base"},
    "cache": {"base"},
    "compiler": {"base", "cache"},
    "launch": {"base", "driver", "cache", "compiler", "kernels"},
    "ops": {"base", "driver", "cache", "compiler", "launch", "kernels"},
    "autotune": {"base", "driver", "cache", "compiler", "launch", "ops", "kernels"},
    "runtime": {"base", "driver", "cache", "compiler", "launch", "ops", "autotune", "kernels"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def layer_of(path: str):
    for name, pattern in LAYERS:
        if re.match(pattern, path):
            return name
    return None


def target_of(include: str):
    # Public headers are included as "kjit/...".
    return layer_of("runtime/include/" + include if include.startswith("kjit/") else include)


def main() -> int:
    problems = []
    for source in sorted(ROOT.glob("**/*")):
        relative = source.relative_to(ROOT).as_posix()
        if source.suffix not in (".h", ".hpp", ".cpp", ".cuh") or relative.startswith(("build", ".")):
            continue
        layer = layer_of(relative)
        if layer is None:
            continue  # cli/, bench/, tests/, examples/: applications of the library
        for include in INCLUDE.findall(source.read_text(errors="replace")):
            target = target_of(include)
            if target is None or target == layer or target in ALLOWED[layer]:
                continue
            problems.append(f"{relative} ({layer}) includes {include} ({target})")
    for problem in problems:
        print(problem)
    print(f"{len(problems)} includes break the dependency rule" if problems else "every include follows the dependency rule")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
