// SPDX-License-Identifier: Apache-2.0
#include "cli/call_flags.h"

#include <charconv>
#include <system_error>

#include "kjit/error.hpp"
#include "runtime/op_tools.h"

namespace kjit::cli {
namespace {

/// CLI11 reads an integer past the 64-bit range as the nearest limit; such a value is refused
/// instead, so that no error message quotes a number the user never gave.
CLI::Validator within_int64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        long long value = 0;
        const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
        if (std::from_chars(begin, text.data() + text.size(), value).ec == std::errc::result_out_of_range)
          return "'" + text + "' is past the 64-bit integer range";
        return {};
      },
      "");
}

}  // namespace

void add_call_options(CLI::App& command, CallFlags& flags, CLI::Option* needs) {
  std::vector<CLI::Option*> options = {
      command.add_option("--op", flags.op, known_ops()),
      command.add_option("--dtype", flags.dtype, "input dtype: f32, f16 or bf16 (default f32)"),
      command.add_option("--out-dtype", flags.out_dtype, "output dtype (default: --dtype)"),
      command.add_option("--index-dtype", flags.index_dtype, "softmax_topk: i32 or i64 (default i64)"),
      command.add_option("--rows", flags.rows, "rows (default 1; the choice depends on it)")
          ->check(within_int64()),
      command.add_option("--cols", flags.cols, "columns per row")->check(within_int64()),
      command.add_option("--k", flags.k, "softmax_topk: how many of each row to keep")->check(within_int64()),
      command.add_option("--field", flags.fields,
                         "NAME=VALUE: any other field of the op's call (repeatable)")};
  if (needs != nullptr)
    for (CLI::Option* option : options) option->needs(needs);
}

nlohmann::ordered_json call_of(const CallFlags& flags) {
  nlohmann::ordered_json call;
  if (!flags.op.empty()) call["op"] = flags.op;
  if (!flags.dtype.empty()) call["dtype"] = flags.dtype;
  if (!flags.out_dtype.empty()) call["out_dtype"] = flags.out_dtype;
  if (!flags.index_dtype.empty()) call["index_dtype"] = flags.index_dtype;
  if (flags.rows != CallFlags::kNotGiven) call["rows"] = flags.rows;
  if (flags.cols != CallFlags::kNotGiven) call["cols"] = flags.cols;
  if (flags.k != CallFlags::kNotGiven) call["k"] = flags.k;
  for (const std::string& field : flags.fields) {
    const auto equals = field.find('=');
    if (equals == std::string::npos || equals == 0)
      throw Error(Status::kErrorInvalidArgument, "--field: '" + field + "' is not NAME=VALUE");
    const std::string value = field.substr(equals + 1);
    // Numbers and true/false as JSON values, anything else as a string.
    const nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
    call[field.substr(0, equals)] = parsed.is_discarded() || parsed.is_structured()
                                        ? nlohmann::json(value)
                                        : parsed;
  }
  if (!call.contains("op")) throw Error(Status::kErrorInvalidArgument, "--op is required");
  return call;
}

}  // namespace kjit::cli
