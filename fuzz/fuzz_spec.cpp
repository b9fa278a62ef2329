// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: spec files (`kjit precompile --spec`). Any input must end in calls or in a
// kjit::Error; another exception, a crash, a hang or a leak is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/spec_file.h"
#include "kjit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const kjit::cli::SpecCall& call : kjit::cli::parse_spec(text, "fuzz")) {
      // What precompile prints for each call.
      if (kjit::cli::describe(call).empty()) __builtin_trap();
    }
  } catch (const kjit::Error&) {
  }
  return 0;
}
