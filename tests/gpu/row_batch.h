// SPDX-License-Identifier: Apache-2.0
// A batch of rows on the device for one GPU case: generated input, poisoned output, and the
// checks of a finished call against the float64 reference.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "runtime/driver/context.h"
#include "support/device_buffer.h"

namespace kjit::test {

/// Bytes the output is filled with before a call: 0x7B7B... is a huge positive finite value in
/// fp32, fp16 and bf16 alike, which no op can produce, so an unwritten element always shows.
constexpr unsigned char kPoisonByte = 0x7B;
/// Bytes between and around input rows: NaN in every type, so reading past a row shows too.
constexpr unsigned char kInputGapByte = 0xFF;

/// Where the rows of a batch live. Strides of 0 mean "cols"; offsets (in elements) shift a view
/// off the allocation's alignment.
struct BatchLayout {
  DType in_dtype = DType::kF32;
  DType out_dtype = DType::kF32;
  std::int64_t rows = 1;
  std::int64_t cols = 1;
  std::int64_t in_stride = 0;
  std::int64_t out_stride = 0;
  std::int64_t in_offset = 0;
  std::int64_t out_offset = 0;
  bool in_place = false;  ///< out is in (same view; out_* fields are ignored)
};

/// "f32->bf16 rows=7 cols=1000" plus strides, offsets and in-place when they are set.
std::string describe(const BatchLayout& layout);

class RowBatch {
 public:
  /// Allocates the buffers and uploads the input generated from `seed`.
  RowBatch(const BatchLayout& layout, std::uint64_t seed);

  const BatchLayout& layout() const noexcept { return layout_; }
  RowwiseArgs args() const noexcept;
  float* scale_out() const noexcept;

  /// Makes the batch ready for the next call on `stream`: poisons output and scales, and for an
  /// in-place batch uploads the input again (the last call overwrote it).
  void reset(CUstream stream);

  /// Checks `rows` of the output (after the call's stream was synchronized) against the
  /// reference of `op`; also, when the batch is small enough to read back whole, that every
  /// element of every row was written, nothing outside the rows was, and every scale was set.
  /// Empty when all holds, else the first problem found.
  std::string check(RowOp op, const std::vector<std::int64_t>& rows) const;

 private:
  std::int64_t in_stride() const noexcept;
  std::int64_t out_stride() const noexcept;
  void upload_input();
  const std::vector<double>& reference(RowOp op, std::int64_t row, float* scale) const;
  std::string check_rows(RowOp op, const std::vector<std::int64_t>& rows,
                         const std::vector<unsigned char>& out, bool whole) const;
  std::string check_untouched(const std::vector<unsigned char>& out) const;
  std::string check_scales(RowOp op, const std::vector<std::int64_t>& rows) const;

  BatchLayout layout_;
  std::uint64_t seed_;
  bool input_fresh_ = false;  ///< the device holds the input as generated (no call since)
  DeviceBuffer in_;
  DeviceBuffer out_;
  DeviceBuffer scale_;
  struct Reference {
    std::vector<double> values;
    float scale = 0;
  };
  mutable std::map<std::pair<int, std::int64_t>, Reference> references_;  // (op, row)
};

/// Calls the automatic path of `op` (scale_out is used by reduce_scale only).
void run_auto(Runtime& runtime, RowOp op, const RowwiseArgs& args, float* scale_out, CUstream stream);

/// The device behind the calling thread's context (made current if needed).
DeviceProps current_device();

}  // namespace kjit::test
