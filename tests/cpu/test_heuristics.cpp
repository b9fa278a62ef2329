// SPDX-License-Identifier: Apache-2.0
// The row-wise configuration space: which configs can run (why_not_rowwise and its reasons),
// the kernels' geometry (ring chunks, grids, dependent launches), the tuner's candidates, pack
// widths from alignment and the rows buckets. What the pick promises for every problem is in
// test_rowwise_pick.cpp, its rules in test_rowwise_rules.cpp, its measurements in
// test_rowwise_measured.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/driver/nominal_device.h"
#include "kjit/kjit.hpp"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_problem.h"
#include "support/heuristic_sweep.h"

using namespace kjit;

namespace {

using test::DTypePair;
using test::describe;

constexpr const auto& kDTypes = test::kCommonDTypePairs;

}  // namespace

TEST_CASE("the heuristic covers the widest row") {
  for (int arch : {80, 90}) {
    const DeviceProps device = nominal_device(arch);
    for (DTypePair d : kDTypes) {
      const RowwiseProblem p{RowOp::kSoftmax, d.in, d.out, 3, kMaxCols, 1};
      const KernelConfig chosen = choose_rowwise_config(p, device);
      CAPTURE(describe(p, device));
      CHECK(why_not_rowwise(p, device, chosen) == "");
    }
  }
}

TEST_CASE("64 values a thread at 256 threads are a candidate for rows a block holds") {
  // Three such blocks still fit an SM; held as floats, they are the layout the tuner tries
  // beside the heuristic's.
  const DeviceProps device = nominal_device(90);
  const RowwiseProblem bf16{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 2048, 16384, 8};
  const RowwiseProblem f32{RowOp::kSoftmax, DType::kF32, DType::kF32, 2048, 16384, 4};
  for (const RowwiseProblem& p : {bf16, f32}) {
    CAPTURE(describe(p, device));
    const KernelConfig layout{Algorithm::kBlockRegs, p.max_pack, 256, 256, 1};
    CHECK(why_not_rowwise(p, device, layout) == "");
    const auto candidates = rowwise_candidates(p, device);
    CHECK(std::find(candidates.begin(), candidates.end(), layout) != candidates.end());
  }
}

TEST_CASE("16-bit values held as loaded words count half the registers") {
  const DeviceProps h100 = nominal_device(90);
  const RowwiseProblem bf16{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 2048, 16384, 8};
  const RowwiseProblem f32{RowOp::kSoftmax, DType::kF32, DType::kF32, 2048, 16384, 4};
  // 128 values a thread: 64 registers as bf16 words, 128 as floats.
  CHECK(why_not_rowwise(bf16, h100, {Algorithm::kBlockRegs, 8, 128, 128, 1}) == "");
  CHECK(why_not_rowwise(f32, h100, {Algorithm::kBlockRegs, 4, 128, 128, 1}).find("64 values") != std::string::npos);
  CHECK(why_not_rowwise(f32, h100, {Algorithm::kBlockRegs, 4, 256, 256, 1}) == "");
  // Odd packs hold floats, and so does a warp's share of a row.
  const RowwiseProblem odd{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 2048, 16383, 1};
  CHECK(why_not_rowwise(odd, h100, {Algorithm::kBlockRegs, 1, 128, 128, 1}).find("64 values") != std::string::npos);
  CHECK(why_not_rowwise(odd, h100, {Algorithm::kBlockRegs, 1, 256, 256, 1}) == "");
  const RowwiseProblem warp_rows{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 2048, 4096, 8};
  CHECK(why_not_rowwise(warp_rows, h100, {Algorithm::kWarp, 8, 128, 32, 1}).find("64 values") != std::string::npos);
  // Cluster slices too: 32768 bf16 columns a block over 256 threads is 128 values.
  const RowwiseProblem wide{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 512, 65536, 8};
  CHECK(why_not_rowwise(wide, h100, {Algorithm::kCluster, 8, 256, 256, 2}) == "");
  CHECK(why_not_rowwise(wide, h100, {Algorithm::kCluster, 8, 128, 128, 2}).find("64 values") != std::string::npos);
}

