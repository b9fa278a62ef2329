// SPDX-License-Identifier: Apache-2.0
// The shape list `kjit precompile --spec` reads: which ops, dtypes and shapes to build kernels for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/types.hpp"
#include "runtime/ops/rowwise_problem.h"

namespace kjit::cli {

/// One object of a spec file; every combination of its lists is one call to prepare for.
struct SpecEntry {
  std::vector<RowOp> ops;          ///< "ops": required
  std::vector<DType> dtypes;       ///< "dtypes": input and output dtype; default ["f32"]
  std::vector<std::int64_t> cols;  ///< "cols": required, each in 1..kMaxCols
  std::vector<std::int64_t> rows;  ///< "rows": each >= 1; default [1]
};

/// Parses spec JSON: one entry object or a non-empty list of them. `origin` (a file name) starts
/// every error message. Throws Error(kErrorInvalidArgument) naming the entry and field at fault.
std::vector<SpecEntry> parse_spec(const std::string& text, const std::string& origin);

/// Reads and parses a spec file; an unreadable file is Error(kErrorInvalidArgument) too.
std::vector<SpecEntry> load_spec_file(const std::string& path);

/// One call to prepare for: `op` on a contiguous, aligned [rows, cols] tensor of `dtype`.
struct SpecCall {
  RowOp op = RowOp::kSoftmax;
  DType dtype = DType::kF32;
  std::int64_t rows = 1;
  std::int64_t cols = 0;
};

/// Every combination of every entry, in file order (duplicates included).
std::vector<SpecCall> expand_spec(const std::vector<SpecEntry>& entries);

/// The problem the runtime's dispatcher plans for when `call` is made: rows rounded up to the
/// top of their bucket. Throws Error(kErrorInvalidArgument) for an invalid call.
RowwiseProblem planned_problem(const SpecCall& call);

}  // namespace kjit::cli
