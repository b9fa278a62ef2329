// SPDX-License-Identifier: Apache-2.0
// Whether a row-wise config fits a device, stated from the kernels' side: the launch's block,
// cluster, grid and shared memory within the device's limits, and the values a thread holds
// within the register budget the kernels are written for.
#pragma once

#include <cstdint>
#include <string>

#include "kjit/config.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit::test {

/// Shared memory the block reductions take beside a kernel's dynamic shared memory.
constexpr std::int64_t kStaticSmemReserve = 2048;
/// Registers a thread may spend on the values it holds (held_row.cuh, block_split.cuh).
constexpr std::int64_t kHeldRegisterLimit = 64;
/// What the heuristic aims at where a thread holds its share of the row: up to this many
/// registers a row runs without spilling at 1024 threads.
constexpr std::int64_t kPickHeldRegisters = 32;
/// Registers a block_split thread needs beside its held packs (block_split.cuh).
inline std::int64_t split_other_registers(RowOp op) { return op == RowOp::kReduceScale ? 32 : 24; }

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// Registers a thread of a group of `group` threads spends on `values` values: 16-bit inputs in
/// packs of whole 32-bit words, a row over more than a warp, stay as loaded, two a register.
inline std::int64_t held_registers(const RowwiseProblem& p, int pack, int group, std::int64_t values) {
  const bool words = size_of(p.in_dtype) == 2 && pack % 2 == 0 && group > 32;
  return words ? ceil_div(values, 2) : values;
}

/// Registers a thread spends holding its share of `cols` columns, `group` threads to a row.
inline std::int64_t share_registers(const RowwiseProblem& p, std::int64_t cols, int pack, int group) {
  const std::int64_t values = ceil_div(cols, std::int64_t{group} * pack) * pack;
  return held_registers(p, pack, group, values);
}

/// Registers a thread spends on the values it holds in registers; 0 for the algorithms that
/// keep the row elsewhere (shared memory, or read twice).
inline std::int64_t row_registers(const RowwiseProblem& p, const KernelConfig& c) {
  switch (c.algorithm) {
    case Algorithm::kWarp:
    case Algorithm::kBlockRegs: {
      // A peeled row starts up to pack - 1 elements into its first vector.
      const std::int64_t span = c.peel ? p.cols + c.pack - 1 : p.cols;
      return share_registers(p, span, c.pack, c.group);
    }
    case Algorithm::kCluster: {
      // A peeled slice, like a peeled row, starts up to pack - 1 elements into its first vector.
      const std::int64_t slice = ceil_div(ceil_div(p.cols, c.cluster), c.pack) * c.pack;
      return share_registers(p, c.peel ? slice + c.pack - 1 : slice, c.pack, c.threads);
    }
    case Algorithm::kBlockSplit: {
      const std::int64_t span = c.peel ? p.cols + c.pack - 1 : p.cols;
      const std::int64_t packs = split_thread_packs(span, c.pack, c.threads);
      return held_registers(p, c.pack, c.threads, (packs - c.staged) * c.pack);
    }
    default: return 0;
  }
}

/// Empty when `c`'s launch fits `device`; otherwise which limit it breaks.
inline std::string why_not_fits(const RowwiseProblem& p, const DeviceProps& device, const KernelConfig& c) {
  const LaunchShape shape = rowwise_launch_shape(p, c, device.sm_count);
  if (shape.block < 32 || shape.block > 1024 || shape.block % 32 != 0)
    return "a block of " + std::to_string(shape.block) + " threads";
  // Groups split a block evenly: rows of a warp or stream tile, or the ring's consumer groups.
  const bool ring_groups = c.algorithm == Algorithm::kRing && (c.group == c.threads || 2 * c.group == c.threads);
  if (!ring_groups && std::int64_t{shape.rows_per_block} * c.group != c.threads)
    return std::to_string(shape.rows_per_block) + " rows a block of " + std::to_string(c.threads) +
           " threads in groups of " + std::to_string(c.group);
  if (shape.cluster < 1 || shape.cluster > 16) return "a cluster of " + std::to_string(shape.cluster);
  if (shape.cluster > 1 && device.arch < 90) return "a cluster below sm_90";
  if (shape.dynamic_smem < 0 || shape.dynamic_smem + kStaticSmemReserve > device.max_smem_per_block)
    return std::to_string(shape.dynamic_smem) + " bytes of dynamic shared memory";
  const std::int64_t grid = rowwise_grid(shape, p.rows);
  if (grid < shape.cluster || grid > 0x7fffffff || grid % shape.cluster != 0)
    return "a grid of " + std::to_string(grid) + " blocks in clusters of " + std::to_string(shape.cluster);
  const std::int64_t registers = row_registers(p, c);
  if (registers > kHeldRegisterLimit) return std::to_string(registers) + " registers of held values";
  if (c.algorithm == Algorithm::kBlockSplit &&
      std::int64_t{c.threads} * (registers + split_other_registers(p.op)) > 65536)
    return "more registers than an SM has";
  if (c.algorithm == Algorithm::kRing) {
    const std::int64_t most = size_of(p.in_dtype) == 2 ? 2 * kHeldRegisterLimit : kHeldRegisterLimit;
    if (ring_shape(p, c).values_per_thread > most) return "more ring values a thread than registers";
  }
  return {};
}

}  // namespace kjit::test
