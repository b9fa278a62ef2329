// SPDX-License-Identifier: Apache-2.0
// The C API: a thin shell over kjit::Runtime that turns exceptions into status codes.
#include "kjit/kjit.h"

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

// Taken by reference, so that it is read as an int (enum_value).
kjit::DType dtype_of(const kjit_dtype& value, const char* name) {
  const int raw = kjit::c_api::enum_value(value);
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

/// The C struct as the C++ one. A caller's struct smaller than this header's lacks fields
/// every call needs; a larger one (a newer header) is read up to the fields known here.
kjit::AttentionArgs attention_args(const kjit_attention_args* c) {
  if (c == nullptr) throw kjit::Error(kjit::Status::kErrorInvalidArgument, "args is null");
  if (c->struct_size < sizeof(kjit_attention_args))
    throw kjit::Error(kjit::Status::kErrorInvalidArgument,
                      "struct_size (" + std::to_string(c->struct_size) + ") is smaller than " +
                          std::to_string(sizeof(kjit_attention_args)) +
                          ", the size of kjit_attention_args this library knows");
  kjit::AttentionArgs args;
  args.q = c->q;
  args.k = c->k;
  args.v = c->v;
  args.o = c->o;
  args.bias = c->bias;
  args.mask = c->mask;
  args.batch = c->batch;
  args.heads = c->heads;
  args.m = c->m;
  args.n = c->n;
  args.d = c->d;
  args.dv = c->dv;
  args.mask_windows = c->mask_windows;
  for (int i = 0; i < 3; ++i) {
    args.q_strides[i] = c->q_strides[i];
    args.k_strides[i] = c->k_strides[i];
    args.v_strides[i] = c->v_strides[i];
    args.o_strides[i] = c->o_strides[i];
  }
  for (int i = 0; i < 2; ++i) {
    args.bias_strides[i] = c->bias_strides[i];
    args.mask_strides[i] = c->mask_strides[i];
  }
  args.dtype = dtype_of(c->dtype, "dtype");
  args.bias_dtype = dtype_of(c->bias_dtype, "bias_dtype");
  args.mask_dtype = dtype_of(c->mask_dtype, "mask_dtype");
  args.scale = c->scale;
  args.causal = c->causal != 0;
  return args;
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

kjit_status kjit_attention(kjit_runtime* rt, const kjit_attention_args* args, void* stream) {
  return guarded([&] { runtime_of(rt).attention(attention_args(args), stream); });
}

const char* kjit_last_error(void) { return kjit::c_api::last_error().c_str(); }

}  // extern "C"
