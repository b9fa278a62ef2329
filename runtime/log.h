// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include <spdlog/spdlog.h>

namespace kjit {

/// The one named logger of kjit ("kjit", to stderr). Its level comes from KJIT_LOG_LEVEL
/// (default warn), applied the first time it is asked for.
spdlog::logger& log();

/// Receives one log line: its spdlog level (trace 0 .. critical 5) and text, no newline.
using LogCallback = void (*)(int level, const char* message, void* user_data);

/// Sends the logger's lines to `callback` instead of stderr (null: back to stderr). Safe while
/// other threads log: a line goes wholly to one or the other.
void set_log_callback(LogCallback callback, void* user_data) noexcept;

/// Throws Error(kErrorInvalidArgument) naming `what` unless `level` is a spdlog level name.
void check_log_level(const std::string& level, const char* what);

/// Sets the logger's level from a spdlog level name ("trace" .. "off"); throws
/// Error(kErrorInvalidArgument) naming `what` for any other text.
void set_log_level(const std::string& level, const char* what);

}  // namespace kjit
