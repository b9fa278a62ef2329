// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nanobind/nanobind.h>

namespace kjit::python {

/// Adds _cache_inspect, _cache_verify, _cache_prune, _cache_clear, _cache_export, _cache_import.
void bind_cache_tools(nanobind::module_& m);

}  // namespace kjit::python
