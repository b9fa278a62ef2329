// SPDX-License-Identifier: Apache-2.0
// The hot path of kjit.torch: plain integers in (pointers, strides, dtype codes, torch's raw
// current stream, the device), no DLPack round trip, the default runtime, the device entered.
#include <cstdint>
#include <string>

#include "kjit/error.hpp"

#include "python/src/device_scope.h"
#include "python/src/log_forwarding.h"
#include "python/src/py_runtime.h"
#include "python/src/raw_launch.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

template <typename T>
T* pointer(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

}  // namespace

void run_rowwise(int op, std::uintptr_t in, std::int64_t in_stride, std::uintptr_t out,
                 std::int64_t out_stride, std::int64_t rows, std::int64_t cols, int in_dtype,
                 int out_dtype, std::uintptr_t scale, std::uintptr_t stream, int device) {
  const RowwiseArgs args{pointer<const void>(in), in_stride, pointer<void>(out), out_stride,
                         rows, cols, static_cast<DType>(in_dtype), static_cast<DType>(out_dtype)};
  DeviceScope scope(device);
  Runtime& runtime = *default_runtime().runtime;
  switch (static_cast<RowOp>(op)) {
    case RowOp::kSoftmax: return runtime.softmax(args, pointer<void>(stream));
    case RowOp::kLogSoftmax: return runtime.log_softmax(args, pointer<void>(stream));
    case RowOp::kReduceScale:
      return runtime.reduce_scale(args, pointer<float>(scale), pointer<void>(stream));
  }
  throw Error(Status::kErrorInvalidArgument, "op: " + std::to_string(op) + " is not a row-wise op");
}

void run_topk(std::uintptr_t logits, std::int64_t row_stride, std::int64_t rows,
              std::int64_t cols, int in_dtype, int k, std::uintptr_t k_per_row,
              double temperature, unsigned flags, std::uintptr_t probs, std::uintptr_t indices,
              int index_dtype, std::uintptr_t stream, int device) {
  TopkArgs args;
  args.logits = pointer<const void>(logits);
  args.row_stride = row_stride;
  args.rows = rows;
  args.cols = cols;
  args.in_dtype = static_cast<DType>(in_dtype);
  args.k = k;
  args.k_per_row = pointer<const std::int32_t>(k_per_row);
  args.temperature = static_cast<float>(temperature);
  args.flags = flags;
  args.probs_out = pointer<float>(probs);
  args.idx_out = pointer<void>(indices);
  args.idx_dtype = static_cast<DType>(index_dtype);
  DeviceScope scope(device);
  default_runtime().runtime->softmax_topk(args, pointer<void>(stream));
}

void launch_rowwise_raw(int op, std::uintptr_t in, std::int64_t in_stride, std::uintptr_t out,
                        std::int64_t out_stride, std::int64_t rows, std::int64_t cols,
                        int in_dtype, int out_dtype, std::uintptr_t scale, std::uintptr_t stream,
                        int device) {
  LogFlush flush;
  run_rowwise(op, in, in_stride, out, out_stride, rows, cols, in_dtype, out_dtype, scale, stream,
              device);
}

namespace {

void launch_topk(std::uintptr_t logits, std::int64_t row_stride, std::int64_t rows,
                 std::int64_t cols, int in_dtype, int k, std::uintptr_t k_per_row,
                 double temperature, unsigned flags, std::uintptr_t probs, std::uintptr_t indices,
                 int index_dtype, std::uintptr_t stream, int device) {
  LogFlush flush;
  run_topk(logits, row_stride, rows, cols, in_dtype, k, k_per_row, temperature, flags, probs,
           indices, index_dtype, stream, device);
}

}  // namespace

void bind_raw_launch(nb::module_& m) {
  m.def("_launch_rowwise", &launch_rowwise_raw,
        "op (0 softmax, 1 log_softmax, 2 reduce_scale), in, in_row_stride, out, out_row_stride, "
        "rows, cols, in_dtype, out_dtype, scale (0: none), stream, device");
  m.def("_launch_topk", &launch_topk,
        "logits, row_stride, rows, cols, in_dtype, k, k_per_row (0: none), temperature, flags, "
        "probs, indices, index_dtype, stream, device");
}

}  // namespace kjit::python
