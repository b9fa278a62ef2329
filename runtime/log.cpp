// SPDX-License-Identifier: Apache-2.0
#include "runtime/log.h"

#include <memory>
#include <mutex>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "kjit/error.hpp"
#include "runtime/env.h"

namespace kjit {
namespace {

/// Writes to stderr, or hands each line to the callback a binding installed. One sink for the
/// logger's lifetime, so switching never touches the logger's sink list while others log.
class CallbackOrStderrSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  CallbackOrStderrSink() : stderr_(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()) {}

  void set_callback(LogCallback callback, void* user_data) {
    std::lock_guard<std::mutex> guard(mutex_);  // base_sink's lock: no line is in flight
    callback_ = callback;
    user_data_ = user_data;
  }
  spdlog::sinks::sink& stderr_sink() { return *stderr_; }

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    if (callback_ == nullptr) {
      stderr_->log(message);
      return;
    }
    const std::string text(message.payload.data(), message.payload.size());
    callback_(static_cast<int>(message.level), text.c_str(), user_data_);
  }
  void flush_() override { stderr_->flush(); }

 private:
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> stderr_;
  LogCallback callback_ = nullptr;
  void* user_data_ = nullptr;
};

CallbackOrStderrSink& sink() {
  static const auto made = [] {
    auto s = std::make_shared<CallbackOrStderrSink>();
    s->stderr_sink().set_pattern("[kjit %L] %v");
    return s;
  }();
  return *made;
}

spdlog::level::level_enum parse_level(const std::string& level, const char* what) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  // from_str answers "off" for any name it does not know.
  if (parsed == spdlog::level::off && level != "off")
    throw Error(Status::kErrorInvalidArgument,
                std::string(what) + "='" + level +
                    "' is not one of trace, debug, info, warn, error, critical, off");
  return parsed;
}

}  // namespace

spdlog::logger& log() {
  // A function-local static: created once, thread-safe, and never registered globally, so an
  // application's own spdlog set-up is left alone.
  static std::shared_ptr<spdlog::logger> logger = [] {
    std::shared_ptr<spdlog::sinks::sink> shared(&sink(), [](spdlog::sinks::sink*) {});
    auto made = std::make_shared<spdlog::logger>("kjit", shared);
    // A name spdlog does not know must not turn every warning off: warn, and say why.
    made->set_level(spdlog::level::warn);
    std::string problem;
    if (std::string level = read_log_level(); !level.empty()) {
      try {
        made->set_level(parse_level(level, "KJIT_LOG_LEVEL"));
      } catch (const Error& e) {
        problem = e.what();
      }
    }
    if (!problem.empty()) made->warn("{}; logging at warn", problem);
    return made;
  }();
  return *logger;
}

void set_log_callback(LogCallback callback, void* user_data) noexcept {
  sink().set_callback(callback, user_data);
}

void check_log_level(const std::string& level, const char* what) { parse_level(level, what); }

void set_log_level(const std::string& level, const char* what) {
  log().set_level(parse_level(level, what));
}

}  // namespace kjit
