// SPDX-License-Identifier: Apache-2.0
// The row-wise heuristic's rules, one row each: a shape on a nominal device, the algorithm the
// rule gives it (and, where the rule decides more, a part of the config), and the rule in one
// line. Together the rows take every branch of choose_rowwise_config; README's algorithm table
// states the same rules. Rows are planned as the dispatcher plans them: the top of their
// bucket, a power of two. The H100 (sm_90) has 132 SMs, the A100 (sm_80) 108.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>

#include "runtime/driver/nominal_device.h"
#include "kjit/kjit.hpp"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "support/heuristic_sweep.h"

using namespace kjit;

namespace {

constexpr DType f32 = DType::kF32, f16 = DType::kF16, bf16 = DType::kBF16;
constexpr Algorithm warp = Algorithm::kWarp, block_regs = Algorithm::kBlockRegs,
                    block_smem = Algorithm::kBlockSmem, block_online = Algorithm::kBlockOnline,
                    cluster = Algorithm::kCluster, cluster_smem = Algorithm::kClusterSmem,
                    ring = Algorithm::kRing, block_split = Algorithm::kBlockSplit, flat_tile = Algorithm::kFlatTile;

struct Rule {
  const char* rule;
  int arch;
  DType in, out;
  std::int64_t rows, cols;
  int max_pack;  ///< 0: 16 bytes of the wider type
  Algorithm expected;
  const char* detail;  ///< a part of the pick's to_string() the rule also decides, or ""
  RowOp op = RowOp::kSoftmax;
  bool dense = false;  ///< both strides equal the width
  bool leads_match = false;  ///< outputs on the inputs' grid (RowwiseProblem::leads_match)
};

const Rule kRules[] = {
    // Rows in registers.
    {"a warp holds rows of up to 32 values a lane -> warp", 90, f32, f32, 65536, 1024, 0, warp, ""},
    {"16-bit rows of up to 1024 columns, held by a warp -> warp", 90, bf16, bf16, 16384, 1024, 0, warp, ""},
    {"rows off the alignment that are not dense keep the pack it allows (dense ones are peeled or tiled) -> warp", 90,
     bf16, bf16, 65536, 49, 1, warp, "pack=1 threads=256 group=16 cluster=1"},
    {"many rows under 128 columns: blocks of 256, half as many -> warp", 90, f32, f32, 131072, 96, 0, warp,
     "pack=4 threads=256"},
    {"too few for four such blocks an SM: blocks of 128 cover more SMs -> warp", 90, f32, f32, 1024, 96, 0, warp,
     "pack=4 threads=128"},
    {"rows whose packs leave a warp's lanes idle: the fewest lanes that load a sector of a row and hold at most 48 "
     "bytes of it each (24 packs: 8 lanes of 3) -> warp",
     90, f32, f32, 131072, 96, 0, warp, "pack=4 threads=256 group=8"},
    {"16-bit rows of 20 packs: 8 lanes of 3 packs, several rows a warp -> warp", 90, bf16, bf16, 262144, 160, 0,
     warp, "pack=8 threads=128 group=8"},
    {"rows of 2-byte packs: 16 lanes, a sector a load -> warp", 90, bf16, bf16, 262144, 257, 1, warp,
     "pack=1 threads=128 group=16"},
    {"rows of 128 columns and more keep blocks of 128 -> warp", 90, bf16, bf16, 65536, 128, 0, warp,
     "pack=8 threads=128 group=16"},
    {"a column more than a warp holds, under 32 KB a row -> block_regs", 90, f32, f32, 16384, 1025, 0, block_regs, ""},
    {"rows under 32 KB stay in a block's registers -> block_regs", 90, bf16, bf16, 8192, 4096, 0, block_regs, ""},
    {"fp32 rows under 32 KB -> block_regs", 90, f32, f32, 8192, 4096, 0, block_regs, ""},
    {"few rows narrower than 4096 columns do not pay a cluster's exchange -> block_regs", 90, f32, f32, 16, 2048, 0,
     block_regs, ""},
    {"the same on sm_80 -> block_regs", 80, bf16, bf16, 8192, 4096, 0, block_regs, ""},
    {"sm_80 has no clusters: a block of 1024 holds 16-bit rows of 32000 at pack 1 -> block_regs", 80, bf16, bf16,
     1024, 32000, 1, block_regs, "threads=1024"},
    {"sm_90: padded 16-bit rows off the alignment that need all 1024 threads at pack 1 (no block_split at 2-byte "
     "packs) are held peeled by 1024 threads, whose shares store realigned -> block_regs",
     90, bf16, bf16, 1024, 32000, 1, block_regs, "threads=1024 group=1024 cluster=1 peel"},

    // Padded and offset rows off the alignment (not dense): peeled only where a block holds them only peeled.
    {"padded bf16 rows a block holds at their own pack keep it unpeeled -> block_regs", 90, bf16, bf16, 65536,
     2060, 2, block_regs, "pack=2"},
    {"padded bf16 rows of 18617 into fp32 that a block holds only peeled -> block_regs peeled, not block_online", 90,
     bf16, f32, 1024, 18617, 1, block_regs, "pack=4 threads=512 group=512 cluster=1 peel"},

    // block_split: rows of 32 KB or more, every thread slot of an SM resident.
    {"many 16-bit rows of 32 KB or more that block_split holds filling an SM -> block_split", 90, bf16, bf16, 1024,
     32000, 0, block_split, ""},
    {"fp32 rows of 64 KB -> block_split", 90, f32, f32, 2048, 16384, 0, block_split, ""},
    {"bf16 rows of 128 KB still fill an SM at 1024 threads -> block_split", 90, bf16, bf16, 512, 65536, 0,
     block_split, ""},
    {"mixed dtypes: the input's 32 KB rows decide -> block_split", 90, f32, bf16, 1024, 32000, 0, block_split, ""},
    {"on sm_80 too, with its smaller shared memory -> block_split", 80, bf16, bf16, 1024, 32000, 0, block_split, ""},
    {"reduce_scale's threads need more registers beside the held packs: 128 KB bf16 rows no longer fill an SM -> "
     "ring",
     90, bf16, bf16, 512, 65536, 0, ring, "", RowOp::kReduceScale},
    {"nor do its fp32 rows of 32000 into bf16 -> block_regs", 90, f32, bf16, 1024, 32000, 0, block_regs, "",
     RowOp::kReduceScale},
    {"log_softmax's like softmax's -> block_split", 90, bf16, bf16, 512, 65536, 0, block_split, "",
     RowOp::kLogSoftmax},

    // Few rows (at most a quarter of the SMs), sm_90: a cluster a row, or the ring.
    {"one to seven wide rows: clusters of 16 a row fill the SMs in one round -> cluster", 90, bf16, bf16, 1, 151936,
     0, cluster, "cluster=16"},
    {"fp32, four rows (calls of 3-4) -> cluster over 16 blocks", 90, f32, f32, 4, 128256, 0, cluster, "cluster=16"},
    {"clusters of 16 take blocks of 256 threads", 90, bf16, bf16, 1, 151936, 0, cluster,
     "threads=256 group=256 cluster=16"},
    {"more where 256 would hold more than 32 values a thread -> 512", 90, f32, f32, 1, 151936, 0, cluster,
     "threads=512 group=512 cluster=16"},
    {"eight rows (calls of 5-8) would take clusters of 16 past one round -> cluster over 8 blocks", 90, bf16, bf16,
     8, 151936, 0, cluster, "cluster=8"},
    {"16 rows of 16-bit keep the cluster kernel -> cluster", 90, bf16, bf16, 16, 151936, 0, cluster, ""},
    {"16 fp32 rows the ring takes over clusters of 8 keep the cluster kernel -> cluster", 90, f32, f32, 16, 131072,
     0, cluster, ""},
    {"16 fp32 rows the ring needs clusters of 16 for -> ring, two consumer groups", 90, f32, f32, 16, 151936, 0,
     ring, "group=256"},
    {"32 rows (calls of 17-32) of 16-bit rows over 128 KB -> ring, two groups over one-chunk slices", 90, bf16, bf16,
     32, 151936, 0, ring, "group=256 cluster=16"},
    {"32 fp32 rows over 128 KB -> ring", 90, f32, f32, 32, 32769, 0, ring, "group=256"},
    {"32 fp32 rows of exactly 128 KB keep the cluster kernel -> cluster", 90, f32, f32, 32, 32768, 0, cluster, ""},
    {"32 16-bit rows wider than 16 one-chunk slices -> cluster", 90, bf16, bf16, 32, 262147, 0, cluster, ""},
    {"mixed element sizes cannot write outputs over inputs: no ring -> cluster", 90, bf16, f32, 32, 262144, 0,
     cluster, ""},
    {"few fp32 rows too wide for a cluster's registers and for the ring's 16 slices of two chunks -> block_online "
     "over enough blocks for half the SMs, 1024 threads each for slices of 64K",
     90, f32, f32, 1, 1 << 20, 0, block_online, "threads=1024 group=1024 cluster=16"},
    {"a 16-bit row of 2^30 columns -> block_online over enough blocks to fill half the SMs", 90, bf16, bf16, 1,
     std::int64_t{1} << 30, 0, block_online, "cluster=16"},

    // Wide rows, more than a quarter of the SMs, sm_90.
    {"up to 2 x SMs fp32 rows of up to 256K columns -> ring, two groups", 90, f32, f32, 64, 262144, 0, ring,
     "group=256 cluster=16"},
    {"the ring over the fewest blocks whose slices fit two chunks -> ring over 8", 90, f32, f32, 64, 128256, 0, ring,
     "cluster=8"},
    {"2 x SMs is the fp32 bound: 256 rows -> ring", 90, f32, f32, 256, 262144, 0, ring, ""},
    {"more than 2 x SMs fp32 rows too wide for a block's registers -> cluster_smem, a cluster a row", 90, f32, f32,
     512, 65536, 0, cluster_smem, "grid=per_row"},
    {"up to 2 x SMs fp32 rows too wide for the ring -> block_online over slices of 128K columns, 1024 threads", 90,
     f32, f32, 64, 1 << 20, 0, block_online, "threads=1024 group=1024 cluster=8"},
    {"more than 2 x SMs fp32 rows too wide for 16 slices of shared memory -> block_online", 90, f32, f32, 512,
     1 << 20, 0, block_online, ""},
    {"rows that 8 blocks hold in slices of at most 128K columns but that leave half the SMs without one take more "
     "blocks -> block_online",
     90, f32, bf16, 8, 1 << 20, 0, block_online, "threads=1024 group=1024 cluster=16"},
    {"more than 2 x SMs 16-bit rows too wide for block_split -> ring, one group", 90, bf16, bf16, 512, 131072, 0,
     ring, "threads=512 group=512"},
    {"f16 like bf16 -> ring", 90, f16, f16, 512, 131072, 0, ring, ""},
    {"more than 2 x SMs 16-bit rows too wide for the ring's 16 slices -> block_online", 90, bf16, bf16, 512, 1 << 20,
     0, block_online, ""},
    {"up to 2 x SMs 16-bit rows whose one-chunk slices fill half the SMs -> ring, two groups", 90, bf16, bf16, 64,
     262144, 0, ring, "group=256 cluster=16"},
    {"the two groups stay over clusters of 16 where 15 or 14 blocks would also hold a chunk each -> ring", 90, bf16,
     bf16, 64, 200000, 0, ring, "group=256 cluster=16"},
    {"256 such rows over clusters of 8 -> ring, two groups", 90, bf16, bf16, 256, 131072, 0, ring,
     "group=256 cluster=8"},
    {"up to 2 x SMs 16-bit rows too wide for 16 one-chunk slices -> block_online over slices of 128K columns",
     90, bf16, bf16, 64, 524288, 0, block_online, "threads=1024 group=1024 cluster=4"},
    {"a column more than 4 slices of 128K hold -> block_online over 8 slices of 64K + 1, 1024 threads", 90, bf16,
     bf16, 64, 131072 * 4 + 1, 0, block_online, "threads=1024 group=1024 cluster=8"},
    {"few fp32 rows of 400000 columns take 16 blocks for half the SMs, 1024 threads for slices of 64 KB "
     "or more -> block_online", 90, f32, bf16, 8, 400000, 0, block_online, "threads=1024 group=1024 cluster=16"},

    // sm_80: no clusters, no bulk copies.
    {"sm_80: rows too wide for registers that fit a block's shared memory -> block_smem", 80, f32, f32, 1024, 40000,
     0, block_smem, ""},
    {"sm_80: rows wider than a block's shared memory -> block_online", 80, f32, f32, 512, 65536, 0, block_online, ""},
    // Dense rows off the alignment.
    {"dense fp32 rows off the alignment too wide for a block, up to twice the SMs -> the ring peeled, as aligned",
     90, f32, f32, 64, 50257, 1, ring, "pack=4 threads=512 group=256 cluster=4 peel", RowOp::kSoftmax, true},
    {"dense fp32 rows whose ring of two groups would hold the most values a thread peeled -> one group", 90, f32,
     f32, 256, 128257, 1, ring, "pack=4 threads=512 group=512 cluster=8 peel", RowOp::kSoftmax, true},
    {"dense 16-bit rows whose peeled ring would hold the most values a thread -> block_online peeled", 90, f16, f16,
     512, 109363, 1, block_online, "pack=8 threads=1024 group=1024 cluster=1 peel", RowOp::kReduceScale, true},
    // Padded and offset rows off the alignment too wide for a block.
    {"fp32 rows whose outputs lie off their inputs' grid, up to twice the SMs -> block_online, not the ring", 90,
     f32, f32, 64, 50257, 1, block_online, "pack=1"},
    {"many fp32 rows -> cluster_smem peeled at the widest pack, clusters of 8 where two blocks share an SM", 90, f32,
     f32, 2048, 174389, 1, cluster_smem, "pack=4 threads=512 group=512 cluster=8 grid=per_row peel"},
    {"many fp32 rows whose slices over 8 blocks an SM holds alone -> cluster_smem over 16", 90, f32, f32, 1024, 256000,
     4, cluster_smem, "pack=4 threads=512 group=512 cluster=16 grid=per_row"},
    {"many 16-bit rows to fp32 -> the cluster kernel peeled, threads for realigned stores", 90, f16, f32, 1024,
     142833, 1, cluster, "pack=4 threads=512 group=512 cluster=8 peel"},
    {"many aligned 16-bit rows to fp32 -> the cluster kernel, 512 threads over the fewest blocks that hold a slice, "
     "a cluster a row", 90, f16, f32, 1024, 100000, 0, cluster, "pack=4 threads=512 group=512 cluster=4 grid=per_row"},
    {"16-bit rows to fp32 past 16 an SM that block_online holds a row a block -> block_online peeled", 90, f16, f32,
     4096, 115183, 1, block_online, "pack=4 threads=1024 group=1024 cluster=1 peel"},
    {"many 16-bit rows whose outputs lie on their inputs' grid -> the ring peeled", 90, bf16, bf16, 1024, 67802, 1,
     ring, "pack=8 threads=512 group=512 cluster=4 peel", RowOp::kSoftmax, false, true},
    {"dense fp32 rows of 16 columns or more off the alignment -> warp at pack 1, 8 lanes a row, not a flat tile or "
     "a peeled warp",
     90, f32, f32, 65536, 63, 1, warp, "pack=1 threads=256 group=8 cluster=1", RowOp::kSoftmax, true},
    {"dense fp32 rows under 16 columns off the alignment -> flat_tile", 90, f32, f32, 65536, 15, 1, flat_tile, "",
     RowOp::kSoftmax, true},
    {"dense bf16 rows under 64 columns off the alignment -> flat_tile", 90, bf16, bf16, 65536, 63, 1, flat_tile, "",
     RowOp::kSoftmax, true},
    {"dense bf16 rows of 64 columns or more off the alignment, calls under 16 MiB -> warp at their own pack, not "
     "peeled", 90, bf16, bf16, 65536, 77, 1, warp, "pack=1 threads=256 group=16 cluster=1", RowOp::kSoftmax, true},
    {"dense bf16 rows of 64-256 columns off the alignment, calls of 16 MiB or more -> flat_tile in blocks of 128", 90,
     bf16, bf16, 131072, 197, 1, flat_tile, "threads=128 group=16", RowOp::kSoftmax, true},

    {"sm_80: few wide rows, no clusters -> block_online, a block a row", 80, f32, f32, 1, 151936, 0, block_online,
     "cluster=1"},
    {"sm_80: a warp holds rows of up to 32 values a lane -> warp", 80, f32, f32, 65536, 1024, 0, warp, ""},
};

RowwiseProblem problem_of(const Rule& r) {
  const int widest = 16 / std::max(size_of(r.in), size_of(r.out));
  RowwiseProblem p{r.op, r.in, r.out, r.rows, r.cols, r.max_pack > 0 ? r.max_pack : widest};
  p.dense = r.dense;
  // Aligned and dense rows (from equally aligned tensors) have their outputs on their inputs' grid.
  p.leads_match = r.dense || r.leads_match || p.max_pack == widest;
  return p;
}

}  // namespace

