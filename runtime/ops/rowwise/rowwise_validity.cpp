// SPDX-License-Identifier: Apache-2.0
// Which configs can run a row-wise problem: one check per algorithm (can_implement), each
// stating in its message what the kernel requires (the kernels' static_asserts and layouts).
#include <algorithm>
#include <cstdint>
#include <string>

#include "runtime/ops/rowwise/rowwise_fit.h"
#include "runtime/ops/rowwise/rowwise_flat_tile.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_rules.h"

namespace kjit {
namespace {

using namespace rowwise;

std::string why_not_threads(const KernelConfig& c) {
  if (c.threads < 32 || c.threads > 1024 || c.threads % 32 != 0)
    return "threads must be a multiple of 32 in [32, 1024]";
  if (!takes_row_groups(c.algorithm) && c.algorithm != Algorithm::kRing && c.group != c.threads)
    return "group must equal threads for block algorithms";
  if (!takes_cluster_size(c.algorithm) && c.cluster != 1) return "cluster must be 1";
  if (c.cluster_grid != ClusterGrid::kResident && !takes_cluster_grid(c.algorithm))
    return "cluster_grid per_row applies to the cluster and cluster_smem algorithms only";
  if (c.staged != 0 && c.algorithm != Algorithm::kBlockSplit) return "staged applies to block_split only";
  if (c.peel && !takes_peel(c.algorithm))
    return "peel applies to every algorithm but stream and flat_tile";
  return {};
}

std::string why_not_warp(const RowwiseProblem& p, const KernelConfig& c) {
  if (!is_pow2(c.group) || c.group > 32) return "warp: group must be a power of two <= 32";
  if (c.threads % c.group != 0) return "warp: threads must be a multiple of group";
  if (!fits_registers(p, c, share_cols(p, c), kMaxHeldRegisters)) return "warp: more than 64 values per thread";
  return {};
}

std::string why_not_block_regs(const RowwiseProblem& p, const KernelConfig& c) {
  if (!fits_registers(p, c, share_cols(p, c), kMaxHeldRegisters))
    return "block_regs: more than 64 values per thread (128 of 16 bits, held two to a register)";
  return {};
}

std::string why_not_smem(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (c.algorithm == Algorithm::kClusterSmem) {
    if (!has_clusters(d)) return "cluster_smem: needs sm_90 or newer";
    if (c.cluster < 2 || c.cluster > kMaxClusterBlocks) return "cluster_smem: 2..16 blocks per row";
    if (p.rows * c.cluster > 0x7fffffff) return "cluster_smem: too many rows for one grid";
  }
  if (c.peel && c.pack * size_of(p.in_dtype) < 4)
    return std::string(to_string(c.algorithm)) + ": a peeled input pack must be at least 4 bytes";
  const auto bytes = smem_slice_bytes(p, c);
  if (bytes + kSmemReserve > d.max_smem_per_block)
    return std::string(to_string(c.algorithm)) + ": a slice needs " + std::to_string(bytes) +
           " bytes of shared memory; the device has " + std::to_string(d.max_smem_per_block);
  return {};
}

std::string why_not_online(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (c.cluster < 1 || c.cluster > kMaxClusterBlocks) return "block_online: 1..16 blocks per row";
  if (c.cluster > 1 && !has_clusters(d)) return "block_online: more than one block per row needs sm_90 or newer";
  if ((c.cluster - 1) * pack_slice_cols(p.cols, c.pack, c.cluster) >= p.cols)
    return "block_online: too many blocks per row for " + std::to_string(p.cols) + " columns";
  return {};
}

std::string why_not_cluster(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (!has_clusters(d)) return "cluster: needs sm_90 or newer";
  if (c.cluster < 2 || c.cluster > kMaxClusterBlocks) return "cluster: 2..16 blocks per row";
  if (p.rows * c.cluster > 0x7fffffff) return "cluster: too many rows for one grid";
  if (!fits_registers(p, c, cluster_share_cols(p.cols, c.pack, c.cluster, c.peel), kMaxHeldRegisters))
    return "cluster: more than 64 values per thread (128 of 16 bits, held two to a register)";
  return {};
}

std::string why_not_stream(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (!has_clusters(d)) return "stream: needs sm_90 or newer (bulk async copies)";
  if (c.cluster < 1 || c.cluster > kMaxClusterBlocks) return "stream: 1..16 blocks per row";
  const bool row_per_block = c.group == c.threads;
  if (!row_per_block && (!is_pow2(c.group) || c.group < 8 || c.group > 32))
    return "stream: group must be threads, or a power of two in [8, 32]";
  if (!row_per_block && c.cluster != 1) return "stream: a cluster takes one row per block";
  if (p.max_pack * size_of(p.in_dtype) < kBulkUnitBytes)
    return "stream: input rows must start on 16-byte boundaries (pointer and stride)";
  if ((c.cluster - 1) * bulk_slice_cols(p.cols, size_of(p.in_dtype), c.cluster) >= p.cols)
    return "stream: too many blocks per row for " + std::to_string(p.cols) + " columns";
  const std::int64_t bytes = stream_smem_bytes(p, c);
  if (bytes + kSmemReserve > d.max_smem_per_block)
    return "stream: two stages need " + std::to_string(bytes) +
           " bytes of shared memory; the device has " + std::to_string(d.max_smem_per_block);
  return {};
}

std::string why_not_ring(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (!has_clusters(d)) return "ring: needs sm_90 or newer (bulk async copies)";
  if (c.pack * size_of(p.in_dtype) != kBulkUnitBytes)
    return "ring: pack must be 16 bytes (bulk copies move 16-byte units)";
  if (c.cluster < 1 || c.cluster > kMaxClusterBlocks) return "ring: 1..16 blocks per row";
  if (size_of(p.in_dtype) != size_of(p.out_dtype))
    return "ring: input and output elements must have the same size (outputs take the inputs' places)";
  if (!c.peel && p.max_pack * size_of(p.in_dtype) < kBulkUnitBytes)
    return "ring: rows must start on 16-byte boundaries (pointers and strides), or be peeled";
  if (c.group != c.threads && c.group * 2 != c.threads)
    return "ring: group must be threads (one consumer group) or threads / 2 (two taking turns)";
  if (c.group < 64 || c.group > 512 || kRingMaxChunkBytes / kBulkUnitBytes % c.group != 0)
    return "ring: group must be 64, 128, 256 or 512 threads (a chunk holds 2048 packs)";
  if (c.threads + kRingProducerThreads > 1024) return "ring: threads plus the producer warp must be at most 1024";
  const RingShape shape = ring_shape(p, c);
  if ((c.cluster - 1) * shape.slice_cols >= p.cols)
    return "ring: too many blocks per row for " + std::to_string(p.cols) + " columns";
  const std::int64_t max_values = ring_max_values(shape.words);
  if (shape.values_per_thread > max_values)
    return "ring: more than " + std::to_string(max_values) + " values per thread (" +
           std::to_string(shape.values_per_thread) + ")";
  if (shape.ring_bytes + kSmemReserve > d.max_smem_per_block)
    return "ring: the ring needs " + std::to_string(shape.ring_bytes) +
           " bytes of shared memory; the device has " + std::to_string(d.max_smem_per_block);
  return {};
}

std::string why_not_split(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (c.pack * size_of(p.in_dtype) < 4)
    return "block_split: an input pack must be at least 4 bytes (asynchronous copies move 4, 8 or 16)";
  const SplitFit fit = split_fit(p, d, c);
  if (c.staged < 1 || c.staged > fit.packs)
    return "block_split: staged must be 1.." + std::to_string(fit.packs) + " (a thread's packs)";
  const std::int64_t max_held = std::min<std::int64_t>(
      kMaxHeldRegisters, kRegistersPerSm / c.threads - split_other_registers(static_cast<int>(p.op)));
  if (fit.held_registers > max_held)
    return "block_split: the held packs take " + std::to_string(fit.held_registers) +
           " registers a thread; at most " + std::to_string(max_held) + " fit (stage more packs)";
  const std::int64_t bytes = split_smem_bytes(p, c);
  if (bytes + kSmemReserve > d.max_smem_per_block)
    return "block_split: the staged packs need " + std::to_string(bytes) +
           " bytes of shared memory; the device has " + std::to_string(d.max_smem_per_block);
  return {};
}

std::string why_not_algorithm(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  switch (c.algorithm) {
    case Algorithm::kWarp: return why_not_warp(p, c);
    case Algorithm::kBlockRegs: return why_not_block_regs(p, c);
    case Algorithm::kBlockSmem:
    case Algorithm::kClusterSmem: return why_not_smem(p, d, c);
    case Algorithm::kBlockOnline: return why_not_online(p, d, c);
    case Algorithm::kCluster: return why_not_cluster(p, d, c);
    case Algorithm::kStream: return why_not_stream(p, d, c);
    case Algorithm::kRing: return why_not_ring(p, d, c);
    case Algorithm::kBlockSplit: return why_not_split(p, d, c);
    case Algorithm::kFlatTile: return why_not_flat_tile(p, c);
    case Algorithm::kAuto: return "algorithm must be concrete";
  }
  return "unknown algorithm";
}

}  // namespace

std::string why_not_rowwise(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  // Peeled rows take whole vectors wherever a row's own grid gives them, whatever the alignment.
  if (c.peel && (!is_pow2(c.pack) || c.pack > widest_pack(p)))
    return "pack " + std::to_string(c.pack) + " is not a power of two <= the element sizes allow (" +
           std::to_string(widest_pack(p)) + ")";
  if (!c.peel && (!is_pow2(c.pack) || c.pack > p.max_pack))
    return "pack " + std::to_string(c.pack) + " is not a power of two <= the alignment allows (" +
           std::to_string(p.max_pack) + ")";
  if (c.pack * std::max(size_of(p.in_dtype), size_of(p.out_dtype)) > kMaxPackBytes) return "a pack is at most 16 bytes";
  if (std::string why = why_not_threads(c); !why.empty()) return why;
  return why_not_algorithm(p, d, c);
}

}  // namespace kjit
