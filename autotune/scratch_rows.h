// SPDX-License-Identifier: Apache-2.0
// Scratch device buffers for tuning: random inputs, outputs to check, copies to rotate through.
#pragma once

#include <cstdint>
#include <vector>

#include "kjit/types.hpp"
#include "runtime/driver/handles.h"

namespace kjit {

/// `sets` pairs of [rows, cols] input/output buffers (input random normal, scaled by 3) plus a
/// per-row scale buffer each, so timed launches can rotate past the L2.
class ScratchRows {
 public:
  ScratchRows(DType in, DType out, std::int64_t rows, std::int64_t cols, int sets, CUstream stream);

  RowwiseArgs args(int set) const;
  float* scale(int set) const;
  int sets() const { return static_cast<int>(inputs_.size()); }

  /// Output `set`'s raw bytes, into `bytes` (resized; reusing it saves page faults).
  void download_output(int set, std::vector<unsigned char>& bytes) const;
  /// Output `set` downloaded and converted to floats.
  std::vector<float> output_as_floats(int set) const;
  /// Fills output `set` with 0xFF bytes (NaN in every float type) before a checked run.
  void poison_output(int set, CUstream stream) const;

 private:
  DType in_, out_;
  std::int64_t rows_, cols_;
  std::vector<DeviceMemory> inputs_, outputs_, scales_;
};

/// How many rotating sets keep `bytes_per_set` working sets past twice the L2.
int rotating_sets(std::size_t bytes_per_set, int l2_bytes);

/// Decodes one element of a float dtype.
float decode_float(const unsigned char* element, DType dtype);

}  // namespace kjit
