// SPDX-License-Identifier: Apache-2.0
// The hot path of kjit.torch: plain integers in (pointers, strides, dtype codes, torch's raw
// current stream, the device), no DLPack round trip, the default runtime, the device entered.
#include <cstdint>
#include <string>

#include "kjit/error.hpp"

#include <nanobind/stl/array.h>

#include "python/src/attention_call.h"
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

/// sizes: batch, heads, m, n, d, dv, mask_windows; strides: q, k, v, o (batch, head, row), then
/// bias and mask (head or window, row); dtypes: q's, bias's, mask's. Pointers 0: no bias, mask.
void launch_attention(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::uintptr_t o,
                      std::uintptr_t bias, std::uintptr_t mask,
                      const std::array<std::int64_t, 7>& sizes,
                      const std::array<std::int64_t, 16>& strides,
                      const std::array<int, 3>& dtypes, double scale, bool causal,
                      std::uintptr_t stream, int device) {
  LogFlush flush;
  AttentionArgs args;
  args.q = pointer<const void>(q);
  args.k = pointer<const void>(k);
  args.v = pointer<const void>(v);
  args.o = pointer<void>(o);
  args.bias = pointer<const void>(bias);
  args.mask = pointer<const void>(mask);
  args.batch = sizes[0];
  args.heads = sizes[1];
  args.m = sizes[2];
  args.n = sizes[3];
  args.d = sizes[4];
  args.dv = sizes[5];
  args.mask_windows = sizes[6];
  for (int i = 0; i < 3; ++i) {
    args.q_strides[i] = strides[i];
    args.k_strides[i] = strides[3 + i];
    args.v_strides[i] = strides[6 + i];
    args.o_strides[i] = strides[9 + i];
  }
  args.bias_strides = {strides[12], strides[13]};
  args.mask_strides = {strides[14], strides[15]};
  args.dtype = static_cast<DType>(dtypes[0]);
  args.bias_dtype = static_cast<DType>(dtypes[1]);
  args.mask_dtype = static_cast<DType>(dtypes[2]);
  args.scale = static_cast<float>(scale);
  args.causal = causal;
  run_attention(*default_runtime().runtime, args, pointer<void>(stream), device);
}

}  // namespace

void bind_raw_launch(nb::module_& m) {
  m.def("_launch_rowwise", &launch_rowwise_raw,
        "op (0 softmax, 1 log_softmax, 2 reduce_scale), in, in_row_stride, out, out_row_stride, "
        "rows, cols, in_dtype, out_dtype, scale (0: none), stream, device");
  m.def("_launch_topk", &launch_topk,
        "logits, row_stride, rows, cols, in_dtype, k, k_per_row (0: none), temperature, flags, "
        "probs, indices, index_dtype, stream, device");
  m.def("_launch_attention", &launch_attention,
        "q, k, v, o, bias (0: none), mask (0: none), (batch, heads, m, n, d, dv, mask_windows), "
        "16 strides (q, k, v, o: batch, head, row; bias, mask: head or window, row), "
        "(dtype, bias_dtype, mask_dtype), scale, causal, stream, device");
}

}  // namespace kjit::python
