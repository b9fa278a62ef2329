// SPDX-License-Identifier: Apache-2.0
#include "autotune/scratch_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace kjit {
namespace {

unsigned short to_bf16(float value) {
  unsigned bits = 0;
  std::memcpy(&bits, &value, 4);
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even (inputs are finite)
  return static_cast<unsigned short>(bits >> 16);
}

unsigned short to_f16(float value) {
  // Inputs here are normal * 3: within f16's normal range or flushed to zero when tiny.
  const float magnitude = std::fabs(value);
  const unsigned short sign = value < 0 ? 0x8000 : 0;
  if (magnitude < 6.1035156e-05f) return sign;
  int exponent = 0;
  const float mantissa = std::frexp(magnitude, &exponent);  // magnitude = mantissa * 2^exponent
  const auto fraction = static_cast<unsigned>(std::nearbyint((mantissa * 2.0f - 1.0f) * 1024.0f));
  const unsigned biased = static_cast<unsigned>(exponent - 1 + 15);
  return static_cast<unsigned short>(sign | ((biased << 10) + fraction));
}

std::vector<unsigned char> encode(const std::vector<float>& values, DType dtype) {
  std::vector<unsigned char> bytes(values.size() * size_of(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kF32) {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    } else {
      const unsigned short half = dtype == DType::kBF16 ? to_bf16(values[i]) : to_f16(values[i]);
      std::memcpy(&bytes[2 * i], &half, 2);
    }
  }
  return bytes;
}

/// Normal(0, 3) values: a pool of a prime number of them, repeated, so generating a large
/// tuning problem costs little and no two rows of a realistic width start alike.
std::vector<unsigned char> random_row_bytes(std::size_t elements, DType dtype) {
  constexpr std::size_t kPool = 1000003;
  std::mt19937 engine(20261122);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> pool(std::min(elements, kPool));
  for (float& value : pool) value = normal(engine);
  const std::vector<unsigned char> pool_bytes = encode(pool, dtype);
  std::vector<unsigned char> bytes(elements * size_of(dtype));
  for (std::size_t done = 0; done < bytes.size(); done += pool_bytes.size())
    std::memcpy(&bytes[done], pool_bytes.data(), std::min(pool_bytes.size(), bytes.size() - done));
  return bytes;
}

}  // namespace

float decode_float(const unsigned char* element, DType dtype) {
  if (dtype == DType::kF32) {
    float value;
    std::memcpy(&value, element, 4);
    return value;
  }
  unsigned short half;
  std::memcpy(&half, element, 2);
  if (dtype == DType::kBF16) {
    const unsigned bits = static_cast<unsigned>(half) << 16;
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
  }
  const int exponent = (half >> 10) & 0x1f, fraction = half & 0x3ff;
  const float sign = (half & 0x8000) ? -1.0f : 1.0f;
  if (exponent == 0x1f) return fraction ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(fraction), -24);
  return sign * std::ldexp(static_cast<float>(fraction + 1024), exponent - 25);
}

int rotating_sets(std::size_t bytes_per_set, int l2_bytes) {
  const std::size_t wanted = 2 * static_cast<std::size_t>(l2_bytes);
  return static_cast<int>(std::clamp<std::size_t>(wanted / std::max<std::size_t>(bytes_per_set, 1) + 1, 1, 32));
}

ScratchRows::ScratchRows(DType in, DType out, std::int64_t rows, std::int64_t cols, int sets,
                         CUstream stream)
    : in_(in), out_(out), rows_(rows), cols_(cols) {
  const std::size_t elements = static_cast<std::size_t>(rows * cols);
  const auto host = random_row_bytes(elements, in);
  for (int i = 0; i < sets; ++i) {
    inputs_.push_back(allocate_device(elements * size_of(in)));
    outputs_.push_back(allocate_device(elements * size_of(out)));
    scales_.push_back(allocate_device(static_cast<std::size_t>(rows) * sizeof(float)));
    if (i == 0) KJIT_CU(cuMemcpyHtoD, inputs_[0].get(), host.data(), host.size());
    else KJIT_CU(cuMemcpyDtoDAsync, inputs_[i].get(), inputs_[0].get(), host.size(), stream);
  }
  KJIT_CU(cuStreamSynchronize, stream);
}

RowwiseArgs ScratchRows::args(int set) const {
  RowwiseArgs args;
  args.in = reinterpret_cast<const void*>(inputs_[set].get());
  args.out = reinterpret_cast<void*>(outputs_[set].get());
  args.in_row_stride = args.out_row_stride = cols_;
  args.rows = rows_;
  args.cols = cols_;
  args.in_dtype = in_;
  args.out_dtype = out_;
  return args;
}

float* ScratchRows::scale(int set) const { return reinterpret_cast<float*>(scales_[set].get()); }

void ScratchRows::download_output(int set, std::vector<unsigned char>& bytes) const {
  bytes.resize(static_cast<std::size_t>(rows_ * cols_) * size_of(out_));
  KJIT_CU(cuMemcpyDtoH, bytes.data(), outputs_[set].get(), bytes.size());
}

std::vector<float> ScratchRows::output_as_floats(int set) const {
  const std::size_t elements = static_cast<std::size_t>(rows_ * cols_);
  std::vector<unsigned char> bytes(elements * size_of(out_));
  KJIT_CU(cuMemcpyDtoH, bytes.data(), outputs_[set].get(), bytes.size());
  std::vector<float> values(elements);
  for (std::size_t i = 0; i < elements; ++i) values[i] = decode_float(&bytes[i * size_of(out_)], out_);
  return values;
}

void ScratchRows::poison_output(int set, CUstream stream) const {
  KJIT_CU(cuMemsetD8Async, outputs_[set].get(), 0xFF,
          static_cast<std::size_t>(rows_ * cols_) * size_of(out_), stream);
}

}  // namespace kjit
