#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seed 004's attention tile (bench/seed_attention.cu), compiled at run time and launched on a
caller's stream: through CuPy's RawModule where CuPy is installed, else through NVRTC and the
driver API by ctypes. No torch here: the caller passes device pointers, strides and a CUstream.

Without a GPU, `seed_attention.py --compile sm_90` compiles the source with NVRTC (ctypes) and
prints the cubin's size: proof that the source builds the way the benchmark builds it.
"""
import argparse
import ctypes
import ctypes.util
import os
import sys

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seed_attention.cu")
KERNELS = {"float16": "seed_attention_f16", "bfloat16": "seed_attention_bf16"}
TILE = 16
WARP = 32
# WMMA loads need 32-byte aligned tiles and row strides of a multiple of 8 16-bit elements; the
# kernel's 16-byte stores of O need 16-byte aligned rows.
ALIGN_BYTES = 32
ELEMENT_BYTES = 2


def unsupported(m, n, d, dv, bias, mask, causal):
    """Why the seed's design cannot run this problem shape, or None when it can."""
    if (m, n) != (TILE, TILE):
        return f"the seed's design is one 16x16 tile (M={m}, N={n})"
    if d % TILE or dv % TILE:
        return f"D and Dv must be multiples of 16 (D={d}, Dv={dv})"
    if bias or mask or causal:
        return "the seed's design has no bias, mask or causal masking"
    return None


def misaligned(pointers, strides):
    """Why these tensors break the kernel's alignment needs, or None. strides: per tensor
    (batch, head, row) in elements."""
    for name, pointer in pointers.items():
        if pointer % ALIGN_BYTES:
            return f"{name} is not {ALIGN_BYTES}-byte aligned"
    for name, triple in strides.items():
        if any((s * ELEMENT_BYTES) % ALIGN_BYTES for s in triple):
            return f"{name} strides {triple} are not multiples of {ALIGN_BYTES} bytes"
    return None


def read_source():
    with open(SOURCE, encoding="utf-8") as f:
        return f.read()


def compile_options(d, dv):
    return ["-std=c++17", f"-DSEED_D={d}", f"-DSEED_DV={dv}"]


def cuda_include_dirs():
    """The CUDA toolkit's include folder for <mma.h> and <cuda_fp16.h> (NVRTC does not search)."""
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    return [os.path.join(r, "include") for r in roots
            if r and os.path.isfile(os.path.join(r, "include", "mma.h"))][:1]


# ---- NVRTC and the driver through ctypes -----------------------------------------------------

def load_first(names):
    for name in names:
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise OSError(f"none of {', '.join(n for n in names if n)} could be loaded")


def load_nvrtc():
    """The NVRTC beside the headers cuda_include_dirs() found first, so that the two match."""
    beside = [os.path.join(d, "..", "lib64", "libnvrtc.so") for d in cuda_include_dirs()]
    return load_first(beside + ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                ctypes.util.find_library("nvrtc")])


def nvrtc_cubin(source, options, arch):
    """The cubin of `source` for `arch` ("sm_90"), or RuntimeError with NVRTC's log."""
    nvrtc = load_nvrtc()
    vp, cp = ctypes.c_void_p, ctypes.c_char_p
    program = vp()
    status = nvrtc.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"seed_attention.cu",
                                      0, None, None)
    if status:
        raise RuntimeError(f"nvrtcCreateProgram failed ({status})")
    try:
        opts = options + [f"--gpu-architecture={arch}"] + [f"-I{d}" for d in cuda_include_dirs()]
        array = (cp * len(opts))(*[o.encode() for o in opts])
        status = nvrtc.nvrtcCompileProgram(program, len(opts), array)
        if status:
            size = ctypes.c_size_t()
            nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            nvrtc.nvrtcGetProgramLog(program, log)
            raise RuntimeError(f"NVRTC failed ({status}):\n{log.value.decode(errors='replace')}")
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetCUBINSize(program, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetCUBIN(program, cubin)
        return cubin.raw
    finally:
        nvrtc.nvrtcDestroyProgram(ctypes.byref(program))


class DriverKernels:
    """The kernels of one cubin, loaded into the current context (torch's primary context)."""

    def __init__(self, cubin):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.module = ctypes.c_void_p()
        self.check(self.cuda.cuModuleLoadData(ctypes.byref(self.module), cubin), "cuModuleLoadData")
        self.functions = {}
        for name in KERNELS.values():
            fn = ctypes.c_void_p()
            self.check(self.cuda.cuModuleGetFunction(ctypes.byref(fn), self.module, name.encode()),
                       f"cuModuleGetFunction({name})")
            self.functions[name] = fn

    @staticmethod
    def check(status, what):
        if status:
            raise RuntimeError(f"{what} failed with CUresult {status}")

    def launch(self, name, grid, args, stream):
        values = [ctypes.c_uint64(a) for a in args[:4]]  # q, k, v, o
        values += [ctypes.c_int64(a) for a in args[4:17]]  # heads and the 12 strides
        values.append(ctypes.c_float(args[17]))  # scale
        params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p)
                                                   for v in values])
        self.check(self.cuda.cuLaunchKernel(self.functions[name], ctypes.c_uint(grid), 1, 1, WARP,
                                            1, 1, 0, ctypes.c_void_p(stream), params, None),
                   f"cuLaunchKernel({name})")


