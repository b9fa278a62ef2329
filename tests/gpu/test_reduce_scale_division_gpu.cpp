// SPDX-License-Identifier: Apache-2.0
// reduce_scale's x / max|x| against fp32 division, bit for bit, over rows whose max|x| sweeps the
// whole range: block_regs and the warp kernel divide through the row's reciprocal (divide_scaled,
// numeric.cuh), the other kernels by division.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"

using namespace kjit;
using namespace kjit::test;

namespace {

/// fp32 rows whose max|x| sweeps the whole range, subnormals included: row r's largest exponent
/// is spread over [-149, 127], and each value takes a random mantissa and sign at an exponent up
/// to 40 below it.
std::vector<float> spread_rows(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  std::mt19937_64 random(seed);
  for (std::int64_t r = 0; r < rows; ++r) {
    const int top = 1 + static_cast<int>(r * 253 / (rows - 1));  // biased exponent 1..254
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::uint64_t bits = random();
      const int exponent = std::max(0, top - static_cast<int>(bits % 41));
      const std::uint32_t word = static_cast<std::uint32_t>((bits >> 8) & 0x807FFFFFu) |
                                 (static_cast<std::uint32_t>(exponent) << 23);
      std::memcpy(&values[static_cast<std::size_t>(r * cols + c)], &word, sizeof word);
    }
  }
  return values;
}

/// Units in the last place between two finite floats of the same sign.
std::int64_t ulps_apart(float a, float b) {
  std::int32_t ia = 0, ib = 0;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return std::llabs(static_cast<std::int64_t>(ia) - ib);
}

}  // namespace

TEST_CASE("reduce_scale rounds each fp32 quotient as a division, over every range of max|x|") {
  KJIT_REQUIRE_GPU();
  const std::int64_t rows = 254, cols = 1000;
  const std::vector<float> input = spread_rows(rows, cols, test_seed());
  DeviceBuffer in(input.size() * sizeof(float)), out(input.size() * sizeof(float)), scale(rows * sizeof(float));
  in.upload(input);
  Runtime rt;
  const RowwiseArgs args{in.pointer(), cols, out.pointer(), cols, rows, cols, DType::kF32, DType::kF32};
  for (Algorithm algorithm : {Algorithm::kAuto, Algorithm::kBlockRegs, Algorithm::kBlockOnline, Algorithm::kWarp}) {
    CAPTURE(to_string(algorithm));
    out.fill(kPoisonByte);
    if (algorithm == Algorithm::kAuto) rt.reduce_scale(args, static_cast<float*>(scale.pointer()));
    else rt.run_with_config(RowOp::kReduceScale, args, static_cast<float*>(scale.pointer()), KernelConfig{algorithm});
    synchronize(nullptr);
    std::vector<float> got(input.size()), scales(static_cast<std::size_t>(rows));
    out.download(got.data(), got.size() * sizeof(float));
    scale.download(scales.data(), scales.size() * sizeof(float));
    int wrong = 0, beyond_one_ulp = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* x = &input[static_cast<std::size_t>(r * cols)];
      float absmax = 0.0f;
      for (std::int64_t c = 0; c < cols; ++c) absmax = std::max(absmax, std::fabs(x[c]));
      CHECK(scales[r] == absmax);
      for (std::int64_t c = 0; c < cols; ++c) {
        const float want = x[c] / absmax, have = got[static_cast<std::size_t>(r * cols + c)];
        if (std::memcmp(&want, &have, sizeof want) == 0) continue;
        if (std::fabs(want) >= 0x1p-100f || std::signbit(want) != std::signbit(have)) ++wrong;
        else if (ulps_apart(want, have) > 1) ++beyond_one_ulp;
      }
    }
    CHECK_MESSAGE(wrong == 0, wrong << " quotients of 2^-100 or more differ from x / max|x| in fp32");
    CHECK_MESSAGE(beyond_one_ulp == 0, beyond_one_ulp << " smaller quotients are more than an ulp off");
  }
}
