// SPDX-License-Identifier: Apache-2.0
// How the ring kernel (ring.cuh) cuts a block's row slice into chunks and how large its ring is:
// the kernel's RingLayout and the host's validity check and launch (ring_shape) both read it from
// here; and where a peeled slice lies on its grid (SliceGrid).
#pragma once

#include "host_device.cuh"
#include "row_layout.cuh"
#include "row_peel.cuh"

namespace kjit {

/// Chunks are at most this large: the ring holds six or seven of them and more rows ahead.
constexpr int kRingMaxChunkBytes = 32 * 1024;
/// The most chunks a ring holds: the consumers index their barriers at run time.
constexpr int kRingMostChunks = 12;
/// The producer warp beside the consumer threads.
constexpr int kRingProducerThreads = 32;
/// 16-bit log-softmax in two consumer groups holds the loaded words rather than exps, and
/// stores by bulk copies only from slices this large on (below, stores from registers win).
constexpr int kRingLogSoftmaxBulkSliceBytes = 28 * 1024;

/// A ring config's layout of one block's row slice.
struct RingShape {
  long long slice_cols = 0;         ///< the block's columns (16-byte multiples)
  long long slice_bytes = 0;
  long long chunks = 0;             ///< chunks a row slice takes
  /// As small as the slice allows in whole packs for every consumer, so that the ring holds
  /// more of a narrow slice's rows.
  long long chunk_bytes = 0;
  long long chunk_packs = 0;        ///< 16-byte packs of a chunk each consumer thread holds
  long long chunk_cols = 0;
  long long values_per_thread = 0;  ///< values a consumer thread holds: its share of the slice
  /// Outputs go back into their chunk and out by bulk copies, so their threads leave a row as
  /// soon as it is in shared memory (4-byte types, and two consumer groups but for 16-bit
  /// log-softmax over slices under kRingLogSoftmaxBulkSliceBytes); the others are stored from
  /// registers and the chunk freed as soon as it is read.
  bool bulk_stores = false;
  /// The ring, the launch's dynamic shared memory: one block an SM, two row slices or more ahead
  /// of the consumers; a chunk of bulk-stored outputs stays taken until its store has read it,
  /// so those rings take a chunk more.
  long long ring_bytes = 0;
  long long ring_chunks = 0;        ///< chunks the ring holds, at most kRingMostChunks
  /// 16-bit values held as their loaded words, two a register: log-softmax's always (its outputs
  /// take no exponential), softmax's past what floats may hold; reduce_scale's floats.
  bool words = false;
};

/// The layout of a ring of `threads` consumer threads in groups of `group_threads` (one group,
/// or two taking turns where group_threads < threads) over rows of `cols` split over `blocks`.
/// Without a group (group_threads <= 0) or a slice, only the slice and the ring are set. Peeled
/// (row_peel.cuh), a slice lies on its row's 16-byte grid and its chunks cover its span at the
/// worst shift: a 16-byte unit more.
KJIT_HOST_DEVICE constexpr RingShape ring_shape(long long cols, int elem_bytes, int op, int blocks, int threads,
                                                int group_threads, bool peel = false) {
  RingShape shape;
  shape.slice_cols = bulk_slice_cols(cols, elem_bytes, blocks);
  shape.slice_bytes = shape.slice_cols * elem_bytes;
  const long long span_bytes = shape.slice_bytes + (peel ? kBulkUnitBytes : 0);
  const bool two_groups = group_threads > 0 && group_threads < threads;
  shape.bulk_stores = elem_bytes == 4 ||
                      (two_groups && (op != kOpLogSoftmax || shape.slice_bytes >= kRingLogSoftmaxBulkSliceBytes));
  shape.ring_bytes = (shape.bulk_stores ? 7 : 6) * kRingMaxChunkBytes;
  shape.chunks = (span_bytes + kRingMaxChunkBytes - 1) / kRingMaxChunkBytes;
  if (group_threads <= 0 || shape.chunks == 0) return shape;
  const long long unit = static_cast<long long>(kBulkUnitBytes) * group_threads;
  shape.chunk_bytes = ((span_bytes + shape.chunks - 1) / shape.chunks + unit - 1) / unit * unit;
  shape.chunk_packs = shape.chunk_bytes / unit;
  shape.chunk_cols = shape.chunk_bytes / elem_bytes;
  shape.values_per_thread = shape.chunks * shape.chunk_packs * (kBulkUnitBytes / elem_bytes);
  shape.ring_chunks =
      shape.ring_bytes / shape.chunk_bytes < kRingMostChunks ? shape.ring_bytes / shape.chunk_bytes : kRingMostChunks;
  shape.words = elem_bytes == 2 && (shape.values_per_thread > kMaxHeldRegisters || op == kOpLogSoftmax);
  return shape;
}

/// The most values a consumer thread may hold: kMaxHeldRegisters registers of them.
KJIT_HOST_DEVICE constexpr long long ring_max_values(bool words) {
  return words ? 2 * kMaxHeldRegisters : kMaxHeldRegisters;
}

/// Where a row's slice lies on its grid: columns count from the grid vector the slice's start falls
/// in (`lead` elements before it, 0 unless peeled), and the whole vectors the bulk copies move are
/// [body_begin, body_end) of them.
struct SliceGrid {
  int lead;
  int body_begin;
  int body_end;
};

template <bool Peel, int Pack, typename T>
KJIT_HOST_DEVICE inline SliceGrid slice_grid(const T* slice, int slice_cols) {
  const int lead = Peel ? row_lead(reinterpret_cast<unsigned long long>(slice), sizeof(T), Pack) : 0;
  return {lead, lead > 0 ? Pack : 0, (lead + slice_cols) / Pack * Pack};
}

}  // namespace kjit
