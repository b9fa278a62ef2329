// SPDX-License-Identifier: Apache-2.0
// Fused softmax + top-K with the row held in registers. A block, or on sm_90 a cluster of up to
// 16 blocks, takes one row and loads it once; every later step reads registers:
//  1. the online (max, sum) of the row, and each block's largest key (topk_resident_slice.cuh);
//  2. the row's k-th largest key, by a radix select whose counts are summed over the cluster
//     through distributed shared memory (topk_resident_select.cuh). Its first round takes the
//     top 16 bits at once, over the row's largest key's 8-bit bin and the one below, in the
//     exchange that also brings the statistics (through every block's inbox, cluster_inbox.cuh,
//     or a cluster barrier over 16 blocks); on a language model's logits that round leaves
//     between k and 2 k keys at or above the chosen bin, and later 8-bit rounds (one cluster
//     barrier each) are rare;
//  3. those keys written where they are placed (topk_resident_last_step.cuh): few (up to 128)
//     into block 0, which counts their places and writes the row; up to 256 into every block,
//     each counting the places of its own; more into block 0, which sorts them (k bucket
//     1024), or sorted a block's share at a time into every block, where each block finds the
//     row's place of its own keys by binary search (topk_ranked_lists.cuh). Each writes its
//     winners.
// So a few rows spread over many SMs, and a large k costs a sort of each block's share instead
// of a buffer that keeps overflowing while the row streams by (topk_stream.cuh, for rows too
// many to hold).
#pragma once

#include "grid_dependency.cuh"
#include "reduce.cuh"
#include "topk_keys.cuh"
#include "topk_output.cuh"
#include "topk_params.cuh"
#include "topk_ranked_lists.cuh"
#include "topk_resident_last_step.cuh"
#include "topk_resident_select.cuh"
#include "topk_resident_slice.cuh"
#include "topk_shape.cuh"
#include "topk_stats.cuh"
#include "topk_window_sort.cuh"

namespace kjit {

/// A cluster barrier split in two: every block arrives where it is built and waits at the first
/// wait(); later calls do nothing. In a block alone, a block barrier where it is built. It
/// orders only each block's setup of its own shared memory before the others write into it.
template <int Cluster>
class StartBarrier {
 public:
  __device__ StartBarrier() {
    if constexpr (Cluster > 1) cluster_arrive_own_writes();
    else __syncthreads();
  }
  __device__ void wait() {
    if constexpr (Cluster > 1) {
      if (waited_) return;
      cluster_wait();
      waited_ = true;
    }
  }

