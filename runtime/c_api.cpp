// SPDX-License-Identifier: Apache-2.0
// The C API: a thin shell over kjit::Runtime that turns exceptions into status codes.
#include "kjit/kjit.h"

#include <cstring>
#include <new>
#include <string>

#include "kjit/kjit.hpp"

struct kjit_runtime {
  kjit::Runtime runtime;
};

namespace {

thread_local std::string last_error;

template <typename Body>
kjit_status guarded(Body&& body) noexcept {
  try {
    body();
    last_error.clear();
    return KJIT_SUCCESS;
  } catch (const kjit::Error& e) {
    last_error = e.what();
    return static_cast<kjit_status>(e.status());
  } catch (const std::bad_alloc&) {
    last_error = "out of host memory";
    return KJIT_ERROR_OUT_OF_RESOURCES;
  } catch (const std::exception& e) {
    last_error = std::string("internal error: ") + e.what();
    return KJIT_ERROR_INTERNAL;
  } catch (...) {
    last_error = "internal error";
    return KJIT_ERROR_INTERNAL;
  }
}

kjit::Runtime& runtime_of(kjit_runtime* rt) {
  if (rt == nullptr) throw kjit::Error(kjit::Status::kErrorInvalidArgument, "rt is null");
  return rt->runtime;
}

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

kjit_status kjit_runtime_create(kjit_runtime** rt) {
  return guarded([&] {
    if (rt == nullptr) throw kjit::Error(kjit::Status::kErrorInvalidArgument, "rt is null");
    *rt = new kjit_runtime{};
  });
}

void kjit_runtime_destroy(kjit_runtime* rt) { delete rt; }

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

const char* kjit_last_error(void) { return last_error.c_str(); }

}  // extern "C"
