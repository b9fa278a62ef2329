// SPDX-License-Identifier: Apache-2.0
// The ring algorithm: rows through a ring of shared-memory chunks filled by the TMA engine
// (sm_90), with a producer warp beside the consumer warps. Each block owns a slice of a row (a
// cluster of Cluster blocks shares a row); the producer keeps the ring full of the next rows'
// chunks while the consumers hold the current row in registers, reduce it and write it out.
// Loads go out whole chunks at a time, so the bytes in flight depend on neither registers nor
// the consumers' progress.
//
// Outputs of 4-byte types, and of two consumer groups but for 16-bit log-softmax over slices
// under 28 KB, go back into their chunk and out by bulk copies; the others are stored from
// registers and the chunk is freed as soon as it is read (see ring_layout.cuh).
// Cluster peers exchange (max, sum) through mbarrier inboxes, so the producer never has to meet
// the consumers at a cluster barrier.
//
// Peeled (Io::peel), a slice lies on its row's 16-byte grid (row_peel.cuh): chunks are cut from the
// grid vector its start falls in, bulk copies move the whole vectors, and the consumers load and
// store the head's and tail's vectors element by element. A row whose output starts elsewhere on
// the grid is stored from registers element by element, not by bulk copies.
//
// Rows go to clusters one at a time from a counter in global memory (RowParams::row_claims),
// so a cluster that runs ahead takes more of them: with fixed shares, clusters given the same
// rows finished apart and the kernel lasted until the last (docs/experiments/row-scheduling.md).
// Rank 0's producer claims each row of its cluster's sequence after the first and sends it to
// every block's row box.
//
// The consumers are one or two groups of Group threads, each holding whole rows, the
// groups taking turns: while one group waits on its row's exchange, the other reduces or writes
// the next (docs/experiments/ring.md).
#pragma once

#include "bulk_copy.cuh"
#include "cluster_inbox.cuh"
#include "consumer_reduce.cuh"
#include "grid_dependency.cuh"
#include "held_row.cuh"
#include "l2_prefetch.cuh"
#include "pack.cuh"
#include "peeled_pack.cuh"
#include "ring_layout.cuh"
#include "ring_rows.cuh"
#include "row_math.cuh"
#include "row_peel.cuh"

namespace kjit {

/// A block's row slice cut into chunks, the Group consumer threads of a group (one of Threads /
/// Group) holding packs t, t + Group, ... of each chunk, and the ring of chunks (ring_shape).
template <int Op, typename In, int Cols, int Threads, int Group, int Cluster, bool Peel>
struct RingLayout {
  static constexpr RingShape kShape =
      ring_shape(Cols, static_cast<int>(sizeof(In)), Op, Cluster, Threads, Group, Peel);
  static constexpr int kPack = kBulkUnitBytes / static_cast<int>(sizeof(In));
  static constexpr int kSliceCols = static_cast<int>(kShape.slice_cols);
  static constexpr int kChunks = static_cast<int>(kShape.chunks);  // per row slice
  static constexpr int kChunkBytes = static_cast<int>(kShape.chunk_bytes);
  static constexpr int kChunkPacks = static_cast<int>(kShape.chunk_packs);  // per consumer thread
  static constexpr int kChunkCols = static_cast<int>(kShape.chunk_cols);
  static constexpr int kValues = static_cast<int>(kShape.values_per_thread);
  static constexpr bool kBulkStores = kShape.bulk_stores;
  static constexpr int kRingChunks = static_cast<int>(kShape.ring_chunks);
  static constexpr bool kWords = kShape.words;

