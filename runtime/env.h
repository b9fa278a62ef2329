// SPDX-License-Identifier: Apache-2.0
// The only place that reads KJIT_* (and the cache-location) environment variables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kjit {

/// How tuning records are used (KJIT_TUNE).
enum class TuneMode { kOff, kCached, kFirstUse };

/// Every runtime knob that may come from the environment, read once per Runtime.
struct EnvSettings {
  std::string cache_dir;        ///< KJIT_CACHE_DIR, else $XDG_CACHE_HOME/kjit, else ~/.cache/kjit
  std::string cache_bundle;     ///< KJIT_CACHE_BUNDLE: read-only bundle shipped with a deployment
  bool disk_cache = true;       ///< KJIT_DISK_CACHE=0 keeps everything in memory
  bool jit = true;              ///< KJIT_JIT=0: a miss in every cache is an error, never a compile
  TuneMode tune = TuneMode::kCached;  ///< KJIT_TUNE=off|cached|first-use
  std::string log_level;        ///< KJIT_LOG_LEVEL (spdlog level names); empty = warn
  std::uint64_t cache_max_bytes = 2ull << 30;  ///< KJIT_CACHE_MAX_SIZE, e.g. 500M, 2G
};

/// Reads the environment now. Invalid values throw Error(kErrorInvalidArgument) naming the variable.
EnvSettings read_env_settings();

/// KJIT_LOG_LEVEL alone, for the logger, which exists before any Runtime.
std::string read_log_level();

/// Parses "off" / "cached" / "first-use".
std::optional<TuneMode> parse_tune_mode(const std::string& text);
/// Parses sizes such as "1048576", "500M", "2G".
std::optional<std::uint64_t> parse_byte_size(const std::string& text);

}  // namespace kjit
