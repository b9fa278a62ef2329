/* SPDX-License-Identifier: Apache-2.0 */
/* The C API of kjit, for C programs and foreign-function interfaces (ctypes, cffi, ...). Every
 * call returns a kjit_status; on failure kjit_last_error() describes it (per thread). */
#ifndef KJIT_KJIT_H
#define KJIT_KJIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kjit_status {
  KJIT_SUCCESS = 0,
  KJIT_ERROR_INVALID_ARGUMENT = 1,
  KJIT_ERROR_NO_DRIVER = 2,
  KJIT_ERROR_DRIVER = 3,
  KJIT_ERROR_COMPILE = 4,
  KJIT_ERROR_LOAD = 5,
  KJIT_ERROR_LAUNCH = 6,
  KJIT_ERROR_OUT_OF_RESOURCES = 7,
  KJIT_ERROR_INVALID_CONFIG = 8,
  KJIT_ERROR_CACHE_IO = 9,
  KJIT_ERROR_NOT_FOUND = 10,
  KJIT_ERROR_INTERNAL = 11
} kjit_status;

typedef enum kjit_dtype {
  KJIT_F32 = 0,
  KJIT_F16 = 1,
  KJIT_BF16 = 2,
  KJIT_I32 = 3,
  KJIT_I64 = 4
} kjit_dtype;

typedef struct kjit_runtime kjit_runtime;

/* Creates a runtime; options come from the environment (KJIT_* variables). */
kjit_status kjit_runtime_create(kjit_runtime** rt);
/* Destroys a runtime made by kjit_runtime_create (NULL is allowed). */
void kjit_runtime_destroy(kjit_runtime* rt);

/* out = softmax(in) per row. Strides are in elements; stream is a CUstream (NULL: default). */
kjit_status kjit_softmax(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                         int64_t out_row_stride, int64_t rows, int64_t cols, kjit_dtype in_dtype,
                         kjit_dtype out_dtype, void* stream);
/* out = log_softmax(in) per row. */
kjit_status kjit_log_softmax(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                             int64_t out_row_stride, int64_t rows, int64_t cols,
                             kjit_dtype in_dtype, kjit_dtype out_dtype, void* stream);
/* out = in / max|in| per row (zeros stay zeros); scale_out (may be NULL) gets max|in| per row. */
kjit_status kjit_reduce_scale(kjit_runtime* rt, const void* in, int64_t in_row_stride, void* out,
                              int64_t out_row_stride, float* scale_out, int64_t rows,
                              int64_t cols, kjit_dtype in_dtype, kjit_dtype out_dtype,
                              void* stream);

/* Flags of kjit_softmax_topk. */
#define KJIT_TOPK_LOGPROBS 1u /* write log-probabilities instead of probabilities */
#define KJIT_TOPK_RENORM 2u   /* renormalize the k probabilities of each row to sum to 1 */
/* Largest k kjit_softmax_topk accepts. */
#define KJIT_MAX_TOPK 4096

/* Fused softmax + top-K for sampling. For each of `rows` rows of `cols` logits (fp32, fp16 or
 * bf16; rows `row_stride` elements apart): p = softmax(logits / temperature) over the whole row,
 * then the k largest p, sorted descending, equal values in ascending index order. probs_out is
 * [rows, k] fp32 and idx_out [rows, k] of KJIT_I32 or KJIT_I64, both contiguous. k_per_row (a
 * device array of `rows` values, may be NULL) gives each row its own k (clamped to [0, k]); the
 * slots past it get index -1 and probability 0 (-inf with KJIT_TOPK_LOGPROBS). -inf logits have
 * probability 0; a row with a NaN gives NaN probabilities (indices stay valid: NaN ranks above
 * +inf); a row of only -inf logits gives NaN probabilities, as softmax does. */
kjit_status kjit_softmax_topk(kjit_runtime* rt, const void* logits, int64_t row_stride,
                              int64_t rows, int64_t cols, kjit_dtype in_dtype, int32_t k,
                              const int32_t* k_per_row, float temperature, uint32_t flags,
                              float* probs_out, void* idx_out, kjit_dtype idx_dtype, void* stream);

/* The message of this thread's last failed call ("" if none). Valid until the next kjit call. */
const char* kjit_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* KJIT_KJIT_H */
