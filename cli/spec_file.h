// SPDX-License-Identifier: Apache-2.0
// The shape list `kjit precompile --spec` reads: which ops, dtypes and shapes to build kernels for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/types.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise_problem.h"
#include "runtime/ops/topk_problem.h"

namespace kjit::cli {

/// One object of a spec file; every combination of its lists is one call to prepare for.
struct SpecEntry {
  std::vector<RowOp> ops;          ///< "ops": required (row-wise ops and/or "softmax_topk")
  bool softmax_topk = false;       ///< "softmax_topk" is among the ops
  std::vector<DType> dtypes;       ///< "dtypes": input and output dtype; default ["f32"]
  std::vector<std::int64_t> cols;  ///< "cols": required, each in 1..kMaxCols
  std::vector<std::int64_t> rows;  ///< "rows": each >= 1; default [1]
  std::vector<std::int64_t> ks;    ///< "k": softmax_topk's k, each in 1..kMaxTopK; required with it
  std::vector<DType> index_dtypes; ///< "index_dtypes": softmax_topk's indices; default ["i64"]
};

/// Parses spec JSON: one entry object or a non-empty list of them. `origin` (a file name) starts
/// every error message. Throws Error(kErrorInvalidArgument) naming the entry and field at fault.
std::vector<SpecEntry> parse_spec(const std::string& text, const std::string& origin);

/// Reads and parses a spec file; an unreadable file is Error(kErrorInvalidArgument) too.
std::vector<SpecEntry> load_spec_file(const std::string& path);

/// One call to prepare for: `op` (or softmax + top-K) on a contiguous, aligned [rows, cols]
/// tensor of `dtype`.
struct SpecCall {
  RowOp op = RowOp::kSoftmax;
  DType dtype = DType::kF32;
  std::int64_t rows = 1;
  std::int64_t cols = 0;
  bool softmax_topk = false;       ///< a softmax_topk call; `op` does not apply
  int k = 0;                       ///< softmax_topk only
  DType index_dtype = DType::kI64; ///< softmax_topk only
};

/// Every combination of every entry, in file order (duplicates included).
std::vector<SpecCall> expand_spec(const std::vector<SpecEntry>& entries);

/// The problem the runtime's dispatcher plans for when `call` (a row-wise one) is made: rows
/// rounded up to the top of their bucket. Throws Error(kErrorInvalidArgument) for an invalid call.
RowwiseProblem planned_problem(const SpecCall& call);

/// The same for a softmax_topk call (k and rows at the top of their buckets).
TopkProblem planned_topk_problem(const SpecCall& call);

/// The kernel the runtime's heuristics pick for a call on a device, and what led there.
struct PlannedKernel {
  std::int64_t planned_rows = 0;  ///< the rows bucket's top, which the heuristics plan for
  int planned_k = 0;              ///< softmax_topk: the K bucket's top (at most cols)
  std::string config;             ///< e.g. "warp pack=4 threads=128 group=32 cluster=1"
  std::string config_json;
  KernelSpec spec;
};

/// Throws Error(kErrorInvalidArgument) for an invalid call.
PlannedKernel plan_kernel(const SpecCall& call, const DeviceProps& device);

/// "softmax rows=64 cols=4096 f32", "softmax_topk k=50 rows=8 cols=128256 bf16 -> i64".
std::string describe(const SpecCall& call);

}  // namespace kjit::cli
