// SPDX-License-Identifier: Apache-2.0
// The flags that describe one call without tensors (compile, tune, inspect --explain), turned
// into the call description every op family reads (runtime/op_tools.h).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace kjit::cli {

struct CallFlags {
  std::string op, dtype, out_dtype, index_dtype;
  static constexpr long long kNotGiven = std::numeric_limits<long long>::min();
  long long rows = kNotGiven, cols = kNotGiven, k = kNotGiven;
  std::vector<std::string> fields;      ///< --field NAME=VALUE, for fields without a flag of their own
};

/// Adds --op, --dtype, --out-dtype, --index-dtype, --rows, --cols, --k and --field; each needs
/// `needs` when given (e.g. inspect's --explain).
void add_call_options(CLI::App& command, CallFlags& flags, CLI::Option* needs = nullptr);

/// The call the given flags describe: {"op": ..., "dtype": ..., "out_dtype": ..., ...},
/// only the flags given. Throws Error(kErrorInvalidArgument) naming a malformed --field.
nlohmann::ordered_json call_of(const CallFlags& flags);

}  // namespace kjit::cli
