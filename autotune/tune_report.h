// SPDX-License-Identifier: Apache-2.0
// Tuning logs as JSON (what a tuning record keeps), for any op family's config type.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/error.hpp"
#include "kjit/tuning.hpp"
#include "runtime/bounded_json.h"

namespace kjit {

/// "softmax in=bf16 out=bf16 rows=64 cols=262144" from a family's describe() fields.
std::string describe_problem(const nlohmann::ordered_json& fields);

template <typename Config>
std::string TuneReport<Config>::to_json() const {
  nlohmann::ordered_json log = nlohmann::ordered_json::parse(problem_json);
  log["device"] = device;
  log["class"] = class_key;
  log["heuristic"] = nlohmann::json::parse(heuristic.to_json());
  log["winner"] = nlohmann::json::parse(winner.to_json());
  log["seconds"] = seconds;
  log["phase_seconds"] = {{"setup", phases.setup},
                          {"compile", phases.compile},
                          {"check", phases.check},
                          {"timing", phases.timing}};
  log["candidates"] = nlohmann::json::array();
  for (const auto& c : candidates)
    log["candidates"].push_back({{"config", nlohmann::json::parse(c.config.to_json())},
                                 {"status", c.status},
                                 {"reused", c.reused},
                                 {"median_us", c.timing.median_us},
                                 {"p20_us", c.timing.p20_us},
                                 {"p80_us", c.timing.p80_us}});
  return log.dump(2);
}

template <typename Config>
std::vector<TuneCandidate<Config>> TuneReport<Config>::candidates_from_json(const std::string& log) {
  try {
    std::vector<TuneCandidate<Config>> results;
    // The log comes from a cache entry: bounded, since printing a config recurses per level.
    std::string problem;
    const std::optional<nlohmann::json> parsed = parse_json_bounded(log, problem);
    if (!parsed) throw Error(Status::kErrorInvalidArgument, "tuning log is malformed: " + problem);
    for (const auto& entry : parsed->at("candidates")) {
      TuneCandidate<Config> c;
      c.config = Config::from_json(entry.at("config").dump());
      c.status = entry.at("status").get<std::string>();
      c.timing.median_us = entry.at("median_us").get<double>();
      c.timing.p20_us = entry.at("p20_us").get<double>();
      c.timing.p80_us = entry.at("p80_us").get<double>();
      results.push_back(c);
    }
    return results;
  } catch (const nlohmann::json::exception& e) {
    throw Error(Status::kErrorInvalidArgument, std::string("tuning log is malformed: ") + e.what());
  }
}

}  // namespace kjit
