/* SPDX-License-Identifier: Apache-2.0 */
/* A C caller of the C API, for the tests (c_api_caller.c). */
#ifndef KJIT_TESTS_C_API_CALLER_H
#define KJIT_TESTS_C_API_CALLER_H

#include "kjit/kjit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kjit_softmax with contiguous rows and dtypes given as plain ints, converted in C. */
kjit_status softmax_with_dtype_values(kjit_runtime* rt, const void* in, void* out, int64_t rows,
                                      int64_t cols, int in_dtype, int out_dtype);

#ifdef __cplusplus
}
#endif

#endif
