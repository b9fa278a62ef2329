// SPDX-License-Identifier: Apache-2.0
// Peeled configs (KernelConfig::peel) on the host: which can run (any alignment, the widest pack,
// every algorithm but stream and flat_tile, shares sized for the worst shift), their completion, and the
// tuner's candidates for rows off the alignment, and the pick's peeling (block rows, not warp rows).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "kjit/kjit.hpp"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_fit.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_rules.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_problem.h"
#include "support/heuristic_sweep.h"

using namespace kjit;

namespace {

using test::DTypePair;
using test::describe;
using rowwise::fit_peeled;

constexpr const auto& kDTypes = test::kCommonDTypePairs;

}  // namespace

TEST_CASE("peeled configs run any alignment at the widest pack, in every algorithm but stream and flat_tile, "
          "sized for the worst shift") {
  const DeviceProps h100 = nominal_device(90);
  const RowwiseProblem odd{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 1001, 1};
  auto why = [&](const RowwiseProblem& p, KernelConfig c, bool peel) {
    c.peel = peel;
    return why_not_rowwise(p, h100, c);
  };
  CHECK(why(odd, {Algorithm::kWarp, 4, 128, 32, 1}, false).find("pack") != std::string::npos);
  CHECK(why(odd, {Algorithm::kWarp, 4, 128, 32, 1}, true) == "");
  CHECK(why(odd, {Algorithm::kBlockRegs, 4, 128, 128, 1}, true) == "");
  CHECK(why(odd, {Algorithm::kWarp, 8, 128, 32, 1}, true).find("pack") != std::string::npos);
  CHECK(why(odd, {Algorithm::kBlockSmem, 4, 512, 512, 1}, true) == "");
  CHECK(why(odd, {Algorithm::kStream, 4, 256, 256, 1}, true).find("peel") != std::string::npos);
  CHECK(why(odd, {Algorithm::kRing, 4, 256, 256, 1}, false).find("pack") != std::string::npos);
  CHECK(why(odd, {Algorithm::kRing, 4, 256, 256, 1}, true) == "");
  // Shared memory's realigned reads move whole words.
  const RowwiseProblem odd_bf16{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 64, 40001, 1};
  CHECK(why(odd_bf16, {Algorithm::kClusterSmem, 1, 512, 512, 2}, true).find("4 bytes") != std::string::npos);
  CHECK(why(odd_bf16, {Algorithm::kClusterSmem, 8, 512, 512, 2}, true) == "");
  CHECK(why(odd, {Algorithm::kBlockOnline, 4, 512, 512, 1}, true) == "");
  CHECK(why(odd, {Algorithm::kBlockOnline, 4, 256, 256, 4}, true) == "");
  KernelConfig split{Algorithm::kBlockSplit, 4, 256, 256, 1};
  split.staged = 1;
  CHECK(why(odd, split, false).find("pack") != std::string::npos);
  CHECK(why(odd, split, true) == "");
  CHECK(why(odd, {Algorithm::kCluster, 4, 256, 256, 2}, true) == "");
  // A peeled slice spans a vector more: 16384 fp32 columns over 2 blocks of 128 threads at pack 4
  // are 64 values a thread, and peeled 68.
  const RowwiseProblem slices{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 16384, 4};
  CHECK(why(slices, {Algorithm::kCluster, 4, 128, 128, 2}, false) == "");
  CHECK(why(slices, {Algorithm::kCluster, 4, 128, 128, 2}, true).find("64 values") != std::string::npos);
  // 2048 fp32 values over a warp at pack 4 are 64 a thread; a peeled row may span 2051.
  const RowwiseProblem full{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 2048, 1};
  CHECK(why(full, {Algorithm::kWarp, 1, 128, 32, 1}, false) == "");
  CHECK(why(full, {Algorithm::kWarp, 4, 128, 32, 1}, true).find("64 values") != std::string::npos);
  // Completing a peeled config takes the widest pack and sizes it for the span.
  KernelConfig partial{Algorithm::kWarp};
  partial.peel = true;
  const KernelConfig done = complete_rowwise_config(odd, h100, partial);
  CHECK(done.peel);
  CHECK(done.pack == 4);
  CHECK(why_not_rowwise(odd, h100, done) == "");
}

