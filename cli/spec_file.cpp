// SPDX-License-Identifier: Apache-2.0
#include "cli/spec_file.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/topk/topk_heuristics.h"
#include "runtime/ops/topk/topk_kernels.h"

namespace kjit::cli {
namespace {

using nlohmann::json;

constexpr const char* kFields[] = {"ops", "dtypes", "cols", "rows", "k", "index_dtypes"};
constexpr const char* kTopkOp = "softmax_topk";

[[noreturn]] void reject(const std::string& where, const std::string& what) {
  throw Error(Status::kErrorInvalidArgument, where + ": " + what);
}

/// Applies `parse_item` to each element of the list `entry[field]`, naming the element on error.
template <typename T>
std::vector<T> parse_list(const json& entry, const char* field, const std::string& where,
                          const std::function<T(const json&, const std::string&)>& parse_item) {
  const std::string at = where + ", \"" + field + "\"";
  const json& list = entry.at(field);
  if (!list.is_array()) reject(at, "must be a list");
  if (list.empty()) reject(at, "must not be empty");
  std::vector<T> values;
  for (std::size_t i = 0; i < list.size(); ++i)
    values.push_back(parse_item(list[i], at + "[" + std::to_string(i) + "]"));
  return values;
}

/// A string element handed to `parse` (parse_row_op, parse_dtype), whose message is kept.
template <typename T>
std::function<T(const json&, const std::string&)> named(T (*parse)(const std::string&)) {
  return [parse](const json& item, const std::string& at) {
    if (!item.is_string()) reject(at, item.dump() + " is not a string");
    try {
      return parse(item.get<std::string>());
    } catch (const Error& e) {
      reject(at, e.what());
    }
  };
}

/// An integer element within [low, high].
std::function<std::int64_t(const json&, const std::string&)> integer(std::int64_t low,
                                                                     std::int64_t high) {
  return [low, high](const json& item, const std::string& at) {
    // Unsigned values above int64 and floats such as 4096.0 are refused alike.
    const bool fits = item.is_number_integer() &&
                      (!item.is_number_unsigned() || item.get<std::uint64_t>() <= 1ull << 62);
    const std::int64_t value = fits ? item.get<std::int64_t>() : 0;
    if (!fits || value < low || value > high)
      reject(at, item.dump() + " is not an integer in " + std::to_string(low) + ".." +
                     std::to_string(high));
    return value;
  };
}

DType checked_index_dtype(const std::string& text) {
  const DType dtype = parse_dtype(text);
  if (dtype != DType::kI32 && dtype != DType::kI64)
    throw Error(Status::kErrorInvalidArgument, "index dtype '" + text + "' must be i32 or i64");
  return dtype;
}

/// The "ops" list: row-wise op names, and "softmax_topk" (recorded in `entry.softmax_topk`).
void parse_ops(const json& entry, const std::string& where, SpecEntry& parsed) {
  std::vector<std::string> names = parse_list<std::string>(
      entry, "ops", where, [](const json& item, const std::string& at) {
        if (!item.is_string()) reject(at, item.dump() + " is not a string");
        return item.get<std::string>();
      });
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == kTopkOp) {
      parsed.softmax_topk = true;
      continue;
    }
    try {
      parsed.ops.push_back(parse_row_op(names[i]));
    } catch (const Error& e) {
      reject(where + ", \"ops\"[" + std::to_string(i) + "]",
             std::string(e.what()) + " (or softmax_topk)");
    }
  }
}

DType checked_dtype(const std::string& text) {
  const DType dtype = parse_dtype(text);
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16)
    throw Error(Status::kErrorInvalidArgument,
                "dtype '" + text + "' has no row-wise kernels; use f32, f16 or bf16");
  return dtype;
}

SpecEntry parse_entry(const json& entry, const std::string& where) {
  if (!entry.is_object()) reject(where, "must be an object with \"ops\" and \"cols\"");
  for (const auto& item : entry.items())
    if (std::find_if(std::begin(kFields), std::end(kFields),
                     [&](const char* f) { return item.key() == f; }) == std::end(kFields))
      reject(where, "unknown field \"" + item.key() +
                        "\" (expected ops, dtypes, cols, rows, k, index_dtypes)");
  for (const char* required : {"ops", "cols"})
    if (!entry.contains(required)) reject(where, "missing field \"" + std::string(required) + "\"");
  SpecEntry parsed;
  parse_ops(entry, where, parsed);
  if (parsed.softmax_topk && !entry.contains("k"))
    reject(where, "missing field \"k\" (softmax_topk needs the k values to prepare for)");
  for (const char* field : {"k", "index_dtypes"})
    if (!parsed.softmax_topk && entry.contains(field))
      reject(where, "\"" + std::string(field) + "\" applies to softmax_topk only, which \"ops\" lacks");
  if (parsed.softmax_topk) {
    parsed.ks = parse_list<std::int64_t>(entry, "k", where, integer(1, kMaxTopK));
    parsed.index_dtypes = entry.contains("index_dtypes")
                              ? parse_list<DType>(entry, "index_dtypes", where, named(&checked_index_dtype))
                              : std::vector<DType>{DType::kI64};
  }
  parsed.cols = parse_list<std::int64_t>(entry, "cols", where, integer(1, kMaxCols));
  parsed.dtypes = entry.contains("dtypes")
                      ? parse_list<DType>(entry, "dtypes", where, named(&checked_dtype))
                      : std::vector<DType>{DType::kF32};
  // Any row count is a valid call; 2^40 bounds the planning arithmetic far above real tensors.
  parsed.rows = entry.contains("rows")
                    ? parse_list<std::int64_t>(entry, "rows", where, integer(1, 1ll << 40))
                    : std::vector<std::int64_t>{1};
  return parsed;
}

}  // namespace

