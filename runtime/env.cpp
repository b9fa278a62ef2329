// SPDX-License-Identifier: Apache-2.0
#include "runtime/env.h"

#include <cctype>
#include <cstdlib>

#include "kjit/error.hpp"

namespace kjit {
namespace {

std::string get(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

std::string default_cache_dir() {
  if (auto dir = get("KJIT_CACHE_DIR"); !dir.empty()) return dir;
  if (auto xdg = get("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/kjit";
  if (auto home = get("HOME"); !home.empty()) return home + "/.cache/kjit";
  return {};  // no usable location: the runtime keeps to its in-memory cache
}

bool parse_flag(const char* name, bool fallback) {
  std::string value = get(name);
  if (value.empty()) return fallback;
  if (value == "0" || value == "off" || value == "false") return false;
  if (value == "1" || value == "on" || value == "true") return true;
  throw Error(Status::kErrorInvalidArgument,
              std::string(name) + "='" + value + "' is not one of 0, 1, on, off, true, false");
}

}  // namespace

std::string read_log_level() { return get("KJIT_LOG_LEVEL"); }

std::optional<TuneMode> parse_tune_mode(const std::string& text) {
  if (text == "off") return TuneMode::kOff;
  if (text == "cached") return TuneMode::kCached;
  if (text == "first-use") return TuneMode::kFirstUse;
  return std::nullopt;
}

std::optional<std::uint64_t> parse_byte_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  std::uint64_t value = std::stoull(text.substr(0, digits));
  std::string suffix = text.substr(digits);
  if (suffix.empty() || suffix == "B") return value;
  if (suffix == "K" || suffix == "KB") return value << 10;
  if (suffix == "M" || suffix == "MB") return value << 20;
  if (suffix == "G" || suffix == "GB") return value << 30;
  return std::nullopt;
}

RuntimeOptions RuntimeOptions::from_environment() { return read_env_settings(); }

EnvSettings read_env_settings() {
  EnvSettings settings;
  settings.cache_dir = default_cache_dir();
  settings.cache_bundle = get("KJIT_CACHE_BUNDLE");
  settings.disk_cache = parse_flag("KJIT_DISK_CACHE", true) && !settings.cache_dir.empty();
  settings.jit = parse_flag("KJIT_JIT", true);
  settings.dependent_launch = parse_flag("KJIT_PDL", true);
  if (auto tune = get("KJIT_TUNE"); !tune.empty()) {
    auto mode = parse_tune_mode(tune);
    if (!mode)
      throw Error(Status::kErrorInvalidArgument,
                  "KJIT_TUNE='" + tune + "' is not one of off, cached, first-use");
    settings.tune = *mode;
  }
  settings.log_level = read_log_level();
  if (auto cap = get("KJIT_CACHE_MAX_SIZE"); !cap.empty()) {
    auto bytes = parse_byte_size(cap);
    if (!bytes)
      throw Error(Status::kErrorInvalidArgument,
                  "KJIT_CACHE_MAX_SIZE='" + cap + "' is not a size such as 500M or 2G");
    settings.cache_max_bytes = *bytes;
  }
  return settings;
}

}  // namespace kjit
