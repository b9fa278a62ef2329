// SPDX-License-Identifier: Apache-2.0
// The Runtime itself; each op family's entry points live in its folder (runtime/ops/<family>/
// <family>_api.cpp).
#include "kjit/runtime.hpp"

#include "runtime/dispatch/dispatcher.h"
#include "runtime/log.h"

namespace kjit {

Runtime::Runtime() : Runtime(RuntimeOptions::from_environment()) {}

Runtime::Runtime(const RuntimeOptions& options) : dispatcher_(std::make_unique<Dispatcher>(options)) {
  // The logger is the process's one; a runtime given a level sets it for everyone.
  if (!options.log_level.empty()) set_log_level(options.log_level, "log_level");
}

Runtime::~Runtime() = default;

}  // namespace kjit
