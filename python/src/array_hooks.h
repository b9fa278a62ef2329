// SPDX-License-Identifier: Apache-2.0
// What the array ops ask of the frameworks, answered in Python (kjit/_arrays.py): a new array
// from the input's framework on the input's device, and the stream to run on.
#pragma once

#include <cstdint>
#include <vector>

#include <nanobind/nanobind.h>

#include "kjit/types.hpp"

namespace kjit::python {

/// Adds _set_array_hooks(allocate, stream_of), called once at import.
void bind_array_hooks(nanobind::module_& m);

/// allocate(like, shape, dtype name): an uninitialized array of `like`'s framework and device.
nanobind::object allocate_like(nanobind::handle like, const std::vector<std::int64_t>& shape,
                               DType dtype);

/// The CUstream to run on: `stream` as given (an int handle, a torch or CuPy stream object, an
/// object with __cuda_stream__), or for None the current stream of `like`'s framework.
void* stream_for(nanobind::handle like, nanobind::handle stream);

/// Parses a dtype given as a name ("bf16", "bfloat16") or a framework's dtype object
/// (torch.bfloat16, numpy.float32); errors name `argument`.
DType parse_dtype_object(nanobind::handle dtype, const char* argument);

}  // namespace kjit::python
