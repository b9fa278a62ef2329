// SPDX-License-Identifier: Apache-2.0
// Host-side fp16 and bf16: conversions that round like the GPU (to nearest, ties to even) and
// neighbour steps for ulp checks. The tests hold 16-bit elements as their raw bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kjit/types.hpp"

namespace kjit::test {

/// Nearest fp16 to `value` (ties to even); overflow gives inf, NaN stays a quiet NaN.
std::uint16_t f16_from_double(double value);
/// Nearest bf16 to `value` (ties to even); overflow gives inf, NaN stays a quiet NaN.
std::uint16_t bf16_from_double(double value);
/// The exact value of an fp16.
double f16_to_double(std::uint16_t bits);
/// The exact value of a bf16.
double bf16_to_double(std::uint16_t bits);

/// The fp16 right above `bits` (NaN and +inf stay; -0 and +0 step to the smallest subnormal).
std::uint16_t f16_next_up(std::uint16_t bits);
/// The fp16 right below `bits`.
std::uint16_t f16_next_down(std::uint16_t bits);
/// The bf16 right above `bits`.
std::uint16_t bf16_next_up(std::uint16_t bits);
/// The bf16 right below `bits`.
std::uint16_t bf16_next_down(std::uint16_t bits);

/// `value` rounded to `dtype` (f32, f16 or bf16) and read back: what a kernel can store.
double round_to(DType dtype, double value);
/// Reads element `index` of an array of `dtype` (f32, f16 or bf16) as a double.
double load_element(DType dtype, const void* data, std::size_t index);
/// Writes `value` rounded to `dtype` as element `index` of an array of `dtype`.
void store_element(DType dtype, void* data, std::size_t index, double value);

}  // namespace kjit::test
