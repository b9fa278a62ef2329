// SPDX-License-Identifier: Apache-2.0
// GPU timing with CUDA events: warm-up, then many launches captured in one CUDA graph and
// replayed, so the time is the kernels' and not the launch overhead's; median with p20/p80.
// L2 policy: callers rotate buffers past the L2 (so launches read HBM), and every timing starts
// with L2's persisting lines reset to normal, so lines an earlier kernel marked "evict last"
// cannot change the result (docs/experiments/l2-state.md).
#pragma once

#include <functional>

#include "kjit/tuning.hpp"
#include "runtime/driver/cuda_api.h"

namespace kjit {

/// `enqueue(stream, i)` puts launch number i on `stream` (i lets the caller rotate buffers so
/// that consecutive launches do not hit in L2). The stream must not be the legacy default
/// stream when use_graph is set (capture needs a real stream).
Timing time_launches(const std::function<void(CUstream, int)>& enqueue, CUstream stream,
                     const TimingOptions& options = {});

/// Copy bandwidth of the device in bytes/s (read + write), measured with device-to-device
/// copies of `bytes` (use more than the L2 size).
double measure_copy_bandwidth(CUstream stream, std::size_t bytes);

}  // namespace kjit
