// SPDX-License-Identifier: Apache-2.0
// The top-K stream algorithm: fused softmax + top-K in one pass over the logits. Softmax is
// monotonic, so the k most probable entries are the k largest logits: each block streams its
// slice of a row once, keeping the online (max, sum) and admitting into a shared-memory buffer
// only the elements above a threshold that rises as the buffer fills (from k bucket 512,
// guessed from a sample first). Cluster > 1 (sm_90) splits a row over a thread-block cluster,
// which merges through distributed shared memory, without global scratch memory. Only the k
// winners become probabilities.
//
// Two ways to place the winners, chosen at compile time:
//  - by gathering (wherever the buffer holds the cluster's cut lists): each block cuts its
//    buffer to at most 2k keys and a bound; block 0 gathers from every block the keys at or
//    above the highest bound (no key below it can win) and places them: a key's place is the
//    number of keys above it (k buckets up to 256, after a cut to 2k), or its order once they
//    are sorted by their top bits (larger ones).
//  - by merging (larger k over clusters): the blocks agree on a bound below which no key can
//    win; each sorts its keys above it and finds every key's place by binary search in the
//    other blocks' sorted lists.
#pragma once

#include "grid_dependency.cuh"
#include "pack.cuh"
#include "reduce.cuh"
#include "topk_output.cuh"
#include "topk_params.cuh"
#include "topk_places.cuh"
#include "topk_select.cuh"
#include "topk_shape.cuh"
#include "topk_stats.cuh"
#include "topk_tiles.cuh"
#include "topk_window_sort.cuh"

namespace kjit {

/// What one block keeps in static shared memory for the row in flight.
struct TopkBlockState {
  SelectScratch select;
  TopkKey threshold;    ///< the buffer admits keys above it
  int count;            ///< keys in the buffer
  int final_count;      ///< length of this block's list (read by the cluster)
  int pool_count;       ///< keys gathered from the cluster (placing by gathering)
  TopkKey block_bound;  ///< this block's list holds every key of its slice above it (in
                        ///< block 0, once it has read the cluster: the row's highest bound)
  float block_max;      ///< this block's statistics (read by the cluster)
  float block_sum;
  float top_sum;        ///< this block's share of the winners' mass (KJIT_TOPK_RENORM)
  int list_count[16];   ///< every cluster block's list length
  float warp_max[32];
  float warp_sum[32];
};

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

/// Buckets from 512 guess their threshold from a sample (guess_threshold). At k = 256 the seed
/// from the threads' maxima already holds the admissions down, and the guess cost more than it
/// saved.
template <int KBucket>
__device__ __forceinline__ constexpr bool guesses_threshold() {
  return KBucket >= 512;
}

/// How many of a sample's best keys to admit above so that a slice whose values lie in no
/// particular order holds k_row or more keys above the threshold, all but certainly: the sample
/// of `sampled` of the slice's `cols` values expects q = k_row x sampled / cols of the slice's
/// best k_row among its own, and the slice's keys above the sample's r-th best number about
/// r / q x k_row, give or take sqrt(r) / q x k_row; r = q + 5 sqrt(r) puts k_row five of those
/// below the expectation (one slice in millions guesses too high).
__device__ __forceinline__ int guess_rank(int k_row, int sampled, int cols) {
  constexpr float kDeviations = 5.0f;
  const float q =
      static_cast<float>(k_row) * static_cast<float>(sampled) / static_cast<float>(cols);
  const float root = 0.5f * (kDeviations + sqrtf(kDeviations * kDeviations + 4.0f * q));
  return static_cast<int>(ceilf(root * root));
}

/// The most keys the guess samples: of a larger first tile, every other run or fewer. A select
/// over a whole tile's 8192 keys cost more than a guess from half of them, which is as good;
/// from 2048 the guess let in too many keys (docs/experiments/top-k-stream.md).
constexpr int kMostGuessSamples = 4096;

/// Runs of the first tile the guess samples, spread evenly over the tile's Unroll runs.
template <typename Tiles>
__host__ __device__ constexpr int guess_runs() {
  int runs = Tiles::kUnroll;
  while (runs > 1 && runs * Tiles::kRun > kMostGuessSamples) runs /= 2;
  return runs;
}

/// Loads the sampled runs of the first tile into keys[0, runs x kRun) as keys (0 past the
/// slice's end); returns how many of them are the slice's.
template <typename In, typename Tiles>
__device__ __forceinline__ int load_guess_sample(const In* row, const Tiles& slice,
                                                 TopkKey* keys) {
  constexpr int kRuns = guess_runs<Tiles>(), kStride = Tiles::kUnroll / kRuns;
  int sampled = 0;
#pragma unroll
  for (int j = 0; j < kRuns; ++j) {
    const int u = j * kStride;
    float values[Tiles::kPack];
    load_slice_pack<In, Tiles, Tiles::kPack>(row, slice, slice.col(0, u, 0), values);
#pragma unroll
    for (int i = 0; i < Tiles::kPack; ++i) {
      const int col = slice.col(0, u, i);
      keys[(j * Tiles::kThreads + static_cast<int>(threadIdx.x)) * Tiles::kPack + i] =
          slice.holds(col) ? make_key(values[i], col) : 0;
    }
    // The run's columns in the slice: from its first (or the slice's) to its last (or the end).
    const int first = slice.col(0, u, 0) - static_cast<int>(threadIdx.x) * Tiles::kPack;
    const int from = first > slice.begin ? first : slice.begin;
    const int to = first + Tiles::kRun < slice.end ? first + Tiles::kRun : slice.end;
    sampled += to > from ? to - from : 0;
  }
  return sampled;
}

/// Buckets from 512 guess the admission threshold from the first tile (or the part of it that
/// load_guess_sample reads), a sample of the slice: its guess_rank-th best key. A threshold that
/// starts from nothing and rises with each compaction let ~14,000 keys of a row of 128256 into
/// the buffer at k = 1024 (two or three compactions); the guess lets in about 1.3 k_row. It may
/// be too high (a slice whose best values all lie in the first tile): scan_slice finds that at
/// the slice's end, by fewer than k_row keys in the buffer, and reads the slice again the safe
/// way. The sample is read here straight into shared memory and again (from L2) by the
/// streaming loop: held in registers across the select, the tile made the loop spill. False
/// where the sample is too small to guess from. Called with an empty buffer, which it leaves
/// empty.
template <typename In, typename Tiles>
__device__ bool guess_threshold(const In* row, const Tiles& slice, int k_row, TopkKey* keys,
                                TopkBlockState& state) {
  const int sampled = load_guess_sample(row, slice, keys);
  __syncthreads();
  const int rank = sampled == 0 ? 0 : guess_rank(k_row, sampled, slice.end - slice.begin);
  if (rank == 0 || rank > sampled) return false;  // the same in every thread
  const TopkKey bound = radix_threshold<Tiles::kThreads>(
      keys, guess_runs<Tiles>() * Tiles::kRun, rank, rank + rank / 4, state.select);
  if (threadIdx.x == 0) state.threshold = bound - 1;  // admits the bound itself
  __syncthreads();
  return true;
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
