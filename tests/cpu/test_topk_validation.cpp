// SPDX-License-Identifier: Apache-2.0
// softmax_topk's argument checks through both public APIs. Pointers here are fake (never
// dereferenced): validation must finish before anything touches the driver, so on a machine
// without a GPU a bad argument is reported as such, not as a missing driver.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kjit/kjit.h"
#include "kjit/kjit.hpp"
#include "runtime/driver/cuda_api.h"
#include "runtime/ops/topk/topk_problem.h"
#include "support/call_outcome.h"

using namespace kjit;
using kjit::test::names_argument;
using kjit::test::outcome;

namespace {

// Far apart and aligned to 256 bytes, so that only the offsets the cases add misalign them.
const void* const kLogits = reinterpret_cast<const void*>(std::uintptr_t{0x10000});
float* const kProbs = reinterpret_cast<float*>(std::uintptr_t{0x8000000});
void* const kIndices = reinterpret_cast<void*>(std::uintptr_t{0x9000000});
const std::int32_t* const kRowK = reinterpret_cast<const std::int32_t*>(std::uintptr_t{0xA000000});

TopkArgs valid_args() {
  TopkArgs args;
  args.logits = kLogits;
  args.row_stride = 256;
  args.rows = 4;
  args.cols = 200;
  args.in_dtype = DType::kF32;
  args.k = 50;
  args.temperature = 1.0f;
  args.flags = 0;
  args.probs_out = kProbs;
  args.idx_out = kIndices;
  args.idx_dtype = DType::kI64;
  return args;
}

template <typename T>
T* shifted(T* pointer, std::uintptr_t bytes) {
  return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(pointer) + bytes);
}

struct BadCase {
  const char* what;
  const char* names;  // the argument the message must name
  std::function<void(TopkArgs&)> spoil;
};

std::vector<BadCase> k_and_shape_cases() {
  return {
      {"k = 0", "k", [](TopkArgs& a) { a.k = 0; }},
      {"negative k", "k", [](TopkArgs& a) { a.k = -3; }},
      {"k above cols", "k", [](TopkArgs& a) { a.k = 201; }},
      {"k above kMaxTopK", "k",
       [](TopkArgs& a) { a.cols = a.row_stride = 10000; a.k = kMaxTopK + 1; }},
      {"negative rows", "rows", [](TopkArgs& a) { a.rows = -1; }},
      {"zero cols", "cols", [](TopkArgs& a) { a.cols = 0; a.k = 1; }},
      {"negative cols", "cols", [](TopkArgs& a) { a.cols = -7; a.k = 1; }},
      {"cols above kMaxCols", "cols", [](TopkArgs& a) { a.cols = a.row_stride = kMaxCols + 1; }},
      {"row_stride below cols", "row_stride", [](TopkArgs& a) { a.row_stride = 199; }},
      {"negative row_stride", "row_stride", [](TopkArgs& a) { a.row_stride = -256; }},
  };
}

std::vector<BadCase> scalar_cases() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  return {
      {"temperature 0", "temperature", [](TopkArgs& a) { a.temperature = 0.0f; }},
      {"temperature -0", "temperature", [](TopkArgs& a) { a.temperature = -0.0f; }},
      {"negative temperature", "temperature", [](TopkArgs& a) { a.temperature = -1.0f; }},
      {"NaN temperature", "temperature", [=](TopkArgs& a) { a.temperature = nan; }},
      {"+inf temperature", "temperature", [=](TopkArgs& a) { a.temperature = inf; }},
      {"-inf temperature", "temperature", [=](TopkArgs& a) { a.temperature = -inf; }},
      {"flag bit 2", "flags", [](TopkArgs& a) { a.flags = 4u; }},
      {"known flags plus an unknown one", "flags",
       [](TopkArgs& a) { a.flags = kTopkLogProbs | kTopkRenorm | 8u; }},
      {"top flag bit", "flags", [](TopkArgs& a) { a.flags = 0x80000000u; }},
      {"i32 logits", "in_dtype", [](TopkArgs& a) { a.in_dtype = DType::kI32; }},
      {"i64 logits", "in_dtype", [](TopkArgs& a) { a.in_dtype = DType::kI64; }},
      {"dtype 77 logits", "in_dtype", [](TopkArgs& a) { a.in_dtype = static_cast<DType>(77); }},
      {"f32 indices", "idx_dtype", [](TopkArgs& a) { a.idx_dtype = DType::kF32; }},
      {"f16 indices", "idx_dtype", [](TopkArgs& a) { a.idx_dtype = DType::kF16; }},
      {"bf16 indices", "idx_dtype", [](TopkArgs& a) { a.idx_dtype = DType::kBF16; }},
      {"dtype -1 indices", "idx_dtype", [](TopkArgs& a) { a.idx_dtype = static_cast<DType>(-1); }},
  };
}

