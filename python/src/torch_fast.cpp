// SPDX-License-Identifier: Apache-2.0
// The eager hot path of torch.ops.kjit.softmax / log_softmax (and their out variants): torch
// tensors read through a handful of C-API calls (dtype, contiguity, shape, data pointers),
// torch's raw current stream, and the launch, with no Python frame in between. Anything off the
// path (a strided or empty tensor, another dtype, a mismatched output) goes to the checked
// Python kernels of kjit/torch/_library.py, which name the argument at fault. No libtorch link:
// torch is only ever seen through its Python objects.
#include <cstdint>

#include "python/src/raw_launch.h"
#include "python/src/torch_fast.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

/// What kjit.torch hands over once (_torch_setup); never freed, used until the process ends.
struct TorchRefs {
  nb::object dtypes[3];  // torch.float32, float16, bfloat16: kjit_dtype codes 0, 1, 2
  nb::object empty_like, raw_stream, checked_new, checked_out;
  nb::str dtype{"dtype"}, dim{"dim"}, is_contiguous{"is_contiguous"}, shape{"shape"},
      numel{"numel"}, data_ptr{"data_ptr"}, get_device{"get_device"};
};
TorchRefs* refs = nullptr;

int float_code(nb::handle dtype) {
  for (int i = 0; i < 3; ++i)
    if (dtype.is(refs->dtypes[i])) return i;
  return -1;
}

struct DenseRows {
  std::int64_t rows = 0, cols = 0;
};

/// A contiguous tensor with at least one dimension and columns; false sends it the checked way.
bool dense_rows(nb::handle t, DenseRows* out) {
  const long dim = nb::cast<long>(t.attr(refs->dim)());
  if (dim == 0 || !nb::cast<bool>(t.attr(refs->is_contiguous)())) return false;
  out->cols = nb::cast<std::int64_t>(t.attr(refs->shape)[nb::int_(dim - 1)]);
  if (out->cols == 0) return false;
  out->rows = nb::cast<std::int64_t>(t.attr(refs->numel)()) / out->cols;
  return true;
}

std::uintptr_t pointer_of(nb::handle t) { return nb::cast<std::uintptr_t>(t.attr(refs->data_ptr)()); }

void launch(int op, nb::handle x, int in_code, nb::handle out, int out_code, const DenseRows& r) {
  const int device = nb::cast<int>(x.attr(refs->get_device)());
  const auto stream = nb::cast<std::uintptr_t>(refs->raw_stream(device));
  launch_rowwise_raw(op, pointer_of(x), r.cols, pointer_of(out), r.cols, r.rows, r.cols, in_code,
                     out_code, 0, stream, device);
}

nb::object rowwise_new(int op, nb::handle x, nb::handle out_dtype) {
  const int in_code = float_code(x.attr(refs->dtype));
  const int out_code = out_dtype.is_none() ? in_code : float_code(out_dtype);
  DenseRows r;
  if (in_code < 0 || out_code < 0 || !dense_rows(x, &r)) return refs->checked_new(op, x, out_dtype);
  // A contiguous x gets a contiguous out: what the fake kernel allocates too.
  nb::object out = out_dtype.is_none() ? refs->empty_like(x)
                                       : refs->empty_like(x, nb::arg("dtype") = out_dtype);
  launch(op, x, in_code, out, out_code, r);
  return out;
}

void rowwise_out(int op, nb::handle x, nb::handle out) {
  const int in_code = float_code(x.attr(refs->dtype));
  const int out_code = float_code(out.attr(refs->dtype));
  DenseRows r, o;
  const bool dense = in_code >= 0 && out_code >= 0 && dense_rows(x, &r) && dense_rows(out, &o) &&
                     x.attr(refs->shape).equal(out.attr(refs->shape)) &&
                     x.attr(refs->get_device)().equal(out.attr(refs->get_device)());
  if (!dense) {
    refs->checked_out(op, x, out);
    return;
  }
  launch(op, x, in_code, out, out_code, r);
}

}  // namespace

void bind_torch_fast(nb::module_& m) {
  m.def("_torch_setup", [](nb::object torch, nb::object raw_stream, nb::object checked_new,
                           nb::object checked_out) {
    if (refs == nullptr) refs = new TorchRefs();
    refs->dtypes[0] = torch.attr("float32");
    refs->dtypes[1] = torch.attr("float16");
    refs->dtypes[2] = torch.attr("bfloat16");
    refs->empty_like = torch.attr("empty_like");
    refs->raw_stream = std::move(raw_stream);
    refs->checked_new = std::move(checked_new);
    refs->checked_out = std::move(checked_out);
  });
  for (int op : {0, 1}) {
    const char* name = op == 0 ? "_torch_softmax" : "_torch_log_softmax";
    const char* name_out = op == 0 ? "_torch_softmax_out" : "_torch_log_softmax_out";
    m.def(name, [op](nb::handle x, nb::handle out_dtype) { return rowwise_new(op, x, out_dtype); },
          nb::arg("x"), nb::arg("out_dtype").none() = nb::none());
    m.def(name_out, [op](nb::handle x, nb::handle out) { rowwise_out(op, x, out); }, nb::arg("x"),
          nb::arg("out"));
  }
}

}  // namespace kjit::python
