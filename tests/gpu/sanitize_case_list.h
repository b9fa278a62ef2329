// SPDX-License-Identifier: Apache-2.0
// The cases of kjit_sanitize_cases (sanitize_cases.cpp): one forced config of one kernel family
// each, on a shape small enough for compute-sanitizer's racecheck yet wide enough for the family's
// cluster and ring paths.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention_batch.h"
#include "kjit/kjit.hpp"

namespace kjit::sanitize {

using test::AttentionCase;

struct RowCase {
  RowOp op;
  DType dtype;
  std::int64_t rows, cols;
  KernelConfig config;  // zero fields are filled in as run_with_config does
  // Views off the vector alignment (BatchLayout's fields; 0: dense, at the allocation's start).
  std::int64_t in_stride = 0, out_stride = 0, in_offset = 0, out_offset = 0;
};

struct TopkCase {
  DType dtype;
  std::int64_t rows, cols;
  std::int32_t k;
  TopkConfig config;
  std::int64_t row_stride = 0;  ///< 0: cols
  std::int64_t in_offset = 0;   ///< elements before the first row
};

struct AttentionRun {
  AttentionCase shape;
  AttentionConfig config;
};

struct Case {
  const char* name;
  const char* why;  // the path it covers
  std::optional<RowCase> row;
  std::optional<TopkCase> topk;
  std::optional<AttentionRun> attention;
};

/// Every case, in the order --list prints them.
const std::vector<Case>& cases();
/// The case of this name, or null.
const Case* find_case(const std::string& name);
/// What a case runs and why, one line.
std::string describe(const Case& c);

}  // namespace kjit::sanitize
