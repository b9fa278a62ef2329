/* SPDX-License-Identifier: Apache-2.0 */
/* Calls the C API from C, where an enum is an int and any int may be passed as one: the way a
   C program (or ctypes) hands kjit a dtype value no enumerator has. */
#include "c_api_caller.h"

kjit_status softmax_with_dtype_values(kjit_runtime* rt, const void* in, void* out, int64_t rows,
                                      int64_t cols, int in_dtype, int out_dtype) {
  return kjit_softmax(rt, in, cols, out, cols, rows, cols, (kjit_dtype)in_dtype,
                      (kjit_dtype)out_dtype, 0);
}
