// SPDX-License-Identifier: Apache-2.0
// Any array that speaks DLPack (torch, CuPy, JAX, NumPy, ...) read as a batch of rows: the last
// dimension is the columns, every other dimension counts rows. Every error names the argument.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "kjit/types.hpp"

namespace kjit::python {

/// One array argument, held (its DLPack capsule alive) for the call.
struct ArrayView {
  const char* name = "";
  nanobind::ndarray<nanobind::ro> array;
  void* data = nullptr;
  DType dtype = DType::kF32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  ///< in elements, one per dimension
  std::int64_t rows = 0;        ///< product of every dimension but the last (1 for a 1-d array)
  std::int64_t cols = 0;        ///< the last dimension
  std::int64_t row_stride = 0;  ///< elements between rows
  bool contiguous = false;      ///< C order, dimensions of size 1 aside
  int device_type = 0;          ///< DLPack's: 1 CPU, 2 CUDA, ...
  int device_id = 0;

  /// "cuda:0", "cpu", ...
  std::string device() const;
  /// "(4, 32000)".
  std::string shape_text() const;
};

/// Reads `object` as an array of one of the `allowed` dtypes, any shape and strides (rows, cols
/// and row_stride left unset). `writable` as for view_rows; the device is not looked at.
ArrayView view_array(nanobind::handle object, const char* name, bool writable,
                     std::initializer_list<DType> allowed);
/// Reads `object` as rows of one of the `allowed` dtypes. `writable`: an output, refused when its
/// producer marks it read-only. Does not look at the device (require_cuda does), so that every
/// other argument error shows on any machine.
ArrayView view_rows(nanobind::handle object, const char* name, bool writable,
                    std::initializer_list<DType> allowed);
/// Refuses an array whose shape is not `shape`, naming `of_what` ("x's shape").
void require_shape(const ArrayView& view, const std::vector<std::int64_t>& shape,
                   const std::string& of_what);
/// Refuses an array that is not C-contiguous.
void require_contiguous(const ArrayView& view);
/// Refuses an array that is not on a CUDA device, or (with `same_as`) not on that one's.
void require_cuda(const ArrayView& view, const ArrayView* same_as = nullptr);

/// "f32" -> "float32", the dtype names frameworks use.
const char* framework_dtype_name(DType dtype) noexcept;

}  // namespace kjit::python
