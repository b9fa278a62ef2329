// SPDX-License-Identifier: Apache-2.0
#include "attention_batch.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "support/attention_reference.h"
#include "support/numeric_host.h"

namespace kjit::test {
namespace {

constexpr std::size_t kGuardBytes = 256;

/// A quiet NaN in every element of `dtype` (f32, f16, bf16): 0x7FC0 7FC0 ... works for all three
/// at 2-byte granularity only for 16-bit types, so f32 buffers get 0x7FC00000 words.
void fill_nan(std::vector<unsigned char>& bytes, DType dtype) {
  const std::uint32_t word = dtype == DType::kF32 ? 0x7FC00000u : dtype == DType::kBF16 ? 0x7FC07FC0u : 0x7E007E00u;
  for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) std::memcpy(&bytes[i], &word, 4);
}

}  // namespace

std::string describe(const AttentionCase& c) {
  std::string text = std::string(to_string(c.dtype)) + " " + std::to_string(c.batch) + "x" + std::to_string(c.heads) +
                     " " + std::to_string(c.m) + "x" + std::to_string(c.n) + " d=" + std::to_string(c.d) +
                     " dv=" + std::to_string(c.dv);
  if (c.bias) text += std::string(" bias=") + to_string(c.bias_dtype);
  if (c.mask) text += std::string(" mask=") + to_string(c.mask_dtype) + "/" + std::to_string(c.mask_windows);
  if (c.causal) text += " causal";
  if (c.interleaved) text += " bnhd";
  if (c.row_pad) text += " pad=" + std::to_string(c.row_pad);
  if (c.input_std != 1.0) text += " std=" + std::to_string(c.input_std);
  return text;
}

std::vector<std::int64_t> problems_to_check(std::int64_t problems, std::int64_t most) {
  std::vector<std::int64_t> picked;
  if (most <= 0 || most >= problems) {
    for (std::int64_t i = 0; i < problems; ++i) picked.push_back(i);
    return picked;
  }
  for (std::int64_t i = 0; i < most; ++i) picked.push_back(i * (problems - 1) / (most - 1));
  return picked;
}

std::array<std::int64_t, 3> AttentionBatch::strides(std::int64_t rows, std::int64_t dim) const {
  const std::int64_t slot = dim + case_.row_pad, h = case_.heads;
  if (case_.interleaved) return {rows * h * slot, slot, h * slot};
  return {h * rows * slot, rows * slot, slot};
}

void AttentionBatch::make_operand(Tensor& t, std::int64_t rows, std::int64_t dim, double std, std::uint64_t seed) {
  const std::int64_t elements = case_.batch * case_.heads * rows * (dim + case_.row_pad);
  const int size = size_of(case_.dtype);
  t.host.assign(static_cast<std::size_t>(elements * size) + kGuardBytes, 0);
  fill_nan(t.host, case_.dtype);
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, std);
  const auto s = strides(rows, dim);
  for (std::int64_t b = 0; b < case_.batch; ++b)
    for (std::int64_t h = 0; h < case_.heads; ++h)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < dim; ++c)
          store_element(case_.dtype, t.host.data(), static_cast<std::size_t>(b * s[0] + h * s[1] + r * s[2] + c),
                        normal(engine));
  t.device = DeviceBuffer(t.host.size());
  t.device.upload(t.host);
}

void AttentionBatch::make_addend(Tensor& t, DType dtype, std::int64_t count, bool mask, std::uint64_t seed) {
  const std::int64_t elements = count * case_.m * case_.n;
  t.host.assign(static_cast<std::size_t>(elements * size_of(dtype)), 0);
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t w = 0; w < count; ++w)
    for (std::int64_t r = 0; r < case_.m; ++r) {
      const bool whole_row = mask && uniform(engine) < case_.masked_rows;
      for (std::int64_t j = 0; j < case_.n; ++j) {
        const bool masked = mask && (whole_row || uniform(engine) < case_.masked_fraction);
        const double value = mask ? (masked ? -inf : 0.0) : normal(engine);
        store_element(dtype, t.host.data(), static_cast<std::size_t>((w * case_.m + r) * case_.n + j), value);
      }
    }
  t.device = DeviceBuffer(t.host.size());
  t.device.upload(t.host);
}

