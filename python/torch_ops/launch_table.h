// SPDX-License-Identifier: Apache-2.0
// The launch table _kjit hands over (python/src/native_api.h), and its failures as the Python
// exceptions the table set (kjit.Error subclasses).
#pragma once

#include "python/src/native_api.h"

namespace kjit::torch_ops {

/// Keeps `table` (from _kjit's capsule) for the process's life; refuses one too small.
void set_launch_table(const kjit_native_api* table);

/// The table; only called by kernels, which are registered after set_launch_table.
const kjit_native_api& launch_table() noexcept;

/// Throws the Python exception a table call that returned `status` (not 0) set, so the caller
/// of the op gets the same kjit.Error subclass the Python kernels raise.
void throw_if_failed(int status);

}  // namespace kjit::torch_ops
