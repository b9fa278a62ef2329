// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/topk/topk_kernels.h"

#include <string>

#include "runtime/ops/kernel_type.h"
#include "runtime/ops/topk/topk_fit.h"

namespace kjit {

int topk_buffer_keys(const TopkProblem& problem, const TopkConfig& config) {
  const int bucket = topk_bucket(problem.k);
  if (topk::is_resident(config)) return topk_resident_buffer_keys(bucket);
  return topk_stream_buffer_keys(bucket, config.threads, config.pack, config.unroll);
}

KernelSpec topk_kernel_spec(const TopkProblem& p, const TopkConfig& c) {
  const bool resident = topk::is_resident(c);
  return {resident ? "topk_resident.cuh" : "topk_stream.cuh",
          std::string(resident ? "kjit::topk_resident<" : "kjit::topk_stream<") + kernel_type(p.in_dtype) + ", " +
              kernel_type(p.idx_dtype) + ", " + std::to_string(p.cols) + ", " + std::to_string(topk_bucket(p.k)) +
              ", " + std::to_string(c.pack) + ", " + std::to_string(c.threads) + ", " + std::to_string(c.unroll) +
              ", " + std::to_string(c.cluster) + (topk::shifted_stream(p, c) ? ", 1>" : ">")};
}

LaunchShape topk_launch_shape(const TopkProblem& problem, const TopkConfig& config) {
  LaunchShape shape;
  shape.block = config.threads;
  shape.cluster = config.cluster;
  shape.dynamic_smem = topk_buffer_keys(problem, config) * kTopkKeyBytes;
  return shape;
}

std::int64_t topk_rows_per_launch(const LaunchShape& shape) noexcept { return 0x7fffffff / shape.cluster; }

unsigned topk_grid(const LaunchShape& shape, std::int64_t rows) noexcept {
  return static_cast<unsigned>(rows * shape.cluster);
}

}  // namespace kjit
