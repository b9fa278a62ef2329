// SPDX-License-Identifier: Apache-2.0
// What a C++ call that may be rejected returned: its status and message, and whether the message
// names an argument. The validation suites of every op check their bad inputs through these.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "kjit/error.hpp"

namespace kjit::test {

/// Status and message of one call; kSuccess and "" when it did not throw.
std::pair<Status, std::string> outcome(const std::function<void()>& call);

/// True when `name` stands in `message` as a word of its own ("d" not inside "dv" or "head", "k"
/// not inside "softmax_topk").
bool names_argument(const std::string& message, const std::string& name);

}  // namespace kjit::test