std::vector<BadCase> pointer_cases() {
  return {
      {"null logits", "logits", [](TopkArgs& a) { a.logits = nullptr; }},
      {"null probs_out", "probs_out", [](TopkArgs& a) { a.probs_out = nullptr; }},
      {"null idx_out", "idx_out", [](TopkArgs& a) { a.idx_out = nullptr; }},
      {"f32 logits 2 bytes off", "logits", [](TopkArgs& a) { a.logits = shifted(kLogits, 2); }},
      {"f16 logits 1 byte off", "logits",
       [](TopkArgs& a) { a.in_dtype = DType::kF16; a.logits = shifted(kLogits, 1); }},
      {"bf16 logits 3 bytes off", "logits",
       [](TopkArgs& a) { a.in_dtype = DType::kBF16; a.logits = shifted(kLogits, 3); }},
      {"probs_out 2 bytes off", "probs_out", [](TopkArgs& a) { a.probs_out = shifted(kProbs, 2); }},
      {"probs_out 1 byte off", "probs_out", [](TopkArgs& a) { a.probs_out = shifted(kProbs, 1); }},
      {"i64 idx_out 4 bytes off", "idx_out", [](TopkArgs& a) { a.idx_out = shifted(kIndices, 4); }},
      {"i32 idx_out 2 bytes off", "idx_out",
       [](TopkArgs& a) { a.idx_dtype = DType::kI32; a.idx_out = shifted(kIndices, 2); }},
      {"k_per_row 2 bytes off", "k_per_row", [](TopkArgs& a) { a.k_per_row = shifted(kRowK, 2); }},
      // k_per_row is read while the outputs are written: sharing bytes with either is a race.
      {"k_per_row inside probs_out", "k_per_row",
       [](TopkArgs& a) { a.k_per_row = reinterpret_cast<const std::int32_t*>(kProbs + 10); }},
      {"k_per_row inside idx_out", "k_per_row",
       [](TopkArgs& a) { a.k_per_row = static_cast<const std::int32_t*>(shifted(kIndices, 64)); }},
      {"probs_out over the last logits row", "probs_out",
       [](TopkArgs& a) { a.probs_out = reinterpret_cast<float*>(const_cast<void*>(shifted(kLogits, 3 * 256 * 4))); }},
      {"rows above kMaxRows", "rows", [](TopkArgs& a) { a.rows = kMaxRows + 1; }},
      {"rows near 2^62", "rows", [](TopkArgs& a) { a.rows = std::int64_t{1} << 62; }},
  };
}

std::vector<BadCase> bad_cases() {
  std::vector<BadCase> all = k_and_shape_cases();
  for (BadCase& bad : scalar_cases()) all.push_back(std::move(bad));
  for (BadCase& bad : pointer_cases()) all.push_back(std::move(bad));
  return all;
}

kjit_status call_c(kjit_runtime* rt, const TopkArgs& a) {
  return kjit_softmax_topk(rt, a.logits, a.row_stride, a.rows, a.cols, static_cast<kjit_dtype>(a.in_dtype),
                           a.k, a.k_per_row, a.temperature, a.flags, a.probs_out, a.idx_out,
                           static_cast<kjit_dtype>(a.idx_dtype), nullptr);
}

struct CRuntime {
  kjit_runtime* rt = nullptr;
  CRuntime() { REQUIRE(kjit_runtime_create(&rt) == KJIT_SUCCESS); }
  ~CRuntime() { kjit_runtime_destroy(rt); }
};