TEST_CASE("nominal devices look like their archs") {
  const DeviceProps a100 = nominal_device(80);
  const DeviceProps h100 = nominal_device(90);
  CHECK(a100.arch == 80);
  CHECK(h100.arch == 90);
  CHECK(a100.sm_count == 108);
  CHECK(h100.sm_count == 132);  // the rule tables and the H100's recorded measurements assume it
  CHECK(a100.max_smem_per_block >= 48 * 1024);
  CHECK(h100.max_smem_per_block >= a100.max_smem_per_block);
}

TEST_CASE("block_split's fitted layouts run, and it names what it refuses") {
  // Its picks are rules in test_rowwise_rules.cpp; here the fitting and the refusals.
  const DeviceProps h100 = nominal_device(90);
  // Smaller shared memories (A100: 164 KB an SM; sm_86: 100 KB and 1536 threads) fit their own.
  for (int arch : {80, 86}) {
    const DeviceProps d = nominal_device(arch);
    const RowwiseProblem p{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 1024, 32000, 8};
    CHECK(why_not_rowwise(p, d, choose_rowwise_config(p, d)) == "");
  }
  // Forced threads keep their count and get their own staging.
  const RowwiseProblem p{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 1024, 32000, 8};
  const KernelConfig forced = complete_rowwise_config(p, h100, KernelConfig{Algorithm::kBlockSplit, 8, 1024});
  CHECK(forced.threads == 1024);
  CHECK(why_not_rowwise(p, h100, forced) == "");
  // Smaller shared memory (sm_86: 100 KB an SM) stages fewer bytes a block.
  const KernelConfig small = complete_rowwise_config(p, nominal_device(86), KernelConfig{Algorithm::kBlockSplit});
  CHECK(split_smem_bytes(p, small) <= 99 * 1024);
  CHECK(why_not_rowwise(p, nominal_device(86), small) == "");
  // What it refuses, by name.
  auto why = [&](KernelConfig c) { return why_not_rowwise(p, h100, c); };
  KernelConfig c{Algorithm::kBlockSplit, 8, 512, 512, 1, ClusterGrid::kResident, 6};
  CHECK(why(c) == "");
  c.staged = 9;
  CHECK(why(c).find("staged must be 1..8") != std::string::npos);
  c.staged = 8;  // 64 KB a block: fits, three blocks an SM
  CHECK(why(c) == "");
  c = {Algorithm::kBlockSplit, 8, 128, 128, 1, ClusterGrid::kResident, 1};  // 31 packs held: 124 registers
  CHECK(why(c).find("registers") != std::string::npos);
  const RowwiseProblem wide{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 64, 131072, 8};
  c = {Algorithm::kBlockSplit, 8, 1024, 1024, 1, ClusterGrid::kResident, 16};  // 256 KB staged
  CHECK(why_not_rowwise(wide, h100, c).find("shared memory") != std::string::npos);
  const RowwiseProblem odd{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 1024, 32001, 1};
  CHECK(why_not_rowwise(odd, h100, {Algorithm::kBlockSplit, 1, 512, 512, 1, ClusterGrid::kResident, 4})
            .find("4 bytes") != std::string::npos);
  CHECK(why(KernelConfig{Algorithm::kBlockSplit, 8, 512, 512, 2, ClusterGrid::kResident, 6}).find("cluster") !=
        std::string::npos);
  CHECK(why(KernelConfig{Algorithm::kBlockRegs, 8, 512, 512, 1, ClusterGrid::kResident, 6}).find("staged") !=
        std::string::npos);
}

