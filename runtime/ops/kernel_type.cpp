// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/kernel_type.h"

#include "kjit/error.hpp"

namespace kjit {

const char* kernel_type(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "float";
    case DType::kF16: return "kjit::f16";
    case DType::kBF16: return "kjit::bf16";
    case DType::kI32: return "int";
    case DType::kI64: return "long long";
  }
  throw Error(Status::kErrorInvalidArgument, "dtype has no kernel type");
}

}  // namespace kjit
