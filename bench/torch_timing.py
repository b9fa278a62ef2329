# SPDX-License-Identifier: Apache-2.0
"""Pieces shared by the benchmarks that run kjit beside torch (compare_torch.py, compare_topk.py).

libkjit through ctypes, per-launch times from many launches captured in one CUDA graph, and the
device's copy bandwidth measured the same way.
"""
import atexit
import collections
import ctypes
import statistics
import sys

import torch

from rotation import WORKING_SET  # noqa: F401 - the benchmarks import it from here

# kjit_dtype values (kjit.h).
F32, F16, BF16, I32, I64 = 0, 1, 2, 3, 4
DTYPES = {torch.float32: F32, torch.float16: F16, torch.bfloat16: BF16}


class KjitOptions(ctypes.Structure):
    """kjit_options (kjit.h), field for field."""
    _fields_ = [("size", ctypes.c_size_t), ("cache_dir", ctypes.c_char_p),
                ("cache_bundle", ctypes.c_char_p), ("disk_cache", ctypes.c_int32),
                ("jit", ctypes.c_int32), ("tune", ctypes.c_int), ("log_level", ctypes.c_char_p),
                ("cache_max_bytes", ctypes.c_uint64), ("dependent_launch", ctypes.c_int32)]


LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
LOG_WARN = 3  # kjit_log_level: lines from here up are also echoed to stderr


class KjitLib:
    """libkjit loaded through ctypes, with one runtime. Subclasses declare the entry points they
    call (argtypes), so that ctypes converts the arguments to the C types.

    configure(options), when given, edits the environment's kjit_options before the runtime is
    made from them (kjit_runtime_create_with_options)."""

    def __init__(self, path, configure=None):
        self.lib = ctypes.CDLL(path)
        self.lib.kjit_last_error.restype = ctypes.c_char_p
        rt = ctypes.c_void_p()
        if configure is None:
            self.check(self.lib.kjit_runtime_create(ctypes.byref(rt)))
        else:
            options_p = ctypes.POINTER(KjitOptions)
            self.lib.kjit_options_from_environment.argtypes = [options_p]
            self.lib.kjit_runtime_create_with_options.argtypes = [
                ctypes.POINTER(ctypes.c_void_p), options_p]
            options = KjitOptions()
            self.check(self.lib.kjit_options_from_environment(ctypes.byref(options)))
            configure(options)
            self.check(self.lib.kjit_runtime_create_with_options(ctypes.byref(rt),
                                                                 ctypes.byref(options)))
        self.rt = rt
        self.log_lines = []
        self._log_callback = None

    def check(self, status):
        if status != 0:
            raise RuntimeError(f"kjit status {status}: {self.lib.kjit_last_error().decode()}")

    def capture_log(self):
        """Sends kjit's log lines to self.log_lines (level, text) from now on, process-wide;
        warnings and errors are echoed to stderr as kjit would print them. Restored at exit, so
        that no line reaches a callback Python has already torn down."""
        def receive(level, message, _user_data):
            text = message.decode(errors="replace")
            self.log_lines.append((level, text))
            if level >= LOG_WARN:
                print(text, file=sys.stderr, flush=True)

        self._log_callback = LOG_CALLBACK(receive)
        self.lib.kjit_set_log_callback.argtypes = [LOG_CALLBACK, ctypes.c_void_p]
        self.lib.kjit_set_log_callback(self._log_callback, None)
        atexit.register(self.lib.kjit_set_log_callback, LOG_CALLBACK(), None)


def current_stream_handle():
    """The CUstream of torch's current stream, for kjit's `stream` argument. While a graph is being
    captured this is the capture stream: a launch on any other stream would not be captured."""
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


_capture_stream = None
_libcuda = None
CUDA_ERROR_NOT_SUPPORTED = 801


def reset_persisting_l2():
    """Resets L2's persisting lines to normal, as kjit's own timing does before every measurement
    (autotune/measure.h): lines an earlier kernel marked "evict last" would otherwise make every
    later kernel here faster or slower, whoever's kernel it is."""
    global _libcuda
    if _libcuda is None:
        _libcuda = ctypes.CDLL("libcuda.so.1")
    status = _libcuda.cuCtxResetPersistingL2Cache()
    if status not in (0, CUDA_ERROR_NOT_SUPPORTED):  # before sm_80 there is nothing to reset
        raise RuntimeError(f"cuCtxResetPersistingL2Cache failed with CUresult {status}")


def capture_stream():
    """The one side stream every graph here is captured on (capture is not allowed on the legacy
    default stream). Always the same one, so a library that keeps state per stream sets it up once,
    in the warm-up before the first capture."""
    global _capture_stream
    if _capture_stream is None:
        _capture_stream = torch.cuda.Stream()
    return _capture_stream


def graph_time_us(enqueue, count, samples=15):
    """Median per-launch time of `count` launches captured into one graph.

    enqueue(i) launches the i-th call on torch's current stream. One warm-up call runs before the
    capture, on the capture stream itself: whatever a call does only the first time (JIT
    compilation, tuning, workspace allocation, per-stream setup) synchronizes or allocates, which
    is not allowed while capturing. Replays run, and are timed, on the default stream.
    """
    side = capture_stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        enqueue(0)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        for i in range(count):
            enqueue(i)
    torch.cuda.synchronize()
    reset_persisting_l2()
    for _ in range(3):
        graph.replay()
    times = []
    for _ in range(samples):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / count)
    del graph
    return statistics.median(times)


def keeping_outputs(call, copies):
    """enqueue(i) for call(i), a function that allocates its result (torch's ops), with the last
    `copies` results kept alive: the caching allocator then hands each launch a block other than
    the last ones', so its writes rotate over `copies` buffers, as kjit's calls into rotating output
    buffers do. Freed at once instead, every launch would write the same block, which stays in L2:
    on the H100, torch.softmax of fp32 49152 x 64 ran 8.65 us so and 10.70 us with its outputs
    kept, where kjit ran 9.98 us rotating and 7.59 us into one output."""
    kept = collections.deque(maxlen=max(1, copies))
    return lambda i: kept.append(call(i))


def launches_for(enqueue, target_us, minimum, maximum, calls=8):
    """How many launches make one graph replay last about `target_us`, within [minimum, maximum].

    The per-launch time is estimated from eager launches on the current stream. For a call bound
    by launch overhead that estimate includes host time and comes out long, so the replay errs
    short; `minimum` (one pass over the rotating inputs) may make it longer than the target.
    """
    enqueue(0)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(calls):
        enqueue(i)
    stop.record()
    stop.synchronize()
    per_launch_us = max(start.elapsed_time(stop) * 1000.0 / calls, 0.1)
    return max(minimum, min(maximum, round(target_us / per_launch_us)))


def copy_bandwidth():
    """Device-to-device copy bandwidth in bytes/s, counting bytes read + written."""
    a = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    us = graph_time_us(lambda i: (b.copy_(a) if i % 2 == 0 else a.copy_(b)), 10)
    return 2 * a.numel() / (us * 1e-6)
