// SPDX-License-Identifier: Apache-2.0
#include "runtime/log.h"

#include <memory>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "runtime/env.h"

namespace kjit {

spdlog::logger& log() {
  // A function-local static: created once, thread-safe, and never registered globally, so an
  // application's own spdlog set-up is left alone.
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto made = std::make_shared<spdlog::logger>(
        "kjit", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    std::string level = read_log_level();
    made->set_level(level.empty() ? spdlog::level::warn : spdlog::level::from_str(level));
    made->set_pattern("[kjit %L] %v");
    return made;
  }();
  return *logger;
}

}  // namespace kjit
