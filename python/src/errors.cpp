// SPDX-License-Identifier: Apache-2.0
#include "python/src/errors.h"

#include <exception>

#include "kjit/error.hpp"

namespace nb = nanobind;

namespace kjit::python {
namespace {

/// kjit.Error and {status name: subclass}, set at import; kept for the process's life.
nb::object* error_base = nullptr;
nb::dict* error_types = nullptr;

void translate(const std::exception_ptr& thrown, void*) {
  try {
    std::rethrow_exception(thrown);
  } catch (const Error& error) {
    try {
      set_python_error(error);
    } catch (nb::python_error& failed) {
      failed.restore();  // the exception class itself failed: report that instead
    }
  }
}

}  // namespace

void set_python_error(const Error& error) {
  const nb::str status(to_string(error.status()));
  nb::object type = error_base != nullptr ? *error_base : nb::borrow(PyExc_RuntimeError);
  if (error_types != nullptr && error_types->contains(status)) type = (*error_types)[status];
  nb::object instance = type(nb::str(error.what()));
  instance.attr("status") = status;
  instance.attr("detail") = nb::str(error.detail().c_str());
  PyErr_SetObject(type.ptr(), instance.ptr());
}

void reject(const char* argument, const std::string& what) {
  throw Error(Status::kErrorInvalidArgument, std::string(argument) + ": " + what);
}

void bind_errors(nb::module_& m) {
  m.def("_set_error_types", [](nb::object base, nb::dict types) {
    if (error_base == nullptr) {
      // Never freed: the translator may run until the interpreter is gone.
      error_base = new nb::object(std::move(base));
      error_types = new nb::dict(std::move(types));
    }
  });
  nb::register_exception_translator(translate);
}

}  // namespace kjit::python
