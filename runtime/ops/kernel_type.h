// SPDX-License-Identifier: Apache-2.0
// The C++ type a dtype has in kernel_sources/, as kernel name expressions spell it.
#pragma once

#include "kjit/types.hpp"

namespace kjit {

/// "float", "kjit::f16", "kjit::bf16", "int" or "long long"; throws Error(kErrorInvalidArgument)
/// for a value no DType names.
const char* kernel_type(DType dtype);

}  // namespace kjit
