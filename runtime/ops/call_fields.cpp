// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/call_fields.h"

#include "kjit/error.hpp"

namespace kjit {
namespace {

[[noreturn]] void reject(const char* name, const std::string& why) {
  throw Error(Status::kErrorInvalidArgument, std::string(name) + ": " + why);
}

}  // namespace

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
  if (!found->is_number_integer()) reject(name, "must be an integer, not " + found->dump());
  return found->get<std::int64_t>();
}

DType dtype_field(const nlohmann::json& call, const char* name, DType fallback) {
  if (call.find(name) == call.end()) return fallback;
  return parse_dtype(string_field(call, name));
}

const void* stand_in_address(int which) noexcept {
  return reinterpret_cast<const void*>(std::uintptr_t{1} << (20 + 20 * which));
}

}  // namespace kjit
