// SPDX-License-Identifier: Apache-2.0
// kjit::Error as Python exceptions: kjit.Error and its subclasses (kjit/_errors.py), chosen by the
// error's status, carrying .status and .detail (an NVRTC log, say).
#pragma once

#include <string>

#include <nanobind/nanobind.h>

#include "kjit/error.hpp"

namespace kjit::python {

/// Adds _set_error_types (called once by kjit/_errors.py) and the exception translator.
void bind_errors(nanobind::module_& m);

/// Sets `error` as the current Python exception (its kjit.Error subclass); call with the GIL.
void set_python_error(const Error& error);

/// Throws Error(kErrorInvalidArgument) "<argument>: <what>": every argument error names it.
[[noreturn]] void reject(const char* argument, const std::string& what);

}  // namespace kjit::python
