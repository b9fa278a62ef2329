// SPDX-License-Identifier: Apache-2.0
// What a block of the top-K stream kernel keeps in static shared memory for the row in flight.
#pragma once

#include "topk_keys.cuh"
#include "topk_select.cuh"

namespace kjit {

/// What one block keeps in static shared memory for the row in flight.
struct TopkBlockState {
  SelectScratch select;
  TopkKey threshold;    ///< the buffer admits keys above it
  int count;            ///< keys in the buffer
  int final_count;      ///< length of this block's list (read by the cluster)
  int pool_count;       ///< keys gathered from the cluster (placing by gathering)
  TopkKey block_bound;  ///< this block's list holds every key of its slice above it (in
                        ///< block 0, once it has read the cluster: the row's highest bound)
  float block_max;      ///< this block's statistics (read by the cluster)
  float block_sum;
  float top_sum;        ///< this block's share of the winners' mass (KJIT_TOPK_RENORM)
  int list_count[16];   ///< every cluster block's list length
  float warp_max[32];
  float warp_sum[32];
};

}  // namespace kjit
