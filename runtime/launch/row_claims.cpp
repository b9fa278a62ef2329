// SPDX-License-Identifier: Apache-2.0
#include "runtime/launch/row_claims.h"

#include "kernel_sources/row_params.cuh"
#include "kjit/error.hpp"
#include "runtime/log.h"

namespace kjit {

int ClaimSlots::next(std::uint64_t stream_id) {
  auto found = streams_.find(stream_id);
  if (found == streams_.end()) {
    if (capacity_ - used_ < kPerStream) return -1;
    found = streams_.emplace(stream_id, Turns{used_, 0}).first;
    used_ += kPerStream;
  }
  Turns& turns = found->second;
  const int slot = turns.first + turns.turn;
  turns.turn = (turns.turn + 1) % kPerStream;
  return slot;
}

int ClaimSlots::own() { return used_ < capacity_ ? used_++ : -1; }

unsigned* RowClaimCounters::for_launch(CUstream stream) {
  // Only calls that a capture allows: asking a capturing stream for more (its id, its capture's
  // id) invalidated the capture.
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cuda().cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS) return nullptr;
  const bool captured = status != CU_STREAM_CAPTURE_STATUS_NONE;
  if (captured && status != CU_STREAM_CAPTURE_STATUS_ACTIVE) return nullptr;
  unsigned long long stream_id = 0;
  if (!captured && cuda().cuStreamGetId(stream, &stream_id) != CUDA_SUCCESS) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!memory_ && (captured || !allocate_once())) return nullptr;
  return counter(captured ? slots_.own() : slots_.next(stream_id));
}

unsigned* RowClaimCounters::counter(int slot) {
  if (slot >= 0) return reinterpret_cast<unsigned*>(memory_.get()) + kRowClaimWords * slot;
  if (!warned_full_)
    log().info("all {} row-claim counters taken: ring launches on new streams and new captures take fixed rows",
               kCapacity);
  warned_full_ = true;
  return nullptr;
}

bool RowClaimCounters::allocate_once() {
  if (failed_) return false;
  try {
    DeviceMemory memory = allocate_device(std::size_t{kCapacity} * kRowClaimWords * sizeof(unsigned));
    // Zero before any stream can use them: on a stream of our own, waited for.
    Stream zeroing = create_stream();
    KJIT_CU(cuMemsetD32Async, memory.get(), 0u, std::size_t{kCapacity} * kRowClaimWords, zeroing.get());
    KJIT_CU(cuStreamSynchronize, zeroing.get());
    memory_ = std::move(memory);
    return true;
  } catch (const Error& error) {
    log().warn("no device memory for row-claim counters ({}): ring launches take fixed rows", error.what());
    failed_ = true;
    return false;
  }
}

}  // namespace kjit
