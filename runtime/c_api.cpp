// SPDX-License-Identifier: Apache-2.0
// The C API: a thin shell over kjit::Runtime that turns exceptions into status codes.
#include "kjit/kjit.h"

#include <cstring>
#include <string>

#include "kjit/kjit.hpp"
#include "runtime/c_api_guard.h"

using kjit::c_api::guarded;
using kjit::c_api::runtime_of;

namespace kjit::c_api {

std::string& last_error() {
  thread_local std::string text;
  return text;
}

}  // namespace kjit::c_api

namespace {

// Taken by reference and read as an int: a C caller may pass any int, and loading a value no
// enumerator covers through the enum type is undefined behaviour in C++.
kjit::DType dtype_of(const kjit_dtype& value, const char* name) {
  int raw = 0;
  static_assert(sizeof raw == sizeof value, "kjit_dtype is int-sized");
  std::memcpy(&raw, &value, sizeof raw);
  if (raw < static_cast<int>(KJIT_F32) || raw > static_cast<int>(KJIT_I64))
    throw kjit::Error(kjit::Status::kErrorInvalidArgument,
                      std::string(name) + ": " + std::to_string(raw) + " is not a kjit_dtype");
  return static_cast<kjit::DType>(raw);
}

kjit::RowwiseArgs rowwise_args(const void* in, int64_t in_row_stride, void* out,
                               int64_t out_row_stride, int64_t rows, int64_t cols,
                               const kjit_dtype& in_dtype, const kjit_dtype& out_dtype) {
  return {in, in_row_stride, out, out_row_stride, rows, cols,
          dtype_of(in_dtype, "in_dtype"), dtype_of(out_dtype, "out_dtype")};
}

}  // namespace

extern "C" {

kjit_status kjit_softmax(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                         int64_t out_row_stride, int64_t rows, int64_t cols, kjit_dtype in_dtype,
                         kjit_dtype out_dtype, void* stream) {
  return guarded([&] {
    runtime_of(rt).softmax(
        rowwise_args(in, in_row_stride, out, out_row_stride, rows, cols, in_dtype, out_dtype),
        stream);
  });
}

kjit_status kjit_log_softmax(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                             int64_t out_row_stride, int64_t rows, int64_t cols,
                             kjit_dtype in_dtype, kjit_dtype out_dtype, void* stream) {
  return guarded([&] {
    runtime_of(rt).log_softmax(
        rowwise_args(in, in_row_stride, out, out_row_stride, rows, cols, in_dtype, out_dtype),
        stream);
  });
}

kjit_status kjit_reduce_scale(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                              int64_t out_row_stride, float* scale_out, int64_t rows,
                              int64_t cols, kjit_dtype in_dtype, kjit_dtype out_dtype,
                              void* stream) {
  return guarded([&] {
    runtime_of(rt).reduce_scale(
        rowwise_args(in, in_row_stride, out, out_row_stride, rows, cols, in_dtype, out_dtype),
        scale_out, stream);
  });
}

kjit_status kjit_softmax_topk(kjit_runtime* rt, const void* logits, int64_t row_stride,
                              int64_t rows, int64_t cols, kjit_dtype in_dtype, int32_t k,
                              const int32_t* k_per_row, float temperature, uint32_t flags,
                              float* probs_out, void* idx_out, kjit_dtype idx_dtype, void* stream) {
  return guarded([&] {
    kjit::TopkArgs args;
    args.logits = logits;
    args.row_stride = row_stride;
    args.rows = rows;
    args.cols = cols;
    args.in_dtype = dtype_of(in_dtype, "in_dtype");
    args.k = k;
    args.k_per_row = k_per_row;
    args.temperature = temperature;
    args.flags = flags;
    args.probs_out = probs_out;
    args.idx_out = idx_out;
    args.idx_dtype = dtype_of(idx_dtype, "idx_dtype");
    runtime_of(rt).softmax_topk(args, stream);
  });
}

const char* kjit_last_error(void) { return kjit::c_api::last_error().c_str(); }

}  // extern "C"
