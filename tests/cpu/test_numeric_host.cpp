// SPDX-License-Identifier: Apache-2.0
// The host fp16/bf16 conversions every GPU check relies on: if these were wrong, a wrong kernel
// could pass, so they are pinned to known bit patterns here.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ios>
#include <limits>

#include "support/numeric_host.h"

using namespace kjit::test;

namespace {

bool is_f16_nan(std::uint16_t bits) { return (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0; }
bool is_bf16_nan(std::uint16_t bits) { return (bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0; }

// bf16 is the top half of an fp32, so a float rounded by hand (to nearest, ties to even, on the
// 16 dropped bits) is an independent oracle for the generic encoder.
std::uint16_t bf16_by_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const std::uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

}  // namespace

TEST_CASE("fp16 encodes known values") {
  CHECK(f16_from_double(0.0) == 0x0000);
  CHECK(f16_from_double(-0.0) == 0x8000);
  CHECK(f16_from_double(1.0) == 0x3C00);
  CHECK(f16_from_double(-2.0) == 0xC000);
  CHECK(f16_from_double(0.333251953125) == 0x3555);
  CHECK(f16_from_double(65504.0) == 0x7BFF);              // largest finite
  CHECK(f16_from_double(65519.99) == 0x7BFF);             // below the halfway point
  CHECK(f16_from_double(65520.0) == 0x7C00);              // halfway rounds to even: inf
  CHECK(f16_from_double(HUGE_VAL) == 0x7C00);
  CHECK(f16_from_double(-HUGE_VAL) == 0xFC00);
  CHECK(f16_from_double(std::ldexp(1.0, -14)) == 0x0400);  // smallest normal
  CHECK(f16_from_double(std::ldexp(1.0, -24)) == 0x0001);  // smallest subnormal
  CHECK(f16_from_double(std::ldexp(1.0, -25)) == 0x0000);  // tie to even: 0
  CHECK(f16_from_double(std::ldexp(3.0, -25)) == 0x0002);  // tie to even: 2
  CHECK(is_f16_nan(f16_from_double(std::nan(""))));
}

TEST_CASE("fp16 rounds ties to even") {
  const double ulp = std::ldexp(1.0, -10);
  CHECK(f16_from_double(1.0 + ulp / 2) == 0x3C00);          // even neighbour below
  CHECK(f16_from_double(1.0 + 3 * ulp / 2) == 0x3C02);      // even neighbour above
  CHECK(f16_from_double(1.0 + ulp / 2 + 1e-12) == 0x3C01);  // just past halfway
}

TEST_CASE("fp16 decodes every pattern and re-encodes it unchanged") {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const double value = f16_to_double(b);
    if (is_f16_nan(b)) {
      REQUIRE(std::isnan(value));
      continue;
    }
    REQUIRE_MESSAGE(f16_from_double(value) == b, "bits 0x" << std::hex << bits);
  }
  CHECK(f16_to_double(0x3C00) == 1.0);
  CHECK(f16_to_double(0x0001) == std::ldexp(1.0, -24));
  CHECK(f16_to_double(0xFC00) == -HUGE_VAL);
}

TEST_CASE("bf16 agrees with bit-level rounding of fp32") {
  CHECK(bf16_from_double(1.0) == 0x3F80);
  CHECK(bf16_from_double(1.0 + std::ldexp(1.0, -8)) == 0x3F80);      // tie: even below
  CHECK(bf16_from_double(1.0 + 3 * std::ldexp(1.0, -8)) == 0x3F82);  // tie: even above
  CHECK(bf16_from_double(HUGE_VAL) == 0x7F80);
  CHECK(bf16_from_double(-0.0) == 0x8000);
  CHECK(is_bf16_nan(bf16_from_double(std::nan(""))));
  // Largest finite bf16 and the halfway point above it.
  CHECK(bf16_from_double(3.3895313892515355e38) == 0x7F7F);
  CHECK(bf16_from_double(std::ldexp(255.5, 120)) == 0x7F80);

  // A spread of fp32 values, subnormals and near-overflow included.
  std::uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    float f;
    std::memcpy(&f, &state, sizeof f);
    if (std::isnan(f)) continue;
    REQUIRE_MESSAGE(bf16_from_double(f) == bf16_by_bits(f), "value " << f);
  }
}

TEST_CASE("bf16 decodes every pattern and re-encodes it unchanged") {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const double value = bf16_to_double(b);
    if (is_bf16_nan(b)) {
      REQUIRE(std::isnan(value));
      continue;
    }
    float as_float;
    const std::uint32_t widened = bits << 16;
    std::memcpy(&as_float, &widened, sizeof as_float);
    REQUIRE(value == static_cast<double>(as_float));
    REQUIRE(bf16_from_double(value) == b);
  }
}

TEST_CASE("next_up and next_down step by one ulp") {
  CHECK(f16_next_up(0x3C00) == 0x3C01);
  CHECK(f16_next_down(0x3C00) == 0x3BFF);
  CHECK(f16_next_up(0x7BFF) == 0x7C00);   // largest finite -> inf
  CHECK(f16_next_up(0x7C00) == 0x7C00);   // inf stays
  CHECK(f16_next_down(0xFC00) == 0xFC00); // -inf stays
  CHECK(f16_next_up(0x0000) == 0x0001);
  CHECK(f16_next_up(0x8000) == 0x0001);
  CHECK(f16_next_down(0x0000) == 0x8001);
  CHECK(f16_next_up(0x8001) == 0x8000);   // towards zero from below
  CHECK(f16_next_up(0xBC00) == 0xBBFF);
  CHECK(is_f16_nan(f16_next_up(0x7E00)));
  CHECK(bf16_next_up(0x3F80) == 0x3F81);
  CHECK(bf16_next_down(0x3F80) == 0x3F7F);
  CHECK(bf16_next_down(0x0000) == 0x8001);
  CHECK(bf16_next_up(0x7F7F) == 0x7F80);

  // Every finite non-zero value lies strictly between its neighbours.
  for (std::uint32_t bits = 1; bits < 0x7C00; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    REQUIRE(f16_to_double(f16_next_down(b)) < f16_to_double(b));
    REQUIRE(f16_to_double(b) < f16_to_double(f16_next_up(b)));
  }
}

TEST_CASE("round_to, load_element and store_element agree") {
  CHECK(round_to(kjit::DType::kF32, 0.1) == static_cast<double>(0.1f));
  CHECK(round_to(kjit::DType::kF16, 0.1) == f16_to_double(f16_from_double(0.1)));
  CHECK(round_to(kjit::DType::kBF16, 0.1) == bf16_to_double(bf16_from_double(0.1)));
  CHECK(round_to(kjit::DType::kF16, 1e6) == HUGE_VAL);

  for (kjit::DType dtype : {kjit::DType::kF32, kjit::DType::kF16, kjit::DType::kBF16}) {
    unsigned char storage[4 * 3] = {};
    store_element(dtype, storage, 0, -1.5);
    store_element(dtype, storage, 1, 0.1);
    store_element(dtype, storage, 2, -HUGE_VAL);
    CHECK(load_element(dtype, storage, 0) == -1.5);
    CHECK(load_element(dtype, storage, 1) == round_to(dtype, 0.1));
    CHECK(load_element(dtype, storage, 2) == -HUGE_VAL);
  }
  CHECK_THROWS(round_to(kjit::DType::kI32, 1.0));
}
