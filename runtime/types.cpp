// SPDX-License-Identifier: Apache-2.0
#include "kjit/config.hpp"
#include "kjit/error.hpp"
#include "kjit/types.hpp"

namespace kjit {

const char* to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
  }
  return "unknown";
}

int size_of(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
  }
  return 0;
}

DType parse_dtype(const std::string& text) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kI64})
    if (text == to_string(dtype)) return dtype;
  throw Error(Status::kErrorInvalidArgument,
              "dtype '" + text + "' is not one of f32, f16, bf16, i32, i64");
}

const char* to_string(RowOp op) noexcept {
  switch (op) {
    case RowOp::kSoftmax: return "softmax";
    case RowOp::kLogSoftmax: return "log_softmax";
    case RowOp::kReduceScale: return "reduce_scale";
  }
  return "unknown";
}

RowOp parse_row_op(const std::string& text) {
  for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale})
    if (text == to_string(op)) return op;
  throw Error(Status::kErrorInvalidArgument,
              "op '" + text + "' is not one of softmax, log_softmax, reduce_scale");
}

const char* to_string(Algorithm algorithm) noexcept {
  switch (algorithm) {
    case Algorithm::kAuto: return "auto";
    case Algorithm::kWarp: return "warp";
    case Algorithm::kBlockRegs: return "block_regs";
    case Algorithm::kBlockSmem: return "block_smem";
    case Algorithm::kBlockOnline: return "block_online";
    case Algorithm::kCluster: return "cluster";
    case Algorithm::kClusterSmem: return "cluster_smem";
    case Algorithm::kStream: return "stream";
    case Algorithm::kRing: return "ring";
    case Algorithm::kBlockSplit: return "block_split";
    case Algorithm::kFlatTile: return "flat_tile";
  }
  return "unknown";
}

Algorithm parse_algorithm(const std::string& text) {
  for (Algorithm algorithm : {Algorithm::kAuto, Algorithm::kWarp, Algorithm::kBlockRegs,
                              Algorithm::kBlockSmem, Algorithm::kBlockOnline, Algorithm::kCluster,
                              Algorithm::kClusterSmem, Algorithm::kStream, Algorithm::kRing,
                              Algorithm::kBlockSplit, Algorithm::kFlatTile})
    if (text == to_string(algorithm)) return algorithm;
  throw Error(Status::kErrorInvalidArgument,
              "algorithm '" + text +
                  "' is not one of auto, warp, block_regs, block_smem, block_online, cluster, cluster_smem, "
                  "stream, ring, block_split, flat_tile");
}

const char* to_string(ClusterGrid grid) noexcept {
  switch (grid) {
    case ClusterGrid::kResident: return "resident";
    case ClusterGrid::kPerRow: return "per_row";
  }
  return "unknown";
}

ClusterGrid parse_cluster_grid(const std::string& text) {
  for (ClusterGrid grid : {ClusterGrid::kResident, ClusterGrid::kPerRow})
    if (text == to_string(grid)) return grid;
  throw Error(Status::kErrorInvalidArgument, "cluster grid '" + text + "' is not one of resident, per_row");
}

const char* to_string(TopkAlgorithm algorithm) noexcept {
  switch (algorithm) {
    case TopkAlgorithm::kAuto: return "auto";
    case TopkAlgorithm::kStream: return "stream";
    case TopkAlgorithm::kResident: return "resident";
  }
  return "unknown";
}

TopkAlgorithm parse_topk_algorithm(const std::string& text) {
  for (TopkAlgorithm algorithm :
       {TopkAlgorithm::kAuto, TopkAlgorithm::kStream, TopkAlgorithm::kResident})
    if (text == to_string(algorithm)) return algorithm;
  throw Error(Status::kErrorInvalidArgument,
              "top-K algorithm '" + text + "' is not one of auto, stream, resident");
}

}  // namespace kjit
