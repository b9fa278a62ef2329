// SPDX-License-Identifier: Apache-2.0
#include "bench/rowwise_bench.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "runtime/driver/context.h"
#include "runtime/driver/handles.h"

namespace kjit::bench {
namespace {

/// Random normal data in the input's dtype, as raw bytes (fp16/bf16 by truncating fp32 bits:
/// any finite values serve for timing).
std::vector<unsigned char> random_bytes(std::size_t elements, DType dtype, unsigned seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const int size = size_of(dtype);
  std::vector<unsigned char> bytes(elements * static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < elements; ++i) {
    float value = normal(engine);
    unsigned bits = 0;
    std::memcpy(&bits, &value, 4);
    if (size == 4) std::memcpy(&bytes[4 * i], &bits, 4);
    else {
      // f16 needs a real conversion to stay finite; a small exact integer-ish value will do.
      const unsigned short half = dtype == DType::kBF16 ? static_cast<unsigned short>(bits >> 16)
                                                        : static_cast<unsigned short>(0x3c00 + (i % 1024));
      std::memcpy(&bytes[2 * i], &half, 2);
    }
  }
  return bytes;
}

}  // namespace

std::vector<BenchShape> standard_shapes(RowOp op, DType dtype) {
  const std::int64_t shapes[][2] = {{65536, 128}, {16384, 1024}, {8192, 4096},  {2048, 16384},
                                    {1024, 32000}, {512, 65536},  {64, 262144}, {1, 32000},
                                    {1, 128256},  {1, 151936},   {8, 128256},  {64, 128256}};
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
  const std::size_t working_set = std::max<std::size_t>(2 * static_cast<std::size_t>(l2_bytes_), 100u << 20);
  const int sets = static_cast<int>(std::clamp<std::size_t>(working_set / (in_bytes + out_bytes) + 1, 1, 64));
  std::vector<DeviceMemory> inputs, outputs, scales;
  const auto host = random_bytes(elements, shape.in_dtype, 1234);
  for (int i = 0; i < sets; ++i) {
    inputs.push_back(allocate_device(in_bytes));
    outputs.push_back(allocate_device(out_bytes));
    scales.push_back(allocate_device(static_cast<std::size_t>(shape.rows) * 4));
    KJIT_CU(cuMemcpyHtoD, inputs.back().get(), host.data(), in_bytes);
  }
  auto args_for = [&](int i) {
    RowwiseArgs args;
    args.in = reinterpret_cast<const void*>(inputs[i % sets].get());
    args.out = reinterpret_cast<void*>(outputs[i % sets].get());
    args.in_row_stride = args.out_row_stride = shape.cols;
    args.rows = shape.rows;
    args.cols = shape.cols;
    args.in_dtype = shape.in_dtype;
    args.out_dtype = shape.out_dtype;
    return args;
  };
  auto enqueue = [&](CUstream stream, int i) {
    const RowwiseArgs args = args_for(i);
    switch (shape.op) {
      case RowOp::kSoftmax: runtime_.softmax(args, stream); break;
      case RowOp::kLogSoftmax: runtime_.log_softmax(args, stream); break;
      case RowOp::kReduceScale:
        runtime_.reduce_scale(args, reinterpret_cast<float*>(scales[i % sets].get()), stream);
        break;
    }
  };
  BenchResult result;
  result.shape = shape;
  result.kernel = runtime_.explain(shape.op, args_for(0));
  TimingOptions options;
  options.launches_per_sample = std::max(sets, 20);
  result.timing = time_launches(enqueue, stream_, options);
  result.gb_per_s = static_cast<double>(in_bytes + out_bytes) / (result.timing.median_us * 1e3);
  result.percent_of_copy = 100.0 * result.gb_per_s * 1e9 / copy_bytes_per_s_;
  return result;
}

}  // namespace kjit::bench
