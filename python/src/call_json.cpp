// SPDX-License-Identifier: Apache-2.0
#include "python/src/call_json.h"

#include "python/src/errors.h"
#include "runtime/op_tools.h"

namespace kjit::python {

nlohmann::ordered_json parse_call(const std::string& text) {
  nlohmann::ordered_json call = nlohmann::ordered_json::parse(text, nullptr, false);
  if (!call.is_object()) reject("call", "'" + text + "' is not a JSON object");
  if (!call.contains("op") || !call["op"].is_string()) reject("op", "is required (a string)");
  const OpTools& tools = op_tools(call["op"].get<std::string>());
  tools.check(call);
  return call;
}

}  // namespace kjit::python