TEST_CASE("why_not_rowwise explains invalid configs") {
  const DeviceProps h100 = nominal_device(90);
  const DeviceProps a100 = nominal_device(80);
  const RowwiseProblem p{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 1000, 4};
  auto why = [&](const DeviceProps& d, KernelConfig c) { return why_not_rowwise(p, d, c); };

  CHECK(why(h100, {Algorithm::kWarp, 4, 128, 32, 1}) == "");
  CHECK(why(h100, {Algorithm::kWarp, 4, 128, 64, 1}).find("group") != std::string::npos);
  CHECK(why(h100, {Algorithm::kWarp, 4, 128, 24, 1}).find("group") != std::string::npos);
  CHECK(why(h100, {Algorithm::kWarp, 8, 128, 32, 1}).find("pack") != std::string::npos);
  CHECK(why(h100, {Algorithm::kWarp, 3, 128, 32, 1}).find("pack") != std::string::npos);
  CHECK(why(h100, {Algorithm::kWarp, 1, 128, 1, 1}) != "");  // 1000 values in one thread
  CHECK(why(h100, {Algorithm::kBlockRegs, 4, 100, 100, 1}).find("threads") != std::string::npos);
  CHECK(why(h100, {Algorithm::kBlockRegs, 4, 2048, 2048, 1}).find("threads") != std::string::npos);
  CHECK(why(h100, {Algorithm::kBlockRegs, 4, 256, 128, 1}).find("group") != std::string::npos);
  CHECK(why(h100, {Algorithm::kBlockOnline, 4, 256, 256, 2}) == "");
  CHECK(why(a100, {Algorithm::kBlockOnline, 4, 256, 256, 2}).find("sm_90") != std::string::npos);
  CHECK(why(h100, {Algorithm::kBlockOnline, 4, 256, 256, 32}).find("blocks per row") != std::string::npos);
  CHECK(why(a100, {Algorithm::kCluster, 4, 256, 256, 2}).find("sm_90") != std::string::npos);
  CHECK(why(a100, {Algorithm::kClusterSmem, 4, 256, 256, 2}).find("sm_90") != std::string::npos);
  CHECK(why(h100, {Algorithm::kClusterSmem, 4, 256, 256, 2}) == "");
  CHECK(why(h100, {Algorithm::kClusterSmem, 4, 256, 256, 1}).find("cluster") != std::string::npos);
  CHECK(why(h100, {Algorithm::kCluster, 4, 256, 256, 2}) == "");
  CHECK(why(h100, {Algorithm::kCluster, 4, 256, 256, 32}).find("cluster") != std::string::npos);
  CHECK(why(h100, KernelConfig{Algorithm::kAuto, 4, 256, 256, 1}) != "");

  const RowwiseProblem three{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 3, 1};
  CHECK(why_not_rowwise(three, h100, {Algorithm::kBlockOnline, 1, 128, 128, 4}).find("too many blocks") !=
        std::string::npos);
  CHECK(why_not_rowwise(three, h100, {Algorithm::kBlockOnline, 1, 128, 128, 2}) == "");

  const RowwiseProblem wide{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 262144, 4};
  const std::string smem = why_not_rowwise(wide, h100, {Algorithm::kBlockSmem, 4, 1024, 1024, 1});
  CHECK(smem.find("shared memory") != std::string::npos);
}

