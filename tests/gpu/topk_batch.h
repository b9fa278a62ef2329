// SPDX-License-Identifier: Apache-2.0
// A batch of logits on the device for the softmax_topk suite: generated input, poisoned outputs
// with guard bytes around them, per-row k values, and the checks of a finished call against the
// float64 reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "runtime/driver/cuda_api.h"
#include "support/device_buffer.h"
#include "topk_inputs.h"

namespace kjit::test {

/// The word probs_out is filled with before a call: a signalling NaN with a payload, which no
/// arithmetic produces (results are quiet NaNs), so an unwritten slot shows even in a NaN row.
constexpr std::uint32_t kProbsPoison = 0x7FBADBADu;
/// The byte idx_out is filled with: 0x7F7F7F7F (i32) and 0x7F7F...7F (i64) are no index.
constexpr unsigned char kIndexPoisonByte = 0x7F;

/// Where the logits of a batch live. A stride of 0 means cols; the offset (in elements) shifts
/// the view off the allocation's alignment. The bytes around and between rows hold NaN, so a
/// kernel that reads past a row shows.
struct TopkLayout {
  DType in_dtype = DType::kF32;
  std::int64_t rows = 1;
  std::int64_t cols = 1;
  std::int64_t row_stride = 0;
  std::int64_t in_offset = 0;
};

/// Whether a call passes k_per_row, and which values it holds.
enum class RowKMode {
  kNone,        ///< k_per_row is null: every row fills k slots
  kInRange,     ///< values in [0, k], 0 and k among them
  kOutOfRange,  ///< values below 0 and above k as well, which the op clamps
};

/// The arguments of one call that are not the batch's own.
struct TopkCall {
  std::int32_t k = 1;
  std::uint32_t flags = 0;
  DType idx_dtype = DType::kI64;
  RowKMode row_k = RowKMode::kNone;
  float temperature = 1.0f;
};

/// "bf16 rows=64 cols=50257" plus stride and offset when set.
std::string describe(const TopkLayout& layout);
/// "k=50 flags=logprobs|renorm idx=i32 k_per_row=in-range T=0.5".
std::string describe(const TopkCall& call);

/// The raw bytes a call wrote, as read back.
struct TopkOutput {
  std::vector<unsigned char> probs;
  std::vector<unsigned char> indices;
};

class TopkBatch {
 public:
  /// Allocates the buffers and uploads the logits generated from `source`.
  TopkBatch(const TopkLayout& layout, TopkRowSource source);

  const TopkLayout& layout() const noexcept { return layout_; }
  /// The arguments of `call` on this batch.
  TopkArgs args(const TopkCall& call) const noexcept;

  /// Makes the batch ready for `call` on `stream`: uploads its per-row k values (if any) and
  /// poisons both outputs with their guards.
  void prepare(const TopkCall& call, CUstream stream);

  /// Checks the output of `call` (after its stream was synchronized): every slot of every row
  /// written with an index in [-1, cols), nothing written outside [rows, k], and `rows` equal to
  /// the reference. Empty when all holds, else the first problem found.
  std::string check(const TopkCall& call, const std::vector<std::int64_t>& rows) const;

  /// The output of `call`, exactly as the kernel left it (for bitwise comparisons).
  TopkOutput read_output(const TopkCall& call) const;

  /// The device buffer of the logits (the view starts `in_offset` elements in).
  DeviceBuffer& logits_buffer() noexcept { return logits_; }

 private:
  std::int64_t row_stride() const noexcept;
  std::int32_t max_k() const noexcept;
  void upload_logits();
  std::int32_t row_k_value(const TopkCall& call, std::int64_t row) const;
  std::string check_guards(const TopkCall& call, const std::vector<unsigned char>& probs,
                           const std::vector<unsigned char>& indices) const;
  std::string check_every_slot(const TopkCall& call, const std::vector<unsigned char>& probs,
                               const std::vector<unsigned char>& indices) const;
  std::string check_against_reference(const TopkCall& call, const std::vector<std::int64_t>& rows,
                                      const std::vector<unsigned char>& probs,
                                      const std::vector<unsigned char>& indices) const;
  std::string kind_label(std::int64_t row) const;

  TopkLayout layout_;
  TopkRowSource source_;
  DeviceBuffer logits_;
  DeviceBuffer probs_;
  DeviceBuffer indices_;
  DeviceBuffer row_k_;
};

}  // namespace kjit::test
