// SPDX-License-Identifier: Apache-2.0
// _kjit's side of native_api.h: the table, handed out as a capsule.
#pragma once

#include <nanobind/nanobind.h>

namespace kjit::python {

/// Adds _native_api(): the capsule (KJIT_NATIVE_API_CAPSULE) holding the process's one table.
void bind_native_table(nanobind::module_& m);

}  // namespace kjit::python
