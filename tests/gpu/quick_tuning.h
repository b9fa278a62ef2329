// SPDX-License-Identifier: Apache-2.0
// Tuning options for tests: enough samples to rank candidates, few enough to keep suites short.
#pragma once

#include "autotune/tuner.h"

namespace kjit::test {

inline TuneOptions quick_tune_options() {
  TuneOptions options;
  options.timing.samples = 7;
  options.timing.warmup_samples = 1;
  return options;
}

}  // namespace kjit::test
