// SPDX-License-Identifier: Apache-2.0
// The heuristic's pick for an attention problem, and the completion of partial configs: warps
// a problem, problems a block, and whether the next problem's K and V load during this one.
//
// Every valid config is scored by the warps it keeps busy on an SM: the blocks an SM holds
// (registers, estimated from what a thread holds; shared memory; threads; blocks) times their
// problems, capped by the problems there are, times the warps a problem keeps busy (its strips
// over the rounds its warps take them in), where two stages count more the fewer flops a byte
// the problem has (its next problem's copies overlap this one's work, which hides more where
// the copies are the larger part), past kSaturatingWarps no more, and a config reading bias and
// mask a problem at a time less (kAddendReadWorth). The constants come from every candidate's
// time on the H100 at the benchmark's cases and at 36 shapes drawn at random
// (docs/experiments/attention.md).
#include <algorithm>
#include <cmath>
#include <tuple>

#include "kernel_sources/attention_shape.cuh"
#include "kernel_sources/row_layout.cuh"
#include "runtime/ops/attention/attention_heuristics.h"

namespace kjit {
namespace {

/// Busy warps an SM past which more hide nothing more.
constexpr double kSaturatingWarps = 24.0;
/// What a second stage is worth: 1 + kStageOverlapFlops / (the problem's flops a byte), at most
/// kMostStageWorth (two problems in flight a group where one stage has one).
constexpr double kStageOverlapFlops = 40.0;
constexpr double kMostStageWorth = 2.0;
/// What reading bias and mask a problem at a time leaves of a config's throughput: window
/// attention with them ran at 0.73 of the same shape without them (scalar L1 loads,
/// docs/experiments/attention.md). A kernel that holds them reads them once a group.
constexpr double kAddendReadWorth = 0.73;
/// Registers are allocated to a warp in units of this many.
constexpr int kRegisterUnit = 256;
/// Blocks an SM holds at most (sm_80 and sm_90).
constexpr int kMostBlocksPerSm = 32;

bool has_addends(const AttentionProblem& p) { return p.bias_kind != kAddendNone || p.mask_kind != kAddendNone; }

bool holds_addends(const AttentionProblem& p, const AttentionConfig& c) {
  return attention_holds_addends(p.m, p.n, p.dv, c.warps, has_addends(p));
}

/// A thread's registers, estimated from what it holds: the scores of a key block, the output's
/// accumulators and Q's fragments, with their addresses and temporaries, and more where the
/// keys take several blocks (the online softmax's state, the last block's own code); held
/// addends take a key block's scores again, addends read a problem at a time about 45 for the
/// loads in flight. Fitted to ptxas's counts for sm_90 within about 8.
int estimated_registers(const AttentionProblem& p, const AttentionConfig& c) {
  const int key_block = attention_key_block(p.n, p.dv);
  const double held = key_block / 2.0 + p.dv / 2.0 + p.d / 4.0;
  const int several_blocks = attention_padded(p.n) > key_block ? 25 : 0;
  const int addends = !has_addends(p) ? 0 : holds_addends(p, c) ? key_block / 2 : 45;
  return std::min(255, static_cast<int>(25 + 1.2 * held + several_blocks + addends));
}

/// Blocks of `config` an SM holds at once.
int resident_blocks(const AttentionProblem& p, const DeviceProps& device, const AttentionConfig& config) {
  const int warps = config.warps * config.problems;
  const int warp_registers =
      (estimated_registers(p, config) * 32 + kRegisterUnit - 1) / kRegisterUnit * kRegisterUnit;
  const int by_registers = kRegistersPerSm / (warp_registers * warps);
  const std::int64_t smem = attention_smem_bytes(p, config) + device.reserved_smem_per_block;
  const int by_smem = static_cast<int>(device.max_smem_per_sm / std::max<std::int64_t>(smem, 1));
  const int by_threads = device.max_threads_per_sm / (32 * warps);
  return std::max(0, std::min({by_registers, by_smem, by_threads, kMostBlocksPerSm}));
}

/// Warps of a group busy on a problem on average: its strips over the rounds the warps take them
/// in (10 strips keep 8 warps busy 5 at a time over 2 rounds, and 4 warps 3.3 over 3).
double busy_warps_a_problem(const AttentionProblem& p, const AttentionConfig& c) {
  const int strips = attention_strips(p.m);
  return static_cast<double>(strips) / ((strips + c.warps - 1) / c.warps);
}

/// What a second stage is worth where a group has a next problem to load.
double second_stage_worth(const AttentionProblem& p) {
  const double flops = 2.0 * attention_padded(p.m) * attention_padded(p.n) * (p.d + p.dv);
  const double bytes = 2.0 * (static_cast<double>(p.m) + p.n) * (p.d + p.dv);
  return std::min(kMostStageWorth, 1.0 + kStageOverlapFlops * bytes / flops);
}

/// How a config ranks: busy warps an SM (see above), then one stage before two, more warps a
/// problem (each problem done sooner), more SMs covered, more problems a block.
using Rank = std::tuple<double, int, int, std::int64_t, int>;

Rank rank_of(const AttentionProblem& p, const DeviceProps& device, const AttentionConfig& c) {
  const int sms = std::max(1, device.sm_count);
  const std::int64_t blocks = (p.rows + c.problems - 1) / c.problems;
  const std::int64_t groups = static_cast<std::int64_t>(resident_blocks(p, device, c)) * c.problems;
  const double groups_an_sm = std::min(static_cast<double>(groups), static_cast<double>(p.rows) / sms);
  // A second stage overlaps only where a group has a next problem to load.
  const bool overlaps = c.stages == 2 && p.rows >= 2 * groups * sms;
  const double reads = has_addends(p) && !holds_addends(p, c) ? kAddendReadWorth : 1.0;
  const double busy = std::min(kSaturatingWarps, groups_an_sm * busy_warps_a_problem(p, c) *
                                                     (overlaps ? second_stage_worth(p) : 1.0)) *
                      reads;
  return {std::round(busy * 1000.0) / 1000.0, -c.stages, c.warps, std::min<std::int64_t>(blocks, sms), c.problems};
}

/// The best-ranked valid config agreeing with the non-zero fields of `partial`; none (all zero)
/// when no such config can run.
AttentionConfig best_config(const AttentionProblem& p, const DeviceProps& device, const AttentionConfig& partial) {
  AttentionConfig best{};
  Rank best_rank{};
  for (int warps : {1, 2, 4, 8})
    for (int problems : {1, 2, 4, 8})
      for (int stages : {1, 2}) {
        const AttentionConfig c{warps, problems, stages};
        if ((partial.warps != 0 && partial.warps != warps) || (partial.problems != 0 && partial.problems != problems) ||
            (partial.stages != 0 && partial.stages != stages) || !why_not_attention(p, device, c).empty())
          continue;
        const Rank rank = rank_of(p, device, c);
        if (best.warps == 0 || rank > best_rank) {
          best = c;
          best_rank = rank;
        }
      }
  return best;
}

}  // namespace

AttentionConfig complete_attention_config(const AttentionProblem& problem, const DeviceProps& device,
                                          AttentionConfig config) {
  const AttentionConfig best = best_config(problem, device, config);
  if (best.warps != 0) return best;
  // Nothing valid agrees with the given fields: fill the rest plainly, and the validity check
  // names what is wrong.
  if (config.warps == 0) config.warps = 1;
  if (config.problems == 0) config.problems = 1;
  if (config.stages == 0) config.stages = 1;
  return config;
}

AttentionConfig choose_attention_config(const AttentionProblem& problem, const DeviceProps& device) {
  return complete_attention_config(problem, device, AttentionConfig{});
}

}  // namespace kjit