TEST_CASE("why_not_rowwise explains invalid stream configs") {
  const DeviceProps h100 = nominal_device(90);
  const RowwiseProblem p{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 1000, 4};
  auto why = [&](const RowwiseProblem& problem, const DeviceProps& d, KernelConfig c) {
    return why_not_rowwise(problem, d, c);
  };
  CHECK(why(p, h100, {Algorithm::kStream, 4, 256, 32, 1}) == "");
  CHECK(why(p, h100, {Algorithm::kStream, 4, 128, 8, 1}) == "");
  // 32 rows of 4000 bytes, twice: more than an SM's shared memory.
  CHECK(why(p, h100, {Algorithm::kStream, 4, 256, 8, 1}).find("shared memory") != std::string::npos);
  CHECK(why(p, h100, {Algorithm::kStream, 4, 256, 256, 1}) == "");
  CHECK(why(p, h100, {Algorithm::kStream, 4, 256, 256, 2}) == "");
  CHECK(why(p, nominal_device(80), {Algorithm::kStream, 4, 256, 32, 1}).find("sm_90") != std::string::npos);
  CHECK(why(p, h100, {Algorithm::kStream, 4, 256, 4, 1}).find("group") != std::string::npos);
  CHECK(why(p, h100, {Algorithm::kStream, 4, 256, 64, 1}).find("group") != std::string::npos);
  CHECK(why(p, h100, {Algorithm::kStream, 4, 256, 32, 2}).find("cluster") != std::string::npos);
  CHECK(why(p, h100, {Algorithm::kStream, 4, 256, 256, 32}).find("blocks per row") != std::string::npos);
  // 1000 columns in slices of 16 bytes: 16 blocks would leave the last with none.
  CHECK(why(p, h100, {Algorithm::kStream, 1, 256, 256, 16}) == "");
  const RowwiseProblem narrow{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 40, 4};
  CHECK(why(narrow, h100, {Algorithm::kStream, 4, 256, 256, 16}).find("too many blocks") != std::string::npos);
  // Rows that start off 16-byte boundaries cannot be bulk-copied.
  const RowwiseProblem odd{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 1001, 1};
  CHECK(why(odd, h100, {Algorithm::kStream, 1, 256, 32, 1}).find("16-byte") != std::string::npos);
  const RowwiseProblem wide{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 262144, 4};
  CHECK(why(wide, h100, {Algorithm::kStream, 4, 512, 512, 2}).find("shared memory") != std::string::npos);
  CHECK(why(wide, h100, {Algorithm::kStream, 4, 512, 512, 16}) == "");
}

TEST_CASE("why_not_rowwise explains invalid ring configs") {
  const DeviceProps h100 = nominal_device(90);
  const RowwiseProblem p{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 262144, 4};
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 512, 512, 16}) == "");
  // 64K floats a block: four chunks, 64 values a thread, still valid; at 256 threads, 128.
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 512, 512, 4}).find("64 values") != std::string::npos);
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 256, 256, 8}).find("64 values") != std::string::npos);
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 512, 512, 8}) == "");
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 2, 512, 512, 16}).find("16 bytes") != std::string::npos);
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 384, 384, 16}).find("threads") != std::string::npos);
  // Two consumer groups of 256 taking turns; not three, not two of 512 (with the producer warp,
  // more than 1024 threads), and a group still holds at most 64 values.
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 512, 256, 16}) == "");
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 768, 256, 16}).find("group") != std::string::npos);
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 1024, 512, 16}).find("1024") != std::string::npos);
  CHECK(why_not_rowwise(p, h100, {Algorithm::kRing, 4, 512, 256, 8}).find("64 values") != std::string::npos);
  // 16-bit values beyond 64 a thread are held two to a register, up to 128.
  const RowwiseProblem half{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 64, 262144, 8};
  CHECK(why_not_rowwise(half, h100, {Algorithm::kRing, 8, 512, 256, 8}) == "");
  CHECK(why_not_rowwise(half, h100, {Algorithm::kRing, 8, 512, 256, 4}).find("128 values") != std::string::npos);
  CHECK(why_not_rowwise(p, nominal_device(80), {Algorithm::kRing, 4, 512, 512, 16}).find("sm_90") != std::string::npos);
  const RowwiseProblem mixed{RowOp::kSoftmax, DType::kBF16, DType::kF32, 64, 65536, 4};
  CHECK(why_not_rowwise(mixed, h100, {Algorithm::kRing, 4, 512, 512, 2}) != "");
  const RowwiseProblem odd{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 1001, 1};
  CHECK(why_not_rowwise(odd, h100, {Algorithm::kRing, 4, 512, 512, 1}).find("alignment") != std::string::npos);
  const RowwiseProblem narrow{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 40, 4};
  CHECK(why_not_rowwise(narrow, h100, {Algorithm::kRing, 4, 512, 512, 16}).find("too many blocks") != std::string::npos);
}

TEST_CASE("over fp32 rows the ring comes in both layouts among the candidates") {
  // The pick has two consumer groups (test_rowwise_rules.cpp); one group stays a candidate.
  const DeviceProps h100 = nominal_device(90);
  const auto f32_wide = rowwise_candidates({RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 262144, 4}, h100);
  CHECK(std::count(f32_wide.begin(), f32_wide.end(), KernelConfig{Algorithm::kRing, 4, 512, 256, 16}) == 1);
  CHECK(std::count(f32_wide.begin(), f32_wide.end(), KernelConfig{Algorithm::kRing, 4, 512, 512, 16}) == 1);
}

