// SPDX-License-Identifier: Apache-2.0
// Host-side costs: the first call of a shape whose cubin is already on disk (a new process's
// cold start), and the per-call cost of the hot path beside a bare launch of the same kernel.
#pragma once

#include <cstdint>
#include <string>

namespace kjit::bench {

struct HostOverhead {
  double first_call_ms = 0.0;     ///< Runtime made + first call done, context already current
  double kjit_call_us = 0.0;      ///< host time per kjit_softmax call, shape seen before
  double bare_launch_us = 0.0;    ///< host time per bare launch of the same kernel
  /// Both launches go out as programmatic dependents (cuLaunchKernelEx with the attribute), as
  /// kjit's do on sm_90+ unless KJIT_PDL=0; otherwise both are plain cuLaunchKernel calls.
  bool dependent_launch = false;
  std::string config;  ///< the heuristic's pick for the shape, which both launch
};

/// Measures fp32 softmax over rows x cols on the current GPU: the two per-call costs are medians
/// of batches of 100 calls that alternate between kjit and the bare launch (launches never wait
/// on the GPU: the queue is drained between batches). The bare launch passes no row-claim
/// counter, so a ring kernel's host cost beside it includes taking one.
HostOverhead measure_host_overhead(std::int64_t rows, std::int64_t cols);

}  // namespace kjit::bench