namespace {

/// The pick for rows at `max_pack`: narrow dense rows off the alignment are flat tiles
/// (test_flat_tile_pick.cpp); other dense rows off it are peeled where a block holds them, never
/// where a warp does (warp_group's lanes at their own pack run ahead); padded and offset rows off
/// it that a block holds only peeled, with a share that stores realigned, are peeled in block_regs
/// rather than read twice or staged in shared memory; 16-bit rows off it that block_online would
/// read twice are peeled too (peels_online), in block_split where it holds them two blocks an SM
/// (peeled_split); on sm_90, many rows too wide for a block are peeled in cluster_smem (fp32
/// inputs) and in the cluster kernel (16-bit to fp32), and rows the ring takes are peeled there;
/// the rest keep the pack they allow.
void check_pick(const RowwiseProblem& p, const DeviceProps& d, int widest) {
  const KernelConfig pick = choose_rowwise_config(p, d);
  const bool misaligned = p.max_pack < widest;
  const bool misaligned_dense = p.dense && misaligned;
  const bool warp_row = fit_peeled(p, Algorithm::kWarp).has_value();
  const std::optional<KernelConfig> peeled_regs = fit_peeled(p, Algorithm::kBlockRegs);
  const bool block_row = !warp_row && peeled_regs.has_value();
  const bool tiled = misaligned_dense && rowwise::tile_narrow(p);
  const bool peels = misaligned_dense && block_row;
  const bool online = pick.algorithm == Algorithm::kBlockOnline && rowwise::peels_online(p);
  const bool split = pick.algorithm == Algorithm::kBlockSplit && pick.peel;
  if (split) CHECK(rowwise::peels_online(p));
  const bool ring = pick.algorithm == Algorithm::kRing && pick.peel;
  if (ring) {
    CHECK(misaligned);
    CHECK(d.arch >= 90);
    CHECK(size_of(p.in_dtype) == size_of(p.out_dtype));
  }
  const bool slices = (pick.algorithm == Algorithm::kClusterSmem || pick.algorithm == Algorithm::kCluster) && pick.peel;
  if (slices) {
    CHECK(misaligned);
    CHECK(rowwise::many_rows(p, d));
    CHECK(d.arch >= 90);
    CHECK(size_of(pick.algorithm == Algorithm::kClusterSmem ? p.in_dtype : p.out_dtype) == 4);
  }
  // Some block of up to 1024 threads holds the peeled row with a share that stores realigned.
  bool realigning_block = false;
  for (KernelConfig c = peeled_regs.value_or(KernelConfig{}); peeled_regs && c.threads <= 1024; c.threads *= 2) {
    c.group = c.threads;
    realigning_block = realigning_block || rowwise::share_realigns(p, c);
  }
  const bool wide_peelable = !p.dense && misaligned && realigning_block;
  const bool wide = wide_peelable && pick.algorithm == Algorithm::kBlockRegs && pick.peel;
  CHECK(pick.peel == ((peels && !tiled) || online || wide || split || slices || ring));
  if (wide_peelable) {
    CHECK(pick.algorithm != Algorithm::kBlockOnline);
    CHECK(pick.algorithm != Algorithm::kClusterSmem);
    CHECK(pick.algorithm != Algorithm::kBlockSmem);
  }
  if (tiled) {
    CHECK(pick.algorithm == Algorithm::kFlatTile);
  } else if (peels) {
    CHECK(pick.algorithm == Algorithm::kBlockRegs);
    CHECK(pick.pack == widest);
  } else if (online || wide || split || slices || ring) {
    CHECK(pick.pack == widest);
  } else {
    CHECK(pick.pack <= p.max_pack);
  }
}

/// Every candidate runs the problem; the peeled ones take the widest pack. Returns how many are
/// peeled.
int check_candidates(const RowwiseProblem& p, const DeviceProps& d, int widest) {
  int peeled = 0;
  for (const KernelConfig& c : rowwise_candidates(p, d)) {
    CAPTURE(c.to_string());
    CHECK(why_not_rowwise(p, d, c) == "");
    if (!c.peel) {
      CHECK(c.pack <= p.max_pack);
      continue;
    }
    ++peeled;
    CHECK(p.max_pack < widest);
    CHECK(c.pack == widest);
    CHECK(takes_peel(c.algorithm));
  }
  return peeled;
}

}  // namespace

TEST_CASE("misaligned rows get peeled candidates; the pick peels dense block rows (not warp rows), "
          "padded rows a block holds only peeled, and rows read twice") {
  const std::int64_t shapes[][2] = {{65536, 49}, {100000, 99}, {16384, 1001}, {4096, 4095}, {4096, 50257}};
  int peeled = 0;
  for (const DeviceProps& d : {nominal_device(80), nominal_device(90)})
    for (const DTypePair& pair : kDTypes)
      for (const auto& shape : shapes) {
        const int widest = 16 / std::max(size_of(pair.in), size_of(pair.out));
        for (int max_pack = 1; max_pack <= widest; max_pack *= 2)
          for (bool dense : {false, true}) {
            const RowwiseProblem p{RowOp::kSoftmax, pair.in, pair.out, shape[0], shape[1], max_pack, dense};
            CAPTURE(describe(p, d));
            check_pick(p, d, widest);
            peeled += check_candidates(p, d, widest);
          }
      }
  CHECK(peeled > 0);
  MESSAGE(peeled << " peeled candidates");
}