TEST_CASE("16-bit rows whose two ring groups need clusters of 16 also try 15 and 14 blocks") {
  const DeviceProps h100 = nominal_device(90);
  auto ring_clusters = [&](std::int64_t rows, std::int64_t cols) {
    std::vector<int> clusters;
    for (const KernelConfig& c : rowwise_candidates({RowOp::kSoftmax, DType::kBF16, DType::kBF16, rows, cols, 8}, h100))
      if (c.algorithm == Algorithm::kRing && c.group == 256 && c.threads == 512) clusters.push_back(c.cluster);
    return clusters;
  };
  CHECK(ring_clusters(64, 200000) == std::vector<int>{16, 15, 14});
  CHECK(ring_clusters(128, 131073) == std::vector<int>{16, 15, 14});
  // Only while the slices stay one chunk: 14 blocks hold up to 229376 columns, 15 up to 245760.
  CHECK(ring_clusters(64, 229376) == std::vector<int>{16, 15, 14});
  CHECK(ring_clusters(64, 229377) == std::vector<int>{16, 15});
  CHECK(ring_clusters(64, 262144) == std::vector<int>{16});
  // Rows that clusters of 8 hold keep to them.
  CHECK(ring_clusters(64, 131072) == std::vector<int>{8});
}

TEST_CASE("the ring's chunks are as small as a slice allows, in whole packs for every consumer") {
  auto shape = [](DType dtype, std::int64_t cols, int group, int cluster) {
    return ring_shape({RowOp::kSoftmax, dtype, dtype, 64, cols, 16 / size_of(dtype)},
                      {Algorithm::kRing, 16 / size_of(dtype), 2 * group, group, cluster});
  };
  // Full slices keep chunks of 32 KB.
  RingShape full = shape(DType::kBF16, 262144, 256, 16);
  CHECK(full.chunks == 1);
  CHECK(full.chunk_bytes == 32768);
  CHECK(full.values_per_thread == 64);
  full = shape(DType::kF32, 262144, 256, 16);
  CHECK(full.chunks == 2);
  CHECK(full.chunk_bytes == 32768);
  CHECK(full.values_per_thread == 64);
  // 9496 columns a block: 18992 bytes, 20480 in packs of 16 bytes for 256 threads.
  const RingShape narrow = shape(DType::kBF16, 151936, 256, 16);
  CHECK(narrow.slice_cols == 9496);
  CHECK(narrow.chunks == 1);
  CHECK(narrow.chunk_bytes == 20480);
  CHECK(narrow.values_per_thread == 40);
  // Two chunks share a slice evenly: 37984 bytes as two of 20480.
  const RingShape two = shape(DType::kF32, 151936, 256, 16);
  CHECK(two.chunks == 2);
  CHECK(two.chunk_bytes == 20480);
  CHECK(two.values_per_thread == 40);
  // Groups of 512 round to 8 KB.
  CHECK(shape(DType::kF32, 151936, 512, 16).chunk_bytes == 24576);
  // Bulk-stored outputs (4-byte types, two consumer groups but for 16-bit log-softmax over slices
  // under 28 KB) hold their chunk until the store has read it: a ring of 224 KB, 192 KB for
  // 16-bit values stored from registers; the launch asks for exactly that.
  CHECK(two.ring_bytes == 224 * 1024);
  CHECK(narrow.ring_bytes == 224 * 1024);
  const RingShape one_group = ring_shape({RowOp::kSoftmax, DType::kBF16, DType::kBF16, 512, 131072, 8},
                                         {Algorithm::kRing, 8, 512, 512, 4});
  CHECK(one_group.ring_bytes == 192 * 1024);
  const KernelConfig two_groups{Algorithm::kRing, 8, 512, 256, 16};
  CHECK(ring_shape({RowOp::kLogSoftmax, DType::kBF16, DType::kBF16, 64, 262144, 8}, two_groups).ring_bytes ==
        224 * 1024);  // slices of 32 KB
  CHECK(ring_shape({RowOp::kLogSoftmax, DType::kBF16, DType::kBF16, 64, 151936, 8}, two_groups).ring_bytes ==
        192 * 1024);  // 19 KB
  CHECK(ring_shape({RowOp::kLogSoftmax, DType::kBF16, DType::kBF16, 48, 100000, 8},
                   {Algorithm::kRing, 8, 512, 256, 8}).ring_bytes == 192 * 1024);  // 25 KB
  CHECK(ring_shape({RowOp::kLogSoftmax, DType::kBF16, DType::kBF16, 128, 131072, 8},
                   {Algorithm::kRing, 8, 512, 256, 8}).ring_bytes == 224 * 1024);  // 32 KB
  CHECK(ring_shape({RowOp::kLogSoftmax, DType::kF32, DType::kF32, 64, 262144, 4},
                   {Algorithm::kRing, 4, 512, 256, 16}).ring_bytes == 224 * 1024);
  CHECK(ring_shape({RowOp::kReduceScale, DType::kBF16, DType::kBF16, 64, 262144, 8}, two_groups).ring_bytes ==
        224 * 1024);
  const RowwiseProblem f32{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 262144, 4};
  CHECK(rowwise_launch_shape(f32, {Algorithm::kRing, 4, 512, 256, 16}, 132).dynamic_smem == 224 * 1024);
  CHECK(why_not_rowwise(f32, nominal_device(90), {Algorithm::kRing, 4, 512, 256, 16}).empty());
}

