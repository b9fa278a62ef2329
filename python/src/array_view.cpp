// SPDX-License-Identifier: Apache-2.0
#include "python/src/array_view.h"

#include <algorithm>

#include "python/src/errors.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

constexpr int kDeviceCpu = 1, kDeviceCuda = 2, kDeviceCudaHost = 3, kDeviceCudaManaged = 13;

bool dtype_of(nb::dlpack::dtype dtype, DType* out) {
  using Code = nb::dlpack::dtype_code;
  if (dtype.lanes != 1) return false;
  const auto code = static_cast<Code>(dtype.code);
  if (code == Code::Float && dtype.bits == 32) *out = DType::kF32;
  else if (code == Code::Float && dtype.bits == 16) *out = DType::kF16;
  else if (code == Code::Bfloat && dtype.bits == 16) *out = DType::kBF16;
  else if (code == Code::Int && dtype.bits == 32) *out = DType::kI32;
  else if (code == Code::Int && dtype.bits == 64) *out = DType::kI64;
  else return false;
  return true;
}

std::string dlpack_dtype_text(nb::dlpack::dtype dtype) {
  static const char* const kCodes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  const std::string code = dtype.code < 7 ? kCodes[dtype.code] : "code" + std::to_string(dtype.code);
  return code + std::to_string(dtype.bits) + (dtype.lanes != 1 ? "x" + std::to_string(dtype.lanes) : "");
}

nb::ndarray<nb::ro> import_array(nb::handle object, const char* name, bool writable) {
  nb::ndarray<nb::ro> array;
  if (writable) {
    nb::ndarray<> mutable_array;
    if (nb::try_cast(object, mutable_array, false))
      return nb::ndarray<nb::ro>(mutable_array);
    if (nb::try_cast(object, array, false))
      reject(name, "the array is read-only (its producer exports it so: JAX arrays cannot be "
                   "written; pass a torch or CuPy array)");
  } else if (nb::try_cast(object, array, false)) {
    return array;
  }
  reject(name, std::string("expected an array that speaks DLPack (torch, CuPy, JAX, NumPy, ...), "
                           "got ") + nb::type_name(object.type()).c_str());
}

/// Rows of the leading dimensions as one stride: each dimension over 1 must step by the next's
/// extent, the way a contiguous block of rows (or a slice of one) does.
void fill_rows(ArrayView& view, const nb::ndarray<nb::ro>& array) {
  const std::size_t ndim = array.ndim();
  view.cols = view.shape.back();
  view.rows = 1;
  for (std::size_t i = 0; i + 1 < ndim; ++i) view.rows *= view.shape[i];
  if (view.cols > 1 && array.stride(ndim - 1) != 1)
    reject(view.name, "the last dimension must be contiguous (stride 1), but its stride is " +
                          std::to_string(array.stride(ndim - 1)));
  view.row_stride = view.cols;
  std::int64_t inner_extent = 0;  // elements the dimensions inside the current one span
  for (std::size_t i = ndim - 1; i-- > 0;) {
    if (view.shape[i] == 1) continue;
    const std::int64_t stride = array.stride(i);
    if (inner_extent == 0) {
      view.row_stride = stride;
    } else if (stride != inner_extent) {
      reject(view.name, "its leading dimensions do not step as rows of one stride (dimension " +
                            std::to_string(i) + " has stride " + std::to_string(stride) +
                            ", expected " + std::to_string(inner_extent) +
                            "); make it contiguous first");
    }
    inner_extent = stride * view.shape[i];
  }
  if (view.rows > 1 && view.row_stride < view.cols)
    reject(view.name, "its rows overlap (row stride " + std::to_string(view.row_stride) +
                          " is less than its " + std::to_string(view.cols) + " columns)");
  view.contiguous = view.rows <= 1 || view.row_stride == view.cols;
}

/// "float32, float16 or bfloat16".
std::string dtype_names(std::initializer_list<DType> allowed) {
  std::string names;
  std::size_t i = 0;
  for (DType dtype : allowed) {
    names += std::string(i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") +
             framework_dtype_name(dtype);
    ++i;
  }
  return names;
}

}  // namespace

std::string ArrayView::device() const {
  switch (device_type) {
    case kDeviceCpu: return "cpu";
    case kDeviceCuda: return "cuda:" + std::to_string(device_id);
    case kDeviceCudaHost: return "cuda_host";
    case kDeviceCudaManaged: return "cuda_managed:" + std::to_string(device_id);
    default: return "device type " + std::to_string(device_type);
  }
}

std::string ArrayView::shape_text() const {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

ArrayView view_array(nb::handle object, const char* name, bool writable,
                     std::initializer_list<DType> allowed) {
  ArrayView view;
  view.name = name;
  view.array = import_array(object, name, writable);
  const nb::ndarray<nb::ro>& array = view.array;
  const bool known = dtype_of(array.dtype(), &view.dtype);
  const std::string names = dtype_names(allowed);
  if (!known || std::find(allowed.begin(), allowed.end(), view.dtype) == allowed.end())
    reject(name, "dtype " + (known ? std::string(framework_dtype_name(view.dtype))
                                   : dlpack_dtype_text(array.dtype())) +
                     " is not supported; expected " + names);
  for (std::size_t i = 0; i < array.ndim(); ++i) {
    view.shape.push_back(static_cast<std::int64_t>(array.shape(i)));
    view.strides.push_back(static_cast<std::int64_t>(array.stride(i)));
  }
  view.data = const_cast<void*>(static_cast<const void*>(array.data()));
  view.device_type = array.device_type();
  view.device_id = array.device_id();
  return view;
}

ArrayView view_rows(nb::handle object, const char* name, bool writable,
                    std::initializer_list<DType> allowed) {
  ArrayView view = view_array(object, name, writable, allowed);
  if (view.shape.empty()) reject(name, "a 0-d array has no rows; give it at least one dimension");
  if (view.shape.back() == 0) reject(name, "the last dimension is empty (0 columns)");
  fill_rows(view, view.array);
  return view;
}

void require_shape(const ArrayView& view, const std::vector<std::int64_t>& shape,
                   const std::string& of_what) {
  if (view.shape == shape) return;
  ArrayView expected;
  expected.shape = shape;
  reject(view.name, "shape " + view.shape_text() + " does not match " + of_what + " " +
                        expected.shape_text());
}

void require_contiguous(const ArrayView& view) {
  if (!view.contiguous) reject(view.name, "must be contiguous (C order)");
}

void require_cuda(const ArrayView& view, const ArrayView* same_as) {
  if (view.device_type != kDeviceCuda && view.device_type != kDeviceCudaManaged)
    reject(view.name, "kjit runs on CUDA arrays, and this one is on " + view.device());
  if (same_as != nullptr && view.device_id != same_as->device_id)
    reject(view.name, "is on " + view.device() + ", but " + same_as->name + " is on " +
                          same_as->device());
}

const char* framework_dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF32: return "float32";
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    case DType::kI32: return "int32";
    case DType::kI64: return "int64";
  }
  return "?";
}

}  // namespace kjit::python
