#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fingerprints of the kernels the heuristics pick for the benchmark grid, without a GPU.

Prints one line per call of the grid and arch:

    <op> <in>-><out> rows=<R> cols=<C> k=<K> sm_<A> [<config>] <digest>

sorted, where the digest covers the contents of the cubin's `.text.*` sections only: kernel,
template and file names (the symbol tables, the section names) may change without changing it.
Two builds whose outputs match pick the same configs and compile them to the same machine code.

    scripts/kernel_fingerprints.py build/cli/kjit > after.txt
    diff before.txt after.txt

Row-wise calls go through `kjit compile` (any dtype pair), the cubin taken from NVRTC by a
preloaded shim; softmax_topk calls through `kjit inspect --explain` (the config and the key text)
and one `kjit precompile` into a temporary cache, whose entries are matched by key text.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

ARCHS = [80, 90]

# bench/rowwise_bench.cpp's standard shapes, (rows, cols).
ROWWISE_SHAPES = [(65536, 128), (16384, 1024), (8192, 4096), (2048, 16384), (1024, 32000),
                  (512, 65536), (64, 262144), (1, 32000), (1, 128256), (1, 151936),
                  (8, 128256), (64, 128256), (32, 262144), (64, 151936)]
ROWWISE_OPS = ["softmax", "log_softmax", "reduce_scale"]
ROWWISE_DTYPES = [("f32", "f32"), ("bf16", "bf16"), ("f16", "f16"), ("bf16", "f32")]

TOPK_COLS = [32000, 50257, 128256, 151936]
TOPK_ROWS = [1, 8, 64, 256]
TOPK_KS = [1, 50, 256, 1024]
TOPK_DTYPES = ["f32", "bf16"]
TOPK_INDEX = "i64"

# Wraps nvrtcGetCUBIN: after the real call, writes the cubin to $KJIT_FINGERPRINT_CUBIN.
SHIM_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef int (*get_size_fn)(void*, size_t*);
typedef int (*get_fn)(void*, char*);
int nvrtcGetCUBIN(void* program, char* cubin) {
  get_fn real = (get_fn)dlsym(RTLD_NEXT, "nvrtcGetCUBIN");
  get_size_fn real_size = (get_size_fn)dlsym(RTLD_NEXT, "nvrtcGetCUBINSize");
  int result = real(program, cubin);
  size_t size = 0;
  const char* path = getenv("KJIT_FINGERPRINT_CUBIN");
  if (result == 0 && path && real_size(program, &size) == 0) {
    FILE* file = fopen(path, "wb");
    if (file) { fwrite(cubin, 1, size, file); fclose(file); }
  }
  return result;
}
"""


def text_digest(elf: bytes) -> str:
    """SHA-256 over the sorted digests of the ELF's .text.* section contents."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a little-endian ELF64 cubin")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)

    def section(i):
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize)
        return name, offset, size

    _, names_offset, _ = section(shstrndx)
    parts = []
    for i in range(shnum):
        name_index, offset, size = section(i)
        end = elf.index(b"\0", names_offset + name_index)
        name = elf[names_offset + name_index:end].decode()
        if name.startswith(".text."):
            parts.append(hashlib.sha256(elf[offset:offset + size]).hexdigest())
    if not parts:
        raise ValueError("no .text.* section")
    return hashlib.sha256("".join(sorted(parts)).encode()).hexdigest()[:32]


def entry_payload(blob: bytes):
    """(key text, payload) of a cache entry file: "KJITENTR", u32 version, then u32-length kind,
    key text and metadata, and a u64-length payload."""
    if blob[:8] != b"KJITENTR":
        raise ValueError("not a kjit cache entry")
    pos = 12
    fields = []
    for _ in range(3):
        length, = struct.unpack_from("<I", blob, pos)
        fields.append(blob[pos + 4:pos + 4 + length])
        pos += 4 + length
    length, = struct.unpack_from("<Q", blob, pos)
    return fields[1].decode(), blob[pos + 8:pos + 8 + length]


