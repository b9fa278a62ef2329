// SPDX-License-Identifier: Apache-2.0
#include "topk_inputs.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "support/numeric_host.h"

namespace kjit::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A quiet NaN with its sign bit set whose payload survives the cast to float (fp32 bits
// 0xffc12345); the 16-bit formats keep its sign.
double negative_nan_with_payload() {
  const std::uint64_t bits = 0xfff0000000000000ull | (0x412345ull << 29);
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Irwin-Hall: four 16-bit uniforms summed, centred and scaled to unit variance; cheap, and the
// shape of the tails does not matter here.
double normal(std::uint64_t& state) {
  const std::uint64_t r = splitmix64(state);
  const double sum =
      static_cast<double>((r & 0xFFFF) + ((r >> 16) & 0xFFFF) + ((r >> 32) & 0xFFFF) + (r >> 48));
  return (sum / 65536.0 - 2.0) * 1.7320508075688772;
}

// Draws the values of one row in column order; the few special columns are picked up front.
class RowGenerator {
 public:
  RowGenerator(DType dtype, TopkRowKind kind, std::uint64_t state, std::int64_t cols)
      : dtype_(dtype), kind_(kind), state_(state), cols_(static_cast<double>(cols)) {
    for (std::int64_t& column : special_)
      column = static_cast<std::int64_t>(splitmix64(state_) % static_cast<std::uint64_t>(cols));
    constant_ = normal(state_);
  }

  double next(std::int64_t col) {
    switch (kind_) {
      case TopkRowKind::kNormal: return normal(state_);
      case TopkRowKind::kNormal10: return 10.0 * normal(state_);
      case TopkRowKind::kNormal1000: return 1000.0 * normal(state_);
      case TopkRowKind::kAllEqual: return constant_;
      case TopkRowKind::kFewIntegers: return static_cast<double>(splitmix64(state_) % 5) - 2.0;
      case TopkRowKind::kSignedZeros: return signed_zero_or_one();
      case TopkRowKind::kHuge: return huge_or_normal(col);
      case TopkRowKind::kNegInfRuns: return run_of_neg_inf_or_normal();
      case TopkRowKind::kFewFinite: return is_special(col, 3) ? normal(state_) : -kInf;
      case TopkRowKind::kOneNaN: return col == special_[0] ? std::nan("") : normal(state_);
      case TopkRowKind::kOneNegativeNaN:
        return col == special_[0] ? negative_nan_with_payload() : normal(state_);
      case TopkRowKind::kOnePosInf: return col == special_[0] ? kInf : normal(state_);
      case TopkRowKind::kAllNegInf: return -kInf;
      case TopkRowKind::kDescending: return 4.0 - 8.0 * static_cast<double>(col) / cols_;
      case TopkRowKind::kHotStart: return normal(state_) + (col < cols_ / 16 ? 3.0 : 0.0);
    }
    return 0.0;
  }

 private:
  bool is_special(std::int64_t col, int count) const {
    for (int i = 0; i < count; ++i)
      if (col == special_[i]) return true;
    return false;
  }

  double signed_zero_or_one() {
    static constexpr double kValues[] = {0.0, -0.0, 1.0, -1.0};
    return kValues[splitmix64(state_) % 4];
  }

  double huge_or_normal(std::int64_t col) {
    // fp16 tops out at 65504: 1e30 would become inf and turn the row into a NaN row.
    const double huge = dtype_ == DType::kF16 ? 6.0e4 : 1e30;
    if (col == special_[0] || col == special_[1]) return huge;
    if (col == special_[2] || col == special_[3]) return -huge;
    return normal(state_);
  }

  double run_of_neg_inf_or_normal() {
    if (run_left_ == 0) {
      const std::uint64_t r = splitmix64(state_);
      in_neg_inf_run_ = (r & 1) != 0;
      run_left_ = 1 + static_cast<int>((r >> 1) % 64);
    }
    --run_left_;
    return in_neg_inf_run_ ? -kInf : normal(state_);
  }

  DType dtype_;
  TopkRowKind kind_;
  std::uint64_t state_;
  double cols_;
  std::int64_t special_[4] = {};
  double constant_ = 0.0;
  int run_left_ = 0;
  bool in_neg_inf_run_ = false;
};

}  // namespace

const char* to_string(TopkRowKind kind) {
  switch (kind) {
    case TopkRowKind::kNormal: return "normal";
    case TopkRowKind::kNormal10: return "normal*10";
    case TopkRowKind::kNormal1000: return "normal*1000";
    case TopkRowKind::kAllEqual: return "all equal";
    case TopkRowKind::kFewIntegers: return "integers in [-2, 2]";
    case TopkRowKind::kSignedZeros: return "+-0 and +-1";
    case TopkRowKind::kHuge: return "normal with +-huge";
    case TopkRowKind::kNegInfRuns: return "runs of -inf";
    case TopkRowKind::kFewFinite: return "few finite among -inf";
    case TopkRowKind::kOneNaN: return "one NaN";
    case TopkRowKind::kOneNegativeNaN: return "one -NaN with a payload";
    case TopkRowKind::kOnePosInf: return "one +inf";
    case TopkRowKind::kAllNegInf: return "all -inf";
    case TopkRowKind::kDescending: return "descending";
    case TopkRowKind::kHotStart: return "higher first 1/16";
  }
  return "?";
}

const std::vector<TopkRowKind>& all_topk_row_kinds() {
  static const std::vector<TopkRowKind> kinds = {
      TopkRowKind::kNormal,      TopkRowKind::kNormal10,   TopkRowKind::kNormal1000, TopkRowKind::kAllEqual,
      TopkRowKind::kFewIntegers, TopkRowKind::kSignedZeros, TopkRowKind::kHuge,      TopkRowKind::kNegInfRuns,
      TopkRowKind::kFewFinite,   TopkRowKind::kOneNaN,     TopkRowKind::kOnePosInf,  TopkRowKind::kAllNegInf,
      TopkRowKind::kDescending,  TopkRowKind::kHotStart,    TopkRowKind::kOneNegativeNaN,
  };
  return kinds;
}

TopkRowKind TopkRowSource::kind_of(std::int64_t row, std::int64_t cols) const {
  return kinds[static_cast<std::size_t>((row + cols) % static_cast<std::int64_t>(kinds.size()))];
}

void generate_topk_row(DType dtype, const TopkRowSource& source, std::int64_t row, std::int64_t cols,
                       void* dst) {
  const std::uint64_t state = source.seed ^ (static_cast<std::uint64_t>(row) * 0xD1B54A32D192ED03ull) ^
                              (static_cast<std::uint64_t>(cols) << 40) ^ 0x70D0C0FFEEull;
  RowGenerator generator(dtype, source.kind_of(row, cols), state, cols);
  for (std::int64_t c = 0; c < cols; ++c)
    store_element(dtype, dst, static_cast<std::size_t>(c), generator.next(c));
}

std::vector<double> topk_input_row(DType dtype, const TopkRowSource& source, std::int64_t row,
                                   std::int64_t cols) {
  std::vector<unsigned char> raw(static_cast<std::size_t>(cols) * size_of(dtype));
  generate_topk_row(dtype, source, row, cols, raw.data());
  std::vector<double> values(static_cast<std::size_t>(cols));
  for (std::int64_t c = 0; c < cols; ++c)
    values[c] = load_element(dtype, raw.data(), static_cast<std::size_t>(c));
  return values;
}

}  // namespace kjit::test
