// SPDX-License-Identifier: Apache-2.0
// The last step of the resident top-K kernel, spread over the cluster: every block writes its
// candidates into every block of the cluster and then finds the row's place of its own keys,
// writing its winners itself. Few candidates go unsorted and a key's place is counted; more
// go as each block's sorted list, and a key's place is the sum of binary searches through the
// lists. No one SM sorts the whole candidate set: each sorts a block's share, and a key takes
// a few searches.
#pragma once

#include "reduce.cuh"
#include "topk_keys.cuh"
#include "topk_window_sort.cuh"

namespace kjit {

/// The most blocks a row's lists come from (the widest cluster on sm_90).
constexpr int kMostRankedLists = 16;

/// Where the lists are: block r's sorted candidates are keys[begin[r], begin[r] + count[r]) of
/// every block's buffer. Written by every block into every block before a cluster barrier.
struct RankedLists {
  int begin[kMostRankedLists];
  int count[kMostRankedLists];
  float mass[kMostRankedLists];  ///< each block's winners' probability mass (KJIT_TOPK_RENORM)
};

/// Stores `key` at keys[at] of blocks first, first + step, ... of the cluster (of this block
/// only when it has one).
template <int Cluster>
__device__ __forceinline__ void store_everywhere(TopkKey* keys, int at, TopkKey key, int first = 0,
                                                 int step = 1) {
  if constexpr (Cluster == 1) {
    if (first == 0) keys[at] = key;
  } else {
    for (int r = first; r < Cluster; r += step)
      store_cluster_u64(cluster_element(keys, static_cast<unsigned>(r), at), key);
  }
}

/// Keys of the descending list[0, count) above `key`.
__device__ __forceinline__ int count_above(const TopkKey* list, int count, TopkKey key) {
  int low = 0, high = count;
  while (low < high) {
    const int middle = (low + high) / 2;
    if (list[middle] > key) low = middle + 1;
    else high = middle;
  }
  return low;
}

/// Sum over groups of `width` consecutive lanes (a power of two, at most 32). Call with the
/// whole warp.
__device__ __forceinline__ int group_sum(int v, int width) {
  for (int offset = width / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// Calls visit(j, key, above, part, parts) for each j in [first, first + count), with `above`
/// the keys of keys[0, n) (distinct) above keys[j]. A group of `parts` lanes counts for a key,
/// with no barrier between steps and broadcast reads; every lane of the group makes the call.
/// Call with the whole block.
template <int Threads, typename Visit>
__device__ __forceinline__ void for_each_place(const TopkKey* keys, int n, int first, int count,
                                               Visit visit) {
  int parts = 32;
  while (parts > 1 && parts * count > Threads) parts /= 2;
  const int part = static_cast<int>(threadIdx.x) % parts;
  const int rounds = (count * parts + Threads - 1) / Threads;  // the same in every thread
  for (int round = 0; round < rounds; ++round) {
    const int i = (round * Threads + static_cast<int>(threadIdx.x)) / parts;
    const TopkKey key = i < count ? keys[first + i] : 0;
    int above = 0;
    if (i < count)
      for (int j = part; j < n; j += parts) above += keys[j] > key ? 1 : 0;
    above = group_sum(above, parts);
    if (i < count) visit(first + i, key, above, part, parts);
  }
}

/// places[j - first] = the row's place of keys[j], for j in [first, first + count), by counting
/// the keys of keys[0, n) above it: for few candidates, unsorted. Ends with a barrier.
template <int Threads>
__device__ void place_by_count(const TopkKey* keys, int n, int first, int count, int* places) {
  for_each_place<Threads>(keys, n, first, count, [&](int j, TopkKey, int above, int part, int) {
    if (part == 0) places[j - first] = above;
  });
  __syncthreads();
}

/// Writes staged[0, m) (distinct keys), sorted descending, to keys[at, at + m) of every block.
/// Up to 256 keys, by their places (at 1024 threads each lane compares 64 keys at most);
/// beyond, sorted in the staging, which holds `capacity` keys, at least the next power of two
/// of m: by their top bits where it also holds a spare copy and the bits allow
/// (window_sort_descending; 1024 keys in about a third of a bitonic sort's time), else
/// bitonically. Call with the whole block after a barrier that follows the staging; ends with
/// one.
template <int Threads, int Cluster>
__device__ void write_sorted_everywhere(TopkKey* staged, int m, int capacity, TopkKey* keys,
                                        int at, SelectScratch& scratch) {
  constexpr int kMostCounted = 256;
  if (m <= kMostCounted) {
    // The group's lanes share the stores to the cluster's blocks.
    for_each_place<Threads>(staged, m, 0, m, [&](int, TopkKey key, int above, int part, int parts) {
      store_everywhere<Cluster>(keys, at + above, key, part, parts);
    });
  } else {
    sort_keys_descending<Threads>(staged, m, 2 * m <= capacity ? staged + m : nullptr, scratch,
                                  m);
    for (int i = threadIdx.x; i < m; i += Threads) store_everywhere<Cluster>(keys, at + i, staged[i]);
  }
  __syncthreads();
}

/// Publishes this block's list (rank `rank`, keys[at, at + m)) to every block: threads below
/// Cluster, one block each.
template <int Cluster>
__device__ __forceinline__ void publish_list(RankedLists& lists, unsigned rank, int at, int m) {
  if (threadIdx.x >= Cluster) return;
  if constexpr (Cluster == 1) {
    lists.begin[0] = at;
    lists.count[0] = m;
  } else {
    store_cluster_s32(cluster_element(lists.begin, threadIdx.x, static_cast<int>(rank)), at);
    store_cluster_s32(cluster_element(lists.count, threadIdx.x, static_cast<int>(rank)), m);
  }
}

/// Publishes this block's winners' mass to every block, as publish_list.
template <int Cluster>
__device__ __forceinline__ void publish_mass(RankedLists& lists, unsigned rank, float mass) {
  if (threadIdx.x >= Cluster) return;
  if constexpr (Cluster == 1) lists.mass[0] = mass;
  else store_cluster_f32(cluster_element(lists.mass, threadIdx.x, static_cast<int>(rank)), mass);
}

/// places[j - first] = the row's place of keys[j], for j in [first, first + count): the keys
/// above it in every block's sorted list, by binary search, one lane a list. Call with the
/// whole block after the cluster barrier that follows every block's lists; ends with a barrier.
template <int Threads, int Cluster>
__device__ void place_by_search(const TopkKey* keys, int first, int count,
                                const RankedLists& lists, int* places) {
  static_assert(Cluster <= kMostRankedLists, "place_by_search: at most 16 blocks");
  // A key's lanes are a power of two, as group_sum needs; those past the lists count nothing.
  constexpr int kLanes = Cluster <= 2 ? Cluster : Cluster <= 4 ? 4
                         : Cluster <= 8 ? 8 : 16;
  constexpr int kKeysAPass = Threads / kLanes;
  const int list = static_cast<int>(threadIdx.x) % kLanes;
  const bool has_list = list < Cluster;
  const TopkKey* const listed = keys + (has_list ? lists.begin[list] : 0);
  const int listed_count = has_list ? lists.count[list] : 0;
  for (int pass = 0; pass < count; pass += kKeysAPass) {  // the same in every thread
    const int i = pass + static_cast<int>(threadIdx.x) / kLanes;
    int above = i < count ? count_above(listed, listed_count, keys[first + i]) : 0;
    above = group_sum(above, kLanes);
    if (i < count && list == 0) places[i] = above;
  }
  __syncthreads();
}

}  // namespace kjit
