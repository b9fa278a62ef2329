// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "runtime/env.h"

namespace kjit::cache {
class DiskCache;
}

namespace kjit::cli {

/// Each adds one subcommand to the app; the subcommand's callback does the work.
void add_info_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_precompile_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_cache_command(CLI::App& app);

/// Adds `--cache-dir DIR` (overrides KJIT_CACHE_DIR) to a command that works on the disk cache.
void add_cache_dir_option(CLI::App& command, std::string& dir);

/// The environment's settings with `cache_dir` (when not empty) in place of KJIT_CACHE_DIR, the
/// disk layer on and no bundle: these commands work on that folder alone, whatever
/// KJIT_DISK_CACHE and KJIT_CACHE_BUNDLE say. Throws when there is no cache folder at all.
EnvSettings disk_cache_settings(const std::string& cache_dir);

/// The disk cache of disk_cache_settings(cache_dir); throws Error(kErrorCacheIo) when its folder
/// cannot be read, or cannot be written and `for_writing` is set.
std::unique_ptr<cache::DiskCache> open_disk_cache(const std::string& cache_dir, bool for_writing);

}  // namespace kjit::cli
