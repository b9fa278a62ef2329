// SPDX-License-Identifier: Apache-2.0
// Recorded tuning measurements (tests/cpu/data/*.json): runs of the tuner on a GPU, each shape's
// candidates with their times, and how a pick compares with the fastest of them.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/driver/nominal_device.h"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"

namespace kjit::test {

/// The data file `name` from the suites' data folder, parsed; fails the test if it is missing.
inline nlohmann::json read_recorded(const std::string& name) {
  const std::string path = std::string(KJIT_TEST_DATA_DIR) + "/" + name;
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "cannot read " << path);
  std::stringstream text;
  text << file.rdbuf();
  return nlohmann::json::parse(text.str());
}

/// The nominal device of the recording's arch with the recorded GPU's SM count.
inline DeviceProps recorded_device(const nlohmann::json& data) {
  DeviceProps device = nominal_device(data.at("arch").get<int>());
  device.sm_count = data.at("sm_count").get<int>();
  return device;
}

/// How the pick's recorded time compares with the fastest recorded candidate's.
struct PickTiming {
  double fastest_us = 0.0;
  std::string fastest;   ///< the fastest candidate's JSON
  double pick_us = 0.0;  ///< 0 when the pick is not among the recorded candidates
};

/// Finds the pick (whose JSON text `is_pick` recognizes) among a shape's recorded timings.
template <typename IsPick>
PickTiming time_pick(const nlohmann::json& shape, IsPick is_pick) {
  PickTiming t;
  for (const nlohmann::json& timing : shape.at("timings")) {
    const double us = timing.at("us").get<double>();
    if (t.fastest.empty() || us < t.fastest_us) t.fastest_us = us, t.fastest = timing.at("config").dump();
    if (is_pick(timing.at("config").dump())) t.pick_us = us;
  }
  return t;
}

}  // namespace kjit::test
