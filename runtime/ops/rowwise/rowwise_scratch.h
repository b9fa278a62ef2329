// SPDX-License-Identifier: Apache-2.0
// The buffers the tuner runs row-wise candidates on (autotune/tuner.h, "Scratch"): rotating
// sets of random rows, and the reference output kept on the device, where candidates' outputs
// are compared with it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "autotune/device_check.h"
#include "autotune/scratch_rows.h"
#include "runtime/ops/rowwise/rowwise_family.h"

namespace kjit {

class RowwiseScratch {
 public:
  RowwiseScratch(const RowwiseProblem& problem, const DeviceProps& device, CUstream stream);

  int sets() const { return rows_.sets(); }
  RowwiseCall call(int set) const { return {op_, rows_.args(set), rows_.scale(set)}; }

  void prepare_check(const DeviceProps& device);
  void keep_reference(CUstream stream);
  void poison(CUstream stream) const { rows_.poison_output(0, stream); }
  void sabotage(CUstream stream) const;
  std::string check(CUstream stream) const;

 private:
  CUdeviceptr output(int set) const { return reinterpret_cast<CUdeviceptr>(rows_.args(set).out); }

  RowOp op_;
  DType out_dtype_;
  std::size_t elements_;
  ScratchRows rows_;
  DeviceMemory reference_;
  std::unique_ptr<DeviceOutputCheck> check_;
};

}  // namespace kjit
