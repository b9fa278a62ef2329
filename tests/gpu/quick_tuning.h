// SPDX-License-Identifier: Apache-2.0
// Tuning options for tests: enough samples to rank candidates, few enough to keep suites short.
#pragma once

#include "kjit/tuning.hpp"

#include "kjit/config.hpp"

namespace kjit::test {

template <typename Config = KernelConfig>
TuneOptions<Config> quick_tune_options() {
  TuneOptions<Config> options;
  options.timing.samples = 7;
  options.timing.warmup_samples = 1;
  return options;
}

}  // namespace kjit::test
