// SPDX-License-Identifier: Apache-2.0
// Checks a tuning candidate's output against the reference kernel's, element by element.
#pragma once

#include <string>
#include <vector>

#include "kjit/types.hpp"

namespace kjit {

/// How far two outputs of the same math, rounded to `out`, may differ: |got - ref| <=
/// absolute + relative * |ref|.
struct Tolerance {
  float relative, absolute;
};
Tolerance tolerance_for(DType out);

/// "wrong: element 12 is 0.5, the reference kernel gives 0.25".
std::string mismatch_message(std::size_t element, float got, float reference);

/// Both outputs (raw bytes of `out` elements) come from fp32 math rounded to the output type:
/// they may differ by rounding, never by more; NaN must match NaN. Returns an empty string when
/// they agree, else which element differs and how. Runs on all hardware threads, since tuning
/// checks every candidate's full output.
std::string compare_outputs(const std::vector<unsigned char>& got,
                            const std::vector<unsigned char>& reference, DType out);

}  // namespace kjit
