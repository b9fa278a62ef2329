// SPDX-License-Identifier: Apache-2.0
#include "bench/host_overhead.h"

#include <chrono>

#include "kernel_sources/row_params.cuh"
#include "kjit/kjit.h"
#include "kjit/runtime.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/context.h"
#include "runtime/driver/handles.h"
#include "runtime/ops/rowwise_heuristics.h"

namespace kjit::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRows = 64, kCols = 1000, kCalls = 2000;

double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

/// Host microseconds per call of `launch`, in batches small enough that the queue never fills.
template <typename Launch>
double per_call_us(CUstream stream, Launch&& launch) {
  double total = 0.0;
  for (int batch = 0; batch < kCalls / 100; ++batch) {
    const auto start = Clock::now();
    for (int i = 0; i < 100; ++i) launch();
    total += microseconds_since(start);
    KJIT_CU(cuStreamSynchronize, stream);
  }
  return total / kCalls;
}

}  // namespace

HostOverhead measure_host_overhead() {
  HostOverhead result;
  CUcontext context = current_or_primary_context();
  (void)context;
  Stream stream = create_stream();
  DeviceMemory in = allocate_device(kRows * kCols * 4), out = allocate_device(kRows * kCols * 4);
  KJIT_CU(cuMemsetD8Async, in.get(), 0, kRows * kCols * 4, stream.get());
  const RowwiseArgs args{reinterpret_cast<const void*>(in.get()), kCols,
                         reinterpret_cast<void*>(out.get()), kCols, kRows, kCols};

  // Cold start with the cubin on disk: the caller runs this after an earlier process compiled it.
  const auto start = Clock::now();
  kjit_runtime* rt = nullptr;
  kjit_runtime_create(&rt);
  kjit_softmax(rt, args.in, kCols, args.out, kCols, kRows, kCols, KJIT_F32, KJIT_F32, stream.get());
  KJIT_CU(cuStreamSynchronize, stream.get());
  result.first_call_ms = microseconds_since(start) / 1000.0;

  result.kjit_call_us = per_call_us(stream.get(), [&] {
    kjit_softmax(rt, args.in, kCols, args.out, kCols, kRows, kCols, KJIT_F32, KJIT_F32, stream.get());
  });
  kjit_runtime_destroy(rt);

  // The same kernel launched bare, from a module of our own.
  CUdevice device = 0;
  KJIT_CU(cuCtxGetDevice, &device);
  const DeviceProps props = query_device(device);
  RowwiseProblem problem = validate_rowwise(RowOp::kSoftmax, args, nullptr);
  const KernelConfig config = choose_rowwise_config(problem, props);
  const CompiledKernel kernel = compile_kernel(rowwise_kernel_spec(problem, config), props.arch);
  Module module = load_module(kernel.cubin.data());
  CUfunction function = nullptr;
  KJIT_CU(cuModuleGetFunction, &function, module.get(), kernel.lowered_name.c_str());
  const LaunchShape shape = rowwise_launch_shape(problem, config, props.sm_count);
  RowParams params{args.in, args.out, nullptr, kRows, kCols, kCols};
  void* kernel_args[] = {&params};
  const auto grid = static_cast<unsigned>(rowwise_grid(shape, kRows));
  result.bare_launch_us = per_call_us(stream.get(), [&] {
    cuda().cuLaunchKernel(function, grid, 1, 1, shape.block, 1, 1, shape.dynamic_smem,
                          stream.get(), kernel_args, nullptr);
  });
  return result;
}

}  // namespace kjit::bench
