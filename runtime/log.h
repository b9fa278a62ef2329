// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <spdlog/spdlog.h>

namespace kjit {

/// The one named logger of kjit ("kjit", to stderr). Its level comes from KJIT_LOG_LEVEL
/// (default warn), applied the first time it is asked for.
spdlog::logger& log();

}  // namespace kjit
