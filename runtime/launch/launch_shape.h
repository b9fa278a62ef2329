// SPDX-License-Identifier: Apache-2.0
// How a config's kernel is launched: block, cluster, shared memory, and how its grid covers the
// rows. The grid itself follows from the row count at launch.
#pragma once

namespace kjit {

struct LaunchShape {
  int block = 0;
  int rows_per_block = 1;      ///< rows handled by one block per step (groups per block)
  int cluster = 1;             ///< blocks per row (cluster size)
  int dynamic_smem = 0;        ///< bytes
  int max_clusters = 1 << 30;  ///< clusters (or blocks) resident at once, for persistent grids
  /// Resident blocks (or clusters) walk the rows. Otherwise a block (or cluster) per row tile.
  bool persistent = false;
  /// May launch as a programmatic dependent of the previous kernel in the stream: the device
  /// supports it and the runtime's option allows it (see launches_as_dependent).
  bool dependent_launch = false;
  /// A persistent grid that still launches as a dependent when it walks the rows in several
  /// rounds (see launches_as_dependent).
  bool dependent_past_one_round = false;
};

}  // namespace kjit
