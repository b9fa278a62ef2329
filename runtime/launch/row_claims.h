// SPDX-License-Identifier: Apache-2.0
// The counters from which the ring kernel's clusters claim rows one at a time
// (RowParams::row_claims). A counter must never serve two launches that may run at once: the
// kernel expects it at zero when it starts and sets it back to zero as it finishes claiming.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/driver/handles.h"

namespace kjit {

/// Which counter each launch takes. Launches on one stream run in order, and the ring claims
/// rows only after the kernel before it is done, so each stream keeps a few counters and takes
/// them in turn (a few rather than one, so that a kernel between two rings that skips its own
/// wait on the grid before it does not make them share one). A launch captured into a graph
/// gets a counter of its own, for every replay of that graph: a graph exec replays one at a
/// time. When the counters run out, a launch gets none (-1) and its clusters take fixed rows.
class ClaimSlots {
 public:
  static constexpr int kPerStream = 4;

  explicit ClaimSlots(int capacity) : capacity_(capacity) {}

  /// A counter index for the next launch on the stream `stream_id`, or -1.
  int next(std::uint64_t stream_id);
  /// A counter index for a captured launch alone, or -1.
  int own();

 private:
  struct Turns {
    int first;
    int turn;
  };

  int capacity_;
  int used_ = 0;
  std::unordered_map<std::uint64_t, Turns> streams_;
};

/// One context's counters in device memory (two 32-bit words each), allocated and zeroed by the
/// first launch that is not being captured.
class RowClaimCounters {
 public:
  static constexpr int kCapacity = 1 << 18;  // 2 MB

  /// The counter for one ring launch on `stream`, or null (fixed rows): counters not allocated
  /// yet and the stream capturing, none left, or the driver cannot say whether it captures.
  unsigned* for_launch(CUstream stream);

 private:
  bool allocate_once();
  unsigned* counter(int slot);

  std::mutex mutex_;
  DeviceMemory memory_;
  bool failed_ = false;
  bool warned_full_ = false;
  ClaimSlots slots_{kCapacity};
};

}  // namespace kjit
