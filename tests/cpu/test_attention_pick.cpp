// SPDX-License-Identifier: Apache-2.0
// Properties of attention's pick and candidates over the shapes the op accepts, on the nominal
// sm_80 and sm_90 devices: the pick can run (it fits the shared memory and register file), it
// is complete and the first candidate; every candidate can run and appears once; the kernel
// specs name the specialization; call descriptions round-trip through the tools' JSON.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "kernel_sources/attention_shape.cuh"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/attention/attention_family.h"
#include "runtime/ops/attention/attention_heuristics.h"
#include "runtime/ops/attention/attention_kernels.h"

using namespace kjit;

namespace {

const int kTokens[] = {1, 7, 16, 49, 64, 100, 128, 197, 256};
const int kDims[] = {16, 32, 64, 128};

AttentionProblem problem_of(int m, int n, int d, int dv, std::int64_t rows, bool causal = false) {
  AttentionProblem p;
  p.dtype = (m + d) % 2 ? DType::kF16 : DType::kBF16;
  p.m = m;
  p.n = n;
  p.d = d;
  p.dv = dv;
  p.batch = rows;
  p.heads = 1;
  p.rows = rows;
  p.causal = causal;
  p.bias_kind = (m + n) % 4;
  p.mask_kind = (n + d) % 4;
  return p;
}

std::vector<AttentionProblem> grid() {
  std::vector<AttentionProblem> problems;
  for (int m : kTokens)
    for (int n : kTokens)
      for (int d : kDims)
        for (int dv : kDims)
          for (std::int64_t rows : {std::int64_t{1}, std::int64_t{31}, std::int64_t{4096}, std::int64_t{1} << 20})
            problems.push_back(problem_of(m, n, d, dv, rows, (m + n + rows) % 3 == 0));
  return problems;
}

std::string describe(const AttentionProblem& p) { return AttentionFamily::describe(p).dump(); }

}  // namespace

TEST_CASE("the pick can run every shape on sm_80 and sm_90, and leads the candidates") {
  for (int arch : {80, 90}) {
    const DeviceProps device = nominal_device(arch);
    int checked = 0;
    for (const AttentionProblem& problem : grid()) {
      const AttentionProblem planned = planned_attention(problem);
      const AttentionConfig pick = choose_attention_config(planned, device);
      CAPTURE(arch);
      CAPTURE(describe(problem));
      CAPTURE(pick.to_string());
      REQUIRE(why_not_attention(planned, device, pick) == "");
      CHECK(complete_attention_config(planned, device, pick) == pick);
      CHECK(attention_smem_bytes(planned, pick) <= device.max_smem_per_block);
      CHECK(pick.warps * pick.problems <= kAttentionMostBlockWarps);
      const std::vector<AttentionConfig> candidates = attention_candidates(planned, device);
      REQUIRE(!candidates.empty());
      CHECK(candidates.front() == pick);
      CHECK(candidates.size() <= static_cast<std::size_t>(kMostAttentionCandidates));
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        CHECK(why_not_attention(planned, device, candidates[i]) == "");
        CHECK(std::count(candidates.begin(), candidates.end(), candidates[i]) == 1);
      }
      ++checked;
    }
    MESSAGE(checked << " shapes on sm_" << arch);
  }
}

