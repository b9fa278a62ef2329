// SPDX-License-Identifier: Apache-2.0
#include "bench/host_overhead.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "kernel_sources/row_params.cuh"
#include "kjit/kjit.h"
#include "kjit/runtime.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/context.h"
#include "runtime/driver/handles.h"
#include "runtime/launch/loaded_kernel.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"

namespace kjit::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBatches = 40, kCallsPerBatch = 100;

double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

/// Host microseconds per call of one batch of `launch`, small enough that the queue never fills.
template <typename Launch>
double batch_us(CUstream stream, Launch&& launch) {
  const auto start = Clock::now();
  for (int i = 0; i < kCallsPerBatch; ++i) launch();
  const double us = microseconds_since(start) / kCallsPerBatch;
  KJIT_CU(cuStreamSynchronize, stream);
  return us;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

HostOverhead measure_host_overhead(std::int64_t rows, std::int64_t cols) {
  HostOverhead result;
  CUcontext context = current_or_primary_context();
  (void)context;
  Stream stream = create_stream();
  DeviceMemory in = allocate_device(rows * cols * 4), out = allocate_device(rows * cols * 4);
  KJIT_CU(cuMemsetD8Async, in.get(), 0, rows * cols * 4, stream.get());
  const RowwiseArgs args{reinterpret_cast<const void*>(in.get()), cols,
                         reinterpret_cast<void*>(out.get()), cols, rows, cols};

  // Cold start with the cubin on disk: the caller runs this after an earlier process compiled it.
  const auto start = Clock::now();
  kjit_runtime* rt = nullptr;
  kjit_runtime_create(&rt);
  kjit_softmax(rt, args.in, cols, args.out, cols, rows, cols, KJIT_F32, KJIT_F32, stream.get());
  KJIT_CU(cuStreamSynchronize, stream.get());
  result.first_call_ms = microseconds_since(start) / 1000.0;

  // The same kernel launched bare, from a module of our own.
  CUdevice device = 0;
  KJIT_CU(cuCtxGetDevice, &device);
  const DeviceProps props = query_device(device);
  RowwiseProblem problem = validate_rowwise(RowOp::kSoftmax, args, nullptr);
  const KernelConfig config = choose_rowwise_config(problem, props);
  result.config = config.to_string();
  LaunchShape shape = rowwise_launch_shape(problem, config, props.sm_count);
  // load_kernel sets what the function needs (dynamic shared memory past 48 KB, clusters of 16).
  const auto loaded = load_kernel(
      std::make_shared<const CompiledKernel>(compile_kernel(rowwise_kernel_spec(problem, config), props.arch)),
      shape);
  CUfunction function = loaded->function;
  if (loaded->max_active_clusters > 0) shape.max_clusters = loaded->max_active_clusters;
  shape.dependent_launch = props.dependent_launch && RuntimeOptions::from_environment().dependent_launch;
  RowParams params{args.in, args.out, nullptr, rows, cols, cols, nullptr};
  void* kernel_args[] = {&params};
  const auto grid = static_cast<unsigned>(rowwise_grid(shape, rows));
  // The bare launch goes out as kjit's does: a programmatic dependent where kjit's is one.
  result.dependent_launch = launches_as_dependent(shape, grid, rows);
  CUlaunchAttribute attributes[2]{};
  unsigned attribute_count = 0;
  if (shape.cluster > 1) {
    attributes[attribute_count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[attribute_count].value.clusterDim.x = static_cast<unsigned>(shape.cluster);
    attributes[attribute_count].value.clusterDim.y = attributes[attribute_count].value.clusterDim.z = 1;
    ++attribute_count;
  }
  if (result.dependent_launch) {
    attributes[attribute_count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attributes[attribute_count].value.programmaticStreamSerializationAllowed = 1;
    ++attribute_count;
  }
  CUlaunchConfig bare{};
  bare.gridDimX = grid;
  bare.gridDimY = bare.gridDimZ = 1;
  bare.blockDimX = static_cast<unsigned>(shape.block);
  bare.blockDimY = bare.blockDimZ = 1;
  bare.sharedMemBytes = static_cast<unsigned>(shape.dynamic_smem);
  bare.hStream = stream.get();
  bare.attrs = attributes;
  bare.numAttrs = attribute_count;

  // Batches of the two alternate, and each side's median batch counts: the host's clock speed
  // drifts between runs, and timing one side after the other put that drift into the difference
  // (docs/experiments/host-overhead.md).
  std::vector<double> kjit_batches, bare_batches;
  for (int batch = 0; batch < kBatches; ++batch) {
    kjit_batches.push_back(batch_us(stream.get(), [&] {
      kjit_softmax(rt, args.in, cols, args.out, cols, rows, cols, KJIT_F32, KJIT_F32, stream.get());
    }));
    bare_batches.push_back(batch_us(stream.get(), [&] {
      if (attribute_count > 0)
        cuda().cuLaunchKernelEx(&bare, function, kernel_args, nullptr);
      else
        cuda().cuLaunchKernel(function, grid, 1, 1, shape.block, 1, 1, shape.dynamic_smem,
                              stream.get(), kernel_args, nullptr);
    }));
  }
  kjit_runtime_destroy(rt);
  result.kjit_call_us = median(kjit_batches);
  result.bare_launch_us = median(bare_batches);
  return result;
}

}  // namespace kjit::bench
