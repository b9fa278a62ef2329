# SPDX-License-Identifier: Apache-2.0
"""What building kjit._torch_ops needs from the torch this Python imports, printed as a CMake
list: version;CUDA version;include folder;library folder;_GLIBCXX_USE_CXX11_ABI. Exits 1 with
the reason on stderr where that torch cannot build it (none, or one without CUDA)."""
import os
import sys

try:
    import torch
except Exception as error:  # noqa: BLE001  (any failure to import means: no torch to build on)
    sys.exit(f"torch is not importable ({type(error).__name__}: {error})")

if torch.version.cuda is None:
    sys.exit(f"torch {torch.__version__} is built without CUDA")
root = os.path.dirname(torch.__file__)
include, lib = os.path.join(root, "include"), os.path.join(root, "lib")
for needed in ("torch/library.h", "c10/cuda/CUDAStream.h", "ATen/cuda/EmptyTensor.h",
               "torch/csrc/utils/pybind.h"):
    if not os.path.exists(os.path.join(include, needed)):
        sys.exit(f"torch {torch.__version__} ships no {needed}")
for needed in ("libc10.so", "libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so",
               "libtorch_python.so"):
    if not os.path.exists(os.path.join(lib, needed)):
        sys.exit(f"torch {torch.__version__} ships no {needed}")
print(";".join([torch.__version__, torch.version.cuda, include, lib,
                str(int(torch._C._GLIBCXX_USE_CXX11_ABI))]), end="")