std::vector<SpecEntry> parse_spec(const std::string& text, const std::string& origin) {
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error& e) {
    reject(origin, std::string("not valid JSON: ") + e.what());
  }
  std::vector<SpecEntry> entries;
  if (document.is_object()) {
    entries.push_back(parse_entry(document, origin));
    return entries;
  }
  if (!document.is_array() || document.empty())
    reject(origin, "must be an entry object or a non-empty list of them");
  for (std::size_t i = 0; i < document.size(); ++i)
    entries.push_back(parse_entry(document[i], origin + ": entry " + std::to_string(i)));
  return entries;
}

std::vector<SpecEntry> load_spec_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) reject("--spec", "cannot read '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_spec(text.str(), path);
}

std::vector<SpecCall> expand_spec(const std::vector<SpecEntry>& entries) {
  std::vector<SpecCall> calls;
  for (const SpecEntry& entry : entries) {
    for (RowOp op : entry.ops)
      for (DType dtype : entry.dtypes)
        for (std::int64_t cols : entry.cols)
          for (std::int64_t rows : entry.rows) calls.push_back({op, dtype, rows, cols});
    if (!entry.softmax_topk) continue;
    for (DType dtype : entry.dtypes)
      for (std::int64_t cols : entry.cols)
        for (std::int64_t rows : entry.rows)
          for (std::int64_t k : entry.ks)
            for (DType index : entry.index_dtypes)
              calls.push_back({RowOp::kSoftmax, dtype, rows, cols, true, static_cast<int>(k), index});
  }
  return calls;
}

TopkProblem planned_topk_problem(const SpecCall& call) {
  if (call.rows < 1)
    throw Error(Status::kErrorInvalidArgument,
                "rows must be >= 1 (got " + std::to_string(call.rows) + ")");
  return planned_topk(contiguous_topk_problem(call.dtype, call.index_dtype, call.rows, call.cols, call.k));
}

PlannedKernel plan_kernel(const SpecCall& call, const DeviceProps& device) {
  PlannedKernel plan;
  if (call.softmax_topk) {
    const TopkProblem problem = planned_topk_problem(call);
    const TopkConfig config = choose_topk_config(problem, device);
    plan.planned_rows = problem.rows;
    plan.planned_k = problem.k;
    plan.config = config.to_string();
    plan.config_json = json{{"pack", config.pack}, {"threads", config.threads},
                            {"unroll", config.unroll}, {"cluster", config.cluster}}.dump();
    plan.spec = topk_kernel_spec(problem, config);
    return plan;
  }
  const RowwiseProblem problem = planned_problem(call);
  const KernelConfig config = choose_rowwise_config(problem, device);
  plan.planned_rows = problem.rows;
  plan.config = config.to_string();
  plan.config_json = config.to_json();
  plan.spec = rowwise_kernel_spec(problem, config);
  return plan;
}

std::string describe(const SpecCall& call) {
  if (call.softmax_topk)
    return format("softmax_topk k=%d %s->%s rows=%lld cols=%lld", call.k, to_string(call.dtype),
                  to_string(call.index_dtype), static_cast<long long>(call.rows),
                  static_cast<long long>(call.cols));
  return format("%s %s rows=%lld cols=%lld", to_string(call.op), to_string(call.dtype),
                static_cast<long long>(call.rows), static_cast<long long>(call.cols));
}

RowwiseProblem planned_problem(const SpecCall& call) {
  if (call.rows < 1)
    throw Error(Status::kErrorInvalidArgument,
                "rows must be >= 1 (got " + std::to_string(call.rows) + ")");
  RowwiseProblem problem = contiguous_problem(call.op, call.dtype, call.dtype, call.rows, call.cols);
  problem.rows = bucket_rows(rows_bucket(call.rows));  // what the dispatcher plans for
  return problem;
}

}  // namespace kjit::cli
