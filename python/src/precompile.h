// SPDX-License-Identifier: Apache-2.0
// kjit.precompile: the kernels a spec's calls need, for each arch, compiled into a cache folder
// on a pool of threads (no GPU needed), as `kjit precompile` does.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/env.h"

namespace kjit::python {

/// Compiles what `calls` need on each of `archs` into `settings`' disk cache with `threads`
/// threads; returns {"kernels", "compiled", "cached", "failed": [{"kernel", "arch", "error"}],
/// "cache_dir", "seconds"}. One failing kernel does not stop the others.
nlohmann::ordered_json precompile(const std::vector<nlohmann::ordered_json>& calls,
                                  const std::vector<int>& archs, const EnvSettings& settings,
                                  unsigned threads);

}  // namespace kjit::python
