// SPDX-License-Identifier: Apache-2.0
#include "autotune/tune_report.h"

namespace kjit {

std::string describe_problem(const nlohmann::ordered_json& fields) {
  std::string text;
  for (auto field = fields.begin(); field != fields.end(); ++field) {
    const std::string value =
        field.value().is_string() ? field.value().get<std::string>() : field.value().dump();
    if (!text.empty()) text += ' ';
    text += field.key() == "op" ? value : field.key() + "=" + value;
  }
  return text;
}

}  // namespace kjit