TEST_CASE("the pick keeps the most warps busy an SM: small problems a warp each, large ones more") {
  const DeviceProps h100 = nominal_device(90);
  // 16x16 tiles: any config saturates the SM, so one stage (nothing to overlap), eight a block.
  const AttentionConfig tiles = choose_attention_config(problem_of(16, 16, 16, 16, 65536), h100);
  CHECK(tiles == AttentionConfig{1, 8, 1});
  // 128x128, d = 128: one block of 8 warps with two stages beats two of 4 warps with one.
  AttentionProblem wide = problem_of(128, 128, 128, 128, 4096);
  wide.bias_kind = wide.mask_kind = kAddendNone;
  CHECK(choose_attention_config(wide, h100) == AttentionConfig{8, 1, 2});
  // 197x197, d = 64: three blocks of 4 warps an SM (one stage) rather than one of 8.
  AttentionProblem vit = problem_of(197, 197, 64, 64, 3072);
  vit.bias_kind = vit.mask_kind = kAddendNone;
  CHECK(choose_attention_config(vit, h100) == AttentionConfig{4, 1, 1});
  // Window attention with bias and mask: a warp a strip, holding the addends for every problem.
  AttentionProblem windows = problem_of(49, 49, 32, 32, 16384);
  windows.bias_kind = kAddendF16;
  windows.mask_kind = kAddendF16;
  CHECK(choose_attention_config(windows, h100).warps == 4);
  // 100x100, d = 64: few flops a byte, so the next problem's copies are worth a second stage.
  AttentionProblem copies = problem_of(100, 100, 64, 64, 8192);
  copies.bias_kind = copies.mask_kind = kAddendNone;
  CHECK(choose_attention_config(copies, h100).stages == 2);
  // 10 strips: 4 warps take them in 3 rounds (3.3 busy), 8 in 2 (5 busy) but hold half the groups.
  AttentionProblem uneven = problem_of(160, 160, 16, 16, 6351);
  uneven.bias_kind = uneven.mask_kind = kAddendNone;
  CHECK(choose_attention_config(uneven, h100).warps == 4);
  // Few problems: one a block, so that the blocks cover as many SMs as they can.
  CHECK(choose_attention_config(problem_of(16, 16, 16, 16, 64), h100).problems == 1);
  CHECK(choose_attention_config(problem_of(64, 64, 64, 64, 64), h100).problems == 1);
}

TEST_CASE("the candidates cover one and two stages and several block sizes") {
  const DeviceProps h100 = nominal_device(90);
  const std::vector<AttentionConfig> candidates = attention_candidates(problem_of(64, 64, 64, 64, 16384), h100);
  CHECK(candidates.size() >= 8);
  CHECK(std::any_of(candidates.begin(), candidates.end(), [](const AttentionConfig& c) { return c.stages == 1; }));
  CHECK(std::any_of(candidates.begin(), candidates.end(), [](const AttentionConfig& c) { return c.stages == 2; }));
  CHECK(std::any_of(candidates.begin(), candidates.end(), [](const AttentionConfig& c) { return c.warps == 1; }));
  CHECK(std::any_of(candidates.begin(), candidates.end(), [](const AttentionConfig& c) { return c.warps == 4; }));
}

TEST_CASE("configs that cannot run are refused with the reason") {
  const DeviceProps a100 = nominal_device(80);
  const AttentionProblem one_strip = problem_of(16, 16, 16, 16, 100);
  CHECK(why_not_attention(one_strip, a100, {2, 1, 1}).find("query strips") != std::string::npos);
  CHECK(why_not_attention(one_strip, a100, {3, 1, 1}).find("warps") != std::string::npos);
  CHECK(why_not_attention(one_strip, a100, {1, 0, 1}).find("problems") != std::string::npos);
  CHECK(why_not_attention(one_strip, a100, {1, 9, 1}).find("problems") != std::string::npos);
  CHECK(why_not_attention(one_strip, a100, {1, 1, 3}).find("stages") != std::string::npos);
  const AttentionProblem large = problem_of(256, 256, 128, 128, 100);
  CHECK(why_not_attention(large, a100, {4, 4, 1}).find("warps x problems") != std::string::npos);
  CHECK(why_not_attention(large, a100, {4, 1, 2}).find("shared memory") != std::string::npos);
  DeviceProps turing = a100;
  turing.arch = 75;
  CHECK(why_not_attention(large, turing, {1, 1, 1}).find("sm_80") != std::string::npos);
}

