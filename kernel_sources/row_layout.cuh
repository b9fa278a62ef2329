// SPDX-License-Identifier: Apache-2.0
// How the row-wise kernels lay a row over blocks, threads, registers and shared memory: the
// kernels size themselves with these functions, and the host plans and launches with the same
// ones (runtime/ops/rowwise/), so both sides always agree. Plain constexpr C++, no std headers.
#pragma once

#include "host_device.cuh"
#include "row_params.cuh"
#include "row_peel.cuh"

namespace kjit {

/// The widest vector access of a pack, in bytes.
constexpr int kMaxPackBytes = 16;
/// Bulk copies (TMA) start and move whole units of this many bytes.
constexpr int kBulkUnitBytes = 16;
/// The most blocks a row may span: the largest (non-portable) thread-block cluster of sm_90.
constexpr int kMaxClusterBlocks = 16;
/// Registers of an SM, which the blocks resident on it share.
constexpr int kRegistersPerSm = 65536;
/// Registers a thread may spend holding its share of a row; the kernels refuse more.
constexpr int kMaxHeldRegisters = 64;

/// Columns of each block's slice when `blocks` blocks share a row of `cols`: whole packs, so
/// vector accesses stay aligned; the last slice is the shorter.
KJIT_HOST_DEVICE constexpr long long pack_slice_cols(long long cols, int pack, int blocks) {
  return ((cols + blocks - 1) / blocks + pack - 1) / pack * pack;
}

/// Columns a thread's share of a slice is sized for (the cluster kernel): the slice, or peeled,
/// its span at the worst shift (peeled_cols).
KJIT_HOST_DEVICE constexpr long long cluster_share_cols(long long cols, int pack, int blocks, bool peel) {
  return peel ? peeled_cols(pack_slice_cols(cols, pack, blocks), pack) : pack_slice_cols(cols, pack, blocks);
}

/// Elements a block keeps of its slice in shared memory (row_smem): the slice, and peeled, the
/// vector more that its span at the worst shift takes.
KJIT_HOST_DEVICE constexpr long long smem_slice_cols(long long cols, int pack, int blocks, bool peel) {
  return pack_slice_cols(cols, pack, blocks) + (peel ? pack : 0);
}

/// The same for kernels that move slices by bulk copies (row_stream, row_ring): every slice
/// starts on a 16-byte boundary.
KJIT_HOST_DEVICE constexpr long long bulk_slice_cols(long long cols, int elem_bytes, int blocks) {
  return pack_slice_cols(cols, kBulkUnitBytes / elem_bytes, blocks);
}

/// Values of a row (or slice) of `cols` that each of `threads` threads holds: whole packs.
KJIT_HOST_DEVICE constexpr long long row_share_values(long long cols, int pack, int threads) {
  return (cols + static_cast<long long>(threads) * pack - 1) / (static_cast<long long>(threads) * pack) * pack;
}

/// Whether a thread holds its values as the loaded words (HeldRow): 16-bit inputs, packs of
/// whole 32-bit words, a row over more than a warp.
KJIT_HOST_DEVICE constexpr bool holds_input_words(int in_bytes, int pack, int group_threads) {
  return in_bytes == 2 && pack % 2 == 0 && group_threads > 32;
}

/// Whether a peeled share of `registers` held registers (16-bit values held as `words`) stores
/// realigned where the output's lead differs from the input's (row_regs.cuh): the shifts'
/// temporaries (a pack's words, the next lane's and the window) spilled beside a share of half the
/// most or more under the 64 registers a thread of two 512-thread blocks has, and, with the
/// window stored as one vector, beside 16-bit words of 28 (bf16 50257 at 1024 threads); those store
/// element by element.
KJIT_HOST_DEVICE constexpr bool realigns_share(long long registers, bool words) {
  return registers < (words ? kMaxHeldRegisters * 7 / 16 : kMaxHeldRegisters / 2);
}

/// Registers a thread spends holding `values`: two 16-bit values a register as words.
KJIT_HOST_DEVICE constexpr long long held_registers(bool words, long long values) {
  return words ? (values + 1) / 2 : values;
}

/// Registers a thread of `group_threads` threads to a row spends holding its share of `cols`.
KJIT_HOST_DEVICE constexpr long long share_registers(long long cols, int in_bytes, int pack, int group_threads) {
  return held_registers(holds_input_words(in_bytes, pack, group_threads),
                        row_share_values(cols, pack, group_threads));
}

/// Registers a thread of block_split needs beside its held values: addresses, the staged
/// values it widens, the statistics; reduce_scale's exact division takes more. With fewer, the
/// compiler spilled at 32 registers a thread.
KJIT_HOST_DEVICE constexpr int split_other_registers(int op) { return op == kOpReduceScale ? 32 : 24; }

/// Packs of a row of `cols` each thread of a block_split block takes, held and staged.
KJIT_HOST_DEVICE constexpr long long split_thread_packs(long long cols, int pack, int threads) {
  return threads > 0 && pack > 0 ? row_share_values(cols, pack, threads) / pack : 0;
}

/// Registers a block_split thread spends on its held packs (those it does not stage).
KJIT_HOST_DEVICE constexpr long long split_held_registers(long long cols, int in_bytes, int pack, int threads,
                                                          long long staged) {
  return held_registers(holds_input_words(in_bytes, pack, threads),
                        (split_thread_packs(cols, pack, threads) - staged) * pack);
}

/// Blocks of block_split an SM holds by registers.
KJIT_HOST_DEVICE constexpr long long split_blocks_by_registers(int op, int threads, long long held) {
  return kRegistersPerSm / (static_cast<long long>(threads) * (held + split_other_registers(op)));
}

/// Dynamic shared memory of block_split: every thread's staged packs.
KJIT_HOST_DEVICE constexpr long long split_smem_bytes(int in_bytes, int pack, int threads, long long staged) {
  return staged * threads * pack * in_bytes;
}

/// Stages of row_stream's double buffer: one tile computed while the next lands.
constexpr int kStreamStages = 2;

/// Dynamic shared memory of row_stream: its stages of a tile of row slices, a slice for each
/// group of `group_threads` (a whole block's row where group_threads == threads).
KJIT_HOST_DEVICE constexpr long long stream_smem_bytes(long long cols, int in_bytes, int threads, int group_threads,
                                                       int blocks) {
  const long long rows_per_tile = group_threads > 0 ? threads / group_threads : 1;
  return kStreamStages * rows_per_tile * bulk_slice_cols(cols, in_bytes, blocks) * in_bytes;
}

}  // namespace kjit
