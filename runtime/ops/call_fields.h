// SPDX-License-Identifier: Apache-2.0
// Reading a call's description (a JSON object such as {"op": "softmax", "dtype": "bf16",
// "rows": 64, "cols": 4096}) for the tools that plan, compile and tune without tensors: each family's
// problem_from_json. Every error names the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/types.hpp"

namespace kjit {

/// Throws Error(kErrorInvalidArgument) naming the first field of `call` that is not in `fields`:
/// a misspelt or misplaced field must not be ignored in silence.
void require_known_fields(const nlohmann::json& call, const std::vector<std::string>& fields);
/// `text` as a JSON string, at most about 64 characters: safe to print whatever it holds
/// (control characters, NUL, invalid UTF-8, megabytes).
std::string quoted_text(const std::string& text);

/// Field `name` as a string; `fallback` when absent (empty fallback: the field is required).
std::string string_field(const nlohmann::json& call, const char* name, const std::string& fallback = {});
/// Field `name` as an integer; `fallback` when absent (a negative fallback: required).
std::int64_t integer_field(const nlohmann::json& call, const char* name, std::int64_t fallback = -1);
/// Field "rows" (default 1), which must be in 1..kMaxRows.
std::int64_t rows_field(const nlohmann::json& call);
/// Field `name` as a dtype name; `fallback` when absent.
DType dtype_field(const nlohmann::json& call, const char* name, DType fallback);

/// Stand-in device addresses for validating a call without tensors: aligned like real
/// allocations (only their alignment matters) and far enough apart that buffers of any size
/// never seem to overlap.
const void* stand_in_address(int which) noexcept;

}  // namespace kjit
