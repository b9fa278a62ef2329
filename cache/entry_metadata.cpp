// SPDX-License-Identifier: Apache-2.0
#include "cache/entry_metadata.h"

#include <cmath>

namespace kjit::cache {
namespace {

// Bounds that any real value sits far inside; they keep sums such as spill_stores + spill_loads
// clear of int overflow.
constexpr std::int64_t kMaxCount = std::int64_t{1} << 30;
constexpr double kMaxMilliseconds = 1e9;

std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

std::string read_string(const nlohmann::json& json, const char* name,
                        std::optional<std::string>& out) {
  const auto found = json.find(name);
  if (found == json.end()) return {};
  if (!found->is_string())
    return "\"" + std::string(name) + "\" is " + shown(*found) + ", not a string";
  out = found->get<std::string>();
  return {};
}

std::string read_count(const nlohmann::json& json, const char* name, std::optional<int>& out) {
  const auto found = json.find(name);
  if (found == json.end()) return {};
  // An unsigned value above 2^63 reads as negative here, and is refused with the rest.
  const bool in_range = found->is_number_integer() && found->get<std::int64_t>() >= 0 &&
                        found->get<std::int64_t>() <= kMaxCount;
  if (!in_range)
    return "\"" + std::string(name) + "\" is " + shown(*found) + ", not an integer in 0.." +
           std::to_string(kMaxCount);
  out = static_cast<int>(found->get<std::int64_t>());
  return {};
}

std::string read_milliseconds(const nlohmann::json& json, const char* name,
                              std::optional<double>& out) {
  const auto found = json.find(name);
  if (found == json.end()) return {};
  const bool in_range = found->is_number() && std::isfinite(found->get<double>()) &&
                        found->get<double>() >= 0.0 && found->get<double>() <= kMaxMilliseconds;
  if (!in_range) return "\"" + std::string(name) + "\" is " + shown(*found) + ", not a duration";
  out = found->get<double>();
  return {};
}

}  // namespace

std::string read_metadata(const nlohmann::json& json, EntryMetadata& out) {
  out = EntryMetadata{};
  if (!json.is_object()) return "metadata is " + shown(json) + ", not an object";
  for (const std::string& problem :
       {read_string(json, "kernel", out.kernel), read_string(json, "header", out.header),
        read_string(json, "lowered_name", out.lowered_name), read_count(json, "arch", out.arch),
        read_milliseconds(json, "compile_ms", out.compile_ms),
        read_count(json, "registers", out.registers),
        read_count(json, "spill_stores", out.spill_stores),
        read_count(json, "spill_loads", out.spill_loads),
        read_count(json, "stack_frame", out.stack_frame),
        read_count(json, "static_smem", out.static_smem)}) {
    if (!problem.empty()) return problem;
  }
  if (const auto winner = json.find("winner"); winner != json.end()) {
    if (!winner->is_object()) return "\"winner\" is " + shown(*winner) + ", not an object";
    out.winner = *winner;
  }
  return {};
}

}  // namespace kjit::cache