// Argument sets the spec allows, some at its edges.
std::vector<std::pair<const char*, TopkArgs>> valid_variants() {
  std::vector<std::pair<const char*, TopkArgs>> variants;
  auto add = [&](const char* what, const std::function<void(TopkArgs&)>& change) {
    TopkArgs args = valid_args();
    change(args);
    variants.emplace_back(what, args);
  };
  add("plain", [](TopkArgs&) {});
  add("k == cols", [](TopkArgs& a) { a.k = 200; });
  add("k == kMaxTopK", [](TopkArgs& a) { a.cols = a.row_stride = 5000; a.k = kMaxTopK; });
  add("one column", [](TopkArgs& a) { a.cols = 1; a.k = 1; });
  add("f16 logits 2 bytes off, odd stride", [](TopkArgs& a) {
    a.in_dtype = DType::kF16;
    a.logits = shifted(kLogits, 2);
    a.row_stride = 201;
  });
  add("bf16 logits", [](TopkArgs& a) { a.in_dtype = DType::kBF16; });
  add("i32 indices 4 bytes off", [](TopkArgs& a) {
    a.idx_dtype = DType::kI32;
    a.idx_out = shifted(kIndices, 4);
  });
  add("i64 indices 8 bytes off", [](TopkArgs& a) { a.idx_out = shifted(kIndices, 8); });
  add("probs_out 4 bytes off", [](TopkArgs& a) { a.probs_out = shifted(kProbs, 4); });
  add("every flag", [](TopkArgs& a) { a.flags = kTopkLogProbs | kTopkRenorm; });
  add("k_per_row", [](TopkArgs& a) { a.k_per_row = kRowK; });
  add("k_per_row beside the logits (both read)",
      [](TopkArgs& a) { a.k_per_row = static_cast<const std::int32_t*>(shifted(kLogits, 16)); });
  add("probs_out in the gap between logits rows 0 and 1", [](TopkArgs& a) {
    a.k = 14;  // 4 rows x 14 floats: exactly the 224 bytes between the 800 of row 0 and row 1
    a.probs_out = reinterpret_cast<float*>(const_cast<void*>(shifted(kLogits, 200 * 4)));
  });
  add("small temperature", [](TopkArgs& a) { a.temperature = 1e-3f; });
  add("large temperature", [](TopkArgs& a) { a.temperature = 100.0f; });
  add("smallest normal temperature", [](TopkArgs& a) { a.temperature = std::numeric_limits<float>::min(); });
  return variants;
}

// Spoils `args` with `bad` and checks that the C++ call refuses it, naming the argument.
void check_refused(Runtime& rt, TopkArgs args, const BadCase& bad) {
  bad.spoil(args);
  CAPTURE(bad.what);
  const auto result = outcome([&] { rt.softmax_topk(args); });
  const Status status = result.first;
  const std::string message = result.second;
  CAPTURE(message);
  CHECK(status == Status::kErrorInvalidArgument);
  CHECK(names_argument(message, bad.names));
}

}  // namespace

TEST_CASE("softmax_topk (C++) rejects bad arguments, naming them") {
  Runtime rt;
  for (const BadCase& bad : bad_cases()) check_refused(rt, valid_args(), bad);
}

TEST_CASE("kjit_softmax_topk (C) rejects bad arguments, naming them in kjit_last_error") {
  CRuntime c;
  for (const BadCase& bad : bad_cases()) {
    TopkArgs args = valid_args();
    bad.spoil(args);
    CAPTURE(bad.what);
    const kjit_status status = call_c(c.rt, args);
    const std::string message = kjit_last_error();
    CAPTURE(message);
    CHECK(status == KJIT_ERROR_INVALID_ARGUMENT);
    CHECK(names_argument(message, bad.names));
  }
}

TEST_CASE("the word match used above is strict") {
  CHECK(names_argument("k must be in [1, 4096]", "k"));
  CHECK(names_argument("softmax_topk: k (0) must be >= 1", "k"));
  CHECK(names_argument("bad `k`", "k"));
  CHECK_FALSE(names_argument("softmax_topk: cols must be >= 1", "k"));
  CHECK_FALSE(names_argument("k_per_row is misaligned", "k"));
  CHECK_FALSE(names_argument("row_stride below cols", "rows"));
}

TEST_CASE("rows == 0 is a no-op that needs no driver") {
  Runtime rt;
  TopkArgs empty = valid_args();
  empty.rows = 0;
  CHECK_NOTHROW(rt.softmax_topk(empty));
  empty.k_per_row = kRowK;
  empty.flags = kTopkLogProbs | kTopkRenorm;
  empty.idx_dtype = DType::kI32;
  CHECK_NOTHROW(rt.softmax_topk(empty));

  CRuntime c;
  const kjit_status status = call_c(c.rt, empty);
  CAPTURE(std::string(kjit_last_error()));
  CHECK(status == KJIT_SUCCESS);
}

