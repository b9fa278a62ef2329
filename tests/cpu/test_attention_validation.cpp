// SPDX-License-Identifier: Apache-2.0
// attention's argument checks through both public APIs. Pointers here are fake (never
// dereferenced): validation must finish before anything touches the driver, so on a machine
// without a GPU a bad argument is reported as such, not as a missing driver.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kjit/kjit.h"
#include "kernel_sources/attention_shape.cuh"
#include "kjit/kjit.hpp"
#include "runtime/driver/cuda_api.h"
#include "runtime/ops/attention/attention_problem.h"
#include "support/call_outcome.h"

using namespace kjit;
using kjit::test::names_argument;
using kjit::test::outcome;

namespace {

// Buffers 16 MiB apart, aligned to 256 bytes, so that only the offsets the cases add misalign
// or overlap them.
const void* buffer(int which) { return reinterpret_cast<const void*>(std::uintptr_t(which + 1) << 24); }

template <typename T>
T* shifted(T* pointer, std::intptr_t bytes) {
  return reinterpret_cast<T*>(reinterpret_cast<std::intptr_t>(pointer) + bytes);
}

// 3 windows x 4 heads of 49 x 49 tokens, d = 32: q, k, v [B, H, N, D]; o [B, N, H, Dv]; an f32
// bias and an f16 mask.
AttentionArgs valid_args() {
  AttentionArgs a;
  a.q = buffer(0);
  a.k = buffer(1);
  a.v = buffer(2);
  a.o = const_cast<void*>(buffer(3));
  a.bias = buffer(4);
  a.mask = buffer(5);
  a.batch = 6;
  a.heads = 4;
  a.m = a.n = 49;
  a.d = a.dv = 32;
  a.mask_windows = 3;
  a.q_strides = a.k_strides = a.v_strides = {4 * 49 * 32, 49 * 32, 32};
  a.o_strides = {49 * 4 * 32, 32, 4 * 32};
  a.bias_strides = a.mask_strides = {49 * 49, 49};
  a.dtype = DType::kF16;
  a.bias_dtype = DType::kF32;
  a.mask_dtype = DType::kF16;
  a.scale = 0.1767767f;
  return a;
}

struct BadCase {
  const char* what;
  const char* names;  // the argument the message must name
  std::function<void(AttentionArgs&)> spoil;
};

std::vector<BadCase> size_cases() {
  return {
      {"m = 0", "m", [](AttentionArgs& a) { a.m = 0; }},
      {"m = 257", "m", [](AttentionArgs& a) { a.m = 257; }},
      {"n = 0", "n", [](AttentionArgs& a) { a.n = 0; }},
      {"n = 300", "n", [](AttentionArgs& a) { a.n = 300; }},
      {"d = 8", "d", [](AttentionArgs& a) { a.d = 8; }},
      {"d = 48", "d", [](AttentionArgs& a) { a.d = 48; }},
      {"d = 256", "d", [](AttentionArgs& a) { a.d = 256; }},
      {"d = 2^32 + 16", "d", [](AttentionArgs& a) { a.d = (std::int64_t{1} << 32) + 16; }},
      {"dv = 0", "dv", [](AttentionArgs& a) { a.dv = 0; }},
      {"dv = 96", "dv", [](AttentionArgs& a) { a.dv = 96; }},
      {"negative batch", "batch", [](AttentionArgs& a) { a.batch = -1; }},
      {"heads = 0", "heads", [](AttentionArgs& a) { a.heads = 0; }},
      {"batch x heads above kMaxRows", "batch", [](AttentionArgs& a) { a.batch = kMaxRows / 2; }},
      {"mask_windows = 0", "mask_windows", [](AttentionArgs& a) { a.mask_windows = 0; }},
  };
}

std::vector<BadCase> scalar_cases() {
  return {
      {"NaN scale", "scale", [](AttentionArgs& a) { a.scale = std::nanf(""); }},
      {"+inf scale", "scale", [](AttentionArgs& a) { a.scale = std::numeric_limits<float>::infinity(); }},
      {"-inf scale", "scale", [](AttentionArgs& a) { a.scale = -std::numeric_limits<float>::infinity(); }},
      {"f32 operands", "dtype", [](AttentionArgs& a) { a.dtype = DType::kF32; }},
      {"i32 operands", "dtype", [](AttentionArgs& a) { a.dtype = DType::kI32; }},
      {"dtype 9", "dtype", [](AttentionArgs& a) { a.dtype = static_cast<DType>(9); }},
      {"i64 bias", "bias_dtype", [](AttentionArgs& a) { a.bias_dtype = DType::kI64; }},
      {"i32 mask", "mask_dtype", [](AttentionArgs& a) { a.mask_dtype = DType::kI32; }},
  };
}

std::vector<BadCase> pointer_cases() {
  return {
      {"null q", "q", [](AttentionArgs& a) { a.q = nullptr; }},
      {"null k", "k", [](AttentionArgs& a) { a.k = nullptr; }},
      {"null v", "v", [](AttentionArgs& a) { a.v = nullptr; }},
      {"null o", "o", [](AttentionArgs& a) { a.o = nullptr; }},
      {"q 8 bytes off", "q", [](AttentionArgs& a) { a.q = shifted(a.q, 8); }},
      {"k 2 bytes off", "k", [](AttentionArgs& a) { a.k = shifted(a.k, 2); }},
      {"v 4 bytes off", "v", [](AttentionArgs& a) { a.v = shifted(a.v, 4); }},
      {"o 1 byte off", "o", [](AttentionArgs& a) { a.o = shifted(a.o, 1); }},
      {"f32 bias 2 bytes off", "bias", [](AttentionArgs& a) { a.bias = shifted(a.bias, 2); }},
      {"f16 mask 1 byte off", "mask", [](AttentionArgs& a) { a.mask = shifted(a.mask, 1); }},
      {"o inside q", "q", [](AttentionArgs& a) { a.o = const_cast<void*>(shifted(a.q, 4096)); }},
      {"o on k", "k", [](AttentionArgs& a) { a.o = const_cast<void*>(a.k); }},
      {"o over the end of v", "v", [](AttentionArgs& a) { a.o = const_cast<void*>(shifted(a.v, -256)); }},
      {"o inside bias", "bias", [](AttentionArgs& a) { a.o = const_cast<void*>(shifted(a.bias, 1024)); }},
      {"o inside mask", "mask", [](AttentionArgs& a) { a.o = const_cast<void*>(shifted(a.mask, 512)); }},
      {"q near the end of the address space", "q",
       [](AttentionArgs& a) { a.q = reinterpret_cast<const void*>(~std::uintptr_t{0} - 4095); }},
  };
}

std::vector<BadCase> stride_cases() {
  return {
      {"q row stride 36 (not 16 bytes)", "q", [](AttentionArgs& a) { a.q_strides[2] = 36; }},
      {"k head stride odd", "k", [](AttentionArgs& a) { a.k_strides[1] = 49 * 32 + 1; }},
      {"v batch stride 4 elements off", "v", [](AttentionArgs& a) { a.v_strides[0] += 4; }},
      {"q row stride below d", "q", [](AttentionArgs& a) { a.q_strides[2] = 24; }},
      {"k negative batch stride", "k", [](AttentionArgs& a) { a.k_strides[0] = -4 * 49 * 32; }},
      {"o rows overlapping (row stride below dv)", "o", [](AttentionArgs& a) { a.o_strides[2] = 16; }},
      {"o heads writing the same rows", "o", [](AttentionArgs& a) { a.o_strides[1] = 0; }},
      {"o batch entries overlapping", "o", [](AttentionArgs& a) { a.o_strides[0] = 8 * 32; }},
      {"bias row stride below n", "bias", [](AttentionArgs& a) { a.bias_strides[1] = 48; }},
      {"mask negative window stride", "mask", [](AttentionArgs& a) { a.mask_strides[0] = -49 * 49; }},
      {"q strides overflow", "q", [](AttentionArgs& a) { a.q_strides[0] = std::int64_t{1} << 61; }},
  };
}

std::vector<BadCase> bad_cases() {
  std::vector<BadCase> all = size_cases();
  for (auto* more : {&scalar_cases, &pointer_cases, &stride_cases})
    for (BadCase& bad : (*more)()) all.push_back(std::move(bad));
  return all;
}

kjit_attention_args c_args(const AttentionArgs& a) {
  kjit_attention_args c{};
  c.struct_size = sizeof c;
  c.q = a.q;
  c.k = a.k;
  c.v = a.v;
  c.o = a.o;
  c.bias = a.bias;
  c.mask = a.mask;
  c.batch = a.batch;
  c.heads = a.heads;
  c.m = a.m;
  c.n = a.n;
  c.d = a.d;
  c.dv = a.dv;
  c.mask_windows = a.mask_windows;
  for (int i = 0; i < 3; ++i) {
    c.q_strides[i] = a.q_strides[i];
    c.k_strides[i] = a.k_strides[i];
    c.v_strides[i] = a.v_strides[i];
    c.o_strides[i] = a.o_strides[i];
  }
  for (int i = 0; i < 2; ++i) {
    c.bias_strides[i] = a.bias_strides[i];
    c.mask_strides[i] = a.mask_strides[i];
  }
  c.dtype = static_cast<kjit_dtype>(a.dtype);
  c.bias_dtype = static_cast<kjit_dtype>(a.bias_dtype);
  c.mask_dtype = static_cast<kjit_dtype>(a.mask_dtype);
  c.scale = a.scale;
  c.causal = a.causal ? 1 : 0;
  return c;
}

struct CRuntime {
  kjit_runtime* rt = nullptr;
  CRuntime() { REQUIRE(kjit_runtime_create(&rt) == KJIT_SUCCESS); }
  ~CRuntime() { kjit_runtime_destroy(rt); }
};

std::vector<std::pair<const char*, AttentionArgs>> valid_variants() {
  std::vector<std::pair<const char*, AttentionArgs>> variants;
  auto add = [&](const char* what, const std::function<void(AttentionArgs&)>& change) {
    AttentionArgs args = valid_args();
    change(args);
    variants.emplace_back(what, args);
  };
  add("windows with bias and mask", [](AttentionArgs&) {});
  add("no bias, no mask (their strides and dtypes unread)", [](AttentionArgs& a) {
    a.bias = a.mask = nullptr;
    a.bias_dtype = a.mask_dtype = DType::kI64;
    a.mask_windows = 0;
    a.bias_strides = {-1, -1};
  });
  add("bf16, causal, d 128, dv 16", [](AttentionArgs& a) {
    a.dtype = DType::kBF16;
    a.causal = true;
    a.d = 128;
    a.dv = 16;
    a.q_strides = a.k_strides = {4 * 49 * 128, 49 * 128, 128};
    a.v_strides = {4 * 49 * 16, 49 * 16, 16};
    a.o_strides = {4 * 49 * 16, 49 * 16, 16};
  });
  add("one token", [](AttentionArgs& a) { a.m = a.n = 1; });
  add("256 tokens", [](AttentionArgs& a) {
    a.m = a.n = 256;
    a.q_strides = a.k_strides = a.v_strides = a.o_strides = {4 * 256 * 32, 256 * 32, 32};
    a.bias_strides = a.mask_strides = {256 * 256, 256};
  });
  add("one problem, strides of size-1 dimensions unread", [](AttentionArgs& a) {
    a.batch = a.heads = 1;
    a.q_strides[0] = a.q_strides[1] = 3;
    a.o_strides[0] = a.o_strides[1] = -5;
  });
  add("bias shared by heads (head stride 0)", [](AttentionArgs& a) { a.bias_strides[0] = 0; });
  add("q, k, v interleaved in one buffer", [](AttentionArgs& a) {
    a.k = shifted(a.q, 64);
    a.v = shifted(a.q, 128);
    a.q_strides = a.k_strides = a.v_strides = {49 * 4 * 96, 96, 4 * 96};
  });
  add("o between the rows of q (disjoint columns)", [](AttentionArgs& a) {
    a.q_strides = {49 * 4 * 64, 64, 4 * 64};
    a.o_strides = a.q_strides;
    a.o = const_cast<void*>(shifted(a.q, 64));
  });
  add("large finite scale", [](AttentionArgs& a) { a.scale = 3e38f; });
  add("zero scale", [](AttentionArgs& a) { a.scale = 0.0f; });
  return variants;
}

void check_refused(Runtime& rt, AttentionArgs args, const BadCase& bad) {
  bad.spoil(args);
  CAPTURE(bad.what);
  const auto [status, message] = outcome([&] { rt.attention(args); });
  const std::string shown = message;
  CAPTURE(shown);
  CHECK(status == Status::kErrorInvalidArgument);
  CHECK(names_argument(message, bad.names));
}

}  // namespace