TEST_CASE("each rule picks its algorithm") {
  for (const Rule& r : kRules) {
    const RowwiseProblem p = problem_of(r);
    const DeviceProps device = nominal_device(r.arch);
    REQUIRE(bucket_rows(rows_bucket(r.rows)) == r.rows);  // planned rows, as the dispatcher has them
    const KernelConfig pick = choose_rowwise_config(p, device);
    const bool matches = pick.algorithm == r.expected && pick.to_string().find(r.detail) != std::string::npos;
    CHECK_MESSAGE(matches, std::string(r.rule) << "\n  " << test::describe(p, device) << " picked "
                                               << pick.to_string());
  }
}

TEST_CASE("the rule table covers every algorithm the heuristic picks, on both archs") {
  std::set<std::pair<int, Algorithm>> seen;
  for (const Rule& r : kRules) seen.insert({r.arch, r.expected});
  for (Algorithm a : {warp, block_regs, block_split, block_online, cluster, cluster_smem, ring})
    CHECK_MESSAGE(seen.count({90, a}), "no sm_90 rule for " << std::string(to_string(a)));
  for (Algorithm a : {warp, block_regs, block_split, block_smem, block_online})
    CHECK_MESSAGE(seen.count({80, a}), "no sm_80 rule for " << std::string(to_string(a)));
}
