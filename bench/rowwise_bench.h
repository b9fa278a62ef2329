// SPDX-License-Identifier: Apache-2.0
// Times kjit's row-wise ops on the GPU: rotating buffers larger than L2, CUDA-graph replay,
// GB/s and % of the copy bandwidth measured in the same process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autotune/measure.h"
#include "kjit/runtime.hpp"

namespace kjit::bench {

struct BenchShape {
  RowOp op = RowOp::kSoftmax;
  DType in_dtype = DType::kF32;
  DType out_dtype = DType::kF32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

struct BenchResult {
  BenchShape shape;
  KernelReport kernel;
  Timing timing;
  double gb_per_s = 0.0;
  double percent_of_copy = 0.0;
  /// The same bytes moved by a device-to-device copy between the same rotating buffers, as a
  /// % of the copy bandwidth: what a copy of this size reaches (0 when in and out sizes differ).
  double same_size_copy_percent = 0.0;
  /// The kernel's time over that copy's, in % (100: as fast as copying the same bytes).
  double percent_of_same_size_copy = 0.0;
};

/// The shapes of the project's benchmark table, for one op and one dtype.
std::vector<BenchShape> standard_shapes(RowOp op, DType dtype);

/// "65536x128".
std::string shape_name(const BenchShape& shape);

class RowwiseBench {
 public:
  /// Measures the copy bandwidth once (bytes read + written per second).
  RowwiseBench(Runtime& runtime, CUstream stream);
  double copy_bandwidth() const { return copy_bytes_per_s_; }
  /// Times one shape. Buffers rotate so that the working set exceeds the L2 twice over.
  BenchResult run(const BenchShape& shape);

 private:
  Runtime& runtime_;
  CUstream stream_;
  int l2_bytes_ = 0;
  double copy_bytes_per_s_ = 0.0;
};

}  // namespace kjit::bench