TEST_CASE("rows == 0 still rejects arguments that are wrong whatever the row count") {
  // As the row-wise ops do: a bad k, width or dtype is a caller bug even in an empty batch.
  Runtime rt;
  const std::vector<BadCase> cases = {
      {"k = 0", "k", [](TopkArgs& a) { a.k = 0; }},
      {"k above cols", "k", [](TopkArgs& a) { a.k = 201; }},
      {"zero cols", "cols", [](TopkArgs& a) { a.cols = 0; a.k = 1; }},
      {"i32 logits", "in_dtype", [](TopkArgs& a) { a.in_dtype = DType::kI32; }},
      {"f32 indices", "idx_dtype", [](TopkArgs& a) { a.idx_dtype = DType::kF32; }},
      {"NaN temperature", "temperature", [](TopkArgs& a) { a.temperature = std::nanf(""); }},
  };
  TopkArgs empty = valid_args();
  empty.rows = 0;
  for (const BadCase& bad : cases) check_refused(rt, empty, bad);
}

TEST_CASE("valid arguments get past validation") {
  for (const auto& variant : valid_variants()) {
    CAPTURE(variant.first);
    CHECK_NOTHROW(validate_topk(variant.second));
  }
  // Through the APIs each call gets past validation and stops at the driver, which ctest hides
  // from this suite (a real one would run a kernel on the fake pointers).
  if (driver_available()) return;
  Runtime rt;
  CRuntime c;
  for (const auto& variant : valid_variants()) {
    const TopkArgs& args = variant.second;
    CAPTURE(variant.first);
    const auto result = outcome([&] { rt.softmax_topk(args); });
    const Status status = result.first;
    const std::string message = result.second;
    CAPTURE(message);
    CHECK(status == Status::kErrorNoDriver);
    CHECK(call_c(c.rt, args) == KJIT_ERROR_NO_DRIVER);
  }
}

TEST_CASE("kjit_softmax_topk rejects a null runtime") {
  const TopkArgs args = valid_args();
  CHECK(call_c(nullptr, args) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(names_argument(kjit_last_error(), "rt"));
}

TEST_CASE("a call's class plans for its K bucket's and rows bucket's tops") {
  TopkProblem problem;
  problem.cols = 32000;
  problem.rows = 5;
  problem.k = 40;
  problem.max_pack = 4;
  TopkProblem planned = planned_topk(problem);
  CHECK(planned.k == 64);
  CHECK(planned.rows == 8);
  CHECK(planned.cols == problem.cols);
  CHECK(key_of(planned) == key_of(problem));  // the plan stays in the call's class
  problem.k = 1;
  CHECK(planned_topk(problem).k == 32);  // the smallest bucket
  problem.cols = 40;  // fewer columns than the bucket: the plan keeps k <= cols
  problem.k = 33;
  planned = planned_topk(problem);
  CHECK(planned.k == 40);
  CHECK(key_of(planned) == key_of(problem));
  problem.rows = 1;
  CHECK(planned_topk(problem).rows == 1);
}

TEST_CASE("a call split by rows advances every pointer by whole rows") {
  TopkArgs args = valid_args();
  args.rows = 10;
  args.in_dtype = DType::kBF16;
  args.idx_dtype = DType::kI32;
  args.k_per_row = kRowK;
  const TopkArgs part = topk_rows(args, 3, 4);
  CHECK(part.rows == 4);
  CHECK(static_cast<const char*>(part.logits) - static_cast<const char*>(args.logits) ==
        3 * args.row_stride * 2);
  CHECK(part.probs_out - args.probs_out == 3 * args.k);
  CHECK(static_cast<char*>(part.idx_out) - static_cast<char*>(args.idx_out) == 3 * args.k * 4);
  CHECK(part.k_per_row - args.k_per_row == 3);
  CHECK(part.cols == args.cols);
  CHECK(part.k == args.k);
  CHECK(part.row_stride == args.row_stride);
  args.k_per_row = nullptr;
  args.idx_dtype = DType::kI64;
  CHECK(topk_rows(args, 5, 1).k_per_row == nullptr);  // no per-row k stays none
  CHECK(static_cast<char*>(topk_rows(args, 5, 1).idx_out) - static_cast<char*>(args.idx_out) ==
        5 * args.k * 8);
}
