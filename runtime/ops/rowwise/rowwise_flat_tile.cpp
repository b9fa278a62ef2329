// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/rowwise/rowwise_flat_tile.h"

#include <algorithm>

#include "runtime/ops/rowwise/rowwise_fit.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"

namespace kjit::rowwise {

int flat_tile_group(const RowwiseProblem& p, int values) {
  return std::min(32, pow2_ceil(ceil_div(p.cols, values)));
}

KernelConfig fit_flat_tile(const RowwiseProblem& p, int threads, int values) {
  return {Algorithm::kFlatTile, 1, threads, flat_tile_group(p, values), 1};
}

std::string why_not_flat_tile(const RowwiseProblem& p, const KernelConfig& c) {
  if (!p.dense && !p.narrow_gaps)
    return "flat_tile: rows must be dense (input and output strides equal cols), or their gaps (stride - cols) "
           "at most " + std::to_string(kFlatTileMaxGapBytes) + " bytes and narrower than a row on each side";
  if (p.cols > kFlatTileMaxCols)
    return "flat_tile: at most " + std::to_string(kFlatTileMaxCols) + " columns";
  if (c.pack != 1) return "flat_tile: pack must be 1 (its spans move in 16-byte units whatever the width)";
  if (!is_pow2(c.group) || c.group > 32) return "flat_tile: group must be a power of two <= 32";
  if (c.threads % c.group != 0) return "flat_tile: threads must be a multiple of group";
  if (flat_tile_values(p.cols, c.group) > kFlatTileMaxValues)
    return "flat_tile: more than " + std::to_string(kFlatTileMaxValues) + " values a lane";
  const std::int64_t bytes = flat_tile_smem_bytes(p, c);
  if (bytes > kFlatTileMaxSmemBytes)
    return "flat_tile: the span buffers need " + std::to_string(bytes) + " bytes of shared memory; at most " +
           std::to_string(kFlatTileMaxSmemBytes) + " are static";
  return {};
}

void add_flat_tile_candidates(const RowwiseProblem& p, std::vector<KernelConfig>& out) {
  if ((!p.dense && !p.narrow_gaps) || p.cols > kFlatTileMaxCols) return;
  const int group = flat_tile_group(p);
  for (int threads : {128, 256})
    for (int g : {group, group / 2})
      if (g >= 1) out.push_back({Algorithm::kFlatTile, 1, threads, g, 1});
}

}  // namespace kjit::rowwise
