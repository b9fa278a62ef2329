// SPDX-License-Identifier: Apache-2.0
// A call described without arrays, as the tools take it: {"op": "softmax", "dtype": "bf16",
// "rows": 64, "cols": 4096, ...} (runtime/op_tools.h), built by kjit/_calls.py.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kjit::python {

/// Parses a call; errors name the field ("call" for malformed text, "op" for an unknown op).
nlohmann::ordered_json parse_call(const std::string& text);

}  // namespace kjit::python
