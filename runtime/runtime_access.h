// SPDX-License-Identifier: Apache-2.0
// kjit's own tools (the op registry behind the CLI) reach a Runtime's dispatcher through here;
// applications use the public API.
#pragma once

#include "kjit/runtime.hpp"
#include "runtime/dispatch/dispatcher.h"

namespace kjit {

struct RuntimeAccess {
  static Dispatcher& dispatcher(Runtime& runtime) { return *runtime.dispatcher_; }
};

}  // namespace kjit
