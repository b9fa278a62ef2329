// SPDX-License-Identifier: Apache-2.0
#include "python/src/array_hooks.h"

#include <string>

#include <nanobind/stl/string.h>

#include "python/src/array_view.h"
#include "python/src/errors.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

nb::object* allocate_hook = nullptr;  // never freed: used until the interpreter is gone
nb::object* stream_hook = nullptr;

}  // namespace

void bind_array_hooks(nb::module_& m) {
  m.def("_set_array_hooks", [](nb::object allocate, nb::object stream_of) {
    if (allocate_hook == nullptr) {
      allocate_hook = new nb::object();
      stream_hook = new nb::object();
    }
    *allocate_hook = std::move(allocate);
    *stream_hook = std::move(stream_of);
  });
}

nb::object allocate_like(nb::handle like, const std::vector<std::int64_t>& shape, DType dtype) {
  nb::list dims;
  for (std::int64_t d : shape) dims.append(d);
  return (*allocate_hook)(like, nb::tuple(dims), framework_dtype_name(dtype));
}

void* stream_for(nb::handle like, nb::handle stream) {
  nb::object handle = nb::isinstance<nb::int_>(stream) ? nb::borrow(stream)
                                                       : (*stream_hook)(like, stream);
  return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(handle));
}

DType parse_dtype_object(nb::handle dtype, const char* argument) {
  // "torch.bfloat16", "<class 'numpy.float32'>", "float32": the name after the last dot.
  std::string text = nb::cast<std::string>(nb::str(dtype));
  const std::size_t dot = text.find_last_of('.');
  if (dot != std::string::npos) text = text.substr(dot + 1);
  while (!text.empty() && (text.back() == '\'' || text.back() == '>')) text.pop_back();
  if (text == "float32" || text == "f32" || text == "fp32") return DType::kF32;
  if (text == "float16" || text == "f16" || text == "fp16" || text == "half") return DType::kF16;
  if (text == "bfloat16" || text == "bf16") return DType::kBF16;
  if (text == "int32" || text == "i32") return DType::kI32;
  if (text == "int64" || text == "i64") return DType::kI64;
  reject(argument, "'" + nb::cast<std::string>(nb::str(dtype)) +
                       "' is not a dtype kjit knows (float32, float16, bfloat16, int32, int64)");
}

}  // namespace kjit::python
