// SPDX-License-Identifier: Apache-2.0
// GPU timing with CUDA events: warm-up, then many launches captured in one CUDA graph and
// replayed, so the time is the kernels' and not the launch overhead's; median with p20/p80.
#pragma once

#include <functional>

#include "runtime/driver/cuda_api.h"

namespace kjit {

/// Per-launch GPU time in microseconds.
struct Timing {
  double median_us = 0.0;
  double p20_us = 0.0;
  double p80_us = 0.0;
  int samples = 0;
};

struct TimingOptions {
  int launches_per_sample = 20;  ///< launches captured into the graph; one replay is one sample
  int warmup_samples = 3;
  int samples = 25;
  bool use_graph = true;         ///< false: time direct launches (for work that cannot be captured)
};

/// `enqueue(stream, i)` puts launch number i on `stream` (i lets the caller rotate buffers so
/// that consecutive launches do not hit in L2). The stream must not be the legacy default
/// stream when use_graph is set (capture needs a real stream).
Timing time_launches(const std::function<void(CUstream, int)>& enqueue, CUstream stream,
                     const TimingOptions& options = {});

/// Copy bandwidth of the device in bytes/s (read + write), measured with device-to-device
/// copies of `bytes` (use more than the L2 size).
double measure_copy_bandwidth(CUstream stream, std::size_t bytes);

}  // namespace kjit
