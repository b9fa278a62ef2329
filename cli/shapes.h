// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the CLI commands: problems from flags, arch names, plain tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/types.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise_problem.h"
#include "runtime/ops/topk_problem.h"

namespace kjit::cli {

/// The problem of a contiguous, 16-byte-aligned [rows, cols] tensor (what the CLI compiles for).
RowwiseProblem contiguous_problem(RowOp op, DType in, DType out, std::int64_t rows,
                                  std::int64_t cols);

/// The softmax + top-K problem of a contiguous, aligned [rows, cols] logits tensor with outputs
/// of its own (what precompile plans for). Throws Error(kErrorInvalidArgument) like the call.
TopkProblem contiguous_topk_problem(DType in, DType idx, std::int64_t rows, std::int64_t cols, int k);

/// "sm_90" or "90" -> 90; throws Error(kErrorInvalidArgument) naming `flag` otherwise.
int parse_arch(const std::string& text, const char* flag);

/// The device behind the current context, or nominal properties of `arch` when `arch` is given
/// or there is no GPU. `arch` 0 means "the GPU's own"; without a GPU that is an error.
DeviceProps target_device(int arch, bool* on_gpu);

/// True when a driver and at least one GPU are here (never throws).
bool gpu_present();

/// A left-aligned text table printed column by column.
class Table {
 public:
  explicit Table(std::vector<std::string> header);
  void add(std::vector<std::string> row);
  void print() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

/// printf-style formatting to std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace kjit::cli
