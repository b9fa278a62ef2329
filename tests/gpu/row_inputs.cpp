// SPDX-License-Identifier: Apache-2.0
#include "row_inputs.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>

#include "support/numeric_host.h"

namespace kjit::test {
namespace {

constexpr float kInf = HUGE_VALF;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Irwin-Hall: four 16-bit uniforms summed, centred and scaled to unit variance. Cheaper than
// Box-Muller by far, which matters for the two-billion-element batch, and the shape of the
// tails does not matter to these checks.
float normal(std::uint64_t& state) {
  const std::uint64_t r = splitmix64(state);
  const float sum = static_cast<float>((r & 0xFFFF) + ((r >> 16) & 0xFFFF) + ((r >> 32) & 0xFFFF) +
                                       (r >> 48));
  return (sum / 65536.0f - 2.0f) * 1.7320508f;
}

void store(DType dtype, void* dst, std::int64_t col, float value) {
  if (dtype == DType::kF32) {
    std::memcpy(static_cast<float*>(dst) + col, &value, sizeof value);
    return;
  }
  std::uint16_t bits;
  if (dtype == DType::kBF16 && !std::isnan(value)) {
    // bf16 is the top half of an fp32: round the dropped half to nearest, ties to even.
    std::uint32_t wide;
    std::memcpy(&wide, &value, sizeof wide);
    bits = static_cast<std::uint16_t>((wide + 0x7FFFu + ((wide >> 16) & 1u)) >> 16);
  } else {
    bits = dtype == DType::kF16 ? f16_from_double(value) : bf16_from_double(value);
  }
  std::memcpy(static_cast<std::uint16_t*>(dst) + col, &bits, sizeof bits);
}

float value_at(RowKind kind, std::uint64_t& state, std::int64_t col, std::int64_t special_col) {
  switch (kind) {
    case RowKind::kNormal: return normal(state);
    case RowKind::kWide: return 30.0f * normal(state);
    case RowKind::kSomeNegInf: return (splitmix64(state) & 7) == 0 ? -kInf : normal(state);
    case RowKind::kPosInf: return col == special_col ? kInf : normal(state);
    case RowKind::kNaN: return col == special_col ? std::nanf("") : normal(state);
    case RowKind::kAllNegInf: return -kInf;
    case RowKind::kZeros: return 0.0f;
    case RowKind::kOffset: return 1000.0f + 30.0f * normal(state);
    case RowKind::kTiny: return 1e-39f * normal(state);
    case RowKind::kHuge: return 3e37f * normal(state);
  }
  return 0.0f;
}

}  // namespace

RowKind row_kind(std::int64_t row, std::int64_t cols) {
  return static_cast<RowKind>((row + cols) % kRowKinds);
}

const char* to_string(RowKind kind) {
  switch (kind) {
    case RowKind::kNormal: return "normal";
    case RowKind::kWide: return "normal*30";
    case RowKind::kSomeNegInf: return "some -inf";
    case RowKind::kPosInf: return "one +inf";
    case RowKind::kNaN: return "one NaN";
    case RowKind::kAllNegInf: return "all -inf";
    case RowKind::kZeros: return "all zeros";
    case RowKind::kOffset: return "1000+normal*30";
    case RowKind::kTiny: return "normal*1e-39";
    case RowKind::kHuge: return "normal*3e37";
  }
  return "?";
}

std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    const char* fixed = std::getenv("KJIT_TEST_SEED");
    if (fixed != nullptr && *fixed != '\0') return static_cast<std::uint64_t>(std::strtoull(fixed, nullptr, 0));
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }();
  static std::once_flag announced;
  std::call_once(announced, [] { MESSAGE("seed " << seed << " (KJIT_TEST_SEED=" << seed << " repeats this run)"); });
  return seed;
}

void generate_row(DType dtype, std::uint64_t seed, std::int64_t row, std::int64_t cols, void* dst) {
  std::uint64_t state = seed ^ (static_cast<std::uint64_t>(row) * 0xD1B54A32D192ED03ull) ^
                        (static_cast<std::uint64_t>(cols) << 40);
  const RowKind kind = row_kind(row, cols);
  const std::int64_t special_col = static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(cols));
  for (std::int64_t c = 0; c < cols; ++c) store(dtype, dst, c, value_at(kind, state, c, special_col));
}

std::vector<double> input_row(DType dtype, std::uint64_t seed, std::int64_t row, std::int64_t cols) {
  std::vector<unsigned char> raw(static_cast<std::size_t>(cols) * size_of(dtype));
  generate_row(dtype, seed, row, cols, raw.data());
  std::vector<double> values(static_cast<std::size_t>(cols));
  for (std::int64_t c = 0; c < cols; ++c) values[c] = load_element(dtype, raw.data(), c);
  return values;
}

std::vector<std::int64_t> rows_to_check(std::int64_t rows, std::uint64_t seed) {
  std::set<std::int64_t> picked;
  if (rows <= 64) {
    for (std::int64_t r = 0; r < rows; ++r) picked.insert(r);
  } else {
    for (std::int64_t r = 0; r < 16; ++r) {
      picked.insert(r);
      picked.insert(rows - 1 - r);
    }
    std::uint64_t state = seed ^ static_cast<std::uint64_t>(rows);
    for (int i = 0; i < 32; ++i) picked.insert(static_cast<std::int64_t>(splitmix64(state) % rows));
  }
  return {picked.begin(), picked.end()};
}

}  // namespace kjit::test
