// SPDX-License-Identifier: Apache-2.0
// The row-wise ops, one enum for the API, the host's planning and the kernels: NVRTC compiles
// this header with the kernel sources (as "kjit/row_op.hpp"), so it stays plain C++.
#pragma once

namespace kjit {

/// The row-wise ops. A kernel's template argument Op is the value.
enum class RowOp : int { kSoftmax = 0, kLogSoftmax = 1, kReduceScale = 2 };

}  // namespace kjit
