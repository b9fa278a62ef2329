// SPDX-License-Identifier: Apache-2.0
// The top-K stream algorithm: fused softmax + top-K in one pass over the logits. Softmax is
// monotonic, so the k most probable entries are the k largest logits: each block streams its
// slice of a row once, keeping the online (max, sum) and admitting into a shared-memory buffer
// only the elements above a threshold that rises as the buffer fills (from k bucket 512,
// guessed from a sample first). Cluster > 1 (sm_90) splits a row over a thread-block cluster,
// which merges through distributed shared memory, without global scratch memory. Only the k
// winners become probabilities; how they are placed is topk_stream_finish.cuh.
#pragma once

#include "grid_dependency.cuh"
#include "pack.cuh"
#include "reduce.cuh"
#include "topk_block_state.cuh"
#include "topk_guess.cuh"
#include "topk_output.cuh"
#include "topk_params.cuh"
#include "topk_select.cuh"
#include "topk_shape.cuh"
#include "topk_stats.cuh"
#include "topk_stream_finish.cuh"
#include "topk_tiles.cuh"

namespace kjit {

/// Appends to the buffer this tile's elements whose value is at least the threshold's: every
/// key above the threshold, and perhaps a few equal-valued ones below it, which are real
/// elements of the slice and harmless. A thread whose largest value is below the threshold's
/// has nothing to offer: once the threshold is up, that is nearly every thread, and the tile
/// costs one compare and one vote. A few passing elements take one atomic each; many (no
/// threshold yet, a row of equal values, or a large k bucket) one atomic a warp, which pays at
/// large k only. True when the buffer may not hold another whole tile.
template <int Room, bool AdmitsMany, typename Tiles, int Pack, int Unroll>
__device__ __forceinline__ bool offer_tile(const float (&tile)[Unroll][Pack], float thread_max,
                                           const Tiles& slice, int offset, TopkKey* keys,
                                           TopkBlockState& state) {
  // NaN while the threshold is 0, so that everything passes; a NaN thread_max passes too.
  const float floor = key_value(state.threshold);
  const bool maybe = !(thread_max < floor);
  // A vote rather than a per-thread test, so that the compiler branches around the rare paths
  // instead of running them under a predicate.
  const unsigned voters = __ballot_sync(0xffffffffu, maybe);
  if (voters == 0) return false;
  const auto col_of = [&](int u, int i) { return slice.col(offset, u, i); };
  bool crowded = false;
  if (!AdmitsMany && voters != 0xffffffffu) {
    // A few elements: one atomic each.
    if (maybe) {
#pragma unroll
      for (int u = 0; u < Unroll; ++u)
#pragma unroll
        for (int i = 0; i < Pack; ++i)
          if (!(tile[u][i] < floor) && slice.holds(col_of(u, i))) {
            const int slot = atomicAdd(&state.count, 1);
            keys[slot] = make_key(tile[u][i], col_of(u, i));
            crowded |= slot >= Room;
          }
    }
    return crowded;
  }
  // Many elements: one atomic per warp.
  int mine = 0;
#pragma unroll
  for (int u = 0; u < Unroll; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) mine += !(tile[u][i] < floor) && slice.holds(col_of(u, i)) ? 1 : 0;
  const unsigned lane = threadIdx.x % 32;
  int through_me = mine;  // inclusive prefix over the warp's lanes
#pragma unroll
  for (int step = 1; step < 32; step *= 2) {
    const int below = __shfl_up_sync(0xffffffffu, through_me, step);
    if (lane >= static_cast<unsigned>(step)) through_me += below;
  }
  const int warp_total = __shfl_sync(0xffffffffu, through_me, 31);
  if (warp_total == 0) return false;
  int first = 0;
  if (lane == 31) first = atomicAdd(&state.count, warp_total);
  first = __shfl_sync(0xffffffffu, first, 31);
  int slot = first + through_me - mine;
#pragma unroll
  for (int u = 0; u < Unroll; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i)
      if (!(tile[u][i] < floor) && slice.holds(col_of(u, i)))
        keys[slot++] = make_key(tile[u][i], col_of(u, i));
  return first + warp_total > Room;
}

/// Sets the admission threshold before the first tile floods the buffer: each thread's best key
/// is a distinct element, so the k_row-th best of them is a lower bound of the k_row-th best of
/// the slice. Called with an empty buffer, which it leaves empty.
template <typename Tiles, int Pack, int Unroll>
__device__ void seed_threshold(const float (&tile)[Unroll][Pack], const Tiles& slice, int k_row,
                               TopkKey* keys, TopkBlockState& state) {
  TopkKey best = 0;
#pragma unroll
  for (int u = 0; u < Unroll; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) {
      const int col = slice.col(0, u, i);
      const TopkKey key = slice.holds(col) ? make_key(tile[u][i], col) : 0;
      best = key > best ? key : best;
    }
  keys[threadIdx.x] = best;
  const int seeds = __syncthreads_count(best != 0);
  if (seeds < k_row) return;  // too few elements to bound anything; leaves keys untouched
  // The zero keys of threads without an element sort last and are never counted as kept.
  const TopkKey bound =
      radix_threshold<Tiles::kThreads>(keys, Tiles::kThreads, k_row, 2 * k_row, state.select);
  // 0 bounds nothing; otherwise admit the bound itself.
  if (threadIdx.x == 0 && bound != 0) state.threshold = bound - 1;
  __syncthreads();
}

/// Large k buckets, whose threshold sits lower: many elements pass it, and a warp admits its
/// elements with one atomic.
template <int KBucket>
__device__ __forceinline__ constexpr bool admits_many() {
  return KBucket >= 256;
}

/// Whether a compaction starts with the select's window round. Small k buckets compact about
/// once a row, and inlined in the streaming loop the round's registers made that loop spill; at
/// k = 256, two or three compactions a row, it saves more than it costs. Buckets that guess
/// their threshold compact only where the guess fails, and without the round their loop keeps
/// its registers.
template <int KBucket>
__device__ __forceinline__ constexpr bool compacts_by_window() {
  return admits_many<KBucket>() && !guesses_threshold<KBucket>();
}

/// Shrinks the buffer to between need and 2*KBucket keys that hold its best `need`, and raises
/// the admission threshold to the smallest key kept.
template <int Threads, int KBucket>
__device__ void compact_buffer(TopkKey* keys, int k_row, TopkBlockState& state) {
  const int n = state.count;
  const int need = n < k_row ? n : k_row;
  const TopkKey threshold = radix_threshold<Threads, compacts_by_window<KBucket>()>(
      keys, n, need, 2 * KBucket, state.select);
  const int kept = keep_at_least<Threads>(keys, n, threshold, state.select);
  if (threadIdx.x == 0) {
    state.count = kept;
    state.threshold = threshold;  // keys are distinct: nothing equal to it can arrive
  }
  __syncthreads();
}

/// Streams [begin, end) of one row: returns this thread's statistics and leaves the buffer
/// holding (at least) the slice's best k_row keys.
template <typename In, int Pack, int Threads, int Unroll, int SliceCols, int KBucket, bool Shifted>
__device__ TemperedStats scan_slice(const In* row, int begin, int end, int k_row, float c,
                                    TopkKey* keys, TopkBlockState& state) {
  using Tiles = SliceTiles<Pack, Threads, Unroll, SliceCols, guesses_threshold<KBucket>(), Shifted>;
  constexpr int kRoom = topk_stream_room(KBucket);  // the buffer holds kRoom + Tiles::kTile keys
  const Tiles slice{begin, end, Shifted ? row_lead<In, Pack>(row) : 0};
  bool guess = guesses_threshold<KBucket>();
  for (;;) {
    if (threadIdx.x == 0) {
      state.count = 0;
      state.threshold = 0;
    }
    __syncthreads();
    if (guess) guess = guess_threshold(row, slice, k_row, keys, state);
    TemperedStats stats = TemperedStats::empty();
    float tile[Unroll][Pack];
    // The tile's statistics, its offer, and a compaction where the buffer crowds.
    const auto reduce_and_offer = [&](int offset) {
      const float thread_max = tile_max(tile);
      add_tile(stats, tile, thread_max, c);
      const bool crowded = offer_tile<kRoom, admits_many<KBucket>()>(tile, thread_max, slice,
                                                                     offset, keys, state);
      if (__syncthreads_or(crowded)) compact_buffer<Threads, KBucket>(keys, k_row, state);
    };
    if constexpr (sizeof(In) == 2) {
      // The next two tiles as stored, in flight while this one is reduced and filtered: the
      // registers of one tile of floats, and the bytes in flight of an fp32 tile of as many
      // values, where one tile ahead as floats left 16-bit rows at half of that.
      WordPack<In, Pack> first[Unroll], second[Unroll];
      load_word_tile<In>(row, slice, 0, first);
      widen_tile<In>(first, tile);
      if (!guess && k_row <= Threads) seed_threshold(tile, slice, k_row, keys, state);
      // Tile 1 goes out after the seed: held across it, its registers made the kernel spill.
      if (Tiles::kRun < Tiles::kSegment) load_word_tile<In>(row, slice, Tiles::kRun, first);
      for (int offset = 0; offset < Tiles::kSegment; offset += Tiles::kRun) {
        const bool more = offset + Tiles::kRun < Tiles::kSegment;
        const bool two_more = offset + 2 * Tiles::kRun < Tiles::kSegment;
        if (two_more) load_word_tile<In>(row, slice, offset + 2 * Tiles::kRun, second);
        reduce_and_offer(offset);
        if (more) widen_tile<In>(first, tile);
        if (two_more) {
#pragma unroll
          for (int u = 0; u < Unroll; ++u) first[u] = second[u];
        }
      }
    } else {
      load_tile<In>(row, slice, 0, tile);
      if (!guess && k_row <= Threads) seed_threshold(tile, slice, k_row, keys, state);
      for (int offset = 0; offset < Tiles::kSegment; offset += Tiles::kRun) {
        // The next tile's loads are in flight while this one is reduced and filtered.
        float next[Unroll][Pack];
        const bool more = offset + Tiles::kRun < Tiles::kSegment;
        if (more) load_tile<In>(row, slice, offset + Tiles::kRun, next);
        reduce_and_offer(offset);
        if (more) {
#pragma unroll
          for (int u = 0; u < Unroll; ++u)
#pragma unroll
            for (int i = 0; i < Pack; ++i) tile[u][i] = next[u][i];
        }
      }
    }
    // A threshold that was never guessed, or was raised by a compaction, is at or below the
    // k_row-th best key; a guess that let in fewer than k_row keys was too high.
    const int must_keep = end - begin < k_row ? end - begin : k_row;
    if (!guess || state.count >= must_keep) return stats;
    guess = false;
    __syncthreads();  // every thread has read the count before it is reset
  }
}

/// Blocks an SM should hold, for the compiler's register budget: a row over one block means many
/// rows, so two blocks of 512 threads share an SM (64 registers a thread); a row over a cluster
/// means few, one block an SM, free to take more. Left alone, NVRTC gave 512-thread blocks with
/// the select inlined more registers, one block an SM.
template <int Threads, int Cluster>
__host__ __device__ constexpr int topk_stream_min_blocks() {
  return Cluster == 1 && Threads <= 512 ? 1024 / Threads : 1;
}

/// Shifted = 1 reads rows off the pack's alignment from their pack boundaries, each row's first
/// columns before its start masked (SliceTiles).
template <typename In, typename Idx, int Cols, int KBucket, int Pack, int Threads, int Unroll,
          int Cluster, int Shifted = 0>
__global__ void __launch_bounds__(Threads, (topk_stream_min_blocks<Threads, Cluster>()))
    topk_stream(const TopkParams params) {
  start_after_prior_grids();
  check_topk_shape<In, KBucket, Pack, Threads, Cluster>();
  constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, Pack, Cluster));
  constexpr int kBufferKeys = topk_stream_buffer_keys(KBucket, Threads, Pack, Unroll);
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  TopkKey* const keys = reinterpret_cast<TopkKey*>(dynamic_smem);
  __shared__ TopkBlockState state;

  unsigned rank = 0;
  if constexpr (Cluster > 1) rank = cluster_block_rank();
  const int begin = static_cast<int>(rank) * kSliceCols;
  const int end = begin + kSliceCols < Cols ? begin + kSliceCols : Cols;
  const long long clusters = gridDim.x / Cluster;
  for (long long row = blockIdx.x / Cluster; row < params.rows; row += clusters) {
    const int k_row = row_slots(params, row);
    if (rank == 0) write_unused_slots<Idx, Threads>(params, row, k_row);
    if (k_row == 0) continue;  // the same for every block of the cluster

    const In* in = static_cast<const In*>(params.logits) + row * params.row_stride;
    const TemperedStats stats = scan_slice<In, Pack, Threads, Unroll, kSliceCols, KBucket, Shifted != 0>(
        in, begin, end, k_row, params.log2e_over_t, keys, state);
    if constexpr (finishes_by_gathering<KBucket, Cluster, kBufferKeys>())
      finish_by_gathering<Idx, KBucket, Threads, Cluster, kBufferKeys>(params, row, k_row,
                                                                             stats, keys, state);
    else
      finish_by_merging<Idx, KBucket, Threads, Cluster, kBufferKeys>(params, row, k_row,
                                                                           stats, keys, state);
  }
}

}  // namespace kjit
