// SPDX-License-Identifier: Apache-2.0
#include "bench/rowwise_bench.h"

#include <algorithm>

#include "autotune/scratch_rows.h"
#include "runtime/driver/context.h"
#include "runtime/driver/handles.h"

namespace kjit::bench {

std::vector<BenchShape> standard_shapes(RowOp op, DType dtype) {
  const std::int64_t shapes[][2] = {{65536, 128}, {16384, 1024}, {8192, 4096},  {2048, 16384},
                                    {1024, 32000}, {512, 65536},  {64, 262144}, {1, 32000},
                                    {1, 128256},  {1, 151936},   {8, 128256},  {64, 128256},
                                    {32, 262144}, {64, 151936}};
  std::vector<BenchShape> result;
  for (const auto& s : shapes) result.push_back({op, dtype, dtype, s[0], s[1]});
  return result;
}

std::string shape_name(const BenchShape& shape) {
  return std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
}

RowwiseBench::RowwiseBench(Runtime& runtime, CUstream stream) : runtime_(runtime), stream_(stream) {
  current_or_primary_context();
  CUdevice device = 0;
  KJIT_CU(cuCtxGetDevice, &device);
  l2_bytes_ = query_device(device).l2_bytes;
  copy_bytes_per_s_ = measure_copy_bandwidth(stream_, std::size_t{256} << 20);
}

BenchResult RowwiseBench::run(const BenchShape& shape) {
  const std::size_t elements = static_cast<std::size_t>(shape.rows * shape.cols);
  const std::size_t in_bytes = elements * size_of(shape.in_dtype);
  const std::size_t out_bytes = elements * size_of(shape.out_dtype);
  // Buffers rotate so that the working set exceeds twice the L2: the timing is of HBM traffic.
  const ScratchRows scratch(shape.in_dtype, shape.out_dtype, shape.rows, shape.cols,
                            rotating_sets(in_bytes + out_bytes, l2_bytes_), stream_);
  auto enqueue = [&](CUstream stream, int i) {
    const int set = i % scratch.sets();
    switch (shape.op) {
      case RowOp::kSoftmax: runtime_.softmax(scratch.args(set), stream); break;
      case RowOp::kLogSoftmax: runtime_.log_softmax(scratch.args(set), stream); break;
      case RowOp::kReduceScale: runtime_.reduce_scale(scratch.args(set), scratch.scale(set), stream); break;
    }
  };
  BenchResult result;
  result.shape = shape;
  result.kernel = runtime_.explain(shape.op, scratch.args(0));
  TimingOptions options;
  options.launches_per_sample = std::max(scratch.sets(), 20);
  result.timing = time_launches(enqueue, stream_, options);
  result.gb_per_s = static_cast<double>(in_bytes + out_bytes) / (result.timing.median_us * 1e3);
  result.percent_of_copy = 100.0 * result.gb_per_s * 1e9 / copy_bytes_per_s_;
  if (in_bytes == out_bytes) {
    // Smaller copies reach less of the bandwidth (launch and drain are a larger share), so the
    // copy of the same bytes is the fair ceiling for one shape.
    auto copy = [&](CUstream stream, int i) {
      const RowwiseArgs args = scratch.args(i % scratch.sets());
      KJIT_CU(cuMemcpyDtoDAsync, reinterpret_cast<CUdeviceptr>(args.out),
              reinterpret_cast<CUdeviceptr>(args.in), in_bytes, stream);
    };
    const Timing copy_timing = time_launches(copy, stream_, options);
    result.same_size_copy_percent =
        100.0 * static_cast<double>(2 * in_bytes) / (copy_timing.median_us * 1e-6) / copy_bytes_per_s_;
    result.percent_of_same_size_copy = 100.0 * copy_timing.median_us / result.timing.median_us;
  }
  return result;
}

}  // namespace kjit::bench
