// SPDX-License-Identifier: Apache-2.0
#include "python/src/attention_call.h"

#include <string>
#include <utility>

#include "kjit/error.hpp"
#include "python/src/device_scope.h"
#include "runtime/ops/attention/attention_problem.h"

namespace kjit::python {
namespace {

/// The C++ field an error starts with, and the Python argument it belongs to. `same`: the field
/// is the argument under another name (its text is dropped); else the field stays as detail.
struct FieldName {
  const char* field;
  const char* argument;
  bool same;
};

constexpr FieldName kNames[] = {
    {"q", "q", true},          {"k", "k", true},         {"v", "v", true},
    {"o", "out", true},        {"bias", "bias", true},   {"mask", "mask", true},
    {"scale", "scale", true},  {"dtype", "q", false},    {"m", "q", false},
    {"d", "q", false},         {"batch", "q", false},    {"heads", "q", false},
    {"n", "k", false},         {"dv", "v", false},       {"bias_dtype", "bias", false},
    {"mask_dtype", "mask", false}, {"mask_windows", "mask", false},
};

}  // namespace

Error renamed_attention_error(const Error& error) {
  const std::string message = error.what();
  const std::size_t end = message.find_first_of(": ");
  const std::string field = message.substr(0, end);
  for (const FieldName& name : kNames) {
    if (field != name.field) continue;
    std::string rest = end == std::string::npos ? "" : message.substr(end);
    if (rest.rfind(": ", 0) == 0) rest.erase(0, 2);
    else if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
    const std::string text = name.same ? rest : message;
    return Error(error.status(), std::string(name.argument) + ": " + text, error.detail());
  }
  return error;
}

void run_attention(Runtime& runtime, const AttentionArgs& args, void* stream, int device) {
  // Checked here first, before any device is entered, so argument errors show on any machine.
  try {
    validate_attention(args);
  } catch (const Error& error) {
    throw renamed_attention_error(error);
  }
  DeviceScope scope(device);
  runtime.attention(args, stream);
}

}  // namespace kjit::python