  static_assert(kChunkPacks * Group * kBulkUnitBytes == kChunkBytes, "ring: threads must divide a chunk's packs");
  static_assert((Cluster - 1) * kSliceCols < Cols, "ring: a cluster block would get no columns");
  static_assert(kValues <= ring_max_values(kWords), "ring: at most 64 registers of values a thread");
  static_assert(kRingChunks > kChunks, "ring: the ring holds a row slice and more");
};

/// Which chunk of the block's sequence (row after row, kChunks each) goes where: chunk g of the
/// sequence uses slot g % kRingChunks, in that slot's (g / kRingChunks)-th phase.
template <typename Layout>
struct RingSchedule {
  __device__ __forceinline__ static int chunk_of(long long g) { return static_cast<int>(g % Layout::kChunks); }
  __device__ __forceinline__ static int slot_of(long long g) { return static_cast<int>(g % Layout::kRingChunks); }
  __device__ __forceinline__ static unsigned phase_of(long long g) {
    return static_cast<unsigned>((g / Layout::kRingChunks) & 1);
  }
};

/// The producer lane: fills the ring in sequence order and, for bulk stores, writes each chunk
/// the consumers hand back. A slot is refilled once its previous chunk is free: read by the
/// consumers, or (bulk stores) read out by its store, which is given a chunk's time first.
template <typename Layout, bool Peel, int Cluster, int Groups, typename In, typename Out>
__device__ __forceinline__ void ring_producer(const RowParams& params, const RowSequence& sequence,
                                              int slice_begin, int slice_cols, In* ring, BulkBarrier* landed,
                                              CountBarrier* drained) {
  typedef RingSchedule<Layout> Schedule;
  // The rows of the sequence, asked for in order: chunk g is real while its row is.
  RowClaimer<Cluster, Groups> claimer(sequence);
  long long past_rows = 0x7fffffffffffffffLL, known_j = -1, known_row = -1;
  auto row_of = [&](long long g) {
    const long long j = g / Layout::kChunks;
    if (j != known_j) {
      claimer.claim_through(j);
      known_j = j;
      known_row = sequence.row(j);
    }
    return known_row;
  };
  auto real = [&](long long g) {
    if (g / Layout::kChunks >= past_rows) return false;
    if (row_of(g) >= 0) return true;
    past_rows = g / Layout::kChunks;
    return false;
  };
  constexpr int kPack = Layout::kPack;
  // The whole vectors of chunk g of its row's slice on the grid `grid`: [begin, end) of its columns.
  auto chunk_body = [&](long long g, const SliceGrid& grid) {
    const int first = Schedule::chunk_of(g) * Layout::kChunkCols;
    const int begin = first > grid.body_begin ? first : grid.body_begin;
    const int last = first + Layout::kChunkCols;
    return int2{begin, last < grid.body_end ? last : grid.body_end};
  };
  auto slot = [&](long long g) { return ring + Schedule::slot_of(g) * Layout::kChunkCols; };
  auto slice_in = [&](long long g) {
    return static_cast<const In*>(params.in) + row_of(g) * params.in_stride + slice_begin;
  };
  auto load = [&](long long g) {
    BulkBarrier& barrier = landed[Schedule::slot_of(g)];
    const In* in = slice_in(g);
    const SliceGrid grid = slice_grid<Peel, kPack>(in, slice_cols);
    const int2 body = chunk_body(g, grid);
    const unsigned bytes = body.y > body.x ? static_cast<unsigned>((body.y - body.x) * sizeof(In)) : 0u;
    barrier.expect_bytes(bytes);
    if (bytes > 0)
      bulk_load(slot(g) + (body.x - Schedule::chunk_of(g) * Layout::kChunkCols), in - grid.lead + body.x, bytes,
                barrier);
  };
  for (long long g = 0; g < Layout::kRingChunks && real(g); ++g) load(g);
  if constexpr (!Layout::kBulkStores) {
    for (long long g = Layout::kRingChunks; real(g); ++g) {
      drained[Schedule::slot_of(g)].wait(Schedule::phase_of(g - Layout::kRingChunks));
      load(g);
    }
    claimer.finish();
  } else {
    for (long long g = 0; real(g); ++g) {
      drained[Schedule::slot_of(g)].wait(Schedule::phase_of(g));
      // Outputs on the input's grid went back into the chunk; the others went out from the
      // consumers' registers, element by element.
      const SliceGrid grid = slice_grid<Peel, kPack>(slice_in(g), slice_cols);
      Out* out = static_cast<Out*>(params.out) + row_of(g) * params.out_stride + slice_begin;
      if (output_on_input_grid(grid.lead, slice_grid<Peel, kPack>(out, slice_cols).lead)) {
        const int2 body = chunk_body(g, grid);
        if (body.y > body.x)
          bulk_store(out - grid.lead + body.x, slot(g) + (body.x - Schedule::chunk_of(g) * Layout::kChunkCols),
                     static_cast<unsigned>((body.y - body.x) * sizeof(Out)));
      }
      bulk_commit();
      if (g >= 1 && real(g - 1 + Layout::kRingChunks)) {
        // The chunk before this one has been read out. Its consumers' staged outputs came first
        // (their proxy fence and arrival on drained, the wait above), so the refill cannot land
        // under them, though a race checker that misses that chain reports a WAW hazard here.
        bulk_wait_read<1>();
        load(g - 1 + Layout::kRingChunks);
      }
    }
    claimer.finish();
    bulk_wait_all();  // shared memory stays until the last store has read it
  }
}

/// (max, sum) or (max, 0) of this block's slice of its j-th row, merged with every cluster peer's
/// through inbox set j % Sets; every thread of the consumer group (t: its index there) gets the
/// merged pair. With G groups taking turns there are 2G sets: a peer writes a set again 2G rows
/// on, after this block has sent the pair of the row G on (the same group's next), which it does
/// only after reading this one.
template <int Cluster, int Sets, bool TwoStats, typename FirstOp>
__device__ __forceinline__ OnlineStats exchange_row_stats(OnlineStats mine, int j, unsigned rank, int t,
                                                          ClusterInbox (&inbox)[Sets],
                                                          float2 (&values)[Sets][Cluster]) {
  const int set = j % Sets;
  if (t < Cluster) {
    float2 pair;
    pair.x = mine.max;
    pair.y = mine.sum;
    announce_bytes(inbox[set], t, sizeof(float2));
    send_8_bytes(&values[set][0], static_cast<int>(rank), t, pair, inbox[set]);
  }
  inbox[set].wait(static_cast<unsigned>((j / Sets) & 1));
  // Each segment of lanes merges every peer's pair.
  constexpr int kWidth = segment_lanes(Cluster);
  const unsigned peer = threadIdx.x % kWidth;
  if constexpr (TwoStats) {
    return warp_merge<kWidth>(peer < Cluster ? OnlineStats{values[set][peer].x, values[set][peer].y}
                                             : OnlineStats::empty());
  } else {
    return {warp_all_reduce<kWidth>(peer < Cluster ? values[set][peer].x : FirstOp::identity(), FirstOp()), 0.0f};
  }
}

/// Asks L2 for this block's slice of its cluster's first row, the one row it knows before any
/// claim, ahead of the grid-dependency wait: a cluster launched early, as the kernel before it
/// drains, then finds that row in L2 or on its way when the wait ends, instead of the whole
/// ring's loads starting from DRAM together. Asking for more rows (the next fixed entries,
/// which claims may hand elsewhere) did no better
/// (docs/experiments/prefetch-and-dependent-launch.md#first-rows-asked-of-l2-before-the-wait).
template <typename In>
__device__ __forceinline__ void prefetch_first_slice(const RowParams& params, const RowSequence& sequence,
                                                     int slice_begin, int bulk_end) {
  const long long row = sequence.fixed_row(0);
  if (row >= 0 && bulk_end > 0)
    prefetch_l2(static_cast<const In*>(params.in) + row * params.in_stride + slice_begin, bulk_end * sizeof(In));
}

/// The first statistic of one pack (max, or max |x|), folded as a tree, so that a thread's
/// chain of dependent steps to its row's statistic grows by a pack's depth, not its size.
template <typename Math, int N>
__device__ __forceinline__ float pack_first(const float (&x)[N]) {
  static_assert((N & (N - 1)) == 0, "pack_first: a power-of-two pack");
  float t[N];
#pragma unroll
  for (int i = 0; i < N; ++i) t[i] = Math::first_term(x[i]);
#pragma unroll
  for (int width = N / 2; width > 0; width /= 2)
#pragma unroll
    for (int i = 0; i < width; ++i) t[i] = typename Math::FirstOp()(t[i], t[i + width]);
  return t[0];
}

template <int Op, typename Io, int Cols, int Threads, int Group, int Cluster>
__global__ void __launch_bounds__(Threads + kRingProducerThreads, 1)
ring(const RowParams params) {
  typedef typename Io::in In;
  typedef typename Io::out Out;
  typedef RowMath<Op> Math;
  typedef RingLayout<Op, In, Cols, Threads, Group, Cluster, Io::peel> Layout;
  typedef RingSchedule<Layout> Schedule;
  constexpr int kPack = Layout::kPack;
  constexpr int kChunkPacks = Layout::kChunkPacks;
  static_assert(sizeof(In) == sizeof(Out), "ring: outputs take their inputs' places");
  static_assert(Threads % 32 == 0 && Threads >= 64 && Threads <= 1024 - kRingProducerThreads,
                "ring: 64..992 consumer threads");
  static_assert(Threads == Group || Threads == 2 * Group, "ring: one or two consumer groups");
  static_assert(Cluster >= 1 && Cluster <= kMaxClusterBlocks, "ring: 1..16 blocks per row");
  constexpr int kGroups = Threads / Group;
  constexpr int kSets = 2 * kGroups;  // inbox sets (see exchange_row_stats)
  typedef HeldRow<Op, In, Layout::kChunks * kChunkPacks, kPack, Layout::kWords> Held;

  extern __shared__ __align__(128) unsigned char smem_raw[];
  In* ring = reinterpret_cast<In*>(smem_raw);
  __shared__ BulkBarrier landed[Layout::kRingChunks];
  __shared__ CountBarrier drained[Layout::kRingChunks];  // the consumer threads are done with a chunk
  __shared__ ClusterInbox inbox[kSets];
  __shared__ __align__(16) float2 peer_stats[kSets][Cluster];
  __shared__ ConsumerScratch<Group> group_scratch[kGroups];
  __shared__ ClusterInbox row_inbox[RowSequence::kBox];
  __shared__ long long row_box[RowSequence::kBox];

  unsigned rank = 0;
  if constexpr (Cluster > 1) rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * Layout::kSliceCols;
  const int slice_cols = Cols - slice_begin < Layout::kSliceCols ? Cols - slice_begin : Layout::kSliceCols;
  // The last slice may end off a 16-byte boundary: its last partial pack goes through ordinary
  // accesses (and peeled, the first too).
  const int bulk_end = slice_cols / kPack * kPack;
  // Claimed rows after a fixed first one (see RowSequence); without a counter, all fixed.
  const RowSequence sequence{params.row_claims, params.rows, blockIdx.x / Cluster, gridDim.x / Cluster, rank,
                             row_box, row_inbox};

  if (threadIdx.x == 0) {
    for (int s = 0; s < Layout::kRingChunks; ++s) {
      landed[s].init();
      drained[s].init(Group);  // a chunk is one row's, so one group's: each of its threads arrives
    }
    for (int s = 0; s < kSets; ++s) inbox[s].init(Cluster);
    for (int s = 0; s < RowSequence::kBox; ++s) row_inbox[s].init(1);  // from rank 0
  }
  // Every inbox is set up before any peer sends to it.
  if constexpr (Cluster > 1) {
    cluster_arrive();
    cluster_wait();
  } else {
    __syncthreads();
  }
  if (threadIdx.x == Threads) prefetch_first_slice<In>(params, sequence, slice_begin, bulk_end);
  // Only now, so that a cluster launched early as a dependent has its barriers and its peers
  // ready when the kernel before it is done.
  start_after_prior_grids();
  if (threadIdx.x >= Threads) {
    if (threadIdx.x == Threads)
      ring_producer<Layout, Io::peel, Cluster, kGroups, In, Out>(params, sequence, slice_begin, slice_cols, ring,
                                                                 landed, drained);
    return;
  }

  const int group = static_cast<int>(threadIdx.x) / Group;
  const int t = static_cast<int>(threadIdx.x) % Group;  // within the group
  ConsumerScratch<Group>& scratch = group_scratch[group];
  for (long long j = group;; j += kGroups) {
    const long long row = sequence.row(j);
    if (row < 0) break;
    const long long g0 = j * Layout::kChunks;
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride + slice_begin;
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride + slice_begin;
    // Pack p's first column on the slice's grid (from the vector its start falls in, peeled).
    auto column = [&](int p) {
      return (p / kChunkPacks) * Layout::kChunkCols + ((p % kChunkPacks) * Group + t) * kPack;
    };
    const SliceGrid grid = slice_grid<Io::peel, kPack>(in, slice_cols);
    auto chunk_packs = [&](int k) { return ring + Schedule::slot_of(g0 + k) * Layout::kChunkCols; };

    Held held;
    float first = Math::first_identity();
#pragma unroll
    for (int k = 0; k < Layout::kChunks; ++k) {
      const int slot = Schedule::slot_of(g0 + k);
      const unsigned phase = Schedule::phase_of(g0 + k);
      // With two groups, the slot's previous chunk may be the other group's. Until that group is
      // done with it, its load may still be in flight, and the parity wait on landed would take
      // that chunk's phase for this one's. Later chunks of a row are covered by the producer's
      // order; claimed rows with bulk-stored outputs, by the claims' order.
      if constexpr (kGroups > 1) {
        if (k == 0 && g0 >= Layout::kRingChunks) drained[slot].wait(phase ^ 1u);
      }
      landed[slot].wait(phase);
      const PackOf<In, kPack>* packs = reinterpret_cast<const PackOf<In, kPack>*>(chunk_packs(k));
#pragma unroll
      for (int q = 0; q < kChunkPacks; ++q) {
        const int p = k * kChunkPacks + q;
        if (column(p) >= grid.body_begin && column(p) < grid.body_end) held.take(p, packs + q * Group + t);
        else if constexpr (Io::peel) held.load_peeled(p, in, column(p) - grid.lead, slice_cols);
        else held.load(p, in, column(p), slice_cols);
        if constexpr (!Held::kHoldsWords) first = typename Math::FirstOp()(first, pack_first<Math>(held.v[p]));
      }
      // Each thread releases its own reads: compute-sanitizer's racecheck orders a thread's
      // accesses before its own arrival only, not a warp's before lane 0's after __syncwarp.
      if constexpr (!Layout::kBulkStores) drained[Schedule::slot_of(g0 + k)].arrive();
    }
    if constexpr (Held::kHoldsWords) first = held.own_first();

    float finished = 0.0f, factor = 0.0f;
    if constexpr (Math::kTwoStats) {
      // Each thread's sum against its own max, then one exchange of (max, sum) pairs.
      const float own_max = first;
      OnlineStats stats =
          consumer_merge<Group>(OnlineStats{own_max, held.own_sum(own_max)}, scratch, group, j / kGroups);
      if constexpr (Cluster > 1)
        stats = exchange_row_stats<Cluster, kSets, true, MaxOp>(stats, static_cast<int>(j), rank, t, inbox, peer_stats);
      first = stats.max;
      finished = Math::finish(stats.sum);
      if constexpr (Op == kOpSoftmax) factor = Math::own_factor(own_max, first, finished);
    } else {
      first = consumer_all_reduce<Group>(first, typename Math::FirstOp(), scratch, group);
      if constexpr (Cluster > 1)
        first = exchange_row_stats<Cluster, kSets, false, typename Math::FirstOp>({first, 0.0f}, static_cast<int>(j),
                                                                                 rank, t, inbox, peer_stats).max;
    }

    // Peeled, outputs that start elsewhere on the grid than the inputs go out from registers,
    // element by element: realigned stores took registers that spilled beside the held values, and
    // ran 1.7-1.9x slower than block_online (the heuristic peels the ring only where leads match).
    const bool on_grid = output_on_input_grid(grid.lead, slice_grid<Io::peel, kPack>(out, slice_cols).lead);
#pragma unroll
    for (int k = 0; k < Layout::kChunks; ++k) {
      const unsigned slot_address = shared_address(chunk_packs(k));
#pragma unroll
      for (int q = 0; q < kChunkPacks; ++q) {
        const int p = k * kChunkPacks + q;
        float o[kPack];
        held.outputs(p, first, finished, factor, o);
        const bool in_body = column(p) >= grid.body_begin && column(p) < grid.body_end;
        if (!Layout::kBulkStores || !in_body || !on_grid) {
          if constexpr (Io::peel) store_peeled_words<Out, kPack>(out, column(p) - grid.lead, slice_cols, o, on_grid);
          else if (column(p) < slice_cols) store_pack_words<Out, kPack>(out, column(p), slice_cols, o);
        } else {
          unsigned words[4];
          pack_words<Out, kPack>(o, words);
          store_shared_v4(slot_address + (q * Group + t) * 16u, words);
        }
      }
      if constexpr (Layout::kBulkStores) {
        // This thread's outputs, before the producer's bulk copy reads them and its refill of the
        // chunk (an async-proxy write) overwrites them: fence, this thread's releasing arrival,
        // the producer's acquiring wait, then its store and bulk_wait_read.
        fence_before_bulk_copy();
        drained[Schedule::slot_of(g0 + k)].arrive();
      }
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && rank == 0 && t == 0) params.scale_out[row] = first;
    }
  }
}

}  // namespace kjit
