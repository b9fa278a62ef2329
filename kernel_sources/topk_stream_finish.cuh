// SPDX-License-Identifier: Apache-2.0
// How the top-K stream kernel places a row's winners once its slices are streamed, chosen at
// compile time (finishes_by_gathering):
//  - by gathering (wherever the buffer holds the cluster's cut lists): each block cuts its
//    buffer to at most 2k keys and a bound; block 0 gathers from every block the keys at or
//    above the highest bound (no key below it can win) and places them: a key's place is the
//    number of keys above it (k buckets up to 256, after a cut to 2k), or its order once they
//    are sorted by their top bits (larger ones).
//  - by merging (larger k over clusters): the blocks agree on a bound below which no key can
//    win; each sorts its keys above it and finds every key's place by binary search in the
//    other blocks' sorted lists.
#pragma once

#include "reduce.cuh"
#include "topk_block_state.cuh"
#include "topk_output.cuh"
#include "topk_params.cuh"
#include "topk_places.cuh"
#include "topk_select.cuh"
#include "topk_shape.cuh"
#include "topk_stats.cuh"
#include "topk_window_sort.cuh"

namespace kjit {

/// Keys of a descending list (in this block's shared memory) that are >= `bound`.
__device__ __forceinline__ int count_at_least(const TopkKey* keys, int count, TopkKey bound) {
  int lo = 0, hi = count;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (keys[mid] >= bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// Keys of block `rank`'s sorted list that are greater than `key`, counting from `lo` (every key
/// before it is known to be greater).
__device__ __forceinline__ int count_greater_in(const TopkKey* keys, unsigned rank, int lo,
                                                int count, TopkKey key) {
  const unsigned list = cluster_address(keys, rank);
  int hi = count;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (load_cluster_u64(list + 8u * static_cast<unsigned>(mid)) > key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// Sum over the cluster (or the block) of each block's `state.top_sum`.
template <int Threads, int Cluster>
__device__ float row_top_sum(float mine, TopkBlockState& state) {
  const float block = block_all_reduce<Threads>(mine, SumOp());
  if constexpr (Cluster == 1) {
    return block;
  } else {
    if (threadIdx.x == 0) state.top_sum = block;
    cluster_arrive();
    cluster_wait();
    return reduce_cluster_slots<Cluster>(&state.top_sum, 0, SumOp());
  }
}

/// How many keys a cut may keep for k_row winners. Placing by counting compares every pair of
/// kept keys: from k = 128 on, a radix pass more to keep at most 1.25 k costs less than the
/// pairs it saves; below, 2 k.
template <int KBucket>
__device__ __forceinline__ int cut_limit(int k_row) {
  return KBucket >= 128 ? k_row + k_row / 4 : 2 * k_row;
}

/// Cuts the buffer to at most cut_limit keys that hold this block's best k_row; `bound` gets a
/// key at most the block's k_row-th best (0 when the block has no more than k_row keys), such
/// that the cut list holds every key of the slice at or above it that can win.
template <int Threads, int KBucket>
__device__ int cut_list(TopkKey* keys, int k_row, TopkBlockState& state, TopkKey& bound) {
  const int n = state.count;
  bound = 0;
  if (n <= k_row) return n;
  bound = radix_threshold<Threads>(keys, n, k_row, cut_limit<KBucket>(k_row), state.select);
  return keep_at_least<Threads>(keys, n, bound, state.select);
}

/// Writes the keys of keys[0, n) whose place is below k_row (the others are not winners).
template <typename Idx, int Threads, int Cluster>
__device__ void write_winners(const TopkParams& p, long long row, const TopkKey* keys, int n,
                              const int* places, int k_row, TemperedStats stats,
                              TopkBlockState& state) {
  const float c = p.log2e_over_t;
  const bool renorm = (p.flags & kTopkFlagRenorm) != 0;
  float top_mass = 0.0f;
  for (int i = threadIdx.x; i < n; i += Threads) {
    const int place = places[i];
    if (place >= k_row) continue;
    if (renorm) top_mass += fast_exp2((key_value(keys[i]) - stats.max) * c);
    else write_slot<Idx>(p, row, place, keys[i], stats.max, stats.sum);
  }
  if (renorm) {
    // The norm is the winners' own mass, known once every winner is.
    const float norm = row_top_sum<Threads, Cluster>(top_mass, state);
    for (int i = threadIdx.x; i < n; i += Threads)
      if (places[i] < k_row) write_slot<Idx>(p, row, places[i], keys[i], stats.max, norm);
  }
}

/// Block 0 of the cluster reads every block's statistics, list length and bound (one lane per
/// block: few remote reads, since one SM serves each) into its own shared memory, and returns
/// the row's statistics and the highest bound. Every block's list holds k_row keys at or above
/// its bound, so no key below the highest can win.
template <int Cluster>
__device__ TemperedStats read_cluster_lists(float c, TopkBlockState& state, TopkKey& bound) {
  if (threadIdx.x < 32) {
    const unsigned lane = threadIdx.x;
    TemperedStats lane_stats = TemperedStats::empty();
    TopkKey lane_bound = 0;
    if (lane < Cluster) {
      lane_stats = {load_cluster_f32(cluster_address(&state.block_max, lane)),
                    load_cluster_f32(cluster_address(&state.block_sum, lane))};
      state.list_count[lane] = load_cluster_s32(cluster_address(&state.final_count, lane));
      lane_bound = load_cluster_u64(cluster_address(&state.block_bound, lane));
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      const TopkKey other = __shfl_xor_sync(0xffffffffu, lane_bound, offset);
      lane_bound = other > lane_bound ? other : lane_bound;
    }
    lane_stats = warp_merge_tempered(lane_stats, c);
    if (lane == 0) {
      state.block_max = lane_stats.max;  // this block's own values are read by now
      state.block_sum = lane_stats.sum;
      state.block_bound = lane_bound;
    }
  }
  __syncthreads();
  bound = state.block_bound;
  return {state.block_max, state.block_sum};
}

/// Whether a gathered list is placed by sorting it (large k buckets) or by counting every pair.
template <int KBucket>
__host__ __device__ constexpr bool sorts_gathered_list() {
  return KBucket > 256;
}

/// Places the keys of list[0, listed) (distinct) whose places are below k_row (the others get
/// places of k_row or more): where the k bucket is large, by sorting them, by their top bits or
/// where those crowd into a bin bitonically (places are then their order; `list` has room for
/// the next power of two of `listed` keys, `spare` for `listed`); else by counting the keys
/// above each. Ends with a barrier.
template <int Threads, int KBucket>
__device__ void place_list(TopkKey* list, int listed, int k_row, TopkKey* spare, int* places,
                           SelectScratch& select) {
  if constexpr (sorts_gathered_list<KBucket>()) {
    sort_keys_descending<Threads>(list, listed, spare, select, k_row);
    for (int i = threadIdx.x; i < listed; i += Threads) places[i] = i;
    __syncthreads();
  } else {
    count_places<Threads>(list, listed, list, listed, 0, places);
  }
}

/// Keys a gathered list may hold to be sorted without a cut first: the largest power of two
/// such that the buffer of BufferKeys holds the block's own list (2 KBucket), the gathered list
/// and a spare list of that many keys, and an int a key for the places.
template <int KBucket, int BufferKeys>
__host__ __device__ constexpr int gathered_sort_room() {
  constexpr int kListCap = topk_list_cap(KBucket);
  int room = kListCap;
  while (kListCap + 5 * room <= BufferKeys) room *= 2;  // 2.5 x (2 room) <= the rest
  return room;
}

/// Places by gathering: the cut lists are short, so the keys that can still win are gathered in
/// one block and placed there. In a cluster, block 0 gathers every block's keys at or above the
/// highest bound, cuts them to at most cut_limit where placing needs it (counting compares
/// every pair; a sort takes any list its room holds, a cut before it costing more than the
/// longer sort), and writes the row alone; the other blocks only wait
/// for it at the row's last barrier.
template <typename Idx, int KBucket, int Threads, int Cluster, int BufferKeys>
__device__ void finish_by_gathering(const TopkParams& p, long long row, int k_row,
                                    TemperedStats stats, TopkKey* keys, TopkBlockState& state) {
  constexpr int kListCap = topk_list_cap(KBucket);
  TopkKey bound;
  int listed = cut_list<Threads, KBucket>(keys, k_row, state, bound);
  stats = block_merge_tempered<Threads>(stats, p.log2e_over_t, state.warp_max, state.warp_sum);
  TopkKey* list = keys;
  int room = kListCap;  // keys the list may hold while it is placed
  if constexpr (Cluster > 1) {
    if (threadIdx.x == 0) {
      state.block_max = stats.max;
      state.block_sum = stats.sum;
      state.final_count = listed;
      state.block_bound = bound;
      state.pool_count = 0;
    }
    cluster_arrive();
    cluster_wait();
    if (cluster_block_rank() != 0) {
      row_barrier<Cluster>();  // the row's end: no block reuses its list while read
      return;
    }
    stats = read_cluster_lists<Cluster>(p.log2e_over_t, state, bound);
    list = keys + kListCap;
    listed = gather_pool<Threads, Cluster, kListCap>(keys, state.list_count, bound, list,
                                                           &state.pool_count);
    if constexpr (sorts_gathered_list<KBucket>()) room = gathered_sort_room<KBucket, BufferKeys>();
    if (listed > (sorts_gathered_list<KBucket>() ? room : k_row)) {
      const TopkKey cut =
          radix_threshold<Threads>(list, listed, k_row, cut_limit<KBucket>(k_row), state.select);
      listed = keep_at_least<Threads>(list, listed, cut, state.select);
    }
  }
  TopkKey* const spare = list + room;
  int* const places = reinterpret_cast<int*>(sorts_gathered_list<KBucket>() ? spare + room
                                                                            : spare);
  place_list<Threads, KBucket>(list, listed, k_row, spare, places, state.select);
  write_winners<Idx, Threads, 1>(p, row, list, listed, places, k_row, stats, state);
  row_barrier<Cluster>();  // the row's end: no block reuses its list while read
}

/// The most keys of each other block's sorted list that a merging block copies into its own
/// shared memory before ranking its candidates in them: copying whole lists cost more remote
/// loads than it saved (docs/experiments/top-k-stream.md).
constexpr int kMostCopiedKeys = 512;

/// Keys copied of each other block's list: kMostCopiedKeys, or fewer (down to none) where the
/// buffer's room past the block's own list and places (2 KBucket keys) does not hold them for
/// every block.
template <int KBucket, int Cluster, int BufferKeys>
__host__ __device__ constexpr int merge_copied_keys() {
  int copied = kMostCopiedKeys < KBucket ? kMostCopiedKeys : KBucket;
  while (copied > 0 && (Cluster - 1) * copied > BufferKeys - 2 * KBucket) copied /= 2;
  return copied;
}

/// Copies the first `Copied` keys (or all, where fewer) of every other block's sorted list into
/// copies[o * Copied, ...), o counting the other blocks in rank order: one remote load a key,
/// all issued before any is used.
template <int Threads, int Cluster, int Copied>
__device__ __forceinline__ void copy_other_lists(const TopkKey* keys, unsigned rank,
                                                 const int* list_count, TopkKey* copies) {
  constexpr int kSlots = (Cluster - 1) * Copied;
  constexpr int kPerThread = (kSlots + Threads - 1) / Threads;
  TopkKey got[kPerThread];
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    const int slot = r * Threads + static_cast<int>(threadIdx.x);
    got[r] = 0;
    if (slot < kSlots) {
      const int o = slot / Copied, at = slot % Copied;
      const unsigned b = static_cast<unsigned>(o) + (static_cast<unsigned>(o) >= rank ? 1u : 0u);
      if (at < list_count[b]) got[r] = load_cluster_u64(cluster_element(keys, b, at));
    }
  }
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    const int slot = r * Threads + static_cast<int>(threadIdx.x);
    if (slot < kSlots) copies[slot] = got[r];
  }
}

/// A key of this block's buffer with at least `each` of the buffer's keys at or above it (and
/// not many more), or 0 where the buffer holds fewer.
template <int Threads>
__device__ TopkKey own_merge_bound(const TopkKey* keys, int n, int each, SelectScratch& select) {
  if (n < each) return 0;
  return radix_threshold<Threads>(keys, n, each, each + each / 4, select);
}

/// Keeps the keys at or above `bound`, at most this block's best k_row of them (past those no
/// key of the block can win), and sorts them descending; returns how many.
template <int Threads, int KBucket>
__device__ int sort_candidates(TopkKey* keys, int n, TopkKey bound, int k_row,
                               TopkBlockState& state) {
  if (bound != 0) n = keep_at_least<Threads>(keys, n, bound, state.select);
  if (n > k_row) {
    const TopkKey cut = radix_threshold<Threads>(keys, n, k_row, k_row, state.select);
    n = keep_at_least<Threads>(keys, n, cut, state.select);
  }
  if (n == 0) return 0;
  sort_keys_descending<Threads>(keys, n, keys + KBucket, state.select, n);
  return n;
}

/// Reads every block's statistics and merge bound (one lane a block) and returns the row's
/// statistics and the lowest bound: every block's buffer holds at least ceil(k_row / blocks)
/// keys at or above its own, so at least k_row keys of the row are at or above the lowest, and
/// no key below it can win.
template <int Cluster>
__device__ TemperedStats read_merge_bounds(float c, TopkBlockState& state, TopkKey& bound) {
  const unsigned lane = threadIdx.x % 32;
  TemperedStats lane_stats = TemperedStats::empty();
  TopkKey lane_bound = ~0ull;
  if (lane < Cluster) {
    lane_stats = {load_cluster_f32(cluster_address(&state.block_max, lane)),
                  load_cluster_f32(cluster_address(&state.block_sum, lane))};
    lane_bound = load_cluster_u64(cluster_address(&state.block_bound, lane));
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const TopkKey other = __shfl_xor_sync(0xffffffffu, lane_bound, offset);
    lane_bound = other < lane_bound ? other : lane_bound;
  }
  bound = lane_bound;
  return warp_merge_tempered(lane_stats, c);
}

/// Places by merging sorted lists: for large k over clusters (see finishes_by_gathering).
/// The blocks first agree on a bound below which no key can win, then each sorts only its keys
/// above it, a small share of its best k.
template <typename Idx, int KBucket, int Threads, int Cluster, int BufferKeys>
__device__ void finish_by_merging(const TopkParams& p, long long row, int k_row,
                                  TemperedStats stats, TopkKey* keys, TopkBlockState& state) {
  const float c = p.log2e_over_t;
  unsigned rank = 0;
  if constexpr (Cluster > 1) rank = cluster_block_rank();
  int listed = state.count;
  TopkKey bound = 0;
  if constexpr (Cluster > 1) {
    const int each = (k_row + Cluster - 1) / Cluster;
    const TopkKey own = own_merge_bound<Threads>(keys, listed, each, state.select);
    stats = block_merge_tempered<Threads>(stats, c, state.warp_max, state.warp_sum);
    if (threadIdx.x == 0) {
      state.block_max = stats.max;
      state.block_sum = stats.sum;
      state.block_bound = own;
    }
    cluster_arrive();
    cluster_wait();
    stats = read_merge_bounds<Cluster>(c, state, bound);
  } else {
    stats = block_merge_tempered<Threads>(stats, c, state.warp_max, state.warp_sum);
  }
  listed = sort_candidates<Threads, KBucket>(keys, listed, bound, k_row, state);
  int* const ranks = reinterpret_cast<int*>(keys + KBucket);  // places, past the sorted list
  for (int i = threadIdx.x; i < listed; i += Threads) ranks[i] = i;

  // Each listed key's place in the row: its place in its own list plus the keys above it in
  // the other lists, one binary search per (key, other list) pair, spread over the block.
  if constexpr (Cluster > 1) {
    if (threadIdx.x == 0) state.final_count = listed;
    cluster_arrive();
    cluster_wait();
    if (threadIdx.x < Cluster)
      state.list_count[threadIdx.x] =
          load_cluster_s32(cluster_address(&state.final_count, threadIdx.x));
    __syncthreads();
    // The other lists' first keys are copied here first: searched where they lie, every step
    // of a search was a remote load that waited on the one before. A search that runs past the
    // copied keys goes on in the other block.
    constexpr int kOthers = Cluster - 1;
    constexpr int kCopied = merge_copied_keys<KBucket, Cluster, BufferKeys>();
    TopkKey* const copies = keys + 2 * KBucket;  // past the list and the places
    if constexpr (kCopied > 0) {
      copy_other_lists<Threads, Cluster, kCopied>(keys, rank, state.list_count, copies);
      __syncthreads();
    }
    for (int pair = threadIdx.x; pair < listed * kOthers; pair += Threads) {
      const int i = pair / kOthers, o = pair % kOthers;
      const int b = o + (o >= static_cast<int>(rank) ? 1 : 0);
      const int held = state.list_count[b] < kCopied ? state.list_count[b] : kCopied;
      int above = held == 0 ? 0 : count_at_least(copies + o * kCopied, held, keys[i] + 1);
      if (above == held && held < state.list_count[b])
        above = count_greater_in(keys, b, held, state.list_count[b], keys[i]);
      if (above > 0) atomicAdd(&ranks[i], above);
    }
  }
  __syncthreads();
  write_winners<Idx, Threads, Cluster>(p, row, keys, listed, ranks, k_row, stats, state);
  row_barrier<Cluster>();  // the row's end: no block reuses its list while read
}

/// The most keys (the k bucket times the cluster's blocks) whose lists a cluster gathers into one
/// block to sort them there. Past it, each block sorting its own keys above the cluster's bound
/// in parallel is faster than block 0 sorting them all
/// (docs/experiments/top-k-stream.md#a-bound-before-the-merges-sort).
constexpr int kMostSortedGatheredKeys = 1024;

/// Gathering needs a buffer that holds this block's cut list (at most 2 * KBucket keys), in a
/// cluster the keys gathered from every block, and for placing them a spare list (when sorting)
/// and an int a key. Counting compares every pair, so small k buckets take it wherever the
/// buffer allows; large ones sort, and in clusters merge sorted lists past
/// kMostSortedGatheredKeys (or where the cluster's lists do not fit).
template <int KBucket, int Cluster, int BufferKeys>
__host__ __device__ constexpr bool finishes_by_gathering() {
  if (sorts_gathered_list<KBucket>() && Cluster * KBucket > kMostSortedGatheredKeys)
    return false;
  constexpr int kListCap = topk_list_cap(KBucket);
  constexpr int kOwn = Cluster > 1 ? kListCap : 0;
  constexpr int kGathered = Cluster > 1 ? Cluster * kListCap : 0;
  constexpr int kPlacing = (sorts_gathered_list<KBucket>() ? 2 : 1) * kListCap + kListCap / 2;
  return kOwn + (kGathered > kPlacing ? kGathered : kPlacing) <= BufferKeys;
}

}  // namespace kjit
