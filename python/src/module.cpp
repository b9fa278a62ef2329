// SPDX-License-Identifier: Apache-2.0
// kjit._kjit: the extension behind the kjit package. The library is linked in whole, so the
// package is this one module; the Python side (kjit/*.py) gives it its public shape.
#include <nanobind/nanobind.h>

#include "kjit/kjit.h"
#include "python/src/array_hooks.h"
#include "python/src/cache_tools.h"
#include "python/src/errors.h"
#include "python/src/log_forwarding.h"
#include "python/src/native_table.h"
#include "python/src/py_runtime.h"
#include "python/src/raw_launch.h"
#include "python/src/tools.h"
#include "python/src/torch_fast.h"

NB_MODULE(_kjit, m) {
  m.doc() = "kjit's extension: use the kjit package, not this module";
  m.attr("__version__") = KJIT_VERSION_STRING;
  kjit::python::bind_errors(m);
  kjit::python::bind_log_forwarding(m);
  kjit::python::bind_array_hooks(m);
  kjit::python::bind_runtime(m);
  kjit::python::bind_raw_launch(m);
  kjit::python::bind_torch_fast(m);
  kjit::python::bind_native_table(m);
  kjit::python::bind_tools(m);
  kjit::python::bind_cache_tools(m);
}