TEST_CASE("misaligned pointers and odd strides give smaller packs") {
  auto pack = [](std::uintptr_t in, std::uintptr_t out, std::int64_t in_stride,
                 std::int64_t out_stride, std::int64_t rows, DType in_dtype, DType out_dtype) {
    RowwiseArgs args{reinterpret_cast<const void*>(in), in_stride, reinterpret_cast<void*>(out),
                     out_stride, rows, 64, in_dtype, out_dtype};
    return max_pack_for(args);
  };
  const DType f32 = DType::kF32, f16 = DType::kF16, bf16 = DType::kBF16;
  CHECK(pack(0x10000, 0x20000, 1024, 1024, 4, f32, f32) == 4);
  CHECK(pack(0x10004, 0x20000, 1024, 1024, 4, f32, f32) == 1);
  CHECK(pack(0x10008, 0x20000, 1024, 1024, 4, f32, f32) == 2);
  CHECK(pack(0x10000, 0x20004, 1024, 1024, 4, f32, f32) == 1);
  CHECK(pack(0x10000, 0x20000, 1001, 1024, 4, f32, f32) == 1);
  CHECK(pack(0x10000, 0x20000, 1024, 1002, 4, f32, f32) == 2);
  CHECK(pack(0x10000, 0x20000, 1001, 1001, 1, f32, f32) == 4);  // one row: strides never used

  CHECK(pack(0x10000, 0x20000, 1024, 1024, 4, f16, f16) == 8);
  CHECK(pack(0x10002, 0x20000, 1024, 1024, 4, f16, f16) == 1);
  CHECK(pack(0x10004, 0x20000, 1024, 1024, 4, f16, f16) == 2);
  CHECK(pack(0x10008, 0x20000, 1024, 1024, 4, f16, f16) == 4);
  CHECK(pack(0x10000, 0x20000, 1028, 1024, 4, f16, f16) == 4);

  // Mixed types: the wider one caps the pack, each pointer is checked in its own element size.
  CHECK(pack(0x10000, 0x20000, 1024, 1024, 4, f32, bf16) == 4);
  CHECK(pack(0x10000, 0x20008, 1024, 1024, 4, f32, bf16) == 4);
  CHECK(pack(0x10000, 0x20004, 1024, 1024, 4, f32, bf16) == 2);
  CHECK(pack(0x10000, 0x20000, 1024, 1024, 4, bf16, f32) == 4);
}

