// SPDX-License-Identifier: Apache-2.0
// Checks a tuning candidate's output against the reference kernel's, element by element.
#pragma once

#include <string>
#include <vector>

#include "kjit/types.hpp"

namespace kjit {

/// Both outputs (raw bytes of `out` elements) come from fp32 math rounded to the output type:
/// they may differ by rounding, never by more; NaN must match NaN. Returns an empty string when
/// they agree, else which element differs and how. Runs on all hardware threads, since tuning
/// checks every candidate's full output.
std::string compare_outputs(const std::vector<unsigned char>& got,
                            const std::vector<unsigned char>& reference, DType out);

}  // namespace kjit
