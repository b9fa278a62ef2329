// SPDX-License-Identifier: Apache-2.0
// JSON from outside the process is refused when nested too deep, before any value is built
// (printing or copying a value 100,000 levels deep would overflow the stack).
#include <doctest/doctest.h>

#include <string>

#include "runtime/bounded_json.h"

using namespace kjit;

namespace {

std::string nested(std::size_t depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

}  // namespace

TEST_CASE("nesting up to the limit parses; one level more is named") {
  std::string problem;
  auto ok = parse_json_bounded(nested(kMaxJsonDepth), problem);
  REQUIRE(ok);
  CHECK(ok->dump().size() == 2 * kMaxJsonDepth + 1);
  CHECK_FALSE(parse_json_bounded(nested(kMaxJsonDepth + 1), problem));
  CHECK(problem == "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
}

TEST_CASE("a value nested 100,000 deep is refused without a crash") {
  std::string problem;
  CHECK_FALSE(parse_json_bounded(nested(100000), problem));
  CHECK(problem.find("nested deeper") != std::string::npos);
  const std::string objects = [] {
    std::string text;
    for (int i = 0; i < 100000; ++i) text += "{\"a\":";
    return text + "0" + std::string(100000, '}');
  }();
  CHECK_FALSE(parse_ordered_json_bounded(objects, problem));
}

TEST_CASE("syntax errors keep the parser's message; key order is kept") {
  std::string problem;
  CHECK_FALSE(parse_json_bounded("{\"a\": }", problem));
  CHECK(problem.find("parse error") != std::string::npos);
  CHECK_FALSE(parse_json_bounded("", problem));
  CHECK_FALSE(parse_json_bounded("[1] trailing", problem));
  auto ordered = parse_ordered_json_bounded(R"({"z": 1, "a": 2})", problem);
  REQUIRE(ordered);
  CHECK(ordered->begin().key() == "z");
}
