/* SPDX-License-Identifier: Apache-2.0 */
/* The launch table _kjit hands kjit._torch_ops in a capsule: plain C entry points into _kjit's
 * copy of the library, so the torch ops' C++ kernels run on the same default runtime as the rest
 * of the package (warmup, the caches in memory, log forwarding) and link nothing of kjit. */
#ifndef KJIT_PYTHON_NATIVE_API_H
#define KJIT_PYTHON_NATIVE_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The capsule's name: a capsule of another name is refused. */
#define KJIT_NATIVE_API_CAPSULE "kjit._kjit.native_api"

/* Fields are only ever added at the end; a reader checks `size` covers the ones it calls.
 * Each entry runs on the default runtime in `device`'s primary context, needs no GIL, and
 * returns 0, else a kjit_status with the error set as the current Python exception (the GIL
 * taken for that). Pointers and strides are in elements; dtypes are kjit_dtype codes. */
typedef struct kjit_native_api {
  uint32_t size;
  /* op: 0 softmax, 1 log_softmax, 2 reduce_scale (scale: NULL for none). */
  int (*rowwise)(int op, const void* in, int64_t in_row_stride, void* out, int64_t out_row_stride,
                 int64_t rows, int64_t cols, int in_dtype, int out_dtype, float* scale,
                 void* stream, int device);
  /* flags: 1 logprobs, 2 renorm; k_per_row: NULL for none. */
  int (*softmax_topk)(const void* logits, int64_t row_stride, int64_t rows, int64_t cols,
                      int in_dtype, int k, const int32_t* k_per_row, float temperature,
                      unsigned flags, float* probs, void* indices, int index_dtype, void* stream,
                      int device);
} kjit_native_api;

#ifdef __cplusplus
}
#endif

#endif /* KJIT_PYTHON_NATIVE_API_H */
