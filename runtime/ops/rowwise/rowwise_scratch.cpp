// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/rowwise/rowwise_scratch.h"

namespace kjit {
namespace {

std::size_t bytes_per_set(const RowwiseProblem& p) {
  return static_cast<std::size_t>(p.rows * p.cols) * (size_of(p.in_dtype) + size_of(p.out_dtype));
}

}  // namespace

RowwiseScratch::RowwiseScratch(const RowwiseProblem& problem, const DeviceProps& device,
                               CUstream stream)
    : op_(problem.op),
      out_dtype_(problem.out_dtype),
      elements_(static_cast<std::size_t>(problem.rows * problem.cols)),
      rows_(problem.in_dtype, problem.out_dtype, problem.rows, problem.cols,
            rotating_sets(bytes_per_set(problem), device.l2_bytes), stream),
      reference_(allocate_device(elements_ * size_of(problem.out_dtype))) {}

void RowwiseScratch::prepare_check(const DeviceProps& device) {
  check_ = std::make_unique<DeviceOutputCheck>(out_dtype_, device);
}

void RowwiseScratch::keep_reference(CUstream stream) {
  KJIT_CU(cuMemcpyDtoDAsync, reference_.get(), output(0), elements_ * size_of(out_dtype_), stream);
  KJIT_CU(cuStreamSynchronize, stream);
}

void RowwiseScratch::sabotage(CUstream stream) const {
  KJIT_CU(cuMemsetD8Async, output(0), 0x42, 4, stream);
}

std::string RowwiseScratch::check(CUstream stream) const {
  return check_->compare(output(0), reference_.get(), elements_, stream);
}

}  // namespace kjit