TEST_CASE("the kernel spec names every specialization argument; the launch covers the block") {
  AttentionProblem p = problem_of(49, 100, 32, 64, 1000, true);
  p.dtype = DType::kBF16;
  p.bias_kind = kAddendF16;
  p.mask_kind = kAddendNone;
  const AttentionConfig c{4, 2, 2};
  const KernelSpec spec = attention_kernel_spec(p, c);
  CHECK(spec.header == "attention_tile.cuh");
  CHECK(spec.name_expression == "kjit::attention_tile<kjit::bf16, 49, 100, 32, 64, 2, 0, true, 4, 2, 2>");
  const LaunchShape shape = attention_launch_shape(p, c, 132);
  CHECK(shape.block == 256);
  // Two stages, each K and V (112 padded keys) and Q (64 padded rows); then each of the 8 warps'
  // 8 rows of O (dv = 64), padded.
  const int warp_rows = 8 * 8 * (64 + 8) * 2;
  CHECK(shape.dynamic_smem == 2 * 2 * (112 * (40 + 72) * 2 + 64 * 40 * 2) + warp_rows);
  // One stage: no Q in the stages. A warp a strip loads Q into registers; warps of several strips
  // each have a strip of Q rows (d = 32) after their rows of O.
  CHECK(attention_launch_shape(p, {4, 2, 1}, 132).dynamic_smem == 2 * 112 * (40 + 72) * 2 + warp_rows);
  const int copying_warps = 4 * (8 * (64 + 8) * 2 + 16 * (32 + 8) * 2);
  CHECK(attention_launch_shape(p, {2, 2, 1}, 132).dynamic_smem == 2 * 112 * (40 + 72) * 2 + copying_warps);
  CHECK(shape.persistent);
  LaunchShape resident = shape;
  resident.max_clusters = 264;
  CHECK(attention_grid(resident, 1000) == 250);   // one round: a block a pair of problems
  CHECK(attention_grid(resident, 1001) == 251);
  CHECK(attention_grid(resident, 600) == 150);
  CHECK(attention_grid(resident, 100000) <= 264);  // rounds over resident blocks
  CHECK(attention_grid(resident, 1) == 1);
}

TEST_CASE("kernels that hold their addends launch steps of whole periods, or a problem a group") {
  // 49 x 49 with bias and mask: 4 strips of one key block, so 4 warps a problem hold them.
  AttentionProblem p = problem_of(49, 49, 32, 32, 1000);
  p.bias_kind = kAddendF16;
  p.mask_kind = kAddendBF16;
  CHECK(attention_holds_addends(p.m, p.n, p.dv, 4, true));
  CHECK_FALSE(attention_holds_addends(p.m, p.n, p.dv, 2, true));    // a warp of two strips
  CHECK_FALSE(attention_holds_addends(p.m, p.n, p.dv, 4, false));   // nothing to hold
  CHECK_FALSE(attention_holds_addends(64, 100, 64, 4, true));       // two key blocks
  CHECK(attention_holds_addends(64, 7, 16, 4, true));               // rows of 7 keys: one block of 16
  CHECK(attention_holds_addends(16, 16, 64, 1, true));
  CHECK(attention_addend_period(true, true, 4, 64) == 256);
  CHECK(attention_addend_period(true, false, 4, 64) == 4);
  CHECK(attention_addend_period(false, true, 3, 5) == 15);
  AttentionArgs args;
  args.m = args.n = 49;
  args.d = args.dv = 32;
  args.heads = 4;
  args.mask_windows = 5;
  int bias = 0, mask = 0;
  args.bias = &bias;
  args.mask = &mask;
  CHECK(attention_grid_period(attention_launch_shape(p, {4, 2, 2}, 132), args) == 20);
  CHECK(attention_grid_period(attention_launch_shape(p, {1, 4, 1}, 132), args) == 1);
  args.mask = nullptr;
  CHECK(attention_grid_period(attention_launch_shape(p, {4, 1, 1}, 132), args) == 4);
  args.bias = nullptr;
  CHECK(attention_grid_period(attention_launch_shape(p, {4, 1, 1}, 132), args) == 1);

  for (int per_block : {1, 2, 4, 8})
    for (int resident : {1, 50, 396})
      for (std::int64_t period : {2, 3, 7, 20, 256, 5000})
        for (std::int64_t problems : {1, 19, 148, 1000, 16384, 100003}) {
          LaunchShape shape;
          shape.rows_per_block = per_block;
          shape.max_clusters = resident;
          const std::int64_t grid = attention_grid(shape, problems, period);
          const std::int64_t step = grid * per_block;
          CAPTURE(per_block);
          CAPTURE(resident);
          CAPTURE(period);
          CAPTURE(problems);
          CHECK(grid >= 1);
          // Every group's problems share a period's position, or each group has one problem.
          CHECK((step % period == 0 || step >= problems));
          // No more groups than the problems need, nor than the resident blocks hold or a period asks.
          CHECK(grid <= (problems + per_block - 1) / per_block);
          const std::int64_t most = std::max<std::int64_t>(std::int64_t{resident} * per_block,
                                                           std::lcm(period, std::int64_t{per_block}));
          CHECK(step <= most);
        }
}