def field(text: str, name: str) -> str:
    for line in text.splitlines():
        if line.startswith(name + ":"):
            return line[len(name) + 1:].strip()
    raise ValueError(f"no '{name}:' line in:\n{text}")


def run(command, env=None) -> str:
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def rowwise_line(kjit, shim, work, call):
    op, (din, dout), (rows, cols), arch = call
    cubin_path = os.path.join(work, f"{op}-{din}-{dout}-{rows}-{cols}-{arch}.cubin")
    env = dict(os.environ, LD_PRELOAD=shim, KJIT_FINGERPRINT_CUBIN=cubin_path)
    text = run([kjit, "compile", "--op", op, "--dtype", din, "--out-dtype", dout, "--cols", str(cols),
                "--rows", str(rows), "--arch", f"sm_{arch}"], env)
    with open(cubin_path, "rb") as file:
        digest = text_digest(file.read())
    return f"{op} {din}->{dout} rows={rows} cols={cols} k=- sm_{arch} [{field(text, 'config')}] {digest}"


def topk_plan(kjit, cache, call):
    dtype, cols, rows, k, arch = call
    args = [kjit, "inspect", "--explain", "--op", "softmax_topk", "--k", str(k), "--dtype", dtype,
            "--index-dtype", TOPK_INDEX, "--cols", str(cols), "--rows", str(rows),
            "--arch", f"sm_{arch}", "--cache-dir", cache]
    config = field(run(args), "config")
    key_text = json.loads(run(args + ["--json"]))["key_text"]
    return call, config, json.dumps(key_text, sort_keys=True)


def topk_lines(kjit, work, jobs):
    cache = os.path.join(work, "topk-cache")
    empty = os.path.join(work, "empty-cache")
    os.makedirs(empty)
    spec = [{"ops": ["softmax_topk"], "dtypes": TOPK_DTYPES, "cols": TOPK_COLS, "rows": TOPK_ROWS,
             "k": TOPK_KS, "index_dtypes": [TOPK_INDEX]}]
    spec_path = os.path.join(work, "topk-spec.json")
    with open(spec_path, "w") as file:
        json.dump(spec, file)
    run([kjit, "precompile", "--arch", ",".join(f"sm_{a}" for a in ARCHS), "--spec", spec_path,
         "-j", str(jobs), "--cache-dir", cache])
    payloads = {}
    for folder, _, files in os.walk(cache):
        for name in files:
            if name.endswith(".bin"):
                with open(os.path.join(folder, name), "rb") as file:
                    key_text, payload = entry_payload(file.read())
                payloads[json.dumps(json.loads(key_text), sort_keys=True)] = payload
    calls = [(d, c, r, k, a) for d in TOPK_DTYPES for c in TOPK_COLS for r in TOPK_ROWS
             for k in TOPK_KS for a in ARCHS]
    lines = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for (dtype, cols, rows, k, arch), config, key in pool.map(lambda c: topk_plan(kjit, empty, c), calls):
            digest = text_digest(payloads[key])
            lines.append(f"softmax_topk {dtype}->{TOPK_INDEX} rows={rows} cols={cols} k={k} "
                         f"sm_{arch} [{config}] {digest}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kjit", help="path of the kjit CLI binary to fingerprint")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel compiles")
    args = parser.parse_args()
    kjit = os.path.abspath(args.kjit)
    with tempfile.TemporaryDirectory(prefix="kjit-fingerprints-") as work:
        shim = os.path.join(work, "cubin_shim.so")
        source = os.path.join(work, "cubin_shim.c")
        with open(source, "w") as file:
            file.write(SHIM_SOURCE)
        run(["cc", "-shared", "-fPIC", "-O1", "-o", shim, source, "-ldl"])
        calls = [(op, dtypes, shape, arch) for op in ROWWISE_OPS for dtypes in ROWWISE_DTYPES
                 for shape in ROWWISE_SHAPES for arch in ARCHS]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            lines = list(pool.map(lambda call: rowwise_line(kjit, shim, work, call), calls))
        lines += topk_lines(kjit, work, args.jobs)
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    sys.exit(main())
