// SPDX-License-Identifier: Apache-2.0
#include "runtime/env.h"

#include <cctype>
#include <cstdlib>
#include <limits>

#include "kjit/error.hpp"
#include "runtime/log.h"

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
  std::size_t digits = 0;
  std::uint64_t value = 0;
  for (; digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])); ++digits) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[digits] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (digits == 0) return std::nullopt;
  const std::string suffix = text.substr(digits);
  int shift = -1;
  if (suffix.empty() || suffix == "B") shift = 0;
  if (suffix == "K" || suffix == "KB") shift = 10;
  if (suffix == "M" || suffix == "MB") shift = 20;
  if (suffix == "G" || suffix == "GB") shift = 30;
  if (suffix == "T" || suffix == "TB") shift = 40;
  if (shift < 0) return std::nullopt;
  // A size that does not fit 64 bits is refused, never wrapped (a wrapped cap of 0 or a few
  // bytes would empty the cache).
  if (value > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return value << shift;
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
  if (!settings.log_level.empty()) check_log_level(settings.log_level, "KJIT_LOG_LEVEL");
  if (auto cap = get("KJIT_CACHE_MAX_SIZE"); !cap.empty()) {
    auto bytes = parse_byte_size(cap);
    if (!bytes)
      throw Error(Status::kErrorInvalidArgument,
                  "KJIT_CACHE_MAX_SIZE='" + cap + "' is not a size such as 500M or 2G (0: no cap)");
    settings.cache_max_bytes = *bytes;
  }
  return settings;
}

}  // namespace kjit
