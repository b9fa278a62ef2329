// SPDX-License-Identifier: Apache-2.0
// A batch of attention problems on the device for the attention suite: random Q, K, V (and bias
// and mask) in a chosen layout, the bytes between rows and past the ends holding NaN so that a
// kernel reading outside its rows shows, an output poisoned before each call, and the check of
// a finished call against the float64 reference (attention_reference.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "support/device_buffer.h"

namespace kjit::test {

/// One call's shape, kinds and layout.
struct AttentionCase {
  DType dtype = DType::kF16;
  std::int64_t batch = 1, heads = 1, m = 16, n = 16, d = 16, dv = 16;
  bool interleaved = false;  ///< [B, N, H, D] instead of [B, H, N, D]
  std::int64_t row_pad = 0;  ///< elements (a multiple of 8) after each row's slot, left NaN
  bool bias = false;
  DType bias_dtype = DType::kF32;
  bool mask = false;
  DType mask_dtype = DType::kF32;
  std::int64_t mask_windows = 1;
  double masked_fraction = 0.0;  ///< share of mask entries that are -inf (shifted windows)
  double masked_rows = 0.0;      ///< share of mask rows that are -inf throughout (no key left)
  bool causal = false;
  double input_std = 1.0;  ///< Q and K are normal(0, input_std); V normal(0, 1)
  float scale = 0.0f;      ///< 0: 1 / sqrt(d)
};

/// "bf16 3x5 49x100 d=32 dv=64 bias=f32 mask=f16/3 causal bnhd pad=8".
std::string describe(const AttentionCase& c);

class AttentionBatch {
 public:
  AttentionBatch(const AttentionCase& c, std::uint64_t seed);

  /// The device call.
  AttentionArgs args() const;
  /// Fills the whole output allocation (padding and guard included) with 0xFF bytes.
  void poison(CUstream stream);
  /// Downloads the output and checks every problem (or `most` spread over the batch, first and
  /// last included): each row against the reference, and every byte outside the rows still
  /// poisoned. Empty when right, else the first failure.
  std::string check(std::int64_t most = 0) const;
  /// The output allocation's bytes, as the last call left them.
  std::vector<unsigned char> output() const { return o_.device.download_all(); }

 private:
  struct Tensor {
    std::vector<unsigned char> host;
    DeviceBuffer device;
  };
  std::array<std::int64_t, 3> strides(std::int64_t rows, std::int64_t dim) const;
  void make_operand(Tensor& t, std::int64_t rows, std::int64_t dim, double std, std::uint64_t seed);
  void make_addend(Tensor& t, DType dtype, std::int64_t count, bool mask, std::uint64_t seed);
  AttentionArgs host_args() const;
  std::string check_problem(const std::vector<unsigned char>& out, std::int64_t index) const;
  std::string check_untouched(const std::vector<unsigned char>& out) const;

  AttentionCase case_;
  std::int64_t slot_ = 0;  ///< elements of a row's slot (dim + pad; o: dv + pad, etc.)
  Tensor q_, k_, v_, o_, bias_, mask_;
};

/// The problems `check` looks at: every one when `most` is 0 or covers them, else `most` spread
/// evenly, the first and last included.
std::vector<std::int64_t> problems_to_check(std::int64_t problems, std::int64_t most);

}  // namespace kjit::test
