// SPDX-License-Identifier: Apache-2.0
// The only place that reads KJIT_* (and the cache-location) environment variables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kjit/options.hpp"

namespace kjit {

/// The runtime's settings; the environment is read by read_env_settings() (the same as
/// RuntimeOptions::from_environment()).
using EnvSettings = RuntimeOptions;

/// Reads the environment now. Invalid values throw Error(kErrorInvalidArgument) naming the variable.
EnvSettings read_env_settings();

/// KJIT_LOG_LEVEL alone, for the logger, which exists before any Runtime.
std::string read_log_level();

/// Parses "off" / "cached" / "first-use".
std::optional<TuneMode> parse_tune_mode(const std::string& text);
/// Parses sizes such as "1048576", "500M", "2G", "1T" (powers of 1024); nullopt for anything
/// else, including sizes above 2^64 - 1. As a size cap (KJIT_CACHE_MAX_SIZE, `kjit cache prune
/// --max-size`), 0 means no cap.
std::optional<std::uint64_t> parse_byte_size(const std::string& text);

}  // namespace kjit
