// SPDX-License-Identifier: Apache-2.0
#include "row_batch.h"

#include <algorithm>
#include <cstring>

#include "row_inputs.h"
#include "runtime/parallel_for.h"
#include "support/reference.h"

namespace kjit::test {
namespace {

// Above this the output is checked row by row instead of read back whole (the batch of more
// than 2^31 elements is 4 GB).
constexpr std::size_t kWholeReadbackBytes = std::size_t{1} << 30;
// Host staging for uploads, so that a batch of any size needs bounded host memory.
constexpr std::size_t kStagingBytes = std::size_t{256} << 20;

std::size_t elements_of(std::int64_t offset, std::int64_t rows, std::int64_t stride) {
  return static_cast<std::size_t>(offset + rows * stride);
}

bool is_poison(const unsigned char* element, int size) {
  for (int i = 0; i < size; ++i)
    if (element[i] != kPoisonByte) return false;
  return true;
}

std::string row_label(std::int64_t row, std::int64_t cols) {
  return "row " + std::to_string(row) + " (" + to_string(row_kind(row, cols)) + ")";
}

}  // namespace

std::string describe(const BatchLayout& l) {
  std::string text = std::string(to_string(l.in_dtype)) + "->" + to_string(l.out_dtype) +
                     " rows=" + std::to_string(l.rows) + " cols=" + std::to_string(l.cols);
  if (l.in_stride != 0) text += " in_stride=" + std::to_string(l.in_stride);
  if (l.out_stride != 0 && !l.in_place) text += " out_stride=" + std::to_string(l.out_stride);
  if (l.in_offset != 0) text += " in_offset=" + std::to_string(l.in_offset);
  if (l.out_offset != 0 && !l.in_place) text += " out_offset=" + std::to_string(l.out_offset);
  if (l.in_place) text += " in-place";
  return text;
}

RowBatch::RowBatch(const BatchLayout& layout, std::uint64_t seed) : layout_(layout), seed_(seed) {
  if (layout_.in_place) layout_.out_dtype = layout_.in_dtype;
  const int in_size = size_of(layout_.in_dtype), out_size = size_of(layout_.out_dtype);
  in_ = DeviceBuffer(elements_of(layout_.in_offset, layout_.rows, in_stride()) * in_size);
  if (!layout_.in_place)
    out_ = DeviceBuffer(elements_of(layout_.out_offset, layout_.rows, out_stride()) * out_size);
  scale_ = DeviceBuffer(static_cast<std::size_t>(layout_.rows) * sizeof(float));
  upload_input();
}

std::int64_t RowBatch::in_stride() const noexcept {
  return layout_.in_stride != 0 ? layout_.in_stride : layout_.cols;
}

std::int64_t RowBatch::out_stride() const noexcept {
  if (layout_.in_place) return in_stride();
  return layout_.out_stride != 0 ? layout_.out_stride : layout_.cols;
}

RowwiseArgs RowBatch::args() const noexcept {
  const DeviceBuffer& out = layout_.in_place ? in_ : out_;
  const std::int64_t out_offset = layout_.in_place ? layout_.in_offset : layout_.out_offset;
  return {in_.pointer(static_cast<std::size_t>(layout_.in_offset) * size_of(layout_.in_dtype)),
          in_stride(),
          out.pointer(static_cast<std::size_t>(out_offset) * size_of(layout_.out_dtype)),
          out_stride(),
          layout_.rows,
          layout_.cols,
          layout_.in_dtype,
          layout_.out_dtype};
}

float* RowBatch::scale_out() const noexcept { return static_cast<float*>(scale_.pointer()); }

void RowBatch::upload_input() {
  const int size = size_of(layout_.in_dtype);
  const std::size_t row_bytes = static_cast<std::size_t>(in_stride()) * size;
  const std::size_t offset_bytes = static_cast<std::size_t>(layout_.in_offset) * size;
  const std::int64_t rows_per_chunk =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(kStagingBytes / row_bytes));
  std::vector<unsigned char> staging;
  // The bytes before the first row are gap too.
  std::vector<unsigned char> head(offset_bytes, kInputGapByte);
  in_.upload(head.data(), head.size(), 0);
  for (std::int64_t first = 0; first < layout_.rows; first += rows_per_chunk) {
    const std::int64_t count = std::min(rows_per_chunk, layout_.rows - first);
    staging.assign(static_cast<std::size_t>(count) * row_bytes, kInputGapByte);
    const int threads = std::min(16, hardware_threads());
    parallel_for(static_cast<std::size_t>(count), threads, [&](std::size_t i) {
      generate_row(layout_.in_dtype, seed_, first + static_cast<std::int64_t>(i), layout_.cols,
                   staging.data() + i * row_bytes);
    });
    in_.upload(staging.data(), staging.size(), offset_bytes + static_cast<std::size_t>(first) * row_bytes);
  }
  input_fresh_ = true;
}

void RowBatch::reset(CUstream stream) {
  // An in-place call overwrote the input; uploading it again is the slow part of the largest
  // batch, so it is skipped while the input is still as generated.
  if (layout_.in_place && !input_fresh_) upload_input();
  if (!layout_.in_place) out_.fill_async(kPoisonByte, stream);
  input_fresh_ = false;
  scale_.fill_async(kPoisonByte, stream);
}