TEST_CASE("call descriptions round-trip, and the tools' JSON names bad fields") {
  const nlohmann::json call = {{"op", "attention"}, {"dtype", "bf16"},   {"batch", 4096}, {"heads", 4},
                               {"m", 49},          {"n", 49},           {"d", 32},       {"bias_dtype", "f32"},
                               {"mask_dtype", "f16"}, {"mask_windows", 64}, {"causal", false}};
  const AttentionProblem p = AttentionFamily::problem_from_json(call);
  CHECK(p.rows == 4096 * 4);
  CHECK(p.dv == 32);
  CHECK(p.bias_kind == kAddendF32);
  CHECK(p.mask_kind == kAddendF16);
  CHECK(p.mask_windows == 64);
  const AttentionProblem again = AttentionFamily::problem_from_json(AttentionFamily::describe(p));
  CHECK(key_of(again) == key_of(p));
  CHECK(again.batch == p.batch);
  CHECK(again.heads == p.heads);
  CHECK(again.mask_windows == p.mask_windows);
  CHECK(AttentionFamily::problem_from_json({{"op", "attention"}, {"m", 7}, {"n", 9}, {"d", 16}, {"causal", 1}}).causal);
  const auto message = [](const nlohmann::json& bad) {
    try {
      AttentionFamily::problem_from_json(bad);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message({{"op", "attention"}, {"n", 9}, {"d", 16}}).find("m") == 0);
  CHECK(message({{"op", "attention"}, {"m", 9}, {"n", 9}, {"d", 24}}).find("d ") == 0);
  CHECK(message({{"op", "attention"}, {"m", 9}, {"n", 9}, {"d", 16}, {"bias_dtype", "i8"}}) != "");
  CHECK(message({{"op", "attention"}, {"m", 9}, {"n", 9}, {"d", 16}, {"causal", "yes"}}).find("causal") == 0);
  CHECK(message({{"op", "attention"}, {"m", 9}, {"n", 9}, {"d", 16}, {"batch", 0}}).find("batch") == 0);
  CHECK(message({{"op", "attention"}, {"m", 9}, {"n", 9}, {"d", 16}, {"heads", 1 << 30}, {"batch", 1 << 30}})
            .find("batch") == 0);
  CHECK_THROWS_AS(AttentionFamily::partial_config("stream"), Error);
  CHECK(AttentionFamily::partial_config("tile") == AttentionConfig{});
}

TEST_CASE("attention configs round-trip through their JSON") {
  const AttentionConfig c{4, 2, 1};
  CHECK(AttentionConfig::from_json(c.to_json()) == c);
  CHECK(c.to_string() == "attention warps=4 problems=2 stages=1");
  CHECK_THROWS_AS(AttentionConfig::from_json("{\"warps\":4}"), Error);
  CHECK_THROWS_AS(AttentionConfig::from_json("{\"warps\":-1,\"problems\":1,\"stages\":1}"), Error);
}
