// SPDX-License-Identifier: Apache-2.0
// The shape list `kjit precompile --spec` (and `kjit bench --spec`) reads: which calls to build
// kernels for. An entry is an object of non-empty lists, e.g. {"ops": ["softmax"], "dtypes":
// ["f32", "bf16"], "cols": [32000], "rows": [1, 64]}; every combination of the lists an op reads
// is one call. Fields name call fields (runtime/op_tools.h): "ops" gives "op", "dtypes" gives
// "dtype", "index_dtypes" gives "index_dtype", any other field itself ("cols", "rows", "k").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kjit::cli {

/// One call to prepare for, e.g. {"op": "softmax", "dtype": "bf16", "rows": 64, "cols": 4096}, checked by its family.
using SpecCall = nlohmann::ordered_json;

/// Parses spec JSON (one entry object or a non-empty list of them) into its calls, in file
/// order. `origin` (a file name) starts every error message, which names the entry and field.
/// Throws Error(kErrorInvalidArgument).
std::vector<SpecCall> parse_spec(const std::string& text, const std::string& origin);

/// Reads and parses a spec file; an unreadable file is Error(kErrorInvalidArgument) too.
std::vector<SpecCall> load_spec_file(const std::string& path);

/// "softmax dtype=bf16 rows=64 cols=4096".
std::string describe(const SpecCall& call);

}  // namespace kjit::cli
