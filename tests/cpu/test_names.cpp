// SPDX-License-Identifier: Apache-2.0
// The stable names of kjit's enums: they appear in JSON configs, cache keys, logs and the CLI,
// so every value must print and parse back, and unknown text must be refused.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "kjit/kjit.h"
#include "kjit/kjit.hpp"

using namespace kjit;

TEST_CASE("algorithm names round trip") {
  const Algorithm all[] = {Algorithm::kAuto,        Algorithm::kWarp,    Algorithm::kBlockRegs,
                           Algorithm::kBlockSmem,   Algorithm::kBlockOnline,
                           Algorithm::kCluster,     Algorithm::kClusterSmem,
                           Algorithm::kStream,      Algorithm::kRing,    Algorithm::kBlockSplit,
                           Algorithm::kFlatTile};
  std::set<std::string> seen;
  for (Algorithm algorithm : all) {
    const std::string name = to_string(algorithm);
    CHECK(seen.insert(name).second);
    CHECK(parse_algorithm(name) == algorithm);
  }
  CHECK(std::string(to_string(Algorithm::kBlockOnline)) == "block_online");
  CHECK(std::string(to_string(Algorithm::kWarp)) == "warp");
  CHECK(std::string(to_string(Algorithm::kRing)) == "ring");
  CHECK(std::string(to_string(Algorithm::kBlockSplit)) == "block_split");
  CHECK(std::string(to_string(Algorithm::kFlatTile)) == "flat_tile");
}

TEST_CASE("top-K algorithm names round trip") {
  std::set<std::string> seen;
  for (TopkAlgorithm algorithm :
       {TopkAlgorithm::kAuto, TopkAlgorithm::kStream, TopkAlgorithm::kResident}) {
    const std::string name = to_string(algorithm);
    CHECK(seen.insert(name).second);
    CHECK(parse_topk_algorithm(name) == algorithm);
  }
  CHECK(std::string(to_string(TopkAlgorithm::kResident)) == "resident");
  CHECK_THROWS_AS(parse_topk_algorithm("warp"), Error);
}

TEST_CASE("dtype names, sizes and values") {
  CHECK(parse_dtype("f32") == DType::kF32);
  CHECK(parse_dtype("f16") == DType::kF16);
  CHECK(parse_dtype("bf16") == DType::kBF16);
  CHECK(size_of(DType::kF32) == 4);
  CHECK(size_of(DType::kF16) == 2);
  CHECK(size_of(DType::kBF16) == 2);
  CHECK(size_of(DType::kI64) == 8);
  // The C enum and the C++ enum are one ABI.
  CHECK(static_cast<int>(DType::kF32) == KJIT_F32);
  CHECK(static_cast<int>(DType::kF16) == KJIT_F16);
  CHECK(static_cast<int>(DType::kBF16) == KJIT_BF16);
  CHECK(static_cast<int>(DType::kI32) == KJIT_I32);
  CHECK(static_cast<int>(DType::kI64) == KJIT_I64);
}

TEST_CASE("row op names round trip") {
  for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale})
    CHECK(parse_row_op(to_string(op)) == op);
  CHECK(std::string(to_string(RowOp::kLogSoftmax)) == "log_softmax");
}

TEST_CASE("unknown names are invalid arguments") {
  auto status_of = [](auto&& parse) {
    try {
      parse();
    } catch (const Error& error) {
      return error.status();
    }
    return Status::kSuccess;
  };
  CHECK(status_of([] { parse_algorithm("warp32"); }) == Status::kErrorInvalidArgument);
  CHECK(status_of([] { parse_algorithm(""); }) == Status::kErrorInvalidArgument);
  CHECK(status_of([] { parse_dtype("float"); }) == Status::kErrorInvalidArgument);
  CHECK(status_of([] { parse_row_op("softmax "); }) == Status::kErrorInvalidArgument);
}

TEST_CASE("status names are distinct and match the C codes") {
  std::set<std::string> seen;
  for (int code = 0; code <= KJIT_ERROR_INTERNAL; ++code) {
    const std::string name = to_string(static_cast<Status>(code));
    CHECK_MESSAGE(seen.insert(name).second, "duplicate status name " << name);
    CHECK(name != "unknown");
  }
  CHECK(std::string(to_string(Status::kErrorInvalidArgument)) == "invalid_argument");
  CHECK(static_cast<int>(Status::kErrorNoDriver) == KJIT_ERROR_NO_DRIVER);
  CHECK(static_cast<int>(Status::kErrorInvalidConfig) == KJIT_ERROR_INVALID_CONFIG);
}

TEST_CASE("Error carries status, message and detail") {
  const Error error(Status::kErrorCompile, "compile failed", "line 3: oops");
  CHECK(error.status() == Status::kErrorCompile);
  CHECK(error.detail() == "line 3: oops");
  const std::string what = error.what();
  CHECK(what.find("compile failed") != std::string::npos);
  CHECK(what.find("line 3: oops") != std::string::npos);
}