TEST_CASE("attention (C++) rejects bad arguments, naming them") {
  Runtime rt;
  for (const BadCase& bad : bad_cases()) check_refused(rt, valid_args(), bad);
}

TEST_CASE("kjit_attention (C) rejects bad arguments, naming them in kjit_last_error") {
  CRuntime c;
  for (const BadCase& bad : bad_cases()) {
    AttentionArgs args = valid_args();
    bad.spoil(args);
    CAPTURE(bad.what);
    const kjit_attention_args call = c_args(args);
    const kjit_status status = kjit_attention(c.rt, &call, nullptr);
    const std::string message = kjit_last_error();
    CAPTURE(message);
    CHECK(status == KJIT_ERROR_INVALID_ARGUMENT);
    CHECK(names_argument(message, bad.names));
  }
}

TEST_CASE("kjit_attention refuses a null runtime, null args, a short struct and unknown dtypes") {
  CRuntime c;
  kjit_attention_args call = c_args(valid_args());
  CHECK(kjit_attention(nullptr, &call, nullptr) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(names_argument(kjit_last_error(), "rt"));
  CHECK(kjit_attention(c.rt, nullptr, nullptr) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(names_argument(kjit_last_error(), "args"));
  for (std::size_t size : {std::size_t{0}, sizeof call - 4, offsetof(kjit_attention_args, causal)}) {
    call.struct_size = size;
    CAPTURE(size);
    CHECK(kjit_attention(c.rt, &call, nullptr) == KJIT_ERROR_INVALID_ARGUMENT);
    CHECK(names_argument(kjit_last_error(), "struct_size"));
  }
  call = c_args(valid_args());
  std::memcpy(&call.mask_dtype, "\x07\0\0\0", 4);
  CHECK(kjit_attention(c.rt, &call, nullptr) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(names_argument(kjit_last_error(), "mask_dtype"));
}

TEST_CASE("the C struct keeps its layout: fields in order, 8-byte integers, one int for causal") {
  CHECK(offsetof(kjit_attention_args, struct_size) == 0);
  CHECK(offsetof(kjit_attention_args, q) == 8);
  CHECK(offsetof(kjit_attention_args, mask) == 48);
  CHECK(offsetof(kjit_attention_args, batch) == 56);
  CHECK(offsetof(kjit_attention_args, mask_windows) == 56 + 6 * 8);
  CHECK(offsetof(kjit_attention_args, q_strides) == 56 + 7 * 8);
  CHECK(offsetof(kjit_attention_args, bias_strides) == 56 + 19 * 8);
  CHECK(offsetof(kjit_attention_args, dtype) == 56 + 23 * 8);
  CHECK(offsetof(kjit_attention_args, scale) == 56 + 23 * 8 + 12);
  CHECK(offsetof(kjit_attention_args, causal) == 56 + 23 * 8 + 16);
  CHECK(sizeof(kjit_attention_args) == 56 + 23 * 8 + 24);
}

TEST_CASE("batch == 0 is a no-op that needs no driver, but bad sizes are still refused") {
  Runtime rt;
  AttentionArgs empty = valid_args();
  empty.batch = 0;
  CHECK_NOTHROW(rt.attention(empty));
  CRuntime c;
  const kjit_attention_args call = c_args(empty);
  CHECK(kjit_attention(c.rt, &call, nullptr) == KJIT_SUCCESS);
  const std::vector<BadCase> cases = {
      {"m = 0", "m", [](AttentionArgs& a) { a.m = 0; }},
      {"d = 48", "d", [](AttentionArgs& a) { a.d = 48; }},
      {"f32 operands", "dtype", [](AttentionArgs& a) { a.dtype = DType::kF32; }},
      {"NaN scale", "scale", [](AttentionArgs& a) { a.scale = std::nanf(""); }},
  };
  for (const BadCase& bad : cases) check_refused(rt, empty, bad);
}

TEST_CASE("valid arguments get past validation") {
  for (const auto& variant : valid_variants()) {
    CAPTURE(variant.first);
    CHECK_NOTHROW(validate_attention(variant.second));
  }
  const AttentionProblem problem = validate_attention(valid_args());
  CHECK(problem.rows == 24);
  CHECK(problem.bias_kind == kAddendF32);
  CHECK(problem.mask_kind == kAddendF16);
  // Through the APIs each call gets past validation and stops at the driver, which ctest hides
  // from this suite (a real one would run a kernel on the fake pointers).
  if (driver_available()) return;
  Runtime rt;
  CRuntime c;
  for (const auto& variant : valid_variants()) {
    CAPTURE(variant.first);
    const auto [status, message] = outcome([&] { rt.attention(variant.second); });
    const std::string shown = message;
    CAPTURE(shown);
    CHECK(status == Status::kErrorNoDriver);
    const kjit_attention_args call = c_args(variant.second);
    CHECK(kjit_attention(c.rt, &call, nullptr) == KJIT_ERROR_NO_DRIVER);
  }
  // A caller built against a larger struct (a newer header) is read up to the fields known here.
  struct Grown {
    kjit_attention_args known;
    std::int64_t later_field;
  } grown{c_args(valid_args()), 42};
  grown.known.struct_size = sizeof grown;
  CHECK(kjit_attention(c.rt, &grown.known, nullptr) == KJIT_ERROR_NO_DRIVER);
}

TEST_CASE("a call's class plans for its bucket's top and keeps its key") {
  AttentionProblem problem = validate_attention(valid_args());
  const AttentionProblem planned = planned_attention(problem);
  CHECK(planned.rows == 32);
  CHECK(planned.batch * planned.heads >= planned.rows);
  CHECK(key_of(planned) == key_of(problem));
  problem.rows = 1;
  CHECK(planned_attention(problem).rows == 1);
}
