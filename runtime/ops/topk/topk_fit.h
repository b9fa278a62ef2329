// SPDX-License-Identifier: Apache-2.0
// How a top-K config sits on a problem: packs, slices, the resident kernel's registers and
// clusters, the buffer's bytes. Shared by the pick, the candidates and the validity check.
#pragma once

#include <cstdint>

#include "kjit/config.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/topk/topk_kernels.h"
#include "runtime/ops/topk/topk_problem.h"

namespace kjit::topk {

/// The most values a resident block holds: 16 a thread at 1024 threads, which have 64
/// registers each (at 32 values the compiler moved the row to local memory).
constexpr int kResidentValuesPerBlock = 16384;
/// Threads of the resident kernel's widest block.
constexpr int kResidentMostThreads = 1024;
/// Values a stream thread aims to have in flight a step, at 512 threads.
constexpr int kStreamValuesInFlight = 16;
/// Clusters of more blocks than this take a GPC each (the H100's GPCs hold two of 8, one of 16).
constexpr int kMostBlocksTwoAGpc = 8;

/// The widest pack the logits allow, at most 16 bytes.
int widest_pack(const TopkProblem& problem);
/// The stream kernel's pack: for 16-bit logits 16 bytes whatever their alignment, rows off it
/// read from their 16-byte boundaries, each row's first columns before its start masked
/// (shifted_stream); for fp32 logits the widest their alignment allows. On the H100, 256 rows of
/// 50257 took 24.9-25.3 us shifted in bf16 against 26.0 at pack 1, and in fp32 30.5-30.8
/// shifted against 26.8 at pack 1 (docs/experiments/top-k-stream.md).
int stream_pack(const TopkProblem& problem);
/// The stream kernel's other pack, which the tuner tries beside it: the logits' own where the
/// stream pack is shifted, 16 bytes (shifted) where it is not; 0 where the two are one.
int other_stream_pack(const TopkProblem& problem);
/// Whether a config runs the stream kernel at a pack wider than the logits' alignment allows.
bool shifted_stream(const TopkProblem& problem, const TopkConfig& config);
/// Columns of a block's share when `cluster` blocks split a row.
std::int64_t slice_cols(const TopkProblem& problem, int cluster);
/// Columns of a resident block's slice, as the kernel rounds them: whole packs.
std::int64_t resident_slice(const TopkProblem& problem, int cluster, int pack);
bool is_resident(const TopkConfig& config);
/// Packs each thread of a resident config holds: its share of the slice.
int resident_packs(const TopkProblem& problem, const TopkConfig& config);
/// Dynamic shared memory and the kernels' static share (estimated, rounded up).
std::int64_t buffer_bytes(const TopkProblem& problem, const TopkConfig& config);

/// The most blocks a resident row may span: a cluster of 16 on sm_90, one block before.
int widest_resident_cluster(const DeviceProps& device);
/// The fewest blocks (a power of two) whose threads hold a row in registers, or 0 if no
/// cluster the device runs can.
int resident_min_cluster(const TopkProblem& problem, const DeviceProps& device);
/// The fewest blocks (any count) whose kResidentMostThreads threads hold a row at one pack each.
int one_pack_cluster(const TopkProblem& problem);

}  // namespace kjit::topk