 private:
  bool waited_ = false;
};

/// Unroll (TopkConfig::unroll) is the packs a thread holds: its whole share of the row.
template <typename In, typename Idx, int Cols, int KBucket, int Pack, int Threads, int Unroll,
          int Cluster>
__global__ void __launch_bounds__(Threads) topk_resident(const TopkParams params) {
  start_after_prior_grids();
  check_topk_shape<In, KBucket, Pack, Threads, Cluster>();
  static_assert(Unroll * Pack <= kTopkResidentMostValues, "topk_resident: at most 32 values a thread");
  constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, Pack, Cluster));
  // The columns of the cluster's shortest slice (its last block's, or any other's).
  constexpr int kLastSliceCols = Cols - (Cluster - 1) * kSliceCols;
  constexpr int kSureCols = kLastSliceCols < kSliceCols ? kLastSliceCols : kSliceCols;
  static_assert(Threads * Unroll * Pack >= kSliceCols, "topk_resident: the slice must fit");
  // The cluster's candidates (at most kLimit), then this block's staged ones: a power of two
  // of them at most, as the bitonic sort of a large share needs.
  constexpr int kLimit = topk_list_cap(KBucket);
  constexpr int kMostUnsorted = 256;
  // Up to this many, block 0 places them all: sent to every block for each to place its own,
  // the copies made the block with most of them late at the next barrier, while one block
  // counting the places of many more took longer than that (docs/experiments/top-k-resident.md).
  constexpr int kMostPlacedInBlock0 = 128;
  // Sorting the candidates in block 0 beats sorted lists in every block at k bucket 1024, over
  // 16 blocks too, but not at k = 256 (docs/experiments/top-k-resident.md).
  constexpr bool kSortsInBlock0 = KBucket >= 1024;
  // Bits below the top 16 that block 0's sort may bin by; bfloat16 values have none, so it
  // bins theirs by column bits; half values gained nothing from column bits after their 3
  // (docs/experiments/top-k-resident.md).
  constexpr int kFinerBinBits = low_float_bits<In>() < 8 ? low_float_bits<In>() : 8;
  constexpr int kColumnBinBits = low_float_bits<In>() == 0 ? key_column_bits(Cols) : 0;
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  TopkKey* const candidates = reinterpret_cast<TopkKey*>(dynamic_smem);
  TopkKey* const staged = candidates + kLimit;
  __shared__ ResidentState state;

  unsigned rank = 0;
  if constexpr (Cluster > 1) rank = cluster_block_rank();
  ResidentSlice<Pack, Threads, Unroll> slice;
  slice.begin = static_cast<int>(rank) * kSliceCols;
  slice.end = slice.begin + kSliceCols < Cols ? slice.begin + kSliceCols : Cols;
  for (int b = threadIdx.x; b < 3 * 256; b += Threads)
    (b < 256 ? state.counts[b] : state.totals[b / 256 - 1][b % 256]) = 0;
  for (int b = threadIdx.x; b < kWindowBins; b += Threads) {
    state.window_counts[b] = 0;
    state.window_totals[b] = 0;
  }
  if (threadIdx.x == 0) {
    state.gathered = 0;
    if constexpr (exchanges_through_inbox<Cluster>()) state.window_inbox.init(Cluster);
  }
  // No block writes into another before that block has started, zeroed its totals and set up
  // its inbox. The barrier is split so that the first row's loads are in flight while it
  // completes.
  StartBarrier<Cluster> start;
  int parity = 0;
  unsigned inbox_phase = 0;
  const float c = params.log2e_over_t;
  const auto top_k_of_row = [&](long long row) {
    const int k_row = row_slots(params, row);
    if (rank == 0) write_unused_slots<Idx, Threads>(params, row, k_row);
    if (k_row == 0) return;  // the same for every block of the cluster

    unsigned thread_top = 0;
    const TemperedStats mine = load_slice<kSureCols, In>(
        static_cast<const In*>(params.logits) + row * params.row_stride, c, slice, thread_top);
    const unsigned block_top = block_top_bits<Threads>(thread_top, state);
    count_window(slice, block_top >> 24, state.window_counts);
    push_warp_stats(mine, c, state);
    __syncthreads();
    start.wait();
    int selected = 0;
    const TopkKey threshold = cluster_radix_select<Pack, Threads, Unroll, Cluster>(
        slice, k_row, kLimit, c, block_top, rank, state, parity, inbox_phase, selected);
    // Few candidates go unsorted to every block, each block counting its keys' places among
    // them, or where they are fewer still, only to block 0, which places and writes them all.
    // More are sorted a block's list at a time and placed by binary search, or at k bucket
    // 1024 sent unsorted to block 0, which sorts them and writes the row.
    const bool by_count = selected <= kMostUnsorted;  // the same in every block
    const bool in_block0 =
        selected <= kMostPlacedInBlock0 || (!by_count && kSortsInBlock0);
    const bool sorts_lists = !by_count && !in_block0;
    int at = 0;
    const int m = stage_candidates<Pack, Threads, Unroll, Cluster>(
        slice, threshold, sorts_lists ? staged : nullptr, candidates, state, at, in_block0);
    if (sorts_lists) {
      write_sorted_everywhere<Threads, Cluster>(staged, m, kLimit, candidates, at,
                                                      state.sort);
      publish_list<Cluster>(state.lists, rank, at, m);
    }
    // Block 0's sort of many candidates is told the row's largest key, which the blocks'
    // summaries brought (the barrier below orders its set-up), and the threshold, below which
    // no candidate lies: its bins are then finer than the top 16 bits, worked out while the
    // block waits at the barrier.
    const bool sorts_in_block0 = in_block0 && !by_count;
    KeyWindow<kColumnBinBits> window;
    if (rank == 0 && sorts_in_block0) {
      prepare_window_sort<Threads>(state.sort);
      window = key_window<kFinerBinBits, kColumnBinBits>(state.row_top,
                                                         static_cast<unsigned>(threshold >> 32));
    }
    // The candidates are where they are placed, and every read of another block's shared
    // memory for this row is done (the mass's aside): the others may go on to the next row.
    row_barrier<Cluster>();
    if (rank == 0 && threadIdx.x == 0) state.gathered = 0;
    int* const places = reinterpret_cast<int*>(staged);  // read by now, if used: reuse it
    if (in_block0 && rank != 0) return;  // the same in the whole block
    if (in_block0 && !(params.flags & kTopkFlagRenorm)) {
      // Block 0 writes the row straight from its last step, with no barrier after it.
      if (by_count) {
        place_and_write_few<Idx, Threads>(params, row, k_row, candidates, selected, state);
      } else {
        sort_keys_descending<Threads>(candidates, selected, staged, state.sort, k_row, &window);
        for (int i = threadIdx.x; i < k_row; i += Threads)
          write_slot<Idx>(params, row, i, candidates[i], state.row_max, state.row_sum);
      }
      return;
    }
    // Placing every candidate where that is cheap (counting few, in block 0, or in a block
    // alone), so that KJIT_TOPK_RENORM's mass needs no exchange.
    const bool place_all =
        Cluster == 1 || in_block0 || (by_count && (params.flags & kTopkFlagRenorm));
    const int first = place_all ? 0 : at, placed = place_all ? selected : m;
    if (by_count) {
      place_by_count<Threads>(candidates, selected, first, placed, places);
    } else if (in_block0) {
      sort_keys_descending<Threads>(candidates, selected, staged, state.sort, k_row, &window);
      for (int i = threadIdx.x; i < selected; i += Threads) places[i] = i;
      __syncthreads();
    } else {
      place_by_search<Threads, Cluster>(candidates, first, placed, state.lists, places);
    }
    const int written_at = in_block0 ? 0 : at, written = in_block0 ? selected : m;
    write_own_winners<Idx, Threads, Cluster>(params, row, k_row, candidates, places, first,
                                                   placed, place_all, written_at, written, rank,
                                                   state);
  };
  // One row a cluster, the host launching as many clusters as rows (topk_rows_per_launch):
  // looping over rows kept the loop's state in registers across the row, and the eight-row
  // kernel spilled.
  const long long row = blockIdx.x / Cluster;
  if (row < params.rows) top_k_of_row(row);
  start.wait();  // where the row did not take this block as far as its first remote write
}

}  // namespace kjit
