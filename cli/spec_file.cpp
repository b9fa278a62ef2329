// SPDX-License-Identifier: Apache-2.0
#include "cli/spec_file.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "autotune/tune_report.h"
#include "kjit/error.hpp"
#include "runtime/op_tools.h"

namespace kjit::cli {
namespace {

using nlohmann::ordered_json;

[[noreturn]] void reject(const std::string& where, const std::string& what) {
  throw Error(Status::kErrorInvalidArgument, where + ": " + what);
}

/// The call fields a spec field sets.
std::vector<std::string> call_fields(const std::string& spec_field) {
  if (spec_field == "ops") return {"op"};
  if (spec_field == "dtypes") return {"dtype"};
  if (spec_field == "index_dtypes") return {"index_dtype"};
  return {spec_field};
}

bool reads_any(const OpTools& tools, const std::string& spec_field) {
  const std::vector<std::string> read = tools.fields();
  for (const std::string& field : call_fields(spec_field))
    if (std::find(read.begin(), read.end(), field) != read.end()) return true;
  return false;
}

/// The entry's "ops" as the tools serving each; names the bad element.
std::vector<std::pair<std::string, const OpTools*>> entry_ops(const ordered_json& ops,
                                                              const std::string& where) {
  std::vector<std::pair<std::string, const OpTools*>> found;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string at = where + ", \"ops\"[" + std::to_string(i) + "]";
    if (!ops[i].is_string()) reject(at, ops[i].dump() + " is not a string");
    try {
      found.emplace_back(ops[i].get<std::string>(), &op_tools(ops[i].get<std::string>()));
    } catch (const Error& e) {
      reject(at, e.what());
    }
  }
  return found;
}

/// Every combination of the lists `fields` of `entry`, added to `call`, one call each.
void expand(const ordered_json& entry, const std::vector<std::string>& fields, std::size_t next,
            SpecCall call, std::vector<SpecCall>& calls) {
  if (next == fields.size()) {
    calls.push_back(std::move(call));
    return;
  }
  for (const auto& value : entry.at(fields[next])) {
    SpecCall with = call;
    for (const std::string& field : call_fields(fields[next])) with[field] = value;
    expand(entry, fields, next + 1, std::move(with), calls);
  }
}

void parse_entry(const ordered_json& entry, const std::string& where, std::vector<SpecCall>& calls) {
  if (!entry.is_object()) reject(where, "must be an object with \"ops\" and the fields they read");
  if (!entry.contains("ops")) reject(where, "missing field \"ops\" (one of " + known_ops() + ")");
  for (const auto& item : entry.items()) {
    if (!item.value().is_array()) reject(where + ", \"" + item.key() + "\"", "must be a list");
    if (item.value().empty()) reject(where + ", \"" + item.key() + "\"", "must not be empty");
  }
  const auto ops = entry_ops(entry.at("ops"), where);
  for (const auto& item : entry.items()) {
    if (item.key() == "ops") continue;
    const bool read = std::any_of(ops.begin(), ops.end(),
                                  [&](const auto& op) { return reads_any(*op.second, item.key()); });
    if (read) continue;
    const auto& all = all_op_tools();
    const bool known = std::any_of(all.begin(), all.end(),
                                   [&](const OpTools* tools) { return reads_any(*tools, item.key()); });
    reject(where, known ? "field \"" + item.key() + "\" is read by none of this entry's ops"
                        : "unknown field \"" + item.key() + "\"");
  }
  for (const auto& [op, tools] : ops) {
    std::vector<std::string> fields;
    for (const auto& item : entry.items())
      if (item.key() != "ops" && reads_any(*tools, item.key())) fields.push_back(item.key());
    std::vector<SpecCall> expanded;
    expand(entry, fields, 0, SpecCall{{"op", op}}, expanded);
    for (SpecCall& call : expanded) {
      try {
        tools->check(call);
      } catch (const Error& e) {
        reject(where, describe(call) + ": " + e.what());
      }
      calls.push_back(std::move(call));
    }
  }
}

}  // namespace

std::vector<SpecCall> parse_spec(const std::string& text, const std::string& origin) {
  ordered_json document;
  try {
    document = ordered_json::parse(text);
  } catch (const ordered_json::parse_error& e) {
    reject(origin, std::string("not valid JSON: ") + e.what());
  }
  std::vector<SpecCall> calls;
  if (document.is_object()) {
    parse_entry(document, origin, calls);
    return calls;
  }
  if (!document.is_array() || document.empty())
    reject(origin, "must be an entry object or a non-empty list of them");
  for (std::size_t i = 0; i < document.size(); ++i)
    parse_entry(document[i], origin + ": entry " + std::to_string(i), calls);
  return calls;
}

std::vector<SpecCall> load_spec_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) reject("--spec", "cannot read '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_spec(text.str(), path);
}

std::string describe(const SpecCall& call) { return describe_problem(call); }

}  // namespace kjit::cli
