// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

namespace kjit {

/// How tuning records are used (KJIT_TUNE).
enum class TuneMode {
  kOff,       ///< heuristics only
  kCached,    ///< a tuning record where there is one, else the heuristics; never tunes by itself
  kFirstUse,  ///< tune a new problem class on its first call (blocking), then keep the record
};

/// Every runtime knob. RuntimeOptions::from_environment() reads the KJIT_* variables (the one
/// place they are read); an application may also fill one in itself.
struct RuntimeOptions {
  std::string cache_dir;        ///< KJIT_CACHE_DIR, else $XDG_CACHE_HOME/kjit, else ~/.cache/kjit
  std::string cache_bundle;     ///< KJIT_CACHE_BUNDLE: read-only bundle shipped with a deployment
  bool disk_cache = true;       ///< KJIT_DISK_CACHE=0 keeps everything in memory
  bool jit = true;              ///< KJIT_JIT=0: a miss in every cache is an error, never a compile
  TuneMode tune = TuneMode::kCached;  ///< KJIT_TUNE=off|cached|first-use
  std::string log_level;        ///< KJIT_LOG_LEVEL (spdlog level names); empty = warn
  std::uint64_t cache_max_bytes = 2ull << 30;  ///< KJIT_CACHE_MAX_SIZE, e.g. 500M, 2G; 0: no cap
  /// KJIT_PDL=0: every kernel launches only after the previous one in its stream has finished.
  /// By default (sm_90+) kjit's kernels launch as programmatic dependents of the kernel before
  /// them: their blocks are placed while it finishes, and wait for its memory before touching any.
  bool dependent_launch = true;

  /// Reads the environment now. Invalid values throw Error(kErrorInvalidArgument) naming the
  /// variable.
  static RuntimeOptions from_environment();
};

}  // namespace kjit