TEST_CASE("rows buckets are powers of two") {
  CHECK(rows_bucket(1) == 0);
  CHECK(rows_bucket(2) == 1);
  CHECK(rows_bucket(3) == 2);
  CHECK(rows_bucket(4) == 2);
  CHECK(rows_bucket(5) == 3);
  CHECK(rows_bucket(std::int64_t{1} << 20) == 20);
  CHECK(rows_bucket((std::int64_t{1} << 20) + 1) == 21);
  CHECK(rows_bucket(std::int64_t{1} << 40) == 40);
  for (std::int64_t rows : {1, 2, 3, 7, 8, 9, 1000, 4096, 4097, 123456789}) {
    const int bucket = rows_bucket(rows);
    CAPTURE(rows);
    CHECK(bucket_rows(bucket) >= rows);
    if (bucket > 0) CHECK(bucket_rows(bucket - 1) < rows);
  }
}

TEST_CASE("problems in one bucket share a dispatch key") {
  const RowwiseProblem base{RowOp::kSoftmax, DType::kF32, DType::kF32, 5, 1000, 4};
  RowwiseProblem same = base, next = base, other_cols = base, other_pack = base;
  same.rows = 8;
  next.rows = 9;
  other_cols.cols = 1001;
  other_pack.max_pack = 2;
  const RowwiseKeyHash hash;
  CHECK(key_of(base) == key_of(same));
  CHECK(hash(key_of(base)) == hash(key_of(same)));
  CHECK_FALSE(key_of(base) == key_of(next));
  CHECK_FALSE(key_of(base) == key_of(other_cols));
  CHECK_FALSE(key_of(base) == key_of(other_pack));
  RowwiseProblem other_op = base;
  other_op.op = RowOp::kLogSoftmax;
  CHECK_FALSE(key_of(base) == key_of(other_op));
}

TEST_CASE("candidate spaces stay small enough to tune a shape in about a second") {
  const DeviceProps h100 = nominal_device(90);
  const std::int64_t shapes[][2] = {{65536, 128}, {16384, 1024}, {8192, 4096}, {2048, 16384},
                                    {1024, 32000}, {512, 65536}, {64, 262144}, {1, 128256},
                                    {64, 131073},  {256, 200000}};
  for (DType dtype : {DType::kF32, DType::kBF16})
    for (const auto& shape : shapes) {
      const RowwiseProblem p{RowOp::kSoftmax, dtype, dtype, shape[0], shape[1], 16 / size_of(dtype)};
      const auto candidates = rowwise_candidates(p, h100);
      std::string names;
      for (const auto& c : candidates) names += "\n  " + c.to_string();
      INFO(std::string(to_string(dtype)) << " " << shape[0] << "x" << shape[1] << ":" << names);
      // At most 16 kernels: one round of compiles on a 16-core host (bench/RESULTS.md, the
      // tuner's table). A candidate that differs from another only in its grid runs the same
      // kernel and costs a timing alone.
      std::set<std::string> kernels;
      for (const auto& c : candidates) kernels.insert(rowwise_kernel_spec(p, c).name_expression);
      CHECK(kernels.size() <= 16);
      CHECK(candidates.size() <= 22);
      CHECK(candidates.size() >= 4);
      MESSAGE(std::string(to_string(dtype)) << " " << shape[0] << "x" << shape[1] << ": " << candidates.size()
                                            << " candidates, " << kernels.size() << " kernels");
    }
}

