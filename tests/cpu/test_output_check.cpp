// SPDX-License-Identifier: Apache-2.0
// The tuner's output check: agreement within rounding, every mismatch found wherever it lies
// (the check runs in chunks on several threads), NaN only matching NaN; attention's rows of
// weighted means, each element within a rounding of its row's magnitude.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "autotune/output_check.h"
#include "runtime/compiler/kernel_compiler.h"

using namespace kjit;

namespace {

std::vector<unsigned char> f32_bytes(const std::vector<float>& values) {
  std::vector<unsigned char> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<float> ramp(std::size_t n) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = 1.0f / static_cast<float>(i + 1);
  return values;
}

}  // namespace

TEST_CASE("identical outputs and rounding differences agree") {
  const std::vector<float> ref = ramp(100003);
  CHECK(compare_outputs(f32_bytes(ref), f32_bytes(ref), DType::kF32) == "");
  std::vector<float> near = ref;
  for (float& v : near) v *= 1.0f + 4e-6f;  // a few ulps: reduction order
  CHECK(compare_outputs(f32_bytes(near), f32_bytes(ref), DType::kF32) == "");
}

TEST_CASE("a mismatch is found in any chunk, and the first one is named") {
  const std::vector<float> ref = ramp(100003);
  for (std::size_t bad : {std::size_t{0}, std::size_t{1}, std::size_t{50001}, std::size_t{100002}}) {
    std::vector<float> got = ref;
    got[bad] += 1e-3f;  // far past 2e-6 + 2e-5 * |ref|
    const std::string why = compare_outputs(f32_bytes(got), f32_bytes(ref), DType::kF32);
    CHECK_MESSAGE(why.find("element " + std::to_string(bad) + " ") != std::string::npos, why);
  }
  std::vector<float> got = ref;
  got[70000] = 5.0f;
  got[30000] = 5.0f;
  CHECK(compare_outputs(f32_bytes(got), f32_bytes(ref), DType::kF32).find("element 30000 ") != std::string::npos);
}

TEST_CASE("NaN matches only NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(compare_outputs(f32_bytes({1.0f, nan}), f32_bytes({1.0f, nan}), DType::kF32) == "");
  CHECK(compare_outputs(f32_bytes({1.0f, nan}), f32_bytes({1.0f, 0.5f}), DType::kF32) != "");
  CHECK(compare_outputs(f32_bytes({1.0f, 0.5f}), f32_bytes({1.0f, nan}), DType::kF32) != "");
}

TEST_CASE("bf16 outputs may differ by one rounding step, not more") {
  auto bf16 = [](std::initializer_list<unsigned short> bits) {
    std::vector<unsigned char> bytes(bits.size() * 2);
    std::memcpy(bytes.data(), std::data(bits), bytes.size());
    return bytes;
  };
  // 0x3f80 = 1.0; 0x3f81 is the next bf16 (1.0078125); 0x3f90 = 1.125.
  CHECK(compare_outputs(bf16({0x3f80, 0x3f80}), bf16({0x3f80, 0x3f81}), DType::kBF16) == "");
  CHECK(compare_outputs(bf16({0x3f80, 0x3f90}), bf16({0x3f80, 0x3f80}), DType::kBF16) != "");
  CHECK(compare_outputs(bf16({0x3f80}), bf16({0x3f80, 0x3f80}), DType::kBF16) != "");  // sizes differ
}

TEST_CASE("rows of weighted means may differ by a rounding of the row's magnitude, not more") {
  // Rows of 4: an element that cancellation left small (0.001 beside 3.0) may move by 1/64 of 3.0
  // in bf16, as rounding one probability of the mix moves it; per element it could not.
  const std::vector<float> ref = {3.0f, 0.001f, -1.0f, 0.5f, 0.25f, 0.001f, 0.125f, 0.0f};
  std::vector<float> got = ref;
  got[1] = 0.04f;  // within 3.0 / 64
  CHECK(compare_outputs(f32_bytes(got), f32_bytes(ref), DType::kF32) != "");
  const auto bf16_of = [](const std::vector<float>& values) {
    std::vector<unsigned char> bytes(values.size() * 2);
    for (std::size_t i = 0; i < values.size(); ++i) {
      unsigned bits;
      std::memcpy(&bits, &values[i], 4);
      const unsigned short top = static_cast<unsigned short>(bits >> 16);  // truncation suffices here
      std::memcpy(&bytes[2 * i], &top, 2);
    }
    return bytes;
  };
  CHECK(compare_outputs(bf16_of(got), bf16_of(ref), DType::kBF16) != "");
  CHECK(compare_output_rows(bf16_of(got), bf16_of(ref), DType::kBF16, 4) == "");
  got[1] = 0.001f;
  got[5] = 0.04f;  // the second row's largest is 0.25: 0.04 is past 0.25 / 64
  CHECK(compare_output_rows(bf16_of(got), bf16_of(ref), DType::kBF16, 4).find("element 5 ") != std::string::npos);
}

TEST_CASE("the device-side output check compiles for every output type, sm_80 and sm_90") {
  // The tuner compares candidates on the GPU with this kernel; NVRTC needs no GPU to build it.
  for (const char* type : {"float", "kjit::f16", "kjit::bf16"})
    for (int arch : {80, 90}) {
      const KernelSpec spec{"output_compare.cuh", std::string("kjit::compare_outputs<") + type + ">"};
      CAPTURE(spec.name_expression);
      CAPTURE(arch);
      const CompiledKernel kernel = compile_kernel(spec, arch);
      CHECK_FALSE(kernel.cubin.empty());
      CHECK(kernel.usage.spill_stores == 0);
    }
}
