// SPDX-License-Identifier: Apache-2.0
#include "support/numeric_host.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kjit::test {
namespace {

// fp16 and bf16 differ only in how the 15 magnitude bits split between exponent and mantissa,
// so one encoder and one decoder serve both.
struct Format {
  int exp_bits;
  int man_bits;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int min_exponent() const { return 1 - bias(); }
  std::uint16_t exponent_mask() const {
    return static_cast<std::uint16_t>(((1u << exp_bits) - 1u) << man_bits);
  }
};

constexpr Format kHalf{5, 10};
constexpr Format kBrain{8, 7};
constexpr std::uint16_t kSignBit = 0x8000;

// Rounds straight from double: going through float first would round twice, and a value halfway
// between two 16-bit neighbours after the first rounding could then go the wrong way.
std::uint16_t encode(double value, Format f) {
  const std::uint16_t sign = std::signbit(value) ? kSignBit : 0;
  if (std::isnan(value))
    return static_cast<std::uint16_t>(sign | f.exponent_mask() | (1u << (f.man_bits - 1)));
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return static_cast<std::uint16_t>(sign | f.exponent_mask());

  const double smallest_normal = std::ldexp(1.0, f.min_exponent());
  int exponent = f.min_exponent();
  if (magnitude >= smallest_normal) {
    int frexp_exponent = 0;
    std::frexp(magnitude, &frexp_exponent);
    exponent = frexp_exponent - 1;
  }
  // Spacing of the format's values around `magnitude`; dividing by a power of two is exact, and
  // nearbyint rounds ties to even in the default rounding mode.
  const double quantum = std::ldexp(1.0, exponent - f.man_bits);
  const double rounded = std::nearbyint(magnitude / quantum) * quantum;

  if (rounded >= std::ldexp(1.0, f.bias() + 1)) return static_cast<std::uint16_t>(sign | f.exponent_mask());
  if (rounded < smallest_normal) {
    const double subnormal_step = std::ldexp(1.0, f.min_exponent() - f.man_bits);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(rounded / subnormal_step));
  }
  int frexp_exponent = 0;
  const double fraction = std::frexp(rounded, &frexp_exponent);  // in [0.5, 1)
  const unsigned biased = static_cast<unsigned>(frexp_exponent - 1 + f.bias());
  const unsigned mantissa =
      static_cast<unsigned>(std::ldexp(fraction, f.man_bits + 1)) - (1u << f.man_bits);
  return static_cast<std::uint16_t>(sign | (biased << f.man_bits) | mantissa);
}

double decode(std::uint16_t bits, Format f) {
  const double sign = (bits & kSignBit) ? -1.0 : 1.0;
  const unsigned biased = (bits & f.exponent_mask()) >> f.man_bits;
  const unsigned mantissa = bits & ((1u << f.man_bits) - 1u);
  if ((bits & f.exponent_mask()) == f.exponent_mask())
    return mantissa != 0 ? std::nan("") : sign * HUGE_VAL;
  if (biased == 0) return sign * std::ldexp(mantissa, f.min_exponent() - f.man_bits);
  return sign * std::ldexp(mantissa + (1u << f.man_bits),
                           static_cast<int>(biased) - f.bias() - f.man_bits);
}

// Sign-magnitude order: stepping up moves a positive value away from zero and a negative one
// towards it.
std::uint16_t next_up(std::uint16_t bits, Format f) {
  const std::uint16_t magnitude = bits & 0x7FFF;
  if (magnitude > f.exponent_mask()) return bits;  // NaN
  if (bits == f.exponent_mask()) return bits;      // +inf
  if (magnitude == 0) return 0x0001;
  return static_cast<std::uint16_t>((bits & kSignBit) ? bits - 1 : bits + 1);
}

std::uint16_t next_down(std::uint16_t bits, Format f) {
  return static_cast<std::uint16_t>(next_up(static_cast<std::uint16_t>(bits ^ kSignBit), f) ^ kSignBit);
}

[[noreturn]] void unsupported(DType dtype) {
  throw std::invalid_argument(std::string("numeric_host: no host conversion for dtype ") +
                              to_string(dtype));
}

}  // namespace

std::uint16_t f16_from_double(double value) { return encode(value, kHalf); }
std::uint16_t bf16_from_double(double value) { return encode(value, kBrain); }
double f16_to_double(std::uint16_t bits) { return decode(bits, kHalf); }
double bf16_to_double(std::uint16_t bits) { return decode(bits, kBrain); }

std::uint16_t f16_next_up(std::uint16_t bits) { return next_up(bits, kHalf); }
std::uint16_t f16_next_down(std::uint16_t bits) { return next_down(bits, kHalf); }
std::uint16_t bf16_next_up(std::uint16_t bits) { return next_up(bits, kBrain); }
std::uint16_t bf16_next_down(std::uint16_t bits) { return next_down(bits, kBrain); }

double round_to(DType dtype, double value) {
  switch (dtype) {
    case DType::kF32: return static_cast<double>(static_cast<float>(value));
    case DType::kF16: return f16_to_double(f16_from_double(value));
    case DType::kBF16: return bf16_to_double(bf16_from_double(value));
    default: unsupported(dtype);
  }
}

double load_element(DType dtype, const void* data, std::size_t index) {
  switch (dtype) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, static_cast<const char*>(data) + index * sizeof(float), sizeof v);
      return v;
    }
    case DType::kF16:
    case DType::kBF16: {
      std::uint16_t bits;
      std::memcpy(&bits, static_cast<const char*>(data) + index * sizeof bits, sizeof bits);
      return dtype == DType::kF16 ? f16_to_double(bits) : bf16_to_double(bits);
    }
    default: unsupported(dtype);
  }
}

void store_element(DType dtype, void* data, std::size_t index, double value) {
  switch (dtype) {
    case DType::kF32: {
      const float v = static_cast<float>(value);
      std::memcpy(static_cast<char*>(data) + index * sizeof v, &v, sizeof v);
      return;
    }
    case DType::kF16:
    case DType::kBF16: {
      const std::uint16_t bits =
          dtype == DType::kF16 ? f16_from_double(value) : bf16_from_double(value);
      std::memcpy(static_cast<char*>(data) + index * sizeof bits, &bits, sizeof bits);
      return;
    }
    default: unsupported(dtype);
  }
}

}  // namespace kjit::test
