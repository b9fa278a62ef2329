// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/call_fields.h"

#include <algorithm>
#include <cstdint>

#include "kjit/error.hpp"

namespace kjit {
namespace {

[[noreturn]] void reject(const char* name, const std::string& why) {
  throw Error(Status::kErrorInvalidArgument, std::string(name) + ": " + why);
}

}  // namespace

std::string quoted_text(const std::string& text) {
  std::string quoted = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (quoted.size() > 64) quoted = quoted.substr(0, 60) + "...\"";
  return quoted;
}

void require_known_fields(const nlohmann::json& call, const std::vector<std::string>& fields) {
  if (!call.is_object()) return;  // the field readers name that
  for (const auto& item : call.items()) {
    if (std::find(fields.begin(), fields.end(), item.key()) != fields.end()) continue;
    std::string known;
    for (const std::string& field : fields) known += (known.empty() ? "" : ", ") + field;
    const std::string name = quoted_text(item.key());
    const auto op = call.find("op");
    const std::string whose = op != call.end() && op->is_string() ? op->get<std::string>() : "this op";
    throw Error(Status::kErrorInvalidArgument,
                "field " + name + " is not read by " + whose + " (it reads " + known + ")");
  }
}

std::string string_field(const nlohmann::json& call, const char* name, const std::string& fallback) {
  const auto found = call.find(name);
  if (found == call.end()) {
    if (fallback.empty()) reject(name, "is required");
    return fallback;
  }
  if (!found->is_string()) reject(name, "must be a string, not " + found->dump());
  return found->get<std::string>();
}

std::int64_t integer_field(const nlohmann::json& call, const char* name, std::int64_t fallback) {
  const auto found = call.find(name);
  if (found == call.end()) {
    if (fallback < 0) reject(name, "is required");
    return fallback;
  }
  const bool fits = found->is_number_integer() &&
                   !(found->is_number_unsigned() &&
                     found->get<std::uint64_t>() > std::uint64_t(INT64_MAX));
  if (!fits) reject(name, "must be an integer of 64 bits, not " + found->dump());
  return found->get<std::int64_t>();
}

std::int64_t rows_field(const nlohmann::json& call) {
  const std::int64_t rows = integer_field(call, "rows", 1);
  if (rows < 1 || rows > kMaxRows)
    reject("rows", "must be in 1..2^40 (kMaxRows; got " + std::to_string(rows) + ")");
  return rows;
}

DType dtype_field(const nlohmann::json& call, const char* name, DType fallback) {
  if (call.find(name) == call.end()) return fallback;
  return parse_dtype(string_field(call, name));
}

const void* stand_in_address(int which) noexcept {
  return reinterpret_cast<const void*>(std::uintptr_t{1} << (20 + 20 * which));
}

}  // namespace kjit