TEST_CASE("dense 16-bit rows off the alignment that block_online would read twice take block_split peeled where "
          "two blocks share an SM, as measured") {
  const DeviceProps h100 = nominal_device(90);
  // On the H100: bf16 436 x 67802 51.4 us against block_online's 62.3; f16 -> fp32 264 x 93511 57.8
  // against 65.0.
  for (const RowwiseProblem& p : {RowwiseProblem{RowOp::kReduceScale, DType::kBF16, DType::kBF16, 436, 67802, 2, true},
                                  RowwiseProblem{RowOp::kSoftmax, DType::kF16, DType::kF32, 264, 93511, 1, true}}) {
    CAPTURE(p.cols);
    const KernelConfig pick = choose_rowwise_config(p, h100);
    CHECK(pick.algorithm == Algorithm::kBlockSplit);
    CHECK(pick.peel);
    CHECK(pick.pack == 16 / std::max(size_of(p.in_dtype), size_of(p.out_dtype)));
    CHECK(rowwise::split_fit(rowwise::peeled_span(p, pick.pack), h100, pick).blocks_per_sm >= 2);
    // Padded, the output may lie off the input's grid, where block_split's staged shares store
    // element by element: 1.2-2x slower than block_online on the H100.
    RowwiseProblem padded = p;
    padded.dense = false;
    CHECK_FALSE((choose_rowwise_config(padded, h100).algorithm == Algorithm::kBlockSplit &&
                 choose_rowwise_config(padded, h100).peel));
  }
  // fp32 rows keep block_online (peeled, being dense): block_split peeled is unmeasured for them.
  const RowwiseProblem fp32{RowOp::kSoftmax, DType::kF32, DType::kF32, 68, 57047, 1, true};
  CHECK(choose_rowwise_config(fp32, h100).algorithm != Algorithm::kBlockSplit);
}

TEST_CASE("outputs lie on their inputs' grid where pointers and strides agree modulo the widest pack") {
  // Addresses stand in for device pointers; only their alignment matters here.
  const auto at = [](std::uintptr_t address) { return reinterpret_cast<void*>(address); };
  RowwiseArgs args;
  args.in_dtype = args.out_dtype = DType::kBF16;  // widest pack: 8 elements
  args.rows = 4;
  args.cols = 1001;
  args.in = at(0x10000 + 2 * 3);
  args.out = at(0x20000 + 2 * 3);
  args.in_row_stride = args.out_row_stride = 1001;
  CHECK(leads_match_for(args));  // dense, both 3 elements in
  args.out = at(0x20000 + 2 * 11);
  CHECK(leads_match_for(args));  // 11 = 3 modulo 8
  args.out = at(0x20000);
  CHECK_FALSE(leads_match_for(args));
  args.out = at(0x20000 + 2 * 3);
  args.out_row_stride = 1009;  // 1009 = 1001 modulo 8: every row keeps the same shift on both sides
  CHECK(leads_match_for(args));
  args.out_row_stride = 1002;
  CHECK_FALSE(leads_match_for(args));
  args.rows = 1;  // one row: strides do not matter
  CHECK(leads_match_for(args));
  // Mixed sizes count in elements on the grid of the wider type: bf16 -> fp32 packs of 4.
  args.rows = 4;
  args.out_dtype = DType::kF32;
  args.out_row_stride = 1005;
  args.out = at(0x20000 + 4 * 7);
  CHECK(leads_match_for(args));  // 3 = 7 modulo 4, 1001 = 1005 modulo 4
}

TEST_CASE("a peeled ring's chunks cover each slice's span at the worst shift, and cost nothing where there is room") {
  // The kernel lays a peeled slice from the 16-byte unit its start falls in: up to one unit more.
  for (int elem : {2, 4})
    for (long long cols : {1001LL, 16384LL, 16385LL, 50257LL, 131072LL, 250001LL})
      for (int blocks : {1, 2, 4, 8, 16})
        for (int group : {256, 512}) {
          const int threads = 512;
          const RingShape plain = ring_shape(cols, elem, 0, blocks, threads, group);
          const RingShape peeled = ring_shape(cols, elem, 0, blocks, threads, group, true);
          CAPTURE(elem);
          CAPTURE(cols);
          CAPTURE(blocks);
          CAPTURE(group);
          CHECK(peeled.slice_cols == plain.slice_cols);
          CHECK(peeled.chunks * peeled.chunk_bytes >= peeled.slice_bytes + 16);
          if (plain.chunks * plain.chunk_bytes >= plain.slice_bytes + 16) {
            CHECK(peeled.chunks == plain.chunks);
            CHECK(peeled.chunk_bytes == plain.chunk_bytes);
          }
        }
}