TEST_CASE("row-walking grids take the fewest groups that finish in the same rounds") {
  LaunchShape clusters;
  clusters.persistent = true;
  clusters.cluster = 8;
  clusters.max_clusters = 30;
  CHECK(rowwise_grid(clusters, 64) == 22 * 8);   // 3 rounds either way
  CHECK(rowwise_grid(clusters, 60) == 30 * 8);   // 2 rounds need every cluster
  CHECK(rowwise_grid(clusters, 7) == 7 * 8);     // one round: a cluster per row
  CHECK(rowwise_grid(clusters, 1) == 8);

  LaunchShape blocks;  // persistent, several rows per block
  blocks.persistent = true;
  blocks.rows_per_block = 4;
  blocks.max_clusters = 132;
  CHECK(rowwise_grid(blocks, 512 * 4) == 128);   // 4 rounds of 128 rather than 3.9 of 132
  CHECK(rowwise_grid(blocks, 3) == 1);
  for (std::int64_t rows : {1, 5, 131, 132, 133, 1000, 65536}) {
    const std::int64_t grid = rowwise_grid(blocks, rows);
    const std::int64_t tiles = (rows + 3) / 4;
    const std::int64_t rounds = (tiles + grid - 1) / grid;
    CHECK(grid <= blocks.max_clusters);
    CHECK(rounds == (tiles + blocks.max_clusters - 1) / blocks.max_clusters);
  }

  LaunchShape plain;  // one block per row, no walking
  CHECK(rowwise_grid(plain, 1000) == 1000);
  LaunchShape per_row = clusters;  // a cluster a row
  per_row.persistent = false;
  CHECK(rowwise_grid(per_row, 64) == 64 * 8);
  CHECK(rowwise_grid(per_row, 1000) == 1000 * 8);
}

TEST_CASE("only the ring's two consumer groups launch as dependents in every round") {
  const DeviceProps h100 = nominal_device(90);
  const RowwiseProblem bf16{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 64, 262144, 8};
  const RowwiseProblem f32{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 262144, 4};
  const KernelConfig two_groups{Algorithm::kRing, 8, 512, 256, 16};
  const KernelConfig one_group{Algorithm::kRing, 8, 512, 512, 16};
  REQUIRE(why_not_rowwise(bf16, h100, two_groups).empty());
  CHECK(rowwise_launch_shape(bf16, two_groups, h100.sm_count).dependent_past_one_round);
  CHECK_FALSE(rowwise_launch_shape(bf16, one_group, h100.sm_count).dependent_past_one_round);
  const KernelConfig f32_two_groups{Algorithm::kRing, 4, 512, 256, 16};
  REQUIRE(why_not_rowwise(f32, h100, f32_two_groups).empty());
  CHECK(rowwise_launch_shape(f32, f32_two_groups, h100.sm_count).dependent_past_one_round);
  const KernelConfig f32_one_group{Algorithm::kRing, 4, 512, 512, 16};
  CHECK_FALSE(rowwise_launch_shape(f32, f32_one_group, h100.sm_count).dependent_past_one_round);
  CHECK_FALSE(rowwise_launch_shape(bf16, {Algorithm::kBlockOnline, 8, 1024, 1024, 2}, h100.sm_count)
                  .dependent_past_one_round);
}

TEST_CASE("a cluster kernel's grid follows its config") {
  const DeviceProps h100 = nominal_device(90);
  const RowwiseProblem p{RowOp::kSoftmax, DType::kF32, DType::kF32, 512, 65536, 4};
  KernelConfig config{Algorithm::kClusterSmem, 4, 512, 512, 4};
  CHECK(rowwise_launch_shape(p, config, h100.sm_count).persistent);
  config.cluster_grid = ClusterGrid::kPerRow;
  const LaunchShape shape = rowwise_launch_shape(p, config, h100.sm_count);
  CHECK_FALSE(shape.persistent);
  CHECK(rowwise_grid(shape, p.rows) == 512 * 4);
  // Only the cluster kernels walk rows either way; the others' grids are part of their design.
  CHECK(why_not_rowwise(p, h100, config).empty());
  config.algorithm = Algorithm::kCluster;
  CHECK(why_not_rowwise(p, h100, config).empty());
  for (Algorithm other :
       {Algorithm::kBlockOnline, Algorithm::kStream, Algorithm::kRing, Algorithm::kBlockSmem}) {
    KernelConfig c = complete_rowwise_config(p, h100, KernelConfig{other});
    c.cluster_grid = ClusterGrid::kPerRow;
    CAPTURE(c.to_string());
    CHECK(why_not_rowwise(p, h100, c).find("cluster_grid") != std::string::npos);
  }
}
