// SPDX-License-Identifier: Apache-2.0
// The heuristic's pick is the fastest of the candidates in the recorded measurements: the tuning
// runs of the benchmark shapes on an H100 (data/h100_tuning.json) give each shape's candidates
// and their times, and on the nominal sm_90 device with the H100's SM count the pick must be
// one whose time is within the tuner's tie fraction of the fastest. A change to the heuristic
// that gives up measured speed fails here.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kjit/kjit.hpp"
#include "runtime/ops/rowwise_heuristics.h"
#include "support/heuristic_sweep.h"

using namespace kjit;

namespace {

nlohmann::json recorded() {
  std::ifstream file(KJIT_TEST_DATA_DIR "/h100_tuning.json");
  REQUIRE_MESSAGE(file.good(), "cannot read " KJIT_TEST_DATA_DIR "/h100_tuning.json");
  std::stringstream text;
  text << file.rdbuf();
  return nlohmann::json::parse(text.str());
}

}  // namespace

TEST_CASE("the pick is the fastest of the candidates in the recorded H100 measurements") {
  const nlohmann::json data = recorded();
  DeviceProps device = nominal_device(data.at("arch").get<int>());
  device.sm_count = data.at("sm_count").get<int>();
  const double tie = data.at("tie_fraction").get<double>();
  const nlohmann::json& shapes = data.at("shapes");
  REQUIRE(shapes.size() >= 12);  // the benchmark's softmax shapes, fp32 and bf16
  for (const nlohmann::json& shape : shapes) {
    const DType dtype = parse_dtype(shape.at("dtype").get<std::string>());
    const std::int64_t rows = shape.at("rows").get<std::int64_t>();
    const RowwiseProblem p{parse_row_op(shape.at("op").get<std::string>()), dtype, dtype,
                           bucket_rows(rows_bucket(rows)), shape.at("cols").get<std::int64_t>(),
                           16 / size_of(dtype)};
    const KernelConfig pick = choose_rowwise_config(p, device);
    double fastest = 0.0, picked = 0.0;
    std::string fastest_name;
    for (const nlohmann::json& timing : shape.at("timings")) {
      const KernelConfig config = KernelConfig::from_json(timing.at("config").dump());
      const double us = timing.at("us").get<double>();
      if (fastest_name.empty() || us < fastest) fastest = us, fastest_name = config.to_string();
      if (config == pick) picked = us;
    }
    INFO(test::describe(p, device) << ": pick " << pick.to_string() << ", fastest " << fastest_name << " at "
                                   << fastest << " us");
    CHECK_MESSAGE(picked > 0.0, "the pick was not measured");
    if (picked > 0.0) CHECK_MESSAGE(picked <= fastest * (1.0 + tie), "the pick took " << picked << " us");
  }
}