class CupyKernels:
    def __init__(self, source, options):
        import cupy  # noqa: PLC0415 - optional: the ctypes path stands in where it is missing
        import numpy  # noqa: PLC0415
        self.cupy, self.numpy = cupy, numpy
        include = [f"-I{d}" for d in cuda_include_dirs()]
        module = cupy.RawModule(code=source, options=tuple(options + include))
        self.functions = {name: module.get_function(name) for name in KERNELS.values()}

    def launch(self, name, grid, args, stream):
        np = self.numpy
        values = ([np.uint64(a) for a in args[:4]] + [np.int64(a) for a in args[4:17]] +
                  [np.float32(args[17])])
        with self.cupy.cuda.ExternalStream(stream):
            self.functions[name]((grid,), (WARP,), tuple(values))


class SeedAttention:
    """Compiled for one (D, Dv); launch() serves float16 and bfloat16."""

    def __init__(self, d, dv, arch):
        source, options = read_source(), compile_options(d, dv)
        self.d, self.dv = d, dv
        try:
            self.kernels = CupyKernels(source, options)
            self.via = "CuPy RawModule"
        except Exception as cupy_error:  # noqa: BLE001 - no CuPy, or one that cannot build it
            try:
                self.kernels = DriverKernels(nvrtc_cubin(source, options, arch))
            except Exception as e:
                raise RuntimeError(f"CuPy: {type(cupy_error).__name__}: {cupy_error}; "
                                   f"ctypes: {type(e).__name__}: {e}") from e
            self.via = f"NVRTC + driver by ctypes (CuPy: {type(cupy_error).__name__})"

    def launch(self, dtype, q, k, v, o, batch, heads, strides, scale, stream):
        """dtype: "float16" or "bfloat16"; q, k, v, o: device pointers; strides: {"q": (batch,
        head, row), ...} in elements; stream: a CUstream handle (int)."""
        why = misaligned({"q": q, "k": k, "v": v, "o": o}, strides)
        if why:
            raise ValueError(f"seed kernel: {why}")
        if batch * heads >= 2**31:
            raise ValueError("seed kernel: one block a problem, at most 2^31 - 1 problems")
        args = [q, k, v, o, heads]
        for name in ("q", "k", "v", "o"):
            args += list(strides[name])
        args.append(scale)
        self.kernels.launch(KERNELS[dtype], batch * heads, args, stream)


def main():
    parser = argparse.ArgumentParser(description="compile the seed kernel with NVRTC (no GPU)")
    parser.add_argument("--compile", metavar="ARCH", required=True, help="e.g. sm_90")
    parser.add_argument("--d", type=int, default=16)
    parser.add_argument("--dv", type=int, default=16)
    args = parser.parse_args()
    cubin = nvrtc_cubin(read_source(), compile_options(args.d, args.dv), args.compile)
    names = [n for n in KERNELS.values() if n.encode() in cubin]
    print(f"{SOURCE}: {len(cubin)} bytes of {args.compile} cubin (D={args.d}, Dv={args.dv}); "
          f"kernels: {', '.join(names)}")
    return 0 if len(names) == len(KERNELS) else 1


if __name__ == "__main__":
    sys.exit(main())
