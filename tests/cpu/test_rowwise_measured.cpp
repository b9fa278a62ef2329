// SPDX-License-Identifier: Apache-2.0
// The heuristic's pick is the fastest of the candidates in the recorded measurements: tuning
// runs of the benchmark shapes on an H100 (data/h100_rowwise_tuning.json) give each shape's
// candidates and their times, and on the nominal sm_90 device with the H100's SM count the pick
// must be within the tuner's tie fraction of the fastest. A change to the heuristic that gives
// up measured speed fails here.
#include <doctest/doctest.h>

#include <string>

#include "kjit/kjit.hpp"
#include "recorded_tuning.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "support/heuristic_sweep.h"

using namespace kjit;

TEST_CASE("the pick is the fastest of the candidates in the recorded H100 measurements") {
  const nlohmann::json data = test::read_recorded("h100_rowwise_tuning.json");
  const DeviceProps device = test::recorded_device(data);
  const double tie = data.at("tie_fraction").get<double>();
  std::size_t shapes = 0;
  for (const nlohmann::json& run : data.at("runs"))
    for (const nlohmann::json& shape : run.at("shapes")) {
      ++shapes;
      const DType in = parse_dtype(shape.at("dtype").get<std::string>());
      const std::int64_t rows = shape.at("rows").get<std::int64_t>();
      const RowwiseProblem p{parse_row_op(shape.at("op").get<std::string>()), in, in,
                             bucket_rows(rows_bucket(rows)), shape.at("cols").get<std::int64_t>(),
                             shape.at("max_pack").get<int>()};
      const KernelConfig pick = choose_rowwise_config(p, device);
      const test::PickTiming t = test::time_pick(
          shape, [&](const std::string& json) { return KernelConfig::from_json(json) == pick; });
      INFO(run.at("source").get<std::string>());
      INFO(test::describe(p, device) << ": pick " << pick.to_string() << ", fastest " << t.fastest << " at "
                                     << t.fastest_us << " us");
      // Unrecorded candidates were more than recorded_within times the fastest.
      CHECK_MESSAGE(t.pick_us > 0.0, "the pick is not among the recorded candidates");
      if (t.pick_us > 0.0) CHECK_MESSAGE(t.pick_us <= t.fastest_us * (1.0 + tie), "the pick took " << t.pick_us << " us");
    }
  CHECK(shapes >= 3 * 12);  // three runs over the benchmark's 12 softmax shapes
}