AttentionBatch::AttentionBatch(const AttentionCase& c, std::uint64_t seed) : case_(c) {
  make_operand(q_, c.m, c.d, c.input_std, seed);
  make_operand(k_, c.n, c.d, c.input_std, seed + 1);
  make_operand(v_, c.n, c.dv, 1.0, seed + 2);
  const std::int64_t o_elements = c.batch * c.heads * c.m * (c.dv + c.row_pad);
  o_.host.assign(static_cast<std::size_t>(o_elements * size_of(c.dtype)) + kGuardBytes, 0xFF);
  o_.device = DeviceBuffer(o_.host.size());
  if (c.bias) make_addend(bias_, c.bias_dtype, c.heads, false, seed + 3);
  if (c.mask) make_addend(mask_, c.mask_dtype, c.mask_windows, true, seed + 4);
}

AttentionArgs AttentionBatch::host_args() const {
  const AttentionCase& c = case_;
  AttentionArgs a;
  a.q = q_.host.data();
  a.k = k_.host.data();
  a.v = v_.host.data();
  a.o = const_cast<unsigned char*>(o_.host.data());
  a.bias = c.bias ? bias_.host.data() : nullptr;
  a.mask = c.mask ? mask_.host.data() : nullptr;
  a.batch = c.batch;
  a.heads = c.heads;
  a.m = c.m;
  a.n = c.n;
  a.d = c.d;
  a.dv = c.dv;
  a.mask_windows = c.mask_windows;
  a.q_strides = strides(c.m, c.d);
  a.k_strides = strides(c.n, c.d);
  a.v_strides = strides(c.n, c.dv);
  a.o_strides = strides(c.m, c.dv);
  a.bias_strides = a.mask_strides = {c.m * c.n, c.n};
  a.dtype = c.dtype;
  a.bias_dtype = c.bias_dtype;
  a.mask_dtype = c.mask_dtype;
  a.scale = c.scale != 0.0f ? c.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.d)));
  a.causal = c.causal;
  return a;
}

AttentionArgs AttentionBatch::args() const {
  AttentionArgs a = host_args();
  a.q = q_.device.pointer();
  a.k = k_.device.pointer();
  a.v = v_.device.pointer();
  a.o = o_.device.pointer();
  a.bias = case_.bias ? bias_.device.pointer() : nullptr;
  a.mask = case_.mask ? mask_.device.pointer() : nullptr;
  return a;
}

void AttentionBatch::poison(CUstream stream) { o_.device.fill_async(0xFF, stream); }

std::string AttentionBatch::check_problem(const std::vector<unsigned char>& out, std::int64_t index) const {
  const AttentionArgs a = host_args();
  const std::int64_t b = index / a.heads, h = index % a.heads;
  for (std::int64_t row = 0; row < a.m; ++row) {
    const AttentionRowExpectation want = reference_attention_row(a, b, h, row);
    const std::int64_t o0 = b * a.o_strides[0] + h * a.o_strides[1] + row * a.o_strides[2];
    for (std::int64_t c = 0; c < a.dv; ++c) {
      const double got = load_element(a.dtype, out.data(), static_cast<std::size_t>(o0 + c));
      const std::string why =
          check_attention_value(a.dtype, got, want.out[c], want.magnitude[c], want.logit_error);
      if (!why.empty())
        return "problem " + std::to_string(index) + " (b=" + std::to_string(b) + " h=" + std::to_string(h) +
               ") row " + std::to_string(row) + " col " + std::to_string(c) + ": got " + std::to_string(got) +
               ", want " + std::to_string(want.out[c]) + " (" + why + ")";
    }
  }
  return {};
}

std::string AttentionBatch::check_untouched(const std::vector<unsigned char>& out) const {
  // Bytes of o that belong to no output row: the row pads and the guard after the end.
  std::vector<bool> row_byte(out.size(), false);
  const AttentionArgs a = host_args();
  const int size = size_of(a.dtype);
  for (std::int64_t b = 0; b < a.batch; ++b)
    for (std::int64_t h = 0; h < a.heads; ++h)
      for (std::int64_t r = 0; r < a.m; ++r) {
        const std::size_t first = static_cast<std::size_t>((b * a.o_strides[0] + h * a.o_strides[1] + r * a.o_strides[2]) * size);
        std::fill(row_byte.begin() + first, row_byte.begin() + first + a.dv * size, true);
      }
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!row_byte[i] && out[i] != 0xFF) return "byte " + std::to_string(i) + " of o outside every row was written";
  return {};
}

std::string AttentionBatch::check(std::int64_t most) const {
  const std::vector<unsigned char> out = o_.device.download_all();
  if (std::string why = check_untouched(out); !why.empty()) return why;
  for (std::int64_t index : problems_to_check(case_.batch * case_.heads, most))
    if (std::string why = check_problem(out, index); !why.empty()) return why;
  return {};
}

}  // namespace kjit::test
