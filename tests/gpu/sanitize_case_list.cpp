// SPDX-License-Identifier: Apache-2.0
#include "sanitize_case_list.h"

#include "row_batch.h"

namespace kjit::sanitize {
namespace {

using test::BatchLayout;

KernelConfig ring(int pack, int threads, int group, int cluster) {
  return {Algorithm::kRing, pack, threads, group, cluster};
}
KernelConfig peeled_ring(int pack, int threads, int group, int cluster) {
  KernelConfig config = ring(pack, threads, group, cluster);
  config.peel = true;
  return config;
}
KernelConfig forced(Algorithm algorithm, int cluster = 0) { return {algorithm, 0, 0, 0, cluster}; }
KernelConfig peeled(Algorithm algorithm, int cluster = 0) {
  KernelConfig config{algorithm};
  config.cluster = cluster;
  config.peel = true;
  return config;
}

// Swin windows: 49 tokens (strips and keys padded inside the kernel), a bias and a mask with
// fully masked rows, more problems than the grid's groups so that stages are refilled.
AttentionRun windows(AttentionConfig config) {
  AttentionCase c;
  c.batch = 300;
  c.heads = 3;
  c.m = c.n = 49;
  c.d = c.dv = 32;
  c.bias = c.mask = true;
  c.mask_dtype = DType::kBF16;
  c.mask_windows = 4;
  c.masked_fraction = 0.3;
  c.masked_rows = 0.1;
  return {c, config};
}

// 197 tokens over key blocks (online softmax), causal, bf16.
AttentionRun long_causal(AttentionConfig config) {
  AttentionCase c;
  c.dtype = DType::kBF16;
  c.batch = 40;
  c.heads = 4;
  c.m = c.n = 197;
  c.d = c.dv = 64;
  c.causal = true;
  return {c, config};
}

}  // namespace

// Each ring case passes more chunks through a block than its ring has slots (H100: 7 clusters of
// 16, 16 of 8, 132 blocks of 1 share the rows), so that slots are reused, in as few bytes as its
// layout allows: racecheck's time grows with the shared-memory traffic. Chunks of one 16-byte
// vector a consumer (4 KB for 256, 8 KB for 512) fill a ring with 12 slots, so 13 rows a cluster;
// the log-softmax bulk stores need slices of 28 KB, and two chunks a slice more than 32 KB.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"ring-bf16-2g-c16", "two groups, clusters of 16, bulk stores, slots alternating groups",
       RowCase{RowOp::kSoftmax, DType::kBF16, 91, 32768, ring(8, 512, 256, 16)}, {}},
      {"ring-bf16-2g-c16-log", "log-softmax's bulk stores of rows held as loaded words (28 KB slices)",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 63, 229376, ring(8, 512, 256, 16)}, {}},
      {"ring-bf16-2g-c16-regs", "two groups storing from registers, twelve slots alternating groups",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 91, 32768, ring(8, 512, 256, 16)}, {}},
      {"ring-bf16-2g-c8", "two groups, clusters of 8",
       RowCase{RowOp::kSoftmax, DType::kBF16, 208, 16384, ring(8, 512, 256, 8)}, {}},
      {"ring-bf16-1g-c8", "one group of 512, register stores",
       RowCase{RowOp::kSoftmax, DType::kBF16, 208, 32768, ring(8, 512, 512, 8)}, {}},
      {"ring-f32-2g-c16", "fp32, two groups, clusters of 16, slices of two chunks",
       RowCase{RowOp::kSoftmax, DType::kF32, 42, 131200, ring(4, 512, 256, 16)}, {}},
      {"ring-f32-1g-c8", "fp32, one group, clusters of 8, reduce_scale's scales",
       RowCase{RowOp::kReduceScale, DType::kF32, 208, 16384, ring(4, 512, 512, 8)}, {}},
      {"ring-f32-2g-c1", "fp32, two groups, a block a row (no cluster instructions)",
       RowCase{RowOp::kSoftmax, DType::kF32, 1716, 1024, ring(4, 512, 256, 1)}, {}},
      {"cluster", "slices in registers over clusters of 8",
       RowCase{RowOp::kSoftmax, DType::kF32, 16, 131072, forced(Algorithm::kCluster, 8)}, {}},
      {"cluster-smem", "slices in shared memory over clusters of 4",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 16, 131072, forced(Algorithm::kClusterSmem, 4)}, {}},
      {"block-split", "staged packs copied asynchronously",
       RowCase{RowOp::kSoftmax, DType::kF32, 64, 32000, forced(Algorithm::kBlockSplit)}, {}},
      {"stream-rows", "row tiles streamed through shared memory, several rows a block",
       RowCase{RowOp::kSoftmax, DType::kBF16, 512, 1000, forced(Algorithm::kStream, 1)}, {}},
      {"stream-cluster", "row slices streamed over clusters of 4",
       RowCase{RowOp::kSoftmax, DType::kF32, 16, 65536, forced(Algorithm::kStream, 4)}, {}},
      {"block-smem", "a block a row, the row in shared memory",
       RowCase{RowOp::kSoftmax, DType::kF32, 32, 12345, forced(Algorithm::kBlockSmem)}, {}},
      {"block-online", "online (max, sum) over clusters of 2, the row read twice",
       RowCase{RowOp::kSoftmax, DType::kF32, 16, 65536, forced(Algorithm::kBlockOnline, 2)}, {}},
      {"warp", "a warp a row",
       RowCase{RowOp::kSoftmax, DType::kF32, 256, 1000, forced(Algorithm::kWarp)}, {}},
      {"warp-groups", "eight lanes a row, four rows a warp, padded rows of 4-byte packs",
       RowCase{RowOp::kReduceScale, DType::kF16, 1001, 84, forced(Algorithm::kWarp), 86, 88, 2, 0}, {}},
      {"block-regs", "a block a row in registers",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 64, 4097, forced(Algorithm::kBlockRegs)}, {}},
      {"warp-peeled", "a warp a row, each dense row of an odd width on its own vector grid",
       RowCase{RowOp::kSoftmax, DType::kBF16, 256, 49, peeled(Algorithm::kWarp)}, {}},
      {"block-regs-peeled", "rows on their own grids, the output's shift apart: realigned stores",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 64, 4097, peeled(Algorithm::kBlockRegs), 4099, 4105, 1, 3}, {}},
      {"block-online-peeled", "slices of a cluster on their own grids, odd strides apart: realigned stores",
       RowCase{RowOp::kSoftmax, DType::kBF16, 24, 20001, peeled(Algorithm::kBlockOnline, 4), 20003, 20009, 1, 3},
       {}},
      {"cluster-peeled", "slices of a cluster in registers on their own grids, odd strides apart: realigned stores",
       RowCase{RowOp::kSoftmax, DType::kF32, 24, 40001, peeled(Algorithm::kCluster, 4), 40003, 40009, 1, 3}, {}},
      {"cluster-smem-peeled", "slices in shared memory on their own grids, outputs read back on theirs",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 24, 40001, peeled(Algorithm::kClusterSmem, 4), 40003, 40009, 1, 3},
       {}},
      {"ring-peeled", "fp32 rows of one lead on both sides: the body by bulk copies, head and tail by elements",
       RowCase{RowOp::kSoftmax, DType::kF32, 208, 16385, peeled_ring(4, 512, 256, 4), 16389, 16393, 1, 1}, {}},
      {"ring-peeled-apart", "16-bit rows whose outputs lie off their inputs' grid: element stores",
       RowCase{RowOp::kSoftmax, DType::kBF16, 208, 32769, peeled_ring(8, 512, 512, 8), 32771, 32777, 1, 3}, {}},
      {"block-split-peeled", "staged packs of odd-width rows: whole vectors copied asynchronously",
       RowCase{RowOp::kSoftmax, DType::kF32, 64, 32001, peeled(Algorithm::kBlockSplit)}, {}},
      {"flat-tile-f16", "dense rows as spans in 16-byte units, the last tile partial, its end peeled",
       RowCase{RowOp::kSoftmax, DType::kF16, 1001, 49, KernelConfig{Algorithm::kFlatTile, 1, 256, 16, 1}}, {}},
      {"flat-tile-f32-scales", "the same over fp32 rows of 77, reduce_scale's scales",
       RowCase{RowOp::kReduceScale, DType::kF32, 333, 77, KernelConfig{Algorithm::kFlatTile, 1, 128, 16, 1}}, {}},
      {"flat-tile-gaps", "rows of narrow gaps as spans, the gaps loaded along and never stored, offsets apart",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 1001, 49, KernelConfig{Algorithm::kFlatTile, 1, 256, 16, 1}, 53, 51,
               1, 3},
       {}},
      {"topk-stream", "softmax + top-K, tiles streamed with a rising threshold",
       {}, TopkCase{DType::kF32, 4, 128256, 50, TopkConfig{0, 0, 0, 0, TopkAlgorithm::kStream}}},
      {"topk-stream-shifted", "softmax + top-K over bf16 rows of an odd stride, read from their 16-byte boundaries",
       {}, TopkCase{DType::kBF16, 5, 50257, 300, TopkConfig{0, 0, 0, 3, TopkAlgorithm::kStream}, 50263, 3}},
      {"topk-resident", "softmax + top-K, the row resident over a cluster of 2",
       {}, TopkCase{DType::kBF16, 8, 32000, 64, TopkConfig{0, 0, 0, 2, TopkAlgorithm::kResident}}},
      {"attention-2stage", "attention, problem groups of 4 warps cycling two cp.async stages",
       {}, {}, windows({4, 2, 2})},
      {"attention-1stage", "attention, eight one-warp groups of one stage each",
       {}, {}, windows({1, 8, 1})},
      {"attention-online", "attention over key blocks with online softmax, causal",
       {}, {}, long_causal({4, 1, 2})},
  };
  return all;
}

const Case* find_case(const std::string& name) {
  for (const Case& c : cases())
    if (name == c.name) return &c;
  return nullptr;
}

std::string describe(const Case& c) {
  std::string text = std::string(c.name) + ": ";
  if (c.row) {
    const RowCase& r = *c.row;
    text += std::string(to_string(r.op)) + " " + to_string(r.dtype) + " " + std::to_string(r.rows) + "x" +
            std::to_string(r.cols) + ", " + r.config.to_string();
    if (r.in_stride != 0 || r.in_offset != 0 || r.out_offset != 0)
      text += " (" + kjit::test::describe(BatchLayout{r.dtype, r.dtype, r.rows, r.cols, r.in_stride, r.out_stride,
                                                      r.in_offset, r.out_offset}) + ")";
  } else if (c.attention) {
    text += "attention " + kjit::test::describe(c.attention->shape) + ", " + c.attention->config.to_string();
  } else {
    const TopkCase& t = *c.topk;
    text += std::string("softmax_topk ") + to_string(t.dtype) + " " + std::to_string(t.rows) + "x" +
            std::to_string(t.cols) + " k=" + std::to_string(t.k) + ", " + t.config.to_string();
  }
  return text + " (" + c.why + ")";
}

}  // namespace kjit::sanitize
