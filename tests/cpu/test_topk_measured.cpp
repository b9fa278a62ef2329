// SPDX-License-Identifier: Apache-2.0
// The softmax + top-K heuristic's pick against recorded measurements: tuning runs over the
// benchmark's grid on an H100 (data/h100_topk_tuning.json), each call's candidates and their
// times. The pick must be within the tuner's tie fraction of the fastest, but where the data
// marks a known miss; a known miss must still be one, so the mark goes once the heuristic
// catches up (or the data is measured again).
#include <doctest/doctest.h>

#include <string>

#include "runtime/ops/topk/topk_heuristics.h"
#include "kjit/kjit.hpp"
#include "recorded_tuning.h"
#include "runtime/ops/topk/topk_kernels.h"

using namespace kjit;

TEST_CASE("the top-K pick is the fastest of the recorded H100 candidates, but for the known misses") {
  const nlohmann::json data = test::read_recorded("h100_topk_tuning.json");
  const DeviceProps device = test::recorded_device(data);
  const double tie = data.at("tie_fraction").get<double>();
  std::size_t shapes = 0, misses = 0;
  for (const nlohmann::json& run : data.at("runs"))
    for (const nlohmann::json& shape : run.at("shapes")) {
      ++shapes;
      const TopkProblem p = planned_topk({parse_dtype(shape.at("dtype").get<std::string>()),
                                          parse_dtype(shape.at("index_dtype").get<std::string>()),
                                          shape.at("rows").get<std::int64_t>(), shape.at("cols").get<std::int64_t>(),
                                          shape.at("k").get<int>(), shape.at("max_pack").get<int>()});
      const TopkConfig pick = choose_topk_config(p, device);
      const test::PickTiming t =
          test::time_pick(shape, [&](const std::string& json) { return TopkConfig::from_json(json) == pick; });
      INFO(run.at("source").get<std::string>());
      INFO(std::string(to_string(p.in_dtype)) << " " << p.rows << "x" << p.cols << " k=" << p.k << ": pick " << pick.to_string()
                                 << " at " << t.pick_us << " us, fastest " << t.fastest << " at " << t.fastest_us
                                 << " us");
      CHECK_MESSAGE(t.pick_us > 0.0, "the pick is not among the recorded candidates");
      if (t.pick_us <= 0.0) continue;
      const bool within_tie = t.pick_us <= t.fastest_us * (1.0 + tie);
      if (shape.contains("known_miss")) {
        ++misses;
        CHECK_MESSAGE(!within_tie, "recorded as a known miss, now within the tie: drop its known_miss");
      } else {
        CHECK_MESSAGE(within_tie, "the pick is slower than the fastest by more than the tie");
      }
    }
  CHECK(shapes >= 60);
  MESSAGE(shapes << " recorded calls, " << misses << " known misses of the heuristic");
}
