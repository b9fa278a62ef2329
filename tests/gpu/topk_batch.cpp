// SPDX-License-Identifier: Apache-2.0
#include "topk_batch.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "runtime/driver/context.h"
#include "runtime/parallel_for.h"
#include "support/topk_reference.h"

namespace kjit::test {
namespace {

// Poisoned bytes before and after each output, so that a write outside [rows, k] shows. 256
// keeps the outputs as aligned as a fresh allocation.
constexpr std::size_t kGuardBytes = 256;
// Bytes before, between and after the rows of logits: NaN in fp32, fp16 and bf16 alike.
constexpr unsigned char kLogitsGapByte = 0xFF;

std::uint64_t mix(std::uint64_t value) {
  value ^= value >> 33;
  value *= 0xFF51AFD7ED558CCDull;
  value ^= value >> 33;
  value *= 0xC4CEB9FE1A85EC53ull;
  return value ^ (value >> 33);
}

std::size_t slots(const TopkLayout& layout, std::int32_t k) {
  return static_cast<std::size_t>(layout.rows) * static_cast<std::size_t>(k);
}

std::string flags_name(std::uint32_t flags) {
  if (flags == 0) return "none";
  std::string name;
  if (flags & kTopkLogProbs) name += "logprobs";
  if (flags & kTopkRenorm) name += name.empty() ? "renorm" : "|renorm";
  return name;
}

const char* row_k_name(RowKMode mode) {
  switch (mode) {
    case RowKMode::kNone: return "null";
    case RowKMode::kInRange: return "in-range";
    case RowKMode::kOutOfRange: return "out-of-range";
  }
  return "?";
}

std::uint32_t word_at(const std::vector<unsigned char>& bytes, std::size_t offset) {
  std::uint32_t word;
  std::memcpy(&word, bytes.data() + offset, sizeof word);
  return word;
}

}  // namespace

std::string describe(const TopkLayout& l) {
  std::string text = std::string(to_string(l.in_dtype)) + " rows=" + std::to_string(l.rows) +
                     " cols=" + std::to_string(l.cols);
  if (l.row_stride != 0) text += " row_stride=" + std::to_string(l.row_stride);
  if (l.in_offset != 0) text += " in_offset=" + std::to_string(l.in_offset);
  return text;
}

std::string describe(const TopkCall& c) {
  return "k=" + std::to_string(c.k) + " flags=" + flags_name(c.flags) + " idx=" + to_string(c.idx_dtype) +
         " k_per_row=" + row_k_name(c.row_k) + " T=" + std::to_string(c.temperature);
}

TopkBatch::TopkBatch(const TopkLayout& layout, TopkRowSource source)
    : layout_(layout), source_(std::move(source)) {
  const std::size_t in_bytes =
      static_cast<std::size_t>(layout_.in_offset + layout_.rows * row_stride()) * size_of(layout_.in_dtype);
  logits_ = DeviceBuffer(in_bytes);
  probs_ = DeviceBuffer(2 * kGuardBytes + slots(layout_, max_k()) * sizeof(float));
  indices_ = DeviceBuffer(2 * kGuardBytes + slots(layout_, max_k()) * sizeof(std::int64_t));
  row_k_ = DeviceBuffer(static_cast<std::size_t>(layout_.rows) * sizeof(std::int32_t));
  upload_logits();
}

std::int64_t TopkBatch::row_stride() const noexcept {
  return layout_.row_stride != 0 ? layout_.row_stride : layout_.cols;
}

std::int32_t TopkBatch::max_k() const noexcept {
  return static_cast<std::int32_t>(std::min<std::int64_t>(layout_.cols, kMaxTopK));
}

void TopkBatch::upload_logits() {
  const int size = size_of(layout_.in_dtype);
  std::vector<unsigned char> staging(logits_.bytes(), kLogitsGapByte);
  const int threads = std::min(8, hardware_threads());
  parallel_for(static_cast<std::size_t>(layout_.rows), threads, [&](std::size_t row) {
    const std::int64_t start = layout_.in_offset + static_cast<std::int64_t>(row) * row_stride();
    generate_topk_row(layout_.in_dtype, source_, static_cast<std::int64_t>(row), layout_.cols,
                      staging.data() + static_cast<std::size_t>(start) * size);
  });
  logits_.upload(staging.data(), staging.size());
}

TopkArgs TopkBatch::args(const TopkCall& call) const noexcept {
  TopkArgs args;
  args.logits = logits_.pointer(static_cast<std::size_t>(layout_.in_offset) * size_of(layout_.in_dtype));
  args.row_stride = row_stride();
  args.rows = layout_.rows;
  args.cols = layout_.cols;
  args.in_dtype = layout_.in_dtype;
  args.k = call.k;
  args.k_per_row =
      call.row_k == RowKMode::kNone ? nullptr : static_cast<const std::int32_t*>(row_k_.pointer());
  args.temperature = call.temperature;
  args.flags = call.flags;
  args.probs_out = static_cast<float*>(probs_.pointer(kGuardBytes));
  args.idx_out = indices_.pointer(kGuardBytes);
  args.idx_dtype = call.idx_dtype;
  return args;
}

std::int32_t TopkBatch::row_k_value(const TopkCall& call, std::int64_t row) const {
  // Drawn by hash, not by row number, so that every row kind meets every case.
  const std::uint64_t draw = mix(source_.seed ^ (static_cast<std::uint64_t>(row) << 20) ^
                                 static_cast<std::uint64_t>(call.k));
  const std::int32_t anywhere =
      static_cast<std::int32_t>((draw >> 8) % static_cast<std::uint64_t>(call.k + 1));
  if (call.row_k == RowKMode::kInRange) {
    const std::int32_t cases[] = {0, call.k, anywhere, anywhere};
    return cases[draw % 4];
  }
  const std::int32_t cases[] = {-1, call.k + 1, std::numeric_limits<std::int32_t>::min(),
                                std::numeric_limits<std::int32_t>::max(), 0, anywhere};
  return cases[draw % 6];
}

void TopkBatch::prepare(const TopkCall& call, CUstream stream) {
  if (call.row_k != RowKMode::kNone) {
    std::vector<std::int32_t> values(static_cast<std::size_t>(layout_.rows));
    for (std::int64_t row = 0; row < layout_.rows; ++row) values[row] = row_k_value(call, row);
    row_k_.upload(values);
  }
  current_or_primary_context();
  KJIT_CU(cuMemsetD32Async, probs_.address(), kProbsPoison, probs_.bytes() / sizeof(std::uint32_t), stream);
  indices_.fill_async(kIndexPoisonByte, stream);
}

std::string TopkBatch::kind_label(std::int64_t row) const {
  return std::string("[") + to_string(source_.kind_of(row, layout_.cols)) + "] ";
}

std::string TopkBatch::check_guards(const TopkCall& call, const std::vector<unsigned char>& probs,
                                    const std::vector<unsigned char>& indices) const {
  const std::size_t probs_end = kGuardBytes + slots(layout_, call.k) * sizeof(float);
  for (std::size_t at = 0; at < probs.size(); at += sizeof(std::uint32_t)) {
    if (at == kGuardBytes) at = probs_end;
    if (at < probs.size() && word_at(probs, at) != kProbsPoison)
      return "probs_out written outside [rows, k] at byte " + std::to_string(at) + " of the allocation";
  }
  const std::size_t indices_end = kGuardBytes + slots(layout_, call.k) * size_of(call.idx_dtype);
  for (std::size_t at = 0; at < indices.size(); ++at) {
    if (at == kGuardBytes) at = indices_end;
    if (at < indices.size() && indices[at] != kIndexPoisonByte)
      return "idx_out written outside [rows, k] at byte " + std::to_string(at) + " of the allocation";
  }
  return {};
}

std::string TopkBatch::check_every_slot(const TopkCall& call, const std::vector<unsigned char>& probs,
                                        const std::vector<unsigned char>& indices) const {
  const std::int64_t index_poison = call.idx_dtype == DType::kI32 ? 0x7F7F7F7Fll : 0x7F7F7F7F7F7F7F7Fll;
  const unsigned char* index_base = indices.data() + kGuardBytes;
  auto where = [&](std::int64_t row, std::int32_t slot) {
    return kind_label(row) + "row " + std::to_string(row) + " slot " + std::to_string(slot) + ": ";
  };
  for (std::int64_t row = 0; row < layout_.rows; ++row)
    for (std::int32_t slot = 0; slot < call.k; ++slot) {
      const std::size_t at = static_cast<std::size_t>(row) * call.k + slot;
      if (word_at(probs, kGuardBytes + at * sizeof(float)) == kProbsPoison)
        return where(row, slot) + "probs_out never written";
      const std::int64_t index = load_index(call.idx_dtype, index_base, at);
      if (index == index_poison) return where(row, slot) + "idx_out never written";
      if (index < -1 || index >= layout_.cols)
        return where(row, slot) + "index " + std::to_string(index) + " out of range";
    }
  return {};
}

std::string TopkBatch::check_against_reference(const TopkCall& call, const std::vector<std::int64_t>& rows,
                                               const std::vector<unsigned char>& probs,
                                               const std::vector<unsigned char>& indices) const {
  const int index_size = size_of(call.idx_dtype);
  std::vector<float> row_probs(static_cast<std::size_t>(call.k));
  for (std::int64_t row : rows) {
    const std::size_t first = static_cast<std::size_t>(row) * call.k;
    std::memcpy(row_probs.data(), probs.data() + kGuardBytes + first * sizeof(float),
                row_probs.size() * sizeof(float));
    const std::int32_t row_k =
        call.row_k == RowKMode::kNone ? call.k : clamp_row_k(row_k_value(call, row), call.k);
    const std::vector<double> logits = topk_input_row(layout_.in_dtype, source_, row, layout_.cols);
    const TopkRowExpectation want =
        reference_topk_row(logits.data(), layout_.cols, call.k, row_k, call.temperature, call.flags);
    const unsigned char* row_indices = indices.data() + kGuardBytes + first * index_size;
    const std::string why =
        compare_topk_row(row, want, row_probs.data(), row_indices, call.idx_dtype, call.flags);
    if (!why.empty()) return kind_label(row) + why + " [row k " + std::to_string(row_k) + "]";
  }
  return {};
}

std::string TopkBatch::check(const TopkCall& call, const std::vector<std::int64_t>& rows) const {
  const std::vector<unsigned char> probs = probs_.download_all();
  const std::vector<unsigned char> indices = indices_.download_all();
  if (std::string why = check_guards(call, probs, indices); !why.empty()) return why;
  if (std::string why = check_every_slot(call, probs, indices); !why.empty()) return why;
  return check_against_reference(call, rows, probs, indices);
}

TopkOutput TopkBatch::read_output(const TopkCall& call) const {
  TopkOutput output;
  output.probs.resize(slots(layout_, call.k) * sizeof(float));
  output.indices.resize(slots(layout_, call.k) * size_of(call.idx_dtype));
  probs_.download(output.probs.data(), output.probs.size(), kGuardBytes);
  indices_.download(output.indices.data(), output.indices.size(), kGuardBytes);
  return output;
}

}  // namespace kjit::test
