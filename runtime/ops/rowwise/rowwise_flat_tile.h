// SPDX-License-Identifier: Apache-2.0
// The flat_tile algorithm on the host: its fitting, its validity and its tuning candidates
// (kernel_sources/flat_tile.cuh; the geometry both sides share is flat_tile_layout.cuh).
#pragma once

#include <string>
#include <vector>

#include "kjit/config.hpp"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit::rowwise {

/// Values a lane the fitted group aims at: a few loads and exponentials each, and no more
/// shuffles than that.
constexpr int kFlatTileTargetValues = 4;

/// Lanes a row: the fewest (a power of two, at most 32) that hold it `values` values a lane.
int flat_tile_group(const RowwiseProblem& p, int values = kFlatTileTargetValues);
/// flat_tile over `threads` threads, flat_tile_group(p, values) lanes a row.
KernelConfig fit_flat_tile(const RowwiseProblem& p, int threads = 256, int values = kFlatTileTargetValues);
/// Empty when flat_tile `c` can run `p`, else why not.
std::string why_not_flat_tile(const RowwiseProblem& p, const KernelConfig& c);
/// Its tuning candidates for dense rows, or rows of narrow gaps, within its width: 128 and 256
/// threads, at the fitted group and at half of it (more values a lane, fewer shuffles).
void add_flat_tile_candidates(const RowwiseProblem& p, std::vector<KernelConfig>& out);

}  // namespace kjit::rowwise
