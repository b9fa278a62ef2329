// SPDX-License-Identifier: Apache-2.0
// Running attention for Python: the runtime's checks name C++ fields (o, m, dv, bias_dtype, ...);
// the Python user wrote q, k, v, bias, mask, out and scale, so each error is renamed to those.
#pragma once

#include "kjit/error.hpp"
#include "kjit/runtime.hpp"

namespace kjit::python {

/// `args` validated (errors renamed, no GPU touched), then run in `device` on `stream`.
void run_attention(Runtime& runtime, const AttentionArgs& args, void* stream, int device);

/// `error` with the Python argument first ("out: ...", "q: m must be in ..."): the C++ field it
/// starts with mapped to the argument it comes from. Errors of no known field pass unchanged.
Error renamed_attention_error(const Error& error);

}  // namespace kjit::python