const std::vector<double>& RowBatch::reference(RowOp op, std::int64_t row, float* scale) const {
  const auto key = std::make_pair(static_cast<int>(op), row);
  auto found = references_.find(key);
  if (found == references_.end()) {
    // One op's references at a time: a case runs every algorithm of an op back to back.
    if (!references_.empty() && references_.begin()->first.first != key.first) references_.clear();
    Reference ref;
    const std::vector<double> in = input_row(layout_.in_dtype, seed_, row, layout_.cols);
    ref.values.resize(in.size());
    reference_row(op, in.data(), ref.values.data(), layout_.cols, &ref.scale);
    found = references_.emplace(key, std::move(ref)).first;
  }
  *scale = found->second.scale;
  return found->second.values;
}

std::string RowBatch::check_rows(RowOp op, const std::vector<std::int64_t>& rows,
                                 const std::vector<unsigned char>& out, bool whole) const {
  const int size = size_of(layout_.out_dtype);
  const std::int64_t offset = layout_.in_place ? layout_.in_offset : layout_.out_offset;
  const std::size_t row_bytes = static_cast<std::size_t>(layout_.cols) * size;
  std::vector<unsigned char> one_row;
  for (std::int64_t row : rows) {
    const std::size_t start = static_cast<std::size_t>(offset + row * out_stride()) * size;
    const unsigned char* got = nullptr;
    if (whole) {
      got = out.data() + start;
    } else {
      one_row.resize(row_bytes);
      (layout_.in_place ? in_ : out_).download(one_row.data(), row_bytes, start);
      got = one_row.data();
    }
    float scale = 0;
    const std::vector<double>& ref = reference(op, row, &scale);
    std::string why = compare_row(op, layout_.out_dtype, got, ref.data(), layout_.cols);
    if (!why.empty()) return row_label(row, layout_.cols) + " " + why;
  }
  return {};
}

std::string RowBatch::check_untouched(const std::vector<unsigned char>& out) const {
  const int size = size_of(layout_.out_dtype);
  for (std::int64_t row = 0; row < layout_.rows; ++row) {
    const std::size_t begin = static_cast<std::size_t>(layout_.out_offset + row * out_stride()) * size;
    const std::size_t end = begin + static_cast<std::size_t>(layout_.cols) * size;
    for (std::size_t at = begin; at < end; at += size)
      if (is_poison(out.data() + at, size))
        return row_label(row, layout_.cols) + " col " + std::to_string((at - begin) / size) +
               " was never written";
  }
  // Outside the rows: before the view, between rows, after the last row.
  auto first_written = [&](std::size_t begin, std::size_t end) -> std::string {
    const auto it = std::find_if(out.begin() + begin, out.begin() + end,
                                 [](unsigned char b) { return b != kPoisonByte; });
    if (it == out.begin() + end) return {};
    return "byte " + std::to_string(it - out.begin()) + " outside the output view was written";
  };
  const std::size_t head = static_cast<std::size_t>(layout_.out_offset) * size;
  if (std::string why = first_written(0, head); !why.empty()) return why;
  for (std::int64_t row = 0; row < layout_.rows; ++row) {
    const std::size_t row_start = static_cast<std::size_t>(layout_.out_offset + row * out_stride()) * size;
    const std::size_t gap_begin = row_start + static_cast<std::size_t>(layout_.cols) * size;
    const std::size_t gap_end =
        row + 1 < layout_.rows ? row_start + static_cast<std::size_t>(out_stride()) * size : out.size();
    if (std::string why = first_written(gap_begin, gap_end); !why.empty()) return why;
  }
  return {};
}

std::string RowBatch::check_scales(RowOp op, const std::vector<std::int64_t>& rows) const {
  std::vector<float> scales(static_cast<std::size_t>(layout_.rows));
  scale_.download(scales.data(), scales.size() * sizeof(float));
  for (std::int64_t row = 0; row < layout_.rows; ++row)
    if (is_poison(reinterpret_cast<const unsigned char*>(&scales[row]), sizeof(float)))
      return row_label(row, layout_.cols) + " scale_out was never written";
  for (std::int64_t row : rows) {
    float want = 0;
    reference(op, row, &want);
    std::string why = compare_scale(scales[row], want);
    if (!why.empty()) return row_label(row, layout_.cols) + " " + why;
  }
  return {};
}

std::string RowBatch::check(RowOp op, const std::vector<std::int64_t>& rows) const {
  const bool whole = !layout_.in_place && out_.bytes() <= kWholeReadbackBytes;
  std::vector<unsigned char> out;
  if (whole) {
    out = out_.download_all();
    if (std::string why = check_untouched(out); !why.empty()) return why;
  }
  if (std::string why = check_rows(op, rows, out, whole); !why.empty()) return why;
  if (op == RowOp::kReduceScale) return check_scales(op, rows);
  return {};
}

void run_auto(Runtime& runtime, RowOp op, const RowwiseArgs& args, float* scale_out, CUstream stream) {
  switch (op) {
    case RowOp::kSoftmax: runtime.softmax(args, stream); return;
    case RowOp::kLogSoftmax: runtime.log_softmax(args, stream); return;
    case RowOp::kReduceScale: runtime.reduce_scale(args, scale_out, stream); return;
  }
}

DeviceProps current_device() {
  current_or_primary_context();
  CUdevice device = 0;
  KJIT_CU(cuCtxGetDevice, &device);
  return query_device(device);
}

}  // namespace kjit::test
